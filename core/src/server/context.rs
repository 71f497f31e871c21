//! Per-request context: what a handler knows about the request it serves,
//! and the channels it may use while it runs (progress, logging,
//! cancellation).

use serde_json::{Map, Value, json};
use std::sync::{Arc, OnceLock};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::error::HandlerError;
use super::input::{AskOutcome, InputRound, check_answer};
use crate::McpError;
use crate::protocol::jsonrpc::{
    MetaMembers, RawJson, RequestId, ReservedMembers, notification_value,
};
use crate::protocol::meta;
use crate::protocol::methods::{NOTIFICATIONS_MESSAGE, NOTIFICATIONS_PROGRESS};
use crate::protocol::{InputKind, LoggingLevel};

/// The old name of [`LoggingLevel`], the schema's type, which now serves
/// the server too.
#[deprecated(since = "0.1.1", note = "use ferromcp::protocol::LoggingLevel")]
pub type LogLevel = LoggingLevel;

/// How an ask started by [`RequestContext::ask_start`] goes on.
pub enum AskStart {
    /// The client already answered: here is its result.
    Answered(Value),
    /// 2026-07-28: the question was recorded; the handler must stop so the
    /// server can answer `input_required` (the client retries with the answer).
    Pending,
    /// 2025-11-25 session: the request was sent to the client; this resolves
    /// with its (checked) answer.
    Live(crate::BoxFuture<Result<Value, HandlerError>>),
}

impl std::fmt::Debug for AskStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskStart::Answered(v) => f.debug_tuple("Answered").field(v).finish(),
            AskStart::Pending => f.write_str("Pending"),
            AskStart::Live(_) => f.write_str("Live(..)"),
        }
    }
}

/// The protocol fields a client put in one request's `_meta`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`.
    pub protocol_version: String,
    /// `io.modelcontextprotocol/clientCapabilities`.
    pub client_capabilities: Map<String, Value>,
    /// `io.modelcontextprotocol/clientInfo`, when sent, as its JSON text
    /// (`client_info.to_value()` for the tree).
    pub client_info: Option<RawJson>,
    /// `io.modelcontextprotocol/logLevel`: without it, no log messages.
    pub log_level: Option<LoggingLevel>,
    /// `progressToken`: without it, no progress notifications.
    pub progress_token: Option<Value>,
    /// The headers of the HTTP request that carried this request (either
    /// era); `None` over stdio. Moved from the request, not copied.
    pub http_headers: Option<Arc<http::HeaderMap>>,
    /// The verified bearer token of a protected HTTP server's request;
    /// `None` unprotected and over stdio.
    pub auth: Option<Arc<super::auth::AuthInfo>>,
    /// The W3C trace context: as the client sent it in `_meta`
    /// (`traceparent`, `tracestate`; SEP-414) and, while a handler runs
    /// with tracing on, the server span's own — the parent to give spans
    /// the handler starts.
    pub trace: Option<crate::telemetry::TraceContext>,
}

pub(crate) use super::sink::{NotificationSink, notification_channel};

/// Progress as a task's status message: `"Rendering (3/10)"`, `"3/10"`,
/// `"Rendering (3)"`.
fn progress_text(progress: f64, total: Option<f64>, message: Option<&str>) -> String {
    let count = match total {
        Some(total) => format!("{progress}/{total}"),
        None => format!("{progress}"),
    };
    match message {
        Some(message) => format!("{message} ({count})"),
        None => count,
    }
}
use super::tasks::TaskHandoff;

