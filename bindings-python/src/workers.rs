//! The threads that run Python code for the core: core's
//! [`HostThreads`](ferromcp::host::threads::HostThreads) pool, with every
//! batch run under one GIL acquisition. A thread that holds the GIL drains
//! whatever was queued meanwhile, so a burst of requests costs one wake-up
//! and one GIL hand-over instead of one per call. Handlers that block
//! (sleep, wait on a socket; CPython releases the GIL there) get more
//! threads, up to `min(32, cpus + 4)`, from the pool's stall watcher.

use std::sync::LazyLock;
use std::time::Duration;

use ferromcp::host::threads::{HostThreads, default_max_threads};
use pyo3::prelude::*;

static PYTHON_THREADS: LazyLock<HostThreads> =
    LazyLock::new(|| HostThreads::new("ferromcp-python", default_max_threads(), with_gil));

/// Runs a batch holding the GIL throughout; refuses once the interpreter is
/// shutting down (queued jobs are then dropped, which their owners see).
fn with_gil(drain: &mut dyn FnMut()) -> bool {
    Python::try_attach(|_py| drain()).is_some()
}

/// How long the interpreter's exit waits for Python code running on the
/// worker threads to finish.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// Stops the worker threads before the interpreter finalizes (registered
/// with `atexit` by the package): a worker that took the GIL back from a
/// finalizing interpreter would be ended by CPython in the middle of its
/// job, which aborts or crashes the process. Jobs still queued are dropped
/// (a server is shutting down with the process anyway); jobs running get
/// [`EXIT_GRACE`] with the GIL released so they can finish.
#[pyfunction]
pub(crate) fn _close_host_threads(py: Python<'_>) -> bool {
    py.detach(|| PYTHON_THREADS.close(EXIT_GRACE))
}

/// Runs `job` on a Python worker thread with the GIL held. Never waits for
/// the GIL itself, so it is safe to call from a runtime worker.
pub(crate) fn submit(job: impl FnOnce(Python<'_>) + Send + 'static) {
    PYTHON_THREADS.submit(Box::new(move || {
        // Inside a batch the GIL is already held: this only counts it.
        let _ = Python::try_attach(job);
    }));
}
