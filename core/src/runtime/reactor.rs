//! Running futures on a host's own event loop (an asyncio loop, say),
//! which waits for their sockets itself.
//!
//! `runtime::start_here` lets a host thread write a request itself, but
//! the answer still wakes a runtime worker, which then wakes the host's
//! loop: two wake-ups per call. A [`HostReactor`] instead hands the loop
//! one descriptor to watch (an `epoll` instance, [`HostReactor::fd`]). The
//! futures started on it are polled only by the loop's thread
//! ([`HostReactor::start`], [`HostReactor::turn`]); the client sockets they
//! would block on are armed in that `epoll` (one-shot, so an idle
//! connection never keeps it readable), and anything else that wakes a
//! future (a channel, the timer thread, a cancellation) queues it and
//! signals an `eventfd` registered there too. The answer arriving wakes
//! the loop directly: one wake-up per call, as for the loop's own sockets.
//!
//! A future polled here sees `wait`'s scope, as in
//! `runtime::block_here`: its client connections are the kind the polling
//! thread waits on itself, never registered with the runtime's reactor.

use std::collections::HashMap;
use std::future::Future;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

use super::wait::{self, EventFd};
use crate::rpc::lock_unpoisoned;

/// A future started on a [`HostReactor`], until it finishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TaskId(u32);

/// What [`HostReactor::start`] did with a future.
#[derive(Debug)]
pub enum Started<T> {
    /// It finished in its first poll.
    Done(T),
    /// It waits; [`HostReactor::turn`] gives its output with this id.
    Running(TaskId),
}

/// The `epoll` data of the wake-up `eventfd` (sockets carry their task's
/// id and their descriptor).
const WAKE_DATA: u64 = u64::MAX;

/// Events fetched per `epoll_wait`.
const EVENTS_PER_WAIT: usize = 64;

/// Futures polled by one host thread, which waits on [`HostReactor::fd`].
/// See the module documentation; an example is on `runtime::host_reactor`.
/// A future that panics is dropped, and the panic goes on to the caller of
/// [`HostReactor::start`] or [`HostReactor::turn`].
pub struct HostReactor<T> {
    runtime: &'static tokio::runtime::Runtime,
    epoll: OwnedFd,
    wakes: Arc<Wakes>,
    tasks: HashMap<u32, Task<T>>,
    next_id: u32,
    /// Outputs not handed out yet (a panic in `turn` left them here).
    finished: Vec<(TaskId, T)>,
    /// `turn`'s scratch, kept so that a turn allocates nothing: what woke
    /// each task, `(task, socket, poll(2) revents)`, [`NO_SOCKET`] for a
    /// wake-up of another kind; and one task's ready sockets.
    ready: Vec<(u32, RawFd, libc::c_short)>,
    sockets: Vec<(RawFd, libc::c_short)>,
}

/// The socket of a [`HostReactor::turn`] entry for a task woken by
/// something else than a socket.
const NO_SOCKET: RawFd = -1;

/// A panic's payload, carried to the caller of `start` or `turn`.
type Panic = Box<dyn std::any::Any + Send>;

struct Task<T> {
    future: Pin<Box<dyn Future<Output = T> + Send>>,
    waker: Arc<TaskWaker>,
}

/// Tasks woken by something other than their sockets, and the `eventfd`
/// that tells the loop.
struct Wakes {
    eventfd: EventFd,
    woken: Mutex<Vec<u32>>,
    /// The eventfd was written and the loop has not taken the list since:
    /// later wake-ups need not write it again.
    signalled: AtomicBool,
}

impl Wakes {
    fn push(&self, id: u32) {
        lock_unpoisoned(&self.woken).push(id);
        self.signal();
    }

    /// Makes the loop call `turn` (once, however many times it is asked
    /// before it does).
    fn signal(&self) {
        if !self.signalled.swap(true, Ordering::AcqRel) {
            self.eventfd.signal();
        }
    }

