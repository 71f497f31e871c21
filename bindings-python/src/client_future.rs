//! Running a core future for Python, one of two ways:
//!
//! - **asyncio**: an awaitable is returned at once; the core future runs on
//!   ferromcp's runtime and its outcome reaches the caller's loop without
//!   ever blocking it. Cancelling the awaitable (which is what cancelling
//!   the awaiting task does) drops the core future, and dropping a core
//!   request is how core cancels it (`notifications/cancelled` on stdio, a
//!   closed stream over HTTP). Three paths:
//!   - a call without progress events, on Linux, on a loop that can have a
//!     [`LoopReactor`] (asyncio's own loops): the awaitable is a
//!     [`Pending`]; the core future is polled by the loop's thread only,
//!     and its socket is watched by the loop's own selector (through the
//!     reactor's one descriptor): the answer wakes the loop, whose thread
//!     reads it, converts it and wakes the awaiting task directly. One
//!     wake-up per call, as for the loop's own sockets;
//!   - the same elsewhere, on a loop that can have a [`LoopInbox`]: the
//!     core future is started on the loop's thread, which writes the
//!     request itself (`runtime::start_here`), and finished by the runtime
//!     worker that reads the answer; the outcome is queued to the loop's
//!     inbox and delivered by the loop's thread: two wake-ups per call;
//!   - otherwise an `asyncio.Future`, settled through a Python worker
//!     thread and `loop.call_soon_threadsafe` (the worker also runs the
//!     progress events, in order, before the outcome).
//! - **blocking** (the synchronous facade): the core future is polled on
//!   the calling thread with the GIL released (`runtime::block_here`), so
//!   that thread writes the request, sleeps in `poll(2)` on the socket and
//!   reads the answer: one wake-up per call, as for a blocking socket. It
//!   wakes every [`SIGNAL_POLL`] to run signal handlers, so Ctrl-C
//!   interrupts a call (and cancels it) as it would any blocking call.
//!
//! Either way a call's [`Event`]s (progress callbacks) run in order and
//! before its outcome is delivered: core hands a call's notifications to
//! its callbacks before the call returns.

use std::future::Future;
use std::time::Duration;

use pyo3::prelude::*;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use ferromcp::Error;

use crate::loop_dispatch::LoopInbox;
#[cfg(target_os = "linux")]
use crate::loop_reactor::{Delivery, LoopReactor};
use crate::pending::Pending;
use crate::{error, telemetry, workers};

/// How often a blocked call wakes to run Python signal handlers.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// Builds the Python value of a successful outcome, with the GIL held.
pub(crate) type ToPy<T> = Box<dyn FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send>;

/// Python code to run while a call is in flight (a progress callback).
/// A call's events run in the order they were queued, all of them before
/// the call's outcome is delivered.
pub(crate) type Event = Box<dyn FnOnce(Python<'_>) + Send>;

/// A call's events: those queued while it runs, and the last one, which
/// `finish` gives once the call is done (a [`ferromcp::client::CallbackRelay`]
/// keeps the newest update back while the host is behind; it must not be
/// lost, and must run before the outcome).
pub(crate) struct Events {
    pub(crate) queue: mpsc::UnboundedReceiver<Event>,
    pub(crate) finish: Box<dyn FnOnce() -> Option<Event> + Send>,
}

/// A client call's future as every path here takes it: it answers with a
/// core result and may move to any thread.
pub(crate) trait CallFuture<T>: Future<Output = Result<T, Error>> + Send + 'static {}

impl<T, F: Future<Output = Result<T, Error>> + Send + 'static> CallFuture<T> for F {}

/// Runs `work`: as an awaitable of `event_loop` when one is given, else
/// blocking until it ends. Core errors become `ferromcp.errors` exceptions.
pub(crate) fn run<T: Send + 'static, F: CallFuture<T>>(
    py: Python<'_>,
    event_loop: Option<&Bound<'_, PyAny>>,
    work: F,
    to_py: ToPy<T>,
) -> PyResult<Py<PyAny>> {
    run_with_events(py, event_loop, work, to_py, None)
}

/// [`run`], also running the [`Event`]s queued on `events` while `work`
/// is in flight: on a Python worker thread when awaited (an event reaches
/// the loop through `call_soon_threadsafe` itself), on the calling thread
/// when blocking.
pub(crate) fn run_with_events<T: Send + 'static, F: CallFuture<T>>(
    py: Python<'_>,
    event_loop: Option<&Bound<'_, PyAny>>,
    work: F,
    to_py: ToPy<T>,
    events: Option<Events>,
) -> PyResult<Py<PyAny>> {
    // Boxed once here: a call's future is several kilobytes (about 6 KiB
    // for `tools/call`), and each of the moves between here and where it is
    // polled would copy all of it.
    let work: telemetry::Traced<Result<T, Error>> = Box::pin(work);
    // Sent under the caller's OpenTelemetry span, which is current here,
    // on the calling thread, not where core runs it.
    let work = telemetry::under_caller(py, work);
    match event_loop {
        Some(event_loop) => awaitable(event_loop, work, to_py, events),
        None => blocking(py, work, to_py, events),
    }
}

