//! What goes on the wire: pre-serialised request bodies whose id and echoed
//! text are patched in place, and the checks applied to every reply.
//!
//! Two protocol eras are spoken: the stateless 2026-07-28 wire (every request
//! carries `_meta` with the protocol version and client capabilities), and
//! the 2025-11-25 wire with its `initialize` handshake, for servers that do
//! not accept the modern one.

use serde::Deserialize;
use serde_json::Value;
use std::borrow::Cow;

pub const MODERN_VERSION: &str = "2026-07-28";
pub const LEGACY_VERSION: &str = "2025-11-25";

/// Width of the decimal counter patched into each request. Counters start at
/// 10^9 so that every value has exactly this many digits and the request
/// length never changes (the HTTP Content-Length is part of the template).
pub const COUNTER_WIDTH: usize = 10;
pub const COUNTER_START: u64 = 1_000_000_000;

/// JSON-RPC error codes that only a 2026-07-28 server sends: seeing one means
/// the server is modern and the request itself was wrong, so falling back to
/// `initialize` would be a mistake (spec: transports, "Backward Compatibility").
pub const MODERN_ERROR_CODES: [i64; 3] = [-32020, -32021, -32022];

/// Which protocol era a server was driven with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// 2026-07-28: no handshake, `_meta` on every request.
    Modern,
    /// 2025-11-25: `initialize` + `notifications/initialized` first.
    Legacy,
}

impl Wire {
    pub fn protocol_version(self) -> &'static str {
        match self {
            Wire::Modern => MODERN_VERSION,
            Wire::Legacy => LEGACY_VERSION,
        }
    }

    pub fn as_str(self) -> &'static str {
        self.protocol_version()
    }
}

