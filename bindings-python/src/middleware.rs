//! Python links of a server's middleware chain (core's [`Middleware`]),
//! the native object a link gets ([`PyMiddlewareCall`]: the request's meta
//! and the rest of the chain), and core's ready-made links
//! ([`PyBuiltinMiddleware`]).
//!
//! A link runs like any handler ([`HostCall`]): a plain `def` on the
//! Python worker threads, an `async def` on the serving loop; it gets the
//! params as a dict and returns the result dict. What it raises is read as
//! a handler's exception is ([`crate::error::handler_error`]): a
//! `ferromcp.McpError` is that JSON-RPC error, anything else an internal
//! error, as for a prompt or a resource. [`PyMiddlewareCall::next`] runs
//! the rest of the chain: for a plain link on the link's own worker thread,
//! with the GIL released, where the plain links and handlers after it run
//! too ([`host_call::inline`]: a request never holds two workers); for an
//! async link on the runtime, as core runs a chain, the link awaiting it
//! on its loop ([`client_future::run`]). What goes through the chain, and
//! how a panic fails a request, is core's (a panic in the rest of a plain
//! link's chain reaches the link as pyo3's `PanicException`).
//!
//! The ready-made links report to Python's `logging` (the
//! `ferromcp.requests` logger) through core's record sink ([`to_logging`]).

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{Map, Value};

use ferromcp::McpError;
use ferromcp::host::caller::caller_value;
use ferromcp::protocol::jsonrpc::RequestId;
use ferromcp::server::middleware::builtin::{
    LogRequests, MaskErrors, RateLimit, RecordSink, RequestRecord,
};
use ferromcp::server::{
    BoxFuture, FromHost, HandlerError, Middleware, MiddlewareNotification, MiddlewareOutput,
    MiddlewareRequest, MiddlewareResult, Next, OutputError, RequestMeta,
};

use crate::host_call::{self, HostCall, HostCtx, PyOutput};
use crate::refs::{HandlerKey, HandlerKind, PyRefs};
use crate::sync::lock;
use crate::{client_future, error, primitives, values, workers};

/// Tells apart the Python links of every server of the process.
static NEXT_LINK: AtomicU64 = AtomicU64::new(0);

/// Adds `link` at the end of `server`'s chain: one of core's ready-made
/// links, or a Python callable `link(params, call)` (a coroutine function
/// when `is_async`) stored in `refs`.
pub(crate) fn add(
    server: &ferromcp::server::Server,
    refs: &Arc<PyRefs>,
    link: Bound<'_, PyAny>,
    is_async: bool,
) -> PyResult<()> {
    if let Ok(builtin) = link.cast::<PyBuiltinMiddleware>() {
        server.add_middleware(SharedLink(builtin.get().link.clone()));
        return Ok(());
    }
    primitives::callable(&link)?;
    let name = format!("link#{}", NEXT_LINK.fetch_add(1, Ordering::Relaxed));
    refs.set_handler(HandlerKind::Middleware, &name, link.unbind());
    server.add_middleware(PyMiddleware {
        key: (HandlerKind::Middleware, Arc::from(name)),
        refs: refs.clone(),
        is_async,
    });
    Ok(())
}

/// A Python link, found in `refs` under `key` when a request comes.
struct PyMiddleware {
    key: HandlerKey,
    refs: Arc<PyRefs>,
    is_async: bool,
}

impl Middleware for PyMiddleware {
    fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        let MiddlewareRequest {
            id,
            method,
            params,
            meta,
        } = request;
        let call = HostCall {
            key: self.key.clone(),
            refs: self.refs.clone(),
            ctx: HostCtx::Link(Box::new(LinkCall {
                id,
                method,
                meta,
                next,
            })),
            input: Value::Object(params),
            is_async: self.is_async,
        };
        Box::pin(async move {
            match call.run::<LinkResult>().await {
                Ok(LinkResult(result)) => Ok(result.into()),
                Err(HandlerError::Protocol(error)) => Err(error),
                // A link is no tool: its failure is not the model's to read
                // but an internal error, as for a prompt or a resource.
                Err(HandlerError::Tool(message)) => Err(McpError::internal(message)),
            }
        })
    }
}

