//! The JSON-RPC 2.0 envelope as MCP uses it.
//!
//! Incoming bytes are classified into [`Message`] without assuming the peer
//! is well behaved: a malformed message yields an [`EnvelopeError`] carrying
//! whatever id could be recovered, so the caller can still answer it.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::fmt;

use super::codes;
use super::mcp_error::McpError;
use super::meta_members::ParamsSeed;
pub use super::meta_members::{CallMembers, MetaMembers, RawJson, ReservedMembers};

/// A JSON-RPC request id: a string or an integer, never null.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(s.to_owned())
    }
}

/// Read straight from the token (an untagged enum would buffer it first:
/// a client reads one per answer). An integer beyond `i64` or any other
/// value is refused, as when the id is read from a parsed value.
impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Id;
        impl serde::de::Visitor<'_> for Id {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(n))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<RequestId, E> {
                i64::try_from(n)
                    .map(RequestId::Number)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Unsigned(n), &self))
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(s.to_owned()))
            }
            fn visit_string<E: serde::de::Error>(self, s: String) -> Result<RequestId, E> {
                Ok(RequestId::String(s))
            }
        }
        deserializer.deserialize_any(Id)
    }
}

impl RequestId {
    fn from_value(value: &Value) -> Option<RequestId> {
        match value {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) => n.as_i64().map(RequestId::Number),
            _ => None,
        }
    }
}

/// A request: has an id and expects exactly one response.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The id the response must echo.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: String,
    /// The params object, if any.
    pub params: Option<Map<String, Value>>,
}

/// A notification a server or client received, on its way through its
/// middleware chain (`Middleware::notification`,
/// `ClientMiddleware::notification`): a link reads it, changes it or
/// stops it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedNotification {
    /// The method, e.g. `notifications/cancelled`.
    pub method: String,
    /// The params as sent: an object; without any, `{}` on a server and
    /// `null` on a client.
    pub params: Value,
}

/// A notification: no id, no response.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name, e.g. `notifications/cancelled`.
    pub method: String,
    /// The params object, if any.
    pub params: Option<Map<String, Value>>,
}

/// A response to a request this side sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// The id of the request answered; `None` only for errors about
    /// unreadable requests.
    pub id: Option<RequestId>,
    /// The result object, or the error.
    pub outcome: Result<Value, McpError>,
}

/// Any JSON-RPC message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// A request.
    Request(Request),
    /// A notification.
    Notification(Notification),
    /// A result or error response.
    Response(Response),
}

/// Why bytes could not be read as a JSON-RPC message, and the id to answer
/// with when one could be recovered.
#[derive(Debug, Clone, PartialEq)]
pub struct EnvelopeError {
    /// The recovered id, if the message had a usable one.
    pub id: Option<RequestId>,
    /// The error to send back (`-32700` or `-32600`).
    pub error: McpError,
}

impl Message {
    /// Reads one message from bytes, classifying it by its members.
    pub fn from_slice(bytes: &[u8]) -> Result<Message, EnvelopeError> {
        // Straight into the envelope's members, without a JSON tree for the
        // envelope itself. Anything that is not an object (or not JSON)
        // takes the slow path, which words the error.
        if let Ok(envelope) = parse_envelope(bytes, Members::WHOLE) {
            return envelope.classify();
        }
        Message::from_slow_path(bytes)
    }

    /// Like [`Message::from_slice`], but a request's `params._meta` is read
    /// into its reserved members instead of a JSON tree and returned beside
    /// the message, whose params no longer hold it (for the server, which
    /// reads those members and nothing else of `_meta`; see
    /// [`MetaMembers::restore_into`] to put it back).
    ///
    /// ```
    /// use ferromcp::protocol::jsonrpc::{Message, MetaMembers};
    ///
    /// let bytes = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"progressToken":"p"}}}"#;
    /// let (message, meta) = Message::from_slice_split_meta(bytes).unwrap();
    /// let Message::Request(request) = message else { unreachable!() };
    /// assert!(request.params.unwrap().is_empty());
    /// let MetaMembers::Object(members) = meta else { unreachable!() };
    /// assert_eq!(members.progress_token, Some(serde_json::json!("p")));
    /// ```
    pub fn from_slice_split_meta(bytes: &[u8]) -> Result<(Message, MetaMembers), EnvelopeError> {
        let (mut message, meta, call, _) = Message::from_slice_split(bytes, false)?;
        if let Message::Request(request) = &mut message {
            call.restore_into(&mut request.params);
        }
        Ok((message, meta))
    }

