//! # ferromcp
//!
//! One Rust implementation of the Model Context Protocol, revision 2026-07-28
//! (stateless: every request carries its protocol version and client
//! capabilities in `_meta`), shared by the Python, Node and C bindings.
//!
//! Layers, from the wire inwards:
//! - [`transport`]: stdio (newline-delimited JSON-RPC) and Streamable HTTP,
//!   each with its server side (`Server::serve_*`) and client side
//!   (`Client::connect_*`). It stands on both roles; neither imports it.
//! - `net` (internal): what both roles share on the network: sockets, TLS
//!   ([`client::TlsOptions`]), connection pools, plain HTTP fetches, the
//!   OAuth well-known URLs, and SSE reading and writing.
//! - [`server`]: registry, dispatch, per-request context, validation.
//! - [`client`]: a typed client, the same over either transport.
//! - [`legacy`]: 2025-11-25 sessions, for the transports that offer them.
//! - [`verifier`]: a ready token verifier for protected servers, fetching
//!   keys through `net`.
//! - [`protocol`]: serde types for every schema definition, the JSON-RPC
//!   envelope, error codes and reserved `_meta` keys. No I/O.
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
pub mod gateway;
// Entry points for the fuzz targets in fuzz/: not API (see the module).
#[doc(hidden)]
pub mod fuzzing;
pub mod host;
#[deprecated(since = "0.1.1", note = "use ferromcp::host::threads")]
pub mod host_threads;
pub mod legacy;
// Public items (`TlsOptions`) are re-exported where users look for them
// (`client`).
mod net;
pub mod protocol;
pub(crate) mod rpc;
pub mod runtime;
pub mod server;
pub mod telemetry;
pub mod transport;
pub mod verifier;

pub use error::{Error, ErrorKind};
pub use protocol::McpError;

/// A boxed, sendable future: what handlers, client transports and input
/// callbacks return. Lives at the crate root because both the server and
/// the client use it and neither should import the other for it.
pub type BoxFuture<T> = std::pin::Pin<Box<dyn std::future::Future<Output = T> + Send + 'static>>;
