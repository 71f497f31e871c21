//! What the application configures: the client's identity and behaviour
//! ([`ClientOptions`], including the callbacks that answer a server's
//! elicitation, sampling and roots requests) and per-call settings
//! ([`CallOptions`]).

use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use super::answers::{Asked, CallInputs};
use super::{CacheMode, ServerRequestHandler, StderrMode, TlsOptions};
use crate::protocol::{Implementation, InputKind, LATEST_PROTOCOL_VERSION, methods};
use crate::{BoxFuture, Error, McpError};

/// Answers one kind of server request (`elicitation/create`,
/// `sampling/createMessage` or `roots/list`): receives its params, returns
/// the result object.
pub type InputHandler = Arc<dyn Fn(Value) -> BoxFuture<Result<Value, Error>> + Send + Sync>;

/// Receives notifications (method, params).
pub type NotificationCallback = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// Receives progress updates of one call.
pub type ProgressCallback = Arc<dyn Fn(ProgressUpdate) + Send + Sync>;

/// Receives a followed task's state (see [`CallOptions::on_task_state`]).
pub type TaskStateCallback = Arc<dyn Fn(&Value) + Send + Sync>;

/// Answers the input one call's server asks for (see [`CallOptions::input`]):
/// the kind (elicitation, sampling, roots) and the request's params.
pub type CallInput = Arc<dyn Fn(InputKind, Value) -> BoxFuture<Result<Value, Error>> + Send + Sync>;

/// One `notifications/progress` update.
#[derive(Debug, Clone, PartialEq)]
pub struct ProgressUpdate {
    /// Progress so far.
    pub progress: f64,
    /// Total, when known.
    pub total: Option<f64>,
    /// Human-readable status.
    pub message: Option<String>,
}

/// What a client accepts from a server, so that a misbehaving or hostile
/// server cannot exhaust its memory or its sockets. Every refusal names the
/// limit it hit. Bindings fill it from a host value (a Python dict, a JS
/// object, the C options' JSON) through serde: camelCase keys, snake_case
/// accepted too, unknown keys refused.
///
/// ```
/// use ferromcp::client::{ClientLimits, ClientOptions};
///
/// let limits: ClientLimits =
///     serde_json::from_str(r#"{"maxMessageBytes": 1048576, "max_queued_notifications": 64}"#)?;
/// assert_eq!(limits.max_message_bytes, 1 << 20);
/// assert_eq!(limits.max_concurrent_server_answers, 4, "the rest keep their defaults");
/// let options = ClientOptions { limits, ..ClientOptions::default() };
/// # let _ = options;
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default, deny_unknown_fields)]
pub struct ClientLimits {
    /// The largest message read from a server: a JSON response body, one
    /// SSE event (its `data` lines together) or one stdio line. A larger
    /// one ends the call with an error naming this limit (stdio: the line
    /// is skipped). Default 16 MiB.
    #[serde(alias = "max_message_bytes")]
    pub max_message_bytes: usize,
    /// Notifications of one call (or one listen stream) waiting for their
    /// callback or reader. When full, progress is coalesced to the newest,
    /// repeats of a queued notification are dropped, and anything else is
    /// dropped with a warning; the response is never held back. Default
    /// 1,024.
    #[serde(alias = "max_queued_notifications")]
    pub max_queued_notifications: usize,
    /// Requests from a server (`ping`, `elicitation/create`, ...) being
    /// answered at once. On a 2025-11-25 session's GET stream, which
    /// carries only the server's messages, more wait (the stream is not
    /// read meanwhile); where they share a stream with responses (stdio, a
    /// POST's SSE answer) more are refused: on stdio with a -32603 error
    /// naming this limit, over HTTP unanswered, with a warning. Default 64.
    #[serde(alias = "max_pending_server_requests")]
    pub max_pending_server_requests: usize,
    /// Over HTTP, answers to server requests POSTed at once, each on a
    /// connection of its own: the most sockets a burst of server requests
    /// can open. The other answers wait their turn. Default 4.
    #[serde(alias = "max_concurrent_server_answers")]
    pub max_concurrent_server_answers: usize,
    /// A stdio server's stderr is read in lines of at most this many bytes
    /// (a longer line is split): what the log, the stderr callback and the
    /// tail quoted when the server dies hold of it. Default 8 KiB.
    #[serde(alias = "max_stderr_line_bytes")]
    pub max_stderr_line_bytes: usize,
}

