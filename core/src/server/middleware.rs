//! Middleware: one chain around every request a server answers, whatever
//! the transport (stdio, HTTP, in memory) and era. Each link gets the
//! request (method, params, its meta: who asks, with what capabilities,
//! headers and auth) and the rest of the chain as [`Next`]; it may read or
//! change the params, call `next` (or not: short-circuit with an error or a
//! result of its own), and read or change what comes back. The last link
//! runs the request as the server would without middleware.
//!
//! With no middleware the chain costs nothing: the request goes straight to
//! its primitive. Ready-made links are in [`builtin`]: request logging with
//! timing, a per-client rate limit of bounded memory, and error masking.

pub mod builtin;

use serde_json::{Map, Value};
use std::future::Future;
use std::sync::{Arc, OnceLock};
use tokio_util::sync::CancellationToken;

use super::RequestMeta;
use super::reply::ResultObject;
use crate::protocol::jsonrpc::RequestId;
use crate::{BoxFuture, McpError};

/// A request on its way through the chain.
#[derive(Debug, Clone)]
pub struct MiddlewareRequest {
    /// The JSON-RPC id.
    pub id: RequestId,
    /// The method, e.g. `tools/call`.
    pub method: String,
    /// The params object as the client sent it, less its `_meta` (read
    /// into `meta`); a link may change it before calling `next`.
    pub params: Map<String, Value>,
    /// The request's meta: protocol version, client info and capabilities,
    /// HTTP headers and auth info when there are.
    pub meta: RequestMeta,
}

impl MiddlewareRequest {
    /// The `name` param (the tool or prompt a call is for), if any.
    pub fn name(&self) -> Option<&str> {
        self.params.get("name").and_then(Value::as_str)
    }
}

/// A notification the server received (`notifications/cancelled`,
/// `notifications/initialized`, `notifications/roots/list_changed`, ...),
/// on its way through the chain ([`Middleware::notification`]).
pub type MiddlewareNotification = crate::protocol::jsonrpc::ReceivedNotification;

/// What a request ends in: the result object, or a JSON-RPC error. A result
/// without `resultType` is a complete one (the server adds
/// `"resultType": "complete"`); one asking for input carries
/// `"input_required"`, a task handle `"task"`.
pub type MiddlewareResult = Result<MiddlewareOutput, McpError>;

/// The result object of a request on its way back through the chain.
///
/// A primitive's result stays in the form the server writes fastest (a text
/// tool result is kept as its text, not a tree of maps) until a link reads
/// it: [`MiddlewareOutput::as_map`] builds the JSON object once and keeps
/// it, [`MiddlewareOutput::as_map_mut`] and [`MiddlewareOutput::into_map`]
/// hand it over to be changed. A link that only passes results on so costs
/// no conversion.
///
/// ```
/// use ferromcp::server::middleware::MiddlewareOutput;
/// use serde_json::{Map, Value, json};
/// let mut output = MiddlewareOutput::from(Map::from_iter([("content".to_owned(), json!([]))]));
/// output.as_map_mut().insert("isError".into(), Value::Bool(true));
/// assert_eq!(output.as_map().get("isError"), Some(&Value::Bool(true)));
/// ```
#[derive(Debug, Clone)]
pub struct MiddlewareOutput(Body);

#[derive(Debug, Clone)]
enum Body {
    /// A text tool result as the primitive left it, and its JSON object once
    /// a link read it.
    Text(String, OnceLock<Map<String, Value>>),
    Map(Map<String, Value>),
}

impl MiddlewareOutput {
    /// The result object.
    pub fn as_map(&self) -> &Map<String, Value> {
        match &self.0 {
            Body::Text(text, map) => {
                map.get_or_init(|| ResultObject::Text(text.clone()).into_map())
            }
            Body::Map(map) => map,
        }
    }

    /// The result object, to change in place.
    pub fn as_map_mut(&mut self) -> &mut Map<String, Value> {
        if let Body::Text(text, map) = &mut self.0 {
            let map = map
                .take()
                .unwrap_or_else(|| ResultObject::Text(std::mem::take(text)).into_map());
            self.0 = Body::Map(map);
        }
        match &mut self.0 {
            Body::Map(map) => map,
            // Made a map just above.
            Body::Text(..) => unreachable!("a text result is turned into a map first"),
        }
    }

    /// The result object, owned.
    pub fn into_map(self) -> Map<String, Value> {
        match self.0 {
            Body::Text(text, map) => map
                .into_inner()
                .unwrap_or_else(|| ResultObject::Text(text).into_map()),
            Body::Map(map) => map,
        }
    }

    /// The result in the form the server writes, unchanged by the links
    /// when none changed it.
    pub(crate) fn into_object(self) -> ResultObject {
        match self.0 {
            Body::Text(text, _) => ResultObject::Text(text),
            Body::Map(map) => ResultObject::Map(map),
        }
    }
}

impl From<ResultObject> for MiddlewareOutput {
    fn from(result: ResultObject) -> Self {
        MiddlewareOutput(match result {
            ResultObject::Text(text) => Body::Text(text, OnceLock::new()),
            ResultObject::Map(map) => Body::Map(map),
            raw @ ResultObject::Raw(_) => Body::Map(raw.into_map()),
        })
    }
}

