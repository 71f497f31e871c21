//! Which thread runs what: the host threads C callbacks run on (core's
//! `host_threads`), and [`block`], which waits for core on the caller's
//! own thread (core's `runtime`).

use std::future::Future;
use std::sync::LazyLock;

use ferromcp_core::host::threads::HostThreads;

use crate::error::{FfiError, ferromcp_status};

/// How many callbacks may block at once: tokio's default for its blocking
/// pool, which served them before. C callbacks may wait on anything (a
/// socket, a lock another callback holds), so the bound is generous; the
/// pool only grows that far if that many callbacks are blocked at once.
const MAX_C_THREADS: usize = 512;

/// The threads blocking callbacks run on: core's pool, which drains its
/// queue in batches instead of waking a thread per call, and grows only
/// while callbacks block.
pub(crate) static C_THREADS: LazyLock<HostThreads> = LazyLock::new(|| {
    HostThreads::new("ferromcp-c", MAX_C_THREADS, |drain| {
        drain();
        true
    })
});

/// Runs a client future to completion on the calling thread.
pub(crate) fn block<T>(
    work: impl Future<Output = Result<T, ferromcp_core::Error>>,
) -> Result<T, FfiError> {
    // A runtime worker (a FERROMCP_TOOL_NONBLOCKING callback, a progress
    // callback) must not block: it would stall the requests it serves.
    if tokio::task::try_id().is_some() {
        return Err(FfiError::new(
            ferromcp_status::FERROMCP_INVALID_STATE,
            "cannot wait for a client call on a ferromcp runtime thread",
        ));
    }
    // The calling thread waits for the call's socket itself: the answer
    // wakes it directly (`runtime::block_here`).
    ferromcp_core::runtime::block_here(work).map_err(FfiError::from)
}
