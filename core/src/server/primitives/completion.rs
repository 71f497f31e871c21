//! `completion/complete` (spec: server/utilities/completion.mdx): one
//! provider for every prompt argument and template variable; at most 100
//! values per response. The `ref` must name a registered prompt or resource
//! template (or resource); anything else is `-32602` from core, before the
//! provider runs, so every binding answers it the same way.

use serde_json::{Map, Value, json};

use super::{Ran, run_handler};
use crate::McpError;
use crate::protocol::methods::COMPLETION_COMPLETE;
use crate::server::Server;
use crate::server::context::RequestContext;
use crate::server::handler::{CompletionOutput, HandlerError};

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
        let Some(handler) = self.registry_read().completion.clone() else {
            return Err(McpError::method_not_found(COMPLETION_COMPLETE));
        };
        if let Some(Value::Object(reference)) = params.get("ref") {
            self.check_reference(reference)?;
        }
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
    /// (spec: "Invalid prompt name: -32602"). A `ref/resource` may carry a
    /// registered template as written, a registered resource URI, or a URI
    /// a registered template matches ("a resource URI or URI template").
    fn check_reference(&self, reference: &Map<String, Value>) -> Result<(), McpError> {
        let registry = self.registry_read();
        match reference.get("type").and_then(Value::as_str) {
            Some(REF_PROMPT) => {
                let Some(Value::String(name)) = reference.get("name") else {
                    return Err(McpError::invalid_params(format!(
                        "a {REF_PROMPT} reference requires a string \"name\""
                    )));
                };
                if registry.prompts.contains_key(name) {
                    return Ok(());
                }
                Err(
                    McpError::invalid_params(format!("Prompt not found: {name}"))
                        .with_data(json!({ "name": name })),
                )
            }
            Some(REF_RESOURCE) => {
                let Some(Value::String(uri)) = reference.get("uri") else {
                    return Err(McpError::invalid_params(format!(
                        "a {REF_RESOURCE} reference requires a string \"uri\""
                    )));
                };
                if registry.templates.contains_key(uri) || registry.resolve_resource(uri).is_some()
                {
                    return Ok(());
                }
                Err(
                    McpError::invalid_params(format!("Resource template not found: {uri}"))
                        .with_data(json!({ "uri": uri })),
                )
            }
            other => Err(McpError::invalid_params(format!(
                "ref.type must be \"{REF_PROMPT}\" or \"{REF_RESOURCE}\", not {}",
                other.map_or_else(|| "missing".to_owned(), |t| format!("{t:?}"))
            ))),
        }
    }
}

/// The reference types of `completion/complete` (schema: PromptReference,
/// ResourceTemplateReference).
const REF_PROMPT: &str = "ref/prompt";
const REF_RESOURCE: &str = "ref/resource";
