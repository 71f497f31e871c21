//! The walking-skeleton example: `echo` and `add`, served over stdio or,
//! with `--http PORT`, over Streamable HTTP at http://127.0.0.1:PORT/mcp.
//! `--middleware` first puts one link that only passes requests on in front
//! of every request (what `make bench` measures a middleware chain's cost
//! with).

use ferromcp::transport::http::HttpOptions;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs go to stderr: stdout belongs to the protocol on stdio.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let server = ferromcp_examples::echo::build_server()?;
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
