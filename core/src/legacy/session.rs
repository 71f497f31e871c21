//! Legacy sessions and their bounded store.

use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use crate::McpError;
use crate::protocol::jsonrpc::{RequestId, notification_value, request_value};
use crate::rpc::{DuplicateId, InFlight, Tracked, lock_unpoisoned};
use crate::server::{LiveRequester, LogLevel, NotificationSink, Server};

/// One initialized legacy session.
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) protocol_version: String,
    pub(crate) client_capabilities: Map<String, Value>,
    pub(crate) client_info: Option<Value>,
    log_level: Mutex<LogLevel>,
    subscriptions: Mutex<HashSet<String>>,
    /// Server-to-client requests awaiting the client's response.
    pending: InFlight<oneshot::Sender<Result<Value, McpError>>>,
    next_request_id: AtomicI64,
    /// The client's requests running in this session.
    in_flight: Arc<InFlight<CancellationToken>>,
    last_used: Mutex<Instant>,
    /// Where messages unrelated to a request go (the GET stream / stdout).
    standalone: Mutex<Option<NotificationSink>>,
    /// Cancelled when the session ends: stops its requests and forwarder.
    pub(crate) closed: CancellationToken,
    /// Resumable SSE streams (HTTP only).
    pub(crate) streams: super::streams::Streams,
}

impl Session {
    pub(crate) fn new(
        id: String,
        protocol_version: String,
        client_capabilities: Map<String, Value>,
        client_info: Option<Value>,
    ) -> Session {
        Session {
            id,
            protocol_version,
            client_capabilities,
            client_info,
            // Until the client sets a level, it gets every message.
            log_level: Mutex::new(LogLevel::Debug),
            subscriptions: Mutex::default(),
            pending: InFlight::new(),
            next_request_id: AtomicI64::new(1),
            in_flight: Arc::default(),
            last_used: Mutex::new(Instant::now()),
            standalone: Mutex::new(None),
            closed: CancellationToken::new(),
            streams: super::streams::Streams::default(),
        }
    }

    pub(crate) fn log_level(&self) -> LogLevel {
        *lock_unpoisoned(&self.log_level)
    }

    pub(crate) fn set_log_level(&self, level: LogLevel) {
        *lock_unpoisoned(&self.log_level) = level;
    }

    pub(crate) fn set_subscribed(&self, uri: &str, subscribed: bool) {
        let mut subs = lock_unpoisoned(&self.subscriptions);
        if subscribed {
            subs.insert(uri.to_owned());
        } else {
            subs.remove(uri);
        }
    }

    pub(crate) fn touch(&self) {
        *lock_unpoisoned(&self.last_used) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        lock_unpoisoned(&self.last_used).elapsed()
    }

    /// Sets (or clears) the standalone channel.
    pub(crate) fn set_standalone(&self, sink: Option<NotificationSink>) {
        *lock_unpoisoned(&self.standalone) = sink;
    }

    pub(crate) fn has_standalone(&self) -> bool {
        lock_unpoisoned(&self.standalone)
            .as_ref()
            .is_some_and(|s| !s.is_closed())
    }

    /// Tracks a running request so `notifications/cancelled` can stop it;
    /// the returned guard untracks it. Refused when the id is already in
    /// flight in this session.
    pub(crate) fn track(
        &self,
        id: RequestId,
        cancel: CancellationToken,
    ) -> Result<Tracked<CancellationToken>, DuplicateId<CancellationToken>> {
        self.in_flight.track(id, cancel)
    }

    pub(crate) fn cancel(&self, id: &RequestId) {
        self.in_flight.cancel(id);
    }

    /// Routes a client response to the server request it answers.
    pub(crate) fn deliver_response(
        &self,
        id: &RequestId,
        outcome: Result<Value, McpError>,
    ) -> bool {
        self.pending.resolve(id, outcome)
    }

    /// Forwards server change events to this session until it closes:
    /// list changes always, resource updates for subscribed URIs.
    pub(crate) fn forward_events(self: &Arc<Self>, server: &Server) {
        let mut events = server.subscribe_events();
        let session = Arc::downgrade(self);
        let closed = self.closed.clone();
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    e = events.recv() => e,
                    _ = closed.cancelled() => return,
                };
                let Some(session) = session.upgrade() else {
                    return;
                };
                let note = match event {
                    Ok(event) => session.notification_for(&event),
                    Err(broadcast::error::RecvError::Lagged(_)) => None,
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if let Some(note) = note
                    && let Some(sink) = lock_unpoisoned(&session.standalone).as_ref()
                {
                    let _ = sink.send(note);
                }
            }
        });
    }

    fn notification_for(&self, event: &crate::server::ServerEventView) -> Option<Value> {
        use crate::server::ServerEventView as E;
        if let E::ResourceUpdated(uri) = event
            && !lock_unpoisoned(&self.subscriptions).contains(uri)
        {
            return None;
        }
        let (method, params) = event.notification();
        // list_changed notifications carry no params at all
        let params = (!params.is_empty()).then_some(params);
        Some(notification_value(method, params.as_ref()))
    }

    /// Ends the session: running requests are cancelled, waiting server
    /// requests fail.
    pub(crate) fn close(&self) {
        self.closed.cancel();
        self.in_flight.cancel_all();
        // Dropping the reply channels fails the waiting asks.
        drop(self.pending.drain());
        lock_unpoisoned(&self.standalone).take();
    }
}

