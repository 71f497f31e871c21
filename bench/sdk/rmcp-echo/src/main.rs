//! Echo server on the official MCP Rust SDK (rmcp), for `make bench`.
//!
//!     rmcp-echo              # stdio
//!     rmcp-echo --http PORT  # Streamable HTTP at http://127.0.0.1:PORT/mcp
//!
//! Set up the way the SDK documents a fast server: `#[tool]` macros, and over
//! HTTP its StreamableHttpService behind axum, stateless (no legacy session
//! mode), with plain JSON answers instead of SSE streams and no keep-alive
//! pings, so that it is measured at its best.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{ServerCapabilities, ServerConfig};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// The text to return.
    text: String,
}

#[derive(Clone)]
struct Echo {
    tool_router: ToolRouter<Self>,
}

#[tool_router]
impl Echo {
    fn new() -> Self {
        Echo {
            tool_router: Self::tool_router(),
        }
    }

    #[tool(description = "Returns the text unchanged.")]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        args.text
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => {
            Echo::new()
                .serve(rmcp::transport::stdio())
                .await?
                .waiting()
                .await?;
        }
        [flag, port] if flag == "--http" => {
            let port: u16 = port.parse()?;
            let service = StreamableHttpService::new(
                || Ok(Echo::new()),
                Arc::new(NeverSessionManager::default()),
                StreamableHttpServerConfig::default()
                    .with_legacy_session_mode(false)
                    .with_json_response(true)
                    .with_sse_keep_alive(None),
            );
            let router = axum::Router::new().nest_service("/mcp", service);
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
            eprintln!("rmcp-echo listening on http://127.0.0.1:{port}/mcp");
            axum::serve(listener, router).await?;
        }
        _ => {
            eprintln!("usage: rmcp-echo [--http PORT]");
            std::process::exit(2);
        }
    }
    Ok(())
}
