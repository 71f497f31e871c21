//! Errors: [`McpError`] (defined in `protocol`) is a JSON-RPC error object as it travels on the wire;
//! [`Error`] is everything that can go wrong inside the library, and
//! [`ErrorKind`] its classification.
//!
//! The classification is done here, once: every binding maps
//! [`Error::kind`] and [`Error::code`] to its host's types in one table
//! (Python exception classes, JS `code`/`kind` properties, C statuses)
//! instead of matching on [`Error`]'s variants itself.

mod auth;

pub use crate::protocol::McpError;
use crate::protocol::codes;
pub use auth::AuthError;
use serde_json::Value;

/// Everything that can fail inside ferromcp.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The peer answered with a JSON-RPC error.
    #[error(transparent)]
    Mcp(#[from] McpError),
    /// Reading or writing a stream or socket failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// JSON could not be encoded or decoded.
    #[error("JSON error: {0}")]
    Json(#[from] serde_json::Error),
    /// An HTTP-level failure (headers, connection).
    #[error("HTTP error: {0}")]
    Http(String),
    /// A TLS connection could not be set up or was refused (an unknown
    /// certificate authority, a name mismatch, a client certificate the
    /// server wanted): says which host and why. Classified as
    /// [`ErrorKind::Http`], the kind of every connection failure.
    #[error("TLS error with {host}: {reason}")]
    Tls {
        /// `host:port` the client was connecting to.
        host: String,
        /// What went wrong, with a hint on how to fix it when there is one.
        reason: String,
    },
    /// The server answered with an HTTP error status and no JSON-RPC error.
    #[error("HTTP {0}: {1}")]
    HttpStatus(u16, String),
    /// The peer broke the protocol (unexpected message, missing field...).
    #[error("protocol error: {0}")]
    Protocol(String),
    /// A tool, resource or prompt definition is not acceptable.
    #[error("invalid definition: {0}")]
    InvalidDefinition(String),
    /// The connection closed before the answer arrived.
    #[error("connection closed")]
    Closed,
    /// The connection closed before the answer arrived, and why (a stdio
    /// server that exited: the last lines of its stderr). Classified as
    /// [`ErrorKind::Closed`], like [`Error::Closed`].
    #[error("connection closed: {0}")]
    ClosedBecause(String),
    /// The call took longer than its timeout.
    #[error("timed out")]
    Timeout,
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// OAuth authorization failed (discovery, registration, the user's
    /// consent, the token endpoint, or a check such as `iss` or the
    /// resource): says which step and why.
    #[error("authorization failed: {0}")]
    Auth(#[from] AuthError),
}

/// What kind of failure an [`Error`] is: a small, stable classification
/// that bindings map to host types (exception classes, status codes).
///
/// The names returned by [`ErrorKind::as_str`] are part of the bindings'
/// public API (Node's `error.kind`, Python's `McpError.kind`): new kinds may
/// be added, existing names never change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The peer answered with a JSON-RPC error ([`Error::code`] is its code).
    PeerError,
    /// Reading or writing a stream or socket failed.
    Io,
    /// JSON could not be encoded or decoded.
    Json,
    /// An HTTP-level failure (headers, connection).
    Http,
    /// The server answered with an HTTP error status and no JSON-RPC error.
    HttpStatus,
    /// The peer broke the protocol.
    Protocol,
    /// A tool, resource or prompt definition was refused.
    InvalidDefinition,
    /// The connection closed before the answer arrived.
    Closed,
    /// The call took longer than its timeout.
    Timeout,
    /// The call was cancelled.
    Cancelled,
    /// OAuth authorization failed.
    Auth,
}

impl ErrorKind {
    /// Every kind, for bindings that export the list and tests that check
    /// each one is mapped.
    pub const ALL: [ErrorKind; 11] = [
        ErrorKind::PeerError,
        ErrorKind::Io,
        ErrorKind::Json,
        ErrorKind::Http,
        ErrorKind::HttpStatus,
        ErrorKind::Protocol,
        ErrorKind::InvalidDefinition,
        ErrorKind::Closed,
        ErrorKind::Timeout,
        ErrorKind::Cancelled,
        ErrorKind::Auth,
    ];

    /// The stable camelCase name hosts see (`"peerError"`, `"timeout"`...).
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::PeerError => "peerError",
            ErrorKind::Io => "io",
            ErrorKind::Json => "json",
            ErrorKind::Http => "http",
            ErrorKind::HttpStatus => "httpStatus",
            ErrorKind::Protocol => "protocol",
            ErrorKind::InvalidDefinition => "invalidDefinition",
            ErrorKind::Closed => "closed",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Auth => "auth",
        }
    }

    /// The JSON-RPC code hosts attach to a failure of this kind that
    /// carries none of its own (every kind but [`ErrorKind::PeerError`]):
    /// a JSON failure reads as a parse error, a refused definition as
    /// invalid params, anything else as an internal error.
    pub const fn fallback_code(self) -> i32 {
        match self {
            ErrorKind::Json => codes::PARSE_ERROR,
            ErrorKind::InvalidDefinition => codes::INVALID_PARAMS,
            _ => codes::INTERNAL_ERROR,
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Error {
    /// The classification bindings map to host types.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Mcp(_) => ErrorKind::PeerError,
            Error::Io(_) => ErrorKind::Io,
            Error::Json(_) => ErrorKind::Json,
            Error::Http(_) | Error::Tls { .. } => ErrorKind::Http,
            Error::HttpStatus(..) => ErrorKind::HttpStatus,
            Error::Protocol(_) => ErrorKind::Protocol,
            Error::InvalidDefinition(_) => ErrorKind::InvalidDefinition,
            Error::Closed | Error::ClosedBecause(_) => ErrorKind::Closed,
            Error::Timeout => ErrorKind::Timeout,
            Error::Cancelled => ErrorKind::Cancelled,
            Error::Auth(_) => ErrorKind::Auth,
        }
    }

    /// The JSON-RPC code the peer answered with, or `None` for a failure
    /// that never was a JSON-RPC error.
    pub fn code(&self) -> Option<i32> {
        match self {
            Error::Mcp(e) => Some(e.code),
            _ => None,
        }
    }

    /// The code a host shows: [`Error::code`], else the kind's
    /// [`ErrorKind::fallback_code`].
    pub fn host_code(&self) -> i32 {
        self.code().unwrap_or_else(|| self.kind().fallback_code())
    }

    /// The message a host shows: the peer's message without Display's
    /// `"MCP error <code>: "` prefix (the code travels separately), or the
    /// Display text of a local failure.
    pub fn host_message(&self) -> String {
        match self {
            Error::Mcp(e) => e.message.clone(),
            other => other.to_string(),
        }
    }

    /// The JSON-RPC `data` the peer sent, if any.
    pub fn data(&self) -> Option<&Value> {
        match self {
            Error::Mcp(e) => e.data.as_ref(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_have_distinct_stable_names() {
        let names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        let unique: std::collections::HashSet<&&str> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
        assert_eq!(ErrorKind::PeerError.to_string(), "peerError");
    }

    #[test]
    fn peer_errors_keep_their_code_and_data() {
        let err =
            Error::Mcp(McpError::new(codes::HEADER_MISMATCH, "x").with_data(Value::Bool(true)));
        assert_eq!(err.kind(), ErrorKind::PeerError);
        assert_eq!(err.code(), Some(-32020));
        assert_eq!(err.host_code(), -32020);
        assert_eq!(err.host_message(), "x");
        assert_eq!(err.data(), Some(&Value::Bool(true)));
    }

    #[test]
    fn local_failures_have_no_code_but_a_fallback() {
        assert_eq!(Error::Timeout.kind(), ErrorKind::Timeout);
        assert_eq!(Error::Timeout.code(), None);
        assert_eq!(Error::Timeout.host_code(), codes::INTERNAL_ERROR);
        assert_eq!(Error::Closed.kind(), ErrorKind::Closed);
        assert_eq!(
            Error::ClosedBecause("the server exited".into()).kind(),
            ErrorKind::Closed
        );
        let def = Error::InvalidDefinition("bad".into());
        assert_eq!(def.host_code(), codes::INVALID_PARAMS);
        assert_eq!(def.host_message(), "invalid definition: bad");
        let tls = Error::Tls {
            host: "example.com:443".into(),
            reason: "unknown issuer".into(),
        };
        assert_eq!(tls.kind(), ErrorKind::Http);
        assert_eq!(
            tls.host_message(),
            "TLS error with example.com:443: unknown issuer"
        );
        let json = Error::Json(serde_json::from_str::<Value>("{").unwrap_err());
        assert_eq!(json.host_code(), codes::PARSE_ERROR);
    }
}
