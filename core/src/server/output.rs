//! Host values to results: the one rule, per kind of result, that turns a
//! value a host callback produced (a `serde_json::Value` converted from a
//! Python object, a JS value or C JSON text) into what core sends.
//!
//! Bindings run the callback and convert the host value to JSON; they never
//! assemble a protocol result themselves. Each kind of output implements
//! [`FromHost`], so one generic host-call adapter per binding serves tools,
//! resources, prompts and completion on the server side, and the answers a
//! client gives the server (elicitation, sampling, roots).
//!
//! | kind | a host may return |
//! |------|-------------------|
//! | tool ([`ToolOutput`]) | any JSON value (rules in `server/tool_result.rs`) |
//! | resource ([`ResourceOutput`]) | a string; one contents item (`{uri, text\|blob, mimeType?}`); a list of them; `{"contents": [...]}` |
//! | prompt ([`PromptOutput`]) | a string (one user message); one `PromptMessage`; a list of them; a full `GetPromptResult` (`{"messages": [...]}`) |
//! | completion ([`CompletionOutput`]) | a list of strings; `{"values": [...], "total"?, "hasMore"?}` |
//! | elicitation ([`ElicitResult`]) | `{"action": "accept"\|"decline"\|"cancel", "content"?}` |
//! | sampling ([`CreateMessageResult`]) | a `CreateMessageResult` object |
//! | roots ([`ListRootsResult`]) | a list of `Root` objects; `{"roots": [...]}` |
//!
//! A value of the wrong shape is an [`OutputError`] naming the kind, what
//! was expected and what came; it reaches the peer as a handler error.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::error::HandlerError;
use super::handler::{CompletionOutput, PromptOutput, ResourceOutput, ToolOutput};
use crate::protocol::{
    CallToolResult, CreateMessageResult, ElicitResult, GetPromptResult, ListRootsResult,
    PromptMessage, Root, TextOrBlobResourceContents,
};

pub use super::tool_result::WRAPPED_RESULT_KEY;

/// A host value that is not acceptable as the kind of result asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {kind} result: {reason}")]
pub struct OutputError {
    /// The kind of result ([`FromHost::KIND`]).
    pub kind: &'static str,
    /// What was wrong with the value.
    pub reason: String,
}

impl OutputError {
    fn new(kind: &'static str, reason: impl Into<String>) -> Self {
        OutputError {
            kind,
            reason: reason.into(),
        }
    }

    fn expected(kind: &'static str, expected: &str, got: &Value) -> Self {
        OutputError::new(kind, format!("expected {expected}, got {}", type_name(got)))
    }
}

impl From<OutputError> for HandlerError {
    /// A wrong-shaped value is the handler's fault: a tool error for a tool
    /// (the model sees it), an internal error for other primitives.
    fn from(error: OutputError) -> Self {
        HandlerError::Tool(error.to_string())
    }
}

/// An output kind a host value can be turned into.
pub trait FromHost: Sized + Send + 'static {
    /// The kind's name in error messages (`"tool"`, `"resource"`...).
    const KIND: &'static str;

    /// Applies the kind's rule to what the host callback returned.
    fn from_host(value: Value) -> Result<Self, OutputError>;
}

/// The JSON type of a value, as error messages name it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Checks `value` against a protocol type without changing it, so what is
/// sent is exactly what the host gave (no re-serialisation).
fn check<T: DeserializeOwned>(
    kind: &'static str,
    what: &str,
    value: &Value,
) -> Result<(), OutputError> {
    T::deserialize(value)
        .map(drop)
        .map_err(|e| OutputError::new(kind, format!("not a valid {what}: {e}")))
}

fn check_each<T: DeserializeOwned>(
    kind: &'static str,
    what: &str,
    items: &[Value],
) -> Result<(), OutputError> {
    for (index, item) in items.iter().enumerate() {
        T::deserialize(item).map_err(|e| {
            OutputError::new(kind, format!("item {index} is not a valid {what}: {e}"))
        })?;
    }
    Ok(())
}

impl FromHost for ToolOutput {
    const KIND: &'static str = "tool";

    /// Any value: core turns it into a `CallToolResult` by the rules in
    /// `server/tool_result.rs` when the call is answered.
    fn from_host(value: Value) -> Result<Self, OutputError> {
        Ok(ToolOutput::Value(value))
    }
}

impl ToolOutput {
    /// A complete `CallToolResult` object given by a host (C's
    /// `ferromcp_call_respond_result`), checked against the schema type and
    /// then sent as is.
    pub fn from_host_result(value: Value) -> Result<ToolOutput, OutputError> {
        let Value::Object(map) = value else {
            return Err(OutputError::expected(
                "tool",
                "a CallToolResult object",
                &value,
            ));
        };
        let map = with_content(map);
        check::<CallToolResult>("tool", "CallToolResult", &Value::Object(map.clone()))?;
        Ok(ToolOutput::Result(map))
    }

