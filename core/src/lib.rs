//! # ferromcp
//!
//! One Rust implementation of the Model Context Protocol, revision 2026-07-28
//! (stateless: every request carries its protocol version and client
//! capabilities in `_meta`), shared by the Python, Node and C bindings.
//!
//! Layers, from the wire inwards:
//! - [`transport`]: stdio (newline-delimited JSON-RPC) and Streamable HTTP.
//! - [`protocol`]: serde types for every schema definition, the JSON-RPC
//!   envelope, error codes and reserved `_meta` keys. No I/O.
//! - [`server`]: registry, dispatch, per-request context, validation.
//! - [`client`]: a typed client over either transport.
//!
//! ```no_run
//! use ferromcp::server::{Server, ToolOutput};
//! use serde_json::json;
//!
//! # async fn run() -> Result<(), ferromcp::Error> {
//! let server = Server::new("demo", "1.0.0");
//! server.add_tool(
//!     ferromcp::protocol::Tool::new("echo", json!({
//!         "type": "object",
//!         "properties": {"text": {"type": "string"}},
//!         "required": ["text"]
//!     })),
//!     |_ctx, args: serde_json::Value| async move {
//!         Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default()))
//!     },
//! )?;
//! server.serve_stdio().await
//! # }
//! ```

pub mod client;
mod error;
pub mod host_threads;
pub mod legacy;
pub mod protocol;
pub mod runtime;
pub mod server;
pub mod transport;

pub use error::{Error, ErrorKind, McpError};
