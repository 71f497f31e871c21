//! The MCP server: a registry of primitives and request dispatch.
//!
//! It knows nothing of transports: `Server::serve_stdio` and
//! `Server::serve_http` are defined in [`crate::transport`], which depends on
//! the server and not the other way round.

mod admission;
pub mod auth;
mod bus;
mod context;
mod dispatch;
mod error;
mod handler;
mod input;
pub mod middleware;
mod mirrored_headers;
pub mod output;
mod panic;
mod prepared;
mod primitives;
pub(crate) mod registry;
pub(crate) use relay::Relay;
mod relay;
mod reply;
pub(crate) mod seal;
mod sink;
mod skills;
mod subscriptions;
pub mod tasks;
pub(crate) mod tool_result;
pub mod uri_template;
mod validation;
mod visibility;

/// What [`RequestContext::ask`] asks for; defined with the method table in
/// [`crate::protocol`] and named here too because handlers use it.
pub use crate::protocol::InputKind;
pub use crate::protocol::LoggingLevel;
pub(crate) use admission::Split;
#[cfg(feature = "redis")]
pub use bus::redis::RedisBus;
pub use bus::{BusDelivery, BusInbox, BusReceiver, EVENT_BUS_ENV, EventBus, LocalBus, bus_for_url};
#[allow(deprecated)]
pub use context::LogLevel;
pub use context::{AskStart, RequestContext, RequestMeta};
pub(crate) use context::{LiveRequester, NotificationSink, notification_channel};
pub(crate) use dispatch::Wire;
pub use error::HandlerError;
pub use handler::{
    BoxFuture, CompletionHandler, CompletionOutput, Handler, HandlerResult, PromptHandler,
    PromptOutput, ResourceHandler, ResourceOutput, ResourceRequest, Responder, ResponderReceiver,
    ToolHandler, ToolOutput,
};
pub use input::{AskOutcome, input_kind_for_method};
pub use middleware::{
    Middleware, MiddlewareNotification, MiddlewareOutput, MiddlewareRequest, MiddlewareResult, Next,
};
pub use output::{FromHost, OutputError, WRAPPED_RESULT_KEY};
pub(crate) use prepared::{Prepared, Rejection};
pub use seal::{SEAL_KEYS_ENV, SealKey};
pub(crate) use sink::{lazy_notification_channel, polled_notification_channel};
pub use skills::SkillFile;
pub(crate) use subscriptions::{Offered as OfferedKinds, ServerEvent as ServerEventView};
pub use tasks::{
    MemoryTaskLimits, MemoryTaskStore, StoredTask, TaskOptions, TaskStart, TaskStore,
    TaskStoreError, TaskSupport, ToolTaskOptions,
};
#[cfg(feature = "redis")]
pub use tasks::{RedisTaskOptions, RedisTaskStore, TASK_STORE_ENV};
pub use visibility::{VisibilityRule, Visible, VisibleItem};

use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::protocol::mcp_headers::HeaderParam;
use crate::protocol::{CacheScope, Implementation, Prompt, Resource, ResourceTemplate, Tool};
use crate::rpc::{read_unpoisoned, write_unpoisoned};
use registry::{Entry, ListKind, PromptEntry, Registry, ResourceEntry, TemplateEntry, ToolEntry};
use subscriptions::ServerEvent;

/// Caching hints for one kind of result (`ttlMs` + `cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// How long (ms) the client may consider the result fresh.
    pub ttl_ms: u64,
    /// Who may cache it.
    pub scope: CacheScope,
}

impl Default for CacheHint {
    /// Immediately stale and shareable: lists can change at run time, so a
    /// server opts in to longer freshness explicitly.
    fn default() -> Self {
        CacheHint {
            ttl_ms: 0,
            scope: CacheScope::Public,
        }
    }
}

