//! Client side of `subscriptions/listen`: a stream of change notifications,
//! demultiplexed by subscription id (the listen request's own id), that also
//! invalidates the client's cache as changes arrive.

use serde_json::{Map, Value};
use tokio::task::JoinHandle;

use super::notes::{self, NoteReceiver};
use super::{CallOptions, Client};
use crate::Error;
use crate::protocol::{SubscriptionFilter, methods};

/// One notification delivered on a subscription.
#[derive(Debug, Clone, PartialEq)]
pub struct SubscriptionNotification {
    /// e.g. `notifications/tools/list_changed`.
    pub method: String,
    /// The notification's params (including `_meta.subscriptionId`).
    pub params: Value,
}

/// An open `subscriptions/listen` stream. Dropping it ends the
/// subscription (the request is cancelled).
pub struct Subscription {
    acknowledged: SubscriptionFilter,
    /// Bounded: a reader that stops reading makes the stream drop (and
    /// warn), not the client grow (`ClientLimits::max_queued_notifications`).
    notifications: NoteReceiver,
    request: JoinHandle<Result<Value, Error>>,
    ended: Option<Result<Value, Error>>,
}

impl std::fmt::Debug for Subscription {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subscription")
            .field("acknowledged", &self.acknowledged)
            .finish_non_exhaustive()
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.request.abort();
    }
}

pub(crate) async fn open(
    client: Client,
    filter: SubscriptionFilter,
) -> Result<Subscription, Error> {
    let mut params = Map::new();
    params.insert("notifications".into(), serde_json::to_value(&filter)?);
    let (tx, mut rx) = notes::channel(client.options().limits.max_queued_notifications);
    let forward = tx.clone();
    let invalidating = client.clone();
    let options = CallOptions {
        on_notification: Some(std::sync::Arc::new(move |method: &str, params: &Value| {
            invalidating.invalidate_for(method, params);
            let mut note = Map::new();
            note.insert("method".into(), Value::from(method));
            note.insert("params".into(), params.clone());
            forward.send(Value::Object(note));
        })),
        ..CallOptions::default()
    };
    drop(tx);
    let mut request = tokio::spawn(async move {
        // A subscription lives until either side ends it, not for the
        // client's default call timeout.
        let options = CallOptions {
            timeout: Some(std::time::Duration::from_secs(u64::from(u32::MAX))),
            ..options
        };
        client
            .send(methods::SUBSCRIPTIONS_LISTEN, params, &options)
            .await
    });
    // The acknowledgement must come first (spec: "Acknowledgment").
    let first = tokio::select! {
        note = rx.recv() => note,
        ended = &mut request => {
            return Err(match ended {
                Ok(Ok(_)) => Error::Protocol("subscription ended before it was acknowledged".into()),
                Ok(Err(e)) => e,
                Err(e) => Error::Protocol(format!("listen task failed: {e}")),
            });
        }
    };
    let acknowledged = match first {
        Some(note) if note["method"] == methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED => {
            serde_json::from_value(note["params"]["notifications"].clone()).unwrap_or_default()
        }
        other => {
            request.abort();
            return Err(Error::Protocol(format!(
                "expected {} first, got {other:?}",
                methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED
            )));
        }
    };
    Ok(Subscription {
        acknowledged,
        notifications: rx,
        request,
        ended: None,
    })
}

impl Subscription {
    /// The notification types the server agreed to send.
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// The next notification; `None` once the subscription ended (see
    /// [`Subscription::ended`]).
    pub async fn next(&mut self) -> Option<SubscriptionNotification> {
        if let Some(note) = self.notifications.recv().await {
            return Some(SubscriptionNotification {
                method: note["method"].as_str().unwrap_or_default().to_owned(),
                params: note.get("params").cloned().unwrap_or(Value::Null),
            });
        }
        if self.ended.is_none() {
            let outcome = match (&mut self.request).await {
                Ok(r) => r,
                Err(e) => Err(Error::Protocol(format!("listen task failed: {e}"))),
            };
            self.ended = Some(outcome);
        }
        None
    }

    /// How the subscription ended, once [`Subscription::next`] returned
    /// `None`: the server's graceful completion result, or the error.
    pub fn ended(&self) -> Option<&Result<Value, Error>> {
        self.ended.as_ref()
    }

    /// Takes how the subscription ended (see [`Subscription::ended`]), for
    /// callers that hand the error on (`Error` is not `Clone`).
    pub fn take_ended(&mut self) -> Option<Result<Value, Error>> {
        self.ended.take()
    }
}
