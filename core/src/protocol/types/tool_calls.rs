//! `tools/call`: its parameters and result. Apart from the tool
//! definitions (tools.rs) because the parameters carry answers to input
//! requests (input.rs), and sampling requests (sampling.rs, which input.rs
//! uses) carry tool definitions.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::JsonObject;
use super::content::ContentBlock;
use super::input::InputResponses;
use super::meta_objects::{RequestMetaObject, ResultMetaObject};
use super::results::ResultType;
use super::serde_util;

/// Parameters of `tools/call` (schema: `CallToolRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// Request metadata (protocol version, client capabilities...).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// Name of the tool.
    pub name: String,
    /// Arguments for the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Answers to the input requests of an earlier `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state echoed from an earlier `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// The result of `tools/call` (schema: `CallToolResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// How to read the result.
    #[serde(default)]
    pub result_type: ResultType,
    /// Unstructured result content.
    pub content: Vec<ContentBlock>,
    /// Structured result, matching the tool's output schema if it has one.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::present"
    )]
    pub structured_content: Option<Value>,
    /// Whether the tool call failed (a tool-level error the model can see).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
}

impl CallToolResult {
    /// A complete result with the given content blocks.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            result_type: ResultType::Complete,
            content,
            structured_content: None,
            is_error: None,
            meta: None,
        }
    }

    /// A complete result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult::new(vec![ContentBlock::text(text)])
    }

    /// A tool-level error (`isError: true`) with one text block.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            is_error: Some(true),
            ..CallToolResult::text(message)
        }
    }

    /// A result with structured content, plus its JSON text as a text block
    /// for clients that do not read `structuredContent`.
    pub fn structured(value: Value) -> Self {
        CallToolResult {
            structured_content: Some(value.clone()),
            ..CallToolResult::text(value.to_string())
        }
    }
}

/// The text of a result's `content` (a tool result, a resource's or a
/// sampling answer's blocks): the `text` of each text block, one per line;
/// `""` when there is none. Other blocks (images, resources) are skipped.
/// Bindings use it for their "text of a result" conveniences, so every
/// language joins the same way.
///
/// ```
/// use serde_json::json;
/// let result = json!({"content": [
///     {"type": "text", "text": "a"},
///     {"type": "image", "data": "", "mimeType": "image/png"},
///     {"type": "text", "text": "b"}
/// ]});
/// assert_eq!(ferromcp::protocol::content_text(&result), "a\nb");
/// ```
pub fn content_text(result: &Value) -> String {
    let blocks = result.get("content").and_then(Value::as_array);
    let texts = blocks.into_iter().flatten().filter_map(|block| {
        (block.get("type").and_then(Value::as_str) == Some("text"))
            .then(|| block.get("text").and_then(Value::as_str))
            .flatten()
    });
    texts.collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_tool_result_constructors() {
        assert_eq!(
            serde_json::to_value(CallToolResult::text("hi")).unwrap(),
            json!({"resultType": "complete", "content": [{"type": "text", "text": "hi"}]})
        );
        assert_eq!(
            serde_json::to_value(CallToolResult::error("bad")).unwrap(),
            json!({"resultType": "complete", "content": [{"type": "text", "text": "bad"}], "isError": true})
        );
        let structured = CallToolResult::structured(json!({"n": 1}));
        assert_eq!(structured.structured_content, Some(json!({"n": 1})));
        assert_eq!(structured.content[0].as_text(), Some(r#"{"n":1}"#));
    }

    #[test]
    fn null_structured_content_round_trips() {
        let v = json!({"resultType": "complete", "content": [], "structuredContent": null});
        let r: CallToolResult = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(serde_json::to_value(r).unwrap(), v);
    }
}