/// What a link returned: the result object.
pub(crate) struct LinkResult(pub(crate) Map<String, Value>);

impl FromHost for LinkResult {
    const KIND: &'static str = "middleware";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        let got = match value {
            Value::Object(result) => return Ok(LinkResult(result)),
            Value::Null => "None",
            Value::Bool(_) => "a bool",
            Value::Number(_) => "a number",
            Value::String(_) => "a str",
            Value::Array(_) => "a list",
        };
        Err(OutputError {
            kind: Self::KIND,
            reason: format!("a link returns the result dict (what call_next returned), not {got}"),
        })
    }
}

impl PyOutput for LinkResult {}

/// A link's call before it reaches Python: the request (its params go as
/// the callable's first argument) and the rest of the chain.
pub(crate) struct LinkCall {
    id: RequestId,
    method: String,
    meta: RequestMeta,
    next: Next,
}

/// One request as a middleware link sees it: its id, method and caller,
/// and the rest of the chain, which `next` runs once. The
/// `ferromcp.middleware` layer wraps it (`MiddlewareContext`, `call_next`).
#[pyclass(module = "ferromcp._native", name = "MiddlewareCall", frozen)]
pub(crate) struct PyMiddlewareCall {
    id: RequestId,
    method: String,
    meta: RequestMeta,
    next: Mutex<Option<Next>>,
}

impl LinkCall {
    /// The request's trace context (its server span's while traced).
    pub(crate) fn trace(&self) -> Option<&ferromcp::telemetry::TraceContext> {
        self.meta.trace.as_ref()
    }
}

impl From<LinkCall> for PyMiddlewareCall {
    fn from(call: LinkCall) -> Self {
        PyMiddlewareCall {
            id: call.id,
            method: call.method,
            meta: call.meta,
            next: Mutex::new(Some(call.next)),
        }
    }
}

#[pymethods]
impl PyMiddlewareCall {
    /// The JSON-RPC id of the request (`int` or `str`).
    #[getter]
    fn request_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match &self.id {
            RequestId::Number(n) => n.into_pyobject(py)?.into_any(),
            RequestId::String(s) => s.into_pyobject(py)?.into_any(),
        })
    }

    /// The method, e.g. `"tools/call"`.
    #[getter]
    fn method(&self) -> &str {
        &self.method
    }

    /// Who sent the request: core's description of a caller
    /// (`protocolVersion`, `clientInfo`, `clientCapabilities`, `auth`,
    /// `headers`), a dict that `ferromcp.Caller` reads.
    #[getter]
    fn caller<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        values::to_python(py, &caller_value(&self.meta))
    }

    /// Runs the rest of the chain with `params` and returns its result
    /// dict: here, blocking with the GIL released (for a plain link, on its
    /// worker thread), or, given `event_loop`, on the runtime as an
    /// awaitable of the loop (awaited at once). Its JSON-RPC error raises
    /// the `ferromcp.errors` exception for its code. Once only: a second
    /// call raises `RuntimeError`.
    #[pyo3(signature = (params, event_loop=None))]
    fn next(
        &self,
        py: Python<'_>,
        params: &Bound<'_, PyAny>,
        event_loop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let params = values::from_python_object(params, None, "params")?;
        let next = lock(&self.next).take().ok_or_else(|| {
            PyRuntimeError::new_err(
                "call_next was called already: a link runs the rest of the chain once",
            )
        })?;
        let request = MiddlewareRequest {
            id: self.id.clone(),
            method: self.method.clone(),
            params,
            meta: self.meta.clone(),
        };
        let Some(event_loop) = event_loop else {
            let rest = next.run(request);
            let outcome = py.detach(|| host_call::inline(|| block_here(rest)));
            return match outcome {
                Ok(result) => Ok(values::to_python_dict(py, result.as_map())?
                    .into_any()
                    .unbind()),
                Err(e) => Err(error::to_py_err(py, &ferromcp::Error::Mcp(e))),
            };
        };
        // On the runtime, as core runs a chain; dropped (and so cancelled)
        // with the call if the link stops waiting for it.
        let rest = AbortOnDrop(ferromcp::runtime::get().spawn(next.run(request)));
        let work = async move {
            match rest.await {
                Ok(result) => result.map_err(ferromcp::Error::Mcp),
                // A later link panicked: core fails a panicking link's
                // request this way.
                Err(failed) => Err(ferromcp::Error::Mcp(McpError::internal(format!(
                    "middleware failed: {failed}"
                )))),
            }
        };
        client_future::run(
            py,
            Some(event_loop),
            work,
            Box::new(|py, result: MiddlewareOutput| {
                Ok(values::to_python_dict(py, result.as_map())?
                    .into_any()
                    .unbind())
            }),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "<ferromcp._native.MiddlewareCall {} id={}>",
            self.method, self.id
        )
    }
}

