//! Running a future on the calling thread, which waits for the future's
//! sockets itself.
//!
//! A client call made from a host thread that blocks until the answer (the
//! Python `SyncClient`, every C client call) used to sleep on a condition
//! variable while a runtime worker slept in `epoll_wait`: the answer woke
//! the worker, which woke the caller. Two wake-ups per call, and on this
//! kind of machine a wake-up costs as much as the call's own work. Here the
//! caller polls the call and, when it has to wait, sleeps in `poll(2)` on
//! the sockets the call waits for (`wait_for`, called by the client's
//! sockets when a read or write would block) and on an `eventfd` that the
//! future's waker writes to, for everything else that may wake it (a
//! channel, the shared timer thread, a cancellation). The answer arriving
//! wakes the caller directly: one wake-up, as for a plain blocking socket.
//!
//! Sockets that wait this way are not registered with the runtime's
//! reactor: a connection made inside [`block_for`] belongs to the threads
//! that block on their calls (`net::pool` keeps the two kinds apart),
//! and is polled only inside `block_for`.

use std::cell::RefCell;
use std::future::Future;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

thread_local! {
    /// The sockets the future being polled by [`block_for`] on this thread
    /// waits for; `None` outside it.
    static WAITS: RefCell<Option<Vec<libc::pollfd>>> = const { RefCell::new(None) };
    /// The sockets the last `poll(2)` of [`block_for`] found ready, and for
    /// what: a socket that would block is not tried again before.
    static READY: RefCell<Vec<(RawFd, libc::c_short)>> = const { RefCell::new(Vec::new()) };
    /// This thread's waker, made on first use.
    static WAKER: RefCell<Option<Arc<ThreadWaker>>> = const { RefCell::new(None) };
}

/// Whether the calling thread is polling a future in [`block_for`] or
/// [`poll_scoped`] (a host reactor's poll).
pub(crate) fn active() -> bool {
    WAITS.with(|waits| waits.borrow().is_some())
}

/// Records that the future being polled waits for `events` (`POLLIN`,
/// `POLLOUT`) on `fd`; false outside [`block_for`] and [`poll_scoped`],
/// where nobody would.
pub(crate) fn wait_for(fd: RawFd, events: libc::c_short) -> bool {
    let waiting = WAITS.with(|waits| match &mut *waits.borrow_mut() {
        Some(list) => {
            match list.iter_mut().find(|wait| wait.fd == fd) {
                Some(wait) => wait.events |= events,
                None => list.push(libc::pollfd {
                    fd,
                    events,
                    revents: 0,
                }),
            }
            true
        }
        None => false,
    });
    if waiting {
        // Whatever the last poll(2) said, the socket would block now.
        forget_ready(fd, events);
    }
    waiting
}

/// Forgets that the last `poll(2)` found `fd` ready for `events`: the
/// socket has since been found (or is known to be) empty or full.
pub(crate) fn forget_ready(fd: RawFd, events: libc::c_short) {
    READY.with(|list| {
        for (ready, revents) in list.borrow_mut().iter_mut() {
            if *ready == fd {
                *revents &= !events;
            }
        }
    });
}

/// Whether `fd` has something to read (or is closed) right now.
pub(crate) fn readable_now(fd: RawFd) -> bool {
    let mut probe = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd; a zero timeout never blocks.
    let ready = unsafe { libc::poll(&raw mut probe, 1, 0) };
    ready > 0 && probe.revents != 0
}

/// Whether the last `poll(2)` found `fd` ready for `events` (or closed, or
/// failed: then the operation reports it).
pub(crate) fn reported_ready(fd: RawFd, events: libc::c_short) -> bool {
    READY.with(|list| {
        list.borrow().iter().any(|&(ready, revents)| {
            ready == fd && revents & (events | libc::POLLERR | libc::POLLHUP) != 0
        })
    })
}

/// Wakes a thread in [`block_for`]: while it polls, a wake-up only marks it
/// to poll again; while it sleeps, the first wake-up writes the `eventfd`.
struct ThreadWaker {
    eventfd: EventFd,
    state: AtomicU8,
}

