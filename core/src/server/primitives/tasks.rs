//! The tasks extension's methods (SEP-2663): `tasks/get` reads a task,
//! `tasks/update` answers its questions, `tasks/cancel` asks it to stop; and
//! the step that turns a `tools/call` into a task.
//!
//! Every method needs the client to declare the extension on the request
//! (`-32021` otherwise) and finds the task through the store, for the
//! caller only: an unknown id, an expired task and someone else's task are
//! the same `-32602`.

use serde_json::{Map, Value};
use std::sync::Arc;

use super::{Ran, Running, start_handler};
use crate::McpError;
use crate::protocol::codes;
use crate::protocol::tasks::{
    RESULT_TYPE_TASK, TASKS_EXTENSION, declares_tasks, required_capability_data,
};
use crate::server::Server;
use crate::server::ToolOutput;
use crate::server::context::{RequestContext, RequestMeta};
use crate::server::registry::ToolEntry;
use crate::server::reply::ResultObject;
use crate::server::tasks::{
    NewRun, RunInputs, RunnerEvent, Started, TASK_ID_PURPOSE, TaskHandoff, TaskStoreError,
    TaskWriter, new_task, now_ms, sealed_task_id,
};
use tokio_util::sync::CancellationToken;

/// The three methods of the extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TaskMethod {
    Get,
    Update,
    Cancel,
}

impl TaskMethod {
    fn name(self) -> &'static str {
        match self {
            TaskMethod::Get => crate::protocol::methods::TASKS_GET,
            TaskMethod::Update => crate::protocol::methods::TASKS_UPDATE,
            TaskMethod::Cancel => crate::protocol::methods::TASKS_CANCEL,
        }
    }
}

/// `-32021` naming the extension.
pub(crate) fn tasks_required(why: String) -> McpError {
    McpError::new(codes::MISSING_REQUIRED_CLIENT_CAPABILITY, why)
        .with_data(required_capability_data())
}

/// Whose tasks a request may touch: the token's subject (or client id) on
/// a protected server, as for legacy sessions; `None` when unprotected.
pub(crate) fn task_owner(meta: &RequestMeta) -> Option<String> {
    meta.auth
        .as_ref()
        .and_then(|a| a.subject.clone().or_else(|| a.client_id.clone()))
}

impl Server {
    /// Answers `tasks/get`, `tasks/update` or `tasks/cancel`.
    pub(in crate::server) async fn task_request(
        &self,
        method: TaskMethod,
        meta: &RequestMeta,
        params: &Map<String, Value>,
    ) -> Result<ResultObject, McpError> {
        let name = method.name();
        if !declares_tasks(&meta.client_capabilities) {
            return Err(tasks_required(format!(
                "{name} needs the client to declare the {TASKS_EXTENSION} extension"
            )));
        }
        let Some(Value::String(task_id)) = params.get("taskId") else {
            return Err(McpError::invalid_params(format!(
                "{name} requires a string \"taskId\""
            )));
        };
        let answers = match (method, params.get("inputResponses")) {
            (TaskMethod::Update, Some(Value::Object(answers))) => Some(answers.clone()),
            (TaskMethod::Update, _) => {
                return Err(McpError::invalid_params(format!(
                    "{name} requires an object \"inputResponses\""
                )));
            }
            _ => None,
        };
        let not_found = || {
            McpError::invalid_params(format!(
                "Failed to retrieve task: Task not found ({task_id})"
            ))
        };
        // Not sealed by these keys: no replica made it, the store has
        // nothing to say.
        if self
            .shared
            .options
            .seal_key
            .open(TASK_ID_PURPOSE, task_id)
            .is_none()
        {
            return Err(not_found());
        }
        let store = &self.shared.options.tasks.store;
        let stored = store
            .get(task_id.clone(), task_owner(meta))
            .await
            .map_err(|e| match e {
                TaskStoreError::NotFound => not_found(),
                other => McpError::internal(other.to_string()),
            })?;
        match method {
            TaskMethod::Get => Ok(ResultObject::Map(stored.task.to_map())),
            // Acknowledgements only (eventually consistent): the next
            // `tasks/get` shows the effect. A finished task, or one running
            // on another replica, has nothing here to deliver to.
            TaskMethod::Update => {
                if let Some(answers) = answers.filter(|a| !a.is_empty()) {
                    self.to_runner(task_id, RunnerEvent::Answers(answers)).await;
                }
                Ok(ResultObject::Map(Map::new()))
            }
            TaskMethod::Cancel => {
                if !stored.task.status.is_terminal() {
                    self.to_runner(task_id, RunnerEvent::Cancel).await;
                }
                Ok(ResultObject::Map(Map::new()))
            }
        }
    }

