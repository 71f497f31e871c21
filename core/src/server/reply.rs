//! The response to one request, on its way to a transport.
//!
//! A successful 2026-07-28 result is kept as the handler's result object
//! plus what every result carries (`resultType`, the server's identity in
//! `_meta`), and those are written out while serialising. Building them into
//! the JSON tree instead meant a copy of the server identity and a dozen
//! small allocations per request, a measurable share of a small call.

use serde::ser::{Error as _, Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::protocol::jsonrpc::{RequestId, result_value};
use crate::protocol::meta;

/// The response to one request, and the HTTP status to send it with.
pub(crate) struct Reply {
    pub(crate) message: ReplyMessage,
    pub(crate) http_status: u16,
}

/// The server's identity as every 2026-07-28 result carries it in `_meta`:
/// the JSON value, and that `_meta` object serialised once, so a result
/// whose handler set no `_meta` of its own writes it as plain bytes
/// instead of walking the tree and escaping its strings on every reply.
#[derive(Clone, Debug)]
pub(crate) struct ServerIdentity(Arc<IdentityForms>);

#[derive(Debug)]
struct IdentityForms {
    info: Value,
    /// `info` as written (merged into a handler's or an upstream's `_meta`).
    info_raw: Box<RawValue>,
    /// `{"io.modelcontextprotocol/serverInfo": info}`
    meta: Box<RawValue>,
}

impl ServerIdentity {
    /// The identity of a server whose `Implementation` serialises to `info`.
    pub(crate) fn new(info: Value) -> ServerIdentity {
        // A map of a string key and a `Value` always serialises.
        let meta = serde_json::value::to_raw_value(&ServerInfoOnly(&info)).unwrap_or_default();
        let info_raw = serde_json::value::to_raw_value(&info).unwrap_or_default();
        ServerIdentity(Arc::new(IdentityForms {
            info,
            info_raw,
            meta,
        }))
    }

    /// The identity as a JSON value.
    pub(crate) fn info(&self) -> &Value {
        &self.0.info
    }

    /// The identity as written.
    fn info_raw(&self) -> &RawValue {
        &self.0.info_raw
    }
}

/// A result object as a handler round left it.
#[derive(Debug, Clone)]
pub(crate) enum ResultObject {
    /// Any result object.
    Map(Map<String, Value>),
    /// `{"content": [{"type": "text", "text": …}]}`, the commonest tool
    /// result, kept as its text: serialised without building its tree (two
    /// maps, an array and four strings allocated and freed per call).
    Text(String),
    /// A JSON object as another server wrote it (a relayed result:
    /// `server/relay.rs`), written out member by member as it is.
    Raw(Box<RawValue>),
}

impl PartialEq for ResultObject {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (ResultObject::Map(a), ResultObject::Map(b)) => a == b,
            (ResultObject::Text(a), ResultObject::Text(b)) => a == b,
            (ResultObject::Raw(a), ResultObject::Raw(b)) => a.get() == b.get(),
            _ => false,
        }
    }
}

impl ResultObject {
    /// The result as a JSON object.
    pub(crate) fn into_map(self) -> Map<String, Value> {
        match self {
            ResultObject::Map(map) => map,
            // A relay takes only objects.
            ResultObject::Raw(raw) => serde_json::from_str(raw.get()).unwrap_or_default(),
            ResultObject::Text(text) => {
                let mut map = Map::new();
                map.insert("content".into(), Value::Array(vec![text_block(text)]));
                map
            }
        }
    }
}

impl From<Map<String, Value>> for ResultObject {
    fn from(map: Map<String, Value>) -> Self {
        ResultObject::Map(map)
    }
}

/// A JSON-RPC response message.
pub(crate) enum ReplyMessage {
    /// A result that still gets `resultType: "complete"` (unless it has a
    /// `resultType`) and, when given, the server's identity in its `_meta`.
    Result {
        id: RequestId,
        result: ResultObject,
        server_info: Option<ServerIdentity>,
    },
    /// A complete message (errors, legacy results).
    Message(Value),
}

