//! Legacy sessions and their bounded store.

use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{broadcast, oneshot};
use tokio_util::sync::CancellationToken;

use crate::McpError;
use crate::protocol::jsonrpc::{RawJson, RequestId, notification_value, request_value};
use crate::protocol::methods;
use crate::rpc::{DuplicateId, InFlight, Tracked, lock_unpoisoned};
use crate::server::{LiveRequester, LoggingLevel, NotificationSink, Server};

/// One initialized legacy session.
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) protocol_version: String,
    pub(crate) client_capabilities: Map<String, Value>,
    pub(crate) client_info: Option<RawJson>,
    log_level: Mutex<LoggingLevel>,
    subscriptions: Mutex<HashSet<String>>,
    /// Server-to-client requests awaiting the client's response.
    pending: InFlight<oneshot::Sender<Result<Value, McpError>>>,
    next_request_id: AtomicI64,
    /// The client's requests running in this session.
    in_flight: Arc<InFlight<CancellationToken>>,
    last_used: Mutex<Instant>,
    /// Whether the client continued after `initialize` (sent
    /// `notifications/initialized` or a request). Until then the session is
    /// half-open: it expires sooner and is evicted first.
    established: AtomicBool,
    /// Where messages unrelated to a request go (the GET stream / stdout).
    standalone: Mutex<Option<NotificationSink>>,
    /// Cancelled when the session ends: stops its requests and forwarder.
    pub(crate) closed: CancellationToken,
    /// Resumable SSE streams (HTTP only).
    pub(crate) streams: super::streams::Streams,
    /// Who opened the session on a protected server (the token's subject):
    /// only they may use it (a session id is no credential).
    owner: std::sync::OnceLock<String>,
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
            client_info: client_info.as_ref().map(RawJson::from_value),
            // Until the client sets a level, it gets every message.
            log_level: Mutex::new(LoggingLevel::Debug),
            subscriptions: Mutex::default(),
            pending: InFlight::new(),
            next_request_id: AtomicI64::new(1),
            in_flight: Arc::default(),
            last_used: Mutex::new(Instant::now()),
            established: AtomicBool::new(false),
            standalone: Mutex::new(None),
            closed: CancellationToken::new(),
            streams: super::streams::Streams::default(),
            owner: std::sync::OnceLock::new(),
        }
    }

    /// Binds the session to the identity that opened it.
    pub(crate) fn bind_owner(&self, owner: String) {
        let _ = self.owner.set(owner);
    }

    /// Whether `who` may use the session: anyone when it is not bound.
    pub(crate) fn usable_by(&self, who: Option<&str>) -> bool {
        self.owner
            .get()
            .is_none_or(|owner| who == Some(owner.as_str()))
    }

    pub(crate) fn log_level(&self) -> LoggingLevel {
        *lock_unpoisoned(&self.log_level)
    }

    pub(crate) fn set_log_level(&self, level: LoggingLevel) {
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

    /// The client continued after `initialize`: no longer half-open.
    pub(crate) fn establish(&self) {
        self.established.store(true, Ordering::Relaxed);
    }

    fn is_established(&self) -> bool {
        self.established.load(Ordering::Relaxed)
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
        let server = server.clone();
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    e = events.recv() => e,
                    _ = closed.cancelled() => return,
                };
                let Some(session) = session.upgrade() else {
                    return;
                };
                let notes = match event {
                    Ok(crate::server::ServerEventView::Gap)
                    | Err(broadcast::error::RecvError::Lagged(_)) => {
                        session.everything(server.registry_read().offered)
                    }
                    Ok(event) => session.notification_for(&event).into_iter().collect(),
                    Err(broadcast::error::RecvError::Closed) => return,
                };
                if let Some(sink) = lock_unpoisoned(&session.standalone).as_ref() {
                    for note in notes {
                        // Dropped while the client's GET stream is not read.
                        let _ = sink.try_send(note);
                    }
                }
            }
        });
    }

    /// After missed events (a lag, or a gap on the bus between replicas):
    /// every list the server offers may have changed, and every resource
    /// the session subscribed to.
    fn everything(&self, offered: crate::server::OfferedKinds) -> Vec<Value> {
        let mut notes = Vec::new();
        let lists = [
            (offered.tools, methods::NOTIFICATIONS_TOOLS_LIST_CHANGED),
            (offered.prompts, methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED),
            (
                offered.resources,
                methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED,
            ),
        ];
        for (offered, method) in lists {
            if offered {
                notes.push(notification_value(method, None));
            }
        }
        for uri in lock_unpoisoned(&self.subscriptions).iter() {
            let mut params = Map::new();
            params.insert("uri".into(), Value::from(uri.clone()));
            notes.push(notification_value(
                methods::NOTIFICATIONS_RESOURCES_UPDATED,
                Some(&params),
            ));
        }
        notes
    }

    fn notification_for(&self, event: &crate::server::ServerEventView) -> Option<Value> {
        use crate::server::ServerEventView as E;
        match event {
            E::ResourceUpdated(uri) if !lock_unpoisoned(&self.subscriptions).contains(uri) => {
                return None;
            }
            // The tasks extension is not defined under 2025-11-25.
            E::Task(_) => return None,
            _ => {}
        }
        // (A gap has no notification of its own: see `everything`.)
        let (method, params) = event.notification()?;
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
        _key: Option<&str>,
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
            Some(sink) => sink.try_send(message).is_ok(),
            None => false,
        };
        if !sent {
            self.pending.take(&id);
            return Err(McpError::internal(format!(
                "cannot send {method} to the client: no open stream, or 1,024 messages already wait for it to read"
            )));
        }
        Ok(rx)
    }
}

