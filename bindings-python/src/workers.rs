//! The threads that run Python code for the core: core's
//! [`HostThreads`](ferromcp::host_threads::HostThreads) pool, with every
//! batch run under one GIL acquisition. A thread that holds the GIL drains
//! whatever was queued meanwhile, so a burst of requests costs one wake-up
//! and one GIL hand-over instead of one per call. Handlers that block
//! (sleep, wait on a socket; CPython releases the GIL there) get more
//! threads, up to `min(32, cpus + 4)`, from the pool's stall watcher.

use std::sync::LazyLock;

use ferromcp::host_threads::{HostThreads, default_max_threads};
use pyo3::prelude::*;

static PYTHON_THREADS: LazyLock<HostThreads> =
    LazyLock::new(|| HostThreads::new("ferromcp-python", default_max_threads(), with_gil));

/// Runs a batch holding the GIL throughout; refuses once the interpreter is
/// shutting down (queued jobs are then dropped, which their owners see).
fn with_gil(drain: &mut dyn FnMut()) -> bool {
    Python::try_attach(|_py| drain()).is_some()
}

/// Runs `job` on a Python worker thread with the GIL held. Never waits for
/// the GIL itself, so it is safe to call from a runtime worker.
pub(crate) fn submit(job: impl FnOnce(Python<'_>) + Send + 'static) {
    PYTHON_THREADS.submit(Box::new(move || {
        // Inside a batch the GIL is already held: this only counts it.
        let _ = Python::try_attach(job);
    }));
}
