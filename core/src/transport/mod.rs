//! Transports: newline-delimited stdio and Streamable HTTP, each with its
//! server and client side. They frame bytes and apply transport rules
//! (headers, Origin checks, SSE, process supervision); protocol rules stay
//! in [`crate::server`] and [`crate::client`], which know no transport.
//!
//! - `stdio/`: `server.rs` serves a [`Server`](crate::server::Server) on
//!   stdin/stdout (or any byte stream), `client.rs` spawns and supervises a
//!   server process (or speaks over a stream handed in), both on the line
//!   framing of `lines.rs`.
//! - `http/`: the Streamable HTTP server (endpoint, listener, connections)
//!   and `client.rs`, one POST per request with its JSON or SSE answer.
//! - `memory.rs`: `Client::in_memory`, a client of a server of the same
//!   process over an in-memory pipe (stdio's framing).
//!
//! Transports sit above both roles: the server side is `impl Server` blocks
//! here (`serve_stdio`, `serve_http`), the client side implements the
//! client's transport interface and adds `Client::connect_stdio`,
//! `connect_stream` and `connect_http`. What both sides share on the
//! network (sockets, TLS, pools, SSE framing) is one layer down, in `net`.

pub mod http;
mod memory;
mod run;
pub mod stdio;

pub use crate::net::DEFAULT_MAX_MESSAGE_BYTES;
pub use run::shutdown_on_signals;