/// [`ThreadWaker::state`]: the thread is polling the future.
const POLLING: u8 = 0;
/// Woken since it last started polling.
const WOKEN: u8 = 1;
/// Sleeping (or about to) in `poll(2)`: a wake-up must write the eventfd.
const SLEEPING: u8 = 2;

impl ThreadWaker {
    fn new() -> std::io::Result<ThreadWaker> {
        Ok(ThreadWaker {
            eventfd: EventFd::new()?,
            state: AtomicU8::new(POLLING),
        })
    }
}

/// A non-blocking `eventfd`: written by any thread to wake the one that
/// polls it.
pub(crate) struct EventFd(OwnedFd);

impl EventFd {
    pub(crate) fn new() -> std::io::Result<EventFd> {
        // SAFETY: eventfd has no memory arguments; the descriptor it returns
        // is owned from here on.
        let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by eventfd and nothing else owns it.
        Ok(EventFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub(crate) fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Makes it readable.
    pub(crate) fn signal(&self) {
        let one = 1u64;
        // SAFETY: writes 8 bytes from `one`, as eventfd requires. A full
        // counter (never, at one write per wait) would only mean the
        // waiting thread is already due to wake.
        unsafe {
            libc::write(
                self.fd(),
                (&raw const one).cast(),
                std::mem::size_of::<u64>(),
            );
        }
    }

    /// Makes it unreadable again.
    pub(crate) fn drain(&self) {
        let mut count = 0u64;
        // SAFETY: reads 8 bytes into `count`, as eventfd requires; the
        // descriptor is non-blocking, so an empty counter returns EAGAIN.
        unsafe {
            libc::read(
                self.fd(),
                (&raw mut count).cast(),
                std::mem::size_of::<u64>(),
            );
        }
    }
}

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.state.swap(WOKEN, Ordering::AcqRel) == SLEEPING {
            self.eventfd.signal();
        }
    }
}

fn thread_waker() -> std::io::Result<Arc<ThreadWaker>> {
    WAKER.with(|slot| {
        let mut slot = slot.borrow_mut();
        if let Some(waker) = &*slot {
            return Ok(waker.clone());
        }
        let waker = Arc::new(ThreadWaker::new()?);
        *slot = Some(waker.clone());
        Ok(waker)
    })
}

/// One poll's wait list; the previous one is put back when the poll ends
/// (a future polled in [`block_for`] may itself block in `block_for`, with
/// a list of its own), even by a panic.
struct PollScope {
    outer: Option<Vec<libc::pollfd>>,
    left: bool,
}

impl PollScope {
    fn enter() -> PollScope {
        PollScope {
            outer: WAITS.with(|waits| waits.borrow_mut().replace(Vec::new())),
            left: false,
        }
    }

    /// The sockets the poll asked to wait for.
    fn leave(mut self) -> Vec<libc::pollfd> {
        self.left = true;
        let outer = self.outer.take();
        WAITS
            .with(|waits| std::mem::replace(&mut *waits.borrow_mut(), outer))
            .unwrap_or_default()
    }
}

impl Drop for PollScope {
    fn drop(&mut self) {
        if !self.left {
            let outer = self.outer.take();
            WAITS.with(|waits| *waits.borrow_mut() = outer);
        }
    }
}

/// Polls `future` once as [`block_for`] does: the sockets it would block
/// on are recorded instead of registered with the runtime's reactor, and
/// returned with `Pending`. `ready` (when given) is what the caller's own
/// wait found ready since the last poll, as `(fd, poll(2) revents)`: a
/// socket that would block is not tried again before it is reported.
/// For a host's own event loop (`host_reactor`).
pub(crate) fn poll_scoped<F: Future + ?Sized>(
    future: std::pin::Pin<&mut F>,
    cx: &mut Context<'_>,
    ready: Option<&[(RawFd, libc::c_short)]>,
) -> (Poll<F::Output>, Vec<libc::pollfd>) {
    if let Some(ready) = ready {
        READY.with(|list| {
            let mut list = list.borrow_mut();
            list.clear();
            list.extend_from_slice(ready);
        });
    }
    let scope = PollScope::enter();
    let polled = future.poll(cx);
    (polled, scope.leave())
}

