//! The one adapter that runs a Python callable behind core's handler
//! boundary, for every kind of output (`O: FromHost`: a tool, resource,
//! prompt or completion output, or a client's answer to the server).
//!
//! The native calling convention is `callable(input, ctx)`; the
//! pure-Python layer adapts user functions to it (keyword arguments,
//! context injection).
//!
//! - A sync `def` runs on the Python worker threads of [`workers`] (never
//!   on a runtime worker).
//! - An `async def` is queued for the asyncio loop given to `start_*`
//!   ([`LoopDispatcher`]: no GIL on the runtime side, one loop wake-up per
//!   batch), which calls it and runs the coroutine as an `asyncio.Task`;
//!   the task's done callback answers a core [`Responder`] that the core
//!   awaits (with the other answers of that loop turn, [`outbox`]). If the core stops waiting (cancellation, closed connection)
//!   the task is cancelled, or never started if it was still queued.
//! - What the callable returned becomes `O` by core's rule for that kind
//!   ([`FromHost`]); only a tool may also return a `ferromcp.ToolResult`.
//!
//! The per-kind files only say which callable to run with which input:
//! `tools.rs`, `primitives.rs` (resources, prompts, completion), `auth.rs`
//! (a token verifier), and for a client `client.rs` (answers to the
//! server's input requests) and `oauth.rs` (OAuth callbacks). Every
//! callable is found in the caller's [`PyRefs`].

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use serde_json::Value;

use ferromcp::server::{FromHost, HandlerError, RequestContext, Responder, ToolOutput};
use ferromcp::telemetry::TraceContext;

use crate::client_middleware::PyClientCall;
use crate::context::PyContext;
use crate::loop_dispatch::{LoopDispatcher, get_running_loop};
use crate::middleware::{LinkCall, PyMiddlewareCall};
use crate::refs::{HandlerKey, PyRefs};
use crate::sync::lock;
use crate::tool_result::PyToolResult;
use crate::{error, outbox, telemetry, values, workers};

const INTERPRETER_GONE: &str = "the Python interpreter is shutting down";

/// An output kind a Python callable may produce: core's [`FromHost`] rule,
/// plus the host objects that stand for a whole result of that kind.
pub(crate) trait PyOutput: FromHost {
    /// A Python object that is already a complete output (not converted
    /// through JSON), if `returned` is one.
    fn from_native_object(_returned: &Bound<'_, PyAny>) -> Option<Self> {
        None
    }
}

impl PyOutput for ToolOutput {
    fn from_native_object(returned: &Bound<'_, PyAny>) -> Option<Self> {
        returned
            .cast::<PyToolResult>()
            .ok()
            .map(|result| result.get().output())
    }
}

/// `bytes` read from a resource are its binary content (core base64-encodes
/// it as a `blob` item with the registered MIME type).
impl PyOutput for ferromcp::server::ResourceOutput {
    fn from_native_object(returned: &Bound<'_, PyAny>) -> Option<Self> {
        use pyo3::types::{PyByteArray, PyBytes};
        if let Ok(bytes) = returned.cast::<PyBytes>() {
            return Some(Self::Blob(bytes.as_bytes().to_vec()));
        }
        returned
            .cast::<PyByteArray>()
            .ok()
            .map(|bytes| Self::Blob(bytes.to_vec()))
    }
}
impl PyOutput for ferromcp::server::PromptOutput {}
impl PyOutput for ferromcp::server::CompletionOutput {}
impl PyOutput for ferromcp::protocol::ElicitResult {}
impl PyOutput for ferromcp::protocol::CreateMessageResult {}
impl PyOutput for ferromcp::protocol::ListRootsResult {}
impl PyOutput for ferromcp::server::auth::HostVerdict {}

/// One invocation of a registered Python callable, moved onto whichever
/// thread runs it.
pub(crate) struct HostCall {
    /// Which callable, looked up in `refs` when the call runs (so a
    /// cleared server answers with an error instead of calling into Python).
    pub(crate) key: HandlerKey,
    pub(crate) refs: Arc<PyRefs>,
    /// What the callable gets as its second argument (see [`HostCtx`]).
    pub(crate) ctx: HostCtx,
    /// The callable's first argument.
    pub(crate) input: Value,
    /// `async def`: schedule the coroutine on the serving loop.
    pub(crate) is_async: bool,
}

