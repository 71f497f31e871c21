//! `ferromcp._native.Client`: core's [`ferromcp::client::Client`] for
//! Python. The pure-Python `ferromcp.Client` (asyncio) and
//! `ferromcp.SyncClient` wrap it; both drive the same native methods, which
//! take an `event_loop` (return an awaitable of that loop) or `None` (block
//! with the GIL released), see [`client_future`].
//!
//! Everything protocol stays in core: era detection, `_meta`, MRTR rounds,
//! header mirroring, cache, pagination. This file converts arguments and
//! results (typed core results are serialised back to JSON for Python) and
//! plugs Python callables in as the elicitation, sampling and roots
//! handlers through the binding's one host-call adapter.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pyo3::PyTraverseError;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Serialize;
use serde_json::{Map, Value};
use tokio::sync::{mpsc, oneshot};

use ferromcp::Error;
use ferromcp::client::{
    CallOptions, CallResult, CallbackRelay, Client, ClientOptions, ListKind, PageDemand,
    ProgressUpdate, StdioCommand, Subscription,
};
use ferromcp::host::input::input_answer;
use ferromcp::host::listen::HostSubscription;
use ferromcp::host::settings::client_options;
use ferromcp::protocol::{
    CreateMessageResult, ElicitResult, InputKind, ListRootsResult, SubscriptionFilter,
};

use crate::client_future::{self, Event, Events, ToPy};
use crate::client_skill::PyLoadedSkill;
use crate::client_task::PyToolTask;
use crate::host_call::{HostCall, HostCtx};
use crate::refs::{HandlerKind, PyRefs};
use crate::server::PyServer;
use crate::values;

/// Converts a core result to the Python objects of its JSON form, straight
/// from the typed result (no `serde_json::Value` tree in between).
fn json_to_py<T: Serialize + Send + 'static>() -> ToPy<T> {
    Box::new(|py, value: T| Ok(values::to_python(py, &value)?.unbind()))
}

fn seconds(what: &str, value: Option<f64>) -> PyResult<Option<Duration>> {
    value
        .map(Duration::try_from_secs_f64)
        .transpose()
        .map_err(|e| PyValueError::new_err(format!("invalid {what}: {e}")))
}

/// A call's own timeout (seconds) and extra `_meta`.
fn call_options(timeout: Option<f64>, meta: Option<&Bound<'_, PyDict>>) -> PyResult<CallOptions> {
    let mut options = CallOptions {
        timeout: seconds("timeout", timeout)?,
        ..CallOptions::default()
    };
    if let Some(meta) = meta {
        options.meta = values::from_python_object(meta, None, "meta")?;
    }
    Ok(options)
}

/// Runs the Python handler of `kind` through the host-call adapter, typed
/// by core's rule for that kind's result.
async fn answer_input(
    kind: InputKind,
    refs: Arc<PyRefs>,
    is_async: bool,
    params: Value,
) -> Result<Value, Error> {
    let call = HostCall {
        key: (HandlerKind::Input, Arc::from(kind.capability())),
        refs,
        ctx: HostCtx::None,
        input: params,
        is_async,
    };
    match kind {
        InputKind::Elicitation => input_answer(kind, call.run::<ElicitResult>().await),
        InputKind::Sampling => input_answer(kind, call.run::<CreateMessageResult>().await),
        InputKind::Roots => input_answer(kind, call.run::<ListRootsResult>().await),
    }
}

/// Reads the connection options the Python layer passes.
struct Settings {
    options: ClientOptions,
    refs: Arc<PyRefs>,
}

/// The settings both connect methods name the same way, plus `more`, as
/// core's client settings (snake_case, as the Python caller spells them).
fn identity<const N: usize>(
    name: Option<String>,
    version: Option<String>,
    protocol_version: Option<String>,
    era: &str,
    more: [(&str, Value); N],
) -> Map<String, Value> {
    let mut given = Map::new();
    given.insert("name".into(), name.map_or(Value::Null, Value::from));
    given.insert("version".into(), version.map_or(Value::Null, Value::from));
    let protocol_version = protocol_version.map_or(Value::Null, Value::from);
    given.insert("protocol_version".into(), protocol_version);
    given.insert("era".into(), Value::from(era));
    for (key, value) in more {
        given.insert(key.into(), value);
    }
    given
}

