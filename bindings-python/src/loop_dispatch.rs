//! Runs jobs on the thread of an asyncio loop, woken without the GIL.
//!
//! `asyncio.run_coroutine_threadsafe` costs a worker thread taking the GIL
//! to call it, a `concurrent.futures.Future` chained to a `Task` (two
//! futures, a lock and a condition per call), and one wake-up of the loop
//! per call. Async handlers cost 2.2x-3.5x the CPU of sync ones that way
//! (bench/PERFORMANCE.md). Here a runtime thread instead queues the job
//! and, only when no wake-up is already on its way, writes one byte to a
//! socket the loop watches (`loop.add_reader`): no GIL on the runtime
//! side, one wake-up for every job queued meanwhile, and the loop thread,
//! which holds the GIL anyway, runs the whole batch.
//!
//! Two ways in, one mechanism ([`Shared`] and its reader [`Drain`]):
//!
//! - [`LoopDispatcher`], for a server's async handlers: created off the
//!   loop, so the loop registers the reader itself on its first wake-up.
//! - [`LoopInbox`], for awaited client calls (`client_future`): created on
//!   the loop's thread by the call being awaited, so it registers the
//!   reader at once, and is kept on the loop object (one per loop, living
//!   exactly as long as it).
//!
//! Until the loop has registered that reader (it must do it itself: an
//! asyncio loop is not thread-safe), and once the loop is released, the
//! wake-up goes through `loop.call_soon_threadsafe` from a Python worker
//! thread, which also finds out when the loop is closed: the queued jobs
//! are then told so instead of waiting forever.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;

use crate::sync::lock;
use crate::workers;

/// A job for the loop thread. Called with `None` on the loop thread, or
/// with the reason on a worker thread when the loop refused to run it
/// (closed).
pub(crate) type Job = Box<dyn for<'py> FnOnce(Python<'py>, Option<&PyErr>) + Send>;

/// The asyncio loop a server's (or client's) async handlers run on, and
/// the queue of jobs waiting for it.
pub(crate) struct LoopDispatcher {
    event_loop: Py<PyAny>,
    shared: Arc<Shared>,
}

/// What the loop's reader callback ([`Drain`]) shares with the senders.
/// Holds no reference to the loop, so the loop holding the callback makes
/// no reference cycle.
struct Shared {
    queue: Mutex<Vec<Job>>,
    /// A wake-up is on its way and the loop has not yet taken the queue:
    /// later jobs need no wake-up of their own.
    woken: AtomicBool,
    /// The loop watches `pipe`: writing a byte wakes it.
    registered: AtomicBool,
    /// The loop was released: never register (again).
    retired: AtomicBool,
    pipe: Option<WakePipe>,
}

#[cfg(unix)]
struct WakePipe {
    tx: std::os::unix::net::UnixStream,
    rx: std::os::unix::net::UnixStream,
}

#[cfg(unix)]
impl WakePipe {
    fn new() -> Option<Self> {
        let (tx, rx) = std::os::unix::net::UnixStream::pair().ok()?;
        tx.set_nonblocking(true).ok()?;
        rx.set_nonblocking(true).ok()?;
        Some(WakePipe { tx, rx })
    }

    fn fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.rx.as_raw_fd()
    }

    fn wake(&self) {
        use std::io::Write;
        // WouldBlock: the socket is full of wake-ups the loop has not read
        // yet, so it will wake anyway.
        let _ = (&self.tx).write(&[1]);
    }

    fn drain(&self) {
        use std::io::Read;
        let mut buf = [0u8; 64];
        while matches!((&self.rx).read(&mut buf), Ok(n) if n == buf.len()) {}
    }
}

#[cfg(not(unix))]
struct WakePipe;

#[cfg(not(unix))]
impl WakePipe {
    fn new() -> Option<Self> {
        None
    }
    fn fd(&self) -> i32 {
        -1
    }
    fn wake(&self) {}
    fn drain(&self) {}
}

