//! The MCP client: stateless 2026-07-28 requests over stdio (spawning and
//! supervising the server) or Streamable HTTP.
//!
//! Everything protocol-level happens in [`Client::send`], which every typed
//! method and every language binding goes through: the per-request `_meta`,
//! version negotiation on `-32022`, the result cache, `x-mcp-header`
//! mirroring, and the MRTR loop that answers `input_required` results with
//! the application's elicitation, sampling and roots handlers.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferromcp::Error> {
//! use ferromcp::client::Client;
//! let client = Client::connect_http("http://127.0.0.1:8000/mcp").await?;
//! for tool in client.list_all_tools().await? {
//!     println!("{}", tool.name);
//! }
//! let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
//! # Ok(()) }
//! ```

mod cache;
mod headers;
mod http;
mod listen;
mod pool;
mod stdio;

use crate::rpc::{read_unpoisoned, write_unpoisoned};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::protocol::jsonrpc::RequestId;
use crate::protocol::{
    CallToolResult, CompleteResult, DiscoverResult, GetPromptResult, Implementation,
    LATEST_PROTOCOL_VERSION, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, MODERN_PROTOCOL_VERSIONS, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, SubscriptionFilter, Tool, codes, meta,
};
use crate::server::BoxFuture;
use crate::{Error, McpError};

pub use cache::CacheMode;
pub use listen::{Subscription, SubscriptionNotification};
pub use stdio::{StderrMode, StdioCommand};

/// Answers one kind of server request (`elicitation/create`,
/// `sampling/createMessage` or `roots/list`): receives its params, returns
/// the result object.
pub type InputHandler = Arc<dyn Fn(Value) -> BoxFuture<Result<Value, Error>> + Send + Sync>;

/// Receives notifications (method, params).
pub type NotificationCallback = Arc<dyn Fn(&str, &Value) + Send + Sync>;

/// Receives progress updates of one call.
pub type ProgressCallback = Arc<dyn Fn(ProgressUpdate) + Send + Sync>;

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
    /// Which revision family to speak.
    pub era: EraPreference,
    /// How long the stdio era probe (`server/discover`) may take before the
    /// server is taken to be legacy.
    pub probe_timeout: Duration,
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
            era: EraPreference::Auto,
            probe_timeout: Duration::from_secs(5),
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
    /// Sets the elicitation handler (and so declares `elicitation`).
    pub fn on_elicitation<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, Error>> + Send + 'static,
    {
        self.elicitation = Some(boxed_handler(f));
        self
    }

    /// Sets the sampling handler (and so declares `sampling`).
    pub fn on_sampling<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, Error>> + Send + 'static,
    {
        self.sampling = Some(boxed_handler(f));
        self
    }

    /// Sets the roots handler (and so declares `roots`).
    pub fn on_roots<F, Fut>(mut self, f: F) -> Self
    where
        F: Fn(Value) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<Value, Error>> + Send + 'static,
    {
        self.roots = Some(boxed_handler(f));
        self
    }

    /// The capabilities requests declare: one per registered handler, so a
    /// server never asks for input the application cannot give.
    pub fn capabilities(&self) -> Map<String, Value> {
        let mut caps = self.extra_capabilities.clone();
        if self.elicitation.is_some() {
            caps.insert("elicitation".into(), json!({}));
        }
        if self.sampling.is_some() {
            caps.insert("sampling".into(), json!({}));
        }
        if self.roots.is_some() {
            caps.insert("roots".into(), json!({}));
        }
        caps
    }

    /// The handler answering a legacy server's requests.
    fn server_request_handler(&self) -> ServerRequestHandler {
        let options = self.clone();
        Arc::new(move |method: String, params: Value| {
            let options = options.clone();
            Box::pin(async move {
                if method == "ping" {
                    return Ok(json!({}));
                }
                match options.handler_for(&method) {
                    Some(handler) => handler(params).await.map_err(|e| match e {
                        Error::Mcp(e) => e,
                        other => McpError::internal(other.to_string()),
                    }),
                    None => Err(McpError::method_not_found(&method)),
                }
            })
        })
    }

    fn handler_for(&self, method: &str) -> Option<&InputHandler> {
        match method {
            "elicitation/create" => self.elicitation.as_ref(),
            "sampling/createMessage" => self.sampling.as_ref(),
            "roots/list" => self.roots.as_ref(),
            _ => None,
        }
    }
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

