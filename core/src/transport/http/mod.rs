//! Streamable HTTP transport (spec: basic/transports/streamable-http.mdx).
//!
//! - `listener`: binding, the accept loop, connections and their hang-up
//!   watch (`hangup`), shutdown; `Server::serve_http`.
//! - `endpoint`: routing of POST/GET/DELETE and the JSON-or-SSE answer.
//! - `guard`: `Host`/`Origin` checks and the mirrored-header rules.
//! - `body`: reading request bodies (JSON, size limit) and the response
//!   body type.
//! - `legacy`: 2025-11-25 sessions on the same endpoint.

mod body;
mod endpoint;
mod guard;
mod hangup;
mod legacy;
mod listener;

pub use listener::{HttpOptions, HttpServer, serve};