/// Caching hints per kind of cacheable result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Caching {
    /// `server/discover`.
    pub discover: CacheHint,
    /// `tools/list`.
    pub tools: CacheHint,
    /// `resources/list`.
    pub resources: CacheHint,
    /// `resources/templates/list`.
    pub resource_templates: CacheHint,
    /// `resources/read`.
    pub resource_read: CacheHint,
    /// `prompts/list`.
    pub prompts: CacheHint,
}

/// Server-wide settings.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Natural-language guidance returned by `server/discover`.
    pub instructions: Option<String>,
    /// Items per page of every `*/list` result.
    pub page_size: usize,
    /// Caching hints for every cacheable result.
    pub caching: Caching,
    /// Keys protecting cursors and `requestState`; share them between
    /// replicas (rotation: [`SealKey::ring`]). Default: the keys of
    /// `FERROMCP_SEAL_KEYS` ([`SEAL_KEYS_ENV`]), else a random key.
    pub seal_key: SealKey,
    /// How long a `requestState` stays valid.
    pub request_state_ttl: Duration,
    /// Whether every result carries `_meta["io.modelcontextprotocol/serverInfo"]`.
    pub include_server_info: bool,
    /// Tasks (the tasks extension): where they are kept, their TTL and
    /// polling interval.
    pub tasks: tasks::TaskOptions,
    /// Carries change events (and task messages) to the other replicas.
    /// Default: the bus `FERROMCP_EVENT_BUS` names ([`EVENT_BUS_ENV`],
    /// `redis://...`), else none (one process).
    pub event_bus: Option<Arc<dyn EventBus>>,
    /// This replica's name: legacy (2025-11-25) session ids start with it
    /// and a dot, so a load balancer can route a session back to the
    /// replica holding it (docs/DEPLOYING.md). Letters, digits, `-` and
    /// `_`. Default: `FERROMCP_REPLICA` ([`REPLICA_ENV`]), else none.
    pub replica: Option<String>,
    /// Whether 2025-11-25 clients are served (`initialize` opens a
    /// session). Off, the server is 2026-07-28 only: `initialize` is
    /// refused with `-32022` naming the versions it speaks (spec:
    /// versioning, "a server that supports only modern versions SHOULD
    /// name the protocol versions it supports"). Default: on.
    pub legacy_sessions: bool,
}

impl ServerOptions {
    /// These options on the event bus at `url` (`redis://host:port[/db]`,
    /// see [`bus_for_url`]): what every binding's event bus option does.
    ///
    /// ```
    /// use ferromcp::server::ServerOptions;
    /// let options = ServerOptions::default().with_event_bus_url("redis://127.0.0.1:6379")?;
    /// assert!(options.event_bus.is_some());
    /// assert!(ServerOptions::default().with_event_bus_url("kafka://x").is_err());
    /// # Ok::<(), String>(())
    /// ```
    pub fn with_event_bus_url(mut self, url: &str) -> Result<ServerOptions, String> {
        self.event_bus = Some(bus_for_url(url)?);
        Ok(self)
    }

    /// These options for the replica named `name` (see
    /// [`ServerOptions::replica`]); a name that is not letters, digits, `-`
    /// and `_` (at most 64) is refused.
    ///
    /// ```
    /// use ferromcp::server::ServerOptions;
    /// assert_eq!(ServerOptions::default().with_replica("r1")?.replica.as_deref(), Some("r1"));
    /// assert!(ServerOptions::default().with_replica("r1.x").is_err());
    /// # Ok::<(), String>(())
    /// ```
    pub fn with_replica(mut self, name: &str) -> Result<ServerOptions, String> {
        if !valid_replica(name) {
            return Err(format!(
                "replica name {name:?}: letters, digits, '-' and '_' only (at most 64)"
            ));
        }
        self.replica = Some(name.to_owned());
        Ok(self)
    }
}

/// The environment variable naming this replica (see [`ServerOptions::replica`]).
pub const REPLICA_ENV: &str = "FERROMCP_REPLICA";

