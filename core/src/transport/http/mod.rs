//! Streamable HTTP transport (spec: basic/transports/streamable-http.mdx).
//!
//! - `listener`: binding, the accept loop and its connection cap,
//!   shutdown; `Server::serve_http`.
//! - `connection`: one connection served by hyper, with its hang-up watch
//!   (`hangup`) and its header-read and idle deadlines.
//! - `endpoint`: routing of POST/GET/DELETE and the JSON-or-SSE answer.
//! - `guard`: `Host`/`Origin` checks and the mirrored-header rules.
//! - `body`: reading request bodies (JSON, size limit, deadline) and the response
//!   body type.
//! - `legacy`: 2025-11-25 sessions on the same endpoint.

mod body;
mod connection;
mod endpoint;
mod guard;
mod hangup;
mod legacy;
mod listener;

pub use listener::{HttpOptions, HttpServer, serve};