/// The second argument of a callable, built when it is called.
pub(crate) enum HostCtx {
    /// `None`: callbacks that serve no request, such as a client's.
    None,
    /// The request's context (`ferromcp._native.Context`).
    Request(RequestContext),
    /// A middleware link's call: the request's meta and the rest of the
    /// chain (`ferromcp._native.MiddlewareCall`). Boxed: the request's
    /// meta is large, and every other call would carry its size.
    Link(Box<LinkCall>),
    /// A client middleware link's call (`ferromcp._native.ClientCall`).
    ClientLink(Box<PyClientCall>),
}

impl HostCtx {
    /// The span the call serves (its server span while traced), which the
    /// callable runs under ([`telemetry::attach`]).
    fn trace(&self) -> Option<TraceContext> {
        if !telemetry::on() {
            return None;
        }
        match self {
            HostCtx::Request(ctx) => ctx.meta().trace.clone(),
            HostCtx::Link(call) => call.trace().cloned(),
            HostCtx::None | HostCtx::ClientLink(_) => None,
        }
    }
}

impl HostCall {
    /// Runs the callable and turns what it returned into `O`.
    pub(crate) async fn run<O: PyOutput>(self) -> Result<O, HandlerError> {
        if self.is_async {
            self.run_async().await
        } else {
            self.run_sync().await
        }
    }

    async fn run_sync<O: PyOutput>(mut self) -> Result<O, HandlerError> {
        with_gil(move |py| {
            let trace = self.ctx.trace();
            let returned = {
                let _attached = telemetry::attach(py, trace.as_ref());
                self.invoke(py)
            };
            returned.and_then(|returned| output::<O>(py, &self.refs, &returned))
        })
        .await
        .and_then(|result| result)
    }

    async fn run_async<O: PyOutput>(self) -> Result<O, HandlerError> {
        let Some(dispatcher) = self.refs.loop_dispatcher() else {
            return Err(HandlerError::tool(format!(
                "{} {:?} is async but no asyncio loop is serving: use `server.run()` or `await server.serve()`",
                self.key.0.noun(),
                self.key.1
            )));
        };
        let (responder, receiver) = Responder::<O>::new();
        let task = Arc::new(Mutex::new(TaskState::Queued));
        let job_task = task.clone();
        let first = dispatcher.queue(Box::new(move |py, refused| match refused {
            None => self.start_task(py, responder, &job_task),
            Some(reason) => {
                responder.respond(Err(error::handler_error(py, reason.clone_ref(py))));
            }
        }));
        let mut pending = CancelOnDrop {
            task: Some(task),
            dispatcher: dispatcher.clone(),
        };
        if first {
            // The first call of a batch wakes the loop, after the runtime
            // has run whatever else was ready (the rest of a burst of
            // requests), so they join the batch. Woken even if this
            // future is dropped meanwhile: the batch holds other calls.
            let wake = WakeOnDrop(dispatcher);
            tokio::task::yield_now().await;
            drop(wake);
        }
        let result = receiver.wait().await;
        pending.task = None;
        result
    }