/// A replica name is safe in a session id and a routing pattern.
fn valid_replica(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

pub(crate) fn replica_from_env() -> Option<String> {
    let name = std::env::var(REPLICA_ENV).ok().filter(|n| !n.is_empty())?;
    if valid_replica(&name) {
        return Some(name);
    }
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        tracing::error!(
            "{REPLICA_ENV}={name:?} ignored: a replica name is letters, digits, '-' and '_' (at most 64)"
        );
    });
    None
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            instructions: None,
            page_size: 100,
            caching: Caching::default(),
            seal_key: SealKey::from_env_or_random(),
            request_state_ttl: Duration::from_secs(600),
            include_server_info: true,
            tasks: tasks::TaskOptions::default(),
            event_bus: bus::from_env(),
            replica: replica_from_env(),
            legacy_sessions: true,
        }
    }
}

pub(crate) struct ServerShared {
    pub(crate) info: Implementation,
    /// `info` as every result's `_meta` carries it, serialised once.
    pub(crate) identity: reply::ServerIdentity,
    pub(crate) options: ServerOptions,
    pub(crate) registry: RwLock<Registry>,
    /// Where changes are published: this server's listeners, and the
    /// other replicas over the event bus.
    pub(crate) events: bus::Events,
    /// Cancelled to end every open `subscriptions/listen` gracefully.
    pub(crate) closing: CancellationToken,
    /// The tasks running in this process.
    pub(crate) runners: Arc<tasks::Runners>,
    /// Cancelled when the last clone of the server is dropped: what holds
    /// only a [`WeakServer`] (a gateway's follow task) stops then.
    pub(crate) dropped: CancellationToken,
    /// The middleware chain, replaced whole when a link is added (a request
    /// takes the chain of its start).
    pub(crate) middleware: RwLock<Arc<[Arc<dyn Middleware>]>>,
    /// Whether `middleware` has a link (set with the first one).
    pub(crate) has_middleware: std::sync::atomic::AtomicBool,
    /// A proxy's upstream, which plain `tools/call` requests go to as they
    /// are (`relay.rs`).
    pub(crate) relay: std::sync::OnceLock<Arc<dyn relay::Relay>>,
}

impl Drop for ServerShared {
    fn drop(&mut self) {
        self.dropped.cancel();
    }
}

/// A server that is not kept alive by this reference (see
/// [`Server::downgrade`]).
#[derive(Clone)]
pub(crate) struct WeakServer {
    shared: std::sync::Weak<ServerShared>,
    dropped: CancellationToken,
}

impl WeakServer {
    /// The server, while a clone of it lives.
    pub(crate) fn upgrade(&self) -> Option<Server> {
        self.shared.upgrade().map(|shared| Server { shared })
    }

    /// Resolves once the server is dropped.
    pub(crate) async fn dropped(&self) {
        self.dropped.cancelled().await
    }
}

