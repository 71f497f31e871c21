//! A mount's copy of an upstream's lists in the server's registry: each
//! tool, prompt, resource and template the upstream lists is registered
//! under its downstream name with a handler that forwards to the upstream,
//! and kept in step as the upstream announces changes.
//!
//! Registering goes through the server's one `add_*`/`remove_*` path, so
//! a downstream listener hears of the change as of any other; an entry
//! whose upstream definition did not change is left alone (no change to
//! announce). An upstream item the server refuses (a schema it cannot
//! compile, a `$ref` to the network) is left out with a warning: one bad
//! tool does not hide the others.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::forward::{self, Upstream};
use super::names::Prefix;
use crate::Error;
use crate::client::{ListKind, Skill, SkillResources};
use crate::protocol::skills::{SKILL_MD, SKILLS_EXTENSION};
use crate::protocol::tasks::TASKS_EXTENSION;
use crate::protocol::{Prompt, Resource, ResourceTemplate, ServerCapabilities, Tool, methods};
use crate::rpc::lock_unpoisoned;
use crate::server::registry::{Entry, PromptEntry, ResourceEntry, SkillEntry, TemplateEntry};
use crate::server::{
    CompletionHandler, CompletionOutput, HandlerError, PromptOutput, RequestContext,
    ResourceHandler, ResourceOutput, ResourceRequest, Server, TaskStart, TaskSupport, ToolOutput,
    ToolTaskOptions, WeakServer,
};

/// What a mount has registered: per kind, downstream key to the upstream
/// definition it was made from.
#[derive(Default)]
struct Registered {
    tools: HashMap<String, Value>,
    prompts: HashMap<String, Value>,
    resources: HashMap<String, Value>,
    templates: HashMap<String, Value>,
    /// By the downstream `SKILL.md` URI.
    skills: HashMap<String, Value>,
}

impl Registered {
    fn of(&mut self, kind: ListKind) -> &mut HashMap<String, Value> {
        match kind {
            ListKind::Tools => &mut self.tools,
            ListKind::Prompts => &mut self.prompts,
            ListKind::Resources => &mut self.resources,
            ListKind::ResourceTemplates => &mut self.templates,
            ListKind::Skills => &mut self.skills,
        }
    }
}

/// What an upstream offers beyond its lists, as its discovery declares.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Offers {
    pub(crate) completions: bool,
    pub(crate) tasks: bool,
    pub(crate) skills: bool,
}

impl From<&ServerCapabilities> for Offers {
    fn from(caps: &ServerCapabilities) -> Offers {
        let extension = |id: &str| caps.extensions.as_ref().is_some_and(|e| e.contains_key(id));
        Offers {
            completions: caps.completions.is_some(),
            tasks: extension(TASKS_EXTENSION),
            skills: extension(SKILLS_EXTENSION),
        }
    }
}

pub(crate) struct Mirror {
    /// Weak: the mount's follow task holds the mirror, and must not keep a
    /// dropped server alive.
    pub(crate) server: WeakServer,
    pub(crate) upstream: Upstream,
    pub(crate) prefix: Prefix,
    pub(crate) offers: Offers,
    registered: Mutex<Registered>,
}

impl Mirror {
    pub(crate) fn new(
        server: &Server,
        upstream: Upstream,
        prefix: Prefix,
        offers: Offers,
    ) -> Mirror {
        Mirror {
            server: server.downgrade(),
            upstream,
            prefix,
            offers,
            registered: Mutex::new(Registered::default()),
        }
    }