/// One request as a transport sends it.
pub(crate) struct Outgoing {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    pub(crate) params: Map<String, Value>,
    /// Extra HTTP headers (`Mcp-Param-*`); ignored by stdio.
    pub(crate) headers: Vec<(String, String)>,
    /// Where notifications about this request (progress, logs,
    /// subscription events) go.
    pub(crate) notifications: Option<mpsc::UnboundedSender<Value>>,
    /// The `MCP-Protocol-Version` header value (HTTP).
    pub(crate) version: String,
}

/// Answers a request a legacy server sends to the client (`ping`,
/// `elicitation/create`, `sampling/createMessage`, `roots/list`).
pub(crate) type ServerRequestHandler =
    Arc<dyn Fn(String, Value) -> BoxFuture<Result<Value, McpError>> + Send + Sync>;

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

/// The era detected for (or imposed on) a server.
#[derive(Debug, Clone, PartialEq)]
enum Era {
    Modern,
    Legacy {
        /// The negotiated legacy revision.
        version: String,
    },
}

/// What carries requests to a server and brings back their results.
pub(crate) trait ClientTransport: Send + Sync {
    /// Sends a request; resolves to its `result`, or `Error::Mcp` for a
    /// JSON-RPC error. Dropping the future abandons the request.
    fn send(&self, request: Outgoing) -> BoxFuture<Result<Value, Error>>;
    /// Sends a notification.
    fn notify(
        &self,
        method: &str,
        params: Map<String, Value>,
        version: &str,
    ) -> BoxFuture<Result<(), Error>>;
    /// Whether `x-mcp-header` mirroring applies (HTTP only).
    fn mirrors_headers(&self) -> bool;
    /// After a legacy handshake: start receiving what the server sends
    /// outside any request (HTTP: the session's GET stream).
    fn legacy_session_started(&self, _version: &str) -> BoxFuture<()> {
        Box::pin(async {})
    }
    /// Stops the transport (for stdio: ends the server process).
    fn close(&self) -> BoxFuture<()>;
}

struct ClientShared {
    transport: Arc<dyn ClientTransport>,
    options: ClientOptions,
    era: RwLock<Option<Era>>,
    /// Serialises era detection so concurrent first calls probe once.
    detecting: tokio::sync::Mutex<()>,
    protocol_version: RwLock<String>,
    next_id: AtomicI64,
    cache: cache::ResultCache,
    tool_headers: headers::ToolHeaders,
    /// `clientInfo` and `clientCapabilities` never change: built once, not
    /// once per request.
    info_value: Value,
    capabilities_value: Value,
}

/// An MCP client connected to one server. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    shared: Arc<ClientShared>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("options", &self.shared.options)
            .finish_non_exhaustive()
    }
}

fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, Error> {
    serde_json::from_value(value)
        .map_err(|e| Error::Protocol(format!("malformed {method} result: {e}")))
}

impl Client {
    /// Spawns `command` and talks to it over its stdin/stdout.
    pub async fn connect_stdio(command: StdioCommand) -> Result<Client, Error> {
        Self::connect_stdio_with(command, ClientOptions::default()).await
    }

    /// [`Client::connect_stdio`] with explicit options.
    pub async fn connect_stdio_with(
        command: StdioCommand,
        options: ClientOptions,
    ) -> Result<Client, Error> {
        let transport = stdio::StdioTransport::spawn(
            command,
            options.stderr.clone(),
            options.on_notification.clone(),
            Some(options.server_request_handler()),
        )?;
        Ok(Self::from_transport(Arc::new(transport), options))
    }

