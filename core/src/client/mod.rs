//! The MCP client: stateless 2026-07-28 requests over stdio (spawning and
//! supervising the server) or Streamable HTTP.
//!
//! The transports themselves live in [`crate::transport`] (`stdio/client.rs`,
//! `http/client.rs`), which also hold `Client::connect_stdio`,
//! `connect_stream` and `connect_http`: they implement `ClientTransport`,
//! the interface declared here, so this module imports no transport.
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

pub(crate) mod answers;
mod api;
pub mod auth;
mod cache;
mod calls;
mod command;
pub(crate) mod deadline;
mod era;
mod headers;
mod listen;
mod middleware;
pub(crate) mod notes;
mod options;
mod pages;
mod relay;
mod rounds;
mod skills;
mod tasks;
#[cfg(test)]
mod testing;
mod timer;

use serde_json::{Map, Value};
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, RwLock};

use crate::protocol::jsonrpc::RequestId;
use crate::rpc::read_unpoisoned;
use crate::{BoxFuture, Error, McpError};
use era::Era;

pub use crate::net::{ClientCertificate, TlsOptions, TlsRoots};
pub use cache::CacheMode;
pub use calls::{CLIENT_CALLS, CallResult, ClientCall, complete_params};
pub use command::{StderrMode, StdioCommand};
pub use listen::{Subscription, SubscriptionNotification};
pub use middleware::{CallNext, CallRequest, ClientMiddleware, ClientNotification};
pub use options::{
    CallInput, CallOptions, ClientLimits, ClientOptions, EraPreference, InputHandler,
    NotificationCallback, ProgressCallback, ProgressUpdate, TaskStateCallback,
};
pub use pages::{ListKind, PageDemand, Pages};
pub use relay::CallbackRelay;
pub use skills::{
    GetSkillResult, ListSkillsResult, LoadedSkill, Skill, SkillResource, SkillResources,
};
pub use tasks::ToolTask;

/// What a server sends apart from any call, shared by the transport that
/// receives it and the client: notifications (for the application's
/// callback and legacy listen streams) and a 2025-11-25 server's requests
/// (answered by the one call in flight that answers for itself, else the
/// client's handlers). Each `connect_*` makes one before the transport.
pub(crate) struct OutOfCall {
    pub(crate) unsolicited: notes::Unsolicited,
    pub(crate) calls: Arc<answers::CallInputs>,
    /// The client's middleware chain, which received notifications pass.
    pub(crate) chain: Arc<middleware::ClientChain>,
}

impl OutOfCall {
    pub(crate) fn new() -> OutOfCall {
        OutOfCall {
            unsolicited: notes::Unsolicited::new(),
            calls: Arc::default(),
            chain: Arc::default(),
        }
    }

    /// The notification callback a transport calls.
    pub(crate) fn notifications(&self, options: &ClientOptions) -> NotificationCallback {
        self.unsolicited
            .callback(options.on_notification.clone(), self.chain.clone())
    }

    /// The handler a transport answers a server's requests with.
    pub(crate) fn requests(&self, options: &ClientOptions) -> ServerRequestHandler {
        options.server_request_handler(self.calls.clone())
    }
}

/// One request as a transport sends it.
pub(crate) struct OutgoingRequest {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    pub(crate) params: Map<String, Value>,
    /// Extra HTTP headers (`Mcp-Param-*`); ignored by stdio.
    pub(crate) headers: Vec<(String, String)>,
    /// Where notifications about this request (progress, logs,
    /// subscription events) go.
    pub(crate) notifications: Option<notes::NoteSender>,
    /// The `MCP-Protocol-Version` header value (HTTP).
    pub(crate) version: String,
    /// Answers a 2025-11-25 server's requests on this request's own
    /// stream (HTTP), in place of the client's handlers.
    pub(crate) input: Option<CallInput>,
}

/// A request whose params are JSON written by someone else (a relayed
/// call: `Client::send_raw_as_is`).
pub(crate) struct RawRequest {
    pub(crate) id: RequestId,
    pub(crate) method: &'static str,
    /// A JSON object, `_meta` included.
    pub(crate) params: Box<serde_json::value::RawValue>,
    /// The `MCP-Protocol-Version` header value (HTTP).
    pub(crate) version: String,
}

/// Answers a request a legacy server sends to the client (`ping`,
/// `elicitation/create`, `sampling/createMessage`, `roots/list`).
pub(crate) type ServerRequestHandler =
    Arc<dyn Fn(String, Value) -> BoxFuture<Result<Value, McpError>> + Send + Sync>;