/// Builds the core options from the keyword arguments both connect
/// methods share, read by core's one reading of client settings
/// ([`client_options`]); each handler is registered through
/// `ClientOptions::on_input`, which also declares its capability.
#[allow(clippy::too_many_arguments)]
fn read_settings(
    py: Python<'_>,
    given: Map<String, Value>,
    timeout: Option<f64>,
    handlers: Option<&Bound<'_, PyDict>>,
    handler_loop: Option<Py<PyAny>>,
    json_default: Option<Py<PyAny>>,
    more: Option<&Bound<'_, PyDict>>,
) -> PyResult<Settings> {
    let mut given = given;
    // Seconds here, milliseconds in core's settings; None waits indefinitely.
    let timeout_ms = seconds("timeout", timeout)?.map(|t| t.as_secs_f64() * 1000.0);
    given.insert(
        "timeout_ms".into(),
        timeout_ms.map_or(Value::Null, Value::from),
    );
    // Settings the Python side passes through as core names them
    // (`limits`, `capabilities`, `follow_tasks`): core reads and checks them.
    for (key, value) in more.into_iter().flat_map(|m| m.iter()) {
        given.insert(key.extract()?, values::from_python(&value, None)?);
    }
    let mut options = client_options(&Value::Object(given)).map_err(PyValueError::new_err)?;
    let refs = Arc::new(PyRefs::new(json_default));
    if let Some(event_loop) = handler_loop {
        refs.set_event_loop(event_loop);
    }
    for (key, entry) in handlers.into_iter().flat_map(|h| h.iter()) {
        let key: String = key.extract()?;
        let kind = InputKind::ALL
            .into_iter()
            .find(|k| k.capability() == key)
            .ok_or_else(|| PyValueError::new_err(format!("unknown input handler {key:?}")))?;
        let (callable, is_async): (Py<PyAny>, bool) = entry.extract()?;
        if !callable.bind(py).is_callable() {
            return Err(PyTypeError::new_err(format!(
                "the {key} handler must be callable"
            )));
        }
        refs.set_handler(HandlerKind::Input, kind.capability(), callable);
        let handler_refs = refs.clone();
        options = options.on_input(kind, move |params| {
            answer_input(kind, handler_refs.clone(), is_async, params)
        });
    }
    Ok(Settings { options, refs })
}

/// The native MCP client. Use `ferromcp.Client` (asyncio) or
/// `ferromcp.SyncClient`, which give typed results. Every call takes the
/// asyncio loop to return an awaitable of, or `None` to block.
///
/// >>> server = _native.Server("demo", "1.0.0")
/// >>> server.add_tool("echo", None, {"type": "object"}, None, lambda args, ctx: args["text"], False)
/// >>> client = _native.Client.connect_in_memory(server, None)  # blocks
/// >>> # method, params, timeout, progress, meta, event_loop
/// >>> params = {"name": "echo", "arguments": {"text": "hi"}}
/// >>> client.request("tools/call", params, None, None, None, None)["content"]
/// [{'type': 'text', 'text': 'hi'}]
/// >>> client.close(None)
#[pyclass(module = "ferromcp._native", name = "Client", frozen, weakref)]
pub(crate) struct PyClient {
    client: Client,
    refs: Arc<PyRefs>,
    /// An in-memory client's loop lent to its server (`connect_in_memory`).
    lent: Option<LentLoop>,
}

fn connected(refs: Arc<PyRefs>) -> ToPy<Client> {
    Box::new(move |py, client| {
        let native = PyClient {
            client,
            refs,
            lent: None,
        };
        Ok(Py::new(py, native)?.into_any())
    })
}

/// Makes each in-memory client's key among its server's lenders unique.
static NEXT_IN_MEMORY: AtomicU64 = AtomicU64::new(0);

