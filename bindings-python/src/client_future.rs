//! Running a core future for Python, one of two ways:
//!
//! - **asyncio**: an `asyncio.Future` of the caller's loop is returned at
//!   once; the core future runs on ferromcp's runtime and its outcome is
//!   delivered with `loop.call_soon_threadsafe`, so the loop never blocks.
//!   Cancelling the asyncio future (which is what cancelling the awaiting
//!   task does) drops the core future, and dropping a core request is how
//!   core cancels it (`notifications/cancelled` on stdio, a closed stream
//!   over HTTP).
//! - **blocking** (the synchronous facade): waits with the GIL released,
//!   waking every [`SIGNAL_POLL`] to run signal handlers, so Ctrl-C
//!   interrupts a call (and cancels it) as it would any blocking call.
//!
//! Either way a call's [`Event`]s (progress callbacks) run in order and
//! before its outcome is delivered: core hands a call's notifications to
//! its callbacks before the call returns.

use std::future::Future;
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use ferromcp::Error;

use crate::{error, loop_inbox, workers};

/// How often a blocked call wakes to run Python signal handlers.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Builds the Python value of a successful outcome, with the GIL held.
pub(crate) type ToPy<T> = Box<dyn FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send>;

/// Python code to run while a call is in flight (a progress callback).
/// A call's events run in the order they were queued, all of them before
/// the call's outcome is delivered.
pub(crate) type Event = Box<dyn FnOnce(Python<'_>) + Send>;

/// Runs `work`: as an awaitable of `event_loop` when one is given, else
/// blocking until it ends. Core errors become `ferromcp.errors` exceptions.
pub(crate) fn run<T, F>(
    py: Python<'_>,
    event_loop: Option<&Bound<'_, PyAny>>,
    work: F,
    to_py: ToPy<T>,
) -> PyResult<Py<PyAny>>
where
    F: Future<Output = Result<T, Error>> + Send + 'static,
    T: Send + 'static,
{
    run_with_events(py, event_loop, work, to_py, None)
}

/// [`run`], also running the [`Event`]s queued on `events` while `work`
/// is in flight: on a Python worker thread when awaited (an event reaches
/// the loop through `call_soon_threadsafe` itself), on the calling thread
/// when blocking.
pub(crate) fn run_with_events<T, F>(
    py: Python<'_>,
    event_loop: Option<&Bound<'_, PyAny>>,
    work: F,
    to_py: ToPy<T>,
    events: Option<mpsc::UnboundedReceiver<Event>>,
) -> PyResult<Py<PyAny>>
where
    F: Future<Output = Result<T, Error>> + Send + 'static,
    T: Send + 'static,
{
    match event_loop {
        Some(event_loop) => awaitable(event_loop, work, to_py, events),
        None => blocking(py, work, to_py, events),
    }
}

/// The next queued event; never, without a queue or once it is closed.
async fn next_event(events: &mut Option<mpsc::UnboundedReceiver<Event>>) -> Option<Event> {
    match events {
        Some(queue) => queue.recv().await,
        None => std::future::pending().await,
    }
}

/// The events still queued once the call is done.
fn queued(events: &mut Option<mpsc::UnboundedReceiver<Event>>) -> Vec<Event> {
    let mut left = Vec::new();
    if let Some(queue) = events {
        while let Ok(event) = queue.try_recv() {
            left.push(event);
        }
    }
    left
}

fn awaitable<T, F>(
    event_loop: &Bound<'_, PyAny>,
    work: F,
    to_py: ToPy<T>,
    mut events: Option<mpsc::UnboundedReceiver<Event>>,
) -> PyResult<Py<PyAny>>
where
    F: Future<Output = Result<T, Error>> + Send + 'static,
    T: Send + 'static,
{
    let future = event_loop.call_method0("create_future")?;
    let stop = CancellationToken::new();
    future.call_method1(
        "add_done_callback",
        (CancelOnDone {
            token: stop.clone(),
        },),
    )?;
    let target = future.clone().unbind();
    // A call without progress events can skip the Python worker thread: its
    // outcome goes straight to the loop's thread (see loop_inbox). Calls with
    // events keep the worker path, which orders them before the outcome.
    if events.is_none()
        && let Some(inbox) = loop_inbox::of(event_loop)
    {
        ferromcp::runtime::get().spawn(async move {
            let outcome = tokio::select! {
                biased;
                _ = stop.cancelled() => return,
                outcome = work => outcome,
            };
            inbox.push(Box::new(move |py| {
                let (failed, value) = convert_outcome(py, outcome, to_py);
                settle(target.bind(py), failed, value.bind(py));
            }));
        });
        return Ok(future.unbind());
    }
    let event_loop = event_loop.clone().unbind();
    ferromcp::runtime::get().spawn(async move {
        tokio::pin!(work);
        let outcome = loop {
            tokio::select! {
                biased;
                // The awaiting side gave up: dropping `work` abandons it.
                _ = stop.cancelled() => return,
                Some(event) = next_event(&mut events) => workers::submit(event),
                outcome = &mut work => break outcome,
            }
        };
        // The worker queue is first in, first out: the events run before
        // the outcome is converted and handed to the loop.
        for event in queued(&mut events) {
            workers::submit(event);
        }
        // Converting needs the GIL, which a runtime worker must never wait
        // for: a Python worker thread does it and hands it to the loop.
        workers::submit(move |py| {
            let (failed, value) = convert_outcome(py, outcome, to_py);
            let settle = Settle.into_pyobject(py).map(|s| s.into_any());
            // The loop may be closed already: nobody is waiting then.
            if let Ok(settle) = settle {
                let _ = event_loop
                    .bind(py)
                    .call_method1("call_soon_threadsafe", (settle, target, failed, value));
            }
        });
    });
    Ok(future.unbind())
}

/// The Python value of an outcome: `(false, result)` or `(true, exception)`.
fn convert_outcome<T>(
    py: Python<'_>,
    outcome: Result<T, Error>,
    to_py: ToPy<T>,
) -> (bool, Py<PyAny>) {
    match outcome.map_err(|e| error::to_py_err(py, &e)) {
        Ok(value) => match to_py(py, value) {
            Ok(value) => (false, value),
            Err(e) => (true, e.into_value(py).into_any()),
        },
        Err(e) => (true, e.into_value(py).into_any()),
    }
}

/// Completes the asyncio `future` unless it was cancelled meanwhile.
fn settle(future: &Bound<'_, PyAny>, failed: bool, value: &Bound<'_, PyAny>) {
    if future
        .call_method0("done")
        .and_then(|d| d.is_truthy())
        .unwrap_or(true)
    {
        return;
    }
    let method = if failed {
        "set_exception"
    } else {
        "set_result"
    };
    let _ = future.call_method1(method, (value,));
}

/// What a blocked call woke up for.
enum Woken<T> {
    Event(Event),
    Done(Result<Result<T, Error>, oneshot::error::RecvError>),
    /// Time to run signal handlers.
    Poll,
}

fn blocking<T, F>(
    py: Python<'_>,
    work: F,
    to_py: ToPy<T>,
    mut events: Option<mpsc::UnboundedReceiver<Event>>,
) -> PyResult<Py<PyAny>>
where
    F: Future<Output = Result<T, Error>> + Send + 'static,
    T: Send + 'static,
{
    let runtime = ferromcp::runtime::get();
    let (answer, mut answered) = oneshot::channel();
    let task = runtime.spawn(async move {
        let _ = answer.send(work.await);
    });
    loop {
        let woken = py.detach(|| {
            runtime.block_on(async {
                tokio::select! {
                    biased;
                    Some(event) = next_event(&mut events) => Woken::Event(event),
                    done = &mut answered => Woken::Done(done),
                    _ = tokio::time::sleep(SIGNAL_POLL) => Woken::Poll,
                }
            })
        });
        match woken {
            Woken::Event(event) => event(py),
            Woken::Done(Ok(outcome)) => {
                for event in queued(&mut events) {
                    event(py);
                }
                return outcome
                    .map_err(|e| error::to_py_err(py, &e))
                    .and_then(|value| to_py(py, value));
            }
            Woken::Done(Err(_)) => {
                return Err(PyRuntimeError::new_err(
                    "the ferromcp call ended without an answer (runtime shutting down)",
                ));
            }
            Woken::Poll => {
                if let Err(interrupted) = py.check_signals() {
                    // Dropping the request cancels it in core.
                    task.abort();
                    return Err(interrupted);
                }
            }
        }
    }
}

/// `loop.call_soon_threadsafe(Settle(), future, failed, value)`: completes
/// the asyncio future unless it was cancelled meanwhile.
#[pyclass(module = "ferromcp._native", frozen)]
struct Settle;

#[pymethods]
impl Settle {
    fn __call__(&self, future: &Bound<'_, PyAny>, failed: bool, value: &Bound<'_, PyAny>) {
        settle(future, failed, value);
    }
}

/// The asyncio future's done callback: once it is done (with a result, or
/// cancelled by the awaiting task), the core future has nothing to wait for.
#[pyclass(module = "ferromcp._native", frozen)]
struct CancelOnDone {
    token: CancellationToken,
}

#[pymethods]
impl CancelOnDone {
    fn __call__(&self, _future: &Bound<'_, PyAny>) {
        self.token.cancel();
    }
}
