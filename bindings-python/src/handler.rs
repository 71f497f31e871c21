//! Python callables behind core's handler boundary.
//!
//! The native calling convention is `handler(arguments: dict, ctx: Context)`;
//! the pure-Python layer adapts user functions to it (keyword arguments,
//! context injection, return-value normalisation).
//!
//! - Sync handlers run on the Python worker threads of [`workers`] (never
//!   on a runtime worker).
//! - Async handlers are scheduled on the asyncio loop given to `start_*`
//!   with `asyncio.run_coroutine_threadsafe`; the loop's done callback
//!   completes a [`Completion`] that the core awaits.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use pyo3::PyTraverseError;
use pyo3::gc::PyVisit;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use serde_json::Value;

use ferromcp::server::{
    BoxFuture, Handler, HandlerError, HandlerResult, RequestContext, Responder, ToolOutput,
};

use crate::context::PyContext;
use crate::tool_result::PyToolResult;
use crate::{convert, error, workers};

const INTERPRETER_GONE: &str = "the Python interpreter is shutting down";

/// Every Python object a server holds, in one place so the garbage
/// collector can see (and break) cycles through them.
///
/// Lock discipline: these mutexes are only ever held for a map operation,
/// and nothing acquires the GIL while holding one, so a thread holding the
/// GIL can always take them. `traverse` still uses `try_lock` because a GC
/// pass must never block.
#[derive(Default)]
pub(crate) struct PyRefs {
    handlers: Mutex<HashMap<String, Py<PyAny>>>,
    event_loop: Mutex<Option<Py<PyAny>>>,
    json_default: Mutex<Option<Py<PyAny>>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // The guarded values are plain references; a panic while holding the
    // lock cannot leave them half-updated.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl PyRefs {
    pub(crate) fn new(json_default: Option<Py<PyAny>>) -> Self {
        PyRefs {
            json_default: Mutex::new(json_default),
            ..PyRefs::default()
        }
    }

    pub(crate) fn set_handler(&self, name: &str, handler: Py<PyAny>) {
        lock(&self.handlers).insert(name.to_owned(), handler);
    }

    pub(crate) fn remove_handler(&self, name: &str) {
        lock(&self.handlers).remove(name);
    }

    fn handler(&self, py: Python<'_>, name: &str) -> Option<Py<PyAny>> {
        lock(&self.handlers).get(name).map(|h| h.clone_ref(py))
    }

    pub(crate) fn set_event_loop(&self, event_loop: Py<PyAny>) {
        *lock(&self.event_loop) = Some(event_loop);
    }

    /// Forgets `event_loop` unless another serve call installed a newer one.
    pub(crate) fn release_event_loop(&self, event_loop: &Py<PyAny>) {
        let mut slot = lock(&self.event_loop);
        if slot
            .as_ref()
            .is_some_and(|l| l.as_ptr() == event_loop.as_ptr())
        {
            *slot = None;
        }
    }

    fn event_loop(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        lock(&self.event_loop).as_ref().map(|l| l.clone_ref(py))
    }

    fn json_default(&self, py: Python<'_>) -> Option<Py<PyAny>> {
        lock(&self.json_default).as_ref().map(|d| d.clone_ref(py))
    }

    pub(crate) fn traverse(&self, visit: &PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(handlers) = self.handlers.try_lock() {
            for handler in handlers.values() {
                visit.call(handler)?;
            }
        }
        if let Ok(event_loop) = self.event_loop.try_lock() {
            visit.call(&*event_loop)?;
        }
        if let Ok(default) = self.json_default.try_lock() {
            visit.call(&*default)?;
        }
        Ok(())
    }

    /// Drops every reference (GC `__clear__`); tools then answer with a
    /// tool error instead of calling into Python.
    pub(crate) fn clear(&self) {
        let handlers = std::mem::take(&mut *lock(&self.handlers));
        let event_loop = lock(&self.event_loop).take();
        let default = lock(&self.json_default).take();
        // Dropped after the locks are released: a decref may run arbitrary
        // Python code (finalizers) that could re-enter this server.
        drop((handlers, event_loop, default));
    }
}

/// One registered Python tool.
pub(crate) struct PyToolHandler {
    /// Shared with every call, so a call does not copy it.
    pub(crate) name: Arc<str>,
    pub(crate) is_async: bool,
    pub(crate) refs: Arc<PyRefs>,
}

impl Handler<Value, ToolOutput> for PyToolHandler {
    fn call(&self, ctx: RequestContext, arguments: Value) -> BoxFuture<HandlerResult> {
        let call = Call {
            name: self.name.clone(),
            refs: self.refs.clone(),
            ctx,
            arguments,
        };
        if self.is_async {
            Box::pin(call.run_async())
        } else {
            Box::pin(call.run_sync())
        }
    }
}

/// One invocation, moved onto whichever thread runs it.
struct Call {
    name: Arc<str>,
    refs: Arc<PyRefs>,
    ctx: RequestContext,
    arguments: Value,
}

impl Call {
    async fn run_sync(self) -> HandlerResult {
        with_gil(move |py| {
            self.invoke(py)
                .and_then(|returned| output(py, &self.refs, &returned))
        })
        .await
        .and_then(|result| result)
    }

