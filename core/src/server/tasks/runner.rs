//! Running a task: the handler's future, the questions it asked and its
//! cancellation, owned by one tokio task that writes every change to the
//! store in order.
//!
//! A handler inside a task asks for input as on a 2025-11-25 session,
//! through a live requester ([`TaskInput`]): the question becomes an entry
//! of the task's `inputRequests` (status `input_required`) and the answer
//! arrives with `tasks/update`. `tasks/cancel` drops the handler's future,
//! as `notifications/cancelled` does for a plain request, and the task
//! ends `cancelled`.

use serde_json::{Map, Value};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::{StoredTask, TaskStore, now_ms};
use crate::BoxFuture;
use crate::McpError;
use crate::protocol::tasks::{DetailedTask, TaskStatus, iso8601_utc};
use crate::protocol::{InputKind, methods};
use crate::rpc::lock_unpoisoned;
use crate::server::context::{LiveRequester, NotificationSink};
use crate::server::subscriptions::ServerEvent;

/// Questions and answers waiting in a task's inbox. Small: a handler asks a
/// few questions at once and the client's answers wait for the runner only
/// as long as one store write.
const INBOX: usize = 64;

/// What reaches a running task.
pub(crate) enum RunnerEvent {
    /// The handler asks the client: `method` with `params`.
    Ask {
        /// The key the handler named the question with, if any.
        key: Option<String>,
        method: String,
        params: Value,
        reply: oneshot::Sender<Result<Value, McpError>>,
    },
    /// `tasks/update`'s `inputResponses`.
    Answers(Map<String, Value>),
    /// The handler reported progress: the task's status message while it
    /// works.
    Progress(String),
    /// `tasks/cancel`.
    Cancel,
}

/// The tasks this process runs, by id: where `tasks/update` and
/// `tasks/cancel` reach them. Bounded by the store, which refuses a task
/// past its limits before it runs.
#[derive(Default)]
pub(crate) struct Runners {
    inboxes: Mutex<HashMap<String, mpsc::Sender<RunnerEvent>>>,
}

impl Runners {
    /// Delivers `event` to the task, if it runs here; whether it did.
    pub(crate) async fn send(&self, task_id: &str, event: RunnerEvent) -> bool {
        let inbox = lock_unpoisoned(&self.inboxes).get(task_id).cloned();
        match inbox {
            Some(inbox) => inbox.send(event).await.is_ok(),
            None => false,
        }
    }

    /// Whether the task runs in this process.
    pub(crate) fn has(&self, task_id: &str) -> bool {
        lock_unpoisoned(&self.inboxes).contains_key(task_id)
    }

    fn insert(&self, task_id: String, inbox: mpsc::Sender<RunnerEvent>) {
        lock_unpoisoned(&self.inboxes).insert(task_id, inbox);
    }

    fn remove(&self, task_id: &str) {
        lock_unpoisoned(&self.inboxes).remove(task_id);
    }
}

/// The live requester of a handler running in a task.
pub(crate) struct TaskInput {
    inbox: mpsc::Sender<RunnerEvent>,
    /// The capabilities the client declared on the call that made the task.
    client_capabilities: Map<String, Value>,
}

impl LiveRequester for TaskInput {
    fn has_capability(&self, capability: &str) -> bool {
        self.client_capabilities.contains_key(capability)
    }

    fn start(
        &self,
        key: Option<&str>,
        method: &str,
        params: Value,
        _sink: Option<&NotificationSink>,
    ) -> Result<oneshot::Receiver<Result<Value, McpError>>, McpError> {
        let (reply, answer) = oneshot::channel();
        self.inbox
            .try_send(RunnerEvent::Ask {
                key: key.map(str::to_owned),
                method: method.to_owned(),
                params,
                reply,
            })
            .map_err(|_| {
                McpError::internal(format!(
                    "the task has more than {INBOX} questions waiting to be asked"
                ))
            })?;
        Ok(answer)
    }

    fn progress(&self, message: String) -> bool {
        // A full inbox drops the update: a newer one follows, and a
        // status message is only ever the latest word.
        let _ = self.inbox.try_send(RunnerEvent::Progress(message));
        true
    }
}

/// How a task's state is written.
#[derive(Clone)]
pub(crate) struct TaskWriter {
    pub(crate) store: Arc<dyn TaskStore>,
    /// `TaskOptions::ttl`.
    pub(crate) ttl: Option<Duration>,
    /// `TaskOptions::keep_finished`.
    pub(crate) keep_finished: Duration,
    /// Where listen streams, here and on other replicas, hear of each
    /// change (`notifications/tasks`).
    pub(crate) events: crate::server::bus::Events,
}