impl LoopDispatcher {
    pub(crate) fn new(event_loop: Py<PyAny>) -> Self {
        LoopDispatcher {
            event_loop,
            shared: Arc::new(Shared {
                queue: Mutex::new(Vec::new()),
                woken: AtomicBool::new(false),
                registered: AtomicBool::new(false),
                retired: AtomicBool::new(false),
                pipe: WakePipe::new(),
            }),
        }
    }

    pub(crate) fn event_loop(&self) -> &Py<PyAny> {
        &self.event_loop
    }

    /// Queues `job` for the loop thread. Never takes the GIL, so it is safe
    /// on a runtime worker.
    pub(crate) fn submit(self: &Arc<Self>, job: Job) {
        if self.queue(job) {
            self.wake();
        }
    }

    /// Queues `job` without waking the loop; true when the caller must call
    /// [`LoopDispatcher::wake`] (no wake-up is on its way yet). Waking a
    /// little later lets more jobs join the batch.
    pub(crate) fn queue(&self, job: Job) -> bool {
        self.shared.push(job)
    }

    /// Wakes the loop to run what is queued.
    pub(crate) fn wake(self: &Arc<Self>) {
        match &self.shared.pipe {
            Some(pipe) if self.shared.registered.load(Ordering::SeqCst) => pipe.wake(),
            _ => self.wake_through_python(),
        }
    }

    /// Wakes the loop with `call_soon_threadsafe` from a Python worker; if
    /// the loop refuses (closed), fails every queued job.
    fn wake_through_python(self: &Arc<Self>) {
        let this = self.clone();
        workers::submit(move |py| {
            let drain = match Py::new(
                py,
                Drain {
                    shared: this.shared.clone(),
                },
            ) {
                Ok(drain) => drain,
                Err(e) => return this.refuse_all(py, &e),
            };
            if let Err(e) = this
                .event_loop
                .bind(py)
                .call_method1("call_soon_threadsafe", (drain,))
            {
                this.refuse_all(py, &e);
            }
        });
    }

    fn refuse_all(&self, py: Python<'_>, reason: &PyErr) {
        self.shared.woken.store(false, Ordering::SeqCst);
        let jobs = std::mem::take(&mut *lock(&self.shared.queue));
        for job in jobs {
            run_job(py, job, Some(reason));
        }
    }

    /// The loop is no longer the serving one: stop waking it through the
    /// socket (it may be closed next, and a closed loop never reads it) and
    /// ask it to forget the socket. Never takes the GIL.
    pub(crate) fn retire(self: &Arc<Self>) {
        let shared = &self.shared;
        shared.retired.store(true, Ordering::SeqCst);
        if !shared.registered.swap(false, Ordering::SeqCst) {
            return;
        }
        let this = self.clone();
        workers::submit(move |py| {
            if let Some(pipe) = &this.shared.pipe {
                let event_loop = this.event_loop.bind(py);
                if let Ok(remove) = event_loop.getattr("remove_reader") {
                    // Refused when the loop is closed: its selector, and the
                    // registration with it, are gone already.
                    let _ = event_loop.call_method1("call_soon_threadsafe", (remove, pipe.fd()));
                }
            }
            // Jobs whose wake-up went to the socket: make sure they run (or
            // are refused) now that nothing may read it.
            if !lock(&this.shared.queue).is_empty() {
                this.wake_through_python();
            }
        });
    }
}

impl Shared {
    /// Queues `job`; true when the caller must wake the loop (no wake-up
    /// is on its way yet).
    fn push(&self, job: Job) -> bool {
        lock(&self.queue).push(job);
        !self.woken.swap(true, Ordering::SeqCst)
    }
}

/// The loop attribute holding a loop's [`LoopInbox`] (its [`Drain`]).
const INBOX_ATTRIBUTE: &str = "_ferromcp_inbox";

/// The queue of an asyncio loop for work started on that loop (an awaited
/// client call) and finished on a runtime worker. Its reader is registered
/// when it is created, from the loop's thread, so [`LoopInbox::submit`]
/// always wakes the loop through the socket: no Python worker, no GIL.
#[derive(Clone)]
pub(crate) struct LoopInbox {
    shared: Arc<Shared>,
}

