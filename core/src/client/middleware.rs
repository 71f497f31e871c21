//! Client middleware: one chain around every request a client sends (calls,
//! lists, reads, prompts, completions, listen, tasks, skills; either era,
//! every transport). Each link gets the call (method, params, the call's
//! options) and the rest of the chain as [`CallNext`]; it may change the
//! params or options (a header for one call, a longer timeout), call `next`
//! or answer by itself (a cached result, a refusal), and read or change what
//! comes back. Notifications the client receives pass the links too
//! ([`ClientMiddleware::notification`]). The server's counterpart is
//! `server::middleware`.
//!
//! With no link the chain costs one atomic load per call.

use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;

use super::{CallOptions, Client};
use crate::{BoxFuture, Error};

/// What [`Client::send`] does with a task the server answers with.
#[derive(Clone, Copy)]
pub(crate) enum Tasks {
    /// Follows it to its result (`call_tool` and every plain call).
    Follow,
    /// Returns it as it came (a task handle's own requests).
    Return,
}

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

    /// Sees a notification the client received (progress, log messages,
    /// list and resource changes, listen events), before its callbacks and
    /// listen streams do: returns whether it goes on; `false` stops it
    /// here, unseen by the links after this one and by the callbacks.
    /// Called in arrival order where the notification is delivered, so it
    /// must not block (log, count, change the params). The default passes
    /// every notification on as it is; closures are links for requests
    /// only.
    ///
    /// ```
    /// use ferromcp::client::{CallNext, CallRequest, ClientMiddleware, ClientNotification};
    /// use ferromcp::{BoxFuture, Error};
    ///
    /// /// Keeps debug log messages from the application's callbacks.
    /// struct QuietLogs;
    ///
    /// impl ClientMiddleware for QuietLogs {
    ///     fn handle(&self, call: CallRequest, next: CallNext) -> BoxFuture<Result<serde_json::Value, Error>> {
    ///         Box::pin(next.run(call))
    ///     }
    ///     fn notification(&self, notification: &mut ClientNotification) -> bool {
    ///         !(notification.method == "notifications/message" && notification.params["level"] == "debug")
    ///     }
    /// }
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// # let server = ferromcp::server::Server::new("demo", "1.0.0");
    /// let client = ferromcp::client::Client::in_memory(&server);
    /// client.add_middleware(QuietLogs);
    /// # }
    /// ```
    fn notification(&self, notification: &mut ClientNotification) -> bool {
        let _ = notification;
        true
    }
}

/// A notification the client received, on its way through the chain
/// ([`ClientMiddleware::notification`]).
pub type ClientNotification = crate::protocol::jsonrpc::ReceivedNotification;

/// A client's chain, shared by the client (requests) and the places its
/// transport delivers notifications, which exist before the client does.
#[derive(Default)]
pub(crate) struct ClientChain {
    /// Replaced whole when a link is added.
    links: std::sync::RwLock<Arc<[Arc<dyn ClientMiddleware>]>>,
    /// Whether `links` has one: a client without reads only this.
    has_links: std::sync::atomic::AtomicBool,
}

impl ClientChain {
    /// The links now, when there is one.
    pub(crate) fn links(&self) -> Option<Arc<[Arc<dyn ClientMiddleware>]>> {
        if !self.has_links.load(std::sync::atomic::Ordering::Acquire) {
            return None;
        }
        Some(crate::rpc::read_unpoisoned(&self.links).clone())
    }

    fn push(&self, link: Arc<dyn ClientMiddleware>) {
        let mut links = crate::rpc::write_unpoisoned(&self.links);
        let mut grown: Vec<Arc<dyn ClientMiddleware>> = links.iter().cloned().collect();
        grown.push(link);
        *links = Arc::from(grown);
        self.has_links
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// A received notification after the links: `Ok(None)` without links
    /// (it goes on as it is, with no copy), `Ok(Some(passed))` as the
    /// links left it, or `Err(())` when one stopped it.
    pub(crate) fn pass(
        &self,
        method: &str,
        params: &Value,
    ) -> Result<Option<ClientNotification>, ()> {
        let Some(links) = self.links() else {
            return Ok(None);
        };
        let mut passing = ClientNotification {
            method: method.to_owned(),
            params: params.clone(),
        };
        for link in links.iter() {
            // A link that panics stops the notification, as one returning
            // false does; the connection goes on.
            let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                link.notification(&mut passing)
            }));
            match passed {
                Ok(true) => {}
                Ok(false) => return Err(()),
                Err(_) => {
                    tracing::warn!(
                        method = %passing.method,
                        "a client middleware link panicked on a notification; it goes no further"
                    );
                    return Err(());
                }
            }
        }
        Ok(Some(passing))
    }

    /// Calls `deliver` with the notification as the links leave it, unless
    /// one stops it.
    pub(crate) fn deliver(&self, method: &str, params: &Value, deliver: impl FnOnce(&str, &Value)) {
        match self.pass(method, params) {
            Ok(None) => deliver(method, params),
            Ok(Some(changed)) => deliver(&changed.method, &changed.params),
            Err(()) => {}
        }
    }
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
        self.shared.out_of_call.chain.push(Arc::new(link));
    }

    /// The chain, when it has a link.
    pub(super) fn middleware_chain(&self) -> Option<Arc<[Arc<dyn ClientMiddleware>]>> {
        self.shared.out_of_call.chain.links()
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