impl From<Map<String, Value>> for MiddlewareOutput {
    fn from(map: Map<String, Value>) -> Self {
        MiddlewareOutput(Body::Map(map))
    }
}

impl serde::Serialize for MiddlewareOutput {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.as_map().serialize(serializer)
    }
}

impl PartialEq for MiddlewareOutput {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (Body::Text(a, _), Body::Text(b, _)) => a == b,
            _ => self.as_map() == other.as_map(),
        }
    }
}

/// The last step of a chain: runs the request as the server would without
/// middleware; it gets the request's cancellation from [`Next`], so the
/// chain holds one handle of it.
pub(crate) type LastStep =
    Box<dyn FnOnce(MiddlewareRequest, CancellationToken) -> BoxFuture<MiddlewareResult> + Send>;

/// The rest of the chain, called at most once.
pub struct Next {
    rest: Arc<[Arc<dyn Middleware>]>,
    at: usize,
    last: LastStep,
    cancel: CancellationToken,
}

impl Next {
    pub(crate) fn new(
        chain: Arc<[Arc<dyn Middleware>]>,
        last: LastStep,
        cancel: CancellationToken,
    ) -> Next {
        Next {
            rest: chain,
            at: 0,
            last,
            cancel,
        }
    }

    /// Fires when the request is cancelled or its client goes away: a link
    /// waiting for the rest of the chain on another thread (a binding's)
    /// stops waiting then, since any answer is discarded.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.cancel
    }

    /// Runs the rest of the chain, and then the request, with `request`.
    ///
    /// The next link is called now (its future is what this returns, not
    /// a wrapper around it): a link that returns this as it is adds no
    /// allocation of its own.
    pub fn run(self, request: MiddlewareRequest) -> BoxFuture<MiddlewareResult> {
        match self.rest.get(self.at) {
            Some(link) => {
                let link = link.clone();
                let next = Next {
                    rest: self.rest,
                    at: self.at + 1,
                    last: self.last,
                    cancel: self.cancel,
                };
                link.handle(request, next)
            }
            None => (self.last)(request, self.cancel),
        }
    }
}

/// One link of a server's middleware chain; closures
/// `Fn(MiddlewareRequest, Next) -> impl Future<Output = MiddlewareResult>`
/// are links.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ferromcp::Error> {
/// use ferromcp::client::Client;
/// use ferromcp::protocol::Tool;
/// use ferromcp::server::middleware::{MiddlewareRequest, Next};
/// use ferromcp::server::{Server, ToolOutput};
/// use ferromcp::McpError;
/// let server = Server::new("demo", "1.0.0");
/// server.add_tool(Tool::new("secret", serde_json::json!({"type": "object"})), |_ctx, _args| async {
///     Ok(ToolOutput::text("42"))
/// })?;
/// // Refuse one tool before it runs; let everything else through.
/// server.add_middleware(|request: MiddlewareRequest, next: Next| async move {
///     if request.method == "tools/call" && request.name() == Some("secret") {
///         return Err(McpError::invalid_params("not today"));
///     }
///     next.run(request).await
/// });
/// let client = Client::in_memory(&server);
/// assert!(client.call_tool("secret", serde_json::json!({})).await.is_err());
/// # Ok(()) }
/// ```
pub trait Middleware: Send + Sync + 'static {
    /// Handles `request`, calling `next` to go on.
    fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult>;

    /// Sees a notification the server received, before the server acts on
    /// it (a cancellation cancels only once every link passed it on):
    /// returns whether it goes on; `false` stops it here, unseen by the
    /// links after this one and by the server. Called in arrival order on
    /// the task reading the connection, so it must not block (log, count,
    /// change the params). The default passes every notification on as it
    /// is; closures are links for requests only.
    ///
    /// ```
    /// use ferromcp::BoxFuture;
    /// use ferromcp::server::middleware::{
    ///     Middleware, MiddlewareNotification, MiddlewareRequest, MiddlewareResult, Next,
    /// };
    /// use std::sync::atomic::{AtomicU64, Ordering};
    ///
    /// /// Counts the requests and notifications that reach the server.
    /// #[derive(Default)]
    /// struct Count(AtomicU64);
    ///
    /// impl Middleware for Count {
    ///     fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
    ///         self.0.fetch_add(1, Ordering::Relaxed);
    ///         next.run(request)
    ///     }
    ///     fn notification(&self, _notification: &mut MiddlewareNotification) -> bool {
    ///         self.0.fetch_add(1, Ordering::Relaxed);
    ///         true
    ///     }
    /// }
    /// let server = ferromcp::server::Server::new("demo", "1.0.0");
    /// server.add_middleware(Count::default());
    /// ```
    fn notification(&self, notification: &mut MiddlewareNotification) -> bool {
        let _ = notification;
        true
    }
}

impl<F, Fut> Middleware for F
where
    F: Fn(MiddlewareRequest, Next) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = MiddlewareResult> + Send + 'static,
{
    fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        Box::pin(self(request, next))
    }
}