/// A task about to run: its first state, already in the store.
pub(crate) struct NewRun {
    pub(crate) stored: StoredTask,
    pub(crate) writer: TaskWriter,
    pub(crate) created_ms: u64,
}

/// The running task's inputs for a handler: its requester, and the token
/// its context carries (cancelled by `tasks/cancel` or at shutdown).
pub(crate) struct RunInputs {
    pub(crate) requester: Arc<TaskInput>,
    pub(crate) cancel: CancellationToken,
    inbox: mpsc::Receiver<RunnerEvent>,
}

impl NewRun {
    /// Registers the task with `runners` and returns what its handler's
    /// context needs; [`NewRun::spawn`] then runs the handler.
    pub(crate) fn inputs(
        &self,
        runners: &Runners,
        client_capabilities: Map<String, Value>,
        cancel: CancellationToken,
    ) -> RunInputs {
        let (tx, rx) = mpsc::channel(INBOX);
        runners.insert(self.stored.task.task_id.clone(), tx.clone());
        RunInputs {
            requester: Arc::new(TaskInput {
                inbox: tx,
                client_capabilities,
            }),
            cancel,
            inbox: rx,
        }
    }

    /// Runs `handler` (what the request would have answered: a result
    /// object or a JSON-RPC error) to the task's end.
    pub(crate) fn spawn(
        self,
        inputs: RunInputs,
        runners: Arc<Runners>,
        handler: BoxFuture<Result<Map<String, Value>, McpError>>,
    ) {
        let RunInputs { cancel, inbox, .. } = inputs;
        let run = Run {
            stored: self.stored,
            writer: self.writer,
            created_ms: self.created_ms,
            asked: HashMap::new(),
            used_keys: HashSet::new(),
            next_key: 0,
            progress: None,
        };
        tokio::spawn(run.drive(handler, inbox, cancel, runners));
    }
}

struct Run {
    stored: StoredTask,
    writer: TaskWriter,
    created_ms: u64,
    /// Questions waiting for an answer, by key: the request as
    /// `inputRequests` shows it, and where its answer goes.
    asked: HashMap<String, (Value, oneshot::Sender<Result<Value, McpError>>)>,
    /// Keys are never reused over a task's life (SEP-2663): every key
    /// asked so far, and the counter of the keys the task names itself.
    used_keys: HashSet<String>,
    next_key: u64,
    /// The handler's last progress, the status message while it works.
    progress: Option<String>,
}

impl Run {
    async fn drive(
        mut self,
        handler: BoxFuture<Result<Map<String, Value>, McpError>>,
        mut inbox: mpsc::Receiver<RunnerEvent>,
        cancel: CancellationToken,
        runners: Arc<Runners>,
    ) {
        let task_id = self.stored.task.task_id.clone();
        let mut handler = handler;
        loop {
            tokio::select! {
                biased;
                event = inbox.recv() => match event {
                    Some(RunnerEvent::Ask { key, method, params, reply }) => {
                        self.ask(key, method, params, reply);
                        self.write().await;
                    }
                    Some(RunnerEvent::Answers(answers)) => {
                        if self.answer(answers) {
                            self.write().await;
                        }
                    }
                    Some(RunnerEvent::Progress(message)) => {
                        if self.show_progress(message) {
                            self.write().await;
                        }
                    }
                    Some(RunnerEvent::Cancel) | None => {
                        cancel.cancel();
                        self.finish(TaskStatus::Cancelled, None, None, Some("Cancelled by the client".into())).await;
                        break;
                    }
                },
                outcome = &mut handler => {
                    match outcome {
                        Ok(mut result) => {
                            result.entry("resultType").or_insert_with(|| Value::from("complete"));
                            self.finish(TaskStatus::Completed, Some(result), None, None).await;
                        }
                        Err(error) => {
                            let message = error.message.clone();
                            let error = serde_json::to_value(&error).unwrap_or(Value::Null);
                            self.finish(TaskStatus::Failed, None, Some(error), Some(message)).await;
                        }
                    }
                    break;
                }
            }
        }
        runners.remove(&task_id);
    }