/// Bounds on legacy sessions, so legacy clients cannot grow memory without
/// limit, nor lock other clients out by opening sessions they never use.
///
/// ```
/// use ferromcp::legacy::SessionLimits;
/// use std::time::Duration;
///
/// let limits = SessionLimits {
///     half_open_timeout: Duration::from_secs(10),
///     max_sessions_per_peer: 16,
///     ..SessionLimits::default()
/// };
/// assert_eq!(limits.max_sessions, 10_000);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct SessionLimits {
    /// Sessions idle this long are ended.
    pub idle_timeout: Duration,
    /// At most this many sessions exist at once. When full, the oldest
    /// half-open session (see `half_open_timeout`) makes room for a new
    /// one; with none, `initialize` is refused (HTTP 503).
    pub max_sessions: usize,
    /// A half-open session (initialized, but the client sent neither
    /// `notifications/initialized` nor a request since) ends after this
    /// long.
    pub half_open_timeout: Duration,
    /// At most this many sessions per client IP address; `initialize`
    /// beyond it is refused with HTTP 429 and a JSON-RPC error. (HTTP only:
    /// a stdio session has no peer.) Behind a reverse proxy every client
    /// has the proxy's address (forwarded headers are not trusted): raise
    /// it there, e.g. to `usize::MAX`.
    pub max_sessions_per_peer: usize,
}

impl Default for SessionLimits {
    fn default() -> Self {
        SessionLimits {
            idle_timeout: Duration::from_secs(30 * 60),
            max_sessions: 10_000,
            half_open_timeout: Duration::from_secs(30),
            max_sessions_per_peer: 64,
        }
    }
}

/// Why a session was not admitted.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    /// The table is full of established sessions.
    #[error("too many open sessions; try again later")]
    Full,
    /// The client's address holds its share of sessions already.
    #[error(
        "too many open sessions from this address (at most {0}); end unused sessions with DELETE"
    )]
    PeerFull(usize),
}

struct Entry {
    session: Arc<Session>,
    peer: Option<IpAddr>,
}

#[derive(Default)]
struct Table {
    sessions: HashMap<String, Entry>,
    per_peer: HashMap<IpAddr, usize>,
}

impl Table {
    fn take(&mut self, id: &str) -> Option<Arc<Session>> {
        let entry = self.sessions.remove(id)?;
        if let Some(peer) = entry.peer
            && let Some(count) = self.per_peer.get_mut(&peer)
        {
            *count -= 1;
            if *count == 0 {
                self.per_peer.remove(&peer);
            }
        }
        Some(entry.session)
    }
}

/// The HTTP sessions of one endpoint.
pub(crate) struct SessionStore {
    table: Mutex<Table>,
    limits: SessionLimits,
}

impl SessionStore {
    pub(crate) fn new(limits: SessionLimits) -> SessionStore {
        SessionStore {
            table: Mutex::default(),
            limits,
        }
    }

