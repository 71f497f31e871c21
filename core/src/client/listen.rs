//! Client side of `subscriptions/listen`: a stream of change notifications,
//! demultiplexed by subscription id (the listen request's own id), that also
//! invalidates the client's cache as changes arrive.

use serde_json::{Map, Value};
use tokio::task::JoinHandle;

use super::notes::{self, NoteReceiver, NoteSender};
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
    if matches!(client.era().await?, super::era::Era::Legacy { .. }) {
        return open_legacy(client, filter).await;
    }
    let mut params = Map::new();
    params.insert("notifications".into(), serde_json::to_value(&filter)?);
    let (out, notifications) = notes::channel(client.options().limits.max_queued_notifications);
    let (attempt, acknowledged) = Attempt::open(&client, &params).await?;
    let request = tokio::spawn(supervise(client, params, attempt, out));
    Ok(Subscription {
        acknowledged,
        notifications,
        request,
        ended: None,
    })
}

/// A listen stream on a 2025-11-25 server, which has no
/// `subscriptions/listen`: `resources/subscribe` for each URI, then what the
/// server sends outside any call, as the filter wants it. The server sends
/// list changes to every session, so the acknowledged filter is the one
/// asked for. Dropping the subscription stops the delivery; the
/// server-side subscriptions last as long as the session.
async fn open_legacy(client: Client, filter: SubscriptionFilter) -> Result<Subscription, Error> {
    // Listening before subscribing: an update right after the subscription
    // is not missed.
    let mut heard = client.shared.out_of_call.unsolicited.listen();
    for uri in filter.resource_subscriptions.iter().flatten() {
        let mut params = Map::new();
        params.insert("uri".into(), Value::from(uri.as_str()));
        client.request(methods::RESOURCES_SUBSCRIBE, params).await?;
    }
    let (out, notifications) = notes::channel(client.options().limits.max_queued_notifications);
    let wanted = filter.clone();
    let request = tokio::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            let (method, params) = match heard.recv().await {
                Ok(heard) => heard,
                Err(RecvError::Lagged(_)) => {
                    for note in catch_up(&wanted) {
                        out.send(note);
                    }
                    continue;
                }
                Err(RecvError::Closed) => return Ok(Value::Object(Map::new())),
            };
            if legacy_wants(&wanted, &method, &params) {
                client.invalidate_for(&method, &params);
                let mut note = Map::new();
                note.insert("method".into(), Value::from(method));
                note.insert("params".into(), params);
                out.send(Value::Object(note));
            }
            if out.receiver_gone() {
                return Ok(Value::Object(Map::new()));
            }
        }
    });
    Ok(Subscription {
        acknowledged: filter,
        notifications,
        request,
        ended: None,
    })
}

/// Whether a notification a legacy server sent is one `filter` asks for.
fn legacy_wants(filter: &SubscriptionFilter, method: &str, params: &Value) -> bool {
    let on = |flag: Option<bool>| flag == Some(true);
    match method {
        methods::NOTIFICATIONS_TOOLS_LIST_CHANGED => on(filter.tools_list_changed),
        methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED => on(filter.prompts_list_changed),
        methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED => on(filter.resources_list_changed),
        methods::NOTIFICATIONS_RESOURCES_UPDATED => {
            let uri = params.get("uri").and_then(Value::as_str);
            filter
                .resource_subscriptions
                .iter()
                .flatten()
                .any(|wanted| Some(wanted.as_str()) == uri)
        }
        _ => false,
    }
}

/// One `subscriptions/listen` request, acknowledged.
struct Attempt {
    notes: NoteReceiver,
    request: JoinHandle<Result<Value, Error>>,
    opened: std::time::Instant,
}

impl Drop for Attempt {
    fn drop(&mut self) {
        self.request.abort();
    }
}