/// A live channel for server-to-client requests (the legacy 2025-11-25
/// wire, where the server asks mid-call and waits for the answer).
pub(crate) trait LiveRequester: Send + Sync {
    /// Whether the client declared a capability at initialization.
    fn has_capability(&self, capability: &str) -> bool;
    /// Sends a request to the client through `sink` and returns where its
    /// answer will arrive. `key` is the name the handler gave the question,
    /// if any: a task shows it in `inputRequests`; a session's request does
    /// not carry one.
    fn start(
        &self,
        key: Option<&str>,
        method: &str,
        params: Value,
        sink: Option<&NotificationSink>,
    ) -> Result<oneshot::Receiver<Result<Value, McpError>>, McpError>;
    /// Takes the handler's progress as text, when this requester reports
    /// it its own way (a task: as its status message); `false` sends
    /// `notifications/progress` as usual.
    fn progress(&self, _message: String) -> bool {
        false
    }
}

/// How a request can ask the client for input.
#[derive(Clone)]
pub(crate) enum InputMode {
    /// It cannot (methods other than tools/call, prompts/get, resources/read).
    None,
    /// 2026-07-28: by ending the round with `input_required` (MRTR).
    Rounds(Arc<InputRound>),
    /// 2025-11-25: by a real server-to-client request.
    Live(Arc<dyn LiveRequester>),
}

struct ContextInner {
    request_id: RequestId,
    /// Only requests of a known method get a context.
    method: &'static str,
    meta: RequestMeta,
    cancel: CancellationToken,
    sink: Option<NotificationSink>,
    input: InputMode,
    close_stream: Option<Arc<dyn Fn() + Send + Sync>>,
    /// A call the handler may turn into a task ([`RequestContext::start_task`]).
    task: OnceLock<Arc<TaskHandoff>>,
}

/// What a handler gets besides its arguments. Cheap to clone.
#[derive(Clone)]
pub struct RequestContext {
    inner: Arc<ContextInner>,
}

impl std::fmt::Debug for RequestContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RequestContext")
            .field("request_id", &self.inner.request_id)
            .field("method", &self.inner.method)
            .finish_non_exhaustive()
    }
}

impl RequestContext {
    pub(crate) fn new(
        request_id: RequestId,
        method: &'static str,
        meta: RequestMeta,
        cancel: CancellationToken,
        sink: Option<NotificationSink>,
        input: InputMode,
        close_stream: Option<Arc<dyn Fn() + Send + Sync>>,
    ) -> Self {
        RequestContext {
            inner: Arc::new(ContextInner {
                request_id,
                method,
                meta,
                cancel,
                sink,
                input,
                close_stream,
                task: OnceLock::new(),
            }),
        }
    }

    /// This call's context for its handler running in a task: questions go
    /// through the task (`inputRequests`, answered by `tasks/update`), the
    /// token is the task's (`tasks/cancel`), and nothing reaches the
    /// request's stream, which ended with the task handle (SEP-2663:
    /// progress and log messages are not carried for tasks).
    pub(crate) fn for_task(
        &self,
        requester: Arc<dyn LiveRequester>,
        cancel: CancellationToken,
    ) -> RequestContext {
        RequestContext::new(
            self.inner.request_id.clone(),
            self.inner.method,
            self.inner.meta.clone(),
            cancel,
            None,
            InputMode::Live(requester),
            None,
        )
    }

    /// On the legacy HTTP wire, ends the current SSE connection without
    /// ending the stream: the client reconnects with `Last-Event-ID` and
    /// receives what follows (spec 2025-11-25, "Resumability"). Returns
    /// whether there was such a stream to close.
    pub fn close_sse_stream(&self) -> bool {
        match &self.inner.close_stream {
            Some(close) => {
                close();
                true
            }
            None => false,
        }
    }

    /// How this request asks for input now: through its task once the
    /// handler started one, as it arrived otherwise.
    fn input(&self) -> InputMode {
        match self.inner.task.get().and_then(|t| t.started()) {
            Some(started) => InputMode::Live(started.requester.clone()),
            None => self.inner.input.clone(),
        }
    }

    /// Lets the handler turn this call into a task (see
    /// [`RequestContext::start_task`]).
    pub(crate) fn offer_task(&self, handoff: Arc<TaskHandoff>) {
        let _ = self.inner.task.set(handoff);
    }

