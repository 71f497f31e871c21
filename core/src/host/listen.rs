//! An open `subscriptions/listen` stream as a host object holds it: read
//! one notification at a time by whichever host call asks next, closed
//! from any thread, and ended when the object is dropped.

use std::future::Future;
use std::sync::Arc;

use serde_json::{Map, Value};
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::client::Subscription;

/// A [`Subscription`] shared by a host object's `next()` and `close()`.
///
/// ```no_run
/// use ferromcp::client::Client;
/// use ferromcp::host::listen::HostSubscription;
/// use ferromcp::protocol::SubscriptionFilter;
///
/// # async fn run(client: Client, filter: SubscriptionFilter) -> Result<(), ferromcp::Error> {
/// let changes = HostSubscription::new(client.listen(filter).await?);
/// while let Some(note) = changes.next().await? {
///     println!("{}", note["method"]);
/// }
/// # Ok(())
/// # }
/// ```
pub struct HostSubscription {
    acknowledged: Value,
    open: Arc<Mutex<Option<Subscription>>>,
    /// Cancelled by `close()`: ends a `next()` that is waiting.
    closed: CancellationToken,
}

impl HostSubscription {
    /// Holds `subscription` (already acknowledged by the server).
    pub fn new(subscription: Subscription) -> HostSubscription {
        // A filter always serialises; `Null` would only hide a bug here.
        let acknowledged = serde_json::to_value(subscription.acknowledged()).unwrap_or_default();
        HostSubscription {
            acknowledged,
            open: Arc::new(Mutex::new(Some(subscription))),
            closed: CancellationToken::new(),
        }
    }

    /// The notification types the server agreed to send.
    pub fn acknowledged(&self) -> &Value {
        &self.acknowledged
    }

    /// The next notification as `{"method": ..., "params": ...}`; `None`
    /// once the subscription ended gracefully or was closed, the error that
    /// ended it otherwise. The future owns what it needs, so a host may run
    /// it anywhere.
    pub fn next(&self) -> impl Future<Output = Result<Option<Value>, Error>> + Send + 'static {
        let open = self.open.clone();
        let closed = self.closed.clone();
        async move {
            let mut guard = open.lock().await;
            let Some(subscription) = guard.as_mut() else {
                return Ok(None);
            };
            let next = tokio::select! {
                next = subscription.next() => next,
                _ = closed.cancelled() => None,
            };
            if let Some(note) = next {
                let mut value = Map::new();
                value.insert("method".into(), Value::from(note.method));
                value.insert("params".into(), note.params);
                return Ok(Some(Value::Object(value)));
            }
            // Ended (or closed): dropping it cancels the listen request.
            match guard.take().and_then(|mut ended| ended.take_ended()) {
                Some(Err(Error::Cancelled)) | Some(Ok(_)) | None => Ok(None),
                Some(Err(e)) => Err(e),
            }
        }
    }

    /// Ends the subscription (the listen request is cancelled); a waiting
    /// `next()` answers `None`.
    pub fn close(&self) {
        self.closed.cancel();
        if let Ok(mut guard) = self.open.try_lock() {
            *guard = None;
        }
    }
}

impl Drop for HostSubscription {
    fn drop(&mut self) {
        self.closed.cancel();
    }
}
