//! The native `Server` class (adapts `ferromcp::server::Server` and its
//! transports). The facade's `Server` wraps it; see `index.d.ts` for the
//! public API.

use std::cell::RefCell;
use std::net::SocketAddr;

use ferromcp::protocol::{Implementation, Prompt, Resource, ResourceTemplate, Tool};
use ferromcp::server::auth::ScopeTarget;
use ferromcp::server::{Server, ServerOptions, ToolTaskOptions};
use ferromcp::transport::http::{HttpLimits, HttpOptions, HttpServer};
use napi::bindgen_prelude::{Function, Object};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status, Unknown};
use napi_derive::napi;
use tokio_util::sync::CancellationToken;

use crate::host_call::{HostCallArgs, JsCallback};
use crate::primitives::{
    self, JsCacheHint, JsCompletionHandler, JsPromptHandler, JsResourceHandler,
};
use crate::tools::JsToolHandler;
use crate::{error, runtime, values};

/// Caching hints per kind of cacheable result.
#[napi(object, js_name = "Caching")]
pub struct JsCaching {
    /// `server/discover`.
    pub discover: Option<JsCacheHint>,
    /// `tools/list`.
    pub tools: Option<JsCacheHint>,
    /// `resources/list`.
    pub resources: Option<JsCacheHint>,
    /// `resources/templates/list`.
    pub resource_templates: Option<JsCacheHint>,
    /// `resources/read` (a resource registered with its own hint keeps it).
    pub resource_read: Option<JsCacheHint>,
    /// `prompts/list`.
    pub prompts: Option<JsCacheHint>,
}

/// Server-wide settings.
#[napi(object, js_name = "ServerOptions")]
pub struct JsServerOptions {
    /// Natural-language guidance for the client, returned by `server/discover`.
    pub instructions: Option<String>,
    /// Items per page of `tools/list` (default 100).
    pub page_size: Option<u32>,
    /// Caching hints of the cacheable results, by kind (default: every
    /// result immediately stale, `"public"`).
    pub caching: Option<JsCaching>,
    /// Task settings (core's `task_options`: `ttlMs`, `keepFinishedMs`,
    /// `pollIntervalMs`, `maxTasks`, `maxTasksPerClient`).
    pub tasks: Option<serde_json::Value>,
    /// Base64 secrets protecting cursors and `requestState`, the first
    /// sealing (core's `SealKey::from_base64_list`).
    pub seal_keys: Option<Vec<String>>,
    /// Where replicas tell each other of changes: a `redis://` URL (core's
    /// `ServerOptions::with_event_bus_url`).
    pub event_bus: Option<String>,
    /// This replica's name: legacy session ids start with it (core's
    /// `ServerOptions::with_replica`).
    pub replica: Option<String>,
}

/// Where and how to serve Streamable HTTP.
#[napi(object, js_name = "HttpOptions")]
pub struct JsHttpOptions {
    /// TCP port; 0 picks a free one. Default 8000.
    pub port: Option<u16>,
    /// Address or host name to listen on. Default `"127.0.0.1"`: local
    /// servers should not listen on every interface.
    pub host: Option<String>,
    /// Path of the MCP endpoint. Default `"/mcp"`.
    pub path: Option<String>,
    /// `Host` header values (without port) accepted; default: the loopback
    /// names when bound to a loopback address, any host otherwise.
    pub allowed_hosts: Option<Vec<String>>,
    /// `Origin` values accepted (exact, e.g. `"https://app.example"`);
    /// default: loopback origins only.
    pub allowed_origins: Option<Vec<String>>,
    /// Core's `HttpLimits` (`maxConnections`, `maxConnectionsPerAddress`,
    /// `headerReadTimeout`, `bodyReadTimeout`, `idleTimeout` in seconds,
    /// `maxBodyBytes`); a missing member keeps its default, an unknown one
    /// or a bad value throws, naming it.
    #[napi(ts_type = "Record<string, number | null>")]
    pub limits: Option<serde_json::Value>,
    /// Serve `GET /healthz` and `GET /readyz` (default false).
    pub health: Option<bool>,
    /// Milliseconds a stopping server goes on serving, unready (default 0).
    pub drain_delay_ms: Option<u32>,
    /// Serve `https://`: core's TLS settings (`certFile`, `keyFile`,
    /// `clientCaFile`, `clientAuthOptional`; `host::server_tls`).
    #[napi(
        ts_type = "{ certFile: string; keyFile: string; clientCaFile?: string; clientAuthOptional?: boolean }"
    )]
    pub tls: Option<serde_json::Value>,
}