    /// A fresh session id for a server named `replica`: the name and a dot
    /// first, so a load balancer can route the session's requests back to
    /// the replica that holds it (docs/DEPLOYING.md).
    pub(crate) fn new_id_on(replica: Option<&str>) -> String {
        match replica {
            Some(replica) => format!("{replica}.{}", SessionStore::new_id()),
            None => SessionStore::new_id(),
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

    fn is_expired(&self, session: &Session) -> bool {
        let idle = session.idle_for();
        idle > self.limits.idle_timeout
            || (!session.is_established() && idle > self.limits.half_open_timeout)
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        let session = lock_unpoisoned(&self.table)
            .sessions
            .get(id)
            .map(|e| e.session.clone())?;
        if self.is_expired(&session) {
            self.remove(id);
            return None;
        }
        session.touch();
        Some(session)
    }

    /// Adds a session opened by `peer`, first dropping expired ones. Refused
    /// when the peer holds its share; when the table is full the oldest
    /// half-open session is evicted, and only a table full of established
    /// sessions refuses.
    pub(crate) fn insert(
        &self,
        session: Arc<Session>,
        peer: Option<IpAddr>,
    ) -> Result<(), Refused> {
        self.expire();
        let evicted = {
            let mut table = lock_unpoisoned(&self.table);
            if let Some(peer) = peer
                && table.per_peer.get(&peer).copied().unwrap_or(0)
                    >= self.limits.max_sessions_per_peer
            {
                return Err(Refused::PeerFull(self.limits.max_sessions_per_peer));
            }
            let mut evicted = None;
            if table.sessions.len() >= self.limits.max_sessions {
                let oldest_half_open = table
                    .sessions
                    .iter()
                    .filter(|(_, e)| !e.session.is_established())
                    .max_by_key(|(_, e)| e.session.idle_for())
                    .map(|(id, _)| id.clone());
                let Some(id) = oldest_half_open else {
                    return Err(Refused::Full);
                };
                evicted = table.take(&id);
            }
            if let Some(peer) = peer {
                *table.per_peer.entry(peer).or_default() += 1;
            }
            table
                .sessions
                .insert(session.id.clone(), Entry { session, peer });
            evicted
        };
        if let Some(evicted) = evicted {
            tracing::debug!(session = %evicted.id, "evicted a half-open legacy session");
            evicted.close();
        }
        Ok(())
    }

    pub(crate) fn remove(&self, id: &str) -> bool {
        let taken = lock_unpoisoned(&self.table).take(id);
        match taken {
            Some(session) => {
                session.close();
                true
            }
            None => false,
        }
    }

    /// Ends sessions idle past the limit, and half-open ones past theirs.
    pub(crate) fn expire(&self) {
        let expired: Vec<Arc<Session>> = {
            let mut table = lock_unpoisoned(&self.table);
            let ids: Vec<String> = table
                .sessions
                .iter()
                .filter(|(_, e)| self.is_expired(&e.session))
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| table.take(id)).collect()
        };
        for session in expired {
            session.close();
        }
    }

    pub(crate) fn close_all(&self) {
        let all: Vec<Arc<Session>> = {
            let mut table = lock_unpoisoned(&self.table);
            table.per_peer.clear();
            table.sessions.drain().map(|(_, e)| e.session).collect()
        };
        for session in all {
            session.close();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Arc<Session> {
        Arc::new(Session::new(
            SessionStore::new_id(),
            "2025-11-25".into(),
            Map::new(),
            None,
        ))
    }

    fn limits(max_sessions: usize, per_peer: usize) -> SessionLimits {
        SessionLimits {
            max_sessions,
            max_sessions_per_peer: per_peer,
            ..SessionLimits::default()
        }
    }

    #[test]
    fn a_full_table_evicts_its_oldest_half_open_session_never_an_established_one() {
        let store = SessionStore::new(limits(2, 100));
        let peer = Some(IpAddr::from([10, 0, 0, 1]));
        let (established, half_open, newcomer) = (session(), session(), session());
        established.establish();
        store.insert(established.clone(), peer).unwrap();
        store.insert(half_open.clone(), peer).unwrap();
        store.insert(newcomer.clone(), peer).unwrap();
        assert!(half_open.closed.is_cancelled());
        assert!(store.get(&half_open.id).is_none());
        assert!(store.get(&established.id).is_some());
        // the newcomer is half-open too: the next one replaces it
        store.insert(session(), peer).unwrap();
        assert!(newcomer.closed.is_cancelled());
        // a table of established sessions refuses
        let store = SessionStore::new(limits(1, 100));
        established.establish();
        store.insert(established, peer).unwrap();
        assert!(matches!(store.insert(session(), peer), Err(Refused::Full)));
    }

    #[test]
    fn the_per_peer_cap_counts_live_sessions_of_that_address_only() {
        let store = SessionStore::new(limits(100, 2));
        let (a, b) = (
            Some(IpAddr::from([10, 0, 0, 1])),
            Some(IpAddr::from([10, 0, 0, 2])),
        );
        let first = session();
        store.insert(first.clone(), a).unwrap();
        store.insert(session(), a).unwrap();
        assert!(matches!(
            store.insert(session(), a),
            Err(Refused::PeerFull(2))
        ));
        store.insert(session(), b).unwrap();
        // ending one frees its address's slot
        assert!(store.remove(&first.id));
        store.insert(session(), a).unwrap();
        // no peer (stdio) is never capped
        for _ in 0..3 {
            store.insert(session(), None).unwrap();
        }
    }

    #[test]
    fn half_open_sessions_expire_after_their_short_timeout() {
        let store = SessionStore::new(SessionLimits {
            half_open_timeout: Duration::ZERO,
            ..SessionLimits::default()
        });
        let (half_open, established) = (session(), session());
        established.establish();
        store.insert(half_open.clone(), None).unwrap();
        store.insert(established.clone(), None).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        store.expire();
        assert!(half_open.closed.is_cancelled());
        assert!(!established.closed.is_cancelled());
    }
}