    /// Moves the tasks woken since the last call to `ready`, as
    /// [`NO_SOCKET`] entries (the list keeps its allocation).
    fn take_into(&self, ready: &mut Vec<(u32, RawFd, libc::c_short)>) {
        // Cleared before the list is taken: a wake-up after this signals
        // again rather than joining a list already taken.
        if self.signalled.swap(false, Ordering::AcqRel) {
            self.eventfd.drain();
        }
        let mut woken = lock_unpoisoned(&self.woken);
        ready.extend(woken.drain(..).map(|id| (id, NO_SOCKET, 0)));
    }
}

/// [`TaskWaker::state`]: not being polled, not queued.
const IDLE: u8 = 0;
/// Being polled by the loop's thread.
const POLLING: u8 = 1;
/// Woken while being polled, or queued on [`Wakes`].
const WOKEN: u8 = 2;

/// A task's waker: a wake-up while the task is being polled only asks for
/// one more poll (hyper's own channels wake the request as it goes out),
/// any other queues the task and signals the loop, once.
struct TaskWaker {
    id: u32,
    state: AtomicU8,
    wakes: Arc<Wakes>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.state.swap(WOKEN, Ordering::AcqRel) == IDLE {
            self.wakes.push(self.id);
        }
    }
}

fn last_error() -> std::io::Error {
    std::io::Error::last_os_error()
}

