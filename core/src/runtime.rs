//! The one tokio runtime ferromcp runs on.
//!
//! Bindings never create their own: Python, Node and C hosts call into this
//! runtime, started lazily on first use, so every language shares one pool of
//! worker threads and one timer wheel.

use std::sync::OnceLock;
use tokio::runtime::{Builder, Handle, Runtime};

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// The shared multi-thread runtime, started on first call.
///
/// # Panics
/// Only if the operating system refuses to create threads, in which case no
/// part of the library could work.
pub fn get() -> &'static Runtime {
    RUNTIME.get_or_init(|| {
        Builder::new_multi_thread()
            .enable_all()
            .thread_name("ferromcp-worker")
            .on_thread_start(block_sigpipe)
            .build()
            .expect("failed to start the ferromcp tokio runtime")
    })
}

/// Keeps SIGPIPE from killing the host when a peer goes away.
///
/// Every socket and pipe write happens on this runtime's threads (workers,
/// and the blocking pool) or on the stdio transport's stdout thread, which
/// calls this itself (it may be started from a host thread). A write to a reset
/// connection or a reader-less pipe raises SIGPIPE in the writing thread,
/// and a C host keeps its default action, which ends the process (Rust,
/// Python and Node set it to ignored). hyper writes with `writev`, which has
/// no `MSG_NOSIGNAL`, so the signal is blocked on the threads that write:
/// the write then fails with `EPIPE` and the signal stays pending on that
/// thread, harmlessly. The host's own signal disposition is left alone.
pub(crate) fn block_sigpipe() {
    #[cfg(unix)]
    // SAFETY: the set is initialised by sigemptyset before use, and
    // pthread_sigmask only changes the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// A job handed to [`run_batch`].
pub type BatchJob = Box<dyn FnOnce() + Send>;

/// Runs every job of `batch`, in order, on a runtime worker: one wake-up of
/// the runtime for the whole batch.
///
/// For a host thread that finishes many handler calls at once (a drained
/// queue of JavaScript calls, one turn of an asyncio loop): answering each
/// call with its own channel send wakes a worker per answer, and on a busy
/// machine (or with the process on one CPU) the woken worker preempts the
/// host thread every time, handling one answer per context switch. Sent as
/// one message, the batch costs one wake-up and its answers reach their
/// requests together. Jobs should be short (a `Responder::respond`).
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// let jobs: Vec<ferromcp::runtime::BatchJob> = (0..3)
///     .map(|n| {
///         let tx = tx.clone();
///         Box::new(move || tx.send(n).unwrap()) as ferromcp::runtime::BatchJob
///     })
///     .collect();
/// ferromcp::runtime::run_batch(jobs);
/// let got: Vec<i32> = (0..3).map(|_| rx.recv().unwrap()).collect();
/// assert_eq!(got, [0, 1, 2]);
/// ```
pub fn run_batch(batch: Vec<BatchJob>) {
    static COURIER: OnceLock<tokio::sync::mpsc::UnboundedSender<Vec<BatchJob>>> = OnceLock::new();
    if batch.is_empty() {
        return;
    }
    let courier = COURIER.get_or_init(|| {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Vec<BatchJob>>();
        get().spawn(async move {
            while let Some(batch) = rx.recv().await {
                for job in batch {
                    job();
                }
            }
        });
        tx
    });
    if let Err(returned) = courier.send(batch) {
        // The runtime is shutting down: run them here.
        for job in returned.0 {
            job();
        }
    }
}

/// A handle to the shared runtime, for spawning from foreign threads.
pub fn handle() -> Handle {
    get().handle().clone()
}