impl Attempt {
    /// Sends the listen request and waits for its acknowledgement.
    async fn open(
        client: &Client,
        params: &Map<String, Value>,
    ) -> Result<(Attempt, SubscriptionFilter), Error> {
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
            // A subscription lives until either side ends it, not for the
            // client's default call timeout.
            timeout: Some(std::time::Duration::from_secs(u64::from(u32::MAX))),
            // Sent on a task of its own: the caller's span goes with it.
            trace: crate::telemetry::current(),
            ..CallOptions::default()
        };
        drop(tx);
        let sending = client.clone();
        let params = params.clone();
        let mut request = tokio::spawn(async move {
            sending
                .send(methods::SUBSCRIPTIONS_LISTEN, params, &options)
                .await
        });
        // The acknowledgement must come first (spec: "Acknowledgment").
        let ended = |ended: Result<Result<Value, Error>, tokio::task::JoinError>| match ended {
            Ok(Ok(_)) => Error::Protocol("subscription ended before it was acknowledged".into()),
            Ok(Err(e)) => e,
            Err(e) => Error::Protocol(format!("listen task failed: {e}")),
        };
        let first = tokio::select! {
            note = rx.recv() => match note {
                Some(note) => Some(note),
                // No notification will come: the request ended (its error
                // is the reason).
                None => return Err(ended((&mut request).await)),
            },
            outcome = &mut request => return Err(ended(outcome)),
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
        let attempt = Attempt {
            notes: rx,
            request,
            opened: std::time::Instant::now(),
        };
        Ok((attempt, acknowledged))
    }

    /// Forwards notifications to `out` until the request ends; how it
    /// ended, and whether anything was forwarded. `catch_up` (after a
    /// reopening) goes first, once the stream has shown it lives: with its
    /// first notification, or after [`LIVED`]; a stream that ends sooner
    /// drops it, so a server that ends every subscription at once does not
    /// make the reader hear of changes that never were.
    async fn forward(
        mut self,
        out: &NoteSender,
        catch_up: Vec<Value>,
    ) -> (Result<Value, Error>, bool) {
        let mut forwarded = false;
        let mut catch_up = Some(catch_up).filter(|c| !c.is_empty());
        let lived = tokio::time::sleep(LIVED);
        tokio::pin!(lived);
        loop {
            let note = tokio::select! {
                note = self.notes.recv() => note,
                _ = &mut lived, if catch_up.is_some() => {
                    for note in catch_up.take().into_iter().flatten() {
                        out.send(note);
                    }
                    continue;
                }
            };
            let Some(note) = note else { break };
            for early in catch_up.take().into_iter().flatten() {
                out.send(early);
            }
            forwarded = true;
            out.send(note);
        }
        let outcome = match (&mut self.request).await {
            Ok(outcome) => outcome,
            Err(e) => Err(Error::Protocol(format!("listen task failed: {e}"))),
        };
        (outcome, forwarded)
    }
}

/// Whether a listen stream that ended so should be opened again: after a
/// transport drop (spec: the client MAY reconnect), and after a graceful
/// end (the replica holding it shut down; another one answers the new
/// request), unless the server refused or the client closed.
fn reopens(outcome: &Result<Value, Error>) -> bool {
    outcome.as_ref().err().is_none_or(transient)
}

/// A failure of the way to the server (a replica gone, a proxy with no
/// replica to send to), not an answer of the server's.
fn transient(error: &Error) -> bool {
    match error {
        Error::Io(_) | Error::Http(_) => true,
        Error::HttpStatus(status, _) => *status >= 500,
        _ => false,
    }
}

/// How long a stream must have lived for its graceful end to be a replica
/// going away rather than a server that ends subscriptions at once (which
/// is then left ended).
const LIVED: std::time::Duration = std::time::Duration::from_secs(1);

/// How long the client goes on trying to reopen a dropped stream before it
/// reports the failure.
const REOPEN_FOR: std::time::Duration = std::time::Duration::from_secs(60);

