//! What a server offers: tools, resources, resource templates, prompts and a
//! completion provider, each in registration order with its listing entry
//! serialised once.

use indexmap::IndexMap;
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::Arc;

use super::CacheHint;
use super::handler::{CompletionHandler, PromptHandler, ResourceHandler, ToolHandler};
use super::subscriptions::{Offered, ServerEvent};
use super::tasks::{TaskSupport, ToolTaskOptions};
use super::uri_template::UriTemplate;
use super::validation::CompiledSchema;
use super::visibility::VisibleItem;
use crate::Error;
use crate::protocol::mcp_headers::{HeaderParam, header_params};
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool};

pub(crate) struct ToolEntry {
    pub(crate) tool: Tool,
    /// The tool as it appears in `tools/list`, serialised once.
    pub(crate) listing: Value,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) header_params: Vec<HeaderParam>,
    pub(crate) handler: Arc<dyn ToolHandler>,
    /// Whether and when its calls become tasks.
    pub(crate) task: ToolTaskOptions,
}

/// A published skill, as the registry keeps it.
pub(crate) struct SkillEntry {
    /// `skill://<skill-path>` (no trailing slash): the skill's root
    /// directory resource.
    pub(crate) root: String,
    /// The entry `skills/list` and `skills/get` answer with, serialised once.
    pub(crate) listing: Value,
    /// The files' paths relative to the root, for directory reads.
    pub(crate) files: std::collections::BTreeSet<String>,
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
            task: ToolTaskOptions::default(),
        })
    }
}

pub(crate) struct ResourceEntry {
    pub(crate) uri: String,
    pub(crate) listing: Value,
    pub(crate) mime_type: Option<String>,
    pub(crate) handler: Arc<dyn ResourceHandler>,
    /// Caching hint of its `resources/read` results, instead of the
    /// server-wide one.
    pub(crate) cache: Option<CacheHint>,
}

impl ResourceEntry {
    pub(crate) fn new(
        resource: Resource,
        handler: Arc<dyn ResourceHandler>,
    ) -> Result<ResourceEntry, Error> {
        if resource.uri.is_empty() {
            return Err(Error::InvalidDefinition(
                "resource uri must not be empty".into(),
            ));
        }
        Ok(ResourceEntry {
            listing: serde_json::to_value(&resource)?,
            mime_type: resource.mime_type,
            uri: resource.uri,
            handler,
            cache: None,
        })
    }
}

pub(crate) struct TemplateEntry {
    pub(crate) listing: Value,
    pub(crate) template: UriTemplate,
    /// The template as registered, the key it is replaced or removed by.
    pub(crate) uri_template: String,
    pub(crate) mime_type: Option<String>,
    pub(crate) handler: Arc<dyn ResourceHandler>,
    /// Caching hint of the `resources/read` results it serves.
    pub(crate) cache: Option<CacheHint>,
    /// Completes its variables instead of the server's provider (a mount's
    /// template completes through its upstream).
    pub(crate) completion: Option<Arc<dyn CompletionHandler>>,
}

impl TemplateEntry {
    pub(crate) fn new(
        template: ResourceTemplate,
        handler: Arc<dyn ResourceHandler>,
    ) -> Result<TemplateEntry, Error> {
        let compiled =
            UriTemplate::parse(&template.uri_template).map_err(Error::InvalidDefinition)?;
        Ok(TemplateEntry {
            listing: serde_json::to_value(&template)?,
            template: compiled,
            mime_type: template.mime_type,
            uri_template: template.uri_template,
            handler,
            cache: None,
            completion: None,
        })
    }
}

pub(crate) struct PromptEntry {
    pub(crate) name: String,
    pub(crate) listing: Value,
    /// Names of the arguments the prompt requires.
    pub(crate) required: Vec<String>,
    pub(crate) handler: Arc<dyn PromptHandler>,
    /// Completes its arguments instead of the server's provider (a mount's
    /// prompt completes through its upstream).
    pub(crate) completion: Option<Arc<dyn CompletionHandler>>,
}