impl ReplyMessage {
    /// The message as a JSON tree, for transports that queue values.
    pub(crate) fn into_value(self) -> Value {
        match self {
            ReplyMessage::Message(value) => value,
            ReplyMessage::Result {
                id,
                result,
                server_info,
            } => {
                let mut result = result.into_map();
                result
                    .entry("resultType")
                    .or_insert_with(|| Value::from("complete"));
                if let Some(identity) = server_info {
                    let info = identity.info().clone();
                    match result
                        .entry("_meta")
                        .or_insert_with(|| Value::Object(Map::new()))
                    {
                        Value::Object(m) => {
                            m.insert(meta::SERVER_INFO.into(), info);
                        }
                        other => {
                            *other =
                                Value::Object(Map::from_iter([(meta::SERVER_INFO.into(), info)]))
                        }
                    }
                }
                result_value(Some(&id), Value::Object(result))
            }
        }
    }
}

impl ReplyMessage {
    /// The message as JSON bytes, exactly as `serde_json::to_vec` writes it.
    ///
    /// The commonest answer, a text tool result, is written from constant
    /// fragments around its id and escaped text: through `Serialize`, each
    /// of its nine constant member names and values is scanned for escapes
    /// again on every reply (about 1,000 instructions of a small call), and
    /// the buffer, started at serde_json's 128 bytes, grows once or twice.
    /// A test compares both forms byte for byte.
    pub(crate) fn to_json_bytes(&self) -> Vec<u8> {
        let (id, text, server_info) = match self {
            ReplyMessage::Result {
                id,
                result: ResultObject::Text(text),
                server_info,
            } => (id, text, server_info),
            // A relayed result: written into a buffer sized for it once
            // (from serde_json's 128 bytes it would grow two or three times).
            ReplyMessage::Result {
                result: ResultObject::Raw(raw),
                server_info,
                ..
            } => {
                let meta = server_info.as_ref().map_or(0, |i| i.0.meta.get().len());
                let mut out = Vec::with_capacity(raw.get().len() + meta + TEXT_RESULT_OVERHEAD);
                // Serialising raw members into a Vec cannot fail (a result
                // that is not an object is refused before).
                let _ = serde_json::to_writer(&mut out, self);
                return out;
            }
            // Serialising a `Value` or a map of `Value`s cannot fail.
            _ => return serde_json::to_vec(self).unwrap_or_default(),
        };
        let meta = server_info.as_ref().map(|identity| identity.0.meta.get());
        let mut out =
            Vec::with_capacity(text.len() + meta.map_or(0, str::len) + TEXT_RESULT_OVERHEAD);
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        // Into a Vec, serialising an id or a string cannot fail.
        let _ = serde_json::to_writer(&mut out, id);
        out.extend_from_slice(br#","result":{"content":[{"text":"#);
        let _ = serde_json::to_writer(&mut out, text.as_str());
        out.extend_from_slice(br#","type":"text"}],"resultType":"complete""#);
        if let Some(meta) = meta {
            out.extend_from_slice(br#","_meta":"#);
            out.extend_from_slice(meta.as_bytes());
        }
        out.extend_from_slice(b"}}");
        out
    }
}

/// The bytes of a text result besides its text and server identity, with
/// room for an id and a few escapes: the buffer is sized once.
const TEXT_RESULT_OVERHEAD: usize = 128;

impl Serialize for ReplyMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            ReplyMessage::Message(value) => value.serialize(serializer),
            ReplyMessage::Result {
                id,
                result,
                server_info,
            } => {
                let mut envelope = serializer.serialize_map(Some(3))?;
                envelope.serialize_entry("jsonrpc", "2.0")?;
                envelope.serialize_entry("id", id)?;
                envelope.serialize_entry(
                    "result",
                    &CompletedResult {
                        result,
                        server_info: server_info.as_ref(),
                    },
                )?;
                envelope.end()
            }
        }
    }
}