/// Runs `future` to completion on this thread (in the runtime's context,
/// so what it spawns, its timers and sockets go to the runtime), parking
/// while it waits. Unlike core's `runtime::block_here` it may be nested on
/// every platform: a plain link's rest of the chain may hold another plain
/// link, which waits for its own rest inside this one's poll. (Core's is
/// the runtime's `block_on` elsewhere than on Linux, which panics when
/// nested; on Linux its levels share one waker per thread.) Each level has
/// its own wake-up flag, so one level's wake-up is never lost to another's
/// park.
pub(crate) fn block_here<F: Future>(future: F) -> F::Output {
    let _runtime = ferromcp::runtime::get().enter();
    let signal = Arc::new(Unpark {
        woken: AtomicBool::new(false),
        thread: std::thread::current(),
    });
    let waker = Waker::from(signal.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        while !signal.woken.swap(false, Ordering::AcqRel) {
            std::thread::park();
        }
    }
}

/// Wakes the thread of a [`block_here`].
struct Unpark {
    woken: AtomicBool,
    thread: Thread,
}

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.thread.unpark();
    }
}

/// A spawned task, aborted when dropped unfinished.
pub(crate) struct AbortOnDrop<T>(pub(crate) tokio::task::JoinHandle<T>);

impl<T> Future for AbortOnDrop<T> {
    type Output = Result<T, tokio::task::JoinError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0).poll(cx)
    }
}

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// One of core's ready-made links (`ferromcp.middleware.log_requests()`,
/// `mask_errors()`, `rate_limit(per_second, burst)`), for
/// `Server.add_middleware`. Added to several servers, it is one link: a
/// rate limit's budget is then shared.
///
/// >>> _native.BuiltinMiddleware.rate_limit(10.0, 20)
/// <ferromcp.middleware.rate_limit(10.0, 20)>
#[pyclass(module = "ferromcp._native", name = "BuiltinMiddleware", frozen)]
pub(crate) struct PyBuiltinMiddleware {
    link: Arc<dyn Middleware>,
    label: String,
}

#[pymethods]
impl PyBuiltinMiddleware {
    /// Core's `LogRequests`: each request's method, name, outcome and
    /// duration, logged to the `ferromcp.requests` logger ([`to_logging`]).
    ///
    /// >>> _native.BuiltinMiddleware.log_requests()
    /// <ferromcp.middleware.log_requests()>
    #[staticmethod]
    fn log_requests() -> Self {
        PyBuiltinMiddleware {
            link: Arc::new(LogRequests::with_sink(to_logging(false))),
            label: "log_requests()".into(),
        }
    }

    /// Core's `MaskErrors`: an internal error reaches the client as
    /// `"Internal error"`, its message goes to the `ferromcp.requests`
    /// logger ([`to_logging`]).
    ///
    /// >>> _native.BuiltinMiddleware.mask_errors()
    /// <ferromcp.middleware.mask_errors()>
    #[staticmethod]
    fn mask_errors() -> Self {
        PyBuiltinMiddleware {
            link: Arc::new(MaskErrors::with_sink(to_logging(true))),
            label: "mask_errors()".into(),
        }
    }

