//! The table of requests in flight: request id -> what is waiting on it.
//!
//! One type serves every side that tracks requests by id:
//! - a server tracks the requests it is running, to cancel them on
//!   `notifications/cancelled` or when the peer goes away (entries carry a
//!   [`CancellationToken`]: see [`Cancel`]);
//! - a requester (the stdio client, a legacy session asking the client for
//!   input) tracks the requests it sent, to hand each response to its caller
//!   and to fail them all when the connection closes (entries carry a reply
//!   channel: see [`Reply`]).
//!
//! Ids must be unique among requests in flight (spec: basic/index.mdx,
//! "Requests"), so [`InFlight::insert`] refuses an id already present rather
//! than overwriting it: the first request would otherwise become impossible
//! to answer or cancel.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::lock_unpoisoned;
use crate::McpError;
use crate::protocol::codes;
use crate::protocol::jsonrpc::RequestId;

/// An entry that can be cancelled: it owns the token that stops its work.
pub(crate) trait Cancel {
    /// The token that stops the request's work.
    fn token(&self) -> &CancellationToken;
}

impl Cancel for CancellationToken {
    fn token(&self) -> &CancellationToken {
        self
    }
}

/// A token with a tag (e.g. whether the request is a subscription).
impl<T> Cancel for (CancellationToken, T) {
    fn token(&self) -> &CancellationToken {
        &self.0
    }
}

/// An entry waiting for the peer's answer.
pub(crate) trait Reply {
    /// What the waiter receives.
    type Outcome;
    /// Hands the outcome to the waiter; false when it stopped waiting.
    fn reply(self, outcome: Self::Outcome) -> bool;
}

impl<T> Reply for oneshot::Sender<T> {
    type Outcome = T;
    fn reply(self, outcome: T) -> bool {
        self.send(outcome).is_ok()
    }
}

/// [`InFlight::insert`] refused an id already in flight; the entry is
/// handed back.
#[derive(Debug)]
pub(crate) struct DuplicateId<V>(pub(crate) V);

/// The error answering a request refused because its id is already in
/// flight (-32600, the same from every transport and era).
pub(crate) fn duplicate_id_error(id: &RequestId) -> McpError {
    McpError::new(
        codes::INVALID_REQUEST,
        format!("request id {id} is already in use by a request in flight"),
    )
}

/// Requests in flight by id. Share it behind an `Arc`; every method takes
/// `&self` and holds the lock only for the map operation.
#[derive(Debug)]
pub(crate) struct InFlight<V> {
    entries: Mutex<HashMap<RequestId, V>>,
}

impl<V> Default for InFlight<V> {
    fn default() -> Self {
        InFlight {
            entries: Mutex::new(HashMap::new()),
        }
    }
}

impl<V> InFlight<V> {
    /// An empty table.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Adds an entry, unless `id` is already in flight.
    pub(crate) fn insert(&self, id: RequestId, entry: V) -> Result<(), DuplicateId<V>> {
        let mut entries = lock_unpoisoned(&self.entries);
        if entries.contains_key(&id) {
            return Err(DuplicateId(entry));
        }
        entries.insert(id, entry);
        Ok(())
    }

    /// [`InFlight::insert`], returning a guard that removes the entry when
    /// dropped (when the request's task ends, however it ends).
    pub(crate) fn track(
        self: &Arc<Self>,
        id: RequestId,
        entry: V,
    ) -> Result<Tracked<V>, DuplicateId<V>> {
        self.insert(id.clone(), entry)?;
        Ok(Tracked {
            table: self.clone(),
            id: Some(id),
        })
    }

    /// Removes and returns the entry for `id`.
    pub(crate) fn take(&self, id: &RequestId) -> Option<V> {
        lock_unpoisoned(&self.entries).remove(id)
    }

    /// Whether `id` is in flight.
    #[cfg(test)] // what the table's tests look at
    pub(crate) fn contains(&self, id: &RequestId) -> bool {
        lock_unpoisoned(&self.entries).contains_key(id)
    }