impl PromptEntry {
    pub(crate) fn new(
        prompt: Prompt,
        handler: Arc<dyn PromptHandler>,
    ) -> Result<PromptEntry, Error> {
        if prompt.name.is_empty() {
            return Err(Error::InvalidDefinition(
                "prompt name must not be empty".into(),
            ));
        }
        let required = prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true))
            .map(|a| a.name.clone())
            .collect();
        Ok(PromptEntry {
            listing: serde_json::to_value(&prompt)?,
            name: prompt.name,
            required,
            handler,
            completion: None,
        })
    }
}

/// One checked registration of any listed kind, ready for
/// [`Registry::insert`].
pub(crate) enum Entry {
    Tool(Arc<ToolEntry>),
    Resource(Arc<ResourceEntry>),
    Template(Arc<TemplateEntry>),
    Prompt(Arc<PromptEntry>),
}

/// Entries by name, URI or URI template, in registration order.
///
/// Hashed with foldhash rather than SipHash: the keys are the server's own
/// registrations, so a client's names, only ever looked up, cannot make
/// them collide; SipHash cost about 150 instructions per call.
pub(crate) type Keyed<T> = IndexMap<String, Arc<T>, foldhash::fast::RandomState>;

#[derive(Default)]
pub(crate) struct Registry {
    pub(crate) tools: Keyed<ToolEntry>,
    pub(crate) resources: Keyed<ResourceEntry>,
    pub(crate) templates: Keyed<TemplateEntry>,
    pub(crate) prompts: Keyed<PromptEntry>,
    pub(crate) completion: Option<Arc<dyn CompletionHandler>>,
    /// Who sees what (`Server::set_visibility`); none: everyone everything.
    pub(crate) visibility: Option<Arc<dyn super::visibility::VisibilityRule>>,
    pub(crate) offered: Offered,
    /// How many tools mirror arguments into `Mcp-Param-*` headers: while
    /// none does, a `tools/call` skips looking its tool up a second time
    /// for the header check.
    pub(crate) header_param_tools: usize,
    /// Scopes a bearer token needs per primitive (protected HTTP servers).
    pub(crate) scopes: super::auth::RequiredScopes,
    /// Published skills by their `SKILL.md` URI, in registration order
    /// (their files are in `resources`).
    pub(crate) skills: Keyed<SkillEntry>,
}

/// One page of a list: `offset` counts the items the caller sees (with
/// a visibility filter, the cursor is the caller's own position).
fn page<'a, T: 'a>(
    items: impl Iterator<Item = (&'a String, &'a Arc<T>)>,
    len: usize,
    offset: usize,
    page_size: usize,
    visible: Option<impl Fn(&str) -> bool>,
    listing: impl Fn(&T) -> &Value,
) -> (Vec<Value>, bool) {
    let Some(visible) = visible else {
        let page: Vec<Value> = items
            .skip(offset)
            .take(page_size)
            .map(|(_, item)| listing(item).clone())
            .collect();
        let more = offset + page.len() < len;
        return (page, more);
    };
    let mut shown = items
        .filter(|(key, _)| visible(key))
        .skip(offset)
        .map(|(_, item)| item);
    let page: Vec<Value> = shown
        .by_ref()
        .take(page_size)
        .map(|item| listing(item).clone())
        .collect();
    let more = shown.next().is_some();
    (page, more)
}

