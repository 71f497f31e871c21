//! Errors: [`McpError`] is a JSON-RPC error object as it travels on the wire;
//! [`Error`] is everything that can go wrong inside the library.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::codes;

/// A JSON-RPC error object (`{code, message, data?}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("MCP error {code}: {message}")]
pub struct McpError {
    /// The JSON-RPC error code.
    pub code: i32,
    /// A short human-readable description.
    pub message: String,
    /// Extra structured information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl McpError {
    /// An error with a code and message and no data.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        McpError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// Attaches `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32602 Invalid params`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        McpError::new(codes::INVALID_PARAMS, message)
    }

    /// `-32601 Method not found`.
    pub fn method_not_found(method: &str) -> Self {
        McpError::new(
            codes::METHOD_NOT_FOUND,
            format!("Method not found: {method}"),
        )
    }

    /// `-32603 Internal error`.
    pub fn internal(message: impl Into<String>) -> Self {
        McpError::new(codes::INTERNAL_ERROR, message)
    }

    /// `-32020 HeaderMismatch`.
    pub fn header_mismatch(message: impl Into<String>) -> Self {
        McpError::new(
            codes::HEADER_MISMATCH,
            format!("Header mismatch: {}", message.into()),
        )
    }
}

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
    /// The call took longer than its timeout.
    #[error("timed out")]
    Timeout,
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}
