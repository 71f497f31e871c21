//! Threads for host-language handlers that may block: one queue, a few
//! long-lived threads, each draining the queue in batches.
//!
//! Bindings run Python `def` handlers and C callbacks here rather than with
//! `spawn_blocking` per call. That wakes a thread per call, and for Python
//! each of those threads then queues for the GIL behind the others: several
//! context switches per request, which cost more than an echo handler itself
//! (a Python echo server spent ~45% of its CPU switching threads). Here a
//! thread keeps going while work is queued, inside one call of the pool's
//! [`AroundBatch`] (for Python: with the GIL held throughout), so a burst of
//! requests costs one wake-up.
//!
//! Handlers may still block (sleep, wait on a socket). A watcher thread
//! looks at the queue every `STALL` (2 ms) while jobs run; when queued jobs saw
//! no job start for that long, it wakes or starts another thread. A blocked
//! handler therefore delays the others by at most about that long, and a
//! pool grows, up to its maximum, only while handlers block.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One unit of work. Dropped without running if the pool's [`AroundBatch`]
/// can no longer run work (a host interpreter shutting down); its owner
/// sees that as a closed channel.
pub type Job = Box<dyn FnOnce() + Send>;

/// Runs a batch: calls `drain` (which runs jobs until the queue is empty)
/// and returns true, or returns false without calling it when jobs can never
/// run again, which ends the thread and drops what is queued.
pub type AroundBatch = fn(drain: &mut dyn FnMut()) -> bool;

/// How long queued jobs may wait without any job starting before the
/// watcher concludes the running ones block and adds a thread.
const STALL: Duration = Duration::from_millis(2);

/// How many [`STALL`] slices without work before the watcher stops
/// looking (about 100 ms).
const QUIET_SLICES: u32 = 50;

/// How long a thread beyond the first stays idle before it exits.
const IDLE_EXIT: Duration = Duration::from_secs(30);

