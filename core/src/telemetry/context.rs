//! W3C Trace Context (<https://www.w3.org/TR/trace-context/>): the
//! `traceparent` and `tracestate` members SEP-414 carries, unprefixed, in a
//! request's `params._meta`.

use std::cell::Cell;
use std::fmt::Write as _;

/// Where a span sits in a trace: what a client injects into `_meta` and a
/// server extracts from it, and what a handler's own spans take as parent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TraceContext {
    /// 16 bytes, never all zero.
    pub trace_id: [u8; 16],
    /// 8 bytes, never all zero: the span this context names.
    pub span_id: [u8; 8],
    /// The trace flags; bit 0 is "sampled".
    pub flags: u8,
    /// `tracestate`, as received (vendors' entries, passed on untouched).
    pub state: Option<String>,
}

impl TraceContext {
    /// Reads a `traceparent` header value (`00-<trace>-<span>-<flags>`);
    /// `None` for anything malformed, an all-zero id, or version `ff`, as
    /// the W3C specification says a receiver must ignore such a header.
    /// Versions above `00` are read by their first four fields.
    ///
    /// ```
    /// use ferromcp::telemetry::TraceContext;
    /// let ctx = TraceContext::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", None).unwrap();
    /// assert!(ctx.sampled());
    /// assert_eq!(ctx.traceparent(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    /// assert!(TraceContext::parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01", None).is_none());
    /// ```
    pub fn parse(traceparent: &str, tracestate: Option<&str>) -> Option<TraceContext> {
        let bytes = traceparent.trim().as_bytes();
        if bytes.len() < 55 {
            return None;
        }
        let version = hex_byte(&bytes[0..2])?;
        if version == 0xff || (version == 0 && bytes.len() != 55) {
            return None;
        }
        if version > 0 && bytes.len() > 55 && bytes[55] != b'-' {
            return None;
        }
        if bytes[2] != b'-' || bytes[35] != b'-' || bytes[52] != b'-' {
            return None;
        }
        let mut trace_id = [0u8; 16];
        for (i, byte) in trace_id.iter_mut().enumerate() {
            *byte = hex_byte(&bytes[3 + 2 * i..5 + 2 * i])?;
        }
        let mut span_id = [0u8; 8];
        for (i, byte) in span_id.iter_mut().enumerate() {
            *byte = hex_byte(&bytes[36 + 2 * i..38 + 2 * i])?;
        }
        let flags = hex_byte(&bytes[53..55])?;
        if trace_id == [0; 16] || span_id == [0; 8] {
            return None;
        }
        let state = tracestate
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.len() <= 512)
            .map(str::to_owned);
        Some(TraceContext {
            trace_id,
            span_id,
            flags,
            state,
        })
    }

    /// A new trace's root: random ids, sampled.
    pub fn new_root() -> TraceContext {
        TraceContext {
            trace_id: random_trace_id(),
            span_id: random_span_id(),
            flags: 1,
            state: None,
        }
    }

    /// A new span of this context's trace (its child), with the same flags
    /// and state.
    pub fn child(&self) -> TraceContext {
        TraceContext {
            trace_id: self.trace_id,
            span_id: random_span_id(),
            flags: self.flags,
            state: self.state.clone(),
        }
    }

    /// Whether the trace is recorded (flag bit 0).
    pub fn sampled(&self) -> bool {
        self.flags & 1 == 1
    }

    /// The `traceparent` value, version `00`.
    pub fn traceparent(&self) -> String {
        let mut out = String::with_capacity(55);
        out.push_str("00-");
        out.push_str(&self.trace_id_hex());
        out.push('-');
        out.push_str(&self.span_id_hex());
        let _ = write!(out, "-{:02x}", self.flags);
        out
    }

    /// The trace id as 32 lowercase hex digits.
    pub fn trace_id_hex(&self) -> String {
        hex(&self.trace_id)
    }

    /// The span id as 16 lowercase hex digits.
    pub fn span_id_hex(&self) -> String {
        hex(&self.span_id)
    }

    /// Reads `traceparent` (and `tracestate`) from a request's `_meta`.
    pub fn from_meta(meta: &serde_json::Map<String, serde_json::Value>) -> Option<TraceContext> {
        let parent = meta.get(TRACEPARENT)?.as_str()?;
        let state = meta.get(TRACESTATE).and_then(serde_json::Value::as_str);
        TraceContext::parse(parent, state)
    }

    /// Writes `traceparent` (and `tracestate`) into a request's `_meta`.
    pub fn inject(&self, meta: &mut serde_json::Map<String, serde_json::Value>) {
        meta.insert(TRACEPARENT.into(), self.traceparent().into());
        match &self.state {
            Some(state) => {
                meta.insert(TRACESTATE.into(), state.clone().into());
            }
            None => {
                meta.remove(TRACESTATE);
            }
        }
    }
}

/// The `_meta` member carrying the W3C `traceparent` (SEP-414: unprefixed).
pub const TRACEPARENT: &str = "traceparent";
/// The `_meta` member carrying the W3C `tracestate`.
pub const TRACESTATE: &str = "tracestate";

pub(crate) fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 15)] as char);
    }
    out
}

fn hex_byte(pair: &[u8]) -> Option<u8> {
    fn digit(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            // W3C: lowercase only.
            _ => None,
        }
    }
    Some(digit(pair[0])? << 4 | digit(pair[1])?)
}

thread_local! {
    /// Ids need to be unique, not secret: a per-thread splitmix64 stream
    /// seeded once from the OS costs a few instructions per id, where a
    /// `getrandom` per span is a system call.
    static ID_STATE: Cell<u64> = Cell::new(seed());
}

fn seed() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        // No OS randomness: the time and the thread tell streams apart.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let here = &bytes as *const _ as u64;
        return now ^ here.rotate_left(32);
    }
    u64::from_le_bytes(bytes)
}

fn next_u64() -> u64 {
    ID_STATE.with(|state| {
        let next = state.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        state.set(next);
        let mut z = next;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

pub(crate) fn random_span_id() -> [u8; 8] {
    loop {
        let id = next_u64();
        if id != 0 {
            return id.to_be_bytes();
        }
    }
}

pub(crate) fn random_trace_id() -> [u8; 16] {
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&next_u64().to_be_bytes());
    id[8..].copy_from_slice(&random_span_id());
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_traceparent_round_trips_and_malformed_ones_are_ignored() {
        let text = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let ctx = TraceContext::parse(text, Some("rojo=00f067aa0ba902b7")).unwrap();
        assert_eq!(ctx.traceparent(), text);
        assert_eq!(ctx.state.as_deref(), Some("rojo=00f067aa0ba902b7"));
        for bad in [
            "",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            "00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ] {
            assert!(TraceContext::parse(bad, None).is_none(), "{bad:?}");
        }
        // A later version may append fields after a dash.
        assert!(
            TraceContext::parse(
                "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what",
                None
            )
            .is_some()
        );
    }

    #[test]
    fn a_child_keeps_the_trace_and_gets_a_new_span() {
        let root = TraceContext::new_root();
        let child = root.child();
        assert_eq!(child.trace_id, root.trace_id);
        assert_ne!(child.span_id, root.span_id);
        assert!(child.sampled());
    }
}