    /// Core's `RateLimit`: `burst` requests at once and `per_second` more
    /// every second, per client. Raises `ValueError` with core's reason for
    /// settings it refuses (`RateLimit::try_new`).
    ///
    /// >>> _native.BuiltinMiddleware.rate_limit(0.5, 4)
    /// <ferromcp.middleware.rate_limit(0.5, 4)>
    #[staticmethod]
    fn rate_limit(per_second: f64, burst: u32) -> PyResult<Self> {
        Ok(PyBuiltinMiddleware {
            link: Arc::new(RateLimit::try_new(per_second, burst).map_err(PyValueError::new_err)?),
            label: format!("rate_limit({per_second:?}, {burst})"),
        })
    }

    fn __repr__(&self) -> String {
        format!("<ferromcp.middleware.{}>", self.label)
    }
}

/// A ready-made link, shared by every server it was added to.
struct SharedLink(Arc<dyn Middleware>);

impl Middleware for SharedLink {
    fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        self.0.handle(request, next)
    }

    // Forwarded too, so a ready-made link that looks at notifications
    // keeps doing so behind the wrapper.
    fn notification(&self, notification: &mut MiddlewareNotification) -> bool {
        self.0.notification(notification)
    }
}

/// Where core's ready-made links report in a Python process: the
/// `ferromcp.requests` logger of `logging` (core's own `tracing` events
/// reach no Python handler). The record is handed to the Python worker
/// threads ([`workers::submit`]), so the thread serving the request never
/// waits for the GIL: the record is logged just after, on a worker thread
/// (records of requests ending at once may reach the logger out of order).
/// `masked`: a record of `MaskErrors`, logged at `ERROR`.
fn to_logging(masked: bool) -> RecordSink {
    Arc::new(move |record: &RequestRecord| {
        let record = record.clone();
        workers::submit(move |py| {
            if let Err(e) = log(py, masked, &record) {
                e.write_unraisable(py, None);
            }
        });
    })
}

/// `logging`'s levels.
const INFO: u8 = 20;
const WARNING: u8 = 30;
const ERROR: u8 = 40;

/// Logs `record`: `INFO` for a request that ended well, `WARNING` for one
/// that failed, `ERROR` for a masked error; the fields go as the log
/// record's `mcp_method`, `mcp_name`, `mcp_micros`, `mcp_error_code` and
/// `mcp_error_message` attributes.
fn log(py: Python<'_>, masked: bool, record: &RequestRecord) -> PyResult<()> {
    let what = match &record.name {
        Some(name) => format!("{} {name}", record.method),
        None => record.method.clone(),
    };
    let ms = record.micros as f64 / 1000.0;
    let (level, message) = match &record.error {
        None => (INFO, format!("{what}: ok in {ms:.1} ms")),
        Some(error) if masked => (
            ERROR,
            format!(
                "{what}: internal error (masked for the client): {}",
                error.message
            ),
        ),
        Some(error) => (
            WARNING,
            format!(
                "{what}: error {} in {ms:.1} ms: {}",
                error.code, error.message
            ),
        ),
    };
    let extra = PyDict::new(py);
    extra.set_item("mcp_method", &record.method)?;
    extra.set_item("mcp_name", &record.name)?;
    extra.set_item("mcp_micros", record.micros)?;
    extra.set_item("mcp_error_code", record.error.as_ref().map(|e| e.code))?;
    extra.set_item(
        "mcp_error_message",
        record.error.as_ref().map(|e| &e.message),
    )?;
    let options = PyDict::new(py);
    options.set_item("extra", extra)?;
    py.import("logging")?
        .call_method1("getLogger", ("ferromcp.requests",))?
        .call_method("log", (level, message), Some(&options))?;
    Ok(())
}
