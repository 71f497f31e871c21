//! Server-Sent Events in both directions: the framing a server writes
//! (one JSON-RPC message per event, the priming event of a resumable
//! stream) and the parser a client reads a response stream with, within a
//! size limit. Side by side so that what is written is what is read (the
//! round-trip test below).
//!
//! A hostile server can send one endless line, or one endless event made
//! of many `data:` lines. The parser therefore counts an event's size as
//! its accumulated data plus the unfinished line, refuses the event as
//! soon as that passes the limit, and scans each byte for a newline once
//! (a line arriving in many chunks is not rescanned from its start).

use bytes::{Bytes, BytesMut};

use crate::Error;

/// Room for a line's field name (`data: `) beyond the limit, which is on
/// the event's data.
const FIELD_SLACK: usize = 64;

/// One event carrying a JSON-RPC message: its `id` when the stream is
/// resumable, `event: message`, and one `data` line (serde_json writes no
/// raw newline, so the message never needs more).
pub(crate) fn message_event(id: Option<&str>, message: &(impl serde::Serialize + ?Sized)) -> Bytes {
    let mut out = Vec::with_capacity(256);
    if let Some(id) = id {
        out.extend_from_slice(b"id: ");
        out.extend_from_slice(id.as_bytes());
        out.push(b'\n');
    }
    out.extend_from_slice(b"event: message\ndata: ");
    let _ = serde_json::to_writer(&mut out, message);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The event that opens a resumable stream: an id to resume after, the
/// reconnection delay, and empty data, which carries no message.
pub(crate) fn priming_event(id: &str, retry_ms: u64) -> Bytes {
    Bytes::from(format!("id: {id}\nretry: {retry_ms}\ndata: \n\n"))
}

/// One parsed SSE event.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct SseEvent {
    pub(crate) id: Option<String>,
    pub(crate) retry: Option<u64>,
    pub(crate) data: String,
}

/// Incremental SSE parser: yields complete events, ignoring comments
/// (keep-alives) and `event` names.
pub(crate) struct SseParser {
    /// Bytes of the line not finished yet (and any lines after it).
    buffer: BytesMut,
    /// How much of `buffer` is known to hold no newline.
    scanned: usize,
    current: SseEvent,
    has_fields: bool,
    /// The largest event: its data lines together, plus the line being read.
    max_event_bytes: usize,
}

impl SseParser {
    pub(crate) fn new(max_event_bytes: usize) -> SseParser {
        SseParser {
            buffer: BytesMut::new(),
            scanned: 0,
            current: SseEvent::default(),
            has_fields: false,
            max_event_bytes,
        }
    }

    /// The `data` of each complete non-empty event.
    #[cfg(test)]
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<Vec<String>, Error> {
        Ok(self
            .push_events(chunk)?
            .into_iter()
            .filter(|e| !e.data.is_empty())
            .map(|e| e.data)
            .collect())
    }

    fn too_large(&self) -> Error {
        Error::Protocol(format!(
            "an SSE event from the server is larger than the {}-byte limit (max_message_bytes)",
            self.max_event_bytes
        ))
    }

    /// Takes in `chunk`; returns the events it completed.
    pub(crate) fn push_events(&mut self, chunk: &[u8]) -> Result<Vec<SseEvent>, Error> {
        self.buffer.extend_from_slice(chunk);
        let mut events = Vec::new();
        loop {
            let Some(offset) = self.buffer[self.scanned..].iter().position(|&b| b == b'\n') else {
                self.scanned = self.buffer.len();
                if self.current.data.len() + self.buffer.len() > self.max_event_bytes + FIELD_SLACK
                {
                    return Err(self.too_large());
                }
                return Ok(events);
            };
            let end = self.scanned + offset;
            self.scanned = 0;
            let mut line = self.buffer.split_to(end + 1);
            line.truncate(end);
            if line.last() == Some(&b'\r') {
                line.truncate(line.len() - 1);
            }
            if self.current.data.len() + line.len() > self.max_event_bytes + FIELD_SLACK {
                return Err(self.too_large());
            }
            if let Some(event) = self.line(&line) {
                events.push(event);
            }
            if self.current.data.len() > self.max_event_bytes {
                return Err(self.too_large());
            }
        }
    }

