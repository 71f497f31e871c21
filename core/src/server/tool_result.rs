//! Turning what a handler returned into a `CallToolResult` object.
//!
//! The rules live here, once, so a tool written in Python, Node, C or Rust
//! gives byte-identical results for the same return value:
//!
//! - a string becomes one text content block;
//! - `null` becomes an empty content list;
//! - with an `outputSchema`, an object is the `structuredContent` and its JSON
//!   text the content; any other value is wrapped as `{"result": value}` and
//!   its plain text (the string itself, or its JSON) is the content;
//! - without one, any other value becomes text content holding its JSON.

use serde_json::{Map, Value};

use super::handler::ToolOutput;
use super::reply::{ResultObject, text_block};

/// Key under which a non-object return value is wrapped when the tool
/// declares an output schema (the schema must describe `{"result": …}`).
pub const WRAPPED_RESULT_KEY: &str = "result";

/// The text a value reads as in a text content block.
pub(crate) fn plain_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Consumes `value` for the text it reads as (no copy of a string).
fn into_plain_text(value: Value) -> String {
    match value {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// Structured content a value stands for under an output schema.
pub(crate) fn structured_content(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => {
            let mut map = Map::with_capacity(1);
            map.insert(WRAPPED_RESULT_KEY.into(), other);
            map
        }
    }
}

/// Builds the `CallToolResult` object (without `resultType`/`_meta`).
pub(crate) fn into_call_tool_result(output: ToolOutput, has_output_schema: bool) -> ResultObject {
    match output {
        ToolOutput::Value(Value::String(text)) if !has_output_schema => ResultObject::Text(text),
        other => ResultObject::Map(into_call_tool_result_map(other, has_output_schema)),
    }
}

fn into_call_tool_result_map(output: ToolOutput, has_output_schema: bool) -> Map<String, Value> {
    match output {
        ToolOutput::Result(mut map) => {
            if !matches!(map.get("content"), Some(Value::Array(_))) {
                map.insert("content".into(), Value::Array(Vec::new()));
            }
            map
        }
        ToolOutput::Value(value) => {
            let mut result = Map::with_capacity(3);
            if has_output_schema && !value.is_null() {
                let text = plain_text(&value);
                let structured = structured_content(value);
                result.insert("content".into(), Value::Array(vec![text_block(text)]));
                result.insert("structuredContent".into(), Value::Object(structured));
            } else {
                let content = match value {
                    Value::Null => Vec::new(),
                    other => vec![text_block(into_plain_text(other))],
                };
                result.insert("content".into(), Value::Array(content));
            }
            result
        }
    }
}

/// A tool error result: `isError: true` and the message as text.
pub(crate) fn error_result(message: &str) -> Map<String, Value> {
    let mut result = Map::with_capacity(2);
    result.insert(
        "content".into(),
        Value::Array(vec![text_block(message.to_owned())]),
    );
    result.insert("isError".into(), Value::Bool(true));
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_becomes_text() {
        let r = into_call_tool_result(ToolOutput::text("hi"), false);
        assert_eq!(r, ResultObject::Text("hi".into()));
        assert_eq!(
            Value::Object(r.into_map()),
            json!({"content": [{"type": "text", "text": "hi"}]})
        );
    }

    #[test]
    fn integer_with_output_schema_is_wrapped_and_rendered_plainly() {
        let r = into_call_tool_result(ToolOutput::Value(json!(5)), true);
        assert_eq!(
            Value::Object(r.into_map()),
            json!({"content": [{"type": "text", "text": "5"}], "structuredContent": {"result": 5}})
        );
    }

    #[test]
    fn object_with_output_schema_is_structured() {
        let r = into_call_tool_result(ToolOutput::Value(json!({"a": 1})), true);
        assert_eq!(
            Value::Object(r.into_map()),
            json!({"content": [{"type": "text", "text": "{\"a\":1}"}], "structuredContent": {"a": 1}})
        );
    }

    #[test]
    fn null_is_empty_content() {
        let r = into_call_tool_result(ToolOutput::Value(Value::Null), false);
        assert_eq!(Value::Object(r.into_map()), json!({"content": []}));
    }

    #[test]
    fn explicit_result_gets_content_array() {
        let mut m = Map::new();
        m.insert("isError".into(), Value::Bool(true));
        let r = into_call_tool_result(ToolOutput::Result(m), false);
        assert_eq!(
            Value::Object(r.into_map()),
            json!({"isError": true, "content": []})
        );
    }
}