/// The address an HTTP server listens on.
#[napi(object, js_name = "HttpAddress")]
pub struct JsHttpAddress {
    /// The bound IP address, e.g. `"127.0.0.1"`.
    pub host: String,
    /// The bound port (the real one when 0 was asked for).
    pub port: u16,
    /// The endpoint URL, e.g. `"http://127.0.0.1:8000/mcp"`.
    pub url: String,
}

/// Told once the HTTP listener is bound. `Weak = true`: it must never be
/// what keeps the process alive (the pending serve promise does that).
type OnListening = ThreadsafeFunction<JsHttpAddress, (), JsHttpAddress, Status, false, true>;

/// An MCP server: a registry of tools served over stdio or Streamable HTTP.
///
/// @example
/// ```js
/// const native = require("./native.js");
/// const server = new native.Server({ name: "demo", version: "1.0.0" });
/// server.add("tool", { name: "ping", inputSchema: { type: "object" } }, () => "pong");
/// await server.serveStdio();
/// ```
#[napi(js_name = "Server")]
pub struct JsServer {
    pub(crate) server: Server,
    /// Cancelled by `close()`; replaced so the server can be served again.
    shutdown: RefCell<CancellationToken>,
}

impl JsServer {
    /// A native server around a core one (`Server.proxy` makes one).
    pub(crate) fn from_core(server: Server) -> Self {
        JsServer {
            server,
            shutdown: RefCell::new(CancellationToken::new()),
        }
    }
}