/// As many threads as `concurrent.futures.ThreadPoolExecutor` starts by
/// default, `min(32, cpus + 4)`, so handlers that block on I/O overlap as
/// they would in a thread pool.
pub fn default_max_threads() -> usize {
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
    /// Workers inside a batch (between entering and leaving `around_batch`).
    in_batch: usize,
    /// Set by [`HostThreads::close`]: nothing runs any more.
    closed: bool,
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

/// A pool of host threads, usually a `static` built once; threads start on
/// first use.
///
/// ```
/// use ferromcp::host::threads::HostThreads;
/// use std::sync::{LazyLock, mpsc};
///
/// static POOL: LazyLock<HostThreads> = LazyLock::new(|| {
///     HostThreads::new("example", 4, |drain| {
///         drain();
///         true
///     })
/// });
///
/// let (done, finished) = mpsc::channel();
/// POOL.submit(Box::new(move || done.send(6 * 7).unwrap()));
/// assert_eq!(finished.recv().unwrap(), 42);
/// ```
pub struct HostThreads {
    name: &'static str,
    state: Mutex<State>,
    /// Idle workers wait here.
    work: Condvar,
    /// The watcher waits here while no job runs.
    watch: Condvar,
    /// [`HostThreads::close`] waits here for the batches running to end.
    batches_done: Condvar,
    max_threads: usize,
    around_batch: AroundBatch,
}

impl HostThreads {
    /// A pool whose threads are named `name` and number at most
    /// `max_threads` (at least one); every batch of jobs runs inside one
    /// call of `around_batch`.
    pub fn new(name: &'static str, max_threads: usize, around_batch: AroundBatch) -> HostThreads {
        HostThreads {
            name,
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            watch: Condvar::new(),
            batches_done: Condvar::new(),
            max_threads: max_threads.max(1),
            around_batch,
        }
    }

    /// Queues `job` for one of the pool's threads. Never waits for the job,
    /// so it may be called from a runtime worker.
    pub fn submit(&'static self, job: Job) {
        self.enqueue(job);
    }

    /// Stops the pool for good: queued jobs and any submitted later are
    /// dropped without running (their owners see closed channels), idle
    /// threads exit, and the call waits up to `grace` for the batches
    /// already running to end. Returns whether they all did.
    ///
    /// A host calls it before its interpreter shuts down, without holding
    /// the interpreter's lock (running jobs may need it to finish): a
    /// thread that re-enters a finalizing CPython is ended by it in the
    /// middle of its job, which unwinds through Rust frames and aborts the
    /// process.
    ///
    /// ```
    /// use ferromcp::host::threads::HostThreads;
    /// use std::sync::{LazyLock, mpsc};
    /// use std::time::Duration;
    ///
    /// static POOL: LazyLock<HostThreads> =
    ///     LazyLock::new(|| HostThreads::new("closing", 2, |drain| { drain(); true }));
    ///
    /// assert!(POOL.close(Duration::from_secs(1)));
    /// let (done, finished) = mpsc::channel::<()>();
    /// POOL.submit(Box::new(move || done.send(()).unwrap()));
    /// // Dropped, not run: its sender is gone.
    /// assert!(finished.recv().is_err());
    /// ```
    pub fn close(&self, grace: Duration) -> bool {
        let mut state = self.lock();
        state.closed = true;
        let stale = std::mem::take(&mut state.jobs);
        self.work.notify_all();
        let deadline = Instant::now() + grace;
        while state.in_batch > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = self
                .batches_done
                .wait_timeout(state, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        let all_ended = state.in_batch == 0;
        drop(state);
        // Outside the lock: a job's drop may run arbitrary code.
        drop(stale);
        all_ended
    }
}

impl HostThreads {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Counters and a queue, each updated in one statement: a panic cannot
        // leave them half-written (jobs run outside the lock).
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn enqueue(&'static self, job: Job) {
        let mut state = self.lock();
        if state.closed {
            drop(state);
            drop(job);
            return;
        }
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
            .name(self.name.into())
            .spawn(move || self.work());
        match spawned {
            Ok(_) => state.threads += 1,
            // Out of threads: the ones alive still drain the queue.
            Err(e) => tracing::warn!("cannot start a {} thread: {e}", self.name),
        }
    }

    fn start_watcher(&'static self, state: &mut State) {
        let spawned = std::thread::Builder::new()
            .name(format!("{}-watch", self.name))
            .spawn(move || self.watch_loop());
        match spawned {
            Ok(_) => state.watcher_started = true,
            Err(e) => {
                state.watching = false;
                tracing::warn!("cannot start the {} watcher: {e}", self.name);
            }
        }
    }

    fn work(&'static self) {
        batch_scheduling();
        // Like tokio's blocking threads, these are inside the runtime's
        // context: handlers may spawn onto it, and code that must not block
        // a runtime thread (serving from inside a callback) can tell.
        let _runtime = crate::runtime::get().enter();
        while let Some(first) = self.next_job() {
            let mut first = Some(first);
            let mut drain = || {
                if let Some(job) = first.take() {
                    run(job);
                }
                // Keep going while there is more to do. (The queue's lock is
                // released before each job runs: a `while let` on
                // `self.lock().take()` would hold it through the job.)
                loop {
                    let next = self.lock().take();
                    let Some(job) = next else { break };
                    run(job);
                }
            };
            {
                let mut state = self.lock();
                if state.closed {
                    state.threads -= 1;
                    return;
                }
                state.in_batch += 1;
            }
            let ran = (self.around_batch)(&mut drain);
            {
                let mut state = self.lock();
                state.in_batch -= 1;
                if state.in_batch == 0 {
                    self.batches_done.notify_all();
                }
            }
            if !ran {
                // Jobs can never run again (the host is gone): drop what is
                // queued (its owners see closed channels) and stop.
                let mut state = self.lock();
                let stale = std::mem::take(&mut state.jobs);
                state.threads -= 1;
                drop(state);
                drop(stale);
                drop(first);
                return;
            }
        }
    }

    /// Waits for work; `None` once this thread has retired.
    fn next_job(&self) -> Option<Job> {
        let mut state = self.lock();
        loop {
            if state.closed {
                state.threads -= 1;
                return None;
            }
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
fn run(job: Job) {
    if catch_unwind(AssertUnwindSafe(job)).is_err() {
        tracing::error!("a host thread job panicked");
    }
}

/// Asks the kernel not to let this thread preempt the one that woke it.
///
/// Without it, a runtime worker queueing a burst of requests is preempted by
/// the host thread it woke for the first one, which then finds a queue of
/// one; with it, the runtime worker queues the whole burst first. The
/// thread still runs at once on an idle CPU; only wake-up preemption of a
/// running thread changes (`SCHED_BATCH`, no privileges needed). Threads a
/// handler starts inherit the policy, as they would a nice value.
#[cfg(target_os = "linux")]
fn batch_scheduling() {
    // Zeroed, not a struct literal: musl's `sched_param` has more fields
    // than glibc's (all zero here), and priority 0 is what SCHED_BATCH takes.
    // SAFETY: `sched_param` is a plain C struct, valid all zero.
    let param: libc::sched_param = unsafe { std::mem::zeroed() };
    // SAFETY: plain syscall on the calling thread (pid 0) with a valid param.
    let refused = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) } != 0;
    if refused {
        tracing::debug!("SCHED_BATCH refused: {}", std::io::Error::last_os_error());
    }
}

#[cfg(not(target_os = "linux"))]
fn batch_scheduling() {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc::{self, RecvTimeoutError};
    use std::sync::{Arc, Barrier, LazyLock};

    const PATIENCE: Duration = Duration::from_secs(10);

    fn run_batch(drain: &mut dyn FnMut()) -> bool {
        drain();
        true
    }

    #[test]
    fn close_waits_for_the_running_job_and_drops_the_queued_ones() {
        static POOL: LazyLock<HostThreads> =
            LazyLock::new(|| HostThreads::new("test-close", 1, run_batch));
        let (started, running) = mpsc::channel();
        let (done, finished) = mpsc::channel();
        POOL.submit(Box::new(move || {
            started.send(()).unwrap();
            std::thread::sleep(Duration::from_millis(200));
            done.send("ran").unwrap();
        }));
        running.recv_timeout(PATIENCE).expect("the job started");
        // Queued behind the running job on the pool's only thread.
        let (queued_done, queued_finished) = mpsc::channel::<()>();
        POOL.submit(Box::new(move || queued_done.send(()).unwrap()));
        assert!(
            POOL.close(PATIENCE),
            "the running job ended within the grace"
        );
        // The running job finished before close returned...
        assert_eq!(finished.try_recv(), Ok("ran"));
        // ...and the queued one was dropped without running.
        assert_eq!(
            queued_finished.recv_timeout(PATIENCE),
            Err(RecvTimeoutError::Disconnected)
        );
    }

    #[test]
    fn blocking_jobs_run_at_the_same_time() {
        static POOL: LazyLock<HostThreads> =
            LazyLock::new(|| HostThreads::new("test-overlap", 4, run_batch));
        // Every job waits until all are running: one after another, the
        // barrier would never open.
        let barrier = Arc::new(Barrier::new(4));
        let (done, finished) = mpsc::channel();
        for n in 0..4 {
            let (barrier, done) = (barrier.clone(), done.clone());
            POOL.submit(Box::new(move || {
                barrier.wait();
                done.send(n).unwrap();
            }));
        }
        let mut seen: Vec<i32> = (0..4)
            .map(|_| finished.recv_timeout(PATIENCE).expect("all jobs ran"))
            .collect();
        seen.sort();
        assert_eq!(seen, [0, 1, 2, 3]);
    }

    #[test]
    fn a_job_that_never_returns_does_not_hold_up_the_queue() {
        static POOL: LazyLock<HostThreads> =
            LazyLock::new(|| HostThreads::new("test-stuck", 2, run_batch));
        let (release, released) = mpsc::channel::<()>();
        POOL.submit(Box::new(move || {
            let _ = released.recv();
        }));
        let (done, finished) = mpsc::channel();
        for n in 0..20 {
            let done = done.clone();
            POOL.submit(Box::new(move || done.send(n).unwrap()));
        }
        for n in 0..20 {
            assert_eq!(finished.recv_timeout(PATIENCE), Ok(n));
        }
        release.send(()).unwrap();
    }

    #[test]
    fn submitting_never_waits_for_a_running_job() {
        static POOL: LazyLock<HostThreads> =
            LazyLock::new(|| HostThreads::new("test-submit", 1, run_batch));
        let (start_second, first_may_end) = mpsc::channel::<()>();
        let (end_second, second_may_end) = mpsc::channel::<()>();
        let (second_running, second_started) = mpsc::channel::<()>();
        POOL.submit(Box::new(move || {
            let _ = first_may_end.recv();
        }));
        // Queued behind the first: it runs in the same batch, not first.
        POOL.submit(Box::new(move || {
            second_running.send(()).unwrap();
            let _ = second_may_end.recv();
        }));
        start_second.send(()).unwrap();
        second_started.recv_timeout(PATIENCE).unwrap();
        // While the second job blocks, queueing more must return at once.
        let (submitted, returned) = mpsc::channel();
        std::thread::spawn(move || {
            POOL.submit(Box::new(|| {}));
            submitted.send(()).unwrap();
        });
        let outcome = returned.recv_timeout(PATIENCE);
        end_second.send(()).unwrap();
        assert_eq!(outcome, Ok(()), "submit waited for a running job");
    }

    #[test]
    fn a_panicking_job_does_not_stop_the_ones_behind_it() {
        static POOL: LazyLock<HostThreads> =
            LazyLock::new(|| HostThreads::new("test-panic", 1, run_batch));
        let (done, finished) = mpsc::channel::<u8>();
        let dropped = done.clone();
        POOL.submit(Box::new(move || {
            let _keep = dropped;
            panic!("job failed");
        }));
        POOL.submit(Box::new(move || done.send(1).unwrap()));
        assert_eq!(finished.recv_timeout(PATIENCE), Ok(1));
    }

    #[test]
    fn jobs_are_dropped_when_batches_can_no_longer_run() {
        static POOL: LazyLock<HostThreads> =
            LazyLock::new(|| HostThreads::new("test-gone", 2, |_drain| false));
        let (done, finished) = mpsc::channel::<()>();
        POOL.submit(Box::new(move || done.send(()).unwrap()));
        // Never ran, and its sender is gone: the owner is not left waiting.
        assert_eq!(
            finished.recv_timeout(PATIENCE),
            Err(RecvTimeoutError::Disconnected)
        );
    }
}