    /// Brings the server's copy of one upstream list up to date.
    pub(crate) async fn sync(self: &Arc<Self>, kind: ListKind) -> Result<(), Error> {
        let Some(server) = self.server.upgrade() else {
            return Ok(());
        };
        let client = &self.upstream.client;
        let items: Vec<(String, Value)> = match kind {
            ListKind::Tools => keyed(client.list_all_tools().await?, |t: &Tool| t.name.clone()),
            ListKind::Prompts => keyed(client.list_all_prompts().await?, |p: &Prompt| {
                p.name.clone()
            }),
            ListKind::Resources => keyed(client.list_all_resources().await?, |r: &Resource| {
                r.uri.clone()
            }),
            ListKind::ResourceTemplates => keyed(
                client.list_all_resource_templates().await?,
                |t: &ResourceTemplate| t.uri_template.clone(),
            ),
            ListKind::Skills if self.offers.skills => {
                keyed(client.list_skills().await?, |s: &Skill| s.uri.clone())
            }
            ListKind::Skills => return Ok(()),
        };
        let mut wanted = HashMap::with_capacity(items.len());
        for (upstream_key, definition) in items {
            // An upstream's skill files are its skills' (published with
            // their entries), not resources of their own.
            if self.offers.skills
                && matches!(kind, ListKind::Resources | ListKind::ResourceTemplates)
                && upstream_key.starts_with(crate::protocol::skills::SKILL_SCHEME)
            {
                continue;
            }
            let key = match kind {
                ListKind::Tools | ListKind::Prompts => self.prefix.name(&upstream_key),
                _ => self.prefix.uri(&upstream_key),
            };
            let unchanged = lock_unpoisoned(&self.registered)
                .of(kind)
                .get(&key)
                .is_some_and(|old| *old == definition);
            if !unchanged
                && let Err(error) = self.register(&server, kind, &upstream_key, &definition)
            {
                tracing::warn!(
                    upstream = %self.upstream.label, item = %upstream_key, %error,
                    "upstream item left out"
                );
                continue;
            }
            wanted.insert(key, definition);
        }
        let gone: Vec<String> = {
            let mut registered = lock_unpoisoned(&self.registered);
            let list = registered.of(kind);
            let gone = list
                .keys()
                .filter(|k| !wanted.contains_key(*k))
                .cloned()
                .collect();
            *list = wanted;
            gone
        };
        for key in gone {
            match kind {
                ListKind::Tools => server.remove_tool(&key),
                ListKind::Prompts => server.remove_prompt(&key),
                ListKind::Resources => server.remove_resource(&key),
                ListKind::ResourceTemplates => server.remove_resource_template(&key),
                ListKind::Skills => {
                    if let Some(root) = skill_root(&key) {
                        server.remove_resource_template(&dynamic_files(root));
                    }
                    server.remove_skill(&key)
                }
            };
        }
        Ok(())
    }

    /// The upstream URIs of the resources mirrored now.
    pub(crate) fn resource_uris(&self) -> Vec<String> {
        lock_unpoisoned(&self.registered)
            .resources
            .keys()
            .filter_map(|uri| self.prefix.upstream_uri(uri))
            .collect()
    }

    /// Takes every mirrored item out of the server.
    pub(crate) fn clear(&self) {
        let registered = std::mem::take(&mut *lock_unpoisoned(&self.registered));
        let Some(server) = self.server.upgrade() else {
            return;
        };
        for name in registered.tools.keys() {
            server.remove_tool(name);
        }
        for name in registered.prompts.keys() {
            server.remove_prompt(name);
        }
        for uri in registered.resources.keys() {
            server.remove_resource(uri);
        }
        for template in registered.templates.keys() {
            server.remove_resource_template(template);
        }
        for uri in registered.skills.keys() {
            if let Some(root) = skill_root(uri) {
                server.remove_resource_template(&dynamic_files(root));
            }
            server.remove_skill(uri);
        }
    }

    fn register(
        self: &Arc<Self>,
        server: &Server,
        kind: ListKind,
        upstream_key: &str,
        definition: &Value,
    ) -> Result<(), Error> {
        let upstream = self.upstream.clone();
        let prefix = self.prefix.clone();
        let name = upstream_key.to_owned();
        match kind {
            ListKind::Tools => {
                let mut tool: Tool = serde_json::from_value(definition.clone())?;
                tool.name = prefix.name(&tool.name);
                if self.offers.tasks {
                    // Whether a call becomes a task is the upstream's to
                    // say, per call: the handler makes the downstream call
                    // one when the upstream's did.
                    let task = ToolTaskOptions {
                        support: TaskSupport::Optional,
                        start: TaskStart::ByHandler,
                    };
                    return server.add_tool_with(tool, task, move |ctx, arguments| {
                        call_as_upstream_decides(upstream.clone(), name.clone(), ctx, arguments)
                    });
                }
                server.add_tool(tool, move |ctx: RequestContext, arguments: Value| {
                    let upstream = upstream.clone();
                    let name = name.clone();
                    async move {
                        let mut params = Map::new();
                        params.insert("name".into(), Value::from(name));
                        params.insert("arguments".into(), arguments);
                        forward::send(&upstream, &ctx, methods::TOOLS_CALL, params)
                            .await
                            .map(ToolOutput::Result)
                    }
                })
            }
            ListKind::Prompts => {
                let mut prompt: Prompt = serde_json::from_value(definition.clone())?;
                prompt.name = prefix.name(&prompt.name);
                let completion = self.offers.completions.then(|| {
                    complete(
                        upstream.clone(),
                        prefix.clone(),
                        json!({"type": "ref/prompt", "name": name}),
                    )
                });
                let get = move |ctx: RequestContext, arguments: Map<String, Value>| {
                    let upstream = upstream.clone();
                    let name = name.clone();
                    async move {
                        let mut params = Map::new();
                        params.insert("name".into(), Value::from(name));
                        params.insert("arguments".into(), Value::Object(arguments));
                        forward::send(&upstream, &ctx, methods::PROMPTS_GET, params)
                            .await
                            .map(PromptOutput::Result)
                    }
                };
                let mut entry = PromptEntry::new(prompt, Arc::new(get))?;
                entry.completion = completion;
                server.register(Entry::Prompt(Arc::new(entry)));
                Ok(())
            }
            ListKind::Resources => {
                let mut resource: Resource = serde_json::from_value(definition.clone())?;
                resource.uri = prefix.uri(&resource.uri);
                server.add_resource(resource, read_upstream(upstream, prefix))
            }
            ListKind::ResourceTemplates => {
                let mut template: ResourceTemplate = serde_json::from_value(definition.clone())?;
                template.uri_template = prefix.uri(&template.uri_template);
                let completion = self.offers.completions.then(|| {
                    complete(
                        upstream.clone(),
                        prefix.clone(),
                        json!({"type": "ref/resource", "uri": name}),
                    )
                });
                let mut entry =
                    TemplateEntry::new(template, Arc::new(read_upstream(upstream, prefix)))?;
                entry.completion = completion;
                server.register(Entry::Template(Arc::new(entry)));
                Ok(())
            }
            ListKind::Skills => self.register_skill(server, definition),
        }
    }