    /// The same call with its own cancellation token: a call that may
    /// become a task outlives its request, so its handler must not hold
    /// the request's token.
    pub(crate) fn with_cancel(&self, cancel: CancellationToken) -> RequestContext {
        RequestContext::new(
            self.inner.request_id.clone(),
            self.inner.method,
            self.inner.meta.clone(),
            cancel,
            self.inner.sink.clone(),
            self.inner.input.clone(),
            self.inner.close_stream.clone(),
        )
    }

    /// Turns this `tools/call` into a task (the tasks extension) and
    /// returns `true`: the client gets the task handle now and the handler
    /// goes on; from here its questions go through the task (`tasks/update`)
    /// and its token is the task's (`tasks/cancel`). Questions asked before
    /// were multi round-trip, so a handler can gather what it needs first.
    ///
    /// Returns `false`, and the call goes on as a plain request, when the
    /// tool was not registered with [`TaskStart::ByHandler`] or the client
    /// did not declare the extension. Calling it again once the task runs
    /// returns `true` at once.
    ///
    /// [`TaskStart::ByHandler`]: crate::server::TaskStart::ByHandler
    ///
    /// ```
    /// use ferromcp::server::{HandlerError, RequestContext, ToolOutput};
    /// async fn handler(ctx: RequestContext) -> Result<ToolOutput, HandlerError> {
    ///     if ctx.start_task().await? {
    ///         // The client polls the task from here on.
    ///     }
    ///     Ok(ToolOutput::text("done"))
    /// }
    /// ```
    pub async fn start_task(&self) -> Result<bool, HandlerError> {
        match self.inner.task.get() {
            Some(handoff) => handoff.request().await.map(|()| true),
            None => Ok(false),
        }
    }

    fn input_unavailable(&self) -> HandlerError {
        HandlerError::Protocol(McpError::internal(format!(
            "{} cannot ask the client for input (only tools/call, prompts/get and resources/read can)",
            self.inner.method
        )))
    }

    fn live_request(
        &self,
        live: &Arc<dyn LiveRequester>,
        key: Option<&str>,
        kind: InputKind,
        params: Value,
    ) -> Result<oneshot::Receiver<Result<Value, McpError>>, HandlerError> {
        let capability = kind.capability();
        if !live.has_capability(capability) {
            return Err(HandlerError::Protocol(
                McpError::new(
                    crate::protocol::codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    format!("This request needs the client capability '{capability}'"),
                )
                .with_data(json!({"requiredCapabilities": {capability: {}}})),
            ));
        }
        live.start(key, kind.method(), params, self.inner.sink.as_ref())
            .map_err(HandlerError::Protocol)
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.request_id
    }

