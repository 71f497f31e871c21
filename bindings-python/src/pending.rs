//! [`Pending`], the awaitable of an awaited client call on the fast paths
//! of [`crate::client_future`]: completed on the loop's thread, by the
//! loop's inbox ([`crate::loop_dispatch::LoopInbox`]) or, on Linux, its
//! reactor (`loop_reactor.rs`).

use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;
use pyo3::{PyTraverseError, PyVisit};
use tokio_util::sync::CancellationToken;

/// Where a [`Pending`] is.
enum State {
    Running,
    /// `failed` says whether `value` is the exception to raise.
    Done {
        failed: bool,
        value: Py<PyAny>,
    },
    /// Cancelled by the awaiting side, with the message it gave.
    Cancelled(Option<Py<PyAny>>),
}

/// The awaitable of an awaited call on the fast path: the part of the
/// `asyncio.Future` protocol a `Task` uses (`_asyncio_future_blocking`,
/// `get_loop`, `add_done_callback`, `result`, `cancel`, ...), completed by
/// the loop's thread.
///
/// Why not an `asyncio.Future`: completing one schedules each done callback
/// (the task's wake-up) as a handle on the loop, run on the loop's next
/// turn, and its cancellation needs a callback of its own. A `Pending`
/// runs the task's wake-up at once, in the context the task gave: one loop
/// turn per call instead of two. It is only ever completed from the loop's
/// inbox, outside any task, as asyncio's own callbacks are.
///
/// Not user-facing: the `ferromcp` package awaits it at once.
#[pyclass(module = "ferromcp._native")]
pub(crate) struct Pending {
    event_loop: Py<PyAny>,
    state: State,
    /// Done callbacks and the `contextvars.Context` to run each in.
    callbacks: Vec<(Py<PyAny>, Option<Py<PyAny>>)>,
    /// Cancelled when the awaiting side gives up: the core future is dropped.
    stop: CancellationToken,
    /// Set when the awaitable yields itself to the task, as asyncio's
    /// futures do: how a `Task` tells a future from a bare `yield`.
    #[pyo3(get, set, name = "_asyncio_future_blocking")]
    blocking: bool,
}

impl Pending {
    /// A running `Pending` of `event_loop`, and the token its cancellation
    /// (or collection) cancels.
    pub(crate) fn on<'py>(
        event_loop: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, Pending>, CancellationToken)> {
        let stop = CancellationToken::new();
        let pending = Bound::new(
            event_loop.py(),
            Pending::new(event_loop.clone().unbind(), stop.clone()),
        )?;
        Ok((pending, stop))
    }

    fn new(event_loop: Py<PyAny>, stop: CancellationToken) -> Self {
        Pending {
            event_loop,
            state: State::Running,
            callbacks: Vec::new(),
            stop,
            blocking: false,
        }
    }

    /// Delivers the outcome (ignored once cancelled) and runs the done
    /// callbacks now. On the loop's thread.
    pub(crate) fn complete(slf: &Bound<'_, Self>, failed: bool, value: Py<PyAny>) {
        let callbacks = {
            let Ok(mut this) = slf.try_borrow_mut() else {
                return;
            };
            if !matches!(this.state, State::Running) {
                return;
            }
            this.state = State::Done { failed, value };
            std::mem::take(&mut this.callbacks)
        };
        // Borrow released: a callback (the task's wake-up) calls `result()`.
        for (callback, context) in callbacks {
            let called = match context {
                Some(context) => context
                    .bind(slf.py())
                    .call_method1(pyo3::intern!(slf.py(), "run"), (callback, slf)),
                None => callback.bind(slf.py()).call1((slf,)),
            };
            if let Err(e) = called {
                e.write_unraisable(slf.py(), Some(slf.as_any()));
            }
        }
    }

    /// The outcome as Python sees it: `Ok(Some(value))`, `Ok(None)` while
    /// running, or the exception to raise.
    fn outcome(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        match &self.state {
            State::Running => Ok(None),
            State::Done {
                failed: false,
                value,
            } => Ok(Some(value.clone_ref(py))),
            State::Done {
                failed: true,
                value,
            } => Err(PyErr::from_value(value.bind(py).clone())),
            State::Cancelled(message) => Err(cancelled_error(py, message.as_ref())),
        }
    }

    /// Schedules `callback(self)` on the loop, as `asyncio.Future` does for
    /// a callback added once it is done, or when it is cancelled.
    fn schedule(
        slf: &Bound<'_, Self>,
        event_loop: &Py<PyAny>,
        callback: Py<PyAny>,
        context: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let py = slf.py();
        let kwargs = pyo3::types::PyDict::new(py);
        kwargs.set_item("context", context)?;
        event_loop
            .bind(py)
            .call_method("call_soon", (callback, slf), Some(&kwargs))?;
        Ok(())
    }
}

