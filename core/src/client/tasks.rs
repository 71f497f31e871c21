//! Following a task (SEP-2663): a `tools/call` the server answered with a
//! task handle (`resultType: "task"`) is polled with `tasks/get` until it
//! ends, its questions answered with the application's input handlers and
//! sent back with `tasks/update`; the caller gets the tool's result as if the
//! call had been synchronous. Dropping or cancelling the call sends
//! `tasks/cancel`.
//!
//! The client declares the extension on every request unless
//! [`ClientOptions::follow_tasks`](super::ClientOptions::follow_tasks) is
//! off, since it can take a task wherever it calls a tool.

use serde_json::{Map, Value};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{CallOptions, Client};
use crate::Error;
use crate::protocol::CallToolResult;
use crate::protocol::McpError;
use crate::protocol::methods;
use crate::protocol::tasks::{RESULT_TYPE_TASK, TaskStatus};
use crate::rpc::lock_unpoisoned;

/// The shortest wait between polls, whatever the server suggests.
const MIN_POLL: Duration = Duration::from_millis(10);
/// The longest wait between polls.
const MAX_POLL: Duration = Duration::from_secs(30);
/// The wait when the server suggests none; it doubles up to [`MAX_BACKOFF`]
/// while nothing changes.
const FIRST_POLL: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Whether a result is a `CreateTaskResult`.
pub(super) fn is_task(result: &Value) -> bool {
    result.get("resultType").and_then(Value::as_str) == Some(RESULT_TYPE_TASK)
}

/// Cancels the task when the call following it is dropped before the end
/// (the caller cancelled, timed out or went away).
struct CancelOnDrop {
    client: Option<Client>,
    task_id: String,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(client) = self.client.take() else {
            return;
        };
        let task_id = std::mem::take(&mut self.task_id);
        // Best effort: the ack carries nothing the caller waits for.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let mut params = Map::new();
                params.insert("taskId".into(), Value::from(task_id));
                if let Err(error) = client
                    .send(methods::TASKS_CANCEL, params, &CallOptions::default())
                    .await
                {
                    tracing::debug!(%error, "tasks/cancel of an abandoned task failed");
                }
            });
        }
    }
}

impl Client {
    /// Follows the task `created` (a `CreateTaskResult` answering
    /// `tools/call`) to its end: the tool's result, or the task's error.
    pub(super) async fn follow_task(
        &self,
        created: Value,
        options: &CallOptions,
    ) -> Result<Value, Error> {
        self.follow_task_answered(created, options, HashSet::new())
            .await
    }

    /// [`Client::follow_task`] knowing the question keys already answered.
    async fn follow_task_answered(
        &self,
        created: Value,
        options: &CallOptions,
        mut answered: HashSet<String>,
    ) -> Result<Value, Error> {
        let task_id = created
            .get("taskId")
            .and_then(Value::as_str)
            .ok_or_else(|| Error::Protocol("a CreateTaskResult without a taskId".into()))?
            .to_owned();
        let mut guard = CancelOnDrop {
            client: Some(self.clone()),
            task_id: task_id.clone(),
        };
        // Each poll is its own request, with the call's timeout; the task
        // may run far longer than one request may take.
        // The call's own answers and declared capabilities apply to the
        // task's questions as to its rounds (a gateway answers them with
        // the client it forwards for).
        let poll_options = CallOptions {
            timeout: options.timeout,
            meta: options.meta.clone(),
            input: options.input.clone(),
            capabilities: options.capabilities.clone(),
            ..CallOptions::default()
        };
        let mut backoff = FIRST_POLL;
        let mut state = created;
        let mut last_status = None;
        let mut last_shown: Option<(Value, Value)> = None;
        loop {
            if let Some(on_state) = &options.on_task_state {
                let shown = (state["status"].clone(), state["statusMessage"].clone());
                if last_shown.as_ref() != Some(&shown) {
                    on_state(&state);
                    last_shown = Some(shown);
                }
            }
            let status: TaskStatus =
                serde_json::from_value(state["status"].clone()).map_err(|_| {
                    Error::Protocol(format!(
                        "task {task_id}: unknown status {}",
                        state["status"]
                    ))
                })?;
            match status {
                TaskStatus::Completed => {
                    guard.client = None;
                    return match state.get_mut("result").map(Value::take) {
                        Some(result @ Value::Object(_)) => Ok(result),
                        _ => Err(Error::Protocol(format!(
                            "task {task_id} completed without a result object"
                        ))),
                    };
                }
                TaskStatus::Failed => {
                    guard.client = None;
                    let error = serde_json::from_value::<McpError>(state["error"].clone())
                        .unwrap_or_else(|_| {
                            McpError::internal(format!("task {task_id} failed without an error"))
                        });
                    return Err(Error::Mcp(error));
                }
                TaskStatus::Cancelled => {
                    guard.client = None;
                    let why = state["statusMessage"].as_str().unwrap_or("no reason given");
                    return Err(Error::Protocol(format!(
                        "task {task_id} was cancelled by the server: {why}"
                    )));
                }
                TaskStatus::InputRequired => {
                    self.answer_task(&task_id, &state, &mut answered, &poll_options)
                        .await?;
                }
                TaskStatus::Working => {}
            }
            let wait = match state.get("pollIntervalMs").and_then(Value::as_u64) {
                Some(ms) => Duration::from_millis(ms).clamp(MIN_POLL, MAX_POLL),
                None => {
                    // Back off while nothing changes; start over when it does.
                    if last_status != Some(status) {
                        backoff = FIRST_POLL;
                    }
                    let wait = backoff;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    wait
                }
            };
            last_status = Some(status);
            tokio::time::sleep(wait).await;
            let mut params = Map::new();
            params.insert("taskId".into(), Value::from(task_id.clone()));
            state = Box::pin(self.send(methods::TASKS_GET, params, &poll_options)).await?;
        }
    }

