//! Transports: newline-delimited stdio and Streamable HTTP, server and
//! client sides. They frame bytes and apply transport rules (headers,
//! Origin checks, SSE); protocol rules stay in [`crate::server`].

pub mod http;
#[cfg(unix)]
mod pipes;
mod run;
mod stdin;
pub mod stdio;

pub use run::shutdown_on_signals;

/// Default cap on one incoming message (stdio line or HTTP body): large
/// enough for big tool arguments, small enough that one client cannot
/// exhaust memory.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;