    /// The method being served, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        self.inner.method
    }

    /// The request's protocol metadata.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.meta
    }

    /// The headers of the HTTP request that carried this request, or
    /// `None` over stdio (or any transport without headers).
    pub fn http_headers(&self) -> Option<&http::HeaderMap> {
        self.inner.meta.http_headers.as_deref()
    }

    /// Who the request's access token belongs to, on a server served
    /// protected over HTTP (`HttpOptions::auth`); `None` otherwise (stdio,
    /// or HTTP without protection). The token was verified, meant for this
    /// server and not expired, and had the scopes the primitive requires.
    ///
    /// ```
    /// use ferromcp::protocol::Tool;
    /// use ferromcp::server::{HandlerError, RequestContext, Server, ToolOutput};
    /// use serde_json::{Value, json};
    ///
    /// let server = Server::new("demo", "1.0.0");
    /// server.add_tool(Tool::new("whoami", json!({"type": "object"})),
    ///     |ctx: RequestContext, _args: Value| async move {
    ///         match ctx.auth().and_then(|a| a.subject.clone()) {
    ///             Some(subject) => Ok(ToolOutput::text(subject)),
    ///             None => Err(HandlerError::tool("not signed in")),
    ///         }
    ///     })?;
    /// # Ok::<(), ferromcp::Error>(())
    /// ```
    pub fn auth(&self) -> Option<&super::auth::AuthInfo> {
        self.inner.meta.auth.as_deref()
    }

    /// True once the client cancelled the request (or went away), and once
    /// the request finished (work a handler left running must stop: nothing
    /// more is sent for the request). A handler doing long work should check
    /// this and stop early.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Resolves when the request is cancelled.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }

    /// A token that is cancelled with the request.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.inner.cancel.clone()
    }

    /// Sends `notifications/progress`, if the request asked for progress.
    /// Returns whether a notification was sent: not when the client is so
    /// far behind reading that 1,024 messages already wait for it (progress
    /// reports on work that goes on, so a late one is not worth queueing).
    /// In a task it becomes the task's status message instead
    /// (`"Rendering (3/10)"`) while no question waits.
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        // In a task, the request that carried the progress token has been
        // answered already: the progress becomes the task's status message,
        // which `tasks/get` and `notifications/tasks` show.
        if let InputMode::Live(live) = &self.input()
            && live.progress(progress_text(progress, total, message))
        {
            return true;
        }
        let Some(token) = &self.inner.meta.progress_token else {
            return false;
        };
        let mut params = Map::new();
        params.insert("progressToken".into(), token.clone());
        params.insert("progress".into(), json!(progress));
        if let Some(total) = total {
            params.insert("total".into(), json!(total));
        }
        if let Some(message) = message {
            params.insert("message".into(), Value::from(message));
        }
        self.notify(NOTIFICATIONS_PROGRESS, params)
    }

    /// Sends `notifications/message` when the request's `logLevel` admits
    /// `level`; a request without a log level gets no log messages. Like
    /// progress, dropped while the client is 1,024 messages behind.
    pub fn log(&self, level: LoggingLevel, data: Value, logger: Option<&str>) -> bool {
        match self.inner.meta.log_level {
            Some(min) if level >= min => {}
            _ => return false,
        }
        let mut params = Map::new();
        params.insert("level".into(), Value::from(level.as_str()));
        if let Some(logger) = logger {
            params.insert("logger".into(), Value::from(logger));
        }
        params.insert("data".into(), data);
        self.notify(NOTIFICATIONS_MESSAGE, params)
    }

    /// Asks the client for input without waiting: the answer if the client
    /// already gave one in this request, or [`AskOutcome::Pending`] once
    /// the question is recorded — then the handler must stop (hosts raise
    /// an exception) and the server answers `input_required`.
    ///
    /// `key` names the question in `inputRequests`; without one the
    /// question's position among this handler's asks is used, which is
    /// stable across retries of a deterministic handler.
    ///
    /// Fails with `-32021` when the client did not declare the capability
    /// the question needs, and on methods that cannot ask for input.
    pub fn ask_now(
        &self,
        key: Option<&str>,
        kind: InputKind,
        params: Value,
    ) -> Result<AskOutcome, HandlerError> {
        match &self.input() {
            InputMode::Rounds(round) => {
                let key = match key {
                    Some(k) => k.to_owned(),
                    None => round.auto_key(kind),
                };
                round.ask(&key, kind, params)
            }
            // On the live wire the answer only comes later: use `ask` or
            // `ask_blocking`.
            InputMode::Live(_) => Err(HandlerError::Protocol(McpError::internal(
                "ask_now cannot wait for a live answer; use ask or ask_blocking",
            ))),
            InputMode::None => Err(self.input_unavailable()),
        }
    }

    /// Like [`RequestContext::ask_now`], but on the legacy wire it sends the
    /// request and blocks this thread until the client answers. For host
    /// handlers running on blocking threads (never call it on an async
    /// runtime's worker thread).
    pub fn ask_blocking(
        &self,
        key: Option<&str>,
        kind: InputKind,
        params: Value,
    ) -> Result<AskOutcome, HandlerError> {
        match &self.input() {
            InputMode::Live(live) => {
                let answer = self.live_request(live, key, kind, params.clone())?;
                live_answer(answer.blocking_recv(), kind, &params).map(AskOutcome::Answered)
            }
            _ => self.ask_now(key, kind, params),
        }
    }

    /// Starts an ask without waiting, for hosts that wait their own way (an
    /// asyncio or JS future): the answer at hand, [`AskStart::Pending`]
    /// (2026-07-28: the question is recorded, the handler must stop), or on
    /// a 2025-11-25 session the request already sent and a future resolving
    /// with the client's answer.
    ///
    /// Unlike [`RequestContext::ask`], a pending ask does not end the round
    /// by itself: the round ends when the handler returns or fails (hosts
    /// raise), so every ask a handler starts before that (several at once,
    /// as with `asyncio.gather`) goes into the one `InputRequiredResult`.
    ///
    /// The key (given or positional, see [`RequestContext::ask_now`]) is
    /// taken now, so a host that starts several asks concurrently gets the
    /// same keys on every replay as long as it starts them in the same order.
    ///
    /// ```no_run
    /// # use ferromcp::server::{AskStart, InputKind, RequestContext};
    /// # async fn demo(ctx: RequestContext) -> Result<(), ferromcp::server::HandlerError> {
    /// match ctx.ask_start(None, InputKind::Roots, serde_json::json!({}))? {
    ///     AskStart::Answered(roots) => println!("{roots}"),
    ///     AskStart::Pending => return Ok(()), // the server answers input_required
    ///     AskStart::Live(answer) => println!("{}", answer.await?),
    /// }
    /// # Ok(()) }
    /// ```
    pub fn ask_start(
        &self,
        key: Option<&str>,
        kind: InputKind,
        params: Value,
    ) -> Result<AskStart, HandlerError> {
        if let InputMode::Live(live) = &self.input() {
            let answer = self.live_request(live, key, kind, params.clone())?;
            return Ok(AskStart::Live(Box::pin(async move {
                live_answer(answer.await, kind, &params)
            })));
        }
        let outcome = match &self.input() {
            InputMode::Rounds(round) => {
                let key = match key {
                    Some(k) => k.to_owned(),
                    None => round.auto_key(kind),
                };
                round.ask_quietly(&key, kind, params)?
            }
            _ => self.ask_now(key, kind, params)?,
        };
        Ok(match outcome {
            AskOutcome::Answered(answer) => AskStart::Answered(answer),
            AskOutcome::Pending => AskStart::Pending,
        })
    }

    /// Asks the client for input and waits for the answer (see
    /// [`RequestContext::ask_now`]). Under 2026-07-28, when the answer is not
    /// in the request yet, this never resolves: the server ends the round,
    /// drops the handler and runs it again when the client retries with the
    /// answer. In a legacy 2025-11-25 session it sends a real request to the
    /// client and resolves with its answer.
    pub async fn ask(
        &self,
        key: Option<&str>,
        kind: InputKind,
        params: Value,
    ) -> Result<Value, HandlerError> {
        if let InputMode::Live(live) = &self.input() {
            let answer = self.live_request(live, key, kind, params.clone())?;
            return live_answer(answer.await, kind, &params);
        }
        match self.ask_now(key, kind, params)? {
            AskOutcome::Answered(answer) => Ok(answer),
            AskOutcome::Pending => std::future::pending().await,
        }
    }

    /// Several asks made together, each `(key, kind, params)`, answered in
    /// order. Under 2026-07-28 every unanswered one lands in the same round
    /// (as asks joined in one poll do for a Rust handler): a host handler's
    /// `Promise.all` or `asyncio.gather` issues its asks together, but they
    /// would reach core one call at a time and the first unanswered one
    /// would end the round before the others were recorded. When one is
    /// unanswered this never resolves, as [`RequestContext::ask`]. In a
    /// 2025-11-25 session the requests go to the client concurrently.
    pub async fn ask_all(
        &self,
        asks: Vec<(Option<String>, InputKind, Value)>,
    ) -> Vec<Result<Value, HandlerError>> {
        match &self.input() {
            InputMode::Rounds(round) => {
                let outcomes: Vec<_> = asks
                    .into_iter()
                    .map(|(key, kind, params)| {
                        let key = key.unwrap_or_else(|| round.auto_key(kind));
                        round.ask_quietly(&key, kind, params)
                    })
                    .collect();
                if outcomes
                    .iter()
                    .any(|o| matches!(o, Ok(AskOutcome::Pending)))
                {
                    round.end_round();
                    return std::future::pending().await;
                }
                outcomes
                    .into_iter()
                    .map(|outcome| match outcome {
                        Ok(AskOutcome::Answered(answer)) => Ok(answer),
                        // Cannot happen: any pending ask returned above.
                        Ok(AskOutcome::Pending) => Err(HandlerError::Protocol(McpError::internal(
                            "an ask was left unanswered",
                        ))),
                        Err(error) => Err(error),
                    })
                    .collect()
            }
            InputMode::Live(live) => {
                // Every request is sent before any answer is awaited, so
                // this waits for the slowest answer, not their sum.
                let started: Vec<_> = asks
                    .into_iter()
                    .map(|(key, kind, params)| {
                        let answer = self.live_request(live, key.as_deref(), kind, params.clone());
                        (answer, kind, params)
                    })
                    .collect();
                let mut answers = Vec::with_capacity(started.len());
                for (answer, kind, params) in started {
                    answers.push(match answer {
                        Ok(answer) => live_answer(answer.await, kind, &params),
                        Err(error) => Err(error),
                    });
                }
                answers
            }
            InputMode::None => asks.iter().map(|_| Err(self.input_unavailable())).collect(),
        }
    }

    /// `elicitation/create` in form mode: asks the user to fill
    /// `requested_schema`. Returns the `ElicitResult` (`action`, `content`).
    pub async fn elicit(
        &self,
        message: &str,
        requested_schema: Value,
    ) -> Result<Value, HandlerError> {
        self.elicit_as(None, message, requested_schema).await
    }

    /// [`RequestContext::elicit`] under an explicit `inputRequests` key.
    pub async fn elicit_as(
        &self,
        key: Option<&str>,
        message: &str,
        requested_schema: Value,
    ) -> Result<Value, HandlerError> {
        let params =
            json!({"mode": "form", "message": message, "requestedSchema": requested_schema});
        self.ask(key, InputKind::Elicitation, params).await
    }

    /// `sampling/createMessage` with the given params (`messages`,
    /// `maxTokens`, ...). Returns the `CreateMessageResult`.
    pub async fn sample(&self, params: Value) -> Result<Value, HandlerError> {
        self.ask(None, InputKind::Sampling, params).await
    }

    /// `roots/list`. Returns the `ListRootsResult` (`roots`).
    pub async fn list_roots(&self) -> Result<Value, HandlerError> {
        self.ask(None, InputKind::Roots, json!({})).await
    }

    /// Sends a notification about this request (on its own SSE stream over
    /// HTTP, on the shared channel over stdio), dropped while the reader is
    /// [`NOTIFICATION_QUEUE`](super::sink::NOTIFICATION_QUEUE) behind. Nothing may be sent for a request after
    /// it was cancelled.
    pub(crate) fn notify(&self, method: &str, params: Map<String, Value>) -> bool {
        self.outgoing(method, params)
            .is_some_and(|(sink, note)| sink.try_send(note).is_ok())
    }

    /// Like [`RequestContext::notify`], but waits for room while the reader
    /// is behind instead of dropping the notification.
    pub(crate) async fn notify_waiting(&self, method: &str, params: Map<String, Value>) -> bool {
        match self.outgoing(method, params) {
            Some((sink, note)) => sink.send(note).await.is_ok(),
            None => false,
        }
    }

    /// The sink and the notification to put in it, unless the request was
    /// cancelled or has nowhere to send.
    fn outgoing(
        &self,
        method: &str,
        params: Map<String, Value>,
    ) -> Option<(&NotificationSink, Value)> {
        if self.is_cancelled() {
            return None;
        }
        let sink = self.inner.sink.as_ref()?;
        Some((sink, notification_value(method, Some(&params))))
    }
}

