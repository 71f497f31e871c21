//! Streamable HTTP transport (spec: basic/transports/streamable-http.mdx).

pub(crate) mod headers;
mod server;

pub use server::{HttpOptions, HttpServer, serve};
