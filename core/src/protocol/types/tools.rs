//! Tools: definitions and `tools/list` (`tools/call` is in tool_calls.rs).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{Icon, MetaObject};
use super::meta_objects::ResultMetaObject;
use super::results::{CacheScope, ResultType};

/// A tool the server offers (schema: `Tool`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name, unique per server.
    pub name: String,
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments.
    pub input_schema: Map<String, Value>,
    /// JSON Schema of `structuredContent`, if the tool returns structured output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl Tool {
    /// A tool with a name and an input schema (a JSON object).
    pub fn new(name: impl Into<String>, input_schema: Value) -> Tool {
        let input_schema = match input_schema {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, description: impl Into<String>) -> Tool {
        self.description = Some(description.into());
        self
    }

    /// Sets the output schema.
    pub fn with_output_schema(mut self, schema: Value) -> Tool {
        if let Value::Object(map) = schema {
            self.output_schema = Some(map);
        }
        self
    }

    /// Sets the title.
    pub fn with_title(mut self, title: impl Into<String>) -> Tool {
        self.title = Some(title.into());
        self
    }

    /// Sets the behaviour hints.
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Tool {
        self.annotations = Some(annotations);
        self
    }
}

/// Hints about a tool's behaviour; untrusted unless the server is (schema: `ToolAnnotations`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// The result of `tools/list` (schema: `ListToolsResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// How to read the result.
    #[serde(default)]
    pub result_type: ResultType,
    /// The tools on this page.
    pub tools: Vec<Tool>,
    /// Cursor of the next page, if there may be more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long (ms) the client may cache the result.
    /// Absent from earlier revisions\' results: read as 0 (stale at once).
    #[serde(default)]
    pub ttl_ms: u64,
    /// Who may cache the result.
    /// Absent from earlier revisions\' results: read as `private`.
    #[serde(default)]
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
}

impl ListToolsResult {
    /// One complete page of tools with the given caching hints.
    pub fn new(tools: Vec<Tool>, ttl_ms: u64, cache_scope: CacheScope) -> Self {
        ListToolsResult {
            result_type: ResultType::Complete,
            tools,
            next_cursor: None,
            ttl_ms,
            cache_scope,
            meta: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_keeps_its_builder_api() {
        let t = Tool::new("echo", json!({"type": "object"}))
            .with_description("Echoes")
            .with_output_schema(json!({"type": "object"}));
        assert_eq!(t.input_schema["type"], "object");
        assert_eq!(t.description.as_deref(), Some("Echoes"));
        assert!(t.output_schema.is_some());
        assert_eq!(
            serde_json::to_value(&t).unwrap(),
            json!({"name": "echo", "description": "Echoes", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}})
        );
    }
}
