//! `tools/call` (spec: server/tools.mdx): arguments checked against the
//! tool's `inputSchema`, the handler's output turned into a
//! `CallToolResult` and checked against its `outputSchema`. A failing tool
//! is an `isError: true` result, not a JSON-RPC error.

use serde_json::{Map, Value, json};

use super::tasks::tasks_required;
use super::{Ran, RoundEnd, drive_round, expect_round, run_handler, start_handler};
use crate::McpError;
use crate::protocol::LEGACY_PROTOCOL_VERSIONS;
use crate::protocol::jsonrpc::CallMembers;
use crate::protocol::methods::TOOLS_CALL;
use crate::protocol::tasks::{TASKS_EXTENSION, declares_tasks};
use crate::server::HandlerError;
use crate::server::Server;
use crate::server::ToolOutput;
use crate::server::context::RequestContext;
use crate::server::input::InputRound;
use crate::server::registry::ToolEntry;
use crate::server::reply::ResultObject;
use crate::server::tasks::TaskHandoff;
use crate::server::tasks::{TaskStart, TaskSupport};
use crate::server::tool_result::{error_result, into_call_tool_result};
use crate::server::visibility::VisibleItem;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

impl Server {
    /// Answers `tools/call`, or ends the round with `InputRequiredResult`.
    pub(in crate::server) async fn call_tool(
        &self,
        ctx: RequestContext,
        params: &mut Map<String, Value>,
        mut call: CallMembers,
        input: Option<&InputRound>,
    ) -> Result<ResultObject, McpError> {
        // A round that may end in an `InputRequiredResult` digests the
        // params as sent: the members read apart go back first.
        if input.is_some_and(InputRound::can_pend) {
            std::mem::take(&mut call).restore_into_map(params);
        }
        let name = match &call.name {
            Some(name) => Some(name),
            None => params.get("name"),
        };
        let Some(Value::String(name)) = name else {
            return Err(McpError::invalid_params(format!(
                "{TOOLS_CALL} requires a string \"name\""
            )));
        };
        let entry = self
            .find_shown(
                ctx.meta(),
                |registry| registry.tools.get(name).cloned(),
                |_| VisibleItem::Tool(name.clone()),
            )
            .await;
        // A tool hidden from this caller is as unknown as one never added.
        let Some(entry) = entry else {
            return Err(McpError::invalid_params(format!("Unknown tool: {name}"))
                .with_data(json!({ "name": name })));
        };
        let name = entry.tool.name.as_str();
        // The tasks extension: whether this call becomes a task is the
        // server's to decide, before the handler runs (SEP-2663). Never on
        // a 2025-11-25 session, even one that declared the extension: its
        // results carry no `resultType`, so a task handle would read as a
        // malformed tool result.
        let legacy = LEGACY_PROTOCOL_VERSIONS.contains(&ctx.meta().protocol_version.as_str());
        let as_task = entry.task.support != TaskSupport::Forbidden
            && !legacy
            && declares_tasks(&ctx.meta().client_capabilities);
        if entry.task.support == TaskSupport::Required && !as_task {
            let needs = if legacy {
                "protocol 2026-07-28 and"
            } else {
                "the client to declare"
            };
            return Err(tasks_required(format!(
                "Tool '{name}' runs as a task: it needs {needs} the {TASKS_EXTENSION} extension"
            )));
        }
        // The handler owns its arguments. They are copied only when the
        // round may end in an `InputRequiredResult`, whose `requestState`
        // digest covers the request's arguments as sent; a client that
        // declared no input capability can never get one, so its arguments
        // move out of the params (a tree copy per call saved).
        let arguments = match call.arguments.take() {
            // Read apart: the round cannot pend, so it is the handler's.
            Some(Value::Null) => Value::Object(Map::new()),
            Some(arguments @ Value::Object(_)) => arguments,
            Some(_) => return Err(McpError::invalid_params("\"arguments\" must be an object")),
            None => match params.get("arguments") {
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(Value::Object(_)) if input.is_some_and(InputRound::can_pend) => {
                    params.get("arguments").cloned().unwrap_or_default()
                }
                Some(Value::Object(_)) => params.remove("arguments").unwrap_or_default(),
                Some(_) => {
                    return Err(McpError::invalid_params("\"arguments\" must be an object"));
                }
            },
        };
        if let Err(problems) = entry.input.check(&arguments) {
            return Ok(
                error_result(&format!("Invalid arguments for tool '{name}': {problems}")).into(),
            );
        }
        if as_task && entry.task.start == TaskStart::OnCall {
            return self.call_as_task(ctx, entry, arguments).await;
        }
        if as_task {
            return self
                .call_until_task(ctx, entry, arguments, input, params)
                .await;
        }
        let handler = entry.handler.clone();
        match run_handler(input, move || handler.call(ctx, arguments)).await {
            Ran::InputRequired => Ok(self.input_required(expect_round(input)?, &*params).into()),
            ran => Server::tool_outcome(&entry, ran),
        }
    }

