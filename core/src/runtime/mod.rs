//! The one tokio runtime ferromcp runs on.
//!
//! Bindings never create their own: Python, Node and C hosts call into this
//! runtime, started lazily on first use, so every language shares one pool of
//! worker threads and one timer wheel.
//!
//! On Linux a host's own thread may also poll core's futures: `wait` lets a
//! blocked caller sleep on the sockets its call waits for ([`block_here`]),
//! `reactor` lets a host's event loop do the same ([`host_reactor`]).

#[cfg(target_os = "linux")]
pub(crate) mod reactor;
#[cfg(target_os = "linux")]
pub(crate) mod wait;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Wake, Waker};
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
/// and the blocking pool), on the stdio transport's stdout thread, which
/// calls this itself (it may be started from a host thread), or, for the
/// client's HTTP connections, on whichever thread polls the call, a host's
/// included: those writes ask for no signal themselves (`MSG_NOSIGNAL`,
/// `net/socket.rs`). A write to a reset
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

/// Spawns `task` on the runtime the caller runs in (a Rust program's own),
/// or on the shared one when called from outside any (a host's thread).
pub(crate) fn spawn_here_or_shared<F>(task: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match Handle::try_current() {
        Ok(current) => current.spawn(task),
        Err(_) => get().spawn(task),
    }
}

/// Starts `task` on the calling thread and lets the runtime finish it.
///
/// The task is polled once here, inside the runtime's context; only if it
/// has to wait is it handed to the runtime, by the wake-up that ends its
/// wait, on the thread that wakes it. For a host thread starting a client
/// call (an asyncio loop, a JavaScript thread): the request is written
/// before this returns, and no runtime worker is woken to write it
/// (spawning would wake one, and on a busy or single-CPU machine that
/// wake-up preempts the caller). When the answer arrives, the worker that
/// reads the socket runs the rest of the task itself.
///
/// ```
/// let (tx, rx) = std::sync::mpsc::channel();
/// ferromcp::runtime::start_here(async move {
///     tokio::time::sleep(std::time::Duration::from_millis(10)).await;
///     tx.send("finished on the runtime").unwrap();
/// });
/// assert_eq!(rx.recv().unwrap(), "finished on the runtime");
/// ```
pub fn start_here<F>(task: F)
where
    F: Future<Output = ()> + Send + 'static,
{
    let _context = get().enter();
    let handoff = Arc::new(Handoff(Mutex::new(FirstPoll::Polling { woken: false })));
    let waker = Waker::from(handoff.clone());
    let mut task: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(task);
    if task
        .as_mut()
        .poll(&mut Context::from_waker(&waker))
        .is_ready()
    {
        return;
    }
    let mut state = crate::rpc::lock_unpoisoned(&handoff.0);
    if matches!(*state, FirstPoll::Polling { woken: true }) {
        // Woken while being polled: what it waited for is already there.
        *state = FirstPoll::Handed;
        drop(state);
        get().spawn(task);
    } else {
        *state = FirstPoll::Waiting(task);
    }
}

/// Runs `future` to completion on the calling thread, which also waits for
/// the client connections the future uses: for a host thread that blocks
/// on a client call (a C caller, Python's `SyncClient`).
///
/// Inside, a client call opens (and reuses) connections that the calling
/// thread waits on itself with `poll(2)`, so the answer arriving wakes the
/// caller directly; [`Runtime::block_on`] would leave the socket to a
/// worker, which then wakes the caller: two wake-ups per call instead of
/// one. Everything else the future waits for (channels, timers, tasks)
/// wakes it as usual. Must not be called on a runtime worker, like
/// `block_on`. Elsewhere than on Linux it is `block_on`.
///
/// ```
/// let answer = ferromcp::runtime::block_here(async {
///     tokio::time::sleep(std::time::Duration::from_millis(5)).await;
///     42
/// });
/// assert_eq!(answer, 42);
/// ```
pub fn block_here<F: Future>(future: F) -> F::Output {
    #[cfg(target_os = "linux")]
    match crate::runtime::wait::block_for(get(), future, None) {
        Some(output) => output,
        // Without a limit it only returns with the output.
        None => unreachable!("block_for without a limit gave up"),
    }
    #[cfg(not(target_os = "linux"))]
    block_on_runtime(future)
}

/// [`block_here`] for at most `limit`: `None` if it passes first, and the
/// future is dropped then (pass `&mut` a pinned future to keep it and
/// continue later, e.g. after checking for signals).
///
/// ```
/// let gave_up = ferromcp::runtime::block_here_for(
///     std::future::pending::<()>(),
///     std::time::Duration::from_millis(10),
/// );
/// assert!(gave_up.is_none());
/// ```
pub fn block_here_for<F: Future>(future: F, limit: std::time::Duration) -> Option<F::Output> {
    #[cfg(target_os = "linux")]
    return crate::runtime::wait::block_for(get(), future, Some(limit));
    #[cfg(not(target_os = "linux"))]
    block_on_runtime_for(future, limit)
}

