//! Client middleware: one chain around every request a client sends (calls,
//! lists, reads, prompts, completions, listen, tasks, skills; either era,
//! every transport). Each link gets the call (method, params, the call's
//! options) and the rest of the chain as [`CallNext`]; it may change the
//! params or options (a header for one call, a longer timeout), call `next`
//! or answer by itself (a cached result, a refusal), and read or change what
//! comes back. The server's counterpart is `server::middleware`.
//!
//! With no link the chain costs one atomic load per call.

use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;

use super::rounds::Tasks;
use super::{CallOptions, Client};
use crate::{BoxFuture, Error};

/// A call on its way through the chain.
#[derive(Clone)]
pub struct CallRequest {
    /// The method, e.g. `tools/call`.
    pub method: String,
    /// The params as they will be sent (without the `_meta` the client
    /// adds; `options.meta` joins it).
    pub params: Map<String, Value>,
    /// The call's options: timeout, cache, callbacks, extra `_meta`.
    pub options: CallOptions,
}

impl CallRequest {
    /// The `name` param (the tool or prompt called), if any.
    pub fn name(&self) -> Option<&str> {
        self.params.get("name").and_then(Value::as_str)
    }
}

/// The rest of the chain, then the request itself; run at most once.
pub struct CallNext {
    rest: Arc<[Arc<dyn ClientMiddleware>]>,
    at: usize,
    client: Client,
    tasks: Tasks,
}

impl CallNext {
    /// Runs the rest of the chain, and then sends `request`; the result
    /// object as the server answered it.
    pub async fn run(self, request: CallRequest) -> Result<Value, Error> {
        match self.rest.get(self.at).cloned() {
            Some(link) => {
                let next = CallNext {
                    rest: self.rest,
                    at: self.at + 1,
                    client: self.client,
                    tasks: self.tasks,
                };
                link.handle(request, next).await
            }
            None => {
                self.client
                    .send_unchained(
                        &request.method,
                        request.params,
                        &request.options,
                        self.tasks,
                    )
                    .await
            }
        }
    }
}

/// One link of a client's chain; closures
/// `Fn(CallRequest, CallNext) -> impl Future<Output = Result<Value, Error>>`
/// are links.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ferromcp::Error> {
/// use ferromcp::client::{CallNext, CallRequest, Client};
/// use ferromcp::protocol::Tool;
/// use ferromcp::server::{Server, ToolOutput};
/// let server = Server::new("demo", "1.0.0");
/// server.add_tool(Tool::new("echo", serde_json::json!({"type": "object"})), |_ctx, args| async move {
///     Ok(ToolOutput::Value(args))
/// })?;
/// let client = Client::in_memory(&server);
/// // Every tool call carries the caller's locale.
/// client.add_middleware(|mut call: CallRequest, next: CallNext| async move {
///     if call.method == "tools/call"
///         && let Some(serde_json::Value::Object(arguments)) = call.params.get_mut("arguments")
///     {
///         arguments.insert("locale".into(), "fr".into());
///     }
///     next.run(call).await
/// });
/// let result = client.call_tool("echo", serde_json::json!({})).await?;
/// let text = serde_json::to_value(&result.content)?[0]["text"].clone();
/// assert_eq!(text, r#"{"locale":"fr"}"#);
/// # Ok(()) }
/// ```
pub trait ClientMiddleware: Send + Sync + 'static {
    /// Handles `request`, calling `next` to go on.
    fn handle(&self, request: CallRequest, next: CallNext) -> BoxFuture<Result<Value, Error>>;
}

impl<F, Fut> ClientMiddleware for F
where
    F: Fn(CallRequest, CallNext) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Value, Error>> + Send + 'static,
{
    fn handle(&self, request: CallRequest, next: CallNext) -> BoxFuture<Result<Value, Error>> {
        Box::pin(self(request, next))
    }
}

impl Client {
    /// Appends `link` to this client's middleware chain (every clone of the
    /// client shares it): from now on every request it sends goes through
    /// it, after the links added before it.
    pub fn add_middleware(&self, link: impl ClientMiddleware) {
        let mut chain = crate::rpc::write_unpoisoned(&self.shared.middleware);
        let mut links: Vec<Arc<dyn ClientMiddleware>> = chain.iter().cloned().collect();
        links.push(Arc::new(link));
        *chain = Arc::from(links);
        self.shared
            .has_middleware
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// The chain, when it has a link.
    pub(super) fn middleware_chain(&self) -> Option<Arc<[Arc<dyn ClientMiddleware>]>> {
        if !self
            .shared
            .has_middleware
            .load(std::sync::atomic::Ordering::Acquire)
        {
            return None;
        }
        Some(crate::rpc::read_unpoisoned(&self.shared.middleware).clone())
    }

    /// Sends through the chain `chain`.
    pub(super) async fn send_chained(
        &self,
        chain: Arc<[Arc<dyn ClientMiddleware>]>,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
        tasks: Tasks,
    ) -> Result<Value, Error> {
        let next = CallNext {
            rest: chain,
            at: 0,
            client: self.clone(),
            tasks,
        };
        next.run(CallRequest {
            method: method.to_owned(),
            params,
            options: options.clone(),
        })
        .await
    }
}