    /// Publishes an upstream skill under the prefix: its entry as the
    /// upstream lists it (digests and sizes kept, so a host checks the
    /// bytes it reads against what the upstream vouched for), its files as
    /// resources read through. A `"dynamic"` skill lists no files: its
    /// `SKILL.md` and a template for the rest are read through.
    fn register_skill(&self, server: &Server, definition: &Value) -> Result<(), Error> {
        let skill: Skill = serde_json::from_value(definition.clone())?;
        let uri = self.prefix.uri(&skill.uri);
        let Some(root) = skill_root(&uri).map(str::to_owned) else {
            return Err(Error::InvalidDefinition(format!(
                "skill {} does not end in /{SKILL_MD}",
                skill.uri
            )));
        };
        let description = skill
            .frontmatter
            .get("description")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let read: Arc<dyn ResourceHandler> =
            Arc::new(read_upstream(self.upstream.clone(), self.prefix.clone()));
        let entry = |uri: &str, file: &str, size: Option<u64>| {
            let name = if file == SKILL_MD {
                skill.name().to_owned()
            } else {
                file.rsplit('/').next().unwrap_or(file).to_owned()
            };
            let mut resource = Resource::new(uri.to_owned(), name);
            if file == SKILL_MD {
                resource.description = description.clone();
            }
            resource.size = size;
            ResourceEntry::new(resource, read.clone())
        };
        let mut listing = definition.clone();
        listing["uri"] = Value::from(uri.clone());
        let mut files = std::collections::BTreeSet::new();
        let mut entries = Vec::new();
        match &skill.resources {
            SkillResources::Files(listed) => {
                let mut renamed = Vec::with_capacity(listed.len());
                for file in listed {
                    let downstream = self.prefix.uri(&file.uri);
                    let Some(path) = downstream
                        .strip_prefix(root.as_str())
                        .and_then(|p| p.strip_prefix('/'))
                    else {
                        return Err(Error::InvalidDefinition(format!(
                            "skill {} lists {}, which lies outside it",
                            skill.uri, file.uri
                        )));
                    };
                    entries.push(entry(&downstream, path, Some(file.size))?);
                    files.insert(path.to_owned());
                    renamed
                        .push(json!({"uri": downstream, "digest": file.digest, "size": file.size}));
                }
                listing["resources"] = Value::Array(renamed);
            }
            SkillResources::Dynamic(_) => {
                entries.push(entry(&uri, SKILL_MD, None)?);
                files.insert(SKILL_MD.to_owned());
                let template = ResourceTemplate::new(dynamic_files(&root), skill.name());
                server.register(Entry::Template(Arc::new(TemplateEntry::new(
                    template,
                    read.clone(),
                )?)));
            }
        }
        server.install_skill(
            uri,
            SkillEntry {
                root,
                listing,
                files,
            },
            entries,
        );
        Ok(())
    }
}

/// A skill's root: its `SKILL.md` URI without `/SKILL.md`.
fn skill_root(skill_md_uri: &str) -> Option<&str> {
    skill_md_uri.strip_suffix(SKILL_MD)?.strip_suffix('/')
}

/// The template a dynamic skill's other files are read through.
fn dynamic_files(root: &str) -> String {
    format!("{root}/{{+path}}")
}