/// [`block_here`] where the calling thread cannot wait on sockets itself
/// (no `wait` but on Linux): the runtime's `block_on`, which polls the
/// future on the calling thread and leaves sockets to the workers. Built
/// for the tests on Linux too, so that this path is run there.
#[cfg(any(test, not(target_os = "linux")))]
fn block_on_runtime<F: Future>(future: F) -> F::Output {
    get().block_on(future)
}

/// [`block_here_for`] where [`block_on_runtime`] stands for `block_here`.
#[cfg(any(test, not(target_os = "linux")))]
fn block_on_runtime_for<F: Future>(future: F, limit: std::time::Duration) -> Option<F::Output> {
    // The timer is made inside `block_on`, in the runtime's context: made
    // here, on a host's thread, it panics ("no reactor running").
    get()
        .block_on(async move { tokio::time::timeout(limit, future).await })
        .ok()
}

#[cfg(target_os = "linux")]
pub use crate::runtime::reactor::{HostReactor, Started, TaskId};

/// A [`HostReactor`] on this runtime: futures polled by a host's own event
/// loop (an asyncio loop), which watches [`HostReactor::fd`] and calls
/// [`HostReactor::turn`] when it is readable. Client connections made by
/// these futures are waited on by that loop: the answer wakes it directly,
/// where [`start_here`] has a runtime worker read it and wake the loop.
/// The loop's thread alone starts and polls the futures.
///
/// ```
/// use ferromcp::runtime::{self, Started};
/// let mut reactor = runtime::host_reactor::<u32>().unwrap();
/// let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
/// let Started::Running(id) = reactor.start(async move { rx.await.unwrap() + 1 }) else {
///     unreachable!("nothing was sent yet")
/// };
/// tx.send(41).unwrap();
/// // The host's loop: wait until the reactor's descriptor is readable.
/// let mut watch = libc::pollfd { fd: reactor.fd(), events: libc::POLLIN, revents: 0 };
/// assert_eq!(unsafe { libc::poll(&mut watch, 1, 5000) }, 1);
/// assert_eq!(reactor.turn(), vec![(id, 42)]);
/// assert!(reactor.is_empty());
/// ```
#[cfg(target_os = "linux")]
pub fn host_reactor<T>() -> std::io::Result<HostReactor<T>> {
    HostReactor::new(get())
}

/// Where a task given to [`start_here`] is.
enum FirstPoll {
    /// In its first poll, on the calling thread.
    Polling { woken: bool },
    /// Waiting for its first wake-up.
    Waiting(Pin<Box<dyn Future<Output = ()> + Send>>),
    /// Spawned on the runtime, which wakes it from now on.
    Handed,
}

/// The waker of a task's first poll: its wake-up spawns the task.
struct Handoff(Mutex<FirstPoll>);

impl Wake for Handoff {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = crate::rpc::lock_unpoisoned(&self.0);
        match std::mem::replace(&mut *state, FirstPoll::Handed) {
            FirstPoll::Waiting(task) => {
                drop(state);
                get().spawn(task);
            }
            FirstPoll::Polling { .. } => *state = FirstPoll::Polling { woken: true },
            FirstPoll::Handed => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn start_here_polls_on_the_caller_and_finishes_on_the_runtime() {
        let caller = std::thread::current().id();
        let (tx, rx) = mpsc::channel();
        start_here(async move {
            let first = std::thread::current().id();
            tokio::time::sleep(Duration::from_millis(10)).await;
            let rest = std::thread::current().name().map(str::to_owned);
            let _ = tx.send((first, rest));
        });
        let (first, rest) = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(first, caller);
        assert_eq!(rest.as_deref(), Some("ferromcp-worker"));
    }

    #[test]
    fn start_here_hands_over_a_task_woken_during_its_first_poll() {
        let (tx, rx) = mpsc::channel();
        start_here(async move {
            // Wakes itself before returning Pending.
            tokio::task::yield_now().await;
            let _ = tx.send(std::thread::current().name().map(str::to_owned));
        });
        let rest = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(rest.as_deref(), Some("ferromcp-worker"));
    }

    /// The `block_here` of other platforms than Linux: timers, tasks and
    /// channels wake the blocked caller, and the limit gives up in time.
    #[test]
    fn the_portable_block_here_waits_for_the_runtime_and_gives_up_at_the_limit() {
        let answer = block_on_runtime(async {
            let task = tokio::spawn(async {
                tokio::time::sleep(Duration::from_millis(5)).await;
                41
            });
            task.await.unwrap() + 1
        });
        assert_eq!(answer, 42);
        let (tx, rx) = tokio::sync::oneshot::channel();
        get().spawn(async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            let _ = tx.send("sent");
        });
        assert_eq!(
            block_on_runtime_for(rx, Duration::from_secs(10)).map(Result::ok),
            Some(Some("sent"))
        );
        let started = std::time::Instant::now();
        let gave_up = block_on_runtime_for(std::future::pending::<()>(), Duration::from_millis(20));
        assert!(gave_up.is_none());
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn start_here_finishes_a_ready_task_on_the_caller() {
        let (tx, rx) = mpsc::channel();
        start_here(async move {
            let _ = tx.send(std::thread::current().id());
        });
        assert_eq!(rx.try_recv().unwrap(), std::thread::current().id());
    }
}