impl<T> HostReactor<T> {
    /// A reactor whose futures run in `runtime`'s context (timers, spawns).
    pub(crate) fn new(runtime: &'static tokio::runtime::Runtime) -> std::io::Result<Self> {
        // SAFETY: no memory arguments; the descriptors returned are owned
        // from here on.
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            return Err(last_error());
        }
        // SAFETY: as above.
        let epoll = unsafe { OwnedFd::from_raw_fd(epoll) };
        let eventfd = EventFd::new()?;
        let mut event = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: WAKE_DATA,
        };
        // SAFETY: valid descriptors and one valid event structure.
        let added = unsafe {
            libc::epoll_ctl(
                epoll.as_raw_fd(),
                libc::EPOLL_CTL_ADD,
                eventfd.fd(),
                &raw mut event,
            )
        };
        if added < 0 {
            return Err(last_error());
        }
        Ok(HostReactor {
            runtime,
            epoll,
            wakes: Arc::new(Wakes {
                eventfd,
                woken: Mutex::new(Vec::new()),
                signalled: AtomicBool::new(false),
            }),
            tasks: HashMap::new(),
            next_id: 0,
            finished: Vec::new(),
            ready: Vec::new(),
            sockets: Vec::new(),
        })
    }

    /// The descriptor the host's loop watches: readable when
    /// [`HostReactor::turn`] has work.
    pub fn fd(&self) -> RawFd {
        self.epoll.as_raw_fd()
    }

    /// Futures started and not finished yet.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether every future started has finished.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Polls `future` for the first time, on the calling thread.
    pub fn start<F>(&mut self, future: F) -> Started<T>
    where
        F: Future<Output = T> + Send + 'static,
    {
        // Ids wrap after 2^32 tasks; one still running keeps its own.
        let mut id = self.next_id;
        while self.tasks.contains_key(&id) {
            id = id.wrapping_add(1);
        }
        self.next_id = id.wrapping_add(1);
        let task = Task {
            future: Box::pin(future),
            waker: Arc::new(TaskWaker {
                id,
                state: AtomicU8::new(IDLE),
                wakes: self.wakes.clone(),
            }),
        };
        self.tasks.insert(id, task);
        match self.poll_task(id, Some(&[])) {
            Ok(Some(output)) => Started::Done(output),
            Ok(None) => Started::Running(TaskId(id)),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }

    /// Polls every future whose sockets are ready or that was woken, and
    /// gives the outputs of those that finished. Never blocks: call it when
    /// [`HostReactor::fd`] is readable.
    pub fn turn(&mut self) -> Vec<(TaskId, T)> {
        // Taken out of `self` while tasks are polled; put back (with its
        // allocation) at the end.
        let mut ready = std::mem::take(&mut self.ready);
        let mut sockets = std::mem::take(&mut self.sockets);
        ready.clear();
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; EVENTS_PER_WAIT];
        loop {
            // SAFETY: `events` has room for EVENTS_PER_WAIT entries; a zero
            // timeout never blocks.
            let count = unsafe {
                libc::epoll_wait(
                    self.epoll.as_raw_fd(),
                    events.as_mut_ptr(),
                    EVENTS_PER_WAIT as i32,
                    0,
                )
            };
            if count <= 0 {
                break;
            }
            for event in &events[..count as usize] {
                let data = event.u64;
                if data == WAKE_DATA {
                    continue;
                }
                let (id, fd) = split_data(data);
                // EPOLLIN/OUT/ERR/HUP have poll(2)'s values on Linux.
                ready.push((id, fd, event.events as libc::c_short));
            }
            if (count as usize) < EVENTS_PER_WAIT {
                break;
            }
        }
        self.wakes.take_into(&mut ready);
        // Each task's entries side by side: one poll per task, told all of
        // its sockets that are ready.
        ready.sort_unstable_by_key(|&(id, ..)| id);
        let mut at = 0;
        while at < ready.len() {
            let id = ready[at].0;
            let end = at + ready[at..].iter().take_while(|entry| entry.0 == id).count();
            sockets.clear();
            sockets.extend(
                ready[at..end]
                    .iter()
                    .filter(|entry| entry.1 != NO_SOCKET)
                    .map(|&(_, fd, revents)| (fd, revents)),
            );
            at = end;
            // A stale event (the task finished since) finds nobody.
            if !self.tasks.contains_key(&id) {
                continue;
            }
            match self.poll_task(id, Some(&sockets)) {
                Ok(Some(output)) => self.finished.push((TaskId(id), output)),
                Ok(None) => {}
                Err(panic) => {
                    // The tasks not polled yet lost their events: the next
                    // turn polls them, and hands out what finished here.
                    let mut last = None;
                    for &(left, ..) in &ready[at..] {
                        if last != Some(left) {
                            self.wakes.push(left);
                            last = Some(left);
                        }
                    }
                    if !self.finished.is_empty() {
                        self.wakes.signal();
                    }
                    std::panic::resume_unwind(panic);
                }
            }
        }
        self.ready = ready;
        self.sockets = sockets;
        std::mem::take(&mut self.finished)
    }

    /// Polls task `id` until it finishes or waits without having been
    /// woken meanwhile; arms the sockets it waits on.
    /// `Err`: the task panicked, and was dropped.
    fn poll_task(
        &mut self,
        id: u32,
        ready: Option<&[(RawFd, libc::c_short)]>,
    ) -> Result<Option<T>, Panic> {
        let _context = self.runtime.enter();
        let Some(task) = self.tasks.get_mut(&id) else {
            return Ok(None);
        };
        let waker = Waker::from(task.waker.clone());
        let mut cx = Context::from_waker(&waker);
        let mut ready = ready;
        let output = loop {
            task.waker.state.store(POLLING, Ordering::Release);
            let future = task.future.as_mut();
            let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                wait::poll_scoped(future, &mut cx, ready)
            }));
            let (polled, waits) = match polled {
                Ok(polled) => polled,
                Err(panic) => {
                    // Never polled again.
                    self.tasks.remove(&id);
                    return Err(panic);
                }
            };
            if let Poll::Ready(output) = polled {
                break output;
            }
            // What the first poll was told stays true for the next ones.
            ready = None;
            if task
                .waker
                .state
                .compare_exchange(POLLING, IDLE, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                // Woken while polling: what it waited for is there.
                continue;
            }
            for wait in waits {
                if !arm(&self.epoll, id, wait.fd, wait.events) {
                    // Polled again: the socket reports its own failure.
                    task.waker.wake_by_ref();
                }
            }
            return Ok(None);
        };
        self.tasks.remove(&id);
        Ok(Some(output))
    }
}