    /// Answers the task's questions not answered yet (a key is answered
    /// once: a poll may show a question again before the server took the
    /// answer in) and sends the answers with `tasks/update`.
    async fn answer_task(
        &self,
        task_id: &str,
        state: &Value,
        answered: &mut HashSet<String>,
        options: &CallOptions,
    ) -> Result<(), Error> {
        let Some(Value::Object(requests)) = state.get("inputRequests") else {
            return Ok(());
        };
        let fresh: Map<String, Value> = requests
            .iter()
            .filter(|(key, _)| !answered.contains(*key))
            .map(|(key, request)| (key.clone(), request.clone()))
            .collect();
        if fresh.is_empty() {
            return Ok(());
        }
        let responses =
            Box::pin(self.answer_input_requests(Some(&Value::Object(fresh)), options)).await?;
        answered.extend(responses.keys().cloned());
        let mut params = Map::new();
        params.insert("taskId".into(), Value::from(task_id));
        params.insert("inputResponses".into(), Value::Object(responses));
        Box::pin(self.send(methods::TASKS_UPDATE, params, options)).await?;
        Ok(())
    }
}

/// A `tools/call` whose task the caller follows itself (SEP-2663): the
/// server's task, or the result it answered with at once (a server decides
/// per call). Cheap to clone; clones share the last state seen.
///
/// ```no_run
/// # async fn demo(client: ferromcp::client::Client) -> Result<(), ferromcp::Error> {
/// use ferromcp::client::CallOptions;
/// let task = client.start_tool_task("render", serde_json::json!({}), &CallOptions::default()).await?;
/// if let Some(id) = task.id() {
///     println!("task {id}: {}", task.refresh().await?["status"]);
/// }
/// let result = task.result().await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ToolTask {
    client: Client,
    /// `None`: the server answered at once.
    task_id: Option<String>,
    /// The last `tasks/get` answer (or `CreateTaskResult`), or the result.
    last: Arc<Mutex<Value>>,
    /// Question keys answered through [`ToolTask::respond`]: following the
    /// task must not answer them again while the server takes them in.
    answered: Arc<Mutex<HashSet<String>>>,
}

impl std::fmt::Debug for ToolTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolTask")
            .field("task_id", &self.task_id)
            .finish_non_exhaustive()
    }
}

impl ToolTask {
    /// The task's id (keep it to resume with [`Client::tool_task`]);
    /// `None` when the server answered with the result at once.
    pub fn id(&self) -> Option<&str> {
        self.task_id.as_deref()
    }

    /// The last state seen: a task as `tasks/get` answers it, or the
    /// result when there was no task.
    pub fn last(&self) -> Value {
        lock_unpoisoned(&self.last).clone()
    }