    /// Records a question under the handler's key, or under a key of its
    /// own when the handler named none (or one already waiting: an answer
    /// must reach exactly one question).
    fn ask(
        &mut self,
        key: Option<String>,
        method: String,
        params: Value,
        reply: oneshot::Sender<Result<Value, McpError>>,
    ) {
        let kind = InputKind::from_method(&method).map_or("input", InputKind::capability);
        let key = match key {
            Some(key) if !self.used_keys.contains(&key) => key,
            _ => loop {
                self.next_key += 1;
                let key = format!("{kind}-{}", self.next_key);
                if !self.used_keys.contains(&key) {
                    break key;
                }
            },
        };
        self.used_keys.insert(key.clone());
        let request = serde_json::json!({"method": method, "params": params});
        self.asked.insert(key, (request, reply));
        self.show_questions();
    }

    /// Hands each answer to its question; whether any was outstanding
    /// (answers to unknown or already answered keys are ignored).
    fn answer(&mut self, answers: Map<String, Value>) -> bool {
        let mut any = false;
        for (key, answer) in answers {
            if let Some((_, reply)) = self.asked.remove(&key) {
                // The handler may have stopped waiting: nothing to do then.
                let _ = reply.send(Ok(answer));
                any = true;
            }
        }
        if any {
            self.show_questions();
        }
        any
    }

    /// The status and `inputRequests` for the questions outstanding.
    fn show_questions(&mut self) {
        let task = &mut self.stored.task;
        // Questions whose handler stopped waiting are no longer asked.
        self.asked.retain(|_, (_, reply)| !reply.is_closed());
        if self.asked.is_empty() {
            task.status = TaskStatus::Working;
            task.input_requests = None;
            task.status_message = self.progress.clone();
        } else {
            task.status = TaskStatus::InputRequired;
            task.input_requests = Some(
                self.asked
                    .iter()
                    .map(|(key, (request, _))| (key.clone(), request.clone()))
                    .collect(),
            );
            task.status_message = Some(format!(
                "Waiting for {} answer(s) through {}",
                self.asked.len(),
                methods::TASKS_UPDATE
            ));
        }
    }

    /// Records the handler's progress; whether the status shown changed
    /// (while questions wait, the status message says so instead).
    fn show_progress(&mut self, message: String) -> bool {
        self.progress = Some(message);
        if !self.asked.is_empty() || self.stored.task.status_message == self.progress {
            return false;
        }
        self.stored.task.status_message = self.progress.clone();
        true
    }

    async fn finish(
        &mut self,
        status: TaskStatus,
        result: Option<Map<String, Value>>,
        error: Option<Value>,
        message: Option<String>,
    ) {
        let now = now_ms();
        let task = &mut self.stored.task;
        task.status = status;
        task.result = result;
        task.error = error;
        task.status_message = message;
        task.input_requests = None;
        // Kept at least until its TTL and `keep_finished` after it ended: a
        // task finishing late stays readable (its `ttlMs` grows).
        let keep_until = match self.writer.ttl {
            Some(ttl) => {
                let until = (self.created_ms + ms(ttl)).max(now + ms(self.writer.keep_finished));
                task.ttl_ms = Some(until - self.created_ms);
                Some(until)
            }
            None => None,
        };
        self.stored.keep_until_ms = keep_until;
        for (_, (_, reply)) in self.asked.drain() {
            let _ = reply.send(Err(McpError::internal("the task ended")));
        }
        self.write().await;
    }

    async fn write(&mut self) {
        self.stored.revision += 1;
        self.stored.task.last_updated_at = iso8601_utc(now_ms());
        if let Err(error) = self.writer.store.put(self.stored.clone()).await {
            tracing::warn!(task = %self.stored.task.task_id, %error, "task state not written");
        }
        self.writer
            .events
            .publish(ServerEvent::Task(Arc::new(self.stored.clone())));
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// The first state of a new task.
pub(crate) fn new_task(
    task_id: String,
    owner: Option<String>,
    ttl: Option<Duration>,
    poll_interval: Duration,
    now: u64,
) -> StoredTask {
    let stamp = iso8601_utc(now);
    // A client polling at the suggested interval must see a quick task
    // before its TTL passes: at most half the TTL.
    let poll_interval = match ttl {
        Some(ttl) => poll_interval.min(ttl / 2),
        None => poll_interval,
    };
    StoredTask {
        task: DetailedTask {
            task_id,
            status: TaskStatus::Working,
            status_message: None,
            created_at: stamp.clone(),
            last_updated_at: stamp,
            ttl_ms: ttl.map(ms),
            poll_interval_ms: Some(ms(poll_interval).max(1)),
            input_requests: None,
            result: None,
            error: None,
        },
        owner,
        keep_until_ms: ttl.map(|ttl| now + ms(ttl)),
        revision: 0,
    }
}
