//! A request's `params._meta` read straight into its reserved members while
//! the message is parsed.
//!
//! Every 2026-07-28 request carries `_meta` with three or more members whose
//! names are 30–45 bytes long. Parsed into a JSON tree, each name becomes an
//! allocated string in a tree map that the server then takes apart again;
//! on an echo call that was about a tenth of the server's work. Read here,
//! the names are matched in the input and only the values are built.
//!
//! The split is lossless: [`MetaMembers::restore_into`] puts `_meta` back
//! into the params, for the paths (legacy sessions, notifications) that read
//! it from there.

use serde::Deserialize;
use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Number, Value};
use std::fmt;

use super::meta;

/// What a request's `params` said in `_meta`.
#[derive(Debug, Default, Clone, PartialEq)]
pub enum MetaMembers {
    /// No `_meta` (or no params).
    #[default]
    Absent,
    /// `_meta` was not a JSON object; kept as sent, for the error message
    /// and for [`MetaMembers::restore_into`].
    NotObject(Value),
    /// `_meta` was an object.
    Object(Box<ReservedMembers>),
}

/// The members of a `_meta` object the server reads, each as sent (types
/// are checked by the server, which words the errors), and the others.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ReservedMembers {
    /// `io.modelcontextprotocol/protocolVersion`
    pub protocol_version: Option<Value>,
    /// `io.modelcontextprotocol/clientCapabilities`
    pub client_capabilities: Option<Value>,
    /// `io.modelcontextprotocol/clientInfo`, kept as sent: only a handler
    /// that asks for it needs its tree.
    pub client_info: Option<RawJson>,
    /// `io.modelcontextprotocol/logLevel`
    pub log_level: Option<Value>,
    /// `progressToken`
    pub progress_token: Option<Value>,
    /// Every other member, in case the params are restored.
    pub others: Map<String, Value>,
}

impl MetaMembers {
    /// Takes `_meta` out of `params` (a message parsed the usual way).
    pub fn take_from(params: Option<&mut Map<String, Value>>) -> MetaMembers {
        match params.and_then(|p| p.remove("_meta")) {
            None => MetaMembers::Absent,
            Some(Value::Object(members)) => {
                let mut reserved = ReservedMembers::default();
                for (name, value) in members {
                    if name == meta::CLIENT_INFO {
                        reserved.client_info = Some(RawJson::from_value(&value));
                        continue;
                    }
                    match reserved.slot(&name) {
                        Some(slot) => *slot = Some(value),
                        None => {
                            reserved.others.insert(name, value);
                        }
                    }
                }
                MetaMembers::Object(Box::new(reserved))
            }
            Some(other) => MetaMembers::NotObject(other),
        }
    }

    /// Puts `_meta` back into `params`, as it was sent (member order aside).
    pub fn restore_into(self, params: &mut Option<Map<String, Value>>) {
        let value = match self {
            MetaMembers::Absent => return,
            MetaMembers::NotObject(value) => value,
            MetaMembers::Object(reserved) => {
                let ReservedMembers {
                    protocol_version,
                    client_capabilities,
                    client_info,
                    log_level,
                    progress_token,
                    mut others,
                } = *reserved;
                for (name, value) in [
                    (meta::PROTOCOL_VERSION, protocol_version),
                    (meta::CLIENT_CAPABILITIES, client_capabilities),
                    (meta::CLIENT_INFO, client_info.map(|info| info.to_value())),
                    (meta::LOG_LEVEL, log_level),
                    (meta::PROGRESS_TOKEN, progress_token),
                ] {
                    if let Some(value) = value {
                        others.insert(name.to_owned(), value);
                    }
                }
                Value::Object(others)
            }
        };
        params
            .get_or_insert_with(Map::new)
            .insert("_meta".to_owned(), value);
    }
}

/// A JSON value kept as the text it was sent as, parsed only when read.
///
/// A `_meta` member such as `clientInfo` arrives on every request and is
/// read by few handlers: as a tree it cost five allocations per request
/// (a map, two names, two values) and their frees; as text, one.
///
/// ```
/// use ferromcp::protocol::jsonrpc::RawJson;
/// use serde_json::json;
///
/// let info = RawJson::from_value(&json!({"name": "c", "version": "1"}));
/// assert_eq!(info.to_value()["name"], "c");
/// assert_eq!(info.get(), r#"{"name":"c","version":"1"}"#);
/// ```
#[derive(Clone, Debug)]
pub struct RawJson(Box<RawValue>);

