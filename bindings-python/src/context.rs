//! `ferromcp.Context`: what a Python handler may know and do about the
//! request it serves (a thin view of [`ferromcp::server::RequestContext`]).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;
use serde_json::Value;

use ferromcp::host::caller::auth_value;
use ferromcp::protocol::jsonrpc::RequestId;
use ferromcp::server::{AskStart, HandlerError, InputKind, LoggingLevel, RequestContext};

use crate::{error, values, workers};

/// The request a tool handler is serving.
///
/// Ask for it by annotating a handler parameter with `ferromcp.Context`:
///
/// ```python
/// @server.tool
/// def slow(n: int, ctx: ferromcp.Context) -> str:
///     for i in range(n):
///         if ctx.cancelled:
///             return "stopped"
///         ctx.progress(i, total=n)
///     return "done"
/// ```
#[pyclass(module = "ferromcp._native", name = "Context", frozen)]
pub(crate) struct PyContext {
    inner: RequestContext,
}

impl PyContext {
    pub(crate) fn new(inner: RequestContext) -> Self {
        PyContext { inner }
    }
}

#[pymethods]
impl PyContext {
    /// The JSON-RPC id of the request (`int` or `str`).
    #[getter]
    fn request_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.inner.request_id() {
            RequestId::Number(n) => n.into_pyobject(py)?.into_any(),
            RequestId::String(s) => s.into_pyobject(py)?.into_any(),
        })
    }

    /// The verified access token's claims on a protected HTTP server, as
    /// core describes them (`subject`, `clientId`, `scopes`, `audience`,
    /// `expiresAt`, `claims`), `None` otherwise.
    #[getter]
    fn auth<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.inner
            .auth()
            .map(|info| values::to_python(py, &auth_value(info)))
            .transpose()
    }

    /// The protocol revision the client spoke, e.g. `"2026-07-28"`.
    #[getter]
    fn protocol_version(&self) -> &str {
        &self.inner.meta().protocol_version
    }

    /// The capabilities the client declared for this request.
    #[getter]
    fn client_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(values::to_python_dict(py, &self.inner.meta().client_capabilities)?.into_any())
    }

    /// True once the client cancelled the request; long handlers should
    /// check it and stop early.
    #[getter]
    fn cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }

    /// Reports progress, when the client asked for it (a `progressToken`).
    /// Returns whether a notification was sent.
    #[pyo3(signature = (progress, total=None, message=None))]
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        self.inner.progress(progress, total, message)
    }

    /// Sends a log message to the client when the request's log level
    /// admits `level` (`"debug"`, `"info"`, ..., `"emergency"`). Returns
    /// whether a message was sent.
    #[pyo3(signature = (level, data, logger=None))]
    fn log(&self, level: &str, data: &Bound<'_, PyAny>, logger: Option<&str>) -> PyResult<bool> {
        let level = LoggingLevel::parse(level)
            .ok_or_else(|| PyValueError::new_err(format!("unknown log level {level:?}")))?;
        let data = values::from_python(data, None)?;
        Ok(self.inner.log(level, data, logger))
    }

    /// The method being served, e.g. `"tools/call"`.
    #[getter]
    fn method(&self) -> &str {
        self.inner.method()
    }

    /// The `clientInfo` the client sent (`{"name", "version", ...}`), or
    /// `None`.
    #[getter]
    fn client_info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.inner.meta().client_info {
            Some(info) => values::to_python(py, &info.to_value()),
            None => Ok(py.None().into_bound(py)),
        }
    }

    /// The headers of the HTTP request that carried this request (names
    /// lower-case; a repeated header's values joined with `", "`); empty
    /// over stdio.
    #[getter]
    fn headers<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        if let Some(headers) = self.inner.http_headers() {
            for (name, value) in ferromcp::host::headers::joined(headers) {
                dict.set_item(name, value)?;
            }
        }
        Ok(dict)
    }

    /// The log level the request asked for (`"debug"`...), or `None`: then
    /// `log` sends nothing.
    #[getter]
    fn log_level(&self) -> Option<&'static str> {
        self.inner.meta().log_level.map(LoggingLevel::as_str)
    }

    /// On the 2025-11-25 HTTP wire, ends the request's SSE connection
    /// without ending its stream: the client reconnects with
    /// `Last-Event-ID` and gets the rest (resumability). Returns whether
    /// there was such a stream.
    fn close_sse_stream(&self) -> bool {
        self.inner.close_sse_stream()
    }

    /// Asks the client for input (`kind`: `"elicitation"`, `"sampling"` or
    /// `"roots"`; `params`: the request's params) and blocks, without the
    /// GIL, until the answer is there. Under 2026-07-28 an answer the
    /// request does not carry yet raises `ferromcp.context.InputRequired`:
    /// the server then answers `input_required` and runs the handler again
    /// when the client retries with the answer. For plain `def` handlers
    /// (they run on worker threads).
    #[pyo3(signature = (kind, params, key=None))]
    fn ask<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        params: &Bound<'py, PyAny>,
        key: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let kind = input_kind(kind)?;
        let params = values::from_python(params, None)?;
        let ctx = &self.inner;
        let outcome = py.detach(|| match ctx.ask_start(key, kind, params) {
            Ok(AskStart::Live(answer)) => {
                // Waits on this (worker) thread, never a runtime worker; a
                // request that ends meanwhile (cancelled, session gone)
                // frees the thread instead of leaving it waiting.
                let token = ctx.cancellation_token();
                ferromcp::runtime::get().block_on(async move {
                    tokio::select! {
                        answer = answer => Some(answer.map(AskStart::Answered)),
                        _ = token.cancelled() => None,
                    }
                })
            }
            started => Some(started),
        });
        match outcome {
            Some(Ok(AskStart::Answered(answer))) => values::to_python(py, &answer),
            Some(Ok(AskStart::Pending)) => Err(input_required(py)),
            Some(Ok(AskStart::Live(_))) => Err(error::to_py_err(py, &ferromcp::Error::Cancelled)),
            Some(Err(e)) => Err(error::from_handler_error(py, e)),
            None => Err(error::to_py_err(py, &ferromcp::Error::Cancelled)),
        }
    }

    /// Like `ask`, without blocking: returns an `asyncio.Future` of
    /// `event_loop` that resolves with the answer (at once when the request
    /// carries it; on a 2025-11-25 session when the client answers the live
    /// request). Awaiting it raises `InputRequired` where `ask` would. For `async def`
    /// handlers, called on the loop's thread.
    #[pyo3(signature = (kind, params, event_loop, key=None))]
    fn ask_async<'py>(
        &self,
        py: Python<'py>,
        kind: &str,
        params: &Bound<'py, PyAny>,
        event_loop: &Bound<'py, PyAny>,
        key: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let kind = input_kind(kind)?;
        let params = values::from_python(params, None)?;
        let future = event_loop.call_method0("create_future")?;
        match self.inner.ask_start(key, kind, params) {
            Ok(AskStart::Answered(answer)) => {
                future.call_method1("set_result", (values::to_python(py, &answer)?,))?;
            }
            // Raised when awaited, not now: asks started together (gather)
            // are all recorded before the handler ends the round.
            Ok(AskStart::Pending) => {
                future.call_method1("set_exception", (input_required(py).into_value(py),))?;
            }
            Err(e) => {
                future.call_method1(
                    "set_exception",
                    (error::from_handler_error(py, e).into_value(py),),
                )?;
            }
            Ok(AskStart::Live(answer)) => {
                let token = self.inner.cancellation_token();
                let target = (event_loop.clone().unbind(), future.clone().unbind());
                ferromcp::runtime::get().spawn(async move {
                    let outcome = tokio::select! {
                        answer = answer => Some(answer),
                        // The request ended (cancelled, or the handler was
                        // dropped): nobody awaits the answer any more.
                        _ = token.cancelled() => None,
                    };
                    workers::submit(move |py| settle(py, target, outcome));
                });
            }
        }
        Ok(future)
    }

    /// Turns this `tools/call` into a task (a tool registered with
    /// `task_start="handler"`, for a client that declared the tasks
    /// extension) and returns `True` once the client has the task handle;
    /// `False` when the call cannot become a task. Blocks without the GIL:
    /// for plain `def` handlers.
    fn start_task(&self, py: Python<'_>) -> PyResult<bool> {
        let ctx = self.inner.clone();
        py.detach(|| ferromcp::runtime::get().block_on(async move { ctx.start_task().await }))
            .map_err(|e| error::from_handler_error(py, e))
    }

    /// Like `start_task`, for `async def` handlers: an `asyncio.Future` of
    /// `event_loop` resolving with the same answer.
    fn start_task_async<'py>(&self, event_loop: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
        let future = event_loop.call_method0("create_future")?;
        let target = (event_loop.clone().unbind(), future.clone().unbind());
        let ctx = self.inner.clone();
        ferromcp::runtime::get().spawn(async move {
            let outcome = ctx.start_task().await.map(Value::Bool);
            workers::submit(move |py| settle(py, target, Some(outcome)));
        });
        Ok(future)
    }

    fn __repr__(&self) -> String {
        format!("<ferromcp.Context request_id={}>", self.inner.request_id())
    }
}