    /// A `CallToolResult` from its parts, as host-side result classes
    /// (Python's `ToolResult`) take them: `content` items are content
    /// blocks, a string item being shorthand for a text block.
    pub fn from_parts(
        content: Vec<Value>,
        structured_content: Option<Value>,
        is_error: bool,
        meta: Option<Value>,
    ) -> Result<ToolOutput, OutputError> {
        let blocks = content
            .into_iter()
            .map(|item| match item {
                Value::String(text) => super::reply::text_block(text),
                other => other,
            })
            .collect();
        let mut result = Map::new();
        result.insert("content".into(), Value::Array(blocks));
        if let Some(structured) = structured_content {
            if !structured.is_object() {
                return Err(OutputError::expected(
                    "tool",
                    "an object for structured content",
                    &structured,
                ));
            }
            result.insert("structuredContent".into(), structured);
        }
        if is_error {
            result.insert("isError".into(), Value::Bool(true));
        }
        if let Some(meta) = meta {
            if !meta.is_object() {
                return Err(OutputError::expected("tool", "an object for _meta", &meta));
            }
            result.insert("_meta".into(), meta);
        }
        ToolOutput::from_host_result(Value::Object(result))
    }
}

/// A result object always has a `content` array (the schema requires one):
/// a missing one is added empty, as for every tool result; one of the wrong
/// type is left for the schema check to refuse.
fn with_content(mut map: Map<String, Value>) -> Map<String, Value> {
    map.entry("content")
        .or_insert_with(|| Value::Array(Vec::new()));
    map
}

impl FromHost for ResourceOutput {
    const KIND: &'static str = "resource";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        const EXPECTED: &str =
            "a string, a contents item ({uri, text|blob}), a list of them or {\"contents\": [...]}";
        let items = match value {
            Value::String(text) => return Ok(ResourceOutput::Text(text)),
            Value::Array(items) => items,
            Value::Object(mut map) => match map.remove("contents") {
                Some(Value::Array(items)) => items,
                Some(other) => {
                    return Err(OutputError::expected(
                        Self::KIND,
                        "a list of contents",
                        &other,
                    ));
                }
                None => vec![Value::Object(map)],
            },
            other => return Err(OutputError::expected(Self::KIND, EXPECTED, &other)),
        };
        check_each::<TextOrBlobResourceContents>(Self::KIND, "resource contents item", &items)?;
        Ok(ResourceOutput::Contents(items))
    }
}

impl FromHost for PromptOutput {
    const KIND: &'static str = "prompt";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        match value {
            Value::String(text) => Ok(PromptOutput::Text(text)),
            Value::Array(messages) => {
                check_each::<PromptMessage>(Self::KIND, "PromptMessage", &messages)?;
                Ok(PromptOutput::Messages(messages))
            }
            Value::Object(map) if map.contains_key("messages") => {
                let value = Value::Object(map);
                check::<GetPromptResult>(Self::KIND, "GetPromptResult", &value)?;
                match value {
                    Value::Object(map) => Ok(PromptOutput::Result(map)),
                    // Cannot happen: built as an object two lines up.
                    other => Err(OutputError::expected(Self::KIND, "an object", &other)),
                }
            }
            Value::Object(map) => {
                let message = Value::Object(map);
                check::<PromptMessage>(Self::KIND, "PromptMessage", &message)?;
                Ok(PromptOutput::Messages(vec![message]))
            }
            other => Err(OutputError::expected(
                Self::KIND,
                "a string, a PromptMessage, a list of them or a GetPromptResult",
                &other,
            )),
        }
    }
}

