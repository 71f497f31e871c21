//! The handler boundary: the one shape every tool handler has, whether it is
//! a Rust closure or a Python, Node or C callback adapted by a binding.

use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use tokio::sync::oneshot;

use super::context::RequestContext;
use crate::McpError;

/// A boxed, sendable future, as handlers return.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// What a tool handler produced.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// A plain return value; the server turns it into a `CallToolResult`
    /// (see [`super::tool_result`] for the rules).
    Value(Value),
    /// A complete `CallToolResult` object, sent as is (plus `resultType`).
    Result(Map<String, Value>),
}

impl ToolOutput {
    /// A text result.
    pub fn text(text: impl Into<String>) -> ToolOutput {
        ToolOutput::Value(Value::String(text.into()))
    }
}

impl From<Value> for ToolOutput {
    fn from(value: Value) -> Self {
        ToolOutput::Value(value)
    }
}

impl From<String> for ToolOutput {
    fn from(value: String) -> Self {
        ToolOutput::Value(Value::String(value))
    }
}

impl From<&str> for ToolOutput {
    fn from(value: &str) -> Self {
        ToolOutput::Value(Value::from(value))
    }
}

/// Why a handler did not produce output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HandlerError {
    /// The tool failed: reported to the model as a result with
    /// `isError: true` and this message, so it can correct itself.
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

/// The outcome of one handler invocation.
pub type HandlerResult = Result<ToolOutput, HandlerError>;

/// A tool implementation.
///
/// Implemented for every `Fn(RequestContext, Value) -> impl Future<Output =
/// HandlerResult>`, so an `async` closure is a handler.
pub trait ToolHandler: Send + Sync + 'static {
    /// Runs the tool with validated arguments (always a JSON object).
    fn call(&self, ctx: RequestContext, arguments: Value) -> BoxFuture<HandlerResult>;
}

impl<F, Fut> ToolHandler for F
where
    F: Fn(RequestContext, Value) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = HandlerResult> + Send + 'static,
{
    fn call(&self, ctx: RequestContext, arguments: Value) -> BoxFuture<HandlerResult> {
        Box::pin(self(ctx, arguments))
    }
}

/// A one-shot completion handle for hosts whose handlers finish later or on
/// another thread (C callbacks, Python coroutines, JS promises).
///
/// Completing consumes the handle, so a result is delivered at most once.
/// Dropping it without completing reports a tool error instead of leaving the
/// request hanging.
#[derive(Debug)]
pub struct Completion {
    sender: Option<oneshot::Sender<HandlerResult>>,
}

/// The receiving side of a [`Completion`].
pub struct CompletionReceiver {
    receiver: oneshot::Receiver<HandlerResult>,
}

impl Completion {
    /// A fresh handle and the future that resolves when it is completed.
    pub fn new() -> (Completion, CompletionReceiver) {
        let (sender, receiver) = oneshot::channel();
        (
            Completion {
                sender: Some(sender),
            },
            CompletionReceiver { receiver },
        )
    }

    /// Delivers the handler's outcome. Returns `false` when nobody waits any
    /// more (the request was cancelled or the connection closed).
    pub fn complete(mut self, result: HandlerResult) -> bool {
        match self.sender.take() {
            Some(sender) => sender.send(result).is_ok(),
            None => false,
        }
    }

    /// True when the request this handle answers is no longer awaited.
    pub fn is_abandoned(&self) -> bool {
        self.sender.as_ref().is_none_or(|s| s.is_closed())
    }
}

impl Drop for Completion {
    fn drop(&mut self) {
        if let Some(sender) = self.sender.take() {
            let _ = sender.send(Err(HandlerError::Tool(
                "the tool handler finished without producing a result".into(),
            )));
        }
    }
}

impl CompletionReceiver {
    /// Waits for the outcome.
    pub async fn wait(self) -> HandlerResult {
        self.receiver.await.unwrap_or_else(|_| {
            // Unreachable in practice: Completion's Drop always sends.
            Err(HandlerError::Tool(
                "the tool handler was dropped without a result".into(),
            ))
        })
    }
}
