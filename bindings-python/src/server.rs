//! `ferromcp._native.Server`: a [`ferromcp::server::Server`] whose tools are
//! Python callables. The pure-Python `ferromcp.Server` wraps it.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use pyo3::PyTraverseError;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokio_util::sync::CancellationToken;

use ferromcp::protocol::{Implementation, Prompt, Resource, ResourceTemplate, Tool};
use ferromcp::server::auth::ScopeTarget;
use ferromcp::server::{CacheHint, Server, ServerOptions, ToolTaskOptions};
use ferromcp::transport::http::{HttpLimits, HttpOptions, HttpServer};

use crate::auth::PyProtection;
use crate::client::PyClient;
use crate::primitives::{self, PyHandler};
use crate::refs::{HandlerKind, PyRefs};
use crate::serving::{self, PyServing};
use crate::tools::PyToolHandler;
use crate::{error, gateway, middleware, values, visibility};

/// The native MCP server. Use `ferromcp.Server`, which derives schemas from
/// type hints; this class takes them ready-made.
///
/// ```python
/// from ferromcp import _native
///
/// server = _native.Server("demo", "1.0.0")
/// server.add_tool(
///     "echo", "Returns the text unchanged.",
///     {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
///     None, lambda args, ctx: args["text"], False,
/// )
/// server.start_stdio().wait()
/// ```
#[pyclass(module = "ferromcp._native", name = "Server", frozen, weakref)]
pub(crate) struct PyServer {
    pub(crate) server: Server,
    pub(crate) refs: Arc<PyRefs>,
}

#[pymethods]
impl PyServer {
    /// `json_default` converts handler results that are not plain JSON
    /// types (like `json.dumps(default=...)`). `caching` maps a cacheable
    /// result kind (`"discover"`, `"tools"`, `"resources"`,
    /// `"resource_templates"`, `"resource_read"`, `"prompts"`) to its
    /// `(ttl_ms, cache_scope)` hint; unnamed kinds keep core's (0, public).
    /// `seal_keys` are base64 secrets, the first sealing (see core's
    /// `SealKey::from_base64_list`). `tasks` are the task settings core
    /// reads (`ttl_ms`,
    /// `keep_finished_ms`, `poll_interval_ms`, `max_tasks`,
    /// `max_tasks_per_client`, `store`). `event_bus` (a `redis://` URL)
    /// and `replica` (this replica's name) are core's
    /// `ServerOptions::with_event_bus_url` and `with_replica`.
    #[new]
    #[pyo3(signature = (name, version, *, instructions=None, json_default=None, caching=None, tasks=None, seal_keys=None, event_bus=None, replica=None))]
    #[allow(clippy::too_many_arguments)] // the keyword arguments of one Python constructor
    fn new(
        name: String,
        version: String,
        instructions: Option<String>,
        json_default: Option<Py<PyAny>>,
        caching: Option<std::collections::HashMap<String, (u64, String)>>,
        tasks: Option<&Bound<'_, pyo3::types::PyDict>>,
        seal_keys: Option<Vec<String>>,
        event_bus: Option<String>,
        replica: Option<String>,
    ) -> PyResult<Self> {
        let mut options = ServerOptions {
            instructions,
            ..ServerOptions::default()
        };
        if let Some(url) = event_bus {
            options = options
                .with_event_bus_url(&url)
                .map_err(|e| PyValueError::new_err(format!("invalid event_bus: {e}")))?;
        }
        if let Some(name) = replica {
            options = options.with_replica(&name).map_err(PyValueError::new_err)?;
        }
        if let Some(keys) = seal_keys {
            options.seal_key =
                ferromcp::server::SealKey::from_base64_list(keys.iter().map(String::as_str))
                    .map_err(PyValueError::new_err)?;
        }
        if let Some(tasks) = tasks {
            let settings = crate::values::from_python(tasks.as_any(), None)?;
            options.tasks = ferromcp::host::task_settings::task_options(&settings)
                .map_err(|e| PyValueError::new_err(format!("invalid tasks: {e}")))?;
        }
        for (kind, (ttl_ms, scope)) in caching.unwrap_or_default() {
            let hint = primitives::cache_hint_of(ttl_ms, &scope)?;
            let slot = match kind.as_str() {
                "discover" => &mut options.caching.discover,
                "tools" => &mut options.caching.tools,
                "resources" => &mut options.caching.resources,
                "resource_templates" => &mut options.caching.resource_templates,
                "resource_read" => &mut options.caching.resource_read,
                "prompts" => &mut options.caching.prompts,
                other => {
                    return Err(PyValueError::new_err(format!(
                        "unknown cacheable result {other:?}: use \"discover\", \"tools\", \"resources\", \"resource_templates\", \"resource_read\" or \"prompts\""
                    )));
                }
            };
            *slot = hint;
        }
        Ok(PyServer {
            server: Server::with_options(Implementation::new(name, version), options),
            refs: Arc::new(PyRefs::new(json_default)),
        })
    }

