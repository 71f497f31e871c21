//! The handler boundary: the one shape every tool handler has, whether it is
//! a Rust closure or a Python, Node or C callback adapted by a binding.

use serde_json::{Map, Value};
use std::future::Future;
use tokio::sync::oneshot;

use super::context::RequestContext;
pub use super::error::HandlerError;

/// A boxed, sendable future, as handlers return (defined at the crate root).
pub use crate::BoxFuture;

/// What a tool handler produced.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolOutput {
    /// A plain return value; the server turns it into a `CallToolResult`
    /// (see `server/tool_result.rs` for the rules).
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

/// The outcome of one handler invocation.
pub type HandlerResult = Result<ToolOutput, HandlerError>;

/// An implementation of one primitive: a tool, resource, prompt or
/// completion provider. `I` is what the server hands it (tool arguments,
/// a resource request, prompt arguments) and `O` what it produces.
///
/// Implemented for every `Fn(RequestContext, I) -> impl Future<Output =
/// Result<O, HandlerError>>`, so an `async` closure is a handler.
pub trait Handler<I, O>: Send + Sync + 'static {
    /// Runs the handler.
    fn call(&self, ctx: RequestContext, input: I) -> BoxFuture<Result<O, HandlerError>>;
}

impl<F, Fut, I, O> Handler<I, O> for F
where
    F: Fn(RequestContext, I) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<O, HandlerError>> + Send + 'static,
{
    fn call(&self, ctx: RequestContext, input: I) -> BoxFuture<Result<O, HandlerError>> {
        Box::pin(self(ctx, input))
    }
}

/// A tool implementation: receives the validated arguments (a JSON object).
pub trait ToolHandler: Handler<Value, ToolOutput> {}
impl<T: Handler<Value, ToolOutput>> ToolHandler for T {}

/// What a resource handler is asked to read.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceRequest {
    /// The URI the client asked for.
    pub uri: String,
    /// Variables extracted by the matching URI template (empty for a
    /// static resource).
    pub variables: Map<String, Value>,
}

/// What a resource handler produced.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceOutput {
    /// Text content for the requested URI.
    Text(String),
    /// Binary content for the requested URI (sent base64-encoded).
    Blob(Vec<u8>),
    /// Explicit `contents` items (`TextResourceContents` /
    /// `BlobResourceContents` objects).
    Contents(Vec<Value>),
}

/// A resource implementation.
pub trait ResourceHandler: Handler<ResourceRequest, ResourceOutput> {}
impl<T: Handler<ResourceRequest, ResourceOutput>> ResourceHandler for T {}

/// What a prompt handler produced.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptOutput {
    /// One user message with this text.
    Text(String),
    /// `PromptMessage` objects.
    Messages(Vec<Value>),
    /// A complete `GetPromptResult` object (messages plus description).
    Result(Map<String, Value>),
}

/// A prompt implementation: receives the prompt arguments.
pub trait PromptHandler: Handler<Map<String, Value>, PromptOutput> {}
impl<T: Handler<Map<String, Value>, PromptOutput>> PromptHandler for T {}

/// Suggestions for `completion/complete`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompletionOutput {
    /// Suggested values (at most 100 are sent).
    pub values: Vec<String>,
    /// Total number of matches, if known.
    pub total: Option<u64>,
    /// Whether more matches exist than were sent.
    pub has_more: Option<bool>,
}

/// A completion provider: receives the `completion/complete` params
/// (`ref`, `argument`, `context`).
pub trait CompletionHandler: Handler<Value, CompletionOutput> {}
impl<T: Handler<Value, CompletionOutput>> CompletionHandler for T {}

/// A one-shot answer handle for hosts whose handlers finish later or on
/// another thread (C callbacks, Python coroutines, JS promises), for any
/// kind of output (`O`: a tool, resource, prompt or completion output, or a
/// client's answer to the server).
///
/// Responding consumes the handle, so an outcome is delivered at most once.
/// Dropping it without responding reports a handler error instead of leaving
/// the request hanging.
///
/// (Named `Responder`, not `Completion`, so it does not read as part of
/// `completion/complete`'s [`CompletionHandler`]/[`CompletionOutput`].)
#[derive(Debug)]
pub struct Responder<O = ToolOutput> {
    sender: Option<oneshot::Sender<Result<O, HandlerError>>>,
}

/// The receiving side of a [`Responder`].
pub struct ResponderReceiver<O = ToolOutput> {
    receiver: oneshot::Receiver<Result<O, HandlerError>>,
}

impl<O> Responder<O> {
    /// A fresh handle and the future that resolves when it is answered.
    pub fn new() -> (Responder<O>, ResponderReceiver<O>) {
        let (sender, receiver) = oneshot::channel();
        (
            Responder {
                sender: Some(sender),
            },
            ResponderReceiver { receiver },
        )
    }

    /// Delivers the handler's outcome. Returns `false` when nobody waits any
    /// more (the request was cancelled, the connection closed, or the round
    /// ended because the handler asked the client for input).
    pub fn respond(mut self, result: Result<O, HandlerError>) -> bool {
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

impl<O> Drop for Responder<O> {
    fn drop(&mut self) {
        if let Some(sender) = self.sender.take() {
            let _ = sender.send(Err(HandlerError::Tool(
                "the handler finished without producing a result".into(),
            )));
        }
    }
}

impl<O> ResponderReceiver<O> {
    /// Waits for the outcome.
    pub async fn wait(self) -> Result<O, HandlerError> {
        self.receiver.await.unwrap_or_else(|_| {
            // Unreachable in practice: Responder's Drop always sends.
            Err(HandlerError::Tool(
                "the handler was dropped without a result".into(),
            ))
        })
    }
}