    /// Number of entries.
    #[cfg(test)] // what the table's tests look at
    pub(crate) fn len(&self) -> usize {
        lock_unpoisoned(&self.entries).len()
    }

    /// Whether nothing is in flight.
    #[cfg(test)] // what the table's tests look at
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs `f` on the entry for `id`, under the lock.
    pub(crate) fn with<R>(&self, id: &RequestId, f: impl FnOnce(&V) -> R) -> Option<R> {
        lock_unpoisoned(&self.entries).get(id).map(f)
    }

    /// The first `Some` that `f` returns over the entries, under the lock
    /// (e.g. finding a request by its progress token).
    pub(crate) fn find_map<R>(&self, f: impl FnMut(&V) -> Option<R>) -> Option<R> {
        lock_unpoisoned(&self.entries).values().find_map(f)
    }

    /// Removes and returns every entry (the connection or session closed).
    pub(crate) fn drain(&self) -> Vec<(RequestId, V)> {
        lock_unpoisoned(&self.entries).drain().collect()
    }
}

impl<V: Cancel> InFlight<V> {
    /// Cancels the request `id` (its task removes the entry when it stops);
    /// false when nothing by that id is in flight.
    pub(crate) fn cancel(&self, id: &RequestId) -> bool {
        match lock_unpoisoned(&self.entries).get(id) {
            Some(entry) => {
                entry.token().cancel();
                true
            }
            None => false,
        }
    }

    /// Cancels every request `which` selects, leaving the entries for their
    /// tasks to remove.
    pub(crate) fn cancel_where(&self, mut which: impl FnMut(&V) -> bool) {
        for entry in lock_unpoisoned(&self.entries).values() {
            if which(entry) {
                entry.token().cancel();
            }
        }
    }

    /// Removes every entry and cancels it (the session ended).
    pub(crate) fn cancel_all(&self) {
        for (_, entry) in self.drain() {
            entry.token().cancel();
        }
    }
}

impl<V: Reply> InFlight<V> {
    /// Hands `outcome` to whoever waits on `id`, removing the entry; false
    /// when nobody does (unknown id, or the caller stopped waiting).
    pub(crate) fn resolve(&self, id: &RequestId, outcome: V::Outcome) -> bool {
        // Taken out before replying: the waiter may run, and reuse the id,
        // as soon as it has the outcome.
        match self.take(id) {
            Some(entry) => entry.reply(outcome),
            None => false,
        }
    }

    /// Removes every entry, answering each with `outcome()` (the connection
    /// closed: waiting calls fail instead of hanging).
    pub(crate) fn fail_all(&self, mut outcome: impl FnMut() -> V::Outcome) {
        for (_, entry) in self.drain() {
            entry.reply(outcome());
        }
    }
}

/// Removes its entry from the table when dropped.
#[derive(Debug)]
pub(crate) struct Tracked<V> {
    table: Arc<InFlight<V>>,
    id: Option<RequestId>,
}

impl<V> Tracked<V> {
    /// The tracked request's id.
    #[cfg(test)] // what the table's tests look at
    pub(crate) fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// Removes the entry now (e.g. to free the id before answering, since a
    /// peer may reuse it as soon as it reads the response).
    pub(crate) fn release(&mut self) -> Option<V> {
        let id = self.id.take()?;
        self.table.take(&id)
    }

    /// Stops tracking without removing the entry (someone else took it).
    #[cfg(test)] // what the table's tests look at
    pub(crate) fn disarm(&mut self) {
        self.id = None;
    }
}

impl<V> Drop for Tracked<V> {
    fn drop(&mut self) {
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: i64) -> RequestId {
        RequestId::Number(n)
    }

    #[test]
    fn insert_refuses_a_duplicate_id_and_keeps_the_first() {
        let table = InFlight::new();
        assert!(table.insert(id(1), "first").is_ok());
        let refused = table.insert(id(1), "second").unwrap_err();
        assert_eq!(refused.0, "second");
        assert_eq!(table.take(&id(1)), Some("first"));
        assert!(table.insert(id(1), "again").is_ok(), "free once taken");
        // A string id equal in text to a number is a different id.
        assert!(table.insert(RequestId::String("1".into()), "s").is_ok());
        assert_eq!(table.len(), 2);
    }