    async fn run_async(self) -> HandlerResult {
        let (completion, receiver) = Responder::new();
        let future = with_gil(move |py| self.schedule(py, completion)).await??;
        let mut pending = CancelOnDrop(Some(future));
        let result = receiver.wait().await;
        pending.0 = None;
        result
    }

    /// Calls the handler: the result for a sync handler, a coroutine for an
    /// async one.
    fn invoke<'py>(&self, py: Python<'py>) -> Result<Bound<'py, PyAny>, HandlerError> {
        let Some(handler) = self.refs.handler(py, &self.name) else {
            return Err(HandlerError::tool(format!(
                "tool {:?} has no Python handler any more (the server was cleared)",
                self.name
            )));
        };
        let arguments =
            convert::to_python(py, &self.arguments).map_err(|e| error::handler_error(py, e))?;
        let ctx = Py::new(py, PyContext::new(self.ctx.clone()))
            .map_err(|e| error::handler_error(py, e))?;
        handler
            .bind(py)
            .call1((arguments, ctx))
            .map_err(|e| error::handler_error(py, e))
    }

    /// Starts the coroutine on the serving asyncio loop; returns its
    /// `concurrent.futures.Future`.
    fn schedule(self, py: Python<'_>, completion: Responder) -> Result<Py<PyAny>, HandlerError> {
        let Some(event_loop) = self.refs.event_loop(py) else {
            return Err(HandlerError::tool(format!(
                "tool {:?} is async but no asyncio loop is serving: use `server.run()` or `await server.serve()`",
                self.name
            )));
        };
        let coroutine = self.invoke(py)?;
        let scheduled = run_coroutine_threadsafe(py)
            .and_then(|f| f.call1((&coroutine, event_loop)))
            .and_then(|future| {
                let callback = Py::new(
                    py,
                    CompletionCallback {
                        completion: Mutex::new(Some(completion)),
                        refs: self.refs.clone(),
                    },
                )?;
                future.call_method1("add_done_callback", (callback,))?;
                Ok(future.unbind())
            });
        scheduled.map_err(|e| {
            // The loop refused it (closed): close the coroutine so Python does
            // not warn that it was never awaited.
            let _ = coroutine.call_method0("close");
            error::handler_error(py, e)
        })
    }
}

/// Runs `f` on a Python worker thread (see [`workers`]) and waits for its
/// answer without blocking the runtime.
async fn with_gil<T: Send + 'static>(
    f: impl FnOnce(Python<'_>) -> T + Send + 'static,
) -> Result<T, HandlerError> {
    let (answer, answered) = tokio::sync::oneshot::channel();
    workers::submit(move |py| {
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(py)))
            .map_err(|_| HandlerError::tool("the Python handler call panicked in ferromcp"));
        // The request may have been abandoned meanwhile; nobody to tell.
        let _ = answer.send(outcome);
    });
    // Dropped unanswered: the interpreter is shutting down.
    answered
        .await
        .unwrap_or_else(|_| Err(HandlerError::tool(INTERPRETER_GONE)))
}

fn run_coroutine_threadsafe(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static FUNCTION: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    FUNCTION
        .get_or_try_init(py, || {
            Ok(py
                .import("asyncio")?
                .getattr("run_coroutine_threadsafe")?
                .unbind())
        })
        .map(|f| f.bind(py))
}

/// Turns what a handler returned into core's [`ToolOutput`].
fn output(py: Python<'_>, refs: &PyRefs, returned: &Bound<'_, PyAny>) -> HandlerResult {
    if let Ok(result) = returned.cast::<PyToolResult>() {
        return Ok(ToolOutput::Result(result.get().result().clone()));
    }
    let default = refs.json_default(py);
    let value =
        convert::from_python(returned, default.as_ref().map(|d| d.bind(py))).map_err(|e| {
            HandlerError::tool(format!("invalid tool result: {}", error::describe(py, &e)))
        })?;
    Ok(ToolOutput::Value(value))
}

/// Cancels the scheduled coroutine if the core stops waiting for it (the
/// client cancelled, the connection closed).
struct CancelOnDrop(Option<Py<PyAny>>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(future) = self.0.take() {
            // Dropped on a runtime worker: taking the GIL there could stall
            // other requests, so cancel from a Python worker.
            workers::submit(move |py| {
                let _ = future.bind(py).call_method0("cancel");
            });
        }
    }
}

/// The done callback of a scheduled coroutine: delivers its outcome.
#[pyclass(module = "ferromcp._native", frozen)]
struct CompletionCallback {
    completion: Mutex<Option<Responder>>,
    refs: Arc<PyRefs>,
}

#[pymethods]
impl CompletionCallback {
    fn __call__(&self, py: Python<'_>, future: &Bound<'_, PyAny>) {
        let outcome = match future.call_method0("cancelled").and_then(|c| c.is_truthy()) {
            Ok(true) => Err(HandlerError::tool("the tool handler was cancelled")),
            _ => match future.call_method0("result") {
                Ok(returned) => output(py, &self.refs, &returned),
                Err(e) => Err(error::handler_error(py, e)),
            },
        };
        if let Some(completion) = lock(&self.completion).take() {
            completion.respond(outcome);
        }
    }
}