    /// A call whose handler may make it a task ([`TaskStart::ByHandler`]):
    /// a plain call (multi round-trip questions included) until the handler
    /// calls `ctx.start_task()`, then a task carrying on with the same
    /// future.
    async fn call_until_task(
        &self,
        ctx: RequestContext,
        entry: Arc<ToolEntry>,
        arguments: Value,
        input: Option<&InputRound>,
        params: &Map<String, Value>,
    ) -> Result<ResultObject, McpError> {
        // The handler's token outlives the request if the call becomes a
        // task; until then, ending the request (dropping this future)
        // cancels it.
        let own = CancellationToken::new();
        let guard = own.clone().drop_guard();
        let ctx = ctx.with_cancel(own.clone());
        let handoff = Arc::new(TaskHandoff::default());
        ctx.offer_task(handoff.clone());
        let meta = ctx.meta().clone();
        let handler = entry.handler.clone();
        let mut running = match start_handler(move || handler.call(ctx, arguments)) {
            Ok(running) => running,
            Err(ran) => return Server::tool_outcome(&entry, ran),
        };
        let ran = match drive_round(input, &mut running, Some(&handoff)).await {
            RoundEnd::Ran(ran) => ran,
            RoundEnd::TaskAsked => {
                match self
                    .continue_as_task(&meta, entry.clone(), running, &handoff, own)
                    .await
                {
                    Ok(created) => {
                        guard.disarm();
                        return Ok(created);
                    }
                    // Not created: the handler was told, and finishes here.
                    Err(mut running) => match drive_round(input, &mut running, None).await {
                        RoundEnd::Ran(ran) => ran,
                        RoundEnd::TaskAsked => Ran::Panicked("asked twice for a task".into()),
                    },
                }
            }
        };
        match ran {
            Ran::InputRequired => Ok(self.input_required(expect_round(input)?, params).into()),
            ran => Server::tool_outcome(&entry, ran),
        }
    }

    /// What a tool handler's round that did not end for input answers: its
    /// `CallToolResult` (checked against the output schema), an `isError`
    /// result for a tool failure or a panic, or the JSON-RPC error it
    /// raised.
    pub(in crate::server) fn tool_outcome(
        entry: &ToolEntry,
        ran: Ran<ToolOutput>,
    ) -> Result<ResultObject, McpError> {
        let name = entry.tool.name.as_str();
        match ran {
            Ran::InputRequired => Err(McpError::internal("input required outside a round")),
            Ran::Done(Ok(output)) => {
                let result = into_call_tool_result(output, entry.output.is_some());
                if let (Some(schema), ResultObject::Map(map)) = (&entry.output, &result)
                    && let Some(structured) = map.get("structuredContent")
                    && map.get("isError") != Some(&Value::Bool(true))
                    && let Err(problems) = schema.check(structured)
                {
                    tracing::warn!(tool = %name, %problems, "structured output does not match outputSchema");
                    return Ok(error_result(&format!(
                        "Tool '{name}' produced output that does not match its outputSchema: {problems}"
                    ))
                    .into());
                }
                Ok(result)
            }
            Ran::Done(Err(HandlerError::Tool(message))) => Ok(error_result(&message).into()),
            Ran::Done(Err(HandlerError::Protocol(error))) => Err(error),
            Ran::Panicked(panic) => {
                tracing::error!(tool = %name, %panic, "tool handler panicked");
                Ok(error_result(&format!("Tool '{name}' failed: {panic}")).into())
            }
        }
    }
}