/// Arms `fd` for one readiness event of `events` for task `id`; false if
/// it cannot be (closed meanwhile): the task should then try it again, and
/// find out.
fn arm(epoll: &OwnedFd, id: u32, fd: RawFd, events: libc::c_short) -> bool {
    let mut event = libc::epoll_event {
        events: events as u16 as u32 | libc::EPOLLONESHOT as u32,
        u64: (u64::from(id) << 32) | u64::from(fd as u32),
    };
    for op in [libc::EPOLL_CTL_MOD, libc::EPOLL_CTL_ADD] {
        // SAFETY: valid descriptors and one valid event structure.
        if unsafe { libc::epoll_ctl(epoll.as_raw_fd(), op, fd, &raw mut event) } == 0 {
            return true;
        }
        // MOD of a socket never armed here (or closed and its number
        // reused) fails with ENOENT: add it.
        if last_error().raw_os_error() != Some(libc::ENOENT) {
            break;
        }
    }
    tracing::debug!(fd, error = %last_error(), "cannot arm a socket in the host reactor");
    false
}

/// The task id and descriptor a socket event's data carries. An event
/// armed for a task that has finished since finds nobody (or, once ids
/// wrap, a task that is polled once more than needed, which futures allow).
fn split_data(data: u64) -> (u32, RawFd) {
    ((data >> 32) as u32, data as u32 as RawFd)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A runtime of the tests' own (this module sits below `runtime`).
    fn test_runtime() -> &'static tokio::runtime::Runtime {
        static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
        RUNTIME.get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()
                .unwrap()
        })
    }

    fn wait_readable(fd: RawFd) {
        let mut watch = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        assert_eq!(unsafe { libc::poll(&raw mut watch, 1, 5000) }, 1);
    }

    /// A task that panics is dropped and its panic reaches the caller of
    /// `turn`; the tasks of the same turn are not lost: what finished is
    /// handed out by the next turn, what was not polled yet is polled then.
    #[test]
    fn a_panicking_task_loses_no_other_task() {
        // A turn polls its tasks in the order they were started: each of
        // the six panics once, so the panicking one comes first, last and
        // in between.
        for panicking in 0..6 {
            panicking_turn(panicking);
        }
    }

    fn panicking_turn(panicking: u32) {
        let mut reactor = HostReactor::<u32>::new(test_runtime()).unwrap();
        let (go, gone) = tokio::sync::watch::channel(false);
        let mut ids = Vec::new();
        for n in 0..6u32 {
            let mut gone = gone.clone();
            let Started::Running(id) = reactor.start(async move {
                gone.wait_for(|go| *go).await.unwrap();
                if n == panicking {
                    // A panic without the hook's message.
                    std::panic::resume_unwind(Box::new("this task panics"));
                }
                n
            }) else {
                panic!("finished before the signal")
            };
            ids.push(id);
        }
        go.send(true).unwrap();
        wait_readable(reactor.fd());
        let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| reactor.turn()));
        assert!(first.is_err(), "the panic reached the caller");
        let mut done = Vec::new();
        while done.len() < 5 {
            wait_readable(reactor.fd());
            done.extend(reactor.turn());
        }
        done.sort_by_key(|(_, n)| *n);
        let outputs: Vec<u32> = done.iter().map(|(_, n)| *n).collect();
        let others: Vec<u32> = (0..6).filter(|&n| n != panicking).collect();
        assert_eq!(outputs, others, "task {panicking} panicked");
        assert!(reactor.is_empty(), "the panicking task was dropped");
    }

    /// A task woken while it is being polled is polled again at once, with
    /// no trip through the eventfd.
    #[test]
    fn a_wake_during_the_poll_polls_again_at_once() {
        let mut reactor = HostReactor::<u32>::new(test_runtime()).unwrap();
        let mut polls = 0;
        let started = reactor.start(std::future::poll_fn(move |cx| {
            polls += 1;
            if polls < 3 {
                cx.waker().wake_by_ref();
                Poll::Pending
            } else {
                Poll::Ready(polls)
            }
        }));
        assert!(matches!(started, Started::Done(3)), "{started:?}");
        assert!(!reactor.wakes.signalled.load(Ordering::Acquire));
    }
}