impl ClientLimits {
    /// Reads limits from a host's JSON object, as every binding does: a
    /// member that is `null` (what a JavaScript `undefined` or a Python
    /// `None` becomes) keeps its default; an unknown member or a bad value
    /// is an error naming the member.
    ///
    /// ```
    /// use ferromcp::client::ClientLimits;
    /// use serde_json::json;
    ///
    /// let limits = ClientLimits::from_json(&json!({"maxQueuedNotifications": 64, "maxMessageBytes": null}))?;
    /// assert_eq!(limits.max_queued_notifications, 64);
    /// assert_eq!(limits.max_message_bytes, ClientLimits::default().max_message_bytes);
    /// let error = ClientLimits::from_json(&json!({"maxMessageBytes": -1})).unwrap_err();
    /// assert!(error.starts_with("client limit \"maxMessageBytes\": invalid value"), "{error}");
    /// # Ok::<(), String>(())
    /// ```
    pub fn from_json(value: &Value) -> Result<ClientLimits, String> {
        let map = match value {
            Value::Null => return Ok(ClientLimits::default()),
            Value::Object(map) => map,
            other => return Err(format!("client limits must be an object, got {other}")),
        };
        let given: Map<String, Value> = map
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        serde_json::from_value(Value::Object(given.clone())).map_err(|whole| {
            // serde's message does not say which member it was: find it by
            // reading the members one at a time.
            given
                .iter()
                .find_map(|(key, value)| {
                    let mut one = Map::new();
                    one.insert(key.clone(), value.clone());
                    serde_json::from_value::<ClientLimits>(Value::Object(one))
                        .err()
                        .map(|e| format!("client limit {key:?}: {e}"))
                })
                .unwrap_or_else(|| format!("client limits: {whole}"))
        })
    }
}

impl Default for ClientLimits {
    fn default() -> Self {
        ClientLimits {
            max_message_bytes: crate::net::DEFAULT_MAX_MESSAGE_BYTES,
            max_queued_notifications: 1024,
            max_pending_server_requests: 64,
            max_concurrent_server_answers: 4,
            max_stderr_line_bytes: 8 * 1024,
        }
    }
}

/// Client identity and behaviour.
#[derive(Clone)]
pub struct ClientOptions {
    /// Sent as `_meta["io.modelcontextprotocol/clientInfo"]`.
    pub info: Implementation,
    /// The protocol version requests declare first (a server answering
    /// `-32022` makes the client switch to a version both support).
    pub protocol_version: String,
    /// Default per-call timeout; `None` waits indefinitely.
    pub timeout: Option<Duration>,
    /// How many `input_required` rounds one call may take.
    pub max_input_rounds: usize,
    /// Answers `elicitation/create`; declaring it declares the capability.
    pub elicitation: Option<InputHandler>,
    /// Answers `sampling/createMessage`; declaring it declares the capability.
    pub sampling: Option<InputHandler>,
    /// Answers `roots/list`; declaring it declares the capability.
    pub roots: Option<InputHandler>,
    /// Further capabilities to declare (`experimental`, `extensions`).
    pub extra_capabilities: Map<String, Value>,
    /// Receives notifications not tied to a call (e.g. logs on stdio).
    pub on_notification: Option<NotificationCallback>,
    /// What happens to a stdio server's stderr.
    pub stderr: StderrMode,
    /// Extra headers sent with every HTTP request (e.g. `Authorization`);
    /// ignored by stdio. Protocol headers (`MCP-Protocol-Version`,
    /// `Mcp-Method`...) are the client's own and cannot be set here.
    pub http_headers: Vec<(String, String)>,
    /// Trust store, extra CA certificates and client certificate for
    /// `https://` URLs; ignored by `http://` and stdio.
    pub tls: TlsOptions,
    /// OAuth 2.1 for a protected HTTP server: a 401 starts the login, the
    /// token goes on every request after; ignored by stdio.
    pub oauth: Option<super::auth::OAuthOptions>,
    /// Which revision family to speak.
    pub era: EraPreference,
    /// How long the era probe (`server/discover`) may go unanswered before
    /// the server is taken to be legacy. For a spawned stdio server the
    /// clock starts once the server is serving (it read the probe or wrote
    /// anything), not when the process starts; see `startup_timeout`.
    pub probe_timeout: Duration,
    /// How long a spawned stdio server may take to start serving before the
    /// probe's clock starts anyway. A server that starts slowly is not
    /// mistaken for a legacy one; a legacy server that reads the probe and
    /// stays silent is still detected after `probe_timeout`.
    pub startup_timeout: Duration,
    /// What the client accepts from a server (sizes, queues, concurrency).
    pub limits: ClientLimits,
    /// Whether the client declares the tasks extension (SEP-2663) and
    /// follows a task a server answers `tools/call` with: polls it, answers
    /// its questions with the input handlers, and returns the tool's result
    /// (on by default). Off, servers answer with the result itself (or
    /// `-32021` for a tool that only runs as a task).
    pub follow_tasks: bool,
}