    /// Speaks newline-delimited JSON-RPC over any byte stream (a Unix
    /// socket, a TCP connection, an in-memory pipe), as the stdio binding
    /// defines it for custom transports.
    pub fn connect_stream<R, W>(reader: R, writer: W, options: ClientOptions) -> Client
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let transport = stdio::StdioTransport::over_stream(
            reader,
            writer,
            options.on_notification.clone(),
            Some(options.server_request_handler()),
        );
        Self::from_transport(Arc::new(transport), options)
    }

    /// Talks to a Streamable HTTP endpoint (`http://host:port/mcp`).
    pub async fn connect_http(url: &str) -> Result<Client, Error> {
        Self::connect_http_with(url, ClientOptions::default()).await
    }

    /// [`Client::connect_http`] with explicit options.
    pub async fn connect_http_with(url: &str, options: ClientOptions) -> Result<Client, Error> {
        let transport = http::HttpTransport::new(
            url,
            Some(options.server_request_handler()),
            options.on_notification.clone(),
        )?;
        Ok(Self::from_transport(Arc::new(transport), options))
    }

    fn from_transport(transport: Arc<dyn ClientTransport>, options: ClientOptions) -> Client {
        let info_value = serde_json::to_value(&options.info).unwrap_or(Value::Null);
        let capabilities_value = Value::Object(options.capabilities());
        Client {
            shared: Arc::new(ClientShared {
                transport,
                protocol_version: RwLock::new(options.protocol_version.clone()),
                era: RwLock::new(match options.era {
                    EraPreference::Modern => Some(Era::Modern),
                    _ => None,
                }),
                detecting: tokio::sync::Mutex::new(()),
                options,
                next_id: AtomicI64::new(1),
                cache: cache::ResultCache::default(),
                tool_headers: headers::ToolHeaders::default(),
                info_value,
                capabilities_value,
            }),
        }
    }

    /// The options this client was built with.
    pub fn options(&self) -> &ClientOptions {
        &self.shared.options
    }

    /// The protocol version requests currently declare.
    pub fn protocol_version(&self) -> String {
        read_unpoisoned(&self.shared.protocol_version).clone()
    }

    fn request_meta(&self, extra: &Map<String, Value>) -> Map<String, Value> {
        let mut meta = extra.clone();
        meta.insert(
            meta::PROTOCOL_VERSION.into(),
            Value::from(self.protocol_version()),
        );
        meta.insert(meta::CLIENT_INFO.into(), self.shared.info_value.clone());
        meta.insert(
            meta::CLIENT_CAPABILITIES.into(),
            self.shared.capabilities_value.clone(),
        );
        meta
    }

    fn next_id(&self) -> RequestId {
        RequestId::Number(self.shared.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends any request with default call options and returns the raw
    /// `result` object.
    pub async fn request(&self, method: &str, params: Map<String, Value>) -> Result<Value, Error> {
        self.send(method, params, &CallOptions::default()).await
    }

    /// Sends any request: adds `_meta`, serves from or fills the cache,
    /// mirrors `x-mcp-header` arguments, answers `input_required` rounds
    /// with the registered handlers, and switches protocol version when the
    /// server names the ones it supports.
    pub async fn send(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        let limit = options.timeout.or(self.shared.options.timeout);
        let work = self.send_inner(method, params, options);
        let timed = async {
            match limit {
                Some(limit) => tokio::time::timeout(limit, work)
                    .await
                    .map_err(|_| Error::Timeout)?,
                None => work.await,
            }
        };
        match &options.cancel {
            Some(token) => tokio::select! {
                result = timed => result,
                _ = token.cancelled() => Err(Error::Cancelled),
            },
            None => timed.await,
        }
    }

    async fn send_inner(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        let cacheable = cache::is_cacheable(method);
        let key = cache::cache_key(method, &params);
        if cacheable
            && options.cache == CacheMode::Use
            && let Some(hit) = self.shared.cache.get(&key)
        {
            return Ok(hit);
        }
        if method == "tools/call" && self.shared.transport.mirrors_headers() {
            self.learn_tool_headers(&params).await?;
        }
        let mut result = self.run_rounds(method, &params, options).await?;
        if method == "tools/list" && self.shared.transport.mirrors_headers() {
            self.shared.tool_headers.filter_listing(&mut result);
        }
        if cacheable && options.cache != CacheMode::Bypass {
            self.shared.cache.put(key, &result);
        }
        Ok(result)
    }

    /// Makes sure the definition of the tool about to be called is known,
    /// so its `x-mcp-header` arguments can be mirrored.
    async fn learn_tool_headers(&self, params: &Map<String, Value>) -> Result<(), Error> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Ok(());
        };
        if !self.shared.tool_headers.knows(name) {
            self.list_all_tools_with(CacheMode::Use).await?;
        }
        Ok(())
    }

    /// The MRTR loop: retries with `inputResponses` and the byte-identical
    /// `requestState` under a new id until the result is complete.
    async fn run_rounds(
        &self,
        method: &str,
        original: &Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        let mut params = original.clone();
        let mut rounds = 0;
        let mut refreshed_headers = false;
        loop {
            let result = match self.send_once(method, params.clone(), options).await {
                Err(Error::Mcp(e))
                    if e.code == codes::HEADER_MISMATCH
                        && method == "tools/call"
                        && !refreshed_headers =>
                {
                    // The tool's annotations may have changed: re-list and retry once.
                    refreshed_headers = true;
                    self.shared.cache.invalidate_method("tools/list");
                    self.list_all_tools_with(CacheMode::Refresh).await?;
                    continue;
                }
                other => other?,
            };
            let input_required =
                result.get("resultType").and_then(Value::as_str) == Some("input_required");
            if !input_required {
                return Ok(result);
            }
            rounds += 1;
            if rounds > self.shared.options.max_input_rounds {
                return Err(Error::Protocol(format!(
                    "{method}: the server still required input after {} rounds",
                    self.shared.options.max_input_rounds
                )));
            }
            let responses = self
                .answer_input_requests(result.get("inputRequests"))
                .await?;
            params = original.clone();
            if !responses.is_empty() {
                params.insert("inputResponses".into(), Value::Object(responses));
            }
            if let Some(state) = result.get("requestState") {
                params.insert("requestState".into(), state.clone());
            }
        }
    }

    async fn answer_input_requests(
        &self,
        requests: Option<&Value>,
    ) -> Result<Map<String, Value>, Error> {
        let mut responses = Map::new();
        let Some(Value::Object(requests)) = requests else {
            return Ok(responses);
        };
        for (key, request) in requests {
            let method = request.get("method").and_then(Value::as_str).unwrap_or("");
            let handler = self.shared.options.handler_for(method).ok_or_else(|| {
                Error::Protocol(format!(
                    "the server asked for {method:?} (key {key:?}) but no handler for it is registered"
                ))
            })?;
            let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
            responses.insert(key.clone(), handler(params).await?);
        }
        Ok(responses)
    }

    /// One request/response exchange, switching protocol version once if
    /// the server answers `-32022` with versions this client speaks.
    async fn send_once(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        match self.era().await? {
            Era::Modern => self.send_modern(method, params, options).await,
            Era::Legacy { version } => self.send_legacy(method, params, options, &version).await,
        }
    }

    /// The server's era, detected on first use (spec: versioning.mdx,
    /// "Backward Compatibility"): a modern probe; a result or a recognised
    /// modern error means modern; anything else, or no answer in time on
    /// stdio, means legacy, and the client falls back to `initialize`.
    async fn era(&self) -> Result<Era, Error> {
        if let Some(era) = read_unpoisoned(&self.shared.era).clone() {
            return Ok(era);
        }
        let _detecting = self.shared.detecting.lock().await;
        if let Some(era) = read_unpoisoned(&self.shared.era).clone() {
            return Ok(era);
        }
        let era = match self.shared.options.era {
            EraPreference::Modern => Era::Modern,
            EraPreference::Legacy => self.initialize_legacy().await?,
            EraPreference::Auto => {
                let probe = CallOptions::default()
                    .with_timeout(self.shared.options.probe_timeout)
                    .with_cache(CacheMode::Bypass);
                let outcome = tokio::time::timeout(
                    self.shared.options.probe_timeout,
                    self.send_modern("server/discover", Map::new(), &probe),
                )
                .await
                .unwrap_or(Err(Error::Timeout));
                match outcome {
                    Ok(result) => {
                        self.shared
                            .cache
                            .put(cache::cache_key("server/discover", &Map::new()), &result);
                        Era::Modern
                    }
                    Err(Error::Mcp(e)) if is_modern_error(e.code) => Era::Modern,
                    Err(Error::Mcp(_)) | Err(Error::HttpStatus(..)) | Err(Error::Timeout) => {
                        self.initialize_legacy().await?
                    }
                    Err(other) => return Err(other),
                }
            }
        };
        *write_unpoisoned(&self.shared.era) = Some(era.clone());
        Ok(era)
    }

    /// The legacy handshake: `initialize`, then `notifications/initialized`.
    async fn initialize_legacy(&self) -> Result<Era, Error> {
        let mut params = Map::new();
        params.insert(
            "protocolVersion".into(),
            Value::from(crate::legacy::LEGACY_PROTOCOL_VERSIONS[0]),
        );
        params.insert(
            "capabilities".into(),
            Value::Object(self.shared.options.capabilities()),
        );
        params.insert(
            "clientInfo".into(),
            serde_json::to_value(&self.shared.options.info).unwrap_or(Value::Null),
        );
        let result = self
            .shared
            .transport
            .send(Outgoing {
                id: self.next_id(),
                method: "initialize".into(),
                params,
                headers: Vec::new(),
                notifications: None,
                version: String::new(),
            })
            .await?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        if !crate::legacy::LEGACY_PROTOCOL_VERSIONS.contains(&version.as_str()) {
            return Err(Error::Protocol(format!(
                "the server negotiated protocol version {version:?}, which this client does not speak"
            )));
        }
        self.shared
            .transport
            .notify("notifications/initialized", Map::new(), &version)
            .await?;
        // Wait until the stream is open: a server may route its requests
        // there as soon as the next call starts.
        let _ = tokio::time::timeout(
            self.shared.options.probe_timeout,
            self.shared.transport.legacy_session_started(&version),
        )
        .await;
        Ok(Era::Legacy { version })
    }

    /// A request to a legacy server: no per-request protocol fields, the
    /// negotiated version in the header.
    async fn send_legacy(
        &self,
        method: &str,
        mut params: Map<String, Value>,
        options: &CallOptions,
        version: &str,
    ) -> Result<Value, Error> {
        let mut meta = options.meta.clone();
        if let Some(Value::Object(m)) = params.remove("_meta") {
            meta.extend(m);
        }
        for modern_only in [
            meta::PROTOCOL_VERSION,
            meta::CLIENT_INFO,
            meta::CLIENT_CAPABILITIES,
            meta::LOG_LEVEL,
        ] {
            meta.remove(modern_only);
        }
        params.insert("_meta".into(), Value::Object(meta));
        let notifications = self.notification_router(options, &mut params);
        if params
            .get("_meta")
            .and_then(Value::as_object)
            .is_some_and(Map::is_empty)
        {
            params.remove("_meta");
        }
        self.shared
            .transport
            .send(Outgoing {
                id: self.next_id(),
                method: method.to_owned(),
                params,
                headers: Vec::new(),
                notifications,
                version: version.to_owned(),
            })
            .await
    }

    /// One 2026-07-28 exchange, switching protocol version once if the
    /// server answers `-32022` with versions this client speaks.
    async fn send_modern(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        let mut switched = false;
        loop {
            let mut p = params.clone();
            let mut extra_meta = options.meta.clone();
            if let Some(Value::Object(m)) = p.remove("_meta") {
                extra_meta.extend(m);
            }
            p.insert(
                "_meta".into(),
                Value::Object(self.request_meta(&extra_meta)),
            );
            let headers = if method == "tools/call" && self.shared.transport.mirrors_headers() {
                let name = p.get("name").and_then(Value::as_str).unwrap_or("");
                self.shared
                    .tool_headers
                    .headers_for(name, p.get("arguments"))
            } else {
                Vec::new()
            };
            let notifications = self.notification_router(options, &mut p);
            let outcome = self
                .shared
                .transport
                .send(Outgoing {
                    id: self.next_id(),
                    method: method.to_owned(),
                    params: p,
                    headers,
                    notifications,
                    version: self.protocol_version(),
                })
                .await;
            match outcome {
                Err(Error::Mcp(e))
                    if e.code == codes::UNSUPPORTED_PROTOCOL_VERSION && !switched =>
                {
                    let Some(version) = pick_version(&e) else {
                        return Err(Error::Mcp(e));
                    };
                    switched = true;
                    *write_unpoisoned(&self.shared.protocol_version) = version;
                }
                other => return other,
            }
        }
    }

    /// Whether the client speaks the legacy protocol to this server (known
    /// after the first request).
    pub fn is_legacy(&self) -> Option<bool> {
        read_unpoisoned(&self.shared.era)
            .as_ref()
            .map(|e| matches!(e, Era::Legacy { .. }))
    }

    /// A channel delivering this call's notifications to its callbacks; asks
    /// for progress when a progress callback is set.
    fn notification_router(
        &self,
        options: &CallOptions,
        params: &mut Map<String, Value>,
    ) -> Option<mpsc::UnboundedSender<Value>> {
        if options.on_progress.is_none()
            && options.on_notification.is_none()
            && self.shared.options.on_notification.is_none()
        {
            return None;
        }
        if options.on_progress.is_some()
            && let Some(Value::Object(meta)) = params.get_mut("_meta")
            && !meta.contains_key(meta::PROGRESS_TOKEN)
        {
            let token = format!(
                "progress-{}",
                self.shared.next_id.fetch_add(1, Ordering::Relaxed)
            );
            meta.insert(meta::PROGRESS_TOKEN.into(), Value::from(token));
        }
        let (tx, mut rx) = mpsc::unbounded_channel::<Value>();
        let on_progress = options.on_progress.clone();
        let on_notification = options
            .on_notification
            .clone()
            .or_else(|| self.shared.options.on_notification.clone());
        tokio::spawn(async move {
            while let Some(note) = rx.recv().await {
                let method = note.get("method").and_then(Value::as_str).unwrap_or("");
                let params = note.get("params").cloned().unwrap_or(Value::Null);
                if method == "notifications/progress"
                    && let Some(cb) = &on_progress
                {
                    cb(ProgressUpdate {
                        progress: params["progress"].as_f64().unwrap_or(0.0),
                        total: params["total"].as_f64(),
                        message: params["message"].as_str().map(str::to_owned),
                    });
                }
                if let Some(cb) = &on_notification {
                    cb(method, &params);
                }
            }
        });
        Some(tx)
    }

    /// `server/discover`: supported versions, capabilities, identity.
    pub async fn discover(&self) -> Result<DiscoverResult, Error> {
        decode(
            "server/discover",
            self.request("server/discover", Map::new()).await?,
        )
    }

    async fn list_page(
        &self,
        method: &str,
        cursor: Option<&str>,
        cache: CacheMode,
    ) -> Result<Value, Error> {
        let mut params = Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), Value::from(cursor));
        }
        self.send(method, params, &CallOptions::default().with_cache(cache))
            .await
    }

    async fn list_all<T: DeserializeOwned>(
        &self,
        method: &'static str,
        field: &'static str,
        cache: CacheMode,
    ) -> Result<Vec<T>, Error> {
        let mut pages = Pages::new(self, method, field, cache);
        let mut items = Vec::new();
        while let Some(page) = pages.next_page().await {
            items.extend(page?);
        }
        Ok(items)
    }

    /// The tools, a page at a time: `while let Some(page) = pages.next_page().await`.
    pub fn tool_pages(&self) -> Pages<'_, Tool> {
        Pages::new(self, "tools/list", "tools", CacheMode::Use)
    }

    /// The resources, a page at a time.
    pub fn resource_pages(&self) -> Pages<'_, Resource> {
        Pages::new(self, "resources/list", "resources", CacheMode::Use)
    }

    /// The resource templates, a page at a time.
    pub fn resource_template_pages(&self) -> Pages<'_, ResourceTemplate> {
        Pages::new(
            self,
            "resources/templates/list",
            "resourceTemplates",
            CacheMode::Use,
        )
    }

    /// The prompts, a page at a time.
    pub fn prompt_pages(&self) -> Pages<'_, Prompt> {
        Pages::new(self, "prompts/list", "prompts", CacheMode::Use)
    }

    /// One page of `tools/list` (tools with invalid `x-mcp-header`
    /// annotations are left out over HTTP).
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<ListToolsResult, Error> {
        decode(
            "tools/list",
            self.list_page("tools/list", cursor, CacheMode::Use).await?,
        )
    }

    /// Every tool, following `nextCursor` to the last page.
    pub async fn list_all_tools(&self) -> Result<Vec<Tool>, Error> {
        self.list_all_tools_with(CacheMode::Use).await
    }

    /// Boxed: `send` calls it (to learn tool annotations) and it calls
    /// `send`, so the future type would otherwise be infinite.
    fn list_all_tools_with(
        &self,
        cache: CacheMode,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Vec<Tool>, Error>> + Send + '_>>
    {
        Box::pin(self.list_all("tools/list", "tools", cache))
    }

    /// One page of `resources/list`.
    pub async fn list_resources(&self, cursor: Option<&str>) -> Result<ListResourcesResult, Error> {
        decode(
            "resources/list",
            self.list_page("resources/list", cursor, CacheMode::Use)
                .await?,
        )
    }

    /// Every resource.
    pub async fn list_all_resources(&self) -> Result<Vec<Resource>, Error> {
        self.list_all("resources/list", "resources", CacheMode::Use)
            .await
    }

    /// One page of `resources/templates/list`.
    pub async fn list_resource_templates(
        &self,
        cursor: Option<&str>,
    ) -> Result<ListResourceTemplatesResult, Error> {
        decode(
            "resources/templates/list",
            self.list_page("resources/templates/list", cursor, CacheMode::Use)
                .await?,
        )
    }

    /// Every resource template.
    pub async fn list_all_resource_templates(&self) -> Result<Vec<ResourceTemplate>, Error> {
        self.list_all(
            "resources/templates/list",
            "resourceTemplates",
            CacheMode::Use,
        )
        .await
    }

    /// One page of `prompts/list`.
    pub async fn list_prompts(&self, cursor: Option<&str>) -> Result<ListPromptsResult, Error> {
        decode(
            "prompts/list",
            self.list_page("prompts/list", cursor, CacheMode::Use)
                .await?,
        )
    }

    /// Every prompt.
    pub async fn list_all_prompts(&self) -> Result<Vec<Prompt>, Error> {
        self.list_all("prompts/list", "prompts", CacheMode::Use)
            .await
    }

    /// `tools/call`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        self.call_tool_with(name, arguments, &CallOptions::default())
            .await
    }

    /// `tools/call` with per-call options (progress, timeout, cancel).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
    ) -> Result<CallToolResult, Error> {
        let mut params = Map::new();
        params.insert("name".into(), Value::from(name));
        params.insert("arguments".into(), arguments);
        decode(
            "tools/call",
            self.send("tools/call", params, options).await?,
        )
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, Error> {
        let mut params = Map::new();
        params.insert("uri".into(), Value::from(uri));
        decode(
            "resources/read",
            self.request("resources/read", params).await?,
        )
    }

    /// `prompts/get`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<GetPromptResult, Error> {
        let mut params = Map::new();
        params.insert("name".into(), Value::from(name));
        params.insert("arguments".into(), Value::Object(arguments));
        decode("prompts/get", self.request("prompts/get", params).await?)
    }

    /// `completion/complete` for an argument of a prompt or resource
    /// template (`reference` is a `PromptReference` or
    /// `ResourceTemplateReference` object).
    pub async fn complete(
        &self,
        reference: Value,
        argument: &str,
        value: &str,
    ) -> Result<CompleteResult, Error> {
        let mut params = Map::new();
        params.insert("ref".into(), reference);
        params.insert("argument".into(), json!({"name": argument, "value": value}));
        decode(
            "completion/complete",
            self.request("completion/complete", params).await?,
        )
    }

    /// Opens a `subscriptions/listen` stream; waits for the server's
    /// acknowledgement. Dropping the subscription ends it.
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Subscription, Error> {
        listen::open(self.clone(), filter).await
    }

    /// Forgets every cached result.
    pub fn clear_cache(&self) {
        self.shared.cache.clear();
    }

    pub(crate) fn invalidate_for(&self, notification_method: &str, params: &Value) {
        let cache = &self.shared.cache;
        match notification_method {
            "notifications/tools/list_changed" => cache.invalidate_method("tools/list"),
            "notifications/prompts/list_changed" => cache.invalidate_method("prompts/list"),
            "notifications/resources/list_changed" => {
                cache.invalidate_method("resources/list");
                cache.invalidate_method("resources/templates/list");
            }
            "notifications/resources/updated" => {
                if let Some(uri) = params.get("uri").and_then(Value::as_str) {
                    cache.invalidate_resource(uri);
                }
            }
            _ => {}
        }
    }

    /// Ends the connection (for stdio: closes the server's stdin, then
    /// SIGTERM, then SIGKILL if it does not exit).
    pub async fn close(&self) {
        self.shared.transport.close().await
    }
}