/// The next queued event; never, without a queue or once it is closed.
async fn next_event(events: &mut Option<Events>) -> Option<Event> {
    match events {
        Some(events) => events.queue.recv().await,
        None => std::future::pending().await,
    }
}

/// The events still to run once the call is done: those queued, then the
/// last one kept back.
fn queued(events: Option<Events>) -> Vec<Event> {
    let mut left = Vec::new();
    if let Some(mut events) = events {
        while let Ok(event) = events.queue.try_recv() {
            left.push(event);
        }
        left.extend((events.finish)());
    }
    left
}

fn awaitable<T: Send + 'static, F: CallFuture<T>>(
    event_loop: &Bound<'_, PyAny>,
    work: F,
    to_py: ToPy<T>,
    mut events: Option<Events>,
) -> PyResult<Py<PyAny>> {
    // The fast paths, measured in bench/PERFORMANCE.md ("Python async
    // client"): no Python worker thread, no `asyncio.Future`, no handles
    // scheduled on the loop per call. The fastest: polled by the loop's
    // thread alone, woken by the loop's selector.
    #[cfg(target_os = "linux")]
    if events.is_none()
        && let Some(reactor) = LoopReactor::of(event_loop)
    {
        let (pending, stop) = Pending::on(event_loop)?;
        let call = async move {
            let outcome = unless_stopped(stop, work).await?;
            Some(Box::new(move |py: Python<'_>| convert_outcome(py, outcome, to_py)) as Delivery)
        };
        LoopReactor::start(&reactor, &pending, call);
        return Ok(pending.into_any().unbind());
    }
    // Else the loop's thread writes the request and a runtime worker reads
    // the answer and hands it to the loop.
    if events.is_none()
        && let Some(inbox) = LoopInbox::of(event_loop)
    {
        let (pending, stop) = Pending::on(event_loop)?;
        let target = pending.clone().unbind();
        let call = async move {
            let Some(outcome) = unless_stopped(stop, work).await else {
                return;
            };
            inbox.submit(Box::new(move |py, refused| {
                // Refused: the loop is closed, nobody awaits there.
                if refused.is_none() {
                    let (failed, value) = convert_outcome(py, outcome, to_py);
                    Pending::complete(target.bind(py), failed, value);
                }
            }));
        };
        // The request is written from this thread, without waking a runtime
        // worker; the worker that reads the answer finishes the call.
        event_loop
            .py()
            .detach(|| ferromcp::runtime::start_here(call));
        return Ok(pending.into_any().unbind());
    }
    let future = event_loop.call_method0("create_future")?;
    let stop = CancellationToken::new();
    future.call_method1(
        "add_done_callback",
        (CancelOnDone {
            token: stop.clone(),
        },),
    )?;
    let target = future.clone().unbind();
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
        for event in queued(events) {
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

/// `work`'s output, or `None` once the awaiting side gave up (`stop`):
/// dropping `work` then abandons it.
async fn unless_stopped<F: Future>(stop: CancellationToken, work: F) -> Option<F::Output> {
    tokio::select! {
        biased;
        _ = stop.cancelled() => None,
        output = work => Some(output),
    }
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
    Done(Result<T, Error>),
    /// Time to run signal handlers.
    Poll,
}

fn blocking<T: Send + 'static, F: CallFuture<T>>(
    py: Python<'_>,
    work: F,
    to_py: ToPy<T>,
    mut events: Option<Events>,
) -> PyResult<Py<PyAny>> {
    // Polled here, on the calling thread, which also waits for the call's
    // socket itself (`runtime::block_here`): the answer wakes this thread
    // directly, no runtime worker in between.
    let mut work = std::pin::pin!(work);
    loop {
        let woken = py.detach(|| {
            let next = async {
                tokio::select! {
                    biased;
                    Some(event) = next_event(&mut events) => Woken::Event(event),
                    done = &mut work => Woken::Done(done),
                }
            };
            ferromcp::runtime::block_here_for(next, SIGNAL_POLL).unwrap_or(Woken::Poll)
        });
        match woken {
            Woken::Event(event) => event(py),
            Woken::Done(outcome) => {
                for event in queued(events) {
                    event(py);
                }
                return outcome
                    .map_err(|e| error::to_py_err(py, &e))
                    .and_then(|value| to_py(py, value));
            }
            Woken::Poll => {
                // Returning drops the request, which cancels it in core.
                py.check_signals()?;
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