    /// [`Message::from_slice_split_meta`] that also reads a `tools/call`
    /// request's `name` and `arguments` apart (when its `method` comes
    /// before its `params`, as every client writes them); see
    /// [`CallMembers`]. With `keep_call_params` (a server that may relay the
    /// call: `server/relay.rs`), that request's params are also returned as
    /// written, read in the same pass, and its `arguments` are left unread
    /// (a relay forwards them as written;
    /// [`CallMembers::read_deferred_arguments`] reads them from the params
    /// where they are needed after all).
    pub(crate) fn from_slice_split(
        bytes: &[u8],
        keep_call_params: bool,
    ) -> Result<SplitMessage, EnvelopeError> {
        let members = Members {
            split_meta: true,
            keep_call_params,
        };
        if let Ok(mut envelope) = parse_envelope(bytes, members) {
            let meta = std::mem::take(&mut envelope.meta);
            let call = std::mem::take(&mut envelope.call);
            let call_params = envelope.call_params.take();
            let message = envelope.classify()?;
            // Only a request's params were split: a notification named
            // `tools/call` gets its members back.
            return Ok(match message {
                Message::Notification(mut n) => {
                    call.restore_into(&mut n.params);
                    (Message::Notification(n), meta, CallMembers::default(), None)
                }
                other => (other, meta, call, call_params),
            });
        }
        let mut message = Message::from_slow_path(bytes)?;
        let params = match &mut message {
            Message::Request(r) => r.params.as_mut(),
            Message::Notification(n) => n.params.as_mut(),
            Message::Response(_) => None,
        };
        let meta = MetaMembers::take_from(params);
        Ok((message, meta, CallMembers::default(), None))
    }

    /// Anything that is not an object (or not JSON): parsed as a tree, so
    /// the error can be worded.
    fn from_slow_path(bytes: &[u8]) -> Result<Message, EnvelopeError> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| EnvelopeError {
            id: None,
            error: McpError::new(codes::PARSE_ERROR, format!("Parse error: {e}")),
        })?;
        Message::from_value(value)
    }

    /// Classifies an already parsed JSON value.
    pub fn from_value(value: Value) -> Result<Message, EnvelopeError> {
        let Value::Object(mut obj) = value else {
            return Err(invalid(None, "a JSON-RPC message must be a JSON object"));
        };
        Envelope {
            jsonrpc: obj
                .remove("jsonrpc")
                .map(|v| IsVersion2(v.as_str() == Some("2.0"))),
            id: obj.remove("id"),
            method: obj.remove("method"),
            params: obj.remove("params"),
            result: obj.remove("result"),
            error: obj.remove("error"),
            meta: MetaMembers::Absent,
            call: CallMembers::default(),
            call_params: None,
        }
        .classify()
    }

    /// Serialises to a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Message::Request(r) => request_value(&r.id, &r.method, r.params.as_ref()),
            Message::Notification(n) => notification_value(&n.method, n.params.as_ref()),
            Message::Response(r) => match &r.outcome {
                Ok(result) => result_value(r.id.as_ref(), result.clone()),
                Err(e) => error_value(r.id.as_ref(), e),
            },
        }
    }
}

/// A message read by [`Message::from_slice_split`]: the message, its
/// request's `_meta` and a `tools/call`'s `name` and `arguments` read apart,
/// and that call's params as written when they were asked for.
pub(crate) type SplitMessage = (Message, MetaMembers, CallMembers, Option<Box<RawValue>>);