/// Keeps the subscription open across replicas: each time its stream ends
/// in a way [`reopens`] accepts, the same filter is sent again (backoff
/// with jitter), and once acknowledged the reader is told that everything
/// it watches may have changed meanwhile (as after a gap on a server's
/// bus). Returns how the subscription finally ended.
async fn supervise(
    client: Client,
    params: Map<String, Value>,
    first: Attempt,
    out: NoteSender,
) -> Result<Value, Error> {
    let mut attempt = first;
    let mut caught_up = Vec::new();
    loop {
        let opened = attempt.opened;
        let (outcome, forwarded) = attempt.forward(&out, std::mem::take(&mut caught_up)).await;
        let quick_graceful = outcome.is_ok() && !forwarded && opened.elapsed() < LIVED;
        if !reopens(&outcome) || quick_graceful || out.receiver_gone() {
            return outcome;
        }
        tracing::info!(ended = ?outcome.as_ref().err(), "listen stream ended: listening again");
        let deadline = std::time::Instant::now() + REOPEN_FOR;
        let mut tries = 0u32;
        attempt = loop {
            tokio::time::sleep(reopen_backoff(tries)).await;
            tries += 1;
            match Attempt::open(&client, &params).await {
                Ok((attempt, acknowledged)) => {
                    caught_up = catch_up(&acknowledged);
                    for note in &caught_up {
                        client.invalidate_for(
                            note["method"].as_str().unwrap_or_default(),
                            &note["params"],
                        );
                    }
                    break attempt;
                }
                // Refused (or the server ends subscriptions at once): the
                // subscription stays ended, as it first ended if that was
                // graceful.
                Err(error) if !transient(&error) || std::time::Instant::now() >= deadline => {
                    return outcome.or(Err(error));
                }
                Err(error) => {
                    tracing::debug!(%error, "listening again failed; retrying");
                }
            }
        };
    }
}

/// 100 ms doubling up to 2 s, with up to half again of jitter.
fn reopen_backoff(tries: u32) -> std::time::Duration {
    let base = std::time::Duration::from_millis(100u64 << tries.min(5))
        .min(std::time::Duration::from_secs(2));
    let mut byte = [0u8; 1];
    let _ = getrandom::fill(&mut byte);
    base + base.mul_f64(f64::from(byte[0]) / 510.0)
}

/// What a reader is told after its stream was reopened: each change it
/// watches, as if it had happened (the ones in between were not heard).
fn catch_up(acknowledged: &SubscriptionFilter) -> Vec<Value> {
    let note = |method: &str, params: Value| {
        let mut note = Map::new();
        note.insert("method".into(), Value::from(method));
        note.insert("params".into(), params);
        Value::Object(note)
    };
    let mut notes = Vec::new();
    let flags = [
        (
            acknowledged.tools_list_changed,
            methods::NOTIFICATIONS_TOOLS_LIST_CHANGED,
        ),
        (
            acknowledged.prompts_list_changed,
            methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED,
        ),
        (
            acknowledged.resources_list_changed,
            methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
        ),
    ];
    for (on, method) in flags {
        if on == Some(true) {
            notes.push(note(method, Value::Object(Map::new())));
        }
    }
    for uri in acknowledged.resource_subscriptions.iter().flatten() {
        notes.push(note(
            methods::NOTIFICATIONS_RESOURCES_UPDATED,
            serde_json::json!({"uri": uri}),
        ));
    }
    notes
}

impl Subscription {
    /// The notification types the server agreed to send.
    pub fn acknowledged(&self) -> &SubscriptionFilter {
        &self.acknowledged
    }

    /// The next notification; `None` once the subscription ended (see
    /// [`Subscription::ended`]). A stream that drops, or that a replica
    /// ends as it shuts down, is opened again with the same filter (the
    /// client keeps trying for a minute); the reader is then told each
    /// change it watches, as changes in between were not heard.
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