impl FromHost for CompletionOutput {
    const KIND: &'static str = "completion";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        let (values, total, has_more) = match value {
            Value::Array(values) => (values, None, None),
            Value::Object(mut map) => {
                let values = match map.remove("values") {
                    Some(Value::Array(values)) => values,
                    Some(other) => {
                        return Err(OutputError::expected(
                            Self::KIND,
                            "a list of values",
                            &other,
                        ));
                    }
                    None => {
                        return Err(OutputError::new(Self::KIND, "the object has no \"values\""));
                    }
                };
                let total = match map.remove("total") {
                    None | Some(Value::Null) => None,
                    Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64(),
                    Some(other) => {
                        return Err(OutputError::expected(
                            Self::KIND,
                            "a non-negative integer for \"total\"",
                            &other,
                        ));
                    }
                };
                let has_more = match map.remove("hasMore") {
                    None | Some(Value::Null) => None,
                    Some(Value::Bool(b)) => Some(b),
                    Some(other) => {
                        return Err(OutputError::expected(
                            Self::KIND,
                            "a boolean for \"hasMore\"",
                            &other,
                        ));
                    }
                };
                (values, total, has_more)
            }
            other => {
                return Err(OutputError::expected(
                    Self::KIND,
                    "a list of strings or {\"values\": [...]}",
                    &other,
                ));
            }
        };
        let values = values
            .into_iter()
            .enumerate()
            .map(|(index, value)| match value {
                Value::String(s) => Ok(s),
                other => Err(OutputError::new(
                    Self::KIND,
                    format!("value {index} must be a string, got {}", type_name(&other)),
                )),
            })
            .collect::<Result<Vec<String>, OutputError>>()?;
        Ok(CompletionOutput {
            values,
            total,
            has_more,
        })
    }
}

/// Parses a whole protocol object.
fn parse<T: DeserializeOwned>(
    kind: &'static str,
    what: &str,
    value: Value,
) -> Result<T, OutputError> {
    if !value.is_object() {
        return Err(OutputError::expected(
            kind,
            &format!("a {what} object"),
            &value,
        ));
    }
    serde_json::from_value(value)
        .map_err(|e| OutputError::new(kind, format!("not a valid {what}: {e}")))
}

impl FromHost for ElicitResult {
    const KIND: &'static str = "elicitation";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        parse(Self::KIND, "ElicitResult", value)
    }
}

impl FromHost for CreateMessageResult {
    const KIND: &'static str = "sampling";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        parse(Self::KIND, "CreateMessageResult", value)
    }
}

