//! The threads that run Python code for the core: one queue, a few
//! long-lived threads, the GIL taken once per batch.
//!
//! Why not `spawn_blocking` per call: each call then wakes a thread, which
//! queues for the GIL behind the others, and hands the GIL over again when
//! it is done. On a loaded server that is several context switches per
//! request, and they cost more than the Python handler itself (an echo
//! server spent ~45% of its CPU switching threads). Here a thread that holds
//! the GIL keeps it and drains whatever was queued meanwhile, so a burst of
//! requests costs one wake-up and one GIL acquisition.
//!
//! Handlers may still block (sleep, wait on a socket; CPython releases the
//! GIL there). A watcher thread looks at the queue every [`STALL`] while
//! jobs run; when queued jobs saw no job start for that long, it wakes or
//! starts another thread. A blocked handler therefore delays the others by
//! at most about that long, and the pool grows, up to [`max_threads`], only
//! while handlers block.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use pyo3::prelude::*;

/// Work that needs the GIL. Dropped without running when the interpreter is
/// shutting down, which its owner sees as a closed channel.
pub(crate) type Job = Box<dyn FnOnce(Python<'_>) + Send>;

/// How long queued jobs may wait without any job starting before the
/// standby thread concludes the running ones block and takes one itself.
const STALL: Duration = Duration::from_millis(2);

/// How many [`STALL`] slices without work before the watcher stops
/// looking (about 100 ms).
const QUIET_SLICES: u32 = 50;

/// How long a thread beyond the first stays idle before it exits.
const IDLE_EXIT: Duration = Duration::from_secs(30);

/// At most as many threads as `concurrent.futures.ThreadPoolExecutor`
/// starts by default, `min(32, cpus + 4)`, so handlers that block on I/O
/// overlap as they would in a Python thread pool.
fn max_threads() -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, usize::from);
    (cpus + 4).min(32)
}

#[derive(Default)]
struct State {
    jobs: VecDeque<Job>,
    /// Worker threads alive.
    threads: usize,
    /// Workers waiting for work, not counting those already woken for it.
    idle: usize,
    /// Workers woken for work that have not woken up yet.
    woken: usize,
    /// Jobs started so far; the watcher compares it across a [`STALL`].
    started: u64,
    /// Whether the watcher is started and timing the queue.
    watching: bool,
    watcher_started: bool,
}

impl State {
    /// Workers running (or about to run) jobs; each looks at the queue again
    /// when its job ends.
    fn busy(&self) -> usize {
        self.threads - self.idle
    }

    fn take(&mut self) -> Option<Job> {
        let job = self.jobs.pop_front()?;
        self.started += 1;
        Some(job)
    }
}

struct Pool {
    state: Mutex<State>,
    /// Idle workers wait here.
    work: Condvar,
    /// The watcher waits here while no job runs.
    watch: Condvar,
    max_threads: usize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(State::default()),
        work: Condvar::new(),
        watch: Condvar::new(),
        max_threads: max_threads(),
    })
}