    /// Delivers answers or a cancel to the task's runner: here if it runs
    /// here, else over the event bus to the replica where it runs.
    async fn to_runner(&self, task_id: &str, event: RunnerEvent) {
        if !self.shared.runners.has(task_id) {
            self.shared.events.forward_to_runner(task_id, &event);
            return;
        }
        self.shared.runners.send(task_id, event).await;
    }

    /// Makes a `tools/call` a task from its start: stores it (so a
    /// `tasks/get` finds it as soon as the client has the handle), starts
    /// its handler with the task's context, and answers the
    /// `CreateTaskResult`.
    pub(in crate::server) async fn call_as_task(
        &self,
        ctx: RequestContext,
        entry: Arc<ToolEntry>,
        arguments: Value,
    ) -> Result<ResultObject, McpError> {
        let (run, created) = self.store_new_task(ctx.meta()).await?;
        let inputs = run.inputs(
            &self.shared.runners,
            ctx.meta().client_capabilities.clone(),
            CancellationToken::new(),
        );
        let task_ctx = ctx.for_task(inputs.requester.clone(), inputs.cancel.clone());
        drop(ctx);
        let handler = entry.handler.clone();
        let running = start_handler(move || handler.call(task_ctx, arguments));
        self.spawn_task(run, inputs, entry, running);
        Ok(ResultObject::Map(created))
    }

    /// Makes a call a task once its handler asked ([`TaskStart::ByHandler`]):
    /// the handler's future goes on in the task with `cancel`, the token
    /// its context already holds. When the task cannot be created, the
    /// handler is told and its future comes back to finish as a plain call.
    ///
    /// [`TaskStart::ByHandler`]: crate::server::TaskStart::ByHandler
    pub(in crate::server) async fn continue_as_task(
        &self,
        meta: &RequestMeta,
        entry: Arc<ToolEntry>,
        running: Running<ToolOutput>,
        handoff: &TaskHandoff,
        cancel: CancellationToken,
    ) -> Result<ResultObject, Running<ToolOutput>> {
        let (run, created) = match self.store_new_task(meta).await {
            Ok(created) => created,
            Err(error) => {
                handoff.decide(Err(error));
                return Err(running);
            }
        };
        let inputs = run.inputs(
            &self.shared.runners,
            meta.client_capabilities.clone(),
            cancel,
        );
        handoff.decide(Ok(Started {
            requester: inputs.requester.clone(),
        }));
        self.spawn_task(run, inputs, entry, Ok(running));
        Ok(ResultObject::Map(created))
    }

    /// Stores a new task for a call with `meta`: the run to start and its
    /// `CreateTaskResult`. Once this returns, `tasks/get` finds the task.
    async fn store_new_task(
        &self,
        meta: &RequestMeta,
    ) -> Result<(NewRun, Map<String, Value>), McpError> {
        let options = &self.shared.options.tasks;
        let now = now_ms();
        let stored = new_task(
            sealed_task_id(&self.shared.options.seal_key),
            task_owner(meta),
            options.ttl,
            options.poll_interval,
            now,
        );
        options
            .store
            .create(stored.clone())
            .await
            .map_err(|e| McpError::internal(e.to_string()))?;
        let mut created = stored.task.to_map();
        created.insert("resultType".into(), Value::from(RESULT_TYPE_TASK));
        let run = NewRun {
            stored,
            writer: TaskWriter {
                store: options.store.clone(),
                ttl: options.ttl,
                keep_finished: options.keep_finished,
                events: self.shared.events.clone(),
            },
            created_ms: now,
        };
        Ok((run, created))
    }

    /// Runs a task's handler to the task's end.
    fn spawn_task(
        &self,
        run: NewRun,
        inputs: RunInputs,
        entry: Arc<ToolEntry>,
        running: Result<Running<ToolOutput>, Ran<ToolOutput>>,
    ) {
        let outcome = Box::pin(async move {
            let ran = match running {
                Ok(future) => match future.await {
                    Ok(result) => Ran::Done(result),
                    Err(panic) => Ran::Panicked(panic),
                },
                Err(ran) => ran,
            };
            Server::tool_outcome(&entry, ran).map(ResultObject::into_map)
        });
        run.spawn(inputs, self.shared.runners.clone(), outcome);
    }
}
