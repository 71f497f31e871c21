//! A scripted transport for the client's unit tests: each request is
//! answered by the next scripted reply, and everything sent is recorded.

use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use super::{Client, ClientOptions, ClientTransport, OutgoingRequest};
use crate::protocol::jsonrpc::RequestId;
use crate::rpc::lock_unpoisoned;
use crate::{BoxFuture, Error};

/// Options that skip era detection: the tests script 2026-07-28 replies.
pub(super) fn modern() -> ClientOptions {
    ClientOptions {
        era: super::EraPreference::Modern,
        ..ClientOptions::default()
    }
}

/// One request as the transport saw it.
#[derive(Debug, Clone)]
pub(super) struct Sent {
    pub(super) id: RequestId,
    pub(super) method: String,
    pub(super) params: Map<String, Value>,
    pub(super) version: String,
    pub(super) headers: Vec<(String, String)>,
}

#[derive(Default)]
struct Script {
    replies: VecDeque<Result<Value, Error>>,
    /// Sent on each request's notification channel before its reply.
    notes: Vec<Value>,
    sent: Vec<Sent>,
    notified: Vec<(String, String)>,
}

/// Replies in order; a request beyond the script fails with `Closed`.
#[derive(Clone, Default)]
pub(super) struct Scripted {
    script: Arc<Mutex<Script>>,
    mirrors: bool,
}

impl Scripted {
    pub(super) fn new(replies: impl IntoIterator<Item = Result<Value, Error>>) -> Scripted {
        let scripted = Scripted::default();
        lock_unpoisoned(&scripted.script).replies = replies.into_iter().collect();
        scripted
    }

    /// Sends these notifications about every request, before its reply,
    /// as a server does while it works.
    pub(super) fn notifying(self, notes: impl IntoIterator<Item = Value>) -> Scripted {
        lock_unpoisoned(&self.script).notes = notes.into_iter().collect();
        self
    }

    /// Behaves as HTTP does for `x-mcp-header` mirroring.
    pub(super) fn mirroring(mut self) -> Scripted {
        self.mirrors = true;
        self
    }

    /// A client over this transport.
    pub(super) fn client(&self, options: ClientOptions) -> Client {
        Client::from_transport(Arc::new(self.clone()), options, super::OutOfCall::new())
    }

    pub(super) fn sent(&self) -> Vec<Sent> {
        lock_unpoisoned(&self.script).sent.clone()
    }

    /// Notifications sent, as (method, version).
    pub(super) fn notified(&self) -> Vec<(String, String)> {
        lock_unpoisoned(&self.script).notified.clone()
    }
}

impl ClientTransport for Scripted {
    fn send(&self, request: OutgoingRequest) -> BoxFuture<Result<Value, Error>> {
        let mut script = lock_unpoisoned(&self.script);
        if let Some(notifications) = &request.notifications {
            for note in &script.notes {
                notifications.send(note.clone());
            }
        }
        script.sent.push(Sent {
            id: request.id,
            method: request.method,
            params: request.params,
            version: request.version,
            headers: request.headers,
        });
        let reply = script.replies.pop_front().unwrap_or(Err(Error::Closed));
        Box::pin(async move { reply })
    }

    fn notify(
        &self,
        method: &str,
        _params: Map<String, Value>,
        version: &str,
    ) -> BoxFuture<Result<(), Error>> {
        lock_unpoisoned(&self.script)
            .notified
            .push((method.to_owned(), version.to_owned()));
        Box::pin(async { Ok(()) })
    }

    fn mirrors_headers(&self) -> bool {
        self.mirrors
    }

    fn close(&self) -> BoxFuture<()> {
        Box::pin(async {})
    }
}