impl RawJson {
    /// The value written as JSON text.
    pub fn from_value(value: &Value) -> RawJson {
        // Writing a `Value` cannot fail; `null` is only a fallback.
        RawJson(
            serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::NULL.to_owned()),
        )
    }

    /// The JSON text, as the client sent it.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The value as a JSON tree.
    pub fn to_value(&self) -> Value {
        // The text was checked as JSON when it was read.
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

/// Equal when the values are, whatever the spacing or member order.
impl PartialEq for RawJson {
    fn eq(&self, other: &RawJson) -> bool {
        self.get() == other.get() || self.to_value() == other.to_value()
    }
}

impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Box::<RawValue>::deserialize(deserializer).map(RawJson)
    }
}

impl ReservedMembers {
    fn slot(&mut self, name: &str) -> Option<&mut Option<Value>> {
        Some(match name {
            meta::PROTOCOL_VERSION => &mut self.protocol_version,
            meta::CLIENT_CAPABILITIES => &mut self.client_capabilities,
            meta::LOG_LEVEL => &mut self.log_level,
            meta::PROGRESS_TOKEN => &mut self.progress_token,
            _ => return None,
        })
    }
}

impl<'de> Deserialize<'de> for MetaMembers {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = MetaMembers;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MetaMembers, A::Error> {
                let mut reserved = ReservedMembers::default();
                while let Some(name) = map.next_key::<MemberName>()? {
                    match name {
                        MemberName::Reserved(meta::CLIENT_INFO) => {
                            reserved.client_info = Some(map.next_value()?);
                        }
                        MemberName::Reserved(name) => {
                            // A member given twice keeps its last value.
                            *reserved.slot(name).ok_or_else(|| de::Error::custom(name))? =
                                Some(map.next_value()?);
                        }
                        MemberName::Other(name) => {
                            reserved.others.insert(name, map.next_value()?);
                        }
                    }
                }
                Ok(MetaMembers::Object(Box::new(reserved)))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<MetaMembers, E> {
                Ok(MetaMembers::NotObject(Value::Bool(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<MetaMembers, E> {
                Ok(MetaMembers::NotObject(Value::from(v)))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<MetaMembers, E> {
                Ok(MetaMembers::NotObject(Value::from(v)))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<MetaMembers, E> {
                Ok(MetaMembers::NotObject(
                    Number::from_f64(v).map_or(Value::Null, Value::Number),
                ))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MetaMembers, E> {
                Ok(MetaMembers::NotObject(Value::String(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<MetaMembers, E> {
                Ok(MetaMembers::NotObject(Value::String(v)))
            }
            fn visit_unit<E: de::Error>(self) -> Result<MetaMembers, E> {
                Ok(MetaMembers::NotObject(Value::Null))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<MetaMembers, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<Value>()? {
                    items.push(item);
                }
                Ok(MetaMembers::NotObject(Value::Array(items)))
            }
        }
        deserializer.deserialize_any(Members)
    }
}

/// A `_meta` member name, matched against the reserved ones without
/// allocating it.
enum MemberName {
    Reserved(&'static str),
    Other(String),
}

impl<'de> Deserialize<'de> for MemberName {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = MemberName;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<MemberName, E> {
                Ok(
                    match [
                        meta::PROTOCOL_VERSION,
                        meta::CLIENT_CAPABILITIES,
                        meta::CLIENT_INFO,
                        meta::LOG_LEVEL,
                        meta::PROGRESS_TOKEN,
                    ]
                    .into_iter()
                    .find(|reserved| *reserved == name)
                    {
                        Some(reserved) => MemberName::Reserved(reserved),
                        None => MemberName::Other(name.to_owned()),
                    },
                )
            }
        }
        deserializer.deserialize_str(Name)
    }
}

/// A request's `params`, with `_meta` read into [`MetaMembers`] (and, for
/// `tools/call`, `name` and `arguments` into [`CallMembers`]) and the rest
/// as a JSON value (an object unless the params were not one).
pub(super) struct SplitParams {
    pub(super) rest: Value,
    pub(super) meta: MetaMembers,
    pub(super) call: CallMembers,
}

/// A `tools/call` request's `name` and `arguments`, read apart from its
/// params while parsing, each as sent (types are checked where they are
/// used, as in the params).
///
/// The params of a call are nothing else: as a `Map<String, Value>` they
/// cost a 632-byte tree node, two allocated member names and the tree's
/// insertions, lookups, removal and drop, about 1,900 instructions of a
/// small call. Like [`MetaMembers`], the split is lossless
/// ([`CallMembers::restore_into`]).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CallMembers {
    /// `name`, if it was read apart.
    pub name: Option<Value>,
    /// `arguments`, if it was read apart.
    pub arguments: Option<Value>,
}

impl CallMembers {
    /// Whether nothing was read apart.
    pub fn is_empty(&self) -> bool {
        self.name.is_none() && self.arguments.is_none()
    }

    /// Reads `arguments` from `params` (the call's params as written) when
    /// they were not read yet: skipped while parsing because a relay might
    /// forward them unread (`Message::from_slice_split`), and needed after
    /// all. Params that do not read leave them unread, as they were.
    pub(crate) fn read_deferred_arguments(&mut self, params: &serde_json::value::RawValue) {
        if self.arguments.is_some() {
            return;
        }
        let seed = ParamsSeed {
            split_call: true,
            defer_arguments: false,
        };
        let mut deserializer = serde_json::Deserializer::from_str(params.get());
        if let Ok(read) = de::DeserializeSeed::deserialize(seed, &mut deserializer) {
            self.arguments = read.call.arguments;
        }
    }

    /// Puts the members back into `params`.
    pub fn restore_into(self, params: &mut Option<Map<String, Value>>) {
        if !self.is_empty() {
            self.restore_into_map(params.get_or_insert_with(Map::new));
        }
    }

    /// Puts the members back into a params object.
    pub fn restore_into_map(self, params: &mut Map<String, Value>) {
        if let Some(name) = self.name {
            params.insert("name".to_owned(), name);
        }
        if let Some(arguments) = self.arguments {
            params.insert("arguments".to_owned(), arguments);
        }
    }
}

/// A params member name: `_meta`, `name`/`arguments` when a call's are
/// read apart, or another (allocated: it is kept).
enum ParamName {
    Meta,
    CallName,
    CallArguments,
    Other(String),
}

/// Reads a [`ParamName`]; `split_call` says whether `name` and
/// `arguments` are read apart.
struct ParamNameSeed {
    split_call: bool,
}

impl<'de> de::DeserializeSeed<'de> for ParamNameSeed {
    type Value = ParamName;
    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<ParamName, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl Visitor<'_> for ParamNameSeed {
    type Value = ParamName;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }
    fn visit_str<E: de::Error>(self, name: &str) -> Result<ParamName, E> {
        Ok(match name {
            "_meta" => ParamName::Meta,
            "name" if self.split_call => ParamName::CallName,
            "arguments" if self.split_call => ParamName::CallArguments,
            _ => ParamName::Other(name.to_owned()),
        })
    }
}

/// Reads [`SplitParams`]; `split_call` (a `tools/call`) also reads `name`
/// and `arguments` apart, and `defer_arguments` then skips `arguments`,
/// for [`CallMembers::read_deferred_arguments`] to read from the params as
/// written if they are needed (a relay forwards them unread).
pub(super) struct ParamsSeed {
    pub(super) split_call: bool,
    pub(super) defer_arguments: bool,
}

impl ParamsSeed {
    /// The params read whole, `_meta` apart.
    pub(super) const WHOLE: ParamsSeed = ParamsSeed {
        split_call: false,
        defer_arguments: false,
    };
}

impl<'de> de::DeserializeSeed<'de> for ParamsSeed {
    type Value = SplitParams;
    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<SplitParams, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Deserialize<'de> for SplitParams {
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::DeserializeSeed::deserialize(ParamsSeed::WHOLE, deserializer)
    }
}

impl<'de> Visitor<'de> for ParamsSeed {
    type Value = SplitParams;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SplitParams, A::Error> {
        let mut rest = Map::new();
        let mut meta = MetaMembers::Absent;
        let mut call = CallMembers::default();
        let split_call = self.split_call;
        while let Some(name) = map.next_key_seed(ParamNameSeed { split_call })? {
            match name {
                ParamName::Meta => meta = map.next_value()?,
                ParamName::CallName => call.name = Some(map.next_value()?),
                ParamName::CallArguments if self.defer_arguments => {
                    map.next_value::<de::IgnoredAny>()?;
                }
                ParamName::CallArguments => call.arguments = Some(map.next_value()?),
                ParamName::Other(name) => {
                    rest.insert(name, map.next_value()?);
                }
            }
        }
        Ok(SplitParams {
            rest: Value::Object(rest),
            meta,
            call,
        })
    }
    // Not an object: the envelope check rejects it; read it so the
    // message still parses and the error can name the id.
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<SplitParams, E> {
        Ok(not_object())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<SplitParams, E> {
        Ok(not_object())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<SplitParams, E> {
        Ok(not_object())
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<SplitParams, E> {
        Ok(not_object())
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<SplitParams, E> {
        Ok(not_object())
    }
    fn visit_unit<E: de::Error>(self) -> Result<SplitParams, E> {
        Ok(not_object())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SplitParams, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(not_object())
    }
}

/// Params that are not an object: any non-object value makes the envelope
/// check fail the same way.
fn not_object() -> SplitParams {
    SplitParams {
        rest: Value::Bool(false),
        meta: MetaMembers::Absent,
        call: CallMembers::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn split(params: Value) -> (Value, MetaMembers) {
        let parsed: SplitParams = serde_json::from_value(params).unwrap();
        (parsed.rest, parsed.meta)
    }

    #[test]
    fn reserved_members_are_read_and_the_rest_kept() {
        let params = json!({
            "name": "echo",
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                "progressToken": 7,
                "traceparent": "00-abc"
            }
        });
        let (rest, meta) = split(params.clone());
        assert_eq!(rest, json!({"name": "echo"}));
        let MetaMembers::Object(reserved) = &meta else {
            panic!("{meta:?}")
        };
        assert_eq!(reserved.protocol_version, Some(json!("2026-07-28")));
        assert_eq!(
            reserved.client_info.as_ref().map(RawJson::to_value),
            Some(json!({"name": "c", "version": "1"}))
        );
        assert_eq!(reserved.progress_token, Some(json!(7)));
        assert_eq!(reserved.log_level, None);
        assert_eq!(
            reserved.others,
            json!({"traceparent": "00-abc"})
                .as_object()
                .cloned()
                .unwrap()
        );
        // The split is lossless.
        let mut restored = rest.as_object().cloned();
        meta.restore_into(&mut restored);
        assert_eq!(Value::Object(restored.unwrap()), params);
    }

    #[test]
    fn splitting_agrees_with_taking_from_a_parsed_tree() {
        for meta in [
            json!({"io.modelcontextprotocol/protocolVersion": 3, "x": [1, {"y": null}]}),
            json!("not an object"),
            json!([1, 2]),
            json!(null),
            json!(1.5),
            json!({}),
        ] {
            let params = json!({"a": 1, "_meta": meta});
            let (rest, split_meta) = split(params.clone());
            let mut tree = params.as_object().cloned();
            let taken = MetaMembers::take_from(tree.as_mut());
            assert_eq!(split_meta, taken, "{meta}");
            assert_eq!(Some(rest.as_object().cloned().unwrap()), tree);
            let mut restored = tree;
            split_meta.restore_into(&mut restored);
            assert_eq!(Value::Object(restored.unwrap()), params);
        }
    }

    #[test]
    fn params_without_meta_have_none() {
        let (rest, meta) = split(json!({"a": 1}));
        assert_eq!(rest, json!({"a": 1}));
        assert_eq!(meta, MetaMembers::Absent);
        let mut params = None;
        meta.restore_into(&mut params);
        assert_eq!(params, None);
    }
}
