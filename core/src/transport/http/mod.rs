//! Streamable HTTP transport (spec: basic/transports/streamable-http.mdx).

mod hangup;
pub(crate) mod headers;
mod legacy;
mod server;

pub use server::{HttpOptions, HttpServer, serve};