/// The handler a URI resolved to.
pub(crate) struct ResolvedResource {
    pub(crate) handler: Arc<dyn ResourceHandler>,
    pub(crate) mime_type: Option<String>,
    /// Template variables (empty for a fixed resource).
    pub(crate) variables: Map<String, Value>,
    /// The registration's own caching hint, if it has one.
    pub(crate) cache: Option<CacheHint>,
    /// The template that matched (`None`: a fixed resource), for the
    /// visibility rule.
    pub(crate) template: Option<String>,
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
    /// Adds an entry, replacing one with the same key (name, URI or URI
    /// template) in place so the listing order stays put; marks its kind
    /// offered and returns the change to announce.
    pub(crate) fn insert(&mut self, entry: Entry) -> ServerEvent {
        match entry {
            Entry::Tool(entry) => {
                let mirrors = !entry.header_params.is_empty();
                let task_capable = entry.task.support != TaskSupport::Forbidden;
                if let Some(old) = self.tools.insert(entry.tool.name.clone(), entry)
                    && !old.header_params.is_empty()
                {
                    self.header_param_tools -= 1;
                }
                self.header_param_tools += usize::from(mirrors);
                self.offered.tools = true;
                self.offered.tasks |= task_capable;
                ServerEvent::ToolsChanged
            }
            Entry::Resource(entry) => {
                self.resources.insert(entry.uri.clone(), entry);
                self.offered.resources = true;
                ServerEvent::ResourcesChanged
            }
            Entry::Template(entry) => {
                self.offered.completions |= entry.completion.is_some();
                self.templates.insert(entry.uri_template.clone(), entry);
                self.offered.resources = true;
                ServerEvent::ResourcesChanged
            }
            Entry::Prompt(entry) => {
                self.offered.completions |= entry.completion.is_some();
                self.prompts.insert(entry.name.clone(), entry);
                self.offered.prompts = true;
                ServerEvent::PromptsChanged
            }
        }
    }

    /// Removes the entry of `kind` with `key`; returns the change to
    /// announce if there was one. The kind stays offered (see [`Offered`]).
    pub(crate) fn remove(&mut self, kind: ListKind, key: &str) -> Option<ServerEvent> {
        // shift_remove keeps the listing order of the remaining entries
        let (removed, event) = match kind {
            ListKind::Tools => {
                let removed = self.tools.shift_remove(key);
                if removed
                    .as_ref()
                    .is_some_and(|t| !t.header_params.is_empty())
                {
                    self.header_param_tools -= 1;
                }
                (removed.is_some(), ServerEvent::ToolsChanged)
            }
            ListKind::Resources => (
                self.resources.shift_remove(key).is_some(),
                ServerEvent::ResourcesChanged,
            ),
            ListKind::Templates => (
                self.templates.shift_remove(key).is_some(),
                ServerEvent::ResourcesChanged,
            ),
            ListKind::Prompts => (
                self.prompts.shift_remove(key).is_some(),
                ServerEvent::PromptsChanged,
            ),
        };
        removed.then_some(event)
    }

    /// One page of the listing of `kind` starting at `offset`, and whether
    /// more follow.
    /// One page of a list; with `shown`, of the items whose key is in it
    /// (the caller's view: an item added since it was judged is not).
    pub(crate) fn page(
        &self,
        kind: ListKind,
        offset: usize,
        page_size: usize,
        shown: Option<&HashSet<String>>,
    ) -> (Vec<Value>, bool) {
        let visible = shown.map(|shown| |key: &str| shown.contains(key));
        match kind {
            ListKind::Tools => page(
                self.tools.iter(),
                self.tools.len(),
                offset,
                page_size,
                visible,
                |t| &t.listing,
            ),
            ListKind::Resources => page(
                self.resources.iter(),
                self.resources.len(),
                offset,
                page_size,
                visible,
                |r| &r.listing,
            ),
            ListKind::Templates => page(
                self.templates.iter(),
                self.templates.len(),
                offset,
                page_size,
                visible,
                |t| &t.listing,
            ),
            ListKind::Prompts => page(
                self.prompts.iter(),
                self.prompts.len(),
                offset,
                page_size,
                visible,
                |p| &p.listing,
            ),
        }
    }