fn meta() -> Value {
    serde_json::json!({
        "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp-bench", "version": env!("CARGO_PKG_VERSION")},
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A JSON-RPC request as a compact line of JSON (no trailing newline).
pub fn request(wire: Wire, id: u64, method: &str, mut params: Value) -> Vec<u8> {
    if wire == Wire::Modern
        && let Value::Object(map) = &mut params
    {
        map.insert("_meta".into(), meta());
    }
    let message =
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    serde_json::to_vec(&message).unwrap_or_default()
}

/// The legacy handshake's `initialize` request.
pub fn initialize(id: u64) -> Vec<u8> {
    request(
        Wire::Legacy,
        id,
        "initialize",
        serde_json::json!({
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcp-bench", "version": env!("CARGO_PKG_VERSION")}
        }),
    )
}

pub fn initialized_notification() -> Vec<u8> {
    br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec()
}

/// `server/discover`, the stdio era probe (spec: stdio, "Backward Compatibility").
pub fn discover(id: u64) -> Vec<u8> {
    request(Wire::Modern, id, "server/discover", serde_json::json!({}))
}

pub fn tools_list(wire: Wire, id: u64) -> Vec<u8> {
    request(wire, id, "tools/list", serde_json::json!({}))
}

/// A `tools/call` of `echo` whose id and text carry a patchable counter.
///
/// The text is `c<counter>` followed by `pad` filler bytes; it contains no
/// character JSON would escape, so the JSON string's raw bytes are the text.
#[derive(Clone)]
pub struct CallTemplate {
    pub bytes: Vec<u8>,
    id_at: usize,
    text_at: usize,
    text_len: usize,
}

impl CallTemplate {
    pub fn new(wire: Wire, pad: usize) -> CallTemplate {
        let placeholder_id = COUNTER_START;
        let mut text = format!("c{placeholder_id}");
        // A repeating alphabet rather than one byte, so that a server that
        // mangled the middle of a large payload would be caught.
        text.extend((0..pad).map(|i| (b'a' + (i % 26) as u8) as char));
        let bytes = request(
            wire,
            placeholder_id,
            "tools/call",
            serde_json::json!({"name": "echo", "arguments": {"text": text}}),
        );
        let id_pattern = format!("\"id\":{placeholder_id}");
        let text_pattern = format!("\"text\":\"{text}\"");
        let id_at = find(&bytes, id_pattern.as_bytes()).map(|i| i + 5);
        let text_at = find(&bytes, text_pattern.as_bytes()).map(|i| i + 8);
        let (Some(id_at), Some(text_at)) = (id_at, text_at) else {
            // serde_json's compact output is fixed; this cannot happen.
            unreachable!("serde_json output changed shape");
        };
        CallTemplate {
            bytes,
            id_at,
            text_at,
            text_len: text.len(),
        }
    }

    /// Puts `prefix` (an HTTP head) in front of the body, moving the offsets.
    pub fn shift(&mut self, prefix: &[u8]) {
        let mut bytes = prefix.to_vec();
        bytes.extend_from_slice(&self.bytes);
        self.bytes = bytes;
        self.id_at += prefix.len();
        self.text_at += prefix.len();
    }

    /// Writes `counter` into the id and the text.
    pub fn patch(&mut self, counter: u64) {
        let digits = counter_digits(counter);
        self.bytes[self.id_at..self.id_at + COUNTER_WIDTH].copy_from_slice(&digits);
        self.bytes[self.text_at + 1..self.text_at + 1 + COUNTER_WIDTH].copy_from_slice(&digits);
    }

    /// The text the server must echo for the current patch.
    pub fn expected_text(&self) -> &str {
        // Built from ASCII only (see `new`).
        std::str::from_utf8(&self.bytes[self.text_at..self.text_at + self.text_len]).unwrap_or("")
    }

    /// The text the server must echo for the call numbered `counter`, whatever
    /// the template is patched with now (stdio has several calls in flight).
    pub fn expected_text_for(&self, counter: u64, out: &mut String) {
        out.clear();
        out.push('c');
        out.extend(counter_digits(counter).iter().map(|&d| d as char));
        let filler = &self.bytes[self.text_at + 1 + COUNTER_WIDTH..self.text_at + self.text_len];
        out.push_str(std::str::from_utf8(filler).unwrap_or(""));
    }
}

fn counter_digits(counter: u64) -> [u8; COUNTER_WIDTH] {
    let mut out = [b'0'; COUNTER_WIDTH];
    let mut n = counter;
    for slot in out.iter_mut().rev() {
        *slot = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out
}

pub fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[derive(Deserialize)]
struct Reply<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(borrow, default)]
    result: Option<CallResult<'a>>,
    #[serde(default)]
    error: Option<ReplyError>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(borrow, default)]
    content: Vec<Content<'a>>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Debug)]
pub struct ReplyError {
    pub code: i64,
    #[serde(default)]
    pub message: String,
}

/// The id of a reply, if it is a JSON-RPC response (notifications have none).
fn id_matches(id: &Option<Value>, expected: u64) -> bool {
    match id {
        Some(Value::Number(n)) => n.as_u64() == Some(expected),
        // Tolerated: a server that turned the id into a string.
        Some(Value::String(s)) => s.parse::<u64>().ok() == Some(expected),
        _ => false,
    }
}

/// Outcome of inspecting one JSON message against the call it should answer.
pub enum Verdict {
    /// The expected text came back.
    Ok,
    /// Not the response to this request (a notification, another id).
    Unrelated,
    /// The response, but wrong.
    Bad(String),
}

/// Checks one JSON-RPC message as the answer to the `echo` call `id`.
pub fn check_call(message: &[u8], id: u64, expected_text: &str) -> Verdict {
    let reply: Reply = match serde_json::from_slice(message) {
        Ok(r) => r,
        Err(e) => return Verdict::Bad(format!("reply is not JSON-RPC: {e}: {}", preview(message))),
    };
    if !id_matches(&reply.id, id) {
        return Verdict::Unrelated;
    }
    if let Some(error) = reply.error {
        return Verdict::Bad(format!("error {}: {}", error.code, error.message));
    }
    let Some(result) = reply.result else {
        return Verdict::Bad("response has neither result nor error".into());
    };
    if result.is_error == Some(true) {
        return Verdict::Bad(format!("tool reported an error: {}", preview(message)));
    }
    let echoed = result
        .content
        .iter()
        .any(|c| c.kind == "text" && c.text.as_deref() == Some(expected_text));
    if echoed {
        Verdict::Ok
    } else {
        Verdict::Bad(format!(
            "the echoed text did not come back: {}",
            preview(message)
        ))
    }
}

/// The id of a JSON-RPC message, if it has a numeric one.
pub fn message_id(message: &[u8]) -> Option<u64> {
    #[derive(Deserialize)]
    struct OnlyId {
        #[serde(default)]
        id: Option<Value>,
    }
    let parsed: OnlyId = serde_json::from_slice(message).ok()?;
    match parsed.id? {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// A response parsed loosely, for the handshake and probes.
#[derive(Deserialize, Debug)]
pub struct AnyReply {
    #[serde(default)]
    pub id: Option<Value>,
    #[serde(default)]
    pub result: Option<Value>,
    #[serde(default)]
    pub error: Option<ReplyError>,
}

impl AnyReply {
    pub fn parse(message: &[u8]) -> Option<AnyReply> {
        serde_json::from_slice(message).ok()
    }

    pub fn answers(&self, id: u64) -> bool {
        id_matches(&self.id, id)
    }
}

/// Checks a `tools/list` result: the `echo` tool must be listed, or the
/// list go on past this page (a server with small pages; a missing `echo`
/// then shows in the calls' answers).
pub fn check_tools_list(reply: &AnyReply) -> Result<(), String> {
    if let Some(e) = &reply.error {
        return Err(format!(
            "tools/list failed: error {}: {}",
            e.code, e.message
        ));
    }
    let listed = reply
        .result
        .as_ref()
        .and_then(|r| r.get("tools"))
        .and_then(Value::as_array)
        .is_some_and(|tools| {
            tools
                .iter()
                .any(|t| t.get("name").and_then(Value::as_str) == Some("echo"))
        });
    let paged = reply
        .result
        .as_ref()
        .is_some_and(|r| r.get("nextCursor").is_some_and(Value::is_string));
    if listed || paged {
        Ok(())
    } else {
        Err("tools/list does not list an `echo` tool".into())
    }
}

/// The first bytes of a message, for error reports.
pub fn preview(bytes: &[u8]) -> String {
    let cut = &bytes[..bytes.len().min(200)];
    let mut s = String::from_utf8_lossy(cut).into_owned();
    if bytes.len() > cut.len() {
        s.push('…');
    }
    s
}

/// Splits an SSE body into the `data` of each event (spec: one JSON-RPC
/// message per event; several `data:` lines of one event are joined by `\n`).
pub fn sse_messages(body: &[u8]) -> Vec<Vec<u8>> {
    let mut events = Vec::new();
    let mut data: Option<Vec<u8>> = None;
    for raw in body.split(|&b| b == b'\n') {
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        if line.is_empty() {
            if let Some(d) = data.take() {
                events.push(d);
            }
            continue;
        }
        if let Some(rest) = line.strip_prefix(b"data:") {
            let rest = rest.strip_prefix(b" ").unwrap_or(rest);
            match &mut data {
                Some(d) => {
                    d.push(b'\n');
                    d.extend_from_slice(rest);
                }
                None => data = Some(rest.to_vec()),
            }
        }
    }
    if let Some(d) = data {
        events.push(d);
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn template_patches_id_and_text() {
        let mut t = CallTemplate::new(Wire::Modern, 5);
        t.patch(1_234_567_890);
        let v: Value = serde_json::from_slice(&t.bytes).expect("valid JSON");
        assert_eq!(v["id"], 1_234_567_890u64);
        assert_eq!(v["params"]["arguments"]["text"], "c1234567890abcde");
        assert_eq!(t.expected_text(), "c1234567890abcde");
        assert_eq!(
            v["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            MODERN_VERSION
        );
        let reply = br#"{"jsonrpc":"2.0","id":1234567890,"result":{"content":[{"type":"text","text":"c1234567890abcde"}]}}"#;
        assert!(matches!(
            check_call(reply, 1_234_567_890, t.expected_text()),
            Verdict::Ok
        ));
        assert!(matches!(
            check_call(reply, 1_234_567_891, t.expected_text()),
            Verdict::Unrelated
        ));
        let wrong = br#"{"jsonrpc":"2.0","id":1234567890,"result":{"content":[{"type":"text","text":"nope"}]}}"#;
        assert!(matches!(
            check_call(wrong, 1_234_567_890, t.expected_text()),
            Verdict::Bad(_)
        ));
    }

    #[test]
    fn legacy_template_has_no_meta() {
        let t = CallTemplate::new(Wire::Legacy, 0);
        let v: Value = serde_json::from_slice(&t.bytes).expect("valid JSON");
        assert!(v["params"].get("_meta").is_none());
    }

    #[test]
    fn sse_events_are_split() {
        let body = b"event: message\ndata: {\"a\":1}\n\n: comment\n\ndata: {\"b\":\ndata: 2}\n\n";
        let events = sse_messages(body);
        assert_eq!(events, vec![b"{\"a\":1}".to_vec(), b"{\"b\":\n2}".to_vec()]);
    }
}
