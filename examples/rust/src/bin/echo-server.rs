//! The walking-skeleton example: `echo` and `add`, served over stdio or,
//! with `--http PORT`, over Streamable HTTP at http://127.0.0.1:PORT/mcp.
//! `--middleware` first puts one link that only passes requests on in front
//! of every request (what `make bench` measures a middleware chain's cost
//! with).

use ferromcp::protocol::Tool;
use ferromcp::server::{HandlerError, Server, ToolOutput};
use ferromcp::transport::http::HttpOptions;
use serde_json::{Value, json};

fn build_server() -> Result<Server, ferromcp::Error> {
    let server = Server::new("ferromcp-echo", "1.0.0");
    server.add_tool(
        Tool::new(
            "echo",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        )
        .with_description("Returns the text unchanged."),
        |_ctx, args: Value| async move {
            // The input schema was validated by the server, so `text` is a string.
            Ok(ToolOutput::Value(args["text"].clone()))
        },
    )?;
    server.add_tool(
        Tool::new(
            "add",
            json!({
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"]
            }),
        )
        .with_description("Adds two integers.")
        .with_output_schema(json!({
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"]
        })),
        |_ctx, args: Value| async move {
            let (Some(a), Some(b)) = (args["a"].as_i64(), args["b"].as_i64()) else {
                return Err(HandlerError::tool("a and b must be integers"));
            };
            let sum = a
                .checked_add(b)
                .ok_or_else(|| HandlerError::tool("the sum does not fit in 64 bits"))?;
            Ok(ToolOutput::Value(json!(sum)))
        },
    )?;
    Ok(server)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr: stdout belongs to the protocol on stdio.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let server = build_server()?;
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().is_some_and(|a| a == "--middleware") {
        args.remove(0);
        server.add_middleware(|request, next: ferromcp::server::Next| next.run(request));
    }
    match args.as_slice() {
        [] => match server.run_stdio().await {
            // The client closed our stdout: its session is over.
            Err(ferromcp::Error::Closed) => {
                eprintln!("echo-server: the client closed stdout; stopped")
            }
            served => served?,
        },
        [flag, port] if flag == "--http" => {
            let port: u16 = port.parse().map_err(|_| format!("invalid port {port:?}"))?;
            server.run_http(HttpOptions::localhost(port)).await?
        }
        _ => return Err("usage: echo-server [--middleware] [--http PORT]".into()),
    }
    Ok(())
}