#[napi]
impl JsServer {
    /// A server named by an `Implementation` object (`name`, `version`, and
    /// optionally `title`, `description`, `websiteUrl`, `icons`).
    #[napi(
        constructor,
        ts_args_type = "info: { name: string; version: string; title?: string; description?: string; websiteUrl?: string; icons?: Array<Record<string, unknown>> }, options?: ServerOptions"
    )]
    pub fn new(
        env: &Env,
        info: Unknown<'_>,
        options: Option<JsServerOptions>,
    ) -> napi::Result<Self> {
        let info: Implementation = serde_json::from_value(values::from_js(info)?).map_err(|e| {
            error::to_js(
                env,
                &ferromcp::Error::InvalidDefinition(format!("invalid server info: {e}")),
            )
        })?;
        let mut server_options = ServerOptions::default();
        if let Some(options) = options {
            let invalid = |e: String| napi::Error::new(napi::Status::InvalidArg, e);
            if let Some(url) = &options.event_bus {
                server_options = server_options
                    .with_event_bus_url(url)
                    .map_err(|e| invalid(format!("invalid eventBus: {e}")))?;
            }
            if let Some(name) = &options.replica {
                server_options = server_options.with_replica(name).map_err(invalid)?;
            }
            if let Some(keys) = &options.seal_keys {
                server_options.seal_key =
                    ferromcp::server::SealKey::from_base64_list(keys.iter().map(String::as_str))
                        .map_err(|e| napi::Error::new(napi::Status::InvalidArg, e))?;
            }
            if let Some(tasks) = &options.tasks {
                server_options.tasks =
                    ferromcp::host::task_settings::task_options(tasks).map_err(|e| {
                        napi::Error::new(napi::Status::InvalidArg, format!("invalid tasks: {e}"))
                    })?;
            }
            server_options.instructions = options.instructions;
            if let Some(page_size) = options.page_size {
                server_options.page_size = page_size.max(1) as usize;
            }
            if let Some(caching) = options.caching {
                let hints = &mut server_options.caching;
                for (hint, slot) in [
                    (caching.discover, &mut hints.discover),
                    (caching.tools, &mut hints.tools),
                    (caching.resources, &mut hints.resources),
                    (caching.resource_templates, &mut hints.resource_templates),
                    (caching.resource_read, &mut hints.resource_read),
                    (caching.prompts, &mut hints.prompts),
                ] {
                    if let Some(hint) = hint {
                        *slot = hint.to_core(env)?;
                    }
                }
            }
        }
        Ok(JsServer::from_core(Server::with_options(
            info,
            server_options,
        )))
    }

    /// Registers (or replaces) a primitive. `kind` names it as for
    /// `requireScopes`, and `definition` is its MCP object: a `Tool`
    /// (`name`, `inputSchema`, optionally `title`, `description`,
    /// `outputSchema`, `annotations`, `icons`, `_meta`), a `Resource` with a
    /// fixed URI (`uri`, `name`, optionally `title`, `description`,
    /// `mimeType`, `size`, `icons`, `annotations`, `_meta`), a
    /// `ResourceTemplate` (`uriTemplate` in RFC 6570 form, `name`, ...) or a
    /// `Prompt` (`name`, optionally `title`, `description`, `arguments`,
    /// `icons`, `_meta`). Throws an `McpError` when the definition is not
    /// acceptable.
    ///
    /// `handler` gets a tool's or a prompt's arguments, or a read's
    /// `{ uri, variables }` (the variables a template extracted from the
    /// URI). A prompt's handler returns a string, a message, a list of
    /// messages or a `GetPromptResult`; a resource's returns the contents
    /// (a string, bytes, a contents item, a list of them or `{ contents }`).
    /// `cache` is the caching hint of a resource's reads (default: the
    /// server-wide one). `task` (`'optional'`, `'required'`) lets a tool's
    /// calls become tasks (the tasks extension); `taskStart` (`'call'`,
    /// `'handler'`) says whether at once or when the handler calls
    /// `ctx.startTask()`.
    #[napi(
        ts_args_type = "kind: 'tool' | 'resource' | 'resourceTemplate' | 'prompt', definition: { name: string; [key: string]: unknown }, handler: (input: any, ctx: RequestContext) => unknown, cache?: CacheHint | undefined | null, task?: 'optional' | 'required' | undefined | null, taskStart?: 'call' | 'handler' | undefined | null"
    )]
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &self,
        env: &Env,
        kind: String,
        definition: Unknown<'_>,
        handler: Function<'_, HostCallArgs, Unknown<'static>>,
        cache: Option<JsCacheHint>,
        task: Option<String>,
        task_start: Option<String>,
    ) -> napi::Result<()> {
        let target = scope_target(&kind)?;
        if (task.is_some() || task_start.is_some()) && !matches!(target, ScopeTarget::Tool) {
            return Err(napi::Error::new(
                Status::InvalidArg,
                format!("a {kind} cannot run as a task: task and taskStart are a tool's"),
            ));
        }
        let tasks = ToolTaskOptions::from_names(task.as_deref(), task_start.as_deref())
            .map_err(|why| napi::Error::new(Status::InvalidArg, why))?;
        let callback = || JsCallback::new(&handler);
        let registration = Registration::read(env, target, definition, callback)?;
        let cache = cache.map(|hint| hint.to_core(env)).transpose()?;
        let server = &self.server;
        let added = match (registration, cache) {
            (Registration::Tool(tool, handler), None) => server.add_tool_with(tool, tasks, handler),
            (Registration::Prompt(prompt, handler), None) => server.add_prompt(prompt, handler),
            (Registration::Resource(resource, handler), None) => {
                server.add_resource(resource, handler)
            }
            (Registration::Resource(resource, handler), Some(hint)) => {
                server.add_resource_cached(resource, hint, handler)
            }
            (Registration::Template(template, handler), None) => {
                server.add_resource_template(template, handler)
            }
            (Registration::Template(template, handler), Some(hint)) => {
                server.add_resource_template_cached(template, hint, handler)
            }
            (Registration::Tool(..) | Registration::Prompt(..), Some(_)) => {
                return Err(napi::Error::new(
                    Status::InvalidArg,
                    format!("a {kind} has no caching hint: only a resource's reads do"),
                ));
            }
        };
        added.map_err(|e| error::to_js(env, &e))
    }

    /// Requires `scopes` of the bearer token of requests that use the
    /// `kind` (`"tool"`, `"resource"`, `"resourceTemplate"`, `"prompt"`)
    /// named `key`, when served with `auth`; `[]` removes the requirement.
    #[napi(
        ts_args_type = "kind: 'tool' | 'resource' | 'resourceTemplate' | 'prompt', key: string, scopes: string[]"
    )]
    pub fn require_scopes(
        &self,
        kind: String,
        key: String,
        scopes: Vec<String>,
    ) -> napi::Result<()> {
        self.server
            .require_scopes(scope_target(&kind)?, &key, scopes);
        Ok(())
    }

    /// Removes the `kind` of primitive (as for `requireScopes`) registered
    /// under `key` (a tool's or a prompt's name, a resource's URI, a
    /// template's `uriTemplate`); returns whether it existed.
    #[napi(ts_args_type = "kind: 'tool' | 'resource' | 'resourceTemplate' | 'prompt', key: string")]
    pub fn remove(&self, kind: String, key: String) -> napi::Result<bool> {
        Ok(match scope_target(&kind)? {
            ScopeTarget::Tool => self.server.remove_tool(&key),
            ScopeTarget::Resource => self.server.remove_resource(&key),
            ScopeTarget::ResourceTemplate => self.server.remove_resource_template(&key),
            ScopeTarget::Prompt => self.server.remove_prompt(&key),
        })
    }

    /// Publishes every skill (a directory holding a `SKILL.md`) under `path`
    /// (the skills extension, SEP-2640): its files become `skill://`
    /// resources and `skills/list` lists it. Returns the `SKILL.md` URIs;
    /// throws an `McpError` (kind `invalidDefinition`) naming what is wrong.
    #[napi]
    pub fn add_skills(&self, env: &Env, path: String) -> napi::Result<Vec<String>> {
        self.server
            .add_skills_dir(&path)
            .map_err(|e| error::to_js(env, &e))
    }

    /// Names of the registered tools, in listing order.
    #[napi(getter)]
    pub fn tool_names(&self) -> Vec<String> {
        self.server.tool_names()
    }

    /// Sets the provider answering `completion/complete` (core checks that
    /// `ref` names a registered prompt or resource first). `handler` gets
    /// the request's params and returns a list of strings or
    /// `{ values, total?, hasMore? }`.
    #[napi(
        ts_args_type = "handler: (params: { ref: Record<string, unknown>; argument: { name: string; value: string }; context?: { arguments?: Record<string, string> } }, ctx: RequestContext) => unknown"
    )]
    pub fn set_completion_handler(
        &self,
        handler: Function<'_, HostCallArgs, Unknown<'static>>,
    ) -> napi::Result<()> {
        self.server
            .set_completion_handler(JsCompletionHandler(JsCallback::new(&handler)?));
        Ok(())
    }

    /// Tells the clients subscribed to `uri` that it changed
    /// (`notifications/resources/updated` on `subscriptions/listen`
    /// streams, and to 2025-11-25 sessions that subscribed).
    #[napi]
    pub fn notify_resource_updated(&self, uri: String) {
        self.server.notify_resource_updated(&uri);
    }

    /// Serves newline-delimited JSON-RPC on this process's stdin/stdout.
    /// Resolves when stdin ends or `close()` is called (a graceful
    /// shutdown: listen streams end with their completion result, requests
    /// in flight get core's grace period); rejects with kind `"closed"`
    /// when the client closes stdout. Nothing but MCP is written to stdout.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn serve_stdio<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        let server = self.server.clone();
        let shutdown = self.shutdown.borrow().clone();
        runtime::spawn_promise(env, async move { server.serve_stdio_until(shutdown).await })
    }

    /// Serves Streamable HTTP. Calls `onListening` once the socket is bound;
    /// resolves when `close()` is called; rejects with an `McpError` when
    /// the address cannot be bound.
    #[napi(
        ts_args_type = "options?: HttpOptions, onListening?: (address: HttpAddress) => void, auth?: Protection",
        ts_return_type = "Promise<void>"
    )]
    pub fn serve_http<'env>(
        &self,
        env: &'env Env,
        options: Option<JsHttpOptions>,
        on_listening: Option<Function<'_, JsHttpAddress, ()>>,
        auth: Option<&crate::auth::JsProtection>,
    ) -> napi::Result<Object<'env>> {
        let auth = auth.map(|a| a.inner.clone());
        let on_listening: Option<OnListening> = on_listening
            .map(|f| f.build_threadsafe_function().weak::<true>().build())
            .transpose()?;
        let server = self.server.clone();
        let shutdown = self.shutdown.borrow().clone();
        let options = options.unwrap_or(JsHttpOptions {
            port: None,
            host: None,
            path: None,
            allowed_hosts: None,
            allowed_origins: None,
            limits: None,
            health: None,
            drain_delay_ms: None,
            tls: None,
        });
        // Read before the promise: a bad limit is the caller's mistake,
        // thrown at the call like a wrong argument type.
        let limits = match &options.limits {
            Some(limits) => HttpLimits::from_json(limits)
                .map_err(|e| napi::Error::new(Status::InvalidArg, e.to_string()))?,
            None => HttpLimits::default(),
        };
        let tls = match &options.tls {
            Some(tls) => ferromcp::host::server_tls::server_tls(tls)
                .map_err(|e| napi::Error::new(Status::InvalidArg, format!("invalid tls: {e}")))?,
            None => None,
        };
        runtime::spawn_promise(env, async move {
            let scheme = if tls.is_some() { "https" } else { "http" };
            let mut http = HttpOptions {
                shutdown,
                tls,
                ..HttpOptions::default()
            };
            let port = options.port.unwrap_or(http.bind.port());
            if let Some(host) = options.host {
                http.bind = resolve(&host, port).await?;
            } else {
                http.bind.set_port(port);
            }
            if let Some(path) = options.path {
                http.path = path;
            }
            http.allowed_hosts = options.allowed_hosts;
            http.allowed_origins = options.allowed_origins;
            http.auth = auth;
            http.health = options.health.unwrap_or(false);
            http.drain_delay =
                std::time::Duration::from_millis(u64::from(options.drain_delay_ms.unwrap_or(0)));
            limits.apply(&mut http);
            let path = http.path.clone();
            let bound = HttpServer::bind(server, http).await?;
            let local = bound.local_addr()?;
            if let Some(on_listening) = on_listening {
                let address = JsHttpAddress {
                    host: local.ip().to_string(),
                    port: local.port(),
                    url: format!("{scheme}://{local}{path}"),
                };
                on_listening.call(address, ThreadsafeFunctionCallMode::NonBlocking);
            }
            bound.run().await
        })
    }

    /// Stops every `serveStdio()` / `serveHttp()` of this server (their
    /// promises resolve). Afterwards nothing of the server keeps the event
    /// loop alive. The server may be served again later.
    #[napi]
    pub fn close(&self) {
        self.shutdown.replace(CancellationToken::new()).cancel();
    }
}

