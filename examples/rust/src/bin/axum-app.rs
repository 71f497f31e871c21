//! An axum application that serves MCP on `/mcp` beside its own routes,
//! under its own middleware: the endpoint is a tower `Service`
//! (`HttpEndpoint`), routed like any other.
//!
//!     axum-app [PORT]    # prints "listening on PORT"; 0 picks a free port

use axum::Router;
use axum::routing::get;
use ferromcp::protocol::Tool;
use ferromcp::server::{Server, ToolOutput};
use ferromcp::transport::http::{EndpointOptions, HttpEndpoint};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::new("axum-app", "1.0.0");
    server.add_tool(
        Tool::new(
            "echo",
            json!({"type": "object", "properties": {"text": {"type": "string"}}}),
        ),
        |_ctx, args: Value| async move { Ok(ToolOutput::Value(args["text"].clone())) },
    )?;
    let mcp = HttpEndpoint::new(server, EndpointOptions::default());
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .route_service("/mcp", mcp)
        // The application's own middleware wraps MCP too.
        .layer(axum::middleware::map_response(
            |mut response: axum::response::Response| async move {
                response.headers_mut().insert(
                    "x-served-by",
                    axum::http::HeaderValue::from_static("axum-app"),
                );
                response
            },
        ));
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(8000);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on {}", listener.local_addr()?.port());
    axum::serve(listener, app).await?;
    Ok(())
}