/// An in-memory client registered as a lender of its server's
/// [`PyRefs`], the way a mount registers the server it is mounted in
/// (`gateway.rs`): the server's async handlers run on the client's
/// `handler_loop` when no transport serving the server has a loop of its
/// own. Taken out when the client closes or goes.
#[derive(Clone)]
struct LentLoop {
    server_refs: Arc<PyRefs>,
    key: String,
}

impl LentLoop {
    fn withdraw(&self) {
        self.server_refs.remove_lender(&self.key);
    }
}

/// The native client of an in-memory pipe to `server`: holds the native
/// server in the client's references (so the server's handlers live as
/// long as the client, and the collector sees them) and lends the client's
/// loop to it. Done only once connected, so that a connection abandoned
/// before leaves nothing behind in the server.
fn connected_in_memory(refs: Arc<PyRefs>, server: Py<PyServer>) -> ToPy<Client> {
    Box::new(move |py, client| {
        let key = format!(
            "in-memory client#{}",
            NEXT_IN_MEMORY.fetch_add(1, Ordering::Relaxed)
        );
        let server_refs = server.get().refs.clone();
        server_refs.add_lender(&key, &refs);
        refs.set_handler(HandlerKind::Upstream, &key, server.into_any());
        let lent = LentLoop { server_refs, key };
        let native = PyClient {
            client,
            refs,
            lent: Some(lent),
        };
        Ok(Py::new(py, native)?.into_any())
    })
}

#[pymethods]
impl PyClient {
    /// Spawns `program args...` and connects over its stdin/stdout.
    #[staticmethod]
    #[pyo3(signature = (
        program, args, event_loop, *, env=None, cwd=None, stderr="capture", name=None,
        version=None, protocol_version=None, era="auto", timeout=None, handlers=None,
        handler_loop=None, json_default=None, settings=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn connect_stdio(
        py: Python<'_>,
        program: String,
        args: Vec<String>,
        event_loop: Option<&Bound<'_, PyAny>>,
        env: Option<Vec<(String, String)>>,
        cwd: Option<String>,
        stderr: &str,
        name: Option<String>,
        version: Option<String>,
        protocol_version: Option<String>,
        era: &str,
        timeout: Option<f64>,
        handlers: Option<&Bound<'_, PyDict>>,
        handler_loop: Option<Py<PyAny>>,
        json_default: Option<Py<PyAny>>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let given = identity(
            name,
            version,
            protocol_version,
            era,
            [("stderr", Value::from(stderr))],
        );
        let Settings { options, refs } = read_settings(
            py,
            given,
            timeout,
            handlers,
            handler_loop,
            json_default,
            settings,
        )?;
        let mut command = StdioCommand::new(program, args);
        command.env = env
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        command.cwd = cwd.map(Into::into);
        client_future::run(
            py,
            event_loop,
            Client::connect_stdio_with(command, options),
            connected(refs),
        )
    }

