//! What a server offers: tools, resources, resource templates, prompts and a
//! completion provider, each in registration order with its listing entry
//! serialised once.

use indexmap::IndexMap;
use serde_json::{Map, Value};
use std::sync::Arc;

use super::handler::{CompletionHandler, PromptHandler, ResourceHandler, ToolHandler};
use super::uri_template::UriTemplate;
use super::validation::CompiledSchema;
use crate::Error;
use crate::protocol::Tool;
/// The `x-mcp-header` grammar now lives in `protocol/`; re-exported so the
/// server side keeps its paths.
pub(crate) use crate::protocol::mcp_headers::{HeaderParam, header_params};

pub(crate) struct ToolEntry {
    pub(crate) tool: Tool,
    /// The tool as it appears in `tools/list`, serialised once.
    pub(crate) listing: Value,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) header_params: Vec<HeaderParam>,
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
        let invalid =
            |what: String| Error::InvalidDefinition(format!("tool {:?}: {what}", tool.name));
        if !is_valid_tool_name(&tool.name) {
            return Err(Error::InvalidDefinition(format!(
                "tool name {:?} must be 1-64 characters of A-Z a-z 0-9 _ . / -",
                tool.name
            )));
        }
        if tool.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(invalid("inputSchema must have \"type\": \"object\"".into()));
        }
        let input = CompiledSchema::compile(&tool.input_schema)
            .map_err(|e| invalid(format!("invalid inputSchema: {e}")))?;
        let output = match &tool.output_schema {
            Some(schema) => Some(
                CompiledSchema::compile(schema)
                    .map_err(|e| invalid(format!("invalid outputSchema: {e}")))?,
            ),
            None => None,
        };
        let header_params = header_params(&tool.input_schema).map_err(invalid)?;
        let listing = serde_json::to_value(&tool)?;
        Ok(ToolEntry {
            tool,
            listing,
            input,
            output,
            header_params,
            handler,
        })
    }
}

pub(crate) struct ResourceEntry {
    pub(crate) listing: Value,
    pub(crate) mime_type: Option<String>,
    pub(crate) handler: Arc<dyn ResourceHandler>,
}

pub(crate) struct TemplateEntry {
    pub(crate) listing: Value,
    pub(crate) template: UriTemplate,
    pub(crate) mime_type: Option<String>,
    pub(crate) handler: Arc<dyn ResourceHandler>,
}

pub(crate) struct PromptEntry {
    pub(crate) listing: Value,
    /// Names of the arguments the prompt requires.
    pub(crate) required: Vec<String>,
    pub(crate) handler: Arc<dyn PromptHandler>,
}

/// Which primitives this server offers (and so declares as capabilities):
/// a kind is offered once anything of it was registered, even if it was
/// removed again later, so the capability does not flicker.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Offered {
    pub(crate) tools: bool,
    pub(crate) resources: bool,
    pub(crate) prompts: bool,
}

#[derive(Default)]
pub(crate) struct Registry {
    pub(crate) tools: IndexMap<String, Arc<ToolEntry>>,
    pub(crate) resources: IndexMap<String, Arc<ResourceEntry>>,
    pub(crate) templates: IndexMap<String, Arc<TemplateEntry>>,
    pub(crate) prompts: IndexMap<String, Arc<PromptEntry>>,
    pub(crate) completion: Option<Arc<dyn CompletionHandler>>,
    pub(crate) offered: Offered,
}

fn page<'a, T: 'a>(
    items: impl Iterator<Item = &'a Arc<T>>,
    len: usize,
    offset: usize,
    page_size: usize,
    listing: impl Fn(&T) -> &Value,
) -> (Vec<Value>, bool) {
    let page: Vec<Value> = items
        .skip(offset)
        .take(page_size)
        .map(|item| listing(item).clone())
        .collect();
    let more = offset + page.len() < len;
    (page, more)
}

/// The handler a URI resolved to.
pub(crate) struct ResolvedResource {
    pub(crate) handler: Arc<dyn ResourceHandler>,
    pub(crate) mime_type: Option<String>,
    /// Template variables (empty for a fixed resource).
    pub(crate) variables: Map<String, Value>,
}

/// The lists `*/list` requests page through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ListKind {
    Tools,
    Resources,
    Templates,
    Prompts,
}

impl Registry {
    /// One page of the listing of `kind` starting at `offset`, and whether
    /// more follow.
    pub(crate) fn page(
        &self,
        kind: ListKind,
        offset: usize,
        page_size: usize,
    ) -> (Vec<Value>, bool) {
        match kind {
            ListKind::Tools => page(
                self.tools.values(),
                self.tools.len(),
                offset,
                page_size,
                |t| &t.listing,
            ),
            ListKind::Resources => page(
                self.resources.values(),
                self.resources.len(),
                offset,
                page_size,
                |r| &r.listing,
            ),
            ListKind::Templates => page(
                self.templates.values(),
                self.templates.len(),
                offset,
                page_size,
                |t| &t.listing,
            ),
            ListKind::Prompts => page(
                self.prompts.values(),
                self.prompts.len(),
                offset,
                page_size,
                |p| &p.listing,
            ),
        }
    }

    /// The handler for a URI: an exact resource first, then the first
    /// template (in registration order) that matches.
    pub(crate) fn resolve_resource(&self, uri: &str) -> Option<ResolvedResource> {
        if let Some(r) = self.resources.get(uri) {
            return Some(ResolvedResource {
                handler: r.handler.clone(),
                mime_type: r.mime_type.clone(),
                variables: Map::new(),
            });
        }
        self.templates.values().find_map(|t| {
            t.template.matches(uri).map(|variables| ResolvedResource {
                handler: t.handler.clone(),
                mime_type: t.mime_type.clone(),
                variables,
            })
        })
    }
}