    /// Asks the server for the task's state now (`tasks/get`); without a
    /// task, the result.
    pub async fn refresh(&self) -> Result<Value, Error> {
        let Some(task_id) = &self.task_id else {
            return Ok(self.last());
        };
        let mut params = Map::new();
        params.insert("taskId".into(), Value::from(task_id.clone()));
        let state = self
            .client
            .send_for_task(methods::TASKS_GET, params, &CallOptions::default())
            .await?;
        *lock_unpoisoned(&self.last) = state.clone();
        Ok(state)
    }

    /// Answers some of the task's `inputRequests` (`tasks/update`), by key.
    pub async fn respond(&self, responses: Map<String, Value>) -> Result<(), Error> {
        let Some(task_id) = &self.task_id else {
            return Err(Error::Protocol(
                "the call was answered without a task".into(),
            ));
        };
        lock_unpoisoned(&self.answered).extend(responses.keys().cloned());
        let mut params = Map::new();
        params.insert("taskId".into(), Value::from(task_id.clone()));
        params.insert("inputResponses".into(), Value::Object(responses));
        self.client
            .send_for_task(methods::TASKS_UPDATE, params, &CallOptions::default())
            .await
            .map(drop)
    }

    /// Asks the server to cancel the task (`tasks/cancel`); the next
    /// [`ToolTask::refresh`] shows whether it did. Nothing to do without a task.
    pub async fn cancel(&self) -> Result<(), Error> {
        let Some(task_id) = &self.task_id else {
            return Ok(());
        };
        let mut params = Map::new();
        params.insert("taskId".into(), Value::from(task_id.clone()));
        self.client
            .send_for_task(methods::TASKS_CANCEL, params, &CallOptions::default())
            .await
            .map(drop)
    }

    /// Follows the task to its end, answering its questions with the
    /// client's input handlers, as `call_tool` does; dropping this future
    /// cancels the task.
    pub async fn result(&self) -> Result<CallToolResult, Error> {
        self.result_with(&CallOptions::default()).await
    }

    /// [`ToolTask::result`] with the call's options: each poll's timeout and
    /// `_meta`, [`CallOptions::on_task_state`] for every change of state,
    /// and [`CallOptions::cancel`], which stops following and cancels the
    /// task ([`Error::Cancelled`]).
    pub async fn result_with(&self, options: &CallOptions) -> Result<CallToolResult, Error> {
        let follow = self.follow(options);
        match &options.cancel {
            Some(cancel) => tokio::select! {
                result = follow => result,
                () = cancel.cancelled() => Err(Error::Cancelled),
            },
            None => follow.await,
        }
    }

    async fn follow(&self, options: &CallOptions) -> Result<CallToolResult, Error> {
        let value = match &self.task_id {
            None => self.last(),
            Some(_) => {
                let state = self.last();
                let state = if state.get("taskId").is_some() {
                    state
                } else {
                    self.refresh().await?
                };
                let answered = lock_unpoisoned(&self.answered).clone();
                let follow_options = CallOptions {
                    cancel: None,
                    ..options.clone()
                };
                self.client
                    .follow_task_answered(state, &follow_options, answered)
                    .await?
            }
        };
        super::calls::decode(methods::TOOLS_CALL, value)
    }
}

impl Client {
    /// `tools/call`, returning a handle on the task the server makes of it
    /// (or on the result it answers with at once) instead of following it.
    pub async fn start_tool_task(
        &self,
        name: &str,
        arguments: Value,
        options: &CallOptions,
    ) -> Result<ToolTask, Error> {
        let mut params = Map::new();
        params.insert("name".into(), Value::from(name));
        params.insert("arguments".into(), arguments);
        let answer = self
            .send_for_task(methods::TOOLS_CALL, params, options)
            .await?;
        let task_id = is_task(&answer)
            .then(|| {
                answer
                    .get("taskId")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .flatten();
        if is_task(&answer) && task_id.is_none() {
            return Err(Error::Protocol(
                "a CreateTaskResult without a taskId".into(),
            ));
        }
        Ok(ToolTask {
            client: self.clone(),
            task_id,
            last: Arc::new(Mutex::new(answer)),
            answered: Arc::default(),
        })
    }

    /// A handle on a task this client started earlier (or another run of
    /// it: task ids are meant to be kept), to follow, answer or cancel it.
    pub fn tool_task(&self, task_id: &str) -> ToolTask {
        ToolTask {
            client: self.clone(),
            task_id: Some(task_id.to_owned()),
            last: Arc::new(Mutex::new(Value::Null)),
            answered: Arc::default(),
        }
    }
}