/// Walks a paginated list, following `nextCursor` (spec:
/// server/utilities/pagination.mdx). A cursor that repeats ends the walk, so
/// a misbehaving server cannot loop it forever.
pub struct Pages<'a, T> {
    client: &'a Client,
    method: &'static str,
    field: &'static str,
    cache: CacheMode,
    cursor: Option<String>,
    done: bool,
    _items: std::marker::PhantomData<fn() -> T>,
}

impl<'a, T: DeserializeOwned> Pages<'a, T> {
    fn new(
        client: &'a Client,
        method: &'static str,
        field: &'static str,
        cache: CacheMode,
    ) -> Self {
        Pages {
            client,
            method,
            field,
            cache,
            cursor: None,
            done: false,
            _items: std::marker::PhantomData,
        }
    }

    /// The next page's items; `None` after the last page.
    pub async fn next_page(&mut self) -> Option<Result<Vec<T>, Error>> {
        if self.done {
            return None;
        }
        let mut page = match self
            .client
            .list_page(self.method, self.cursor.as_deref(), self.cache)
            .await
        {
            Ok(page) => page,
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        let mut items = Vec::new();
        if let Some(Value::Array(list)) = page.get_mut(self.field) {
            for item in list.drain(..) {
                match decode(self.method, item) {
                    Ok(item) => items.push(item),
                    Err(e) => {
                        self.done = true;
                        return Some(Err(e));
                    }
                }
            }
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if self.cursor.as_deref() != Some(next) => {
                self.cursor = Some(next.to_owned())
            }
            _ => self.done = true,
        }
        Some(Ok(items))
    }
}

/// Errors only a modern server sends (spec: basic/index.mdx, "Error Codes").
fn is_modern_error(code: i32) -> bool {
    matches!(
        code,
        codes::HEADER_MISMATCH
            | codes::MISSING_REQUIRED_CLIENT_CAPABILITY
            | codes::UNSUPPORTED_PROTOCOL_VERSION
    )
}

/// The version to retry with after `-32022`: the newest one both sides
/// speak, from the error's `data.supported`.
fn pick_version(error: &McpError) -> Option<String> {
    let supported = error.data.as_ref()?.get("supported")?.as_array()?;
    MODERN_PROTOCOL_VERSIONS
        .iter()
        .find(|v| supported.iter().any(|s| s.as_str() == Some(**v)))
        .map(|v| (*v).to_owned())
}