impl LoopInbox {
    /// The inbox of `event_loop`, created and registered on first use. Call
    /// it on the loop's thread. `None` when the loop cannot have one (it
    /// takes no attributes, or watches no descriptors, e.g. Windows'
    /// proactor loop): the caller then takes another way.
    pub(crate) fn of(event_loop: &Bound<'_, PyAny>) -> Option<LoopInbox> {
        let py = event_loop.py();
        let attribute = pyo3::intern!(py, INBOX_ATTRIBUTE);
        if let Ok(existing) = event_loop.getattr(attribute) {
            return existing.cast::<Drain>().ok().map(|drain| LoopInbox {
                shared: drain.get().shared.clone(),
            });
        }
        let pipe = WakePipe::new()?;
        let fd = pipe.fd();
        let shared = Arc::new(Shared {
            queue: Mutex::new(Vec::new()),
            woken: AtomicBool::new(false),
            registered: AtomicBool::new(true),
            retired: AtomicBool::new(false),
            pipe: Some(pipe),
        });
        let drain = Bound::new(
            py,
            Drain {
                shared: shared.clone(),
            },
        )
        .ok()?;
        event_loop
            .call_method1("add_reader", (fd, drain.clone()))
            .ok()?;
        if event_loop.setattr(attribute, drain).is_err() {
            let _ = event_loop.call_method1("remove_reader", (fd,));
            return None;
        }
        Some(LoopInbox { shared })
    }

    /// Queues `job` for the loop's thread. Never blocks, never takes the
    /// GIL. A loop closed meanwhile never runs it (nobody awaits there any
    /// more).
    pub(crate) fn submit(&self, job: Job) {
        if self.shared.push(job)
            && let Some(pipe) = &self.shared.pipe
        {
            pipe.wake();
        }
    }
}

fn run_job(py: Python<'_>, job: Job, refused: Option<&PyErr>) {
    // A panic in one job must not lose the rest of the batch (each job owns
    // a responder, which answers with an error if the job is dropped).
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(py, refused)));
}

/// The loop's callback: runs every queued job on the loop thread. Also the
/// reader registered for the wake-up socket.
#[pyclass(module = "ferromcp._native", frozen)]
struct Drain {
    shared: Arc<Shared>,
}

#[pymethods]
impl Drain {
    fn __call__(slf: &Bound<'_, Self>) {
        let py = slf.py();
        let shared = &slf.get().shared;
        if let Some(pipe) = &shared.pipe {
            if shared.registered.load(Ordering::SeqCst) {
                pipe.drain();
            } else if !shared.retired.load(Ordering::SeqCst)
                && register(slf, "add_reader", pipe.fd())
            {
                shared.registered.store(true, Ordering::SeqCst);
                // Retired while registering: `retire` saw nothing to undo.
                if shared.retired.load(Ordering::SeqCst)
                    && shared.registered.swap(false, Ordering::SeqCst)
                {
                    register(slf, "remove_reader", pipe.fd());
                }
            }
        }
        // Before taking the queue: a job queued after this sends its own
        // wake-up.
        shared.woken.store(false, Ordering::SeqCst);
        let jobs = std::mem::take(&mut *lock(&shared.queue));
        for job in jobs {
            run_job(py, job, None);
        }
    }
}

/// Registers `drain` as the reader of the wake-up socket on the running
/// loop (this thread's: `Drain` runs there). False where the loop cannot
/// watch descriptors (e.g. Windows' proactor loop): wake-ups then keep
/// going through `call_soon_threadsafe`.
/// `method` is `add_reader` or (to undo it) `remove_reader`.
fn register(drain: &Bound<'_, Drain>, method: &str, fd: i32) -> bool {
    let py = drain.py();
    get_running_loop(py)
        .and_then(|get| get.call0())
        .and_then(|event_loop| {
            if method == "add_reader" {
                event_loop.call_method1(method, (fd, drain))
            } else {
                event_loop.call_method1(method, (fd,))
            }
        })
        .is_ok()
}

/// `asyncio.get_running_loop`, looked up once.
pub(crate) fn get_running_loop(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static FUNCTION: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    FUNCTION
        .get_or_try_init(py, || {
            Ok(py.import("asyncio")?.getattr("get_running_loop")?.unbind())
        })
        .map(|f| f.bind(py))
}