    /// The server's name.
    #[getter]
    fn name(&self) -> &str {
        &self.server.info().name
    }

    /// The server's version.
    #[getter]
    fn version(&self) -> &str {
        &self.server.info().version
    }

    /// Registers (or replaces) a tool. `handler(arguments, ctx)` returns the
    /// result (a coroutine when `is_async`). Raises
    /// `ferromcp.InvalidDefinitionError` for an unacceptable name or schema.
    #[pyo3(signature = (name, description, input_schema, output_schema, handler, is_async))]
    fn add_tool(
        &self,
        name: String,
        description: Option<String>,
        input_schema: &Bound<'_, PyDict>,
        output_schema: Option<&Bound<'_, PyDict>>,
        handler: Bound<'_, PyAny>,
        is_async: bool,
    ) -> PyResult<()> {
        let input_schema = values::from_python_object(input_schema, None, "input_schema")?;
        let mut tool = Tool::new(&name, input_schema.into());
        if let Some(description) = description {
            tool = tool.with_description(description);
        }
        if let Some(schema) = output_schema {
            let schema = values::from_python_object(schema, None, "output_schema")?;
            tool = tool.with_output_schema(schema.into());
        }
        self.install(
            HandlerKind::Tool,
            &name,
            handler,
            is_async,
            |server, native| {
                Definition::Tool(tool).add(server, None, ToolTaskOptions::default(), native)
            },
        )
    }

    /// Removes a tool; returns whether it existed.
    fn remove_tool(&self, name: &str) -> bool {
        let existed = self.server.remove_tool(name);
        self.refs.remove_handler(HandlerKind::Tool, name);
        existed
    }

    /// Registers (or replaces) a primitive from its MCP definition. `kind`
    /// names it as for `require_scopes`: `"tool"` (a `Tool`: `name`,
    /// `inputSchema`, and any of `title`, `description`, `outputSchema`,
    /// `annotations`, `icons`, `_meta`), `"resource"` (a `Resource`: `uri`,
    /// `name`, ...), `"resource_template"` (a `ResourceTemplate`:
    /// `uriTemplate`, `name`, ...; reads of the URIs it matches go to it)
    /// or `"prompt"` (a `Prompt`: `name`, `arguments`, ...).
    ///
    /// `handler(input, ctx)` returns the result (a coroutine when
    /// `is_async`): a tool gets its arguments; a resource gets
    /// `{"uri", "variables"}` and returns the contents (core's rule: a
    /// string, bytes as a blob item, content items, or
    /// `{"contents": [...]}`); a prompt gets its arguments and returns a
    /// string, a message, a list of messages or a `GetPromptResult`.
    /// `ttl_ms` / `cache_scope` (`"public"`, `"private"`) are the caching
    /// hint of a resource's reads (the missing half from the server's).
    /// Raises `ferromcp.InvalidDefinitionError` for a definition core
    /// refuses.
    #[pyo3(signature = (kind, definition, handler, is_async, *, ttl_ms=None, cache_scope=None, task=None, task_start=None))]
    #[allow(clippy::too_many_arguments)]
    fn register(
        &self,
        kind: &str,
        definition: &Bound<'_, PyDict>,
        handler: Bound<'_, PyAny>,
        is_async: bool,
        ttl_ms: Option<u64>,
        cache_scope: Option<&str>,
        task: Option<&str>,
        task_start: Option<&str>,
    ) -> PyResult<()> {
        let target = scope_target(kind)?;
        let cache = primitives::cache_hint(&self.server, ttl_ms, cache_scope)?;
        if cache.is_some() && matches!(target, ScopeTarget::Tool | ScopeTarget::Prompt) {
            return Err(PyValueError::new_err(format!(
                "a {kind} has no caching hint: ttl_ms and cache_scope are a resource's"
            )));
        }
        if (task.is_some() || task_start.is_some()) && !matches!(target, ScopeTarget::Tool) {
            return Err(PyValueError::new_err(format!(
                "a {kind} cannot run as a task: task and task_start are a tool's"
            )));
        }
        let tasks = ToolTaskOptions::from_names(task, task_start).map_err(PyValueError::new_err)?;
        let definition = Definition::read(target, definition)?;
        let (handler_kind, key) = definition.key();
        self.install(handler_kind, &key, handler, is_async, |server, native| {
            definition.add(server, cache, tasks, native)
        })
    }