/// A result object with `resultType` and the server identity merged in.
struct CompletedResult<'a> {
    result: &'a ResultObject,
    server_info: Option<&'a ServerIdentity>,
}

impl Serialize for CompletedResult<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let result = match self.result {
            ResultObject::Map(result) => result,
            ResultObject::Raw(raw) => return self.serialize_raw(raw, serializer),
            ResultObject::Text(text) => {
                // Members in the order the map form has (keys sorted, then
                // what is added below), so both forms give the same bytes.
                let mut map = serializer.serialize_map(None)?;
                map.serialize_entry("content", &[TextBlock(text)])?;
                map.serialize_entry("resultType", "complete")?;
                if let Some(identity) = self.server_info {
                    map.serialize_entry("_meta", &identity.0.meta)?;
                }
                return map.end();
            }
        };
        let mut map = serializer.serialize_map(None)?;
        let mut wrote_meta = false;
        for (key, value) in result {
            match (key.as_str(), self.server_info, value) {
                ("_meta", Some(identity), Value::Object(handler_meta)) => {
                    let info = identity.info_raw();
                    map.serialize_entry(key, &MetaWithServerInfo { handler_meta, info })?;
                    wrote_meta = true;
                }
                // A `_meta` that is not an object is replaced, as it must be
                // one.
                ("_meta", Some(_), _) => {}
                _ => map.serialize_entry(key, value)?,
            }
        }
        self.end(map, result.contains_key("resultType"), wrote_meta)
    }
}

impl CompletedResult<'_> {
    /// A result as another server wrote it: its members as they are, in a
    /// JSON map's sorted order as for a map result, but for its `_meta`,
    /// which gets this server's identity.
    fn serialize_raw<S: Serializer>(
        &self,
        raw: &RawValue,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        // Borrowed: a member name with escapes cannot be, and such a
        // result is written through its tree instead.
        let Ok(members) = serde_json::from_str::<BTreeMap<&str, &RawValue>>(raw.get()) else {
            let map: Map<String, Value> =
                serde_json::from_str(raw.get()).map_err(S::Error::custom)?;
            return CompletedResult {
                result: &ResultObject::Map(map),
                server_info: self.server_info,
            }
            .serialize(serializer);
        };
        let mut map = serializer.serialize_map(None)?;
        let mut wrote_meta = false;
        for (key, value) in &members {
            match (*key, self.server_info) {
                ("_meta", Some(identity)) => {
                    // Its members as written (borrowed; one with escapes in
                    // its name is read into a tree); not an object:
                    // replaced, as it must be one.
                    let info = identity.info_raw();
                    let as_written = serde_json::from_str::<BTreeMap<&str, &RawValue>>(value.get());
                    if let Ok(handler_meta) = &as_written {
                        map.serialize_entry(key, &MetaWithServerInfo { handler_meta, info })?;
                        wrote_meta = true;
                    } else if let Ok(handler_meta) =
                        &serde_json::from_str::<Map<String, Value>>(value.get())
                    {
                        map.serialize_entry(key, &MetaWithServerInfo { handler_meta, info })?;
                        wrote_meta = true;
                    }
                }
                _ => map.serialize_entry(key, value)?,
            }
        }
        self.end(map, members.contains_key("resultType"), wrote_meta)
    }

    /// What every result gets after its own members: `resultType` when it
    /// has none, the server identity when its `_meta` did not carry it.
    fn end<M: SerializeMap>(
        &self,
        mut map: M,
        has_result_type: bool,
        wrote_meta: bool,
    ) -> Result<M::Ok, M::Error> {
        if !has_result_type {
            map.serialize_entry("resultType", "complete")?;
        }
        if let (Some(identity), false) = (self.server_info, wrote_meta) {
            map.serialize_entry("_meta", &identity.0.meta)?;
        }
        map.end()
    }
}

/// `{"text": …, "type": "text"}` (members in a JSON map's sorted order).
struct TextBlock<'a>(&'a str);