    /// Connects to a Streamable HTTP endpoint (`http://host:port/mcp`);
    /// `oauth` is the settings dict of `ferromcp.OAuth` (see `oauth.rs`).
    #[staticmethod]
    #[pyo3(signature = (
        url, event_loop, *, headers=None, name=None, version=None, protocol_version=None,
        era="auto", timeout=None, handlers=None, handler_loop=None, json_default=None,
        tls_roots="native", ca_certs=None, client_cert=None, oauth=None, settings=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn connect_http(
        py: Python<'_>,
        url: String,
        event_loop: Option<&Bound<'_, PyAny>>,
        headers: Option<Vec<(String, String)>>,
        name: Option<String>,
        version: Option<String>,
        protocol_version: Option<String>,
        era: &str,
        timeout: Option<f64>,
        handlers: Option<&Bound<'_, PyDict>>,
        handler_loop: Option<Py<PyAny>>,
        json_default: Option<Py<PyAny>>,
        tls_roots: &str,
        ca_certs: Option<Vec<String>>,
        client_cert: Option<(String, String)>,
        oauth: Option<&Bound<'_, PyDict>>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let tls = [
            ("tls_roots", Value::from(tls_roots)),
            ("ca_certs", ca_certs.map_or(Value::Null, Value::from)),
            (
                "client_cert",
                client_cert
                    .as_ref()
                    .map_or(Value::Null, |(c, _)| c.as_str().into()),
            ),
            (
                "client_key",
                client_cert
                    .as_ref()
                    .map_or(Value::Null, |(_, k)| k.as_str().into()),
            ),
        ];
        let given = identity(name, version, protocol_version, era, tls);
        let Settings { mut options, refs } = read_settings(
            py,
            given,
            timeout,
            handlers,
            handler_loop,
            json_default,
            settings,
        )?;
        options.http_headers = headers.unwrap_or_default();
        if let Some(oauth) = oauth {
            options.oauth = Some(crate::oauth::options(oauth, &refs, &options.tls)?);
        }
        client_future::run(
            py,
            event_loop,
            async move { Client::connect_http_with(&url, options).await },
            connected(refs),
        )
    }

    /// A client of `server` (a native `Server` of this process) over an
    /// in-memory pipe: core's `Client::in_memory_with`, called on the
    /// runtime (it spawns the pipe's tasks), the server serving it as it
    /// serves stdio. The server's `async def` handlers run on
    /// `handler_loop` (lent to the server as a mount lends its own) unless
    /// a transport serving the server has a loop of its own. Raises
    /// `TypeError` for anything but a native `Server`. The class's example
    /// (a doctest: the class's docstring is where doctest finds it) uses it.
    #[staticmethod]
    #[pyo3(signature = (
        server, event_loop, *, name=None, version=None, protocol_version=None, era="auto",
        timeout=None, handlers=None, handler_loop=None, json_default=None, settings=None,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn connect_in_memory(
        py: Python<'_>,
        server: &Bound<'_, PyAny>,
        event_loop: Option<&Bound<'_, PyAny>>,
        name: Option<String>,
        version: Option<String>,
        protocol_version: Option<String>,
        era: &str,
        timeout: Option<f64>,
        handlers: Option<&Bound<'_, PyDict>>,
        handler_loop: Option<Py<PyAny>>,
        json_default: Option<Py<PyAny>>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let server = server.cast::<PyServer>().map_err(|_| {
            // Qualified: `ferromcp.Server` wraps a native `Server`.
            let kind = server
                .get_type()
                .fully_qualified_name()
                .map_or_else(|_| "?".to_owned(), |n| n.to_string());
            PyTypeError::new_err(format!(
                "an in-memory client's server is a ferromcp._native.Server, not {kind}"
            ))
        })?;
        let given = identity(name, version, protocol_version, era, []);
        let Settings { options, refs } = read_settings(
            py,
            given,
            timeout,
            handlers,
            handler_loop,
            json_default,
            settings,
        )?;
        let core = server.get().server.clone();
        client_future::run(
            py,
            event_loop,
            // Polled inside the runtime's context, whichever path runs it:
            // `in_memory_with` spawns the server's side of the pipe there.
            async move { Ok(Client::in_memory_with(&core, options)) },
            connected_in_memory(refs, server.clone().unbind()),
        )
    }

    /// The protocol version requests currently declare.
    #[getter]
    fn protocol_version(&self) -> String {
        self.client.protocol_version()
    }

    /// Whether the server turned out to speak a legacy revision (2025-11-25
    /// or earlier); `None` until the first request detected it.
    #[getter]
    fn is_legacy(&self) -> Option<bool> {
        self.client.is_legacy()
    }

    /// Sends `method` (a row of core's `CLIENT_CALLS`: `"tools/call"`,
    /// `"resources/read"`...) with `params` as the wire has them, and
    /// answers with the result as Python objects: the one path of every
    /// client call. `progress(progress, total, message)` is called for each
    /// progress notification, in order and before the call returns (on a
    /// worker thread when awaited, on the calling thread when blocking);
    /// `timeout` (seconds) overrides the client's; `meta` joins the
    /// request's `_meta`.
    #[pyo3(signature = (method, params, timeout, progress, meta, event_loop))]
    #[allow(clippy::too_many_arguments)]
    fn request(
        &self,
        py: Python<'_>,
        method: String,
        params: &Bound<'_, PyDict>,
        timeout: Option<f64>,
        progress: Option<Py<PyAny>>,
        meta: Option<&Bound<'_, PyDict>>,
        event_loop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let default = self.refs.json_default(py);
        let params =
            values::from_python_object(params, default.as_ref().map(|d| d.bind(py)), "params")?;
        let mut options = call_options(timeout, meta)?;
        let events = progress.map(|progress| {
            let (on_progress, events) = progress_events(progress);
            options.on_progress = Some(on_progress);
            events
        });
        let client = self.client.clone();
        client_future::run_with_events(
            py,
            event_loop,
            async move { client.call(&method, params, &options).await },
            json_to_py::<CallResult>(),
            events,
        )
    }

    /// `tools/call` without following a task: a handle on the task the
    /// server makes of it (or on the result it answered with at once).
    #[pyo3(signature = (name, arguments, timeout, meta, event_loop))]
    fn start_tool_task(
        &self,
        py: Python<'_>,
        name: String,
        arguments: &Bound<'_, PyDict>,
        timeout: Option<f64>,
        meta: Option<&Bound<'_, PyDict>>,
        event_loop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let default = self.refs.json_default(py);
        let arguments =
            values::from_python(arguments.as_any(), default.as_ref().map(|d| d.bind(py)))?;
        let options = call_options(timeout, meta)?;
        let client = self.client.clone();
        client_future::run(
            py,
            event_loop,
            async move { client.start_tool_task(&name, arguments, &options).await },
            Box::new(|py, task| Ok(Py::new(py, PyToolTask { task })?.into_any())),
        )
    }

    /// A handle on a task started earlier (its id kept).
    fn tool_task(&self, task_id: &str) -> PyToolTask {
        PyToolTask {
            task: self.client.tool_task(task_id),
        }
    }

    /// Loads a skill: `skill` is its entry (a `skills/list` item) or its
    /// `SKILL.md` URI (then `skills/get` fetches the entry first). Core
    /// reads `SKILL.md` and checks it against the entry.
    fn load_skill(
        &self,
        py: Python<'_>,
        skill: &Bound<'_, PyAny>,
        event_loop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let skill = values::from_python(skill, None)?;
        let client = self.client.clone();
        client_future::run(
            py,
            event_loop,
            async move { client.load_skill_value(skill).await },
            Box::new(|py, loaded| Ok(Py::new(py, PyLoadedSkill { loaded })?.into_any())),
        )
    }

    /// Walks every page of `kind` with core's [`Pages`] (which follows
    /// `nextCursor` and stops at a cursor seen before).
    fn pages(&self, py: Python<'_>, kind: &str) -> PyResult<PyPages> {
        let kind = parse_list_kind(kind)?;
        let (demand, demands) = mpsc::unbounded_channel();
        let client = self.client.clone();
        let pages: crate::telemetry::Traced<()> =
            Box::pin(async move { client.serve_pages(kind, demands).await });
        // Each page is requested under the span current here.
        ferromcp::runtime::get().spawn(crate::telemetry::under_caller(py, pages));
        Ok(PyPages { demand })
    }

    /// Opens `subscriptions/listen` with `filter` (a `SubscriptionFilter`
    /// object) once the server acknowledged it.
    fn listen(
        &self,
        py: Python<'_>,
        filter: &Bound<'_, PyDict>,
        event_loop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let filter: SubscriptionFilter = serde_json::from_value(values::from_python(filter, None)?)
            .map_err(|e| PyValueError::new_err(format!("invalid subscription filter: {e}")))?;
        let client = self.client.clone();
        client_future::run(
            py,
            event_loop,
            async move { client.listen(filter).await },
            Box::new(|py, subscription: Subscription| {
                let open = HostSubscription::new(subscription);
                let native = PySubscription {
                    acknowledged: values::to_python(py, open.acknowledged())?.unbind(),
                    open,
                };
                Ok(Py::new(py, native)?.into_any())
            }),
        )
    }

    /// Ends the connection (a spawned server is stopped) and drops the
    /// handlers.
    fn close(&self, py: Python<'_>, event_loop: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let client = self.client.clone();
        let refs = self.refs.clone();
        let lent = self.lent.clone();
        client_future::run(
            py,
            event_loop,
            async move {
                client.close().await;
                Ok(())
            },
            Box::new(move |py, ()| {
                if let Some(lent) = &lent {
                    lent.withdraw();
                }
                // Released with the GIL held, outside any lock.
                refs.clear();
                Ok(py.None())
            }),
        )
    }

    /// Appends the Python callable `link(params, call)` (a coroutine
    /// function when `is_async`) to this client's middleware chain; an
    /// async link runs on `event_loop` (given, it becomes the loop of the
    /// client's async callbacks) or on the client's handler loop.
    #[pyo3(signature = (link, is_async, event_loop=None))]
    fn add_middleware(
        &self,
        link: Bound<'_, PyAny>,
        is_async: bool,
        event_loop: Option<Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        if let Some(event_loop) = event_loop {
            self.refs.set_event_loop(event_loop.unbind());
        }
        crate::client_middleware::add(&self.client, &self.refs, link, is_async)
    }

    /// Appends `link(method, params)` to this client's middleware chain,
    /// for the notifications it receives: called where each is delivered,
    /// holding the GIL, before the callbacks and listen streams; it returns
    /// `None` to stop it or the params dict it goes on with
    /// (`notification_link.rs`).
    fn add_notification_middleware(&self, link: Bound<'_, PyAny>) -> PyResult<()> {
        crate::notification_link::add_to_client(&self.client, &self.refs, link)
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        self.refs.traverse(&visit)
    }

    fn __clear__(&self) {
        self.refs.clear();
    }

    fn __repr__(&self) -> String {
        format!(
            "<ferromcp._native.Client {}>",
            self.client.protocol_version()
        )
    }
}