    /// Removes a resource (by URI) or a resource template (by its
    /// `uriTemplate`); returns whether one existed.
    fn remove_resource(&self, uri: &str) -> bool {
        let existed = self.server.remove_resource(uri) | self.server.remove_resource_template(uri);
        self.refs.remove_handler(HandlerKind::Resource, uri);
        existed
    }

    /// Publishes every skill (a directory holding a `SKILL.md`) under
    /// `path` (the skills extension); returns the `SKILL.md` URIs. Raises
    /// `ferromcp.InvalidDefinitionError` naming what is wrong.
    fn add_skills_dir(&self, py: Python<'_>, path: std::path::PathBuf) -> PyResult<Vec<String>> {
        let server = self.server.clone();
        py.detach(|| server.add_skills_dir(&path))
            .map_err(|e| error::to_py_err(py, &e))
    }

    /// Removes a prompt; returns whether it existed.
    fn remove_prompt(&self, name: &str) -> bool {
        let existed = self.server.remove_prompt(name);
        self.refs.remove_handler(HandlerKind::Prompt, name);
        existed
    }

    /// Sets the one provider answering `completion/complete`:
    /// `handler(params, ctx)` gets the request params (`ref`, `argument`,
    /// `context`) and returns a list of strings or
    /// `{"values", "total"?, "hasMore"?}`.
    #[pyo3(signature = (handler, is_async))]
    fn set_completion(&self, handler: Bound<'_, PyAny>, is_async: bool) -> PyResult<()> {
        primitives::callable(&handler)?;
        self.refs
            .set_handler(HandlerKind::Completion, "", handler.unbind());
        self.server.set_completion_handler(self.native_handler(
            HandlerKind::Completion,
            "",
            is_async,
        ));
        Ok(())
    }

    /// Adds a link at the end of the middleware chain: a
    /// `BuiltinMiddleware`, or `link(params, call)` (a `MiddlewareCall`;
    /// a coroutine function when `is_async`) returning the result dict.
    #[pyo3(signature = (link, is_async=false))]
    fn add_middleware(&self, link: Bound<'_, PyAny>, is_async: bool) -> PyResult<()> {
        middleware::add(&self.server, &self.refs, link, is_async)
    }

    /// Adds `link(method, params)` at the end of the middleware chain, for
    /// the notifications the server receives: called where each arrives,
    /// holding the GIL, before the server acts on it; it returns `None` to
    /// stop it or the params dict it goes on with (`notification_link.rs`).
    fn add_notification_middleware(&self, link: Bound<'_, PyAny>) -> PyResult<()> {
        crate::notification_link::add_to_server(&self.server, &self.refs, link)
    }

    /// Sets the visibility rule: `rule(caller, items) -> verdicts`, asked
    /// once per request on a Python worker thread: `caller` is core's
    /// description of who asks (a dict), `items` the `(kind, key)` pairs to
    /// judge (`kind` is `"tool"`, `"prompt"`, `"resource"` or
    /// `"resource_template"`), the verdicts one per item (an exception
    /// instead of one hides the item and goes to `sys.unraisablehook`).
    /// With `items` (`(kind, key)` pairs) it is asked only about those.
    #[pyo3(signature = (rule, items=None))]
    fn set_visibility(
        &self,
        rule: Bound<'_, PyAny>,
        items: Option<Vec<(String, String)>>,
    ) -> PyResult<()> {
        visibility::set(&self.server, &self.refs, rule, items)
    }

    /// Takes the visibility rule away: every caller sees everything.
    fn clear_visibility(&self) {
        visibility::clear(&self.server, &self.refs);
    }

