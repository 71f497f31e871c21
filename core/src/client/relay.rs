//! Handing a call's updates to a host callback that runs elsewhere (a
//! JavaScript thread, a Python worker), with a bound on how many wait
//! there.
//!
//! Core calls a binding's progress callback at the pace the server sends
//! (thousands a second, from a hostile server). A binding that queued one
//! host call per update would queue without limit while the host runs
//! slower. A [`CallbackRelay`] keeps at most `limit` updates handed to the
//! host and not yet handled; past that it keeps only the newest waiting
//! one (progress is a level, the newest is what counts) and hands it over
//! as soon as the host has handled one. The host's queue stays bounded and
//! the final update is never lost.

use std::sync::Mutex;

use crate::rpc::lock_unpoisoned;

/// Bounds the updates waiting for a host callback; see the module doc.
///
/// ```
/// use ferromcp::client::CallbackRelay;
/// use std::sync::{Arc, Mutex};
///
/// // The "host": a queue some other thread would run.
/// let host = Arc::new(Mutex::new(Vec::new()));
/// let queue = host.clone();
/// let relay = CallbackRelay::new(2, move |update: u32| queue.lock().unwrap().push(update));
/// for n in 1..=100 {
///     relay.push(n);
/// }
/// assert_eq!(*host.lock().unwrap(), [1, 2], "two handed over, 100 waits");
/// relay.delivered(); // the host ran one: the newest waiting goes next
/// assert_eq!(*host.lock().unwrap(), [1, 2, 100]);
/// relay.delivered();
/// relay.delivered();
/// assert!(relay.is_idle());
/// ```
pub struct CallbackRelay<T> {
    limit: usize,
    send: Box<dyn Fn(T) + Send + Sync>,
    state: Mutex<RelayState<T>>,
}

struct RelayState<T> {
    /// Handed to the host and not yet reported handled.
    in_flight: usize,
    /// The newest update that found no room.
    waiting: Option<T>,
    /// Updates replaced by a newer one before reaching the host.
    coalesced: u64,
    finished: bool,
}

impl<T> CallbackRelay<T> {
    /// A relay handing updates to `send` (which queues them to the host),
    /// at most `limit` (at least 1) unhandled at once.
    pub fn new(limit: usize, send: impl Fn(T) + Send + Sync + 'static) -> Self {
        CallbackRelay {
            limit: limit.max(1),
            send: Box::new(send),
            state: Mutex::new(RelayState {
                in_flight: 0,
                waiting: None,
                coalesced: 0,
                finished: false,
            }),
        }
    }

    /// Hands `update` to the host now, or keeps it as the newest waiting.
    pub fn push(&self, update: T) {
        let mut state = lock_unpoisoned(&self.state);
        if state.finished {
            return;
        }
        if state.in_flight < self.limit {
            state.in_flight += 1;
            drop(state);
            (self.send)(update);
            return;
        }
        if state.waiting.replace(update).is_some() {
            state.coalesced += 1;
        }
    }

    /// Reports that the host handled one update handed to it (ran the
    /// callback, or could not): the newest waiting one, if any, goes next.
    pub fn delivered(&self) {
        let mut state = lock_unpoisoned(&self.state);
        state.in_flight = state.in_flight.saturating_sub(1);
        if state.finished {
            return;
        }
        if let Some(next) = state.waiting.take() {
            state.in_flight += 1;
            drop(state);
            (self.send)(next);
        }
    }

    /// Whether every update pushed has been handled (nothing handed over
    /// unhandled, nothing waiting).
    pub fn is_idle(&self) -> bool {
        let state = lock_unpoisoned(&self.state);
        state.in_flight == 0 && state.waiting.is_none()
    }

    /// Ends the relay: later pushes are ignored, and nothing more is handed
    /// over. Returns the update still waiting, which the caller delivers
    /// itself (after those already handed over), so none is lost.
    pub fn finish(&self) -> Option<T> {
        let mut state = lock_unpoisoned(&self.state);
        state.finished = true;
        state.waiting.take()
    }

    /// How many updates were replaced by a newer one before reaching the
    /// host.
    pub fn coalesced(&self) -> u64 {
        lock_unpoisoned(&self.state).coalesced
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn finishing_returns_the_waiting_update_and_stops_handing_over() {
        let host = Arc::new(Mutex::new(Vec::new()));
        let queue = host.clone();
        let relay = CallbackRelay::new(1, move |n: u32| lock_unpoisoned(&queue).push(n));
        relay.push(1);
        relay.push(2);
        relay.push(3);
        assert_eq!(relay.coalesced(), 1);
        assert_eq!(relay.finish(), Some(3));
        relay.delivered();
        relay.push(4);
        assert_eq!(*lock_unpoisoned(&host), [1]);
    }
}