impl PyClient {
    /// The core client, shared (a clone is the same connection): what a
    /// mount forwards through (`gateway.rs`).
    pub(crate) fn core(&self) -> Client {
        self.client.clone()
    }
}

impl Drop for PyClient {
    /// A transport task that outlives the object finds no handlers rather
    /// than objects the collector may already have freed.
    fn drop(&mut self) {
        if let Some(lent) = &self.lent {
            lent.withdraw();
        }
        self.refs.clear();
    }
}

/// The list a host names (`"tools"`, `"resources"`, ...).
fn parse_list_kind(kind: &str) -> PyResult<ListKind> {
    Ok(match kind {
        "tools" => ListKind::Tools,
        "resources" => ListKind::Resources,
        "resource_templates" => ListKind::ResourceTemplates,
        "prompts" => ListKind::Prompts,
        "skills" => ListKind::Skills,
        other => return Err(PyValueError::new_err(format!("unknown list {other:?}"))),
    })
}

/// Every page of a list, one `next()` at a time.
#[pyclass(module = "ferromcp._native", name = "Pages", frozen)]
pub(crate) struct PyPages {
    demand: mpsc::UnboundedSender<PageDemand>,
}

#[pymethods]
impl PyPages {
    /// The next page as `{"items": [...], "nextCursor"?: ...}`, or `None`
    /// after the last.
    fn next(&self, py: Python<'_>, event_loop: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let (reply, replied) = oneshot::channel();
        let sent = self.demand.send(reply).is_ok();
        client_future::run(
            py,
            event_loop,
            async move {
                if !sent {
                    return Ok(None);
                }
                replied.await.unwrap_or(None).transpose()
            },
            Box::new(|py, page: Option<Value>| match page {
                Some(items) => Ok(values::to_python(py, &items)?.unbind()),
                None => Ok(py.None()),
            }),
        )
    }
}

