//! Where request-scoped notifications go: the stdio writer, a legacy
//! session's stream, or one HTTP request's own SSE stream.
//!
//! Bounded, so a client that stops reading cannot make the server queue
//! without limit: once [`NOTIFICATION_QUEUE`] messages wait, progress and
//! log notifications are dropped (they only report on work that goes on),
//! while a `subscriptions/listen` stream waits for room, and its events
//! channel lagging behind then turns into one catch-up batch.
//!
//! An HTTP request gets a [`lazy_notification_channel`]: most requests never
//! notify, and a tokio channel costs two allocations of over 1 KiB (its
//! state and its first block of slots) plus their frees, about 2% of a
//! small call's instructions. The lazy one allocates the channel when the
//! first notification is sent.

use serde_json::Value;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::Notify;
use tokio::sync::mpsc::{self, error::SendError, error::TryRecvError, error::TrySendError};

use crate::rpc::lock_unpoisoned;

/// Most notifications (and, on the legacy wire, requests to the client)
/// waiting for one sink's reader.
pub(crate) const NOTIFICATION_QUEUE: usize = 1024;

/// The sending side; cheap to clone.
#[derive(Clone, Debug)]
pub(crate) struct NotificationSink(Kind);

#[derive(Clone, Debug)]
enum Kind {
    Channel(mpsc::Sender<Value>),
    Lazy(Arc<Lazy>),
}

/// A channel made on first use, and how its reader learns of it.
#[derive(Debug, Default)]
struct Lazy {
    sender: OnceLock<mpsc::Sender<Value>>,
    receiver: Mutex<Slot>,
    /// Woken (with a stored permit, so it is never missed) once the
    /// receiver is there.
    made: Notify,
}

/// Where the receiver is.
#[derive(Debug, Default)]
enum Slot {
    /// No notification yet.
    #[default]
    Unmade,
    /// Made, waiting for the reader to take it.
    Made(mpsc::Receiver<Value>),
    /// With the reader, or dropped with it.
    Taken,
}

impl Lazy {
    fn sender(&self) -> &mpsc::Sender<Value> {
        self.sender.get_or_init(|| {
            let (sender, receiver) = mpsc::channel(NOTIFICATION_QUEUE);
            let mut slot = lock_unpoisoned(&self.receiver);
            // A reader already gone leaves the receiver to drop here, so
            // that sending fails as it does on a closed channel.
            if matches!(*slot, Slot::Unmade) {
                *slot = Slot::Made(receiver);
            }
            drop(slot);
            self.made.notify_one();
            sender
        })
    }

    /// The receiver, if it was made and not yet taken.
    fn take(&self) -> Option<mpsc::Receiver<Value>> {
        let mut slot = lock_unpoisoned(&self.receiver);
        match std::mem::replace(&mut *slot, Slot::Taken) {
            Slot::Made(receiver) => Some(receiver),
            Slot::Unmade => {
                *slot = Slot::Unmade;
                None
            }
            Slot::Taken => None,
        }
    }
}

impl NotificationSink {
    /// Queues `note`, or gives it back when the queue is full or the
    /// reader gone.
    pub(crate) fn try_send(&self, note: Value) -> Result<(), TrySendError<Value>> {
        match &self.0 {
            Kind::Channel(sender) => sender.try_send(note),
            Kind::Lazy(lazy) => lazy.sender().try_send(note),
        }
    }

    /// Whether the reader is gone.
    pub(crate) fn is_closed(&self) -> bool {
        match &self.0 {
            Kind::Channel(sender) => sender.is_closed(),
            Kind::Lazy(lazy) => match lazy.sender.get() {
                Some(sender) => sender.is_closed(),
                None => matches!(*lock_unpoisoned(&lazy.receiver), Slot::Taken),
            },
        }
    }

    /// Queues `note`, waiting for room; fails once the reader is gone.
    pub(crate) async fn send(&self, note: Value) -> Result<(), SendError<Value>> {
        match &self.0 {
            Kind::Channel(sender) => sender.send(note).await,
            Kind::Lazy(lazy) => lazy.sender().send(note).await,
        }
    }
}

/// The reading side.
#[derive(Debug)]
pub(crate) struct NotificationReader(Reader);

#[derive(Debug)]
enum Reader {
    Channel(mpsc::Receiver<Value>),
    /// Until the channel is made; then the reader turns into `Channel`,
    /// letting go of the shared state (whose sender would otherwise keep
    /// the channel open after every sink is gone).
    Lazy(Arc<Lazy>),
}