    /// Tells `subscriptions/listen` streams (and 2025-11-25 sessions)
    /// subscribed to `uri` that it changed.
    fn notify_resource_updated(&self, uri: &str) {
        self.server.notify_resource_updated(uri);
    }

    /// Names of the registered tools, in listing order.
    fn tool_names(&self) -> Vec<String> {
        self.server.tool_names()
    }

    /// Requires `scopes` of the bearer token of requests that use the
    /// `kind` (`"tool"`, `"resource"`, `"resource_template"`, `"prompt"`)
    /// named `key`, when served protected; `[]` removes the requirement.
    fn require_scopes(&self, kind: &str, key: &str, scopes: Vec<String>) -> PyResult<()> {
        self.server.require_scopes(scope_target(kind)?, key, scopes);
        Ok(())
    }

    /// Serves `upstream` (a native `Server` of this process, reached over
    /// an in-memory pipe, or a connected native `Client`) as part of this
    /// server, renamed with `prefix`: core's `Server::mount` /
    /// `mount_server`, run with the GIL released. Raises `ValueError` for a
    /// bad prefix, `TypeError` for another upstream, the upstream's
    /// `ferromcp.McpError` when it cannot be reached or listed.
    fn mount(
        &self,
        py: Python<'_>,
        prefix: &str,
        upstream: &Bound<'_, PyAny>,
    ) -> PyResult<gateway::PyMount> {
        gateway::mount(py, self, prefix, upstream)
    }

    /// A new server serving what the native `Client` `upstream` serves, as
    /// the upstream names it: core's `Server::proxy`, run with the GIL
    /// released. `json_default` is the constructor's.
    #[staticmethod]
    #[pyo3(signature = (upstream, *, json_default=None))]
    fn proxy(
        py: Python<'_>,
        upstream: &Bound<'_, PyClient>,
        json_default: Option<Py<PyAny>>,
    ) -> PyResult<PyServer> {
        gateway::proxy(py, upstream, json_default)
    }

    /// Starts serving stdin/stdout in the background. `event_loop` runs the
    /// async tools.
    #[pyo3(signature = (event_loop=None))]
    fn start_stdio(slf: &Bound<'_, Self>, event_loop: Option<Py<PyAny>>) -> PyServing {
        let on_finish = Self::hold_while_serving(slf, event_loop);
        let server = slf.get().server.clone();
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        // Stopping is core's graceful shutdown: no more input is read,
        // listen streams end with their completion result, and requests in
        // flight get core's grace period.
        let serve = async move { server.serve_stdio_until(stopped).await };
        PyServing {
            inner: serving::spawn(serve, stop, None, Duration::ZERO, on_finish),
        }
    }

