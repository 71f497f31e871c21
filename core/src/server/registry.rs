//! What a server offers: tools (for now), in registration order, each with
//! its compiled schemas and its pre-serialised listing entry.

use indexmap::IndexMap;
use serde_json::Value;
use std::sync::Arc;

use super::handler::ToolHandler;
use super::validation::CompiledSchema;
use crate::Error;
use crate::protocol::Tool;

pub(crate) struct ToolEntry {
    pub(crate) tool: Tool,
    /// The tool as it appears in `tools/list`, serialised once.
    pub(crate) listing: Value,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) handler: Arc<dyn ToolHandler>,
}

/// Tool names the spec recommends (SEP-986): 1–64 of `A-Za-z0-9_./-`.
pub(crate) fn is_valid_tool_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-'))
}

impl ToolEntry {
    pub(crate) fn new(tool: Tool, handler: Arc<dyn ToolHandler>) -> Result<ToolEntry, Error> {
        if !is_valid_tool_name(&tool.name) {
            return Err(Error::InvalidDefinition(format!(
                "tool name {:?} must be 1-64 characters of A-Z a-z 0-9 _ . / -",
                tool.name
            )));
        }
        if tool.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(Error::InvalidDefinition(format!(
                "tool {:?}: inputSchema must have \"type\": \"object\"",
                tool.name
            )));
        }
        let input = CompiledSchema::compile(&tool.input_schema).map_err(|e| {
            Error::InvalidDefinition(format!("tool {:?}: invalid inputSchema: {e}", tool.name))
        })?;
        let output = match &tool.output_schema {
            Some(schema) => Some(CompiledSchema::compile(schema).map_err(|e| {
                Error::InvalidDefinition(format!("tool {:?}: invalid outputSchema: {e}", tool.name))
            })?),
            None => None,
        };
        let listing = serde_json::to_value(&tool)?;
        Ok(ToolEntry {
            tool,
            listing,
            input,
            output,
            handler,
        })
    }
}

#[derive(Default)]
pub(crate) struct Registry {
    tools: IndexMap<String, Arc<ToolEntry>>,
}

impl Registry {
    pub(crate) fn insert_tool(&mut self, entry: ToolEntry) {
        self.tools.insert(entry.tool.name.clone(), Arc::new(entry));
    }

    pub(crate) fn remove_tool(&mut self, name: &str) -> bool {
        // shift_remove keeps the listing order of the remaining tools stable
        self.tools.shift_remove(name).is_some()
    }

    pub(crate) fn tool(&self, name: &str) -> Option<Arc<ToolEntry>> {
        self.tools.get(name).cloned()
    }

    pub(crate) fn tool_names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// One page of listings starting at `offset`, and whether more follow.
    pub(crate) fn tool_page(&self, offset: usize, page_size: usize) -> (Vec<Value>, bool) {
        let page: Vec<Value> = self
            .tools
            .values()
            .skip(offset)
            .take(page_size)
            .map(|t| t.listing.clone())
            .collect();
        let more = offset + page.len() < self.tools.len();
        (page, more)
    }
}