impl Serialize for TextBlock<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("text", self.0)?;
        map.serialize_entry("type", "text")?;
        map.end()
    }
}

/// A handler's (or an upstream's) `_meta` with the server identity added
/// (or overriding): `M` is a map of its members, as a tree or as written.
struct MetaWithServerInfo<'a, M> {
    handler_meta: &'a M,
    info: &'a RawValue,
}

impl<'a, M, K, V> Serialize for MetaWithServerInfo<'a, M>
where
    &'a M: IntoIterator<Item = (K, V)>,
    K: AsRef<str> + Serialize,
    V: Serialize,
{
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        for (key, value) in self.handler_meta {
            if key.as_ref() != meta::SERVER_INFO {
                map.serialize_entry(&key, &value)?;
            }
        }
        map.serialize_entry(meta::SERVER_INFO, self.info)?;
        map.end()
    }
}

/// `{"io.modelcontextprotocol/serverInfo": …}`
struct ServerInfoOnly<'a>(&'a Value);

impl Serialize for ServerInfoOnly<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        map.serialize_entry(meta::SERVER_INFO, self.0)?;
        map.end()
    }
}

/// A `{"type": "text", "text": ...}` content block.
pub(crate) fn text_block(text: String) -> Value {
    let mut block = Map::with_capacity(2);
    block.insert("type".into(), Value::String("text".into()));
    block.insert("text".into(), Value::String(text));
    Value::Object(block)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn outgoing(result: Value, info: Option<Value>) -> ReplyMessage {
        let Value::Object(result) = result else {
            unreachable!("tests pass objects")
        };
        ReplyMessage::Result {
            id: RequestId::Number(7),
            result: ResultObject::Map(result),
            server_info: info.map(ServerIdentity::new),
        }
    }

    fn raw_outgoing(raw: &str, info: Option<Value>) -> ReplyMessage {
        ReplyMessage::Result {
            id: RequestId::Number(7),
            result: ResultObject::Raw(RawValue::from_string(raw.to_owned()).unwrap()),
            server_info: info.map(ServerIdentity::new),
        }
    }

    /// A relayed result is written member by member as it came, and gets
    /// what a map result gets: `resultType` when missing, this server's
    /// identity in its `_meta` (other `_meta` members kept). Written
    /// compactly with sorted members, it gives the map form's bytes.
    #[test]
    fn a_raw_result_is_written_as_its_map_would_be() {
        let info = json!({"name": "proxy", "version": "1"});
        for raw in [
            r#"{"content":[{"text":"hi","type":"text"}]}"#,
            r#"{"_meta":{"a":1,"io.modelcontextprotocol/serverInfo":{"name":"up"}},"content":[],"isError":true}"#,
            r#"{"resultType":"input_required","inputRequests":{},"requestState":"s"}"#,
            r#"{"_meta":"not an object","content":[]}"#,
            r#"{"content":[],"weird\"key":1}"#,
            // A `_meta` member name with escapes: the `_meta` goes through
            // its tree.
            r#"{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"up"},"we\"ird":1},"content":[]}"#,
        ] {
            let map: Value = serde_json::from_str(raw).unwrap();
            for identity in [Some(info.clone()), None] {
                assert_eq!(
                    String::from_utf8(raw_outgoing(raw, identity.clone()).to_json_bytes()).unwrap(),
                    String::from_utf8(outgoing(map.clone(), identity).to_json_bytes()).unwrap(),
                    "{raw}"
                );
            }
        }
        // Members keep the upstream's own spacing inside values.
        let spaced = raw_outgoing(r#"{"content": [ {"type":"text","text":"x"} ]}"#, None);
        let written = String::from_utf8(spaced.to_json_bytes()).unwrap();
        assert!(
            written.contains(r#""content":[ {"type":"text","text":"x"} ]"#),
            "{written}"
        );
        assert_eq!(
            ResultObject::Raw(RawValue::from_string(r#"{"a":[1]}"#.into()).unwrap()).into_map(),
            serde_json::from_str::<Map<String, Value>>(r#"{"a":[1]}"#).unwrap()
        );
    }

    fn text_outgoing(text: &str, info: Option<Value>) -> ReplyMessage {
        ReplyMessage::Result {
            id: RequestId::Number(7),
            result: ResultObject::Text(text.into()),
            server_info: info.map(ServerIdentity::new),
        }
    }

    /// Serialising directly and building the tree must give the same JSON.
    fn both_ways(result: Value, info: Option<Value>) -> Value {
        let direct: Value = serde_json::from_slice(
            &serde_json::to_vec(&outgoing(result.clone(), info.clone())).unwrap(),
        )
        .unwrap();
        assert_eq!(direct, outgoing(result, info).into_value());
        direct
    }

    #[test]
    fn results_are_completed_with_result_type_and_server_identity() {
        let info = json!({"name": "s", "version": "1"});
        assert_eq!(
            both_ways(json!({"content": []}), Some(info.clone())),
            json!({"jsonrpc": "2.0", "id": 7, "result": {
                "content": [], "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": info}}})
        );
    }

    #[test]
    fn handler_meta_and_result_type_are_kept_and_the_identity_wins() {
        let info = json!({"name": "s", "version": "1"});
        let result = json!({
            "resultType": "input_required",
            "_meta": {"a": 1, "io.modelcontextprotocol/serverInfo": "forged"}
        });
        assert_eq!(
            both_ways(result, Some(info.clone()))["result"],
            json!({"resultType": "input_required",
                   "_meta": {"a": 1, "io.modelcontextprotocol/serverInfo": info}})
        );
        assert_eq!(
            both_ways(json!({"_meta": 5}), Some(info.clone()))["result"],
            json!({"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": info}})
        );
    }

    #[test]
    fn a_text_result_gives_the_bytes_of_its_map_form() {
        let info = json!({"name": "s", "version": "1"});
        for (text, info) in [("hi \"there\"\n", Some(info)), ("", None)] {
            let map = json!({"content": [{"type": "text", "text": text}]});
            let typed = serde_json::to_vec(&text_outgoing(text, info.clone())).unwrap();
            assert_eq!(
                String::from_utf8(typed).unwrap(),
                String::from_utf8(
                    serde_json::to_vec(&outgoing(map.clone(), info.clone())).unwrap()
                )
                .unwrap()
            );
            assert_eq!(
                text_outgoing(text, info.clone()).into_value(),
                outgoing(map, info).into_value()
            );
        }
    }

    #[test]
    fn json_bytes_are_those_of_serde_json() {
        let info = json!({"name": "s \"q\"", "version": "1"});
        let ids = [
            RequestId::Number(-3),
            RequestId::String("a\"b\u{1}é".into()),
        ];
        for id in ids {
            for info in [Some(info.clone()), None] {
                for text in ["", "hi \"there\"\n\u{7f}\u{2028}é😀\\", &"x".repeat(300)] {
                    let message = ReplyMessage::Result {
                        id: id.clone(),
                        result: ResultObject::Text(text.into()),
                        server_info: info.clone().map(ServerIdentity::new),
                    };
                    assert_eq!(
                        String::from_utf8(message.to_json_bytes()).unwrap(),
                        String::from_utf8(serde_json::to_vec(&message).unwrap()).unwrap()
                    );
                }
                let map = outgoing(json!({"content": [], "_meta": {"a": 1}}), info.clone());
                assert_eq!(map.to_json_bytes(), serde_json::to_vec(&map).unwrap());
            }
        }
        let error = ReplyMessage::Message(json!({"jsonrpc": "2.0", "id": 1, "error": {}}));
        assert_eq!(error.to_json_bytes(), serde_json::to_vec(&error).unwrap());
    }

    #[test]
    fn without_server_identity_meta_is_untouched() {
        assert_eq!(
            both_ways(json!({"_meta": 5}), None)["result"],
            json!({"resultType": "complete", "_meta": 5})
        );
    }
}