    /// Binds `host:port` (0 picks a free port, see `Serving.port`) and
    /// serves Streamable HTTP in the background. `event_loop` runs the async
    /// handlers. `path` is the endpoint (default `/mcp`);
    /// `allowed_hosts` / `allowed_origins` replace core's defaults for the
    /// `Host` and `Origin` checks (loopback names and origins when bound to
    /// a loopback address). `limits` is a dict of core's `HttpLimits`
    /// (`max_connections`, `max_connections_per_address`,
    /// `header_read_timeout`, `body_read_timeout`, `idle_timeout` in
    /// seconds, `max_body_bytes`; camelCase accepted too); a missing key
    /// keeps its default, an unknown key or a bad value raises ValueError
    /// naming it. `health` serves `/healthz` and `/readyz`; `drain_delay`
    /// (seconds) is how long a stopping server serves on, unready. `tls`
    /// is a dict of core's TLS settings (`host::server_tls`).
    #[pyo3(signature = (host="127.0.0.1", port=8000, event_loop=None, *, path=None, allowed_hosts=None, allowed_origins=None, auth=None, limits=None, health=false, drain_delay=None, tls=None))]
    #[allow(clippy::too_many_arguments)] // the keyword arguments of one Python method
    fn start_http(
        slf: &Bound<'_, Self>,
        host: &str,
        port: u16,
        event_loop: Option<Py<PyAny>>,
        path: Option<String>,
        allowed_hosts: Option<Vec<String>>,
        allowed_origins: Option<Vec<String>>,
        auth: Option<PyRef<'_, PyProtection>>,
        limits: Option<Bound<'_, PyAny>>,
        health: bool,
        drain_delay: Option<f64>,
        tls: Option<Bound<'_, PyAny>>,
    ) -> PyResult<PyServing> {
        let py = slf.py();
        let tls = match tls {
            Some(tls) => ferromcp::host::server_tls::server_tls(&values::from_python(&tls, None)?)
                .map_err(|e| PyValueError::new_err(format!("invalid tls: {e}")))?,
            None => None,
        };
        let drain_delay = match drain_delay {
            None => Duration::ZERO,
            Some(secs) => Duration::try_from_secs_f64(secs).map_err(|_| {
                PyValueError::new_err(format!(
                    "drain_delay must be a non-negative number of seconds, got {secs}"
                ))
            })?,
        };
        // Read before anything binds or registers: a bad limit is the
        // caller's mistake and must leave nothing behind.
        let limits = match limits {
            Some(limits) => HttpLimits::from_json(&values::from_python(&limits, None)?)
                .map_err(|e| PyValueError::new_err(e.to_string()))?,
            None => HttpLimits::default(),
        };
        let (auth, verifier) = match auth {
            Some(p) => {
                let (protection, registered) = p.build(py, &slf.get().refs)?;
                (Some(protection), registered)
            }
            None => (None, None),
        };
        let bind = resolve(py, host, port)?;
        let stop = CancellationToken::new();
        let defaults = HttpOptions::default();
        let mut options = HttpOptions {
            bind,
            shutdown: stop.clone(),
            path: path.unwrap_or(defaults.path.clone()),
            allowed_hosts,
            allowed_origins,
            auth,
            health,
            drain_delay,
            tls,
            ..defaults
        };
        limits.apply(&mut options);
        let server = slf.get().server.clone();
        let drain_delay = options.drain_delay;
        let bound = py
            .detach(|| ferromcp::runtime::get().block_on(HttpServer::bind(server, options)))
            .map_err(|e| error::to_py_err(py, &e))?;
        let local_addr = bound.local_addr().map_err(|e| error::to_py_err(py, &e))?;
        let release = Self::hold_while_serving(slf, event_loop);
        let refs = slf.get().refs.clone();
        // The serving's verifier goes with it (a server started many times
        // does not collect them).
        let on_finish = move |py: Python<'_>| {
            if let Some(name) = verifier {
                refs.remove_handler(HandlerKind::Verifier, &name);
            }
            release(py);
        };
        Ok(PyServing {
            inner: serving::spawn(bound.run(), stop, Some(local_addr), drain_delay, on_finish),
        })
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.refs.traverse(&visit)
    }

    fn __clear__(&self) {
        self.refs.clear();
    }

    fn __repr__(&self) -> String {
        let info = self.server.info();
        format!("<ferromcp._native.Server {:?} {}>", info.name, info.version)
    }
}

impl PyServer {
    /// The one way a handler is registered: `add` puts the primitive into
    /// core with the native handler that finds `handler` under `kind` and
    /// `key`; `handler` is stored there once core accepted it.
    fn install(
        &self,
        kind: HandlerKind,
        key: &str,
        handler: Bound<'_, PyAny>,
        is_async: bool,
        add: impl FnOnce(&Server, PyHandler) -> Result<(), ferromcp::Error>,
    ) -> PyResult<()> {
        let py = handler.py();
        primitives::callable(&handler)?;
        add(&self.server, self.native_handler(kind, key, is_async))
            .map_err(|e| error::to_py_err(py, &e))?;
        // No call can run before this method returns: a call needs the GIL
        // we hold.
        self.refs.set_handler(kind, key, handler.unbind());
        Ok(())
    }

    fn native_handler(&self, kind: HandlerKind, name: &str, is_async: bool) -> PyHandler {
        PyHandler {
            kind,
            name: Arc::from(name),
            is_async,
            refs: self.refs.clone(),
        }
    }