/// Polls `future` on this thread until it is done, sleeping in `poll(2)`
/// between polls; `None` if `limit` passes first (the future is dropped).
/// Inside `runtime`'s context, so the future may use its timers and spawn
/// tasks.
pub(crate) fn block_for<F: Future>(
    runtime: &tokio::runtime::Runtime,
    future: F,
    limit: Option<Duration>,
) -> Option<F::Output> {
    let _context = runtime.enter();
    let deadline = limit.map(|limit| Instant::now() + limit);
    let thread_waker = match thread_waker() {
        Ok(waker) => waker,
        // No descriptor left for the eventfd: the runtime can still wait.
        Err(e) => {
            tracing::debug!(error = %e, "no eventfd: blocking through the runtime");
            return match limit {
                Some(limit) => runtime.block_on(tokio::time::timeout(limit, future)).ok(),
                None => Some(runtime.block_on(future)),
            };
        }
    };
    let waker = Waker::from(thread_waker.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    let mut fds: Vec<libc::pollfd> = Vec::new();
    loop {
        thread_waker.state.store(POLLING, Ordering::Release);
        let scope = PollScope::enter();
        let polled = future.as_mut().poll(&mut cx);
        let waits = scope.leave();
        if let Poll::Ready(output) = polled {
            return Some(output);
        }
        // Woken while polling (hyper's own channels do that as the request
        // goes out): poll again at once, no eventfd round trip.
        if thread_waker
            .state
            .compare_exchange(POLLING, SLEEPING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            continue;
        }
        fds.clear();
        fds.push(libc::pollfd {
            fd: thread_waker.eventfd.fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        fds.extend(waits);
        let timeout_ms = match deadline {
            None => -1,
            Some(deadline) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return None;
                }
                // Rounded up: waking a little early would only loop.
                left.as_micros().div_ceil(1000).min(i32::MAX as u128) as i32
            }
        };
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structures.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if ready > 0 && fds[0].revents != 0 {
            thread_waker.eventfd.drain();
        }
        READY.with(|list| {
            let mut list = list.borrow_mut();
            list.clear();
            if ready > 0 {
                list.extend(
                    fds[1..]
                        .iter()
                        .filter(|fd| fd.revents != 0)
                        .map(|fd| (fd.fd, fd.revents)),
                );
            }
        });
        // EINTR (a signal), a timeout or readiness: poll the future again,
        // or give up if the limit passed.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap()
    }

    #[test]
    fn wakes_for_a_socket_and_for_a_waker() {
        let (mut a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        b.set_nonblocking(true).unwrap();
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            std::io::Write::write_all(&mut a, b"x").unwrap();
            a
        });
        let mut byte = [0u8; 1];
        let read = block_for(
            &runtime(),
            std::future::poll_fn(|_| match std::io::Read::read(&mut &b, &mut byte) {
                Ok(n) => Poll::Ready(n),
                Err(_) => {
                    assert!(wait_for(b.as_raw_fd(), libc::POLLIN));
                    Poll::Pending
                }
            }),
            None,
        );
        assert_eq!(read, Some(1));
        drop(writer.join().unwrap());
        // A wake-up from another thread (a channel).
        let (tx, rx) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            let _ = tx.send(7);
        });
        assert_eq!(
            block_for(&runtime(), rx, None).map(Result::ok),
            Some(Some(7))
        );
        assert!(!active());
    }

    #[test]
    fn gives_up_after_the_limit() {
        let started = Instant::now();
        let never = block_for(
            &runtime(),
            std::future::pending::<()>(),
            Some(Duration::from_millis(50)),
        );
        assert!(never.is_none());
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert!(!wait_for(0, libc::POLLIN), "outside block_for nobody waits");
    }
}