/// The client's answer to a live request, or why there is none.
/// An answer that does not fit the question is `-32602`, as it is under
/// 2026-07-28 ([`check_answer`]): the handler never runs on with it.
fn live_answer(
    received: Result<Result<Value, McpError>, oneshot::error::RecvError>,
    kind: InputKind,
    params: &Value,
) -> Result<Value, HandlerError> {
    match received {
        Ok(Ok(answer)) => match check_answer(kind, params, &answer) {
            Ok(()) => Ok(answer),
            Err(error) => Err(HandlerError::Protocol(error)),
        },
        Ok(Err(error)) => Err(HandlerError::Protocol(error)),
        Err(_) => Err(HandlerError::Protocol(McpError::internal(
            "the client session ended before answering",
        ))),
    }
}

/// Reads the per-request protocol fields out of `params._meta`.
pub(crate) fn parse_request_meta(meta: MetaMembers) -> Result<RequestMeta, String> {
    let reserved = match meta {
        MetaMembers::Object(reserved) => reserved,
        MetaMembers::NotObject(_) => return Err("params._meta must be an object".into()),
        MetaMembers::Absent => {
            return Err("params._meta is required on every request (it carries \"io.modelcontextprotocol/protocolVersion\" and \"io.modelcontextprotocol/clientCapabilities\")".into());
        }
    };
    // Other members (extensions') are not read: nothing downstream looks
    // at `_meta` in the params (the requestState digest leaves it out
    // anyway).
    let ReservedMembers {
        protocol_version: version,
        client_capabilities: capabilities,
        client_info,
        log_level: level,
        progress_token: token,
        others,
    } = *reserved;
    // Of the other members, only the trace context is read (SEP-414).
    let trace = others
        .get(crate::telemetry::TRACEPARENT)
        .is_some()
        .then(|| crate::telemetry::TraceContext::from_meta(&others))
        .flatten();
    let protocol_version = match version {
        Some(Value::String(v)) => v,
        Some(_) => {
            return Err(format!(
                "_meta[\"{}\"] must be a string",
                meta::PROTOCOL_VERSION
            ));
        }
        None => return Err(format!("_meta[\"{}\"] is required", meta::PROTOCOL_VERSION)),
    };
    let client_capabilities = match capabilities {
        Some(Value::Object(c)) => c,
        Some(_) => {
            return Err(format!(
                "_meta[\"{}\"] must be an object",
                meta::CLIENT_CAPABILITIES
            ));
        }
        None => {
            return Err(format!(
                "_meta[\"{}\"] is required",
                meta::CLIENT_CAPABILITIES
            ));
        }
    };
    let log_level = match level {
        None => None,
        Some(Value::String(l)) => Some(
            LoggingLevel::parse(&l)
                .ok_or_else(|| format!("_meta[\"{}\"]: unknown level {l:?}", meta::LOG_LEVEL))?,
        ),
        Some(_) => return Err(format!("_meta[\"{}\"] must be a string", meta::LOG_LEVEL)),
    };
    let progress_token = match token {
        None => None,
        Some(t @ Value::String(_)) => Some(t),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n)),
        Some(_) => return Err("_meta.progressToken must be a string or an integer".into()),
    };
    Ok(RequestMeta {
        protocol_version,
        client_capabilities,
        client_info,
        log_level,
        progress_token,
        http_headers: None,
        auth: None,
        trace,
    })
}