/// An open `subscriptions/listen` stream (core's [`HostSubscription`]).
#[pyclass(module = "ferromcp._native", name = "Subscription", frozen)]
pub(crate) struct PySubscription {
    acknowledged: Py<PyAny>,
    open: HostSubscription,
}

#[pymethods]
impl PySubscription {
    /// The notification types the server agreed to send (a dict).
    #[getter]
    fn acknowledged(&self, py: Python<'_>) -> Py<PyAny> {
        self.acknowledged.clone_ref(py)
    }

    /// The next notification as `{"method": ..., "params": ...}`; `None`
    /// once the subscription ended gracefully or was closed (raises the
    /// error that ended it otherwise).
    fn next(&self, py: Python<'_>, event_loop: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        client_future::run(
            py,
            event_loop,
            self.open.next(),
            Box::new(|py, note: Option<Value>| match note {
                Some(note) => Ok(values::to_python(py, &note)?.unbind()),
                None => Ok(py.None()),
            }),
        )
    }

    /// Ends the subscription (the listen request is cancelled); a waiting
    /// `next()` returns `None`.
    fn close(&self) {
        self.open.close();
    }

    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.acknowledged)
    }
}

/// Adds the client's classes to the native module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyClient>()?;
    m.add_class::<PyPages>()?;
    m.add_class::<PySubscription>()?;
    m.add_class::<PyToolTask>()?;
    m.add_class::<PyLoadedSkill>()?;
    m.add(
        "LEGACY_PROTOCOL_VERSIONS",
        ferromcp::protocol::LEGACY_PROTOCOL_VERSIONS.to_vec(),
    )?;
    Ok(())
}

