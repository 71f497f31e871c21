//! `completion/complete` (spec: server/utilities/completion.mdx): one
//! provider for every prompt argument and template variable; at most 100
//! values per response. The `ref` must name a registered prompt or resource
//! template (or resource); anything else is `-32602` from core, before the
//! provider runs, so every binding answers it the same way.

use serde_json::{Map, Value, json};
use std::sync::Arc;

use super::{Ran, run_handler};
use crate::McpError;
use crate::protocol::methods::COMPLETION_COMPLETE;
use crate::server::Server;
use crate::server::context::RequestContext;
use crate::server::handler::{CompletionHandler, CompletionOutput, HandlerError};
use crate::server::visibility::{VisibilityRule, VisibleItem, shown};

/// The spec caps a completion response at 100 values.
const MAX_VALUES: usize = 100;

impl Server {
    /// Answers `completion/complete` from the registered provider.
    pub(in crate::server) async fn complete(
        &self,
        ctx: RequestContext,
        params: &Map<String, Value>,
    ) -> Result<Map<String, Value>, McpError> {
        if !params.get("ref").is_some_and(Value::is_object)
            || !params.get("argument").is_some_and(Value::is_object)
        {
            return Err(McpError::invalid_params(format!(
                "{COMPLETION_COMPLETE} requires \"ref\" and \"argument\" objects"
            )));
        }
        let completes = {
            let registry = self.registry_read();
            registry.completion.is_some() || registry.offered.completions
        };
        if !completes {
            return Err(McpError::method_not_found(COMPLETION_COMPLETE));
        }
        let own = match params.get("ref") {
            Some(Value::Object(reference)) => {
                let (item, own, rule) = self.check_reference(reference)?;
                // What the caller may not see, it may not complete either.
                if !shown(rule.as_ref(), ctx.meta(), item).await {
                    return Err(not_found(reference));
                }
                own
            }
            _ => None,
        };
        // The entry's own completer first (a mount's prompt asks its
        // upstream), then the server's provider; a reference to an entry
        // neither completes has no values to offer.
        let Some(handler) = own.or_else(|| self.registry_read().completion.clone()) else {
            return Ok(empty_completion());
        };
        let input = Value::Object(params.clone());
        let output: CompletionOutput = match run_handler(None, move || handler.call(ctx, input))
            .await
        {
            Ran::Done(Ok(output)) => output,
            Ran::Done(Err(HandlerError::Protocol(error))) => return Err(error),
            Ran::Done(Err(HandlerError::Tool(message))) => return Err(McpError::internal(message)),
            Ran::Panicked(panic) => {
                return Err(McpError::internal(format!("completion failed: {panic}")));
            }
            Ran::InputRequired => {
                return Err(McpError::internal("completion cannot ask for input"));
            }
        };
        let total = output.total.unwrap_or(output.values.len() as u64);
        // Values dropped by the cap are more results, whatever the handler
        // claimed.
        let has_more = output.has_more.unwrap_or(false) || output.values.len() > MAX_VALUES;
        let mut values = output.values;
        values.truncate(MAX_VALUES);
        let mut completion = Map::new();
        completion.insert("values".into(), json!(values));
        completion.insert("total".into(), json!(total));
        completion.insert("hasMore".into(), json!(has_more));
        let mut result = Map::new();
        result.insert("completion".into(), Value::Object(completion));
        Ok(result)
    }

    /// Whether a completion `ref` names something this server offers
    /// (spec: "Invalid prompt name: -32602"): the item it names, for the
    /// visibility rule (also returned), and the completer of its own that
    /// entry has, if any. A `ref/resource` may carry a registered template
    /// as written, a registered resource URI, or a URI a registered
    /// template matches ("a resource URI or URI template").
    #[allow(clippy::type_complexity)]
    fn check_reference(
        &self,
        reference: &Map<String, Value>,
    ) -> Result<
        (
            VisibleItem,
            Option<Arc<dyn CompletionHandler>>,
            Option<Arc<dyn VisibilityRule>>,
        ),
        McpError,
    > {
        let registry = self.registry_read();
        let rule = registry.visibility.clone();
        match reference.get("type").and_then(Value::as_str) {
            Some(REF_PROMPT) => {
                let Some(Value::String(name)) = reference.get("name") else {
                    return Err(McpError::invalid_params(format!(
                        "a {REF_PROMPT} reference requires a string \"name\""
                    )));
                };
                match registry.prompts.get(name) {
                    Some(prompt) => Ok((
                        VisibleItem::Prompt(name.clone()),
                        prompt.completion.clone(),
                        rule,
                    )),
                    None => Err(not_found(reference)),
                }
            }
            Some(REF_RESOURCE) => {
                let Some(Value::String(uri)) = reference.get("uri") else {
                    return Err(McpError::invalid_params(format!(
                        "a {REF_RESOURCE} reference requires a string \"uri\""
                    )));
                };
                if let Some(template) = registry.templates.get(uri) {
                    let item = VisibleItem::ResourceTemplate(uri.clone());
                    return Ok((item, template.completion.clone(), rule));
                }
                if registry.resources.contains_key(uri) {
                    return Ok((VisibleItem::Resource(uri.clone()), None, rule));
                }
                match registry
                    .templates
                    .values()
                    .find(|t| t.template.matches(uri).is_some())
                {
                    Some(template) => Ok((
                        VisibleItem::ResourceTemplate(template.uri_template.clone()),
                        template.completion.clone(),
                        rule,
                    )),
                    None => Err(not_found(reference)),
                }
            }
            other => Err(McpError::invalid_params(format!(
                "ref.type must be \"{REF_PROMPT}\" or \"{REF_RESOURCE}\", not {}",
                other.map_or_else(|| "missing".to_owned(), |t| format!("{t:?}"))
            ))),
        }
    }
}

/// The error of a reference to nothing this server offers (or nothing the
/// caller may see: the same error).
fn not_found(reference: &Map<String, Value>) -> McpError {
    if let Some(Value::String(name)) = reference.get("name")
        && reference.get("type").and_then(Value::as_str) == Some(REF_PROMPT)
    {
        return McpError::invalid_params(format!("Prompt not found: {name}"))
            .with_data(json!({ "name": name }));
    }
    let uri = reference.get("uri").and_then(Value::as_str).unwrap_or("");
    McpError::invalid_params(format!("Resource template not found: {uri}"))
        .with_data(json!({ "uri": uri }))
}

/// A completion without values.
fn empty_completion() -> Map<String, Value> {
    let mut result = Map::new();
    result.insert(
        "completion".into(),
        json!({"values": [], "total": 0, "hasMore": false}),
    );
    result
}

/// The reference types of `completion/complete` (schema: PromptReference,
/// ResourceTemplateReference).
const REF_PROMPT: &str = "ref/prompt";
const REF_RESOURCE: &str = "ref/resource";