    #[test]
    fn cancel_cancels_only_that_request_and_leaves_the_entry() {
        let table = InFlight::new();
        let (a, b) = (CancellationToken::new(), CancellationToken::new());
        table.insert(id(1), a.clone()).unwrap();
        table.insert(id(2), b.clone()).unwrap();
        assert!(table.cancel(&id(1)));
        assert!(!table.cancel(&id(3)));
        assert!(a.is_cancelled() && !b.is_cancelled());
        assert!(table.contains(&id(1)), "the request's task removes it");
    }

    #[test]
    fn cancel_where_and_cancel_all() {
        let table = InFlight::new();
        let listen = CancellationToken::new();
        let call = CancellationToken::new();
        table.insert(id(1), (listen.clone(), true)).unwrap();
        table.insert(id(2), (call.clone(), false)).unwrap();
        table.cancel_where(|(_, is_listen)| *is_listen);
        assert!(listen.is_cancelled() && !call.is_cancelled());
        assert_eq!(table.len(), 2);
        table.cancel_all();
        assert!(call.is_cancelled());
        assert!(table.is_empty());
    }

    #[tokio::test]
    async fn resolve_hands_the_outcome_to_the_waiter_once() {
        let table = InFlight::new();
        let (tx, rx) = oneshot::channel::<u32>();
        table.insert(id(7), tx).unwrap();
        assert!(table.resolve(&id(7), 42));
        assert!(!table.resolve(&id(7), 43), "already answered");
        assert_eq!(rx.await, Ok(42));
        assert!(table.is_empty());
    }

    #[tokio::test]
    async fn resolve_reports_a_caller_that_stopped_waiting() {
        let table = InFlight::new();
        let (tx, rx) = oneshot::channel::<u32>();
        table.insert(id(1), tx).unwrap();
        drop(rx);
        assert!(!table.resolve(&id(1), 1));
        assert!(table.is_empty());
    }

    #[tokio::test]
    async fn fail_all_answers_every_waiter() {
        let table = InFlight::new();
        let (tx1, rx1) = oneshot::channel::<Result<(), String>>();
        let (tx2, rx2) = oneshot::channel::<Result<(), String>>();
        table.insert(id(1), tx1).unwrap();
        table.insert(id(2), tx2).unwrap();
        table.fail_all(|| Err("closed".into()));
        assert!(table.is_empty());
        assert_eq!(rx1.await, Ok(Err("closed".into())));
        assert_eq!(rx2.await, Ok(Err("closed".into())));
    }

    #[test]
    fn tracked_removes_its_entry_on_drop_and_release() {
        let table = Arc::new(InFlight::new());
        let guard = table.track(id(1), CancellationToken::new()).unwrap();
        assert!(table.track(id(1), CancellationToken::new()).is_err());
        assert_eq!(guard.id(), Some(&id(1)));
        drop(guard);
        assert!(table.is_empty());

        let mut guard = table.track(id(2), CancellationToken::new()).unwrap();
        assert!(guard.release().is_some());
        assert!(table.insert(id(2), CancellationToken::new()).is_ok());
        drop(guard);
        assert!(
            table.contains(&id(2)),
            "a released guard leaves the new entry"
        );

        let mut guard = table.track(id(3), CancellationToken::new()).unwrap();
        guard.disarm();
        drop(guard);
        assert!(table.contains(&id(3)));
    }

    #[test]
    fn with_and_find_map_look_without_removing() {
        let table = InFlight::new();
        table.insert(id(1), ("tok-a", 1)).unwrap();
        table.insert(id(2), ("tok-b", 2)).unwrap();
        assert_eq!(table.with(&id(2), |e| e.1), Some(2));
        assert_eq!(table.with(&id(9), |e| e.1), None);
        assert_eq!(table.find_map(|e| (e.0 == "tok-a").then_some(e.1)), Some(1));
        assert_eq!(table.len(), 2);
    }
}
