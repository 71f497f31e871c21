//! Awaited client calls polled by the asyncio loop's own thread and woken
//! through the loop's own selector (core's `runtime::HostReactor`).
//!
//! The loop watches one descriptor per loop (`loop.add_reader`), kept on
//! the loop object like the [`LoopInbox`](crate::loop_dispatch::LoopInbox)
//! and living exactly as long as it. A call is started on the loop's
//! thread, which writes the request; its answer makes that descriptor
//! readable, and the loop's callback ([`LoopReactor::__call__`]) reads it,
//! converts the result and wakes the awaiting task: one wake-up per call,
//! no runtime worker in between. Everything else that wakes a call (a
//! timeout, a cancellation) reaches the loop through the same descriptor.

use std::collections::HashMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Mutex;
use std::task::Poll;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::{PyTraverseError, PyVisit};

use ferromcp::runtime::{HostReactor, Started, TaskId};

use crate::pending::Pending;
use crate::sync::lock;

/// Builds a call's outcome on the loop's thread: `(failed, value)`, as
/// `Pending::complete` takes it.
pub(crate) type Delivery = Box<dyn FnOnce(Python<'_>) -> (bool, Py<PyAny>) + Send>;

/// The loop attribute holding a loop's [`LoopReactor`].
const REACTOR_ATTRIBUTE: &str = "_ferromcp_reactor";

/// The calls in flight on one asyncio loop, and the awaitables they
/// complete. Also the loop's reader callback for the reactor's descriptor.
#[pyclass(module = "ferromcp._native", frozen)]
pub(crate) struct LoopReactor {
    /// `None` output: the call was cancelled and delivers nothing.
    reactor: Mutex<HostReactor<Option<Delivery>>>,
    pending: Mutex<HashMap<TaskId, Py<Pending>>>,
}

impl LoopReactor {
    /// The reactor of `event_loop`, created and registered on first use.
    /// Call it on the loop's thread. `None` when the loop cannot have one
    /// (it takes no attributes, or watches no descriptors; asyncio's loops
    /// and uvloop's do both): the caller then takes another way.
    pub(crate) fn of<'py>(event_loop: &Bound<'py, PyAny>) -> Option<Bound<'py, LoopReactor>> {
        let py = event_loop.py();
        let attribute = pyo3::intern!(py, REACTOR_ATTRIBUTE);
        if let Ok(existing) = event_loop.getattr(attribute) {
            return existing.cast_into::<LoopReactor>().ok();
        }
        let reactor = ferromcp::runtime::host_reactor().ok()?;
        let fd = reactor.fd();
        let this = Bound::new(
            py,
            LoopReactor {
                reactor: Mutex::new(reactor),
                pending: Mutex::new(HashMap::new()),
            },
        )
        .ok()?;
        event_loop
            .call_method1("add_reader", (fd, this.clone()))
            .ok()?;
        if event_loop.setattr(attribute, this.clone()).is_err() {
            let _ = event_loop.call_method1("remove_reader", (fd,));
            return None;
        }
        Some(this)
    }

    /// Starts `call` on the loop's thread: it completes `pending` when it
    /// finishes (now, or on a later turn of the loop).
    pub(crate) fn start<F>(slf: &Bound<'_, Self>, pending: &Bound<'_, Pending>, call: F)
    where
        F: Future<Output = Option<Delivery>> + Send + 'static,
    {
        let py = slf.py();
        let this = slf.get();
        let call = catching_panics(call);
        match py.detach(|| lock(&this.reactor).start(call)) {
            Started::Done(Some(delivery)) => {
                let (failed, value) = delivery(py);
                Pending::complete(pending, failed, value);
            }
            Started::Done(None) => {}
            Started::Running(id) => {
                lock(&this.pending).insert(id, pending.clone().unbind());
            }
        }
    }
}

/// `call`, with a panic in it turned into the call's failure: the awaiting
/// task gets an exception instead of waiting forever.
async fn catching_panics<F>(call: F) -> Option<Delivery>
where
    F: Future<Output = Option<Delivery>> + Send,
{
    let mut call = std::pin::pin!(call);
    std::future::poll_fn(move |cx| {
        match std::panic::catch_unwind(AssertUnwindSafe(|| call.as_mut().poll(cx))) {
            Ok(polled) => polled,
            Err(_) => Poll::Ready(Some(Box::new(|py: Python<'_>| {
                let error = PyRuntimeError::new_err("ferromcp: the call panicked (a bug)");
                (true, error.into_value(py).into_any())
            }) as Delivery)),
        }
    })
    .await
}

#[pymethods]
impl LoopReactor {
    /// The loop's reader callback: polls the calls that can move on and
    /// completes those that finished, waking their tasks.
    fn __call__(slf: &Bound<'_, Self>) {
        let py = slf.py();
        let this = slf.get();
        let finished = py.detach(|| lock(&this.reactor).turn());
        for (id, delivery) in finished {
            // Removed before the task runs: it may start another call.
            let pending = lock(&this.pending).remove(&id);
            if let (Some(pending), Some(delivery)) = (pending, delivery) {
                let (failed, value) = delivery(py);
                Pending::complete(pending.bind(py), failed, value);
            }
        }
    }

    // The loop holds this object, which holds the awaitables of the calls
    // in flight, which hold the loop: let the garbage collector see it, so
    // that a loop closed mid-call can be collected.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        if let Ok(pending) = self.pending.try_lock() {
            for awaitable in pending.values() {
                visit.call(awaitable)?;
            }
        }
        Ok(())
    }

    fn __clear__(&self) {
        lock(&self.pending).clear();
    }
}
