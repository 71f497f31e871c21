//! The timer behind every client call's timeout: one thread for the whole
//! process, instead of a tokio timer per call.
//!
//! A call's timeout almost never fires, yet a tokio timer per call costs a
//! wake-up of the runtime on every call made from outside it: a call
//! started on a host thread (an asyncio loop, a C thread) registers its
//! timer there, and when the runtime's driver is parked with no timer
//! pending (as it is between two calls, the last one's timer gone), it has
//! to be woken to take the new deadline into account. Here the deadlines
//! of all calls wait in one ordered set, watched by one thread that sleeps
//! until the earliest one; a new deadline only wakes that thread when it is
//! earlier than the one the thread sleeps until. Calls made one after the
//! other each add a deadline later than their predecessor's, so they wake
//! nobody; the thread wakes at the first deadline it armed, finds that call
//! long finished, and sleeps until the earliest deadline still pending.
//! The thread belongs to no runtime, so deadlines work the same whatever
//! runtime the client runs on.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use crate::rpc::lock_unpoisoned;

/// A deadline's place in the set: ties are told apart by registration order.
type Key = (Instant, u64);

#[derive(Default)]
struct Pending {
    deadlines: BTreeMap<Key, Waker>,
    next_id: u64,
    /// What the thread sleeps until (`None`: until a deadline arrives).
    armed: Option<Instant>,
}

struct Timer {
    pending: Mutex<Pending>,
    changed: Condvar,
}

fn timer() -> &'static Timer {
    static TIMER: OnceLock<&'static Timer> = OnceLock::new();
    TIMER.get_or_init(|| {
        let timer: &'static Timer = Box::leak(Box::new(Timer {
            pending: Mutex::default(),
            changed: Condvar::new(),
        }));
        // Without the thread no deadline would ever pass: failing to start
        // it is as fatal as failing to start the runtime.
        std::thread::Builder::new()
            .name("ferromcp-timer".into())
            .spawn(move || timer.run())
            .expect("failed to start the ferromcp timer thread");
        timer
    })
}

impl Timer {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        lock_unpoisoned(&self.pending)
    }

    fn run(&self) {
        let mut pending = self.lock();
        loop {
            let now = Instant::now();
            while let Some(entry) = pending.deadlines.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                entry.remove().wake();
            }
            pending.armed = pending.deadlines.first_key_value().map(|(key, _)| key.0);
            pending = match pending.armed {
                Some(until) => {
                    let wait = until.saturating_duration_since(Instant::now());
                    match self.changed.wait_timeout(pending, wait) {
                        Ok((guard, _)) => guard,
                        Err(poisoned) => poisoned.into_inner().0,
                    }
                }
                None => self
                    .changed
                    .wait(pending)
                    .unwrap_or_else(std::sync::PoisonError::into_inner),
            };
        }
    }

    /// Adds (or moves) a deadline with the waker to wake when it passes.
    fn insert(&self, key: Option<Key>, deadline: Instant, waker: &Waker) -> Key {
        let mut pending = self.lock();
        if let Some(key) = key
            && let Some(known) = pending.deadlines.get_mut(&key)
        {
            known.clone_from(waker);
            return key;
        }
        let key = (deadline, pending.next_id);
        pending.next_id += 1;
        pending.deadlines.insert(key, waker.clone());
        if pending.armed.is_none_or(|armed| deadline < armed) {
            pending.armed = Some(deadline);
            self.changed.notify_one();
        }
        key
    }

    fn remove(&self, key: Key) {
        // The thread is not woken: it finds the set changed when it wakes.
        self.lock().deadlines.remove(&key);
    }
}

/// Completes at `deadline` (give or take the operating system's timer
/// slack), like `tokio::time::sleep_until`, on the shared timer thread.
pub(crate) fn sleep_until(deadline: Instant) -> Sleep {
    Sleep {
        deadline,
        key: None,
    }
}

/// The future of [`sleep_until`].
pub(crate) struct Sleep {
    deadline: Instant,
    /// Where it waits in the timer's set, once polled.
    key: Option<Key>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if Instant::now() >= self.deadline {
            if let Some(key) = self.key.take() {
                timer().remove(key);
            }
            return Poll::Ready(());
        }
        let key = timer().insert(self.key, self.deadline, cx.waker());
        self.key = Some(key);
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            timer().remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn sleeps_end_at_their_deadlines_not_held_back_by_later_ones() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let (a, b, c) = tokio::join!(
            async {
                sleep_until(start + ms(2000)).await;
                start.elapsed()
            },
            async {
                sleep_until(start + ms(100)).await;
                start.elapsed()
            },
            async {
                // Armed after a later deadline: wakes the thread earlier.
                tokio::time::sleep(ms(20)).await;
                sleep_until(start + ms(50)).await;
                start.elapsed()
            },
        );
        assert!(
            a >= ms(2000) && b >= ms(100) && c >= ms(50),
            "{a:?} {b:?} {c:?}"
        );
        // The later deadline, armed first, did not hold the earlier ones back
        // (the margin is for a loaded machine slow to run the timer thread).
        assert!(b < ms(1500) && c < ms(1500), "{a:?} {b:?} {c:?}");
    }

    #[test]
    fn a_dropped_sleep_leaves_the_set() {
        let deadline = Instant::now() + Duration::from_secs(3600);
        let mut sleep = sleep_until(deadline);
        let polled = Pin::new(&mut sleep).poll(&mut Context::from_waker(Waker::noop()));
        assert!(polled.is_pending());
        let key = sleep.key.expect("registered");
        assert!(timer().lock().deadlines.contains_key(&key));
        drop(sleep);
        assert!(!timer().lock().deadlines.contains_key(&key));
    }
}
