//! The native `Server` class (adapts `ferromcp::server::Server` and its
//! transports). The facade's `Server` wraps it; see `index.d.ts` for the
//! public API.

use std::cell::RefCell;
use std::net::SocketAddr;

use ferromcp::protocol::{Implementation, Prompt, Resource, ResourceTemplate, Tool};
use ferromcp::server::{Server, ServerOptions};
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
/// server.addTool({ name: "ping", inputSchema: { type: "object" } }, () => "pong");
/// await server.serveStdio();
/// ```
#[napi(js_name = "Server")]
pub struct JsServer {
    pub(crate) server: Server,
    /// Cancelled by `close()`; replaced so the server can be served again.
    shutdown: RefCell<CancellationToken>,
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
        Ok(JsServer {
            server: Server::with_options(info, server_options),
            shutdown: RefCell::new(CancellationToken::new()),
        })
    }

    /// Registers (or replaces) a tool. `definition` is an MCP `Tool` object
    /// (`name`, `inputSchema`, optionally `title`, `description`,
    /// `outputSchema`, `annotations`, `icons`, `_meta`). Throws an `McpError`
    /// when the definition is not acceptable.
    #[napi(
        ts_args_type = "definition: { name: string; inputSchema: Record<string, unknown>; [key: string]: unknown }, handler: (args: any, ctx: RequestContext) => unknown"
    )]
    pub fn add_tool(
        &self,
        env: &Env,
        definition: Unknown<'_>,
        handler: Function<'_, HostCallArgs, Unknown<'static>>,
    ) -> napi::Result<()> {
        let tool: Tool = primitives::definition(env, "tool", definition)?;
        let callback = JsCallback::new(&handler)?;
        self.server
            .add_tool(tool, JsToolHandler::new(callback))
            .map_err(|e| error::to_js(env, &e))
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
        use ferromcp::server::auth::ScopeTarget;
        let target = match kind.as_str() {
            "tool" => ScopeTarget::Tool,
            "resource" => ScopeTarget::Resource,
            "resourceTemplate" => ScopeTarget::ResourceTemplate,
            "prompt" => ScopeTarget::Prompt,
            other => {
                return Err(napi::Error::new(
                    Status::InvalidArg,
                    format!("unknown scope target {other:?}"),
                ));
            }
        };
        self.server.require_scopes(target, &key, scopes);
        Ok(())
    }

    /// Removes a tool; returns whether it existed.
    #[napi]
    pub fn remove_tool(&self, name: String) -> bool {
        self.server.remove_tool(&name)
    }

    /// Names of the registered tools, in listing order.
    #[napi(getter)]
    pub fn tool_names(&self) -> Vec<String> {
        self.server.tool_names()
    }

    /// Registers (or replaces) a resource with a fixed URI. `definition` is
    /// an MCP `Resource` (`uri`, `name`, optionally `title`, `description`,
    /// `mimeType`, `size`, `icons`, `annotations`, `_meta`); `handler` gets
    /// `{ uri, variables }` and returns the contents (a string, bytes, a
    /// contents item, a list of them or `{ contents }`). `cache` is the
    /// caching hint of its reads (default: the server-wide one).
    #[napi(
        ts_args_type = "definition: { uri: string; name: string; [key: string]: unknown }, handler: (request: { uri: string; variables: Record<string, unknown> }, ctx: RequestContext) => unknown, cache?: CacheHint | undefined | null"
    )]
    pub fn add_resource(
        &self,
        env: &Env,
        definition: Unknown<'_>,
        handler: Function<'_, HostCallArgs, Unknown<'static>>,
        cache: Option<JsCacheHint>,
    ) -> napi::Result<()> {
        let resource: Resource = primitives::definition(env, "resource", definition)?;
        let handler = JsResourceHandler(JsCallback::new(&handler)?);
        let added = match cache {
            Some(cache) => self
                .server
                .add_resource_cached(resource, cache.to_core(env)?, handler),
            None => self.server.add_resource(resource, handler),
        };
        added.map_err(|e| error::to_js(env, &e))
    }

    /// Registers (or replaces) a resource template. `definition` is an MCP
    /// `ResourceTemplate` (`uriTemplate` in RFC 6570 form, `name`, ...);
    /// reads of matching URIs call `handler` with the URI and the extracted
    /// `variables`. `cache` is the caching hint of those reads.
    #[napi(
        ts_args_type = "definition: { uriTemplate: string; name: string; [key: string]: unknown }, handler: (request: { uri: string; variables: Record<string, unknown> }, ctx: RequestContext) => unknown, cache?: CacheHint | undefined | null"
    )]
    pub fn add_resource_template(
        &self,
        env: &Env,
        definition: Unknown<'_>,
        handler: Function<'_, HostCallArgs, Unknown<'static>>,
        cache: Option<JsCacheHint>,
    ) -> napi::Result<()> {
        let template: ResourceTemplate =
            primitives::definition(env, "resource template", definition)?;
        let handler = JsResourceHandler(JsCallback::new(&handler)?);
        let added = match cache {
            Some(cache) => {
                self.server
                    .add_resource_template_cached(template, cache.to_core(env)?, handler)
            }
            None => self.server.add_resource_template(template, handler),
        };
        added.map_err(|e| error::to_js(env, &e))
    }

    /// Removes a resource with a fixed URI; returns whether it existed.
    #[napi]
    pub fn remove_resource(&self, uri: String) -> bool {
        self.server.remove_resource(&uri)
    }

    /// Removes a resource template (by its `uriTemplate` as registered);
    /// returns whether it existed.
    #[napi]
    pub fn remove_resource_template(&self, uri_template: String) -> bool {
        self.server.remove_resource_template(&uri_template)
    }

    /// Registers (or replaces) a prompt. `definition` is an MCP `Prompt`
    /// (`name`, optionally `title`, `description`, `arguments`, `icons`,
    /// `_meta`); `handler` gets the arguments and returns a string, a
    /// message, a list of messages or a `GetPromptResult`.
    #[napi(
        ts_args_type = "definition: { name: string; [key: string]: unknown }, handler: (args: Record<string, string>, ctx: RequestContext) => unknown"
    )]
    pub fn add_prompt(
        &self,
        env: &Env,
        definition: Unknown<'_>,
        handler: Function<'_, HostCallArgs, Unknown<'static>>,
    ) -> napi::Result<()> {
        let prompt: Prompt = primitives::definition(env, "prompt", definition)?;
        let handler = JsPromptHandler(JsCallback::new(&handler)?);
        self.server
            .add_prompt(prompt, handler)
            .map_err(|e| error::to_js(env, &e))
    }

    /// Removes a prompt; returns whether it existed.
    #[napi]
    pub fn remove_prompt(&self, name: String) -> bool {
        self.server.remove_prompt(&name)
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
        });
        // Read before the promise: a bad limit is the caller's mistake,
        // thrown at the call like a wrong argument type.
        let limits = match &options.limits {
            Some(limits) => HttpLimits::from_json(limits)
                .map_err(|e| napi::Error::new(Status::InvalidArg, e.to_string()))?,
            None => HttpLimits::default(),
        };
        runtime::spawn_promise(env, async move {
            let mut http = HttpOptions {
                shutdown,
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
            limits.apply(&mut http);
            let path = http.path.clone();
            let bound = HttpServer::bind(server, http).await?;
            let local = bound.local_addr()?;
            if let Some(on_listening) = on_listening {
                let address = JsHttpAddress {
                    host: local.ip().to_string(),
                    port: local.port(),
                    url: format!("http://{local}{path}"),
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