impl LiveRequester for Session {
    fn has_capability(&self, capability: &str) -> bool {
        self.client_capabilities.contains_key(capability)
    }

    fn start(
        &self,
        method: &str,
        params: Value,
        sink: Option<&NotificationSink>,
    ) -> Result<oneshot::Receiver<Result<Value, McpError>>, McpError> {
        let id = RequestId::String(format!(
            "ferromcp-{}",
            self.next_request_id.fetch_add(1, Ordering::Relaxed)
        ));
        let params = match params {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        let (tx, rx) = oneshot::channel();
        if self.pending.insert(id.clone(), tx).is_err() {
            // Cannot happen: ids come from a counter no other request uses.
            return Err(McpError::internal(format!(
                "request id {id} to the client is already in flight"
            )));
        }
        let message = request_value(&id, method, Some(&params));
        // Requests related to a call travel with it; otherwise on the
        // standalone channel.
        let standalone = lock_unpoisoned(&self.standalone).clone();
        let sent = match sink.or(standalone.as_ref()) {
            Some(sink) => sink.send(message).is_ok(),
            None => false,
        };
        if !sent {
            self.pending.take(&id);
            return Err(McpError::internal(format!(
                "no open stream to send {method} to the client"
            )));
        }
        Ok(rx)
    }
}

/// Bounds on legacy sessions, so legacy clients cannot grow memory without
/// limit.
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    /// Sessions idle this long are ended.
    pub idle_timeout: Duration,
    /// At most this many sessions exist at once.
    pub max_sessions: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
        }
    }
}

/// The HTTP sessions of one endpoint.
pub(crate) struct SessionStore {
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    limits: SessionLimits,
}

impl SessionStore {
    pub(crate) fn new(limits: SessionLimits) -> SessionStore {
        SessionStore {
            sessions: Mutex::default(),
            limits,
        }
    }

    /// A fresh, unguessable session id (128 random bits, visible ASCII).
    pub(crate) fn new_id() -> String {
        let mut bytes = [0u8; 16];
        if getrandom::fill(&mut bytes).is_err() {
            // No entropy source: fall back to a sealed timestamp, still unique.
            let key = crate::server::SealKey::random();
            let stamp = format!("{:?}", std::time::SystemTime::now());
            return key.seal("session", stamp.as_bytes()).replace('.', "");
        }
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        let session = lock_unpoisoned(&self.sessions).get(id).cloned()?;
        if session.idle_for() > self.limits.idle_timeout {
            self.remove(id);
            return None;
        }
        session.touch();
        Some(session)
    }

    /// Adds a session, first dropping expired ones; refuses when full.
    pub(crate) fn insert(&self, session: Arc<Session>) -> Result<(), McpError> {
        self.expire();
        let mut sessions = lock_unpoisoned(&self.sessions);
        if sessions.len() >= self.limits.max_sessions {
            return Err(McpError::internal(
                "too many open sessions; try again later",
            ));
        }
        sessions.insert(session.id.clone(), session);
        Ok(())
    }

    pub(crate) fn remove(&self, id: &str) -> bool {
        match lock_unpoisoned(&self.sessions).remove(id) {
            Some(session) => {
                session.close();
                true
            }
            None => false,
        }
    }

    /// Ends sessions idle past the limit.
    pub(crate) fn expire(&self) {
        let idle = self.limits.idle_timeout;
        let expired: Vec<Arc<Session>> = {
            let mut sessions = lock_unpoisoned(&self.sessions);
            let ids: Vec<String> = sessions
                .iter()
                .filter(|(_, s)| s.idle_for() > idle)
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| sessions.remove(id)).collect()
        };
        for session in expired {
            session.close();
        }
    }

    pub(crate) fn close_all(&self) {
        let all: Vec<Arc<Session>> = lock_unpoisoned(&self.sessions)
            .drain()
            .map(|(_, s)| s)
            .collect();
        for session in all {
            session.close();
        }
    }
}
