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

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::forward::{self, Upstream};
use super::names::Prefix;
use crate::Error;
use crate::client::ListKind;
use crate::protocol::{Prompt, Resource, ResourceTemplate, Tool, methods};
use crate::rpc::lock_unpoisoned;
use crate::server::WeakServer;
use crate::server::{
    CompletionOutput, HandlerError, PromptOutput, RequestContext, ResourceOutput, ResourceRequest,
    Server, ToolOutput,
};

/// What a mount has registered: per kind, downstream key to the upstream
/// definition it was made from.
#[derive(Default)]
struct Registered {
    tools: HashMap<String, Value>,
    prompts: HashMap<String, Value>,
    resources: HashMap<String, Value>,
    templates: HashMap<String, Value>,
}

impl Registered {
    fn of(&mut self, kind: ListKind) -> &mut HashMap<String, Value> {
        match kind {
            ListKind::Tools => &mut self.tools,
            ListKind::Prompts => &mut self.prompts,
            ListKind::Resources => &mut self.resources,
            // Skills are not mirrored (yet): nothing is ever registered
            // under them.
            ListKind::ResourceTemplates | ListKind::Skills => &mut self.templates,
        }
    }
}

pub(crate) struct Mirror {
    /// Weak: the mount's follow task holds the mirror, and must not keep a
    /// dropped server alive.
    pub(crate) server: WeakServer,
    pub(crate) upstream: Upstream,
    pub(crate) prefix: Prefix,
    registered: Mutex<Registered>,
}

impl Mirror {
    pub(crate) fn new(server: &Server, upstream: Upstream, prefix: Prefix) -> Mirror {
        Mirror {
            server: server.downgrade(),
            upstream,
            prefix,
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
            ListKind::Skills => return Ok(()),
        };
        let mut wanted = HashMap::with_capacity(items.len());
        for (upstream_key, definition) in items {
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
                ListKind::Skills => false,
            };
        }
        Ok(())
    }

    /// The upstream URIs of the resources mirrored now.
    pub(crate) fn resource_uris(&self) -> Vec<String> {
        lock_unpoisoned(&self.registered)
            .resources
            .keys()
            .filter_map(|uri| self.prefix.upstream_uri(uri).map(str::to_owned))
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
                server.add_prompt(
                    prompt,
                    move |ctx: RequestContext, arguments: Map<String, Value>| {
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
                    },
                )
            }
            ListKind::Resources => {
                let mut resource: Resource = serde_json::from_value(definition.clone())?;
                resource.uri = prefix.uri(&resource.uri);
                server.add_resource(resource, read_upstream(upstream, prefix))
            }
            ListKind::ResourceTemplates => {
                let mut template: ResourceTemplate = serde_json::from_value(definition.clone())?;
                template.uri_template = prefix.uri(&template.uri_template);
                server.add_resource_template(template, read_upstream(upstream, prefix))
            }
            ListKind::Skills => Ok(()),
        }
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

/// Completions for the prompts and templates of one mount, in front of
/// whatever answered completions before (another mount, the server's own
/// provider).
pub(crate) fn complete(
    mirror: Arc<Mirror>,
    before: Option<Arc<dyn crate::server::CompletionHandler>>,
) -> impl Fn(RequestContext, Value) -> crate::BoxFuture<Result<CompletionOutput, HandlerError>>
+ Send
+ Sync
+ 'static {
    move |ctx: RequestContext, mut params: Value| {
        let mirror = mirror.clone();
        let before = before.clone();
        Box::pin(async move {
            if !mirror.owns_reference(params.get_mut("ref")) {
                return match before {
                    Some(before) => before.call(ctx, params).await,
                    None => Err(HandlerError::Protocol(crate::McpError::invalid_params(
                        "no completions for this reference",
                    ))),
                };
            }
            let Value::Object(params) = params else {
                return Ok(CompletionOutput::default());
            };
            let result =
                forward::send(&mirror.upstream, &ctx, methods::COMPLETION_COMPLETE, params).await?;
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
        })
    }
}

impl Mirror {
    /// Whether a completion reference names one of this mount's prompts
    /// or templates; if so it is rewritten to the upstream's name.
    fn owns_reference(&self, reference: Option<&mut Value>) -> bool {
        let Some(Value::Object(reference)) = reference else {
            return false;
        };
        let registered = lock_unpoisoned(&self.registered);
        let prompt = match reference.get("type").and_then(Value::as_str) {
            Some("ref/prompt") => true,
            Some("ref/resource") => false,
            _ => return false,
        };
        let (field, list) = if prompt {
            ("name", &registered.prompts)
        } else {
            ("uri", &registered.templates)
        };
        let Some(Value::String(name)) = reference.get_mut(field) else {
            return false;
        };
        if !list.contains_key(name.as_str()) {
            return false;
        }
        let original = if prompt {
            self.prefix.upstream_name(name)
        } else {
            self.prefix.upstream_uri(name)
        };
        match original.map(str::to_owned) {
            Some(original) => {
                *name = original;
                true
            }
            None => false,
        }
    }
}

/// Items with their keys, as JSON (what a change is detected on).
fn keyed<T: serde::Serialize>(items: Vec<T>, key: impl Fn(&T) -> String) -> Vec<(String, Value)> {
    items
        .into_iter()
        .filter_map(|item| Some((key(&item), serde_json::to_value(&item).ok()?)))
        .collect()
}
