//! `prompts/get` (spec: server/prompts.mdx): arguments must be strings and
//! include every required one; the handler's output becomes the result's
//! `messages`.

use serde_json::{Map, Value, json};

use super::run_handler;
use crate::McpError;
use crate::protocol::methods::PROMPTS_GET;
use crate::server::Server;
use crate::server::context::RequestContext;
use crate::server::handler::PromptOutput;
use crate::server::input::InputRound;
use crate::server::visibility::VisibleItem;

impl Server {
    /// Answers `prompts/get`, or ends the round with `InputRequiredResult`.
    pub(in crate::server) async fn get_prompt(
        &self,
        ctx: RequestContext,
        params: &Map<String, Value>,
        input: Option<&InputRound>,
    ) -> Result<Map<String, Value>, McpError> {
        let Some(Value::String(name)) = params.get("name") else {
            return Err(McpError::invalid_params(format!(
                "{PROMPTS_GET} requires a string \"name\""
            )));
        };
        // A prompt hidden from this caller is as unknown as one never added.
        let entry = self
            .find_shown(
                ctx.meta(),
                |registry| registry.prompts.get(name).cloned(),
                |_| VisibleItem::Prompt(name.clone()),
            )
            .await;
        let Some(entry) = entry else {
            return Err(McpError::invalid_params(format!("Unknown prompt: {name}"))
                .with_data(json!({ "name": name })));
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args.clone(),
            Some(_) => return Err(McpError::invalid_params("\"arguments\" must be an object")),
        };
        if let Some((key, _)) = arguments.iter().find(|(_, v)| !v.is_string()) {
            return Err(McpError::invalid_params(format!(
                "prompt argument {key:?} must be a string"
            )));
        }
        let missing: Vec<&str> = entry
            .required
            .iter()
            .filter(|r| !arguments.contains_key(r.as_str()))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(McpError::invalid_params(format!(
                "prompt {name:?} is missing required arguments: {}",
                missing.join(", ")
            )));
        }
        let handler = entry.handler.clone();
        let ran = run_handler(input, move || handler.call(ctx, arguments)).await;
        let output = match self.non_tool_outcome(ran, input, params, &format!("Prompt '{name}'"))? {
            Ok(output) => output,
            Err(input_required) => return Ok(input_required),
        };
        Ok(prompt_result(output))
    }
}

/// The `GetPromptResult` of a handler's output: text is one user message.
fn prompt_result(output: PromptOutput) -> Map<String, Value> {
    match output {
        PromptOutput::Text(text) => {
            let mut result = Map::new();
            result.insert(
                "messages".into(),
                json!([{"role": "user", "content": {"type": "text", "text": text}}]),
            );
            result
        }
        PromptOutput::Messages(messages) => {
            let mut result = Map::new();
            result.insert("messages".into(), Value::Array(messages));
            result
        }
        PromptOutput::Result(result) => result,
    }
}
