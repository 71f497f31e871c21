//! Resumable SSE streams of the legacy HTTP wire (spec 2025-11-25,
//! basic/transports.mdx, "Resumability and Redelivery").
//!
//! Every event of a stream gets an id `{stream}_{seq}` and is kept in the
//! stream's log, so a client whose connection closed (or was closed by the
//! server to make it poll) can reconnect with `GET` + `Last-Event-ID` and
//! receive what it missed, then the rest live. Logs are bounded per stream
//! and per session, and so is what waits for a connection: a client that
//! falls a whole log behind is disconnected and resumes from the log.

use bytes::Bytes;
use serde_json::Value;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

use crate::net::sse;
use crate::rpc::lock_unpoisoned;

/// Events kept per stream for replay.
const MAX_EVENTS_PER_STREAM: usize = 1024;
/// Stream logs kept per session (oldest dropped first).
const MAX_STREAMS_PER_SESSION: usize = 64;
/// How long a client waits before reconnecting (the SSE `retry` field).
pub(crate) const RETRY_MS: u64 = 500;

struct LogState {
    events: VecDeque<(u64, Bytes)>,
    next_seq: u64,
    attached: Option<mpsc::Sender<Bytes>>,
    finished: bool,
}

/// One stream's events and its current connection, if any.
pub(crate) struct StreamLog {
    id: u64,
    state: Mutex<LogState>,
}

impl StreamLog {
    fn event_id(&self, seq: u64) -> String {
        format!("{}_{seq}", self.id)
    }

    /// Appends the event `frame` writes for the next event id.
    fn record(&self, state: &mut LogState, frame: impl FnOnce(&str) -> Bytes) {
        let seq = state.next_seq;
        state.next_seq += 1;
        let event = frame(&self.event_id(seq));
        if state.events.len() == MAX_EVENTS_PER_STREAM {
            state.events.pop_front();
        }
        state.events.push_back((seq, event.clone()));
        // A connection whose client has not read a log's worth of events
        // (or that closed) is let go: its client resumes from the log with
        // `Last-Event-ID`, so nothing kept is lost and nothing piles up.
        if let Some(tx) = &state.attached
            && tx.try_send(event).is_err()
        {
            state.attached = None;
        }
    }

    /// Opens the stream on a new connection: the priming event (an id and
    /// empty data, with the reconnection delay), then whatever follows.
    pub(crate) fn start(&self) -> mpsc::Receiver<Bytes> {
        let (tx, rx) = connection_channel();
        let mut state = lock_unpoisoned(&self.state);
        state.attached = Some(tx);
        self.record(&mut state, |id| sse::priming_event(id, RETRY_MS));
        rx
    }

    /// Appends a JSON-RPC message.
    pub(crate) fn push(&self, message: &Value) {
        let mut state = lock_unpoisoned(&self.state);
        self.record(&mut state, |id| sse::message_event(Some(id), message));
    }

    /// Ends the stream after its last message.
    pub(crate) fn finish(&self) {
        let mut state = lock_unpoisoned(&self.state);
        state.finished = true;
        state.attached = None;
    }

    /// Closes the current connection but not the stream: the client is
    /// expected to reconnect with `Last-Event-ID`.
    pub(crate) fn detach(&self) {
        lock_unpoisoned(&self.state).attached = None;
    }

    /// Reattaches a connection after event `seq`: replays what followed,
    /// then continues live unless the stream already finished.
    pub(crate) fn resume_after(&self, seq: u64) -> mpsc::Receiver<Bytes> {
        let (tx, rx) = connection_channel();
        let mut state = lock_unpoisoned(&self.state);
        for (s, event) in &state.events {
            if *s > seq {
                // Room for the whole log: a replay always fits.
                let _ = tx.try_send(event.clone());
            }
        }
        if !state.finished {
            state.attached = Some(tx);
        }
        rx
    }
}

/// A connection's queue: a whole log fits, and one event more.
fn connection_channel() -> (mpsc::Sender<Bytes>, mpsc::Receiver<Bytes>) {
    mpsc::channel(MAX_EVENTS_PER_STREAM + 1)
}

/// The resumable streams of one session.
#[derive(Default)]
pub(crate) struct Streams {
    next_id: AtomicU64,
    logs: Mutex<VecDeque<Arc<StreamLog>>>,
}

impl Streams {
    /// A new stream log, registered for resumption.
    pub(crate) fn open(&self) -> Arc<StreamLog> {
        let log = Arc::new(StreamLog {
            id: self.next_id.fetch_add(1, Ordering::Relaxed) + 1,
            state: Mutex::new(LogState {
                events: VecDeque::new(),
                next_seq: 0,
                attached: None,
                finished: false,
            }),
        });
        let mut logs = lock_unpoisoned(&self.logs);
        if logs.len() == MAX_STREAMS_PER_SESSION {
            logs.pop_front();
        }
        logs.push_back(log.clone());
        log
    }

    /// Finds the stream and position a `Last-Event-ID` names.
    pub(crate) fn find(&self, last_event_id: &str) -> Option<(Arc<StreamLog>, u64)> {
        let (stream, seq) = last_event_id.trim().split_once('_')?;
        let stream: u64 = stream.parse().ok()?;
        let seq: u64 = seq.parse().ok()?;
        let log = lock_unpoisoned(&self.logs)
            .iter()
            .find(|l| l.id == stream)?
            .clone();
        Some((log, seq))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn drain(rx: &mut mpsc::Receiver<Bytes>) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(b) = rx.try_recv() {
            out.push(String::from_utf8_lossy(&b).into_owned());
        }
        out
    }

    #[test]
    fn replays_after_last_event_id_then_continues_live() {
        let streams = Streams::default();
        let log = streams.open();
        let mut first = log.start();
        log.push(&json!({"n": 1}));
        log.detach();
        log.push(&json!({"n": 2}));
        let seen = drain(&mut first);
        assert_eq!(seen.len(), 2);
        assert!(seen[0].starts_with("id: 1_0\nretry: 500\ndata: "));
        let (found, seq) = streams.find("1_1").unwrap();
        let mut resumed = found.resume_after(seq);
        log.push(&json!({"n": 3}));
        log.finish();
        let replay = drain(&mut resumed);
        assert_eq!(replay.len(), 2);
        assert!(replay[0].contains("\"n\":2") && replay[1].contains("\"n\":3"));
        assert!(streams.find("9_0").is_none());
        assert!(streams.find("garbage").is_none());
    }

    #[test]
    fn a_connection_a_whole_log_behind_is_let_go_and_resumes_from_the_log() {
        let streams = Streams::default();
        let log = streams.open();
        let mut unread = log.start();
        for n in 0..3 * MAX_EVENTS_PER_STREAM {
            log.push(&json!({ "n": n }));
        }
        // What waited for the connection is bounded, and the connection
        // was let go (its queue ends) instead of growing.
        let seen = drain(&mut unread);
        assert!(seen.len() <= MAX_EVENTS_PER_STREAM + 1, "{}", seen.len());
        assert!(unread.try_recv().is_err() && unread.is_closed());
        // The client resumes after the last event it got; the log still
        // holds the newest events.
        let last = seen.last().unwrap();
        let id = last
            .strip_prefix("id: ")
            .unwrap()
            .split('\n')
            .next()
            .unwrap();
        let (found, seq) = streams.find(id).unwrap();
        let mut resumed = found.resume_after(seq);
        let replay = drain(&mut resumed);
        assert!(!replay.is_empty());
        assert!(
            replay
                .last()
                .unwrap()
                .contains(&format!("\"n\":{}", 3 * MAX_EVENTS_PER_STREAM - 1))
        );
    }
}