impl FromHost for ListRootsResult {
    const KIND: &'static str = "roots";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        match value {
            Value::Array(roots) => {
                let roots = roots
                    .into_iter()
                    .enumerate()
                    .map(|(index, root)| {
                        serde_json::from_value::<Root>(root).map_err(|e| {
                            OutputError::new(
                                Self::KIND,
                                format!("item {index} is not a valid Root: {e}"),
                            )
                        })
                    })
                    .collect::<Result<Vec<Root>, OutputError>>()?;
                Ok(ListRootsResult { roots })
            }
            other => parse(Self::KIND, "ListRootsResult", other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reason<T: FromHost + std::fmt::Debug>(value: Value) -> String {
        T::from_host(value)
            .expect_err("must be refused")
            .to_string()
    }

    #[test]
    fn tool_takes_any_value() {
        assert_eq!(
            ToolOutput::from_host(json!(5)),
            Ok(ToolOutput::Value(json!(5)))
        );
        assert_eq!(
            ToolOutput::from_host(Value::Null),
            Ok(ToolOutput::Value(Value::Null))
        );
    }

    #[test]
    fn tool_result_is_checked_and_kept() {
        let ok = ToolOutput::from_host_result(
            json!({"content": [{"type": "text", "text": "a"}], "isError": true}),
        );
        assert_eq!(
            ok,
            Ok(ToolOutput::Result(
                json!({"content": [{"type": "text", "text": "a"}], "isError": true})
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            ))
        );
        // A missing content list is supplied, as the schema requires one.
        let empty = ToolOutput::from_host_result(json!({"isError": true}));
        assert_eq!(
            empty,
            Ok(ToolOutput::Result(
                json!({"isError": true, "content": []})
                    .as_object()
                    .cloned()
                    .unwrap_or_default()
            ))
        );
        assert!(ToolOutput::from_host_result(json!([1])).is_err());
        assert!(ToolOutput::from_host_result(json!({"content": "x"})).is_err());
        assert!(ToolOutput::from_host_result(json!({"content": [{"type": "nope"}]})).is_err());
    }

    #[test]
    fn tool_parts_turn_strings_into_text_blocks() {
        let out = ToolOutput::from_parts(
            vec![json!("one"), json!({"type": "text", "text": "two"})],
            Some(json!({"ok": true})),
            true,
            Some(json!({"k": 1})),
        );
        let expected = json!({
            "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}],
            "structuredContent": {"ok": true},
            "isError": true,
            "_meta": {"k": 1}
        });
        assert_eq!(
            out,
            Ok(ToolOutput::Result(
                expected.as_object().cloned().unwrap_or_default()
            ))
        );
        assert!(ToolOutput::from_parts(vec![], Some(json!(1)), false, None).is_err());
    }

    #[test]
    fn resource_shapes() {
        assert_eq!(
            ResourceOutput::from_host(json!("hi")),
            Ok(ResourceOutput::Text("hi".into()))
        );
        let item = json!({"uri": "file:///a", "text": "x"});
        assert_eq!(
            ResourceOutput::from_host(item.clone()),
            Ok(ResourceOutput::Contents(vec![item.clone()]))
        );
        assert_eq!(
            ResourceOutput::from_host(json!([item.clone()])),
            Ok(ResourceOutput::Contents(vec![item.clone()]))
        );
        assert_eq!(
            ResourceOutput::from_host(json!({"contents": [item.clone()]})),
            Ok(ResourceOutput::Contents(vec![item]))
        );
        assert!(
            reason::<ResourceOutput>(json!(3)).starts_with("invalid resource result: expected")
        );
        assert!(reason::<ResourceOutput>(json!([{"text": "no uri"}])).contains("item 0"));
    }

    #[test]
    fn prompt_shapes() {
        assert_eq!(
            PromptOutput::from_host(json!("hi")),
            Ok(PromptOutput::Text("hi".into()))
        );
        let message = json!({"role": "user", "content": {"type": "text", "text": "x"}});
        assert_eq!(
            PromptOutput::from_host(message.clone()),
            Ok(PromptOutput::Messages(vec![message.clone()]))
        );
        assert_eq!(
            PromptOutput::from_host(json!([message.clone()])),
            Ok(PromptOutput::Messages(vec![message.clone()]))
        );
        let full = json!({"description": "d", "messages": [message]});
        assert_eq!(
            PromptOutput::from_host(full.clone()),
            Ok(PromptOutput::Result(
                full.as_object().cloned().unwrap_or_default()
            ))
        );
        assert!(
            reason::<PromptOutput>(json!({"role": "robot", "content": {}}))
                .contains("PromptMessage")
        );
        assert!(reason::<PromptOutput>(json!(1)).contains("got a number"));
    }

    #[test]
    fn completion_shapes() {
        assert_eq!(
            CompletionOutput::from_host(json!(["a", "b"])),
            Ok(CompletionOutput {
                values: vec!["a".into(), "b".into()],
                total: None,
                has_more: None
            })
        );
        assert_eq!(
            CompletionOutput::from_host(json!({"values": ["a"], "total": 9, "hasMore": true})),
            Ok(CompletionOutput {
                values: vec!["a".into()],
                total: Some(9),
                has_more: Some(true)
            })
        );
        assert!(reason::<CompletionOutput>(json!([1])).contains("value 0 must be a string"));
        assert!(reason::<CompletionOutput>(json!({"total": 1})).contains("no \"values\""));
        assert!(reason::<CompletionOutput>(json!({"values": [], "total": -1})).contains("total"));
        assert!(reason::<CompletionOutput>(json!("a")).contains("got a string"));
    }

    #[test]
    fn elicitation_answers() {
        let answer = ElicitResult::from_host(json!({"action": "accept", "content": {"name": "x"}}));
        assert!(answer.is_ok());
        // Every form field type the request schema allows is answerable,
        // a `type: "number"` field's fractional value included.
        let form = json!({"action": "accept", "content": {
            "name": "x", "age": 30, "score": 95.5, "ok": true, "tags": ["a", "b"]
        }});
        let answer = ElicitResult::from_host(form.clone());
        assert_eq!(answer.map(|a| serde_json::to_value(a).ok()), Ok(Some(form)));
        assert!(
            ElicitResult::from_host(json!({"action": "accept", "content": {"x": {}}})).is_err()
        );
        assert!(ElicitResult::from_host(json!({"action": "maybe"})).is_err());
        assert!(reason::<ElicitResult>(json!("accept")).contains("ElicitResult object"));
    }

    #[test]
    fn sampling_answers() {
        let answer = CreateMessageResult::from_host(json!({
            "role": "assistant",
            "content": {"type": "text", "text": "hi"},
            "model": "m"
        }));
        assert!(answer.is_ok());
        assert!(reason::<CreateMessageResult>(json!({"role": "assistant"})).contains("sampling"));
    }

    #[test]
    fn roots_answers() {
        let list = ListRootsResult::from_host(json!([{"uri": "file:///a", "name": "a"}]));
        assert_eq!(list.map(|r| r.roots.len()), Ok(1));
        let object = ListRootsResult::from_host(json!({"roots": []}));
        assert_eq!(object.map(|r| r.roots.len()), Ok(0));
        assert!(reason::<ListRootsResult>(json!([{"name": "no uri"}])).contains("item 0"));
        assert!(reason::<ListRootsResult>(json!(1)).contains("roots"));
    }

    #[test]
    fn wrong_shapes_become_handler_errors() {
        let err: HandlerError = OutputError::new("prompt", "bad").into();
        assert_eq!(err, HandlerError::Tool("invalid prompt result: bad".into()));
    }
}