    /// Calls the callable: the result for a sync one, a coroutine for an
    /// async one. Called once: the context moves into its Python object.
    fn invoke<'py>(&mut self, py: Python<'py>) -> Result<Bound<'py, PyAny>, HandlerError> {
        let Some(callable) = self.refs.handler(py, &self.key) else {
            return Err(HandlerError::tool(format!(
                "{} {:?} has no Python handler any more (the server was cleared)",
                self.key.0.noun(),
                self.key.1
            )));
        };
        let input = values::to_python(py, &self.input).map_err(|e| error::handler_error(py, e))?;
        let ctx = match std::mem::replace(&mut self.ctx, HostCtx::None) {
            HostCtx::Request(ctx) => Py::new(py, PyContext::new(ctx))
                .map_err(|e| error::handler_error(py, e))?
                .into_any(),
            HostCtx::Link(call) => Py::new(py, PyMiddlewareCall::from(*call))
                .map_err(|e| error::handler_error(py, e))?
                .into_any(),
            HostCtx::ClientLink(call) => Py::new(py, *call)
                .map_err(|e| error::handler_error(py, e))?
                .into_any(),
            HostCtx::None => py.None(),
        };
        callable
            .bind(py)
            .call1((input, ctx))
            .map_err(|e| error::handler_error(py, e))
    }

    /// On the loop thread: creates the coroutine and its `asyncio.Task`,
    /// whose done callback answers `responder`; nothing if the request was
    /// dropped while queued (a cancelled request's handler never starts).
    fn start_task<O: PyOutput>(
        mut self,
        py: Python<'_>,
        responder: Responder<O>,
        state: &Arc<Mutex<TaskState>>,
    ) {
        if matches!(*lock(state), TaskState::Dropped) {
            return;
        }
        // The task is created under the span: it runs in a copy of the
        // current context.
        let trace = self.ctx.trace();
        let _attached = telemetry::attach(py, trace.as_ref());
        let coroutine = match self.invoke(py) {
            Ok(coroutine) => coroutine,
            Err(e) => {
                responder.respond(Err(e));
                return;
            }
        };
        let refs = self.refs.clone();
        let settled_state = state.clone();
        let settle: Settle = Box::new(move |py, outcome| {
            let result = match outcome {
                Outcome::Cancelled => Err(HandlerError::tool("the handler was cancelled")),
                Outcome::Returned(returned) => output::<O>(py, &refs, &returned),
                Outcome::Raised(err) => Err(error::handler_error(py, err)),
            };
            // Drops the task reference here, holding the GIL.
            *lock(&settled_state) = TaskState::Done;
            // With the other answers of this loop turn: see `outbox`.
            outbox::deliver_after_this_turn(
                py,
                Box::new(move || {
                    responder.respond(result);
                }),
            );
        });
        // `loop.create_task` runs the coroutine in a copy of the current
        // context, as `run_coroutine_threadsafe` did.
        let started = get_running_loop(py)
            .and_then(|f| f.call0())
            .and_then(|event_loop| event_loop.call_method1("create_task", (&coroutine,)));
        let task = match started {
            Ok(task) => task,
            Err(e) => {
                // Not awaited, so Python would warn about it: close it.
                let _ = coroutine.call_method0("close");
                settle(py, Outcome::Raised(e));
                return;
            }
        };
        let callback = ResponderCallback {
            settle: Mutex::new(Some(settle)),
        };
        if task.call_method1("add_done_callback", (callback,)).is_err() {
            // The callback, and the responder in it, are dropped: the call
            // fails with a handler error.
            let _ = task.call_method0("cancel");
            return;
        }
        let mut slot = lock(state);
        match *slot {
            // Dropped while the task was being created.
            TaskState::Dropped => {
                drop(slot);
                let _ = task.call_method0("cancel");
            }
            TaskState::Queued => *slot = TaskState::Running(task.unbind()),
            // Settled already (it cannot be: callbacks run on a later turn).
            _ => {}
        }
    }
}

thread_local! {
    /// How many plain middleware links on this thread are running the rest
    /// of their chain here ([`inline`]).
    static INLINE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// Runs `f`, in which the plain callables [`with_gil`] is asked to run
/// (plain links and handlers) run on this thread instead of a worker's.
///
/// For a plain middleware link waiting, on its worker thread, for the rest
/// of its chain: queuing the rest's plain callables to the workers would
/// take a second worker per request while the first waits, and with as
/// many requests at once as there are workers none would ever run. Here a
/// request holds one worker whatever its chain, and the link's thread-local
/// state is the handler's.
pub(crate) fn inline<T>(f: impl FnOnce() -> T) -> T {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            INLINE.with(|depth| depth.set(depth.get().saturating_sub(1)));
        }
    }
    INLINE.with(|depth| depth.set(depth.get() + 1));
    let _leave = Leave;
    f()
}

