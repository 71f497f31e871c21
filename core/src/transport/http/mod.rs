//! Streamable HTTP transport (spec: basic/transports/streamable-http.mdx),
//! the server side and, in `client`, the client side.
//!
//! The server side:
//! - `embed`: [`HttpEndpoint`], the endpoint a host's own HTTP server
//!   calls one exchange at a time; the listener serves through it too.
//! - `options`: [`EndpointOptions`], what a host sets on an endpoint.
//! - `listener`: binding, the accept loop and its connection cap,
//!   shutdown; `Server::serve_http`.
//! - `connection`: one connection served by hyper, with its hang-up watch
//!   (`hangup`) and its first-byte, header-read and idle deadlines.
//! - `live`: the listener's table of live connections, from which it sheds
//!   one to admit a new one at its cap, and counts per address.
//! - `limits`: [`HttpLimits`], the listener's limits as one value the
//!   bindings fill from their host's options.
//! - `endpoint`: routing of POST/GET/DELETE and the JSON-or-SSE answer.
//! - `guard`: `Host`/`Origin` checks and the mirrored-header rules.
//! - `body`: reading request bodies (JSON, size limit, deadline) and the response
//!   body type.
//! - `legacy`: 2025-11-25 sessions on the same endpoint.
//! - `auth`: protected servers (bearer tokens, protected resource metadata).
//!
//! The client side:
//! - `client`: `Client::connect_http` and its transport (POST per request,
//!   the JSON or SSE answer, legacy sessions' GET stream and resumption,
//!   OAuth retries).
//!
//! Both sides frame SSE and reach the network through `net`.

mod auth;
mod body;
mod client;
mod connection;
mod embed;
#[cfg(test)]
mod embed_tests;
mod endpoint;
mod guard;
mod hangup;
mod legacy;
mod limits;
mod listener;
mod live;
mod options;
mod service;
#[cfg(feature = "tls")]
mod tls;

pub use auth::ProtectedResource;
pub use body::McpBody;
pub use embed::{BodyAborted, BodySender, ExchangeInfo, HttpEndpoint, RequestBody};
pub use limits::{HttpLimits, HttpLimitsError};
pub use listener::{HttpOptions, HttpServer, serve};
pub use options::{EndpointOptions, Health};
#[cfg(feature = "tls")]
pub use tls::ServerTls;