/// Progress events handed to the Python worker (awaited calls) or the
/// calling thread (blocking calls) that runs them, at most this many at
/// once: beyond it the newest update waits and older waiting ones are
/// dropped (`CallbackRelay`).
const PROGRESS_IN_FLIGHT: usize = 16;

/// The core progress callback of one call and the [`Events`] that run the
/// Python `progress` callable: bounded, so a server flooding progress
/// cannot queue work without limit, and the newest update always runs.
fn progress_events(progress: Py<PyAny>) -> (ferromcp::client::ProgressCallback, Events) {
    relayed(progress, |_py, update: ProgressUpdate| {
        Ok((update.progress, update.total, update.message))
    })
}

/// A core callback of one call (progress, a task's state) and the
/// [`Events`] that run the Python `callable` with `args(py, value)`: at most
/// [`PROGRESS_IN_FLIGHT`] queued at once (`CallbackRelay`), the newest
/// always run, all of them before the call's outcome.
pub(crate) fn relayed<T, A>(
    callable: Py<PyAny>,
    args: impl Fn(Python<'_>, T) -> PyResult<A> + Send + Sync + 'static,
) -> (Arc<dyn Fn(T) + Send + Sync>, Events)
where
    T: Send + 'static,
    A: for<'py> pyo3::call::PyCallArgs<'py>,
{
    let (queue, queued) = mpsc::unbounded_channel::<Event>();
    let callable = Arc::new(callable);
    let args = Arc::new(args);
    let call = move |value: T| -> Event {
        let callable = callable.clone();
        let args = args.clone();
        // The arguments are made with the GIL held, where the callable runs:
        // a value becomes Python objects once, with no text in between.
        Box::new(move |py| {
            if let Err(e) = args(py, value).and_then(|args| callable.bind(py).call1(args)) {
                e.write_unraisable(py, None);
            }
        })
    };
    let last = call.clone();
    let relay = Arc::new_cyclic(|relay: &std::sync::Weak<CallbackRelay<T>>| {
        let relay = relay.clone();
        CallbackRelay::new(PROGRESS_IN_FLIGHT, move |value| {
            let run = call(value);
            let relay = relay.clone();
            // Closed once the call is over: nobody to tell any more.
            let _ = queue.send(Box::new(move |py| {
                run(py);
                if let Some(relay) = relay.upgrade() {
                    relay.delivered();
                }
            }));
        })
    });
    let finishing = relay.clone();
    let events = Events {
        queue: queued,
        finish: Box::new(move || finishing.finish().map(last)),
    };
    (Arc::new(move |value| relay.push(value)), events)
}
