//! A call's notifications on their way from its transport to its
//! callbacks (or to a listen stream's reader): a bounded queue.
//!
//! A server may send notifications faster than the callbacks take them
//! (a progress flood, a listen stream nobody reads). Unbounded, the queue
//! would grow until the process dies; blocking the transport instead would
//! hold back the response behind them. So the queue holds at most
//! `capacity` notifications and, when full, makes room the way each kind
//! allows:
//!
//! - a progress notification replaces the newest one queued (the newest
//!   progress is what a progress bar needs);
//! - a notification equal to one already queued (a second
//!   `tools/list_changed`) is the same news: it is dropped;
//! - anything else is dropped and counted, with one warning per queue
//!   naming the limit (`ClientLimits::max_queued_notifications`).

use serde_json::Value;
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::Mutex;
use tokio::sync::Notify;

use super::options::{NotificationCallback, ProgressCallback, ProgressUpdate};
use crate::protocol::methods;
use crate::rpc::lock_unpoisoned;

/// A bounded queue of notifications: `(sender, receiver)`.
pub(crate) fn channel(capacity: usize) -> (NoteSender, NoteReceiver) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            queue: VecDeque::new(),
            dropped: 0,
            senders: 1,
            receiver_gone: false,
        }),
        ready: Notify::new(),
        capacity: capacity.max(1),
    });
    (NoteSender(shared.clone()), NoteReceiver(shared))
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when a notification is queued or the last sender goes.
    ready: Notify,
    capacity: usize,
}

struct State {
    queue: VecDeque<Value>,
    dropped: u64,
    /// Live senders: the receiver sees the end once none is left.
    senders: usize,
    receiver_gone: bool,
}

/// The transport's end: [`NoteSender::send`] never waits.
pub(crate) struct NoteSender(Arc<Shared>);

impl Clone for NoteSender {
    fn clone(&self) -> Self {
        lock_unpoisoned(&self.0.state).senders += 1;
        NoteSender(self.0.clone())
    }
}

impl Drop for NoteSender {
    fn drop(&mut self) {
        let last = {
            let mut state = lock_unpoisoned(&self.0.state);
            state.senders -= 1;
            state.senders == 0
        };
        if last {
            self.0.ready.notify_one();
        }
    }
}

/// Whether `note` is a `notifications/progress` message.
fn is_progress(note: &Value) -> bool {
    note.get("method").and_then(Value::as_str) == Some(methods::NOTIFICATIONS_PROGRESS)
}

impl NoteSender {
    /// Whether the reader is gone (nothing sent will be read).
    pub(crate) fn receiver_gone(&self) -> bool {
        lock_unpoisoned(&self.0.state).receiver_gone
    }

    /// Queues `note`, or makes room for it as the module doc says.
    pub(crate) fn send(&self, note: Value) {
        let mut state = lock_unpoisoned(&self.0.state);
        if state.receiver_gone {
            return;
        }
        if state.queue.len() < self.0.capacity {
            state.queue.push_back(note);
            drop(state);
            self.0.ready.notify_one();
            return;
        }
        if is_progress(&note) {
            if let Some(older) = state.queue.iter_mut().rev().find(|n| is_progress(n)) {
                *older = note;
                return;
            }
        } else if state.queue.contains(&note) {
            return;
        }
        state.dropped += 1;
        if state.dropped == 1 {
            let method = note.get("method").and_then(Value::as_str).unwrap_or("");
            tracing::warn!(
                max_queued_notifications = self.0.capacity,
                method,
                "notifications arrive faster than they are taken: dropping the excess \
                 (progress is coalesced to the newest; ClientLimits::max_queued_notifications)"
            );
        }
    }
}

/// The callbacks' end.
pub(crate) struct NoteReceiver(Arc<Shared>);

impl Drop for NoteReceiver {
    fn drop(&mut self) {
        let mut state = lock_unpoisoned(&self.0.state);
        state.receiver_gone = true;
        state.queue.clear();
    }
}

impl NoteReceiver {
    /// The next notification; `None` once every sender is gone and the
    /// queue is empty.
    pub(crate) async fn recv(&mut self) -> Option<Value> {
        loop {
            // Registered before looking, so a send in between still wakes it.
            let ready = self.0.ready.notified();
            {
                let mut state = lock_unpoisoned(&self.0.state);
                if let Some(note) = state.queue.pop_front() {
                    return Some(note);
                }
                if state.senders == 0 {
                    return None;
                }
            }
            ready.await;
        }
    }

    /// The next notification already queued, if any.
    pub(crate) fn try_recv(&mut self) -> Option<Value> {
        lock_unpoisoned(&self.0.state).queue.pop_front()
    }

    /// How many notifications were dropped for want of room.
    #[cfg(test)]
    pub(crate) fn dropped(&self) -> u64 {
        lock_unpoisoned(&self.0.state).dropped
    }
}

