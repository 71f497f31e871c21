//! Finished calls handed straight to their asyncio loop's thread.
//!
//! The general path of an awaited call (`client_future::awaitable`) crosses
//! three threads: the runtime worker that ran the call hands the outcome to
//! a Python worker thread (which may wait for the GIL, a runtime worker never
//! may), and that one wakes the loop with `call_soon_threadsafe`. Measured
//! with `make bench` (bench/PERFORMANCE.md, client rows) that costs about
//! 140 µs of CPU per call more than `SyncClient`, mostly context switches.
//!
//! An inbox skips the middle thread: the runtime worker queues the outcome
//! and writes one byte to a socket the loop watches (`loop.add_reader`); the
//! loop's thread, which holds the GIL already, converts the outcome and
//! completes the future. One inbox per loop, kept on the loop object
//! itself, so it lives exactly as long as the loop. Loops that do not take
//! an attribute or a reader fall back to the general path.

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex, PoisonError};

use pyo3::prelude::*;

/// Work for the loop's thread, with the GIL held.
pub(crate) type Job = Box<dyn FnOnce(Python<'_>) + Send>;

/// The loop attribute holding its [`Drain`].
const ATTRIBUTE: &str = "_ferromcp_inbox";

pub(crate) struct Inbox {
    jobs: Mutex<Vec<Job>>,
    /// Written (one byte) when the first job of a batch is queued.
    wake: UnixStream,
}

impl Inbox {
    /// Queues `job` for the loop's thread. Never blocks, never takes the GIL.
    pub(crate) fn push(&self, job: Job) {
        let mut jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
        let first = jobs.is_empty();
        jobs.push(job);
        drop(jobs);
        // Later jobs of the same batch ride on the same wake-up: the drain
        // reads the socket before it takes the queue, so none is left behind.
        // A full socket buffer (WouldBlock) means a wake-up is pending anyway.
        if first {
            let _ = (&self.wake).write(&[1]);
        }
    }
}

/// The loop's reader callback: runs every queued job on the loop's thread.
#[pyclass(module = "ferromcp._native", frozen)]
struct Drain {
    inbox: Arc<Inbox>,
    read: UnixStream,
}

#[pymethods]
impl Drain {
    fn __call__(&self, py: Python<'_>) {
        let mut buf = [0u8; 64];
        while matches!((&self.read).read(&mut buf), Ok(n) if n > 0) {}
        let jobs = std::mem::take(
            &mut *self
                .inbox
                .jobs
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        for job in jobs {
            job(py);
        }
    }
}

/// The inbox of `event_loop` (created and registered on first use, from the
/// loop's own thread), or `None` when the loop cannot have one.
pub(crate) fn of(event_loop: &Bound<'_, PyAny>) -> Option<Arc<Inbox>> {
    if let Ok(existing) = event_loop.getattr(ATTRIBUTE) {
        return existing.cast::<Drain>().ok().map(|d| d.get().inbox.clone());
    }
    let (read, wake) = UnixStream::pair().ok()?;
    read.set_nonblocking(true).ok()?;
    wake.set_nonblocking(true).ok()?;
    let fd = read.as_raw_fd();
    let inbox = Arc::new(Inbox {
        jobs: Mutex::new(Vec::new()),
        wake,
    });
    let drain = Bound::new(
        event_loop.py(),
        Drain {
            inbox: inbox.clone(),
            read,
        },
    )
    .ok()?;
    event_loop
        .call_method1("add_reader", (fd, drain.clone()))
        .ok()?;
    if event_loop.setattr(ATTRIBUTE, drain).is_err() {
        let _ = event_loop.call_method1("remove_reader", (fd,));
        return None;
    }
    Some(inbox)
}