    /// Takes in one line; returns the event a blank line completes.
    fn line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            if !self.has_fields {
                return None;
            }
            self.has_fields = false;
            return Some(std::mem::take(&mut self.current));
        }
        if line.starts_with(b":") {
            return None;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if !self.current.data.is_empty() {
                    self.current.data.push('\n');
                }
                self.current.data.push_str(value);
            }
            "id" => self.current.id = Some(value.to_owned()),
            "retry" => self.current.retry = value.trim().parse().ok(),
            _ => {}
        }
        self.has_fields = true;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_written_is_read_back() {
        let message = serde_json::json!({"jsonrpc": "2.0", "method": "x", "params": {"s": "a\nb"}});
        let mut p = SseParser::new(1 << 20);
        let mut stream = priming_event("1_0", 500).to_vec();
        stream.extend_from_slice(&message_event(Some("1_1"), &message));
        stream.extend_from_slice(&message_event(None, &message));
        let events = p.push_events(&stream).unwrap();
        let data = serde_json::to_string(&message).unwrap();
        assert_eq!(
            events,
            [
                SseEvent {
                    id: Some("1_0".into()),
                    retry: Some(500),
                    data: String::new()
                },
                SseEvent {
                    id: Some("1_1".into()),
                    retry: None,
                    data: data.clone()
                },
                SseEvent {
                    id: None,
                    retry: None,
                    data
                },
            ]
        );
    }

    #[test]
    fn parses_events_across_chunks_and_skips_comments() {
        let mut p = SseParser::new(1 << 20);
        assert!(
            p.push(b": keep-alive\n\nevent: message\nda")
                .unwrap()
                .is_empty()
        );
        let events = p
            .push(b"ta: {\"a\":1}\r\n\r\ndata: x\ndata: y\n\n")
            .unwrap();
        assert_eq!(events, vec!["{\"a\":1}".to_string(), "x\ny".to_string()]);
    }

    #[test]
    fn an_event_of_many_data_lines_counts_them_together() {
        let mut p = SseParser::new(1000);
        let line = format!("data: {}\n", "x".repeat(90));
        let mut refused = None;
        for n in 0..100 {
            if let Err(e) = p.push(line.as_bytes()) {
                refused = Some((n, e));
                break;
            }
        }
        let (n, e) = refused.expect("the endless event is refused");
        assert!(n <= 11, "refused after {n} lines of 90 bytes");
        assert!(e.to_string().contains("1000-byte limit"), "{e}");
    }

    #[test]
    fn an_endless_line_is_refused_once_it_passes_the_limit() {
        let mut p = SseParser::new(4096);
        let chunk = [b'x'; 1000];
        let mut sent = 0;
        while p.push(&chunk).is_ok() {
            sent += chunk.len();
            assert!(sent < 10_000, "never refused");
        }
        assert!(sent <= 4096);
    }

    #[test]
    fn events_just_within_the_limit_pass_and_the_parser_goes_on() {
        let mut p = SseParser::new(10);
        assert_eq!(p.push(b"data: 0123456789\n\n").unwrap(), ["0123456789"]);
        assert_eq!(p.push(b"data: a\ndata: b\n\n").unwrap(), ["a\nb"]);
    }

    #[test]
    fn a_long_line_in_small_chunks_is_scanned_once() {
        // 4 MiB in 1 KiB chunks: rescanning from the line's start would
        // take 8 billion steps; scanning once, 4 million.
        let mut p = SseParser::new(8 << 20);
        assert!(p.push(b"data: ").unwrap().is_empty());
        let chunk = [b'y'; 1024];
        for _ in 0..4096 {
            assert!(p.push(&chunk).unwrap().is_empty());
            // The next push starts its scan where this one ended.
            assert_eq!(p.scanned, p.buffer.len());
        }
        let events = p.push(b"\n\n").unwrap();
        assert_eq!(events.first().map(String::len), Some(4 << 20));
    }
}