/// Runs `f` on a Python worker thread (see [`workers`]) and waits for its
/// answer without blocking the runtime; on this thread at once, inside
/// [`inline`]. Plain callables run here, a visibility rule too
/// (`visibility.rs`).
///
/// `f` does not run at all if the caller stopped waiting before its turn
/// came (a cancelled request's handler never starts).
pub(crate) async fn with_gil<T: Send + 'static>(
    f: impl FnOnce(Python<'_>) -> T + Send + 'static,
) -> Result<T, HandlerError> {
    if INLINE.with(|depth| depth.get() > 0) {
        return Python::try_attach(|py| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(py)))
                .map_err(|_| HandlerError::tool("the Python handler call panicked in ferromcp"))
        })
        .unwrap_or_else(|| Err(HandlerError::tool(INTERPRETER_GONE)));
    }
    let (answer, answered) = tokio::sync::oneshot::channel::<Result<T, HandlerError>>();
    workers::submit(move |py| {
        if answer.is_closed() {
            return;
        }
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(py)))
            .map_err(|_| HandlerError::tool("the Python handler call panicked in ferromcp"));
        let _ = answer.send(outcome);
    });
    // Dropped unanswered: the interpreter is shutting down.
    answered
        .await
        .unwrap_or_else(|_| Err(HandlerError::tool(INTERPRETER_GONE)))
}

/// Turns what a callable returned into `O`: a native result object as is,
/// anything else through JSON and core's rule for the kind.
fn output<O: PyOutput>(
    py: Python<'_>,
    refs: &PyRefs,
    returned: &Bound<'_, PyAny>,
) -> Result<O, HandlerError> {
    if let Some(native) = O::from_native_object(returned) {
        return Ok(native);
    }
    let default = refs.json_default(py);
    let value =
        values::from_python(returned, default.as_ref().map(|d| d.bind(py))).map_err(|e| {
            HandlerError::tool(format!(
                "invalid {} result: {}",
                O::KIND,
                error::describe(py, &e)
            ))
        })?;
    O::from_host(value).map_err(HandlerError::from)
}

/// Wakes the serving loop when dropped: after the yield of the batch's
/// first call, or if that call is dropped during it.
struct WakeOnDrop(Arc<LoopDispatcher>);

impl Drop for WakeOnDrop {
    fn drop(&mut self) {
        self.0.wake();
    }
}

/// Where an async call's `asyncio.Task` is.
enum TaskState {
    /// Waiting in the loop's queue.
    Queued,
    Running(Py<PyAny>),
    /// The core stopped waiting (the client cancelled, the connection
    /// closed): do not start it.
    Dropped,
    Done,
}

/// Cancels the call's task if the core stops waiting for it.
struct CancelOnDrop {
    task: Option<Arc<Mutex<TaskState>>>,
    dispatcher: Arc<LoopDispatcher>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(state) = self.task.take() else {
            return;
        };
        let previous = std::mem::replace(&mut *lock(&state), TaskState::Dropped);
        if let TaskState::Running(task) = previous {
            // `Task.cancel` is not thread-safe: the loop thread runs it.
            self.dispatcher.submit(Box::new(move |py, _refused| {
                let _ = task.bind(py).call_method0("cancel");
            }));
        }
    }
}

/// How a scheduled coroutine ended.
enum Outcome<'py> {
    Cancelled,
    Returned(Bound<'py, PyAny>),
    Raised(PyErr),
}

/// Answers the call's typed [`Responder`]; boxed so the done callback (a
/// pyclass, which cannot be generic) serves every output kind.
type Settle = Box<dyn for<'py> FnOnce(Python<'py>, Outcome<'py>) + Send>;

/// The done callback of a scheduled coroutine: delivers its outcome.
#[pyclass(module = "ferromcp._native", frozen)]
struct ResponderCallback {
    settle: Mutex<Option<Settle>>,
}

#[pymethods]
impl ResponderCallback {
    fn __call__(&self, py: Python<'_>, future: &Bound<'_, PyAny>) {
        let outcome = match future.call_method0("cancelled").and_then(|c| c.is_truthy()) {
            Ok(true) => Outcome::Cancelled,
            _ => match future.call_method0("result") {
                Ok(returned) => Outcome::Returned(returned),
                Err(e) => Outcome::Raised(e),
            },
        };
        let settle = lock(&self.settle).take();
        if let Some(settle) = settle {
            settle(py, outcome);
        }
    }
}