/// Delivers one call's notifications to its callbacks, in order, from the
/// task awaiting the call. A transport queues a notification before it
/// resolves the response that followed it on the wire, so every
/// notification of the call has reached its callbacks when the call
/// returns (a progress bar is complete, a log is whole). The queue is
/// bounded (`notes`): a flood is coalesced, never let grow.
pub(super) struct NotificationRoute {
    pub(super) receiver: NoteReceiver,
    pub(super) on_progress: Option<ProgressCallback>,
    pub(super) on_notification: Option<NotificationCallback>,
    /// The client's middleware chain, which each notification passes first.
    pub(super) chain: Arc<super::middleware::ClientChain>,
}

impl NotificationRoute {
    /// Awaits `work`, delivering notifications as they arrive and those
    /// still queued once it is done. `work` is looked at first: a server
    /// flooding notifications (on stdio, read by another task) never
    /// holds back the response; what was queued before it is delivered
    /// before returning, so the order holds.
    pub(super) async fn deliver_while<T>(
        route: Option<NotificationRoute>,
        work: impl std::future::Future<Output = T>,
    ) -> T {
        let Some(mut route) = route else {
            return work.await;
        };
        tokio::pin!(work);
        loop {
            tokio::select! {
                biased;
                outcome = &mut work => {
                    while let Some(note) = route.receiver.try_recv() {
                        route.deliver(&note);
                    }
                    return outcome;
                }
                Some(note) = route.receiver.recv() => route.deliver(&note),
            }
        }
    }

    fn deliver(&self, note: &Value) {
        let method = note.get("method").and_then(Value::as_str).unwrap_or("");
        let params = note.get("params").unwrap_or(&Value::Null);
        self.chain.deliver(method, params, |method, params| {
            self.to_callbacks(method, params)
        });
    }

    fn to_callbacks(&self, method: &str, params: &Value) {
        if method == methods::NOTIFICATIONS_PROGRESS
            && let Some(cb) = &self.on_progress
        {
            cb(ProgressUpdate {
                progress: params["progress"].as_f64().unwrap_or(0.0),
                total: params["total"].as_f64(),
                message: params["message"].as_str().map(str::to_owned),
            });
        }
        if let Some(cb) = &self.on_notification {
            cb(method, params);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn progress(n: u64) -> Value {
        json!({"method": methods::NOTIFICATIONS_PROGRESS, "params": {"progressToken": "t", "progress": n}})
    }

    fn log(n: u64) -> Value {
        json!({"method": methods::NOTIFICATIONS_MESSAGE, "params": {"level": "info", "data": n}})
    }

    #[tokio::test]
    async fn a_flood_stays_within_the_capacity_and_keeps_the_newest_progress() {
        let (tx, mut rx) = channel(4);
        tx.send(log(0));
        for n in 1..=100_000 {
            tx.send(progress(n));
        }
        tx.send(log(1));
        tx.send(log(0));
        drop(tx);
        let mut got = Vec::new();
        while let Some(note) = rx.recv().await {
            got.push(note);
        }
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0], log(0));
        assert_eq!(got[3], progress(100_000), "the newest progress survives");
        assert_eq!(rx.dropped(), 1, "log 1 dropped; log 0 was already queued");
    }

    #[tokio::test]
    async fn the_receiver_sees_the_end_once_every_sender_is_gone() {
        let (tx, mut rx) = channel(8);
        let second = tx.clone();
        tx.send(log(1));
        drop(tx);
        assert_eq!(rx.recv().await, Some(log(1)));
        let waiting = tokio::spawn(async move { rx.recv().await });
        tokio::task::yield_now().await;
        drop(second);
        assert_eq!(waiting.await.ok(), Some(None));
    }

    #[test]
    fn nothing_is_kept_once_the_receiver_is_gone() {
        let (tx, rx) = channel(8);
        drop(rx);
        tx.send(log(1));
        assert!(lock_unpoisoned(&tx.0.state).queue.is_empty());
    }
}

/// What a server sends outside any call (a 2025-11-25 server's list
/// changes and resource updates, on stdio or its session's GET stream):
/// handed to the application's callback and to every listener
/// ([`Unsolicited::listen`]: the legacy form of a listen stream).
#[derive(Clone)]
pub(crate) struct Unsolicited(tokio::sync::broadcast::Sender<(String, Value)>);

/// Notifications kept for a listener that is behind; past them it hears of
/// the gap (as a reopened listen stream does).
const UNSOLICITED_BACKLOG: usize = 256;

impl Unsolicited {
    pub(crate) fn new() -> Unsolicited {
        Unsolicited(tokio::sync::broadcast::channel(UNSOLICITED_BACKLOG).0)
    }

    /// The callback a transport calls: the application's, then the
    /// listeners (none listening costs one atomic load).
    pub(crate) fn callback(
        &self,
        user: Option<NotificationCallback>,
        chain: Arc<super::middleware::ClientChain>,
    ) -> NotificationCallback {
        let sender = self.0.clone();
        Arc::new(move |method: &str, params: &Value| {
            chain.deliver(method, params, |method, params| {
                if let Some(user) = &user {
                    user(method, params);
                }
                if sender.receiver_count() > 0 {
                    let _ = sender.send((method.to_owned(), params.clone()));
                }
            });
        })
    }

    pub(crate) fn listen(&self) -> tokio::sync::broadcast::Receiver<(String, Value)> {
        self.0.subscribe()
    }
}