    /// Keeps the server object alive while a transport serves it and makes
    /// `event_loop` the one async tools run on; returns the hook that
    /// releases both when the transport ends.
    ///
    /// The running transport is a root the garbage collector cannot see, so
    /// it holds a strong reference: the collector then never clears the
    /// handlers of a server that is still serving.
    fn hold_while_serving(
        slf: &Bound<'_, Self>,
        event_loop: Option<Py<PyAny>>,
    ) -> impl FnOnce(Python<'_>) + Send + 'static {
        let py = slf.py();
        let held: Py<PyServer> = slf.clone().unbind();
        if let Some(l) = &event_loop {
            slf.get().refs.set_event_loop(l.clone_ref(py));
        }
        move |_py| {
            if let Some(l) = event_loop {
                held.get().refs.release_event_loop(&l);
            }
            drop(held);
        }
    }
}

impl Drop for PyServer {
    /// Transports that outlive the server (HTTP connections finishing their
    /// last requests) find no handlers rather than objects the collector
    /// may already have cleared.
    fn drop(&mut self) {
        self.refs.clear();
    }
}

/// What `require_scopes` and `register` call a kind of primitive.
fn scope_target(kind: &str) -> PyResult<ScopeTarget> {
    match kind {
        "tool" => Ok(ScopeTarget::Tool),
        "resource" => Ok(ScopeTarget::Resource),
        "resource_template" => Ok(ScopeTarget::ResourceTemplate),
        "prompt" => Ok(ScopeTarget::Prompt),
        other => Err(PyValueError::new_err(format!(
            "unknown scope target {other:?}"
        ))),
    }
}

/// A primitive's definition, read as core's type for its kind.
enum Definition {
    Tool(Tool),
    Resource(Resource),
    Template(ResourceTemplate),
    Prompt(Prompt),
}

impl Definition {
    /// Reads the definition dict of a `kind`; a dict that does not fit
    /// raises `TypeError` naming the field.
    fn read(kind: ScopeTarget, definition: &Bound<'_, PyDict>) -> PyResult<Self> {
        use primitives::definition as read;
        Ok(match kind {
            ScopeTarget::Tool => Self::Tool(read(definition, "tool definition")?),
            ScopeTarget::Resource => Self::Resource(read(definition, "resource definition")?),
            ScopeTarget::ResourceTemplate => {
                Self::Template(read(definition, "resource template definition")?)
            }
            ScopeTarget::Prompt => Self::Prompt(read(definition, "prompt definition")?),
        })
    }

    /// The kind and the key (name, URI or URI template) its Python handler
    /// is stored under.
    fn key(&self) -> (HandlerKind, String) {
        match self {
            Self::Tool(tool) => (HandlerKind::Tool, tool.name.clone()),
            Self::Resource(resource) => (HandlerKind::Resource, resource.uri.clone()),
            Self::Template(template) => (HandlerKind::Resource, template.uri_template.clone()),
            Self::Prompt(prompt) => (HandlerKind::Prompt, prompt.name.clone()),
        }
    }

    /// Registers it in core; a resource's or a template's reads carry
    /// `cache` when given (the server's `resource_read` hint otherwise), a
    /// tool's calls may become tasks as `tasks` says.
    fn add(
        self,
        server: &Server,
        cache: Option<CacheHint>,
        tasks: ToolTaskOptions,
        handler: PyHandler,
    ) -> Result<(), ferromcp::Error> {
        match (self, cache) {
            (Self::Tool(tool), _) => {
                server.add_tool_with(tool, tasks, PyToolHandler::from(handler))
            }
            (Self::Prompt(prompt), _) => server.add_prompt(prompt, handler),
            (Self::Resource(resource), None) => server.add_resource(resource, handler),
            (Self::Resource(resource), Some(hint)) => {
                server.add_resource_cached(resource, hint, handler)
            }
            (Self::Template(template), None) => server.add_resource_template(template, handler),
            (Self::Template(template), Some(hint)) => {
                server.add_resource_template_cached(template, hint, handler)
            }
        }
    }
}

/// Resolves `host` (a name or an address literal) with the GIL released:
/// a DNS lookup can take a while.
fn resolve(py: Python<'_>, host: &str, port: u16) -> PyResult<SocketAddr> {
    let found = py.detach(|| (host, port).to_socket_addrs().map(|mut addrs| addrs.next()));
    match found {
        Ok(Some(addr)) => Ok(addr),
        Ok(None) => Err(PyOSError::new_err(format!(
            "{host:?} resolves to no address"
        ))),
        Err(e) => Err(PyOSError::new_err(format!("cannot resolve {host:?}: {e}"))),
    }
}