/// Runs `job` on a Python worker thread with the GIL held. Never waits for
/// the GIL itself, so it is safe to call from a runtime worker.
pub(crate) fn submit(job: impl FnOnce(Python<'_>) + Send + 'static) {
    pool().submit(Box::new(job));
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Counters and a queue, each updated in one statement: a panic cannot
        // leave them half-written (jobs run outside the lock).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn submit(&'static self, job: Job) {
        let mut state = self.lock();
        state.jobs.push_back(job);
        if state.busy() == 0 {
            // Nobody will look at the queue on their own.
            self.add_worker(&mut state);
        }
        // Otherwise a running worker drains the queue when its job ends.
        if !state.watching {
            state.watching = true;
            if state.watcher_started {
                self.watch.notify_one();
            } else {
                self.start_watcher(&mut state);
            }
        }
    }

    /// Wakes an idle worker, or starts one if none is idle.
    fn add_worker(&'static self, state: &mut State) {
        if state.idle > 0 {
            state.idle -= 1;
            state.woken += 1;
            self.work.notify_one();
            return;
        }
        if state.threads >= self.max_threads {
            return;
        }
        let spawned = std::thread::Builder::new()
            .name("polymcp-python".into())
            .spawn(move || self.work());
        match spawned {
            Ok(_) => state.threads += 1,
            // Out of threads: the ones alive still drain the queue.
            Err(e) => tracing::warn!("cannot start a Python worker thread: {e}"),
        }
    }

    fn start_watcher(&'static self, state: &mut State) {
        let spawned = std::thread::Builder::new()
            .name("polymcp-python-watch".into())
            .spawn(move || self.watch_loop());
        match spawned {
            Ok(_) => state.watcher_started = true,
            Err(e) => {
                state.watching = false;
                tracing::warn!("cannot start the Python worker watcher: {e}");
            }
        }
    }

    fn work(&'static self) {
        batch_scheduling();
        while let Some(first) = self.next_job() {
            let ran = Python::try_attach(|py| {
                run(py, first);
                // Keep the GIL while there is more to do.
                while let Some(job) = self.lock().take() {
                    run(py, job);
                }
            });
            if ran.is_none() {
                // The interpreter is gone: drop what is queued (its owners see
                // closed channels) and stop.
                let mut state = self.lock();
                let stale = std::mem::take(&mut state.jobs);
                state.threads -= 1;
                drop(state);
                drop(stale);
                return;
            }
        }
    }

    /// Waits for work; `None` once this thread has retired.
    fn next_job(&self) -> Option<Job> {
        let mut state = self.lock();
        loop {
            if let Some(job) = state.take() {
                return Some(job);
            }
            state.idle += 1;
            let (next, timeout) = self
                .work
                .wait_timeout(state, IDLE_EXIT)
                .unwrap_or_else(|p| p.into_inner());
            state = next;
            if state.woken > 0 {
                // Someone counted a waiter as busy already; whichever woke
                // first takes that place.
                state.woken -= 1;
            } else {
                state.idle -= 1;
                if timeout.timed_out() && state.jobs.is_empty() && state.threads > 1 {
                    state.threads -= 1;
                    return None;
                }
            }
        }
    }

    /// While jobs run, looks at the queue every [`STALL`]: queued work that
    /// saw no job start for a whole slice means every worker is blocked in
    /// a handler, so one more gets to work.
    fn watch_loop(&'static self) {
        let mut state = self.lock();
        let mut quiet_slices = 0;
        loop {
            if !state.watching {
                quiet_slices = 0;
                state = self.watch.wait(state).unwrap_or_else(|p| p.into_inner());
                continue;
            }
            let seen = state.started;
            state = self
                .watch
                .wait_timeout(state, STALL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
            if state.jobs.is_empty() && state.busy() == 0 {
                // Sleeping for good only after a quiet spell: under load the
                // pool empties between bursts, and re-waking the watcher for
                // every burst would cost a context switch each time.
                quiet_slices += 1;
                if quiet_slices >= QUIET_SLICES {
                    state.watching = false;
                }
            } else {
                quiet_slices = 0;
                if !state.jobs.is_empty() && state.started == seen {
                    self.add_worker(&mut state);
                }
            }
        }
    }
}

/// Runs one job; a panic in it is contained (its channel closes) so the
/// thread and the jobs queued behind it carry on.
fn run(py: Python<'_>, job: Job) {
    if catch_unwind(AssertUnwindSafe(|| job(py))).is_err() {
        tracing::error!("a Python worker job panicked");
    }
}

/// Asks the kernel not to let this thread preempt the one that woke it.
///
/// Without it, a runtime worker queueing a burst of requests is preempted by
/// the Python thread it woke for the first one, which then finds a queue of
/// one; with it, the runtime worker queues the whole burst first. The
/// thread still runs at once on an idle CPU; only wake-up preemption of a
/// running thread changes (`SCHED_BATCH`, no privileges needed). Threads a
/// handler starts inherit the policy, as they would a nice value.
#[cfg(target_os = "linux")]
fn batch_scheduling() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: plain syscall on the calling thread (pid 0) with a valid param.
    let refused = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) } != 0;
    if refused {
        tracing::debug!("SCHED_BATCH refused: {}", std::io::Error::last_os_error());
    }
}

#[cfg(not(target_os = "linux"))]
fn batch_scheduling() {}