/// Reads an input kind by its capability name.
fn input_kind(name: &str) -> PyResult<InputKind> {
    InputKind::ALL
        .into_iter()
        .find(|k| k.capability() == name)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "unknown input kind {name:?}: use \"elicitation\", \"sampling\" or \"roots\""
            ))
        })
}

fn context_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    MODULE
        .get_or_try_init(py, || Ok(py.import("ferromcp.context")?.unbind()))
        .map(|m| m.bind(py))
}

/// `ferromcp.context.InputRequired`, which ends a 2026-07-28 round.
fn input_required(py: Python<'_>) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let class = context_module(py)?.getattr("InputRequired")?;
        Ok(PyErr::from_value(class.call0()?))
    };
    build().unwrap_or_else(|e| e)
}

/// Resolves a live ask's future on its loop's thread (asyncio futures are
/// not thread-safe). A closed loop means nobody waits: nothing to do.
fn settle(
    py: Python<'_>,
    (event_loop, future): (Py<PyAny>, Py<PyAny>),
    outcome: Option<Result<Value, HandlerError>>,
) {
    let Some(outcome) = outcome else { return };
    let (value, exception) = match outcome {
        Ok(answer) => match values::to_python(py, &answer) {
            Ok(value) => (value, py.None().into_bound(py)),
            Err(e) => (
                py.None().into_bound(py),
                e.into_value(py).into_bound(py).into_any(),
            ),
        },
        Err(e) => (
            py.None().into_bound(py),
            error::from_handler_error(py, e)
                .into_value(py)
                .into_bound(py)
                .into_any(),
        ),
    };
    let _ = context_module(py)
        .and_then(|m| m.getattr("_settle_future"))
        .and_then(|f| {
            event_loop.bind(py).call_method1(
                "call_soon_threadsafe",
                (f, future.bind(py), value, exception),
            )
        });
}
