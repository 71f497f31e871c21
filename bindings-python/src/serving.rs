//! A running transport (`ferromcp._native.Serving`) and the blocking wait
//! that keeps Ctrl-C working while the GIL is released.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use tokio_util::sync::CancellationToken;

use ferromcp::Error;

use crate::error;

/// How often a blocked Python thread wakes to run signal handlers: short
/// enough that Ctrl-C feels immediate, long enough to cost nothing.
const SIGNAL_POLL: Duration = Duration::from_millis(100);

/// How long a stop waits for the transport to wind down before giving the
/// thread back to Python: a little more than core's own grace period (10 s
/// for requests in flight on either transport), so that requests core lets
/// finish do finish.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(12);

#[derive(Default)]
struct State {
    finished: bool,
    error: Option<Arc<Error>>,
}

/// Shared between the serving task and every Python handle to it.
pub(crate) struct ServingInner {
    state: Mutex<State>,
    changed: Condvar,
    stop: CancellationToken,
    local_addr: Option<SocketAddr>,
    /// How long a stop waits: [`STOP_GRACE`] plus the HTTP drain delay.
    stop_grace: Duration,
}

impl ServingInner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Two plain fields, always written together: never inconsistent.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn finish(&self, result: Result<(), Error>) {
        let mut state = self.lock();
        state.finished = true;
        state.error = result.err().map(Arc::new);
        self.changed.notify_all();
    }

    /// Blocks (without the GIL) up to `timeout`; true once finished.
    fn wait_finished(&self, timeout: Duration) -> bool {
        let state = self.lock();
        let (state, _) = self
            .changed
            .wait_timeout_while(state, timeout, |s| !s.finished)
            .unwrap_or_else(|p| p.into_inner());
        state.finished
    }

    fn outcome(&self, py: Python<'_>) -> PyResult<()> {
        match &self.lock().error {
            Some(e) => Err(error::to_py_err(py, e)),
            None => Ok(()),
        }
    }

    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }

    /// Waits for the end, running Python signal handlers every
    /// [`SIGNAL_POLL`]; an exception from a handler (KeyboardInterrupt)
    /// ends the wait. Returns whether the transport finished in time.
    pub(crate) fn wait(&self, py: Python<'_>, timeout: Option<Duration>) -> PyResult<bool> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let slice = deadline.map_or(SIGNAL_POLL, |d| {
                d.saturating_duration_since(Instant::now()).min(SIGNAL_POLL)
            });
            if py.detach(|| self.wait_finished(slice)) {
                return self.outcome(py).map(|()| true);
            }
            py.check_signals()?;
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(false);
            }
        }
    }

    /// Serves until the end; on an interrupt stops the transport, lets it
    /// wind down, and re-raises.
    fn block(&self, py: Python<'_>) -> PyResult<()> {
        self.wait(py, None).map(|_| ()).inspect_err(|_| {
            self.stop();
            py.detach(|| self.wait_finished(self.stop_grace));
        })
    }
}

/// Spawns `serve` on the shared runtime. `stop` must end it (after
/// `drain_delay`, serving on meanwhile); `on_finish` runs with the GIL once
/// it has ended, before waiters are woken, so that Python references it
/// releases are gone by the time `wait()` returns.
pub(crate) fn spawn(
    serve: impl Future<Output = Result<(), Error>> + Send + 'static,
    stop: CancellationToken,
    local_addr: Option<SocketAddr>,
    drain_delay: Duration,
    on_finish: impl FnOnce(Python<'_>) + Send + 'static,
) -> Arc<ServingInner> {
    let inner = Arc::new(ServingInner {
        state: Mutex::new(State::default()),
        changed: Condvar::new(),
        stop,
        local_addr,
        stop_grace: STOP_GRACE + drain_delay,
    });
    let task_inner = inner.clone();
    ferromcp::runtime::get().spawn(async move {
        let result = serve.await;
        // Off the worker: taking the GIL may wait. If the interpreter is
        // gone, the closure and its references are simply dropped.
        let _ = tokio::task::spawn_blocking(move || Python::try_attach(on_finish)).await;
        task_inner.finish(result);
    });
    inner
}

/// A transport serving in the background, returned by
/// `Server.start(...)` (`start_stdio()` / `start_http()` natively).
///
/// >>> import ferromcp
/// >>> serving = ferromcp.Server("demo").start("http", port=0)
/// >>> serving.port > 0, serving.done
/// (True, False)
/// >>> serving.stop(); serving.wait(10), serving.done
/// (True, True)
#[pyclass(module = "ferromcp._native", name = "Serving", frozen)]
pub(crate) struct PyServing {
    pub(crate) inner: Arc<ServingInner>,
}

#[pymethods]
impl PyServing {
    /// Asks the transport to stop (returns at once; `wait()` for the end).
    ///
    /// >>> import ferromcp
    /// >>> serving = ferromcp.Server("demo").start("http", port=0)
    /// >>> serving.stop()
    /// >>> serving.wait(10)
    /// True
    fn stop(&self) {
        self.inner.stop();
    }

    /// Blocks until the transport ends or `timeout` seconds pass, with the
    /// GIL released. Returns whether it ended; raises the error that ended
    /// it, or KeyboardInterrupt on Ctrl-C (main thread only).
    ///
    /// >>> import ferromcp
    /// >>> serving = ferromcp.Server("demo").start("http", port=0)
    /// >>> serving.wait(0.05)  # still serving
    /// False
    /// >>> serving.stop(); serving.wait(10)
    /// True
    #[pyo3(signature = (timeout=None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<bool> {
        let timeout = timeout
            .map(Duration::try_from_secs_f64)
            .transpose()
            .map_err(|e| PyValueError::new_err(format!("invalid timeout: {e}")))?;
        self.inner.wait(py, timeout)
    }

    /// Private, for `Server.run()`: serves in the foreground until the
    /// transport ends, with the GIL released. Ctrl-C (or a signal handler
    /// raising) stops the transport, lets it wind down and re-raises.
    #[pyo3(name = "_block")]
    fn block(&self, py: Python<'_>) -> PyResult<()> {
        self.inner.block(py)
    }

    /// True once the transport has ended.
    #[getter]
    fn done(&self) -> bool {
        self.inner.lock().finished
    }

    /// `(host, port)` an HTTP transport listens on; `None` for stdio.
    #[getter]
    fn address(&self) -> Option<(String, u16)> {
        self.inner
            .local_addr
            .map(|addr| (addr.ip().to_string(), addr.port()))
    }

    /// The TCP port an HTTP transport listens on (useful after binding
    /// port 0); `None` for stdio.
    #[getter]
    fn port(&self) -> Option<u16> {
        self.inner.local_addr.map(|addr| addr.port())
    }

    fn __repr__(&self) -> String {
        let state = if self.done() { "done" } else { "running" };
        match self.inner.local_addr {
            Some(addr) => format!("<ferromcp.Serving http://{addr}/mcp {state}>"),
            None => format!("<ferromcp.Serving stdio {state}>"),
        }
    }
}
