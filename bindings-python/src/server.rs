//! `ferromcp._native.Server`: a [`ferromcp::server::Server`] whose tools are
//! Python callables. The pure-Python `ferromcp.Server` wraps it.

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;

use pyo3::PyTraverseError;
use pyo3::exceptions::PyOSError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use tokio_util::sync::CancellationToken;

use ferromcp::protocol::{Implementation, Prompt, Resource, ResourceTemplate, Tool};
use ferromcp::server::{Server, ServerOptions};
use ferromcp::transport::http::{HttpLimits, HttpOptions, HttpServer};

use crate::auth::PyProtection;
use crate::primitives::{self, PyHandler};
use crate::refs::{HandlerKind, PyRefs};
use crate::serving::{self, PyServing};
use crate::tools::PyToolHandler;
use crate::{error, values};

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
/// server.serve_stdio()
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
    #[new]
    #[pyo3(signature = (name, version, *, instructions=None, json_default=None, caching=None))]
    fn new(
        name: String,
        version: String,
        instructions: Option<String>,
        json_default: Option<Py<PyAny>>,
        caching: Option<std::collections::HashMap<String, (u64, String)>>,
    ) -> PyResult<Self> {
        let mut options = ServerOptions {
            instructions,
            ..ServerOptions::default()
        };
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
                    return Err(pyo3::exceptions::PyValueError::new_err(format!(
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
        self.install_tool(tool, handler, is_async)
    }

    /// Registers (or replaces) a tool from its whole `Tool` definition
    /// (`name`, `inputSchema`, and any of `title`, `description`,
    /// `outputSchema`, `annotations`, `icons`, `_meta`).
    /// `handler(arguments, ctx)` as for `add_tool`.
    #[pyo3(signature = (definition, handler, is_async))]
    fn register_tool(
        &self,
        definition: &Bound<'_, PyDict>,
        handler: Bound<'_, PyAny>,
        is_async: bool,
    ) -> PyResult<()> {
        let tool: Tool = primitives::definition(definition, "tool definition")?;
        self.install_tool(tool, handler, is_async)
    }

    /// Removes a tool; returns whether it existed.
    fn remove_tool(&self, name: &str) -> bool {
        let existed = self.server.remove_tool(name);
        self.refs.remove_handler(HandlerKind::Tool, name);
        existed
    }

    /// Registers (or replaces) a resource from its `Resource` definition
    /// (`uri`, `name`, ...). `handler({"uri", "variables"}, ctx)` returns
    /// the contents (core's rule: a string, bytes as a blob item, content
    /// items, or `{"contents": [...]}`). `ttl_ms` / `cache_scope`
    /// (`"public"`, `"private"`) are the caching hint of its reads (the
    /// missing half from the server's).
    #[pyo3(signature = (definition, handler, is_async, *, ttl_ms=None, cache_scope=None))]
    fn register_resource(
        &self,
        definition: &Bound<'_, PyDict>,
        handler: Bound<'_, PyAny>,
        is_async: bool,
        ttl_ms: Option<u64>,
        cache_scope: Option<&str>,
    ) -> PyResult<()> {
        let py = handler.py();
        primitives::callable(&handler)?;
        let resource: Resource = primitives::definition(definition, "resource definition")?;
        let cache = primitives::cache_hint(&self.server, ttl_ms, cache_scope)?;
        let uri = resource.uri.clone();
        let native = self.native_handler(HandlerKind::Resource, &uri, is_async);
        match cache {
            Some(cache) => self.server.add_resource_cached(resource, cache, native),
            None => self.server.add_resource(resource, native),
        }
        .map_err(|e| error::to_py_err(py, &e))?;
        self.refs
            .set_handler(HandlerKind::Resource, &uri, handler.unbind());
        Ok(())
    }

    /// Registers (or replaces) a resource template from its
    /// `ResourceTemplate` definition (`uriTemplate`, `name`, ...); reads of
    /// matching URIs call `handler({"uri", "variables"}, ctx)`. The caching
    /// hint as for `register_resource`.
    #[pyo3(signature = (definition, handler, is_async, *, ttl_ms=None, cache_scope=None))]
    fn register_resource_template(
        &self,
        definition: &Bound<'_, PyDict>,
        handler: Bound<'_, PyAny>,
        is_async: bool,
        ttl_ms: Option<u64>,
        cache_scope: Option<&str>,
    ) -> PyResult<()> {
        let py = handler.py();
        primitives::callable(&handler)?;
        let template: ResourceTemplate =
            primitives::definition(definition, "resource template definition")?;
        let cache = primitives::cache_hint(&self.server, ttl_ms, cache_scope)?;
        let key = template.uri_template.clone();
        let native = self.native_handler(HandlerKind::Resource, &key, is_async);
        match cache {
            Some(cache) => self
                .server
                .add_resource_template_cached(template, cache, native),
            None => self.server.add_resource_template(template, native),
        }
        .map_err(|e| error::to_py_err(py, &e))?;
        self.refs
            .set_handler(HandlerKind::Resource, &key, handler.unbind());
        Ok(())
    }

    /// Removes a resource (by URI) or a resource template (by its
    /// `uriTemplate`); returns whether one existed.
    fn remove_resource(&self, uri: &str) -> bool {
        let existed = self.server.remove_resource(uri) | self.server.remove_resource_template(uri);
        self.refs.remove_handler(HandlerKind::Resource, uri);
        existed
    }

    /// Registers (or replaces) a prompt from its `Prompt` definition
    /// (`name`, `arguments`, ...). `handler(arguments, ctx)` returns a
    /// string, a message, a list of messages or a `GetPromptResult`.
    #[pyo3(signature = (definition, handler, is_async))]
    fn register_prompt(
        &self,
        definition: &Bound<'_, PyDict>,
        handler: Bound<'_, PyAny>,
        is_async: bool,
    ) -> PyResult<()> {
        let py = handler.py();
        primitives::callable(&handler)?;
        let prompt: Prompt = primitives::definition(definition, "prompt definition")?;
        let name = prompt.name.clone();
        let native = self.native_handler(HandlerKind::Prompt, &name, is_async);
        self.server
            .add_prompt(prompt, native)
            .map_err(|e| error::to_py_err(py, &e))?;
        self.refs
            .set_handler(HandlerKind::Prompt, &name, handler.unbind());
        Ok(())
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

    /// Tells `subscriptions/listen` streams (and 2025-11-25 sessions)
    /// subscribed to `uri` that it changed.
    fn notify_resource_updated(&self, uri: &str) {
        self.server.notify_resource_updated(uri);
    }

    /// Names of the registered tools, in listing order.
    fn tool_names(&self) -> Vec<String> {
        self.server.tool_names()
    }

    /// Serves stdin/stdout until stdin ends, blocking with the GIL released.
    /// Ctrl-C stops the server and raises KeyboardInterrupt.
    #[pyo3(signature = (event_loop=None))]
    fn serve_stdio(slf: &Bound<'_, Self>, event_loop: Option<Py<PyAny>>) -> PyResult<()> {
        Self::start_stdio(slf, event_loop).inner.block(slf.py())
    }

    /// Serves Streamable HTTP at `http://host:port/mcp` (or `path`),
    /// blocking with the GIL released. Ctrl-C stops the server and raises
    /// KeyboardInterrupt. See `start_http` for the options.
    #[pyo3(signature = (host="127.0.0.1", port=8000, event_loop=None, *, path=None, allowed_hosts=None, allowed_origins=None, auth=None, limits=None))]
    #[allow(clippy::too_many_arguments)] // the keyword arguments of one Python method
    fn serve_http(
        slf: &Bound<'_, Self>,
        host: &str,
        port: u16,
        event_loop: Option<Py<PyAny>>,
        path: Option<String>,
        allowed_hosts: Option<Vec<String>>,
        allowed_origins: Option<Vec<String>>,
        auth: Option<PyRef<'_, PyProtection>>,
        limits: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        Self::start_http(
            slf,
            host,
            port,
            event_loop,
            path,
            allowed_hosts,
            allowed_origins,
            auth,
            limits,
        )?
        .inner
        .block(slf.py())
    }

    /// Requires `scopes` of the bearer token of requests that use the
    /// `kind` (`"tool"`, `"resource"`, `"resource_template"`, `"prompt"`)
    /// named `key`, when served protected; `[]` removes the requirement.
    fn require_scopes(&self, kind: &str, key: &str, scopes: Vec<String>) -> PyResult<()> {
        use ferromcp::server::auth::ScopeTarget;
        let target = match kind {
            "tool" => ScopeTarget::Tool,
            "resource" => ScopeTarget::Resource,
            "resource_template" => ScopeTarget::ResourceTemplate,
            "prompt" => ScopeTarget::Prompt,
            other => {
                return Err(pyo3::exceptions::PyValueError::new_err(format!(
                    "unknown scope target {other:?}"
                )));
            }
        };
        self.server.require_scopes(target, key, scopes);
        Ok(())
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
            inner: serving::spawn(serve, stop, None, on_finish),
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
    /// naming it.
    #[pyo3(signature = (host="127.0.0.1", port=8000, event_loop=None, *, path=None, allowed_hosts=None, allowed_origins=None, auth=None, limits=None))]
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
    ) -> PyResult<PyServing> {
        let py = slf.py();
        // Read before anything binds or registers: a bad limit is the
        // caller's mistake and must leave nothing behind.
        let limits = match limits {
            Some(limits) => HttpLimits::from_json(&values::from_python(&limits, None)?)
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?,
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
            ..defaults
        };
        limits.apply(&mut options);
        let server = slf.get().server.clone();
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
            inner: serving::spawn(bound.run(), stop, Some(local_addr), on_finish),
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
    fn install_tool(&self, tool: Tool, handler: Bound<'_, PyAny>, is_async: bool) -> PyResult<()> {
        let py = handler.py();
        primitives::callable(&handler)?;
        let name = tool.name.clone();
        let native = PyToolHandler {
            name: Arc::from(name.as_str()),
            is_async,
            refs: self.refs.clone(),
        };
        self.server
            .add_tool(tool, native)
            .map_err(|e| error::to_py_err(py, &e))?;
        // Installed after core accepted the tool; no call can run before this
        // method returns because a call needs the GIL we hold.
        self.refs
            .set_handler(HandlerKind::Tool, &name, handler.unbind());
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