    /// Every item of a list, to be judged by a visibility rule.
    pub(crate) fn items(&self, kind: ListKind) -> Vec<VisibleItem> {
        match kind {
            ListKind::Tools => self.tools.keys().cloned().map(VisibleItem::Tool).collect(),
            ListKind::Resources => self
                .resources
                .keys()
                .cloned()
                .map(VisibleItem::Resource)
                .collect(),
            ListKind::Templates => self
                .templates
                .keys()
                .cloned()
                .map(VisibleItem::ResourceTemplate)
                .collect(),
            ListKind::Prompts => self
                .prompts
                .keys()
                .cloned()
                .map(VisibleItem::Prompt)
                .collect(),
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
                cache: r.cache,
                template: None,
            });
        }
        self.templates.values().find_map(|t| {
            t.template.matches(uri).map(|variables| ResolvedResource {
                handler: t.handler.clone(),
                mime_type: t.mime_type.clone(),
                variables,
                cache: t.cache,
                template: Some(t.uri_template.clone()),
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resource(uri: &str) -> Entry {
        let handler = |_ctx, _req: super::super::handler::ResourceRequest| async move {
            Ok(super::super::handler::ResourceOutput::Text(String::new()))
        };
        Entry::Resource(Arc::new(
            ResourceEntry::new(Resource::new(uri, uri), Arc::new(handler)).unwrap(),
        ))
    }

    fn tool(name: &str, mirrored: bool) -> Entry {
        let handler = |_ctx, _args: Value| async move {
            Ok(super::super::handler::ToolOutput::text(String::new()))
        };
        let region = if mirrored {
            json!({"type": "string", "x-mcp-header": "Region"})
        } else {
            json!({"type": "string"})
        };
        let schema = json!({"type": "object", "properties": {"region": region}});
        Entry::Tool(Arc::new(
            ToolEntry::new(Tool::new(name, schema), Arc::new(handler)).unwrap(),
        ))
    }

    #[test]
    fn header_mirroring_tools_are_counted_through_replacements_and_removals() {
        let mut registry = Registry::default();
        registry.insert(tool("plain", false));
        assert_eq!(registry.header_param_tools, 0);
        registry.insert(tool("a", true));
        registry.insert(tool("b", true));
        assert_eq!(registry.header_param_tools, 2);
        // Replaced by a tool without headers, then by one with them again.
        registry.insert(tool("a", false));
        assert_eq!(registry.header_param_tools, 1);
        registry.insert(tool("a", true));
        registry.insert(tool("a", true));
        assert_eq!(registry.header_param_tools, 2);
        registry.remove(ListKind::Tools, "a");
        registry.remove(ListKind::Tools, "a");
        registry.remove(ListKind::Tools, "plain");
        assert_eq!(registry.header_param_tools, 1);
        registry.remove(ListKind::Tools, "b");
        assert_eq!(registry.header_param_tools, 0);
    }

    fn listed_uris(registry: &Registry) -> Vec<Value> {
        let (page, _) = registry.page(ListKind::Resources, 0, 10, None);
        page.iter().map(|r| r["uri"].clone()).collect()
    }

    #[test]
    fn insert_offers_the_kind_and_replaces_in_place() {
        let mut registry = Registry::default();
        assert!(!registry.offered.resources);
        assert_eq!(
            registry.insert(resource("a://1")),
            ServerEvent::ResourcesChanged
        );
        registry.insert(resource("a://2"));
        registry.insert(resource("a://1"));
        assert!(registry.offered.resources);
        assert!(!registry.offered.tools && !registry.offered.prompts);
        assert_eq!(listed_uris(&registry), [json!("a://1"), json!("a://2")]);
    }

    #[test]
    fn remove_announces_only_what_existed_and_keeps_the_offer() {
        let mut registry = Registry::default();
        registry.insert(resource("a://1"));
        registry.insert(resource("a://2"));
        assert_eq!(
            registry.remove(ListKind::Resources, "a://1"),
            Some(ServerEvent::ResourcesChanged)
        );
        assert_eq!(registry.remove(ListKind::Resources, "a://1"), None);
        assert_eq!(registry.remove(ListKind::Templates, "a://2"), None);
        assert!(registry.offered.resources);
        assert_eq!(listed_uris(&registry), [json!("a://2")]);
    }
}