/// A mirrored tool's call when the upstream offers tasks: started upstream
/// with the tasks extension declared (the mount follows an upstream task
/// whatever its client declared); when the upstream answers with a task,
/// this call becomes one too for a client that can poll, and the upstream's
/// task is followed to its end, its questions passed on to the client.
async fn call_as_upstream_decides(
    upstream: Upstream,
    name: String,
    ctx: RequestContext,
    arguments: Value,
) -> Result<ToolOutput, HandlerError> {
    let mut options = forward::call_options(&ctx);
    if let Some(capabilities) = options.capabilities.as_mut()
        && let Value::Object(extensions) = capabilities
            .entry("extensions")
            .or_insert_with(|| Value::Object(Map::new()))
    {
        extensions
            .entry(TASKS_EXTENSION)
            .or_insert_with(|| Value::Object(Map::new()));
    }
    let task = upstream
        .client
        .start_tool_task(&name, arguments, &options)
        .await
        .map_err(|e| upstream.failed(&e))?;
    if task.id().is_some() {
        ctx.start_task().await?;
    }
    let result = task
        .result_with(&options)
        .await
        .map_err(|e| upstream.failed(&e))?;
    match serde_json::to_value(result) {
        Ok(Value::Object(mut result)) => {
            result.remove("resultType");
            Ok(ToolOutput::Result(result))
        }
        _ => Err(upstream.failed(&Error::Protocol(
            "a tool result that is not an object".into(),
        ))),
    }
}

/// A read handler for a mirrored resource or template: reads the upstream
/// URI and names the downstream one in the contents.
fn read_upstream(
    upstream: Upstream,
    prefix: Prefix,
) -> impl Fn(RequestContext, ResourceRequest) -> crate::BoxFuture<Result<ResourceOutput, HandlerError>>
+ Send
+ Sync
+ 'static {
    move |ctx: RequestContext, request: ResourceRequest| {
        let upstream = upstream.clone();
        let prefix = prefix.clone();
        Box::pin(async move {
            let Some(uri) = prefix.upstream_uri(&request.uri) else {
                return Err(HandlerError::Protocol(crate::McpError::invalid_params(
                    format!("{} is not a resource of {}", request.uri, upstream.label),
                )));
            };
            let mut params = Map::new();
            params.insert("uri".into(), Value::from(uri));
            let mut result =
                forward::send(&upstream, &ctx, methods::RESOURCES_READ, params).await?;
            let mut contents = match result.remove("contents") {
                Some(Value::Array(contents)) => contents,
                _ => Vec::new(),
            };
            for content in &mut contents {
                if let Some(Value::String(uri)) = content.get_mut("uri") {
                    *uri = prefix.uri(uri);
                }
            }
            Ok(ResourceOutput::Contents(contents))
        })
    }
}

/// Completions of one mirrored prompt or template, asked of the upstream
/// under its own reference. `reference` is the upstream's; a `ref/resource`
/// naming a URI its template matches keeps that URI, in the upstream's
/// terms.
fn complete(upstream: Upstream, prefix: Prefix, reference: Value) -> Arc<dyn CompletionHandler> {
    Arc::new(move |ctx: RequestContext, params: Value| {
        let upstream = upstream.clone();
        let mut reference = reference.clone();
        let asked = params["ref"]["uri"]
            .as_str()
            .and_then(|uri| prefix.upstream_uri(uri));
        Box::pin(async move {
            let Value::Object(mut params) = params else {
                return Ok(CompletionOutput::default());
            };
            if let Some(uri) = asked {
                reference["uri"] = Value::from(uri);
            }
            params.insert("ref".into(), reference);
            let result =
                forward::send(&upstream, &ctx, methods::COMPLETION_COMPLETE, params).await?;
            let completion = result.get("completion").cloned().unwrap_or(Value::Null);
            Ok(CompletionOutput {
                values: completion
                    .get("values")
                    .and_then(Value::as_array)
                    .map(|values| {
                        values
                            .iter()
                            .filter_map(|v| v.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default(),
                total: completion.get("total").and_then(Value::as_u64),
                has_more: completion.get("hasMore").and_then(Value::as_bool),
            })
        }) as crate::BoxFuture<Result<CompletionOutput, HandlerError>>
    })
}

/// Items with their keys, as JSON (what a change is detected on).
fn keyed<T: serde::Serialize>(items: Vec<T>, key: impl Fn(&T) -> String) -> Vec<(String, Value)> {
    items
        .into_iter()
        .filter_map(|item| Some((key(&item), serde_json::to_value(&item).ok()?)))
        .collect()
}
