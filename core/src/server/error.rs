//! [`HandlerError`]: why a handler did not produce output.
//!
//! A leaf module on purpose: the context, the handler boundary and the input
//! rounds all speak it, and keeping it here (rather than in `handler.rs`)
//! means none of them has to import another just for the error type.

use crate::McpError;

/// Why a handler did not produce output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HandlerError {
    /// The tool failed: reported to the model as a result with
    /// `isError: true` and this message, so it can correct itself. For
    /// other primitives (resources, prompts, completion) it becomes a
    /// JSON-RPC internal error with this message.
    #[error("{0}")]
    Tool(String),
    /// A protocol-level failure: sent as a JSON-RPC error.
    #[error(transparent)]
    Protocol(#[from] McpError),
}

impl HandlerError {
    /// A tool error with a message for the model.
    pub fn tool(message: impl Into<String>) -> Self {
        HandlerError::Tool(message.into())
    }
}