/// What `add`, `remove` and `requireScopes` call a kind of primitive.
fn scope_target(kind: &str) -> napi::Result<ScopeTarget> {
    match kind {
        "tool" => Ok(ScopeTarget::Tool),
        "resource" => Ok(ScopeTarget::Resource),
        "resourceTemplate" => Ok(ScopeTarget::ResourceTemplate),
        "prompt" => Ok(ScopeTarget::Prompt),
        other => Err(napi::Error::new(
            Status::InvalidArg,
            format!("unknown scope target {other:?}"),
        )),
    }
}

/// What `add` registers: a definition object read as core's type for its
/// kind, with the JS handler wrapped as core's handler of that kind.
enum Registration {
    Tool(Tool, JsToolHandler),
    Resource(Resource, JsResourceHandler),
    Template(ResourceTemplate, JsResourceHandler),
    Prompt(Prompt, JsPromptHandler),
}

impl Registration {
    /// Reads `definition` (an invalid one throws an `McpError` of kind
    /// `invalidDefinition` saying what was wrong), then wraps `callback()`:
    /// a refused definition creates no callback.
    fn read(
        env: &Env,
        kind: ScopeTarget,
        definition: Unknown<'_>,
        callback: impl FnOnce() -> napi::Result<JsCallback>,
    ) -> napi::Result<Self> {
        use primitives::definition as read;
        Ok(match kind {
            ScopeTarget::Tool => {
                let tool = read(env, "tool", definition)?;
                Self::Tool(tool, JsToolHandler::new(callback()?))
            }
            ScopeTarget::Resource => Self::Resource(
                read(env, "resource", definition)?,
                JsResourceHandler(callback()?),
            ),
            ScopeTarget::ResourceTemplate => {
                let template = read(env, "resource template", definition)?;
                Self::Template(template, JsResourceHandler(callback()?))
            }
            ScopeTarget::Prompt => Self::Prompt(
                read(env, "prompt", definition)?,
                JsPromptHandler(callback()?),
            ),
        })
    }
}

/// The socket address of `host:port`, looked up off the JS thread.
async fn resolve(host: &str, port: u16) -> Result<SocketAddr, ferromcp::Error> {
    let mut addresses = tokio::net::lookup_host((host, port)).await?;
    addresses.next().ok_or_else(|| {
        ferromcp::Error::Io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("host {host:?} has no address"),
        ))
    })
}