/// What carries requests to a server and brings back their results.
pub(crate) trait ClientTransport: Send + Sync {
    /// Sends a request; resolves to its `result`, or `Error::Mcp` for a
    /// JSON-RPC error. Dropping the future abandons the request.
    fn send(&self, request: OutgoingRequest) -> BoxFuture<Result<Value, Error>>;
    /// Sends a request whose params are written already; resolves to its
    /// `result` as the server wrote it. By default through [`Self::send`]
    /// (the params read, the result written again).
    fn send_raw(
        &self,
        request: RawRequest,
    ) -> BoxFuture<Result<Box<serde_json::value::RawValue>, Error>> {
        let params = match serde_json::from_str::<Map<String, Value>>(request.params.get()) {
            Ok(params) => params,
            Err(e) => return Box::pin(async move { Err(Error::Json(e)) }),
        };
        let sent = self.send(OutgoingRequest {
            id: request.id,
            method: request.method.to_owned(),
            params,
            headers: Vec::new(),
            notifications: None,
            version: request.version,
            input: None,
        });
        Box::pin(async move {
            let result = sent.await?;
            serde_json::value::to_raw_value(&result).map_err(Error::Json)
        })
    }
    /// Sends a notification.
    fn notify(
        &self,
        method: &str,
        params: Map<String, Value>,
        version: &str,
    ) -> BoxFuture<Result<(), Error>>;
    /// Whether `x-mcp-header` mirroring applies (HTTP only).
    fn mirrors_headers(&self) -> bool;
    /// Resolves once the server shows it is serving, so the era probe's
    /// timeout does not count its start-up: a spawned stdio server has read
    /// from its stdin or written to its stdout. At once for the others (an
    /// HTTP server is serving when it accepts the connection).
    fn serving(&self) -> BoxFuture<()> {
        Box::pin(async {})
    }
    /// Measures the user's time in a login, which timeouts skip (HTTP with
    /// OAuth only).
    fn interaction_clock(&self) -> Option<&deadline::InteractionClock> {
        None
    }
    /// After a legacy handshake: start receiving what the server sends
    /// outside any request (HTTP: the session's GET stream).
    fn legacy_session_started(&self, _version: &str) -> BoxFuture<()> {
        Box::pin(async {})
    }
    /// Counts the server's ends: how many times the server process this
    /// transport started ended (a 2025-11-25 session does not outlive its
    /// process, so a change means a new `initialize`). 0 where there is no
    /// process to end.
    fn generation(&self) -> u64 {
        0
    }
    /// Stops the transport (for stdio: ends the server process).
    fn close(&self) -> BoxFuture<()>;
    /// Ends the server process this transport started, if any, so that the
    /// next request starts a new one; false when it started none.
    fn restart(&self) -> BoxFuture<bool> {
        Box::pin(async { false })
    }
}

struct ClientShared {
    transport: Arc<dyn ClientTransport>,
    options: ClientOptions,
    era: RwLock<Option<Era>>,
    /// The transport's generation when the era was detected: a legacy
    /// session belongs to that process only.
    era_generation: std::sync::atomic::AtomicU64,
    /// Serialises era detection so concurrent first calls probe once.
    detecting: tokio::sync::Mutex<()>,
    /// What a legacy server answered to `initialize` (its only
    /// self-description: there is no `server/discover` before 2026-07-28).
    legacy_initialize: RwLock<Option<Map<String, Value>>>,
    protocol_version: RwLock<String>,
    next_id: AtomicI64,
    cache: cache::ResultCache,
    tool_headers: headers::ToolHeaders,
    /// `clientInfo` and `clientCapabilities` never change: built once, not
    /// once per request.
    info_value: Value,
    capabilities_value: Value,
    /// What the server sends apart from any call.
    out_of_call: OutOfCall,
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

impl Client {
    /// A client over `transport`: what every `connect_*` ends with (they
    /// are in the transport modules, see the module documentation).
    pub(crate) fn from_transport(
        transport: Arc<dyn ClientTransport>,
        options: ClientOptions,
        out_of_call: OutOfCall,
    ) -> Client {
        // OTEL_* variables turn tracing on with no code (once per process).
        crate::telemetry::init_from_env();
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
                era_generation: std::sync::atomic::AtomicU64::new(0),
                legacy_initialize: RwLock::new(None),
                options,
                next_id: AtomicI64::new(1),
                cache: cache::ResultCache::default(),
                tool_headers: headers::ToolHeaders::default(),
                info_value,
                capabilities_value,
                out_of_call,
            }),
        }
    }

    /// The options this client was built with.
    pub fn options(&self) -> &ClientOptions {
        &self.shared.options
    }

    /// The protocol version requests currently declare: on a 2025-11-25
    /// connection, the version `initialize` negotiated.
    pub fn protocol_version(&self) -> String {
        read_unpoisoned(&self.shared.protocol_version).clone()
    }

    /// Forgets every cached result.
    pub fn clear_cache(&self) {
        self.shared.cache.clear();
    }

    /// Ends the connection (for stdio: closes the server's stdin, then
    /// SIGTERM, then SIGKILL if it does not exit).
    pub async fn close(&self) {
        self.shared.transport.close().await
    }

    /// Restarts the server process this client started (stdio): it is told
    /// to stop (stdin closed, then SIGTERM, then SIGKILL) and a new one
    /// starts for the next request, as after a crash. Calls in flight fail
    /// and listen streams end (their owners open them again: a gateway then
    /// reads the lists again); a 2025-11-25 session is initialized anew.
    /// What a development server's reload does. False for a client that
    /// started no process (HTTP, in memory).
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), ferromcp::Error> {
    /// use ferromcp::client::{Client, StdioCommand};
    /// let client = Client::connect_stdio(StdioCommand::new("python", ["server.py"])).await?;
    /// // server.py changed:
    /// assert!(client.restart_server().await);
    /// client.list_tools(None).await?; // served by the new process
    /// # Ok(()) }
    /// ```
    pub async fn restart_server(&self) -> bool {
        self.shared.transport.restart().await
    }
}