/// The members of a JSON-RPC message object that matter; any others are
/// ignored. A member given twice keeps its last value, as in a JSON object.
#[derive(Default)]
struct Envelope {
    jsonrpc: Option<IsVersion2>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
    /// `params._meta`, when the parse was asked to split it out.
    meta: MetaMembers,
    /// A `tools/call`'s `name` and `arguments`, split out with `_meta`.
    call: CallMembers,
    /// A `tools/call`'s params as written, when asked for.
    call_params: Option<Box<RawValue>>,
}

/// Parses the envelope's members straight from `bytes`, as `members` asks.
///
/// The bytes are checked for UTF-8 once, as a whole, and then read as a
/// `str`: read from a slice, serde_json checks each string on its own (the
/// member names included), and on a small request those twenty-odd short
/// checks cost about 1,870 instructions where the one pass costs 290.
/// Bytes that are not UTF-8 are read as before, so the error is the same.
fn parse_envelope(bytes: &[u8], members: Members) -> Result<Envelope, serde_json::Error> {
    match std::str::from_utf8(bytes) {
        Ok(text) => parse_envelope_from(serde_json::Deserializer::from_str(text), members),
        Err(_) => parse_envelope_from(serde_json::Deserializer::from_slice(bytes), members),
    }
}

fn parse_envelope_from<'de, R: serde_json::de::Read<'de>>(
    mut deserializer: serde_json::Deserializer<R>,
    members: Members,
) -> Result<Envelope, serde_json::Error> {
    use serde::de::DeserializeSeed;
    let envelope = members.deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(envelope)
}

impl Envelope {
    fn classify(self) -> Result<Message, EnvelopeError> {
        let id = self.id.as_ref().and_then(RequestId::from_value);
        if !self.jsonrpc.is_some_and(|v| v.0) {
            return Err(invalid(id, "\"jsonrpc\" must be \"2.0\""));
        }
        if let Some(method) = self.method {
            let Value::String(method) = method else {
                return Err(invalid(id, "\"method\" must be a string"));
            };
            let params = match self.params {
                None => None,
                Some(Value::Object(map)) => Some(map),
                Some(_) => return Err(invalid(id, "\"params\" must be an object")),
            };
            return match (self.id, id) {
                (None, _) => Ok(Message::Notification(Notification { method, params })),
                (Some(_), Some(id)) => Ok(Message::Request(Request { id, method, params })),
                (Some(_), None) => Err(invalid(None, "\"id\" must be a string or an integer")),
            };
        }
        if let Some(result) = self.result {
            return Ok(Message::Response(Response {
                id,
                outcome: Ok(result),
            }));
        }
        if let Some(error) = self.error {
            let error: McpError = serde_json::from_value(error)
                .map_err(|e| invalid(id.clone(), &format!("malformed \"error\": {e}")))?;
            return Ok(Message::Response(Response {
                id,
                outcome: Err(error),
            }));
        }
        Err(invalid(
            id,
            "message has neither \"method\", \"result\" nor \"error\"",
        ))
    }
}

/// Whether a `"jsonrpc"` member is `"2.0"`, read without allocating the
/// string (any other JSON value is read and is not).
#[derive(Clone, Copy)]
struct IsVersion2(bool);