/// An MCP server. Cheap to clone: clones share the registry, so a tool added
/// through one clone is served by all (and announced to subscribers).
#[derive(Clone)]
pub struct Server {
    pub(crate) shared: Arc<ServerShared>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.shared.info)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server with default options.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Server {
        Server::with_options(Implementation::new(name, version), ServerOptions::default())
    }

    /// A server with explicit identity and options.
    pub fn with_options(info: Implementation, options: ServerOptions) -> Server {
        // OTEL_* variables turn tracing on with no code (once per process).
        crate::telemetry::init_from_env();
        if options.seal_key.is_random() {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::info!(
                    "no seal keys set ({SEAL_KEYS_ENV} or the server's seal key option): cursors and requestState are valid in this process only"
                );
            });
        }
        let runners: Arc<tasks::Runners> = Arc::default();
        let events = bus::Events::new(options.event_bus.clone(), Arc::downgrade(&runners));
        let mut options = options;
        if options
            .replica
            .as_deref()
            .is_some_and(|r| !valid_replica(r))
        {
            tracing::error!(
                replica = ?options.replica,
                "replica name ignored: letters, digits, '-' and '_' (at most 64)"
            );
            options.replica = None;
        }
        Server {
            shared: Arc::new(ServerShared {
                identity: reply::ServerIdentity::new(
                    serde_json::to_value(&info).unwrap_or_default(),
                ),
                info,
                options,
                registry: RwLock::new(Registry::default()),
                events,
                closing: CancellationToken::new(),
                dropped: CancellationToken::new(),
                runners,
                middleware: RwLock::new(Arc::from(Vec::new())),
                has_middleware: std::sync::atomic::AtomicBool::new(false),
                relay: std::sync::OnceLock::new(),
            }),
        }
    }

    /// Adds a link at the end of the middleware chain around every request
    /// this server answers (see [`middleware`]): the first added sees a
    /// request first and its result last.
    ///
    /// ```
    /// use ferromcp::server::middleware::builtin::{LogRequests, MaskErrors};
    /// let server = ferromcp::server::Server::new("demo", "1.0.0");
    /// server.add_middleware(LogRequests::default());
    /// server.add_middleware(MaskErrors::default());
    /// ```
    pub fn add_middleware(&self, link: impl Middleware) {
        let mut chain = self
            .shared
            .middleware
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut links: Vec<Arc<dyn Middleware>> = chain.iter().cloned().collect();
        links.push(Arc::new(link));
        *chain = Arc::from(links);
        self.shared
            .has_middleware
            .store(true, std::sync::atomic::Ordering::Release);
    }

    /// `note`, a notification received from a client, after the middleware
    /// chain's links ([`Middleware::notification`]): `None` when one
    /// stopped it. Without links it passes as it is, with no copy.
    pub(crate) fn pass_notification(
        &self,
        note: crate::protocol::jsonrpc::Notification,
    ) -> Option<crate::protocol::jsonrpc::Notification> {
        let Some(chain) = self.middleware_chain() else {
            return Some(note);
        };
        let mut passing = middleware::MiddlewareNotification {
            method: note.method,
            // An object even without params, as links have always seen.
            params: serde_json::Value::Object(note.params.unwrap_or_default()),
        };
        for link in chain.iter() {
            // A link that panics stops the notification, as one that
            // returns false; the connection goes on.
            let passed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                link.notification(&mut passing)
            }));
            match passed {
                Ok(true) => {}
                Ok(false) => return None,
                Err(_) => {
                    tracing::warn!(
                        method = %passing.method,
                        "a middleware link panicked on a notification; it goes no further"
                    );
                    return None;
                }
            }
        }
        let params = match passing.params {
            serde_json::Value::Object(params) => Some(params),
            serde_json::Value::Null => None,
            _ => {
                tracing::warn!(
                    method = %passing.method,
                    "a middleware link gave a notification params that are not an object; dropped"
                );
                None
            }
        };
        Some(crate::protocol::jsonrpc::Notification {
            method: passing.method,
            params,
        })
    }

    /// The middleware chain now (`None`: no links, requests go straight
    /// through).
    pub(crate) fn middleware_chain(&self) -> Option<Arc<[Arc<dyn Middleware>]>> {
        // Most servers have no links: no lock, no reference count per request.
        if !self
            .shared
            .has_middleware
            .load(std::sync::atomic::Ordering::Acquire)
        {
            return None;
        }
        Some(
            self.shared
                .middleware
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone(),
        )
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.shared.info
    }

    /// The server's options.
    pub fn options(&self) -> &ServerOptions {
        &self.shared.options
    }

    /// Registers (or replaces) a tool. Fails when the tool's name or schemas
    /// are unacceptable (invalid JSON Schema, a network `$ref`, a bad name,
    /// an invalid `x-mcp-header` annotation).
    pub fn add_tool(&self, tool: Tool, handler: impl ToolHandler) -> Result<(), Error> {
        self.add_tool_with(tool, ToolTaskOptions::default(), handler)
    }

    /// Registers (or replaces) a tool whose calls may become tasks (the
    /// tasks extension, SEP-2663): with [`TaskSupport::Optional`] a call
    /// from a client that declared the extension is answered with a task
    /// handle while the handler goes on; [`TaskSupport::Required`] refuses
    /// other clients with `-32021`. The server then declares the extension
    /// in `server/discover`.
    ///
    /// ```
    /// use ferromcp::server::{HandlerError, RequestContext, TaskSupport, ToolOutput, ToolTaskOptions};
    /// use ferromcp::{protocol::Tool, server::Server};
    /// let server = Server::new("demo", "1.0");
    /// server.add_tool_with(
    ///     Tool::new("slow", serde_json::json!({"type": "object"})),
    ///     ToolTaskOptions { support: TaskSupport::Optional, ..Default::default() },
    ///     |_ctx: RequestContext, _args: serde_json::Value| async move {
    ///         tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    ///         Ok::<_, HandlerError>(ToolOutput::text("done"))
    ///     },
    /// ).unwrap();
    /// ```
    pub fn add_tool_with(
        &self,
        tool: Tool,
        task: ToolTaskOptions,
        handler: impl ToolHandler,
    ) -> Result<(), Error> {
        let mut entry = ToolEntry::new(tool, Arc::new(handler))?;
        entry.task = task;
        self.register(Entry::Tool(Arc::new(entry)));
        Ok(())
    }

    /// Removes a tool; returns whether it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.unregister(ListKind::Tools, name)
    }

    /// Names of the registered tools, in listing order.
    pub fn tool_names(&self) -> Vec<String> {
        self.registry_read().tools.keys().cloned().collect()
    }

    /// Registers (or replaces) a resource with a fixed URI.
    pub fn add_resource(
        &self,
        resource: Resource,
        handler: impl ResourceHandler,
    ) -> Result<(), Error> {
        self.register(Entry::Resource(Arc::new(ResourceEntry::new(
            resource,
            Arc::new(handler),
        )?)));
        Ok(())
    }

    /// Like [`Server::add_resource`], with the caching hint its
    /// `resources/read` results carry instead of the server-wide
    /// `caching.resource_read` (a resource that changes rarely, or one
    /// private to the user).
    ///
    /// ```
    /// # use ferromcp::protocol::{CacheScope, Resource};
    /// # use ferromcp::server::{CacheHint, ResourceOutput, ResourceRequest, Server};
    /// let server = Server::new("demo", "1.0.0");
    /// let hint = CacheHint { ttl_ms: 60_000, scope: CacheScope::Public };
    /// server.add_resource_cached(Resource::new("file:///logo.txt", "logo"), hint, |_ctx, _req: ResourceRequest| async {
    ///     Ok(ResourceOutput::Text("(logo)".into()))
    /// })?;
    /// # Ok::<(), ferromcp::Error>(())
    /// ```
    pub fn add_resource_cached(
        &self,
        resource: Resource,
        cache: CacheHint,
        handler: impl ResourceHandler,
    ) -> Result<(), Error> {
        let mut entry = ResourceEntry::new(resource, Arc::new(handler))?;
        entry.cache = Some(cache);
        self.register(Entry::Resource(Arc::new(entry)));
        Ok(())
    }

    /// Like [`Server::add_resource_template`], with the caching hint of the
    /// `resources/read` results it serves (see [`Server::add_resource_cached`]).
    pub fn add_resource_template_cached(
        &self,
        template: ResourceTemplate,
        cache: CacheHint,
        handler: impl ResourceHandler,
    ) -> Result<(), Error> {
        let mut entry = TemplateEntry::new(template, Arc::new(handler))?;
        entry.cache = Some(cache);
        self.register(Entry::Template(Arc::new(entry)));
        Ok(())
    }

    /// Removes a resource; returns whether it existed.
    pub fn remove_resource(&self, uri: &str) -> bool {
        self.unregister(ListKind::Resources, uri)
    }

    /// Registers (or replaces) a resource template: reads of URIs matching
    /// its RFC 6570 `uriTemplate` go to `handler` with the extracted
    /// variables.
    pub fn add_resource_template(
        &self,
        template: ResourceTemplate,
        handler: impl ResourceHandler,
    ) -> Result<(), Error> {
        self.register(Entry::Template(Arc::new(TemplateEntry::new(
            template,
            Arc::new(handler),
        )?)));
        Ok(())
    }

    /// Removes a resource template (by its `uriTemplate`); returns whether
    /// it existed.
    pub fn remove_resource_template(&self, uri_template: &str) -> bool {
        self.unregister(ListKind::Templates, uri_template)
    }

    /// Registers (or replaces) a prompt.
    pub fn add_prompt(&self, prompt: Prompt, handler: impl PromptHandler) -> Result<(), Error> {
        self.register(Entry::Prompt(Arc::new(PromptEntry::new(
            prompt,
            Arc::new(handler),
        )?)));
        Ok(())
    }

    /// Removes a prompt; returns whether it existed.
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.unregister(ListKind::Prompts, name)
    }

    /// The one way into the registry: insert, then announce the change once
    /// the lock is released (a subscriber may read the registry at once).
    pub(crate) fn register(&self, entry: Entry) {
        let event = self.registry_write().insert(entry);
        self.publish(event);
    }

    /// The one way out of the registry; returns whether `key` existed.
    fn unregister(&self, kind: ListKind, key: &str) -> bool {
        let event = self.registry_write().remove(kind, key);
        match event {
            Some(event) => {
                self.publish(event);
                true
            }
            None => false,
        }
    }

    /// Sets the provider answering `completion/complete` (and declares the
    /// `completions` capability).
    pub fn set_completion_handler(&self, handler: impl CompletionHandler) {
        self.registry_write().completion = Some(Arc::new(handler));
    }

    /// A reference that does not keep the server alive: for what follows
    /// it from a task of its own (a gateway's mount), which would otherwise
    /// keep a dropped server serving nobody.
    pub(crate) fn downgrade(&self) -> WeakServer {
        WeakServer {
            shared: Arc::downgrade(&self.shared),
            dropped: self.shared.dropped.clone(),
        }
    }

    /// Tells subscribers of `uri` that it changed.
    pub fn notify_resource_updated(&self, uri: &str) {
        self.publish(ServerEvent::ResourceUpdated(uri.to_owned()));
    }

    /// Ends every open `subscriptions/listen` stream with its graceful
    /// completion result (done on shutdown). Later listen requests end at
    /// once.
    pub fn close_subscriptions(&self) {
        self.shared.closing.cancel();
    }

    pub(crate) fn subscribe_events(&self) -> tokio::sync::broadcast::Receiver<ServerEvent> {
        self.shared.events.subscribe()
    }

    fn publish(&self, event: ServerEvent) {
        self.shared.events.publish(event);
    }

    /// The `x-mcp-header` parameters of a tool, for header validation.
    pub(crate) fn header_params(&self, tool: &str) -> Vec<HeaderParam> {
        let registry = self.registry_read();
        if registry.header_param_tools == 0 {
            return Vec::new();
        }
        registry
            .tools
            .get(tool)
            .map(|t| t.header_params.clone())
            .unwrap_or_default()
    }

    pub(crate) fn registry_read(&self) -> std::sync::RwLockReadGuard<'_, Registry> {
        // A poisoned lock means a panic while mutating the registry; its
        // maps are still structurally valid, so keep serving.
        read_unpoisoned(&self.shared.registry)
    }

    pub(crate) fn registry_write(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        write_unpoisoned(&self.shared.registry)
    }
}
