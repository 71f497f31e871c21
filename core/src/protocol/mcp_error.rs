//! [`McpError`]: the JSON-RPC error object as the library passes it
//! around. A leaf: the envelope (`jsonrpc`) and the schema's error types
//! (`types`) both build on it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::codes;

/// A JSON-RPC error object (`{code, message, data?}`) as the library
/// passes it around: what a handler fails with, what a client receives
/// ([`crate::Error::Mcp`]). [`ErrorObject`](super::ErrorObject) is the schema's own mirror.
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
