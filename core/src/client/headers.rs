//! Client side of `x-mcp-header` (spec: streamable-http.mdx, "Custom Headers
//! from Tool Parameters"): tools whose annotations are invalid are dropped
//! from `tools/list`, and annotated arguments are mirrored into
//! `Mcp-Param-{Name}` headers on `tools/call`.

use crate::rpc::{read_unpoisoned, write_unpoisoned};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::RwLock;

use crate::protocol::mcp_headers::{
    HeaderParam, encode_header_value, header_params, param_header_text,
};

/// Header parameters of every tool seen in a `tools/list` page.
#[derive(Default)]
pub(crate) struct ToolHeaders {
    by_tool: RwLock<HashMap<String, Vec<HeaderParam>>>,
}

impl ToolHeaders {
    /// Drops tools with invalid annotations from one `tools/list` result
    /// (logging why) and remembers the header parameters of the others.
    pub(crate) fn filter_listing(&self, result: &mut Value) {
        let Some(Value::Array(tools)) = result.get_mut("tools") else {
            return;
        };
        let mut known = write_unpoisoned(&self.by_tool);
        tools.retain(|tool| {
            let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
            let schema = tool.get("inputSchema").and_then(Value::as_object);
            match schema.map(header_params).unwrap_or(Ok(Vec::new())) {
                Ok(params) => {
                    known.insert(name.to_owned(), params);
                    true
                }
                Err(why) => {
                    tracing::warn!(tool = %name, reason = %why, "ignoring tool with an invalid x-mcp-header annotation");
                    known.remove(name);
                    false
                }
            }
        });
    }

    /// Whether a tool's definition has been seen.
    pub(crate) fn knows(&self, tool: &str) -> bool {
        read_unpoisoned(&self.by_tool).contains_key(tool)
    }

    /// The `Mcp-Param-*` headers for a call of `tool` with `arguments`.
    pub(crate) fn headers_for(
        &self,
        tool: &str,
        arguments: Option<&Value>,
    ) -> Vec<(String, String)> {
        let known = read_unpoisoned(&self.by_tool);
        let Some(params) = known.get(tool) else {
            return Vec::new();
        };
        params
            .iter()
            .filter_map(|p| {
                // null or a structured value: nothing to mirror
                let text = param_header_text(p.argument(arguments)?)?;
                Some((format!("Mcp-Param-{}", p.name), encode_header_value(&text)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn drops_invalid_tools_and_mirrors_valid_params() {
        let headers = ToolHeaders::default();
        let mut listing = json!({"tools": [
            {"name": "ok", "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "n": {"type": "integer", "x-mcp-header": "N"},
                "flag": {"type": "boolean", "x-mcp-header": "Flag"},
                "q": {"type": "string"}
            }}},
            {"name": "bad", "inputSchema": {"type": "object", "properties": {
                "x": {"type": "string", "x-mcp-header": "has space"}
            }}}
        ]});
        headers.filter_listing(&mut listing);
        assert_eq!(listing["tools"].as_array().map(Vec::len), Some(1));
        let mut got = headers.headers_for(
            "ok",
            Some(&json!({"region": "Hello, 世界", "n": 42, "flag": false, "q": "x"})),
        );
        got.sort();
        assert_eq!(
            got,
            vec![
                ("Mcp-Param-Flag".to_string(), "false".to_string()),
                ("Mcp-Param-N".to_string(), "42".to_string()),
                (
                    "Mcp-Param-Region".to_string(),
                    "=?base64?SGVsbG8sIOS4lueVjA==?=".to_string()
                ),
            ]
        );
        assert!(
            headers
                .headers_for("ok", Some(&json!({"region": null})))
                .is_empty()
        );
    }
}