impl<'de> Deserialize<'de> for IsVersion2 {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Version;
        impl<'de> serde::de::Visitor<'de> for Version {
            type Value = IsVersion2;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<IsVersion2, E> {
                Ok(IsVersion2(v == "2.0"))
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<IsVersion2, E> {
                Ok(IsVersion2(false))
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<IsVersion2, E> {
                Ok(IsVersion2(false))
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<IsVersion2, E> {
                Ok(IsVersion2(false))
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<IsVersion2, E> {
                Ok(IsVersion2(false))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<IsVersion2, E> {
                Ok(IsVersion2(false))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<IsVersion2, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(IsVersion2(false))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<IsVersion2, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(IsVersion2(false))
            }
        }
        deserializer.deserialize_any(Version)
    }
}

/// A member name of the envelope, read without allocating it.
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Member {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl serde::de::Visitor<'_> for Name {
            type Value = Member;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Member, E> {
                Ok(match name {
                    "jsonrpc" => Member::Jsonrpc,
                    "id" => Member::Id,
                    "method" => Member::Method,
                    "params" => Member::Params,
                    "result" => Member::Result,
                    "error" => Member::Error,
                    _ => Member::Other,
                })
            }
        }
        deserializer.deserialize_str(Name)
    }
}

/// Reads an [`Envelope`]: with `split_meta`, `params._meta` (and a
/// `tools/call`'s `name` and `arguments`) go to their own members; with
/// `keep_call_params` too, a `tools/call`'s params as written.
#[derive(Clone, Copy)]
struct Members {
    split_meta: bool,
    keep_call_params: bool,
}

impl Members {
    /// Everything in the params' tree.
    const WHOLE: Members = Members {
        split_meta: false,
        keep_call_params: false,
    };
}

impl<'de> serde::de::DeserializeSeed<'de> for Members {
    type Value = Envelope;
    fn deserialize<D: serde::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Envelope, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Members {
    type Value = Envelope;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC message object")
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
        let mut envelope = Envelope::default();
        while let Some(member) = map.next_key::<Member>()? {
            let slot = match member {
                Member::Jsonrpc => {
                    envelope.jsonrpc = Some(map.next_value()?);
                    continue;
                }
                Member::Params if self.split_meta => {
                    let split_call = matches!(&envelope.method,
                        Some(Value::String(m)) if m == super::methods::TOOLS_CALL);
                    let params = if split_call && self.keep_call_params {
                        // Borrowed as written, then read: one pass over the
                        // message, and the params' bytes copied once. The
                        // arguments are left unread: a relay forwards them
                        // as written (`CallMembers::read_deferred_arguments`
                        // reads them where they are needed after all).
                        let written: &'de RawValue = map.next_value()?;
                        let seed = ParamsSeed {
                            split_call,
                            defer_arguments: true,
                        };
                        let params = serde::de::DeserializeSeed::deserialize(
                            seed,
                            &mut serde_json::Deserializer::from_str(written.get()),
                        )
                        .map_err(serde::de::Error::custom)?;
                        envelope.call_params = Some(written.to_owned());
                        params
                    } else {
                        map.next_value_seed(ParamsSeed {
                            split_call,
                            defer_arguments: false,
                        })?
                    };
                    envelope.params = Some(params.rest);
                    envelope.meta = params.meta;
                    envelope.call = params.call;
                    continue;
                }
                Member::Id => &mut envelope.id,
                Member::Method => &mut envelope.method,
                Member::Params => &mut envelope.params,
                Member::Result => &mut envelope.result,
                Member::Error => &mut envelope.error,
                Member::Other => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
        }
        Ok(envelope)
    }
}

fn invalid(id: Option<RequestId>, why: &str) -> EnvelopeError {
    EnvelopeError {
        id,
        error: McpError::new(codes::INVALID_REQUEST, format!("Invalid request: {why}")),
    }
}

fn id_to_value(id: Option<&RequestId>) -> Value {
    match id {
        Some(RequestId::Number(n)) => Value::from(*n),
        Some(RequestId::String(s)) => Value::String(s.clone()),
        None => Value::Null,
    }
}

/// `{"jsonrpc":"2.0","id":…,"method":…,"params":…}`
pub fn request_value(id: &RequestId, method: &str, params: Option<&Map<String, Value>>) -> Value {
    let mut obj = Map::with_capacity(4);
    obj.insert("jsonrpc".into(), Value::from("2.0"));
    obj.insert("id".into(), id_to_value(Some(id)));
    obj.insert("method".into(), Value::from(method));
    if let Some(p) = params {
        obj.insert("params".into(), Value::Object(p.clone()));
    }
    Value::Object(obj)
}

/// A request serialised straight from borrowed parts: the bytes of
/// [`request_value`] (members in the sorted order of a JSON map), without
/// copying the params into a tree first. Clients send one per call.
pub struct RequestOut<'a> {
    /// The request id.
    pub id: &'a RequestId,
    /// The method name.
    pub method: &'a str,
    /// The params object, if any.
    pub params: Option<&'a Map<String, Value>>,
}

impl Serialize for RequestOut<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(3 + usize::from(self.params.is_some())))?;
        map.serialize_entry("id", self.id)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("method", self.method)?;
        if let Some(params) = self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

/// `{"jsonrpc":"2.0","method":…,"params":…}`
pub fn notification_value(method: &str, params: Option<&Map<String, Value>>) -> Value {
    let mut obj = Map::with_capacity(3);
    obj.insert("jsonrpc".into(), Value::from("2.0"));
    obj.insert("method".into(), Value::from(method));
    if let Some(p) = params {
        obj.insert("params".into(), Value::Object(p.clone()));
    }
    Value::Object(obj)
}

/// `{"jsonrpc":"2.0","id":…,"result":…}`
pub fn result_value(id: Option<&RequestId>, result: Value) -> Value {
    let mut obj = Map::with_capacity(3);
    obj.insert("jsonrpc".into(), Value::from("2.0"));
    obj.insert("id".into(), id_to_value(id));
    obj.insert("result".into(), result);
    Value::Object(obj)
}

/// `{"jsonrpc":"2.0","id":…,"error":…}`; the id is omitted when unknown, as
/// the schema's `JSONRPCErrorResponse` allows.
pub fn error_value(id: Option<&RequestId>, error: &McpError) -> Value {
    let mut obj = Map::with_capacity(3);
    obj.insert("jsonrpc".into(), Value::from("2.0"));
    if id.is_some() {
        obj.insert("id".into(), id_to_value(id));
    }
    obj.insert(
        "error".into(),
        serde_json::to_value(error).unwrap_or(Value::Null),
    );
    Value::Object(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_serialised_from_parts_is_the_bytes_of_its_tree() {
        let params = json!({"name": "echo", "arguments": {"text": "h\u{e9}\"llo"}, "_meta": {"b": 1, "a": [null]}});
        let params = params.as_object().unwrap();
        for id in [RequestId::Number(-7), RequestId::String("x\"1".into())] {
            for p in [Some(params), None] {
                assert_eq!(
                    serde_json::to_vec(&RequestOut {
                        id: &id,
                        method: "tools/call",
                        params: p
                    })
                    .unwrap(),
                    serde_json::to_vec(&request_value(&id, "tools/call", p)).unwrap()
                );
            }
        }
    }
    use serde_json::json;

    #[test]
    fn request_ids_are_strings_or_integers_read_as_a_value_reads_them() {
        for (text, expected) in [
            ("7", Some(RequestId::Number(7))),
            ("-3", Some(RequestId::Number(-3))),
            ("9223372036854775807", Some(RequestId::Number(i64::MAX))),
            ("9223372036854775808", None),
            (r#""a\"b""#, Some(RequestId::String("a\"b".into()))),
            (r#""""#, Some(RequestId::String(String::new()))),
            ("1.0", None),
            ("null", None),
            ("true", None),
            ("[1]", None),
            (r#"{"id":1}"#, None),
        ] {
            let read = serde_json::from_str::<RequestId>(text).ok();
            assert_eq!(read, expected, "{text}");
            let value: Value = serde_json::from_str(text).unwrap();
            assert_eq!(RequestId::from_value(&value), expected, "{text}");
            assert_eq!(
                serde_json::from_value::<RequestId>(value).ok(),
                expected,
                "{text}"
            );
            if let Some(id) = read {
                assert_eq!(serde_json::to_string(&id).unwrap(), text, "{text}");
            }
        }
    }

    #[test]
    fn a_calls_name_and_arguments_are_read_apart_losslessly() {
        let cases: &[(&str, bool, Option<&str>)] = &[
            // (message, whether its name and arguments are read apart, its
            // params as written when they are kept)
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":1},"x":2}}"#,
                true,
                Some(
                    r#"{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":1},"x":2}"#,
                ),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":7,"arguments":null,"name":"last"}}"#,
                true,
                Some(r#"{"name":7,"arguments":null,"name":"last"}"#),
            ),
            // As written: spacing and escapes are kept.
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params": { "name" : "e\u0063ho", "arguments":{"b":1,"a":2}} }"#,
                true,
                Some(r#"{ "name" : "e\u0063ho", "arguments":{"b":1,"a":2}}"#),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
                false,
                Some("{}"),
            ),
            // `method` after `params`: not known in time, read as a tree.
            (
                r#"{"jsonrpc":"2.0","id":1,"params":{"name":"echo"},"method":"tools/call"}"#,
                false,
                None,
            ),
            // Other methods keep theirs in the params.
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","arguments":{}}}"#,
                false,
                None,
            ),
            // A notification keeps its params whole.
            (
                r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}"#,
                false,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#,
                false,
                None,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":}}"#,
                false,
                None,
            ),
        ];
        for keep_call_params in [false, true] {
            for (case, split, kept) in cases {
                let parsed = Message::from_slice_split(case.as_bytes(), keep_call_params);
                let (message, meta, call, call_params) = match parsed {
                    Ok(parts) => parts,
                    Err(e) => {
                        assert_eq!(Err(e), Message::from_slice(case.as_bytes()), "{case}");
                        continue;
                    }
                };
                assert_eq!(!call.is_empty(), *split, "{case}");
                let expected = if keep_call_params { *kept } else { None };
                assert_eq!(
                    call_params.as_deref().map(RawValue::get),
                    expected,
                    "{case}"
                );
                let mut call = call;
                if let Some(params) = &call_params {
                    // Left unread for a relay, and read where needed.
                    assert_eq!(call.arguments, None, "{case}");
                    call.read_deferred_arguments(params);
                }
                let mut message = message;
                match &mut message {
                    Message::Request(r) => {
                        call.restore_into(&mut r.params);
                        meta.restore_into(&mut r.params);
                    }
                    Message::Notification(n) => {
                        assert!(call.is_empty(), "{case}");
                        meta.restore_into(&mut n.params);
                    }
                    Message::Response(_) => assert!(call.is_empty(), "{case}"),
                }
                assert_eq!(Ok(message), Message::from_slice(case.as_bytes()), "{case}");
            }
        }
    }

    #[test]
    fn reading_bytes_and_reading_a_parsed_value_agree() {
        let cases: &[&str] = &[
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#,
            r#"{"jsonrpc":"2.0","id":"a","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}"#,
            r#"{"jsonrpc":"2.0","id":2,"error":{"code":"x"}}"#,
            r#"{"jsonrpc":"1.0","id":3,"method":"m"}"#,
            r#"{"id":3,"method":"m"}"#,
            r#"{"jsonrpc":2,"id":3,"method":"m"}"#,
            r#"{"jsonrpc":["2.0"],"id":3,"method":"m"}"#,
            r#"{"jsonrpc":{"v":"2.0"},"id":3,"method":"m"}"#,
            r#"{"jsonrpc":null,"id":3,"method":"m"}"#,
            r#"{"jsonrpc":true,"id":3,"method":"m"}"#,
            r#"{"jsonrpc":"2.0 ","id":3,"method":"m"}"#,
            r#"{"jsonrpc":"2\u002e0","id":3,"method":"escaped-version"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":7}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"m","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"a","method":"b","extra":{"deep":[1,2]}}"#,
            r#"{"jsonrpc":"2.0","id":5}"#,
            r#"{"\u006asonrpc":"2.0","id":6,"method":"escaped-key"}"#,
            r#"[{"jsonrpc":"2.0","id":1,"method":"batch"}]"#,
            r#"42"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"m""#,
            r#"not json"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"e","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"c"},"io.modelcontextprotocol/clientCapabilities":{},"traceparent":"t"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"_meta":{"progressToken":1},"progress":1}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"m","params":{"_meta":[1,{"a":null}],"_meta":"last"}}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"m","params":{"_meta":{"progressToken":1,"progressToken":2}}}"#,
            r#"{"jsonrpc":"2.0","id":9,"method":"m","params":"_meta"}"#,
            r#"{"jsonrpc":"2.0","id":"r","result":{"_meta":{"x":1}}}"#,
        ];
        for case in cases {
            // Reading `_meta` apart and putting it back gives the same message.
            let split = Message::from_slice_split_meta(case.as_bytes()).map(|(mut m, meta)| {
                match &mut m {
                    Message::Request(r) => meta.restore_into(&mut r.params),
                    Message::Notification(n) => meta.restore_into(&mut n.params),
                    Message::Response(_) => assert_eq!(meta, MetaMembers::Absent, "{case}"),
                }
                m
            });
            assert_eq!(split, Message::from_slice(case.as_bytes()), "{case}");
            let from_tree = serde_json::from_slice::<Value>(case.as_bytes())
                .map_err(|e| e.to_string())
                .map(Message::from_value);
            match (Message::from_slice(case.as_bytes()), from_tree) {
                (Ok(fast), Ok(Ok(tree))) => assert_eq!(fast, tree, "{case}"),
                (Err(fast), Ok(Err(tree))) => assert_eq!(fast, tree, "{case}"),
                (Err(fast), Err(_)) => assert_eq!(fast.error.code, codes::PARSE_ERROR, "{case}"),
                (fast, tree) => panic!("{case}: bytes gave {fast:?}, tree gave {tree:?}"),
            }
        }
    }

    #[test]
    fn utf8_text_and_bytes_that_are_not_utf8_read_as_a_tree_does() {
        // Valid UTF-8 is read as a `str`, anything else as bytes: both must
        // agree with a parse of the whole tree (same message, same error).
        let cases: &[&[u8]] = &[
            "{\"jsonrpc\":\"2.0\",\"id\":\"é\",\"method\":\"m\",\"params\":{\"t\":\"😀 \\ud83d\\ude00 \\u00e9\"}}".as_bytes(),
            br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"t":"\ud800"}}"#,
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{\"t\":\"\xff\"}}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"x\xc3\":1}",
        ];
        for case in cases {
            let tree = serde_json::from_slice::<Value>(case).map_err(|e| e.to_string());
            match (Message::from_slice(case), tree) {
                (Ok(fast), Ok(tree)) => assert_eq!(Ok(fast), Message::from_value(tree)),
                (Err(fast), Err(why)) => {
                    assert_eq!(fast.error.code, codes::PARSE_ERROR);
                    assert_eq!(fast.error.message, format!("Parse error: {why}"));
                }
                (fast, tree) => panic!("{case:?}: bytes gave {fast:?}, tree gave {tree:?}"),
            }
            assert_eq!(
                Message::from_slice_split_meta(case).map(|(m, _)| m),
                Message::from_slice(case)
            );
        }
    }

    #[test]
    fn classifies_requests_notifications_and_responses() {
        let req =
            Message::from_slice(br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{}}"#);
        assert!(matches!(
            req,
            Ok(Message::Request(Request {
                id: RequestId::Number(7),
                ..
            }))
        ));
        let note = Message::from_slice(br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#);
        assert!(matches!(note, Ok(Message::Notification(_))));
        let resp = Message::from_slice(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#);
        assert!(matches!(resp, Ok(Message::Response(_))));
    }

    #[test]
    fn malformed_json_is_a_parse_error_without_id() {
        let err = Message::from_slice(b"{not json").unwrap_err();
        assert_eq!(err.error.code, codes::PARSE_ERROR);
        assert_eq!(err.id, None);
    }

    #[test]
    fn null_id_is_invalid_request() {
        let err = Message::from_slice(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#).unwrap_err();
        assert_eq!(err.error.code, codes::INVALID_REQUEST);
    }

    #[test]
    fn invalid_request_keeps_recoverable_id() {
        let err = Message::from_value(json!({"jsonrpc":"1.0","id":3,"method":"x"})).unwrap_err();
        assert_eq!(err.id, Some(RequestId::Number(3)));
    }
}