fn cancelled_error(py: Python<'_>, message: Option<&Py<PyAny>>) -> PyErr {
    let args = match message {
        Some(message) => vec![message.clone_ref(py)],
        None => Vec::new(),
    };
    match py
        .import("asyncio")
        .and_then(|asyncio| asyncio.getattr("CancelledError"))
        .and_then(|class| class.call1(pyo3::types::PyTuple::new(py, args)?))
    {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

fn invalid_state(py: Python<'_>, why: &str) -> PyErr {
    match py
        .import("asyncio")
        .and_then(|asyncio| asyncio.getattr("InvalidStateError"))
        .and_then(|class| class.call1((why,)))
    {
        Ok(exception) => PyErr::from_value(exception),
        Err(e) => e,
    }
}

#[pymethods]
impl Pending {
    // A task awaiting a `Pending` and its done callback (the task's wake-up)
    // refer to each other: let the garbage collector see the references, so
    // that an abandoned task (its loop closed mid-call) can be collected.
    fn __traverse__(&self, visit: PyVisit<'_>) -> Result<(), PyTraverseError> {
        visit.call(&self.event_loop)?;
        for (callback, context) in &self.callbacks {
            visit.call(callback)?;
            visit.call(context)?;
        }
        match &self.state {
            State::Done { value, .. } => visit.call(value),
            State::Cancelled(message) => visit.call(message),
            State::Running => Ok(()),
        }
    }

    fn __clear__(&mut self) {
        self.callbacks.clear();
        self.stop.cancel();
    }

    fn __await__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// Yields itself to the task until done, then ends with the result
    /// (`StopIteration(result)`) or raises the call's exception.
    fn __next__(slf: &Bound<'_, Self>) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let mut this = slf.borrow_mut();
        match this.outcome(py)? {
            Some(value) => Err(PyStopIteration::new_err((value,))),
            None => {
                this.blocking = true;
                Ok(slf.clone().into_any().unbind())
            }
        }
    }

    fn get_loop(&self, py: Python<'_>) -> Py<PyAny> {
        self.event_loop.clone_ref(py)
    }

    fn done(&self) -> bool {
        !matches!(self.state, State::Running)
    }

    fn cancelled(&self) -> bool {
        matches!(self.state, State::Cancelled(_))
    }

    fn result(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        self.outcome(py)?
            .ok_or_else(|| invalid_state(py, "Result is not ready."))
    }

    fn exception(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        match &self.state {
            State::Running => Err(invalid_state(py, "Exception is not set.")),
            State::Done {
                failed: true,
                value,
            } => Ok(Some(value.clone_ref(py))),
            State::Done { .. } => Ok(None),
            State::Cancelled(message) => Err(cancelled_error(py, message.as_ref())),
        }
    }

    #[pyo3(signature = (callback, *, context = None))]
    fn add_done_callback(
        slf: &Bound<'_, Self>,
        callback: Py<PyAny>,
        context: Option<Py<PyAny>>,
    ) -> PyResult<()> {
        let mut this = slf.borrow_mut();
        if matches!(this.state, State::Running) {
            this.callbacks.push((callback, context));
            return Ok(());
        }
        let event_loop = this.event_loop.clone_ref(slf.py());
        drop(this);
        Pending::schedule(slf, &event_loop, callback, context)
    }

    fn remove_done_callback(&mut self, py: Python<'_>, callback: &Bound<'_, PyAny>) -> usize {
        let before = self.callbacks.len();
        self.callbacks
            .retain(|(kept, _)| !kept.bind(py).eq(callback).unwrap_or(false));
        before - self.callbacks.len()
    }

    /// Cancels the call (the core request is dropped, which cancels it on
    /// the server) and wakes the awaiting task with `CancelledError`.
    #[pyo3(signature = (msg = None))]
    fn cancel(slf: &Bound<'_, Self>, msg: Option<Py<PyAny>>) -> PyResult<bool> {
        let (event_loop, callbacks) = {
            let mut this = slf.borrow_mut();
            if !matches!(this.state, State::Running) {
                return Ok(false);
            }
            this.state = State::Cancelled(msg);
            this.stop.cancel();
            (
                this.event_loop.clone_ref(slf.py()),
                std::mem::take(&mut this.callbacks),
            )
        };
        for (callback, context) in callbacks {
            Pending::schedule(slf, &event_loop, callback, context)?;
        }
        Ok(true)
    }
}
