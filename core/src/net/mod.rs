//! The network layer both roles stand on: outgoing TCP connections
//! (`socket`), TLS for them (`tls`: [`TlsOptions`] and the rustls
//! connector), HTTP/1.1 connection pools (`pool`), plain HTTP fetches of
//! small JSON documents (`fetch`), URL helpers (`urls`: the OAuth
//! well-known locations, query strings, form bodies) and Server-Sent Events
//! (`sse`: the parser a reader uses and the framing a writer uses, side by
//! side).
//!
//! It knows no MCP role: the client (its HTTP transport and OAuth flow),
//! the server's HTTP transport and the token verifier use it, and it
//! imports none of them. The shape follows rmcp's `transport/common/`,
//! which holds what its client and server transports share.

pub(crate) mod fetch;
pub(crate) mod pool;
pub(crate) mod socket;
pub(crate) mod sse;
pub(crate) mod tls;
pub(crate) mod urls;

pub use tls::{ClientCertificate, TlsOptions, TlsRoots};

/// Default cap on one incoming message (stdio line, HTTP body or SSE
/// event), for servers and clients alike: large enough for big tool
/// arguments, small enough that one peer cannot exhaust memory.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