impl NotificationReader {
    /// The next notification; `None` once every sink is dropped. A lazy
    /// channel that never got a notification never ends: its reader also
    /// waits for the request itself, which does end.
    pub(crate) async fn recv(&mut self) -> Option<Value> {
        loop {
            match &mut self.0 {
                Reader::Channel(receiver) => return receiver.recv().await,
                Reader::Lazy(lazy) => {
                    // Cancel-safe: `notify_one` stores a permit for a
                    // waiter that comes later.
                    lazy.made.notified().await;
                    self.take_made();
                }
            }
        }
    }

    /// A notification already queued, if any.
    pub(crate) fn try_recv(&mut self) -> Result<Value, TryRecvError> {
        self.take_made();
        match &mut self.0 {
            Reader::Channel(receiver) => receiver.try_recv(),
            Reader::Lazy(_) => Err(TryRecvError::Empty),
        }
    }

    /// Whether nothing is queued.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        match &self.0 {
            Reader::Channel(receiver) => receiver.is_empty(),
            Reader::Lazy(lazy) => match &*lock_unpoisoned(&lazy.receiver) {
                Slot::Made(receiver) => receiver.is_empty(),
                Slot::Unmade | Slot::Taken => true,
            },
        }
    }

    /// Becomes a plain channel reader once the lazy channel is made.
    fn take_made(&mut self) {
        if let Reader::Lazy(lazy) = &self.0
            && let Some(receiver) = lazy.take()
        {
            self.0 = Reader::Channel(receiver);
        }
    }
}

impl Drop for NotificationReader {
    fn drop(&mut self) {
        if let Reader::Lazy(lazy) = &self.0 {
            // Whatever was made goes now; whatever is made later is
            // dropped at once (see `Lazy::sender`).
            *lock_unpoisoned(&lazy.receiver) = Slot::Taken;
        }
    }
}

/// A notification sink and its reader.
pub(crate) fn notification_channel() -> (NotificationSink, NotificationReader) {
    let (sink, receiver) = polled_notification_channel();
    (sink, NotificationReader(Reader::Channel(receiver)))
}

/// A notification sink and the channel it feeds, for a reader that polls
/// it (the stdio server's output, under its lock).
pub(crate) fn polled_notification_channel() -> (NotificationSink, mpsc::Receiver<Value>) {
    let (sender, receiver) = mpsc::channel(NOTIFICATION_QUEUE);
    (NotificationSink(Kind::Channel(sender)), receiver)
}

/// [`notification_channel`], allocated only when the first notification is
/// sent: for one HTTP request, which usually sends none.
pub(crate) fn lazy_notification_channel() -> (NotificationSink, NotificationReader) {
    let lazy = Arc::new(Lazy::default());
    (
        NotificationSink(Kind::Lazy(lazy.clone())),
        NotificationReader(Reader::Lazy(lazy)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn a_lazy_channel_delivers_in_order_to_a_reader_already_waiting() {
        let (sink, mut reader) = lazy_notification_channel();
        assert!(reader.is_empty());
        assert!(matches!(reader.try_recv(), Err(TryRecvError::Empty)));
        let waiting = tokio::spawn(async move {
            let first = reader.recv().await;
            let second = reader.recv().await;
            (first, second, reader)
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        sink.try_send(Value::from(1)).unwrap();
        sink.send(Value::from(2)).await.unwrap();
        let (first, second, reader) = waiting.await.unwrap();
        assert_eq!(
            (first, second),
            (Some(Value::from(1)), Some(Value::from(2)))
        );
        drop(sink);
        let mut reader = reader;
        assert_eq!(
            reader.recv().await,
            None,
            "every sink dropped ends the stream"
        );
    }

    #[tokio::test]
    async fn a_lazy_channel_keeps_what_was_sent_before_the_reader_looked() {
        let (sink, mut reader) = lazy_notification_channel();
        let clone = sink.clone();
        sink.try_send(Value::from("a")).unwrap();
        clone.try_send(Value::from("b")).unwrap();
        assert!(!reader.is_empty());
        assert_eq!(reader.try_recv().unwrap(), Value::from("a"));
        assert_eq!(reader.recv().await, Some(Value::from("b")));
    }

    #[tokio::test]
    async fn a_lazy_channel_is_bounded_and_reports_a_gone_reader() {
        let (sink, reader) = lazy_notification_channel();
        for n in 0..NOTIFICATION_QUEUE {
            sink.try_send(Value::from(n)).unwrap();
        }
        assert!(matches!(
            sink.try_send(Value::Null),
            Err(TrySendError::Full(_))
        ));
        drop(reader);
        assert!(matches!(
            sink.try_send(Value::Null),
            Err(TrySendError::Closed(_))
        ));
        // A reader gone before the first notification: closed as well.
        let (sink, reader) = lazy_notification_channel();
        drop(reader);
        assert!(matches!(
            sink.try_send(Value::Null),
            Err(TrySendError::Closed(_))
        ));
    }
}
