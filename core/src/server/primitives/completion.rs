//! `completion/complete` (spec: server/utilities/completion.mdx): one
//! provider for every prompt argument and template variable; at most 100
//! values per response.

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
}