impl std::fmt::Debug for ClientOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientOptions")
            .field("info", &self.info)
            .field("protocol_version", &self.protocol_version)
            .field("timeout", &self.timeout)
            .field("capabilities", &self.capabilities())
            .finish_non_exhaustive()
    }
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            info: Implementation::new("ferromcp-client", env!("CARGO_PKG_VERSION")),
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            timeout: Some(Duration::from_secs(60)),
            max_input_rounds: 8,
            elicitation: None,
            sampling: None,
            roots: None,
            extra_capabilities: Map::new(),
            on_notification: None,
            stderr: StderrMode::default(),
            http_headers: Vec::new(),
            tls: TlsOptions::default(),
            oauth: None,
            era: EraPreference::Auto,
            probe_timeout: Duration::from_secs(5),
            startup_timeout: Duration::from_secs(30),
            limits: ClientLimits::default(),
            follow_tasks: true,
        }
    }
}

fn boxed_handler<F, Fut>(f: F) -> InputHandler
where
    F: Fn(Value) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Value, Error>> + Send + 'static,
{
    Arc::new(move |params| Box::pin(f(params)))
}

impl ClientOptions {
    /// Sets the handler answering one kind of input request (and so
    /// declares that capability). Bindings register their host callables
    /// through this one entry point; the named setters below are shorthands.
    pub fn on_input<F, Fut>(mut self, kind: InputKind, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, Error>> + Send + 'static,
    {
        let slot = match kind {
            InputKind::Elicitation => &mut self.elicitation,
            InputKind::Sampling => &mut self.sampling,
            InputKind::Roots => &mut self.roots,
        };
        *slot = Some(boxed_handler(f));
        self
    }

    /// Sets the elicitation handler (and so declares `elicitation`).
    pub fn on_elicitation<F, Fut>(self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, Error>> + Send + 'static,
    {
        self.on_input(InputKind::Elicitation, f)
    }

    /// Sets the sampling handler (and so declares `sampling`).
    pub fn on_sampling<F, Fut>(self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, Error>> + Send + 'static,
    {
        self.on_input(InputKind::Sampling, f)
    }

    /// Sets the roots handler (and so declares `roots`).
    pub fn on_roots<F, Fut>(self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, Error>> + Send + 'static,
    {
        self.on_input(InputKind::Roots, f)
    }

    /// The capabilities requests declare: one per registered handler, so a
    /// server never asks for input the application cannot give.
    pub fn capabilities(&self) -> Map<String, Value> {
        let mut caps = self.extra_capabilities.clone();
        if self.follow_tasks
            && let Value::Object(extensions) = caps
                .entry("extensions")
                .or_insert_with(|| Value::Object(Map::new()))
        {
            extensions
                .entry(crate::protocol::tasks::TASKS_EXTENSION)
                .or_insert_with(|| json!({}));
        }
        for kind in InputKind::ALL {
            if self.handler(kind).is_some() {
                caps.insert(kind.capability().into(), json!({}));
            }
        }
        caps
    }

    /// The handler answering a legacy server's requests that came apart
    /// from any call: a question goes to the one call in flight that
    /// answers for itself (see [`CallInputs`]), else to the client's
    /// handler.
    pub(crate) fn server_request_handler(&self, calls: Arc<CallInputs>) -> ServerRequestHandler {
        let options = self.clone();
        Arc::new(move |method: String, params: Value| {
            let options = options.clone();
            let calls = calls.clone();
            Box::pin(async move {
                if method == methods::PING {
                    return Ok(json!({}));
                }
                let Some(kind) = InputKind::from_method(&method) else {
                    return Err(McpError::method_not_found(&method));
                };
                let answer = match calls.asked() {
                    Asked::Call(input) => input(kind, params).await,
                    Asked::Client => match options.handler(kind) {
                        Some(handler) => handler(params).await,
                        None => return Err(McpError::method_not_found(&method)),
                    },
                    Asked::Ambiguous(waiting) => {
                        return Err(McpError::internal(format!(
                            "{method} came apart from any call while {waiting} calls wait \
                             for answers: it cannot be told whose question it is"
                        )));
                    }
                };
                answer.map_err(|e| match e {
                    Error::Mcp(e) => e,
                    other => McpError::internal(other.to_string()),
                })
            })
        })
    }

    /// The handler answering a legacy server's requests on one call's
    /// stream with that call's own input handler.
    pub(crate) fn call_request_handler(input: CallInput) -> ServerRequestHandler {
        Arc::new(move |method: String, params: Value| {
            let input = input.clone();
            Box::pin(async move {
                if method == methods::PING {
                    return Ok(json!({}));
                }
                match InputKind::from_method(&method) {
                    Some(kind) => input(kind, params).await.map_err(|e| match e {
                        Error::Mcp(e) => e,
                        other => McpError::internal(other.to_string()),
                    }),
                    None => Err(McpError::method_not_found(&method)),
                }
            })
        })
    }

    /// The handler for a server request method, if it is an input kind
    /// the application answers.
    pub(super) fn handler_for(&self, method: &str) -> Option<&InputHandler> {
        self.handler(InputKind::from_method(method)?)
    }

    /// The handler answering one kind of input request, if registered.
    pub fn handler(&self, kind: InputKind) -> Option<&InputHandler> {
        match kind {
            InputKind::Elicitation => self.elicitation.as_ref(),
            InputKind::Sampling => self.sampling.as_ref(),
            InputKind::Roots => self.roots.as_ref(),
        }
    }
}

/// Which revision family the client speaks to its server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum EraPreference {
    /// Detect it (spec: versioning.mdx, "Backward Compatibility"): a modern
    /// probe first; a legacy server gets the `initialize` handshake.
    #[default]
    Auto,
    /// 2026-07-28 and later only.
    Modern,
    /// 2025-11-25 and earlier only (initialize handshake).
    Legacy,
}

/// Per-call settings.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Overrides the client's default timeout.
    pub timeout: Option<Duration>,
    /// How the call uses the result cache.
    pub cache: CacheMode,
    /// Receives `notifications/progress` for this call (asks for them).
    pub on_progress: Option<ProgressCallback>,
    /// Receives every notification about this call.
    pub on_notification: Option<NotificationCallback>,
    /// Cancelling it abandons the call (the server is told: a
    /// `notifications/cancelled` on stdio, a closed stream on HTTP).
    pub cancel: Option<CancellationToken>,
    /// Extra `_meta` entries for the request (e.g. trace context).
    pub meta: Map<String, Value>,
    /// Receives the state of the task the server made of the call, each
    /// time its status or status message changes while the call follows
    /// it (the tasks extension): a `DetailedTask` object as `tasks/get`
    /// answers it.
    pub on_task_state: Option<TaskStateCallback>,
    /// Answers the input this call's server asks for, in place of the
    /// client's handlers: a gateway passes each question on to the client
    /// whose request it is forwarding. It applies to the rounds of a
    /// 2026-07-28 call and, over HTTP, to the requests a 2025-11-25 server
    /// sends on the call's own stream; a 2025-11-25 server on stdio sends
    /// its requests apart from any call, and the client's handlers answer
    /// them.
    pub input: Option<CallInput>,
    /// The `clientCapabilities` this call declares instead of the client's
    /// (2026-07-28: each request declares its own; a gateway declares what
    /// the client it forwards for declared). A 2025-11-25 session keeps
    /// what `initialize` declared.
    pub capabilities: Option<Map<String, Value>>,
    /// The span this call is part of, when tracing is on: the parent of
    /// the call's client span. `None`: the task's current one
    /// (`telemetry::current()`, a handler's server span), else a new
    /// trace. Bindings pass their application's current span here.
    pub trace: Option<crate::telemetry::TraceContext>,
}

impl CallOptions {
    /// Sets a progress callback.
    pub fn with_progress(mut self, f: impl Fn(ProgressUpdate) + Send + Sync + 'static) -> Self {
        self.on_progress = Some(Arc::new(f));
        self
    }

    /// Sets the timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets the cache mode.
    pub fn with_cache(mut self, cache: CacheMode) -> Self {
        self.cache = cache;
        self
    }

    /// Sets a cancellation token.
    pub fn with_cancel(mut self, cancel: CancellationToken) -> Self {
        self.cancel = Some(cancel);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::codes;

    fn answer(v: Value) -> impl Fn(Value) -> BoxFuture<Result<Value, Error>> + Send + Sync {
        move |_| {
            let v = v.clone();
            Box::pin(async move { Ok(v) })
        }
    }

    #[test]
    fn capabilities_declare_one_entry_per_handler() {
        let mut options = ClientOptions::default();
        options
            .extra_capabilities
            .insert("experimental".into(), json!({"x": {}}));
        assert_eq!(
            Value::Object(options.capabilities()),
            json!({"experimental": {"x": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
        );
        let mut options = options
            .on_sampling(|_| async { Ok(json!({})) })
            .on_roots(|_| async { Ok(json!({})) });
        options.follow_tasks = false;
        assert_eq!(
            Value::Object(options.capabilities()),
            json!({"experimental": {"x": {}}, "sampling": {}, "roots": {}})
        );
        // Extensions the application declares are kept beside tasks.
        options.follow_tasks = true;
        options
            .extra_capabilities
            .insert("extensions".into(), json!({"a/b": {"x": 1}}));
        assert_eq!(
            options.capabilities()["extensions"],
            json!({"a/b": {"x": 1}, "io.modelcontextprotocol/tasks": {}})
        );
    }

    #[test]
    fn handler_for_knows_only_the_three_input_methods() {
        let options = ClientOptions::default().on_elicitation(|_| async { Ok(json!({})) });
        assert!(options.handler_for(methods::ELICITATION_CREATE).is_some());
        assert!(
            options
                .handler_for(methods::SAMPLING_CREATE_MESSAGE)
                .is_none()
        );
        assert!(options.handler_for(methods::TOOLS_CALL).is_none());
        assert!(options.handler(InputKind::Elicitation).is_some());
        assert!(options.handler(InputKind::Roots).is_none());
        let options = options.on_input(InputKind::Roots, |_| async { Ok(json!({"roots": []})) });
        assert!(options.handler_for(methods::ROOTS_LIST).is_some());
        assert!(options.handler(InputKind::Sampling).is_none());
    }

    #[tokio::test]
    async fn server_requests_are_answered_by_kind() {
        let options = ClientOptions {
            roots: Some(Arc::new(answer(json!({"roots": []})))),
            sampling: Some(Arc::new(|_| {
                Box::pin(async { Err(Error::Protocol("model unavailable".into())) })
            })),
            ..ClientOptions::default()
        };
        let handle = options.server_request_handler(Arc::default());
        assert_eq!(
            handle(methods::PING.into(), Value::Null).await,
            Ok(json!({}))
        );
        assert_eq!(
            handle(methods::ROOTS_LIST.into(), json!({})).await,
            Ok(json!({"roots": []}))
        );
        let missing = handle(methods::ELICITATION_CREATE.into(), json!({}))
            .await
            .unwrap_err();
        assert_eq!(missing.code, codes::METHOD_NOT_FOUND);
        let failed = handle(methods::SAMPLING_CREATE_MESSAGE.into(), json!({}))
            .await
            .unwrap_err();
        assert_eq!(failed.code, codes::INTERNAL_ERROR);
        assert!(failed.message.contains("model unavailable"), "{failed:?}");
    }
}
