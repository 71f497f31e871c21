//! Tasks (SEP-2663) on the server: a `tools/call` answered with a task
//! handle while its handler goes on, followed by the client with
//! `tasks/get`, `tasks/update` and `tasks/cancel`.
//!
//! - [`TaskStore`] keeps every task's state where any request can read it;
//!   [`MemoryTaskStore`] is the bounded in-process default. The trait is
//!   asynchronous so a store shared by replicas (Redis) fits behind it.
//! - `runner.rs` runs a task's handler: it owns the handler's future, the
//!   questions it asked (answered through `tasks/update`) and its
//!   cancellation, and writes each change to the store, one at a time.
//! - `primitives/tasks.rs` answers the three methods; `primitives/tools.rs`
//!   decides when a call becomes a task.

mod handoff;
mod memory;
#[cfg(feature = "redis")]
mod redis;
mod runner;

pub(crate) use handoff::{Started, TaskHandoff};
pub use memory::{MemoryTaskLimits, MemoryTaskStore};
#[cfg(feature = "redis")]
pub use redis::{RedisTaskOptions, RedisTaskStore, TASK_STORE_ENV};
pub(crate) use runner::{NewRun, RunInputs, RunnerEvent, Runners, TaskWriter, new_task};

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::BoxFuture;
use crate::protocol::tasks::DetailedTask;

/// Whether a tool's calls may become tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskSupport {
    /// Never: every call is answered with its result.
    #[default]
    Forbidden,
    /// When the client declared the tasks extension on the request; a
    /// client that did not gets the plain result.
    Optional,
    /// Always: a client that did not declare the extension gets `-32021`
    /// naming it, before the handler runs.
    Required,
}

/// When a call of a task-supporting tool becomes a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TaskStart {
    /// As it arrives: the handler runs inside the task from its first line,
    /// and asks for input through the task (`tasks/update`).
    #[default]
    OnCall,
    /// When the handler calls [`RequestContext::start_task`]: until then the
    /// call is a plain request, whose questions are multi round-trip
    /// (`InputRequiredResult`); a handler that never calls it answers with
    /// its result.
    ///
    /// [`RequestContext::start_task`]: crate::server::RequestContext::start_task
    ByHandler,
}

/// How a tool's calls relate to tasks; see [`Server::add_tool_with`](crate::server::Server::add_tool_with).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToolTaskOptions {
    /// Whether calls may become tasks.
    pub support: TaskSupport,
    /// When they do.
    pub start: TaskStart,
}

impl ToolTaskOptions {
    /// Reads a tool's task settings as hosts spell them: `support` one of
    /// `"forbidden"` (or `None`), `"optional"`, `"required"`; `start` one of
    /// `"call"` (or `None`), `"handler"`. The error names what was wrong.
    ///
    /// ```
    /// use ferromcp::server::{TaskStart, TaskSupport, ToolTaskOptions};
    /// let options = ToolTaskOptions::from_names(Some("required"), Some("handler")).unwrap();
    /// assert_eq!(options.support, TaskSupport::Required);
    /// assert_eq!(options.start, TaskStart::ByHandler);
    /// assert!(ToolTaskOptions::from_names(Some("always"), None).is_err());
    /// ```
    pub fn from_names(support: Option<&str>, start: Option<&str>) -> Result<Self, String> {
        let support = match support {
            None | Some("forbidden") => TaskSupport::Forbidden,
            Some("optional") => TaskSupport::Optional,
            Some("required") => TaskSupport::Required,
            Some(other) => {
                return Err(format!(
                    "task must be \"optional\", \"required\" or \"forbidden\", not {other:?}"
                ));
            }
        };
        let start = match start {
            None | Some("call") => TaskStart::OnCall,
            Some("handler") => TaskStart::ByHandler,
            Some(other) => {
                return Err(format!(
                    "task start must be \"call\" or \"handler\", not {other:?}"
                ));
            }
        };
        if support == TaskSupport::Forbidden && start == TaskStart::ByHandler {
            return Err("a task start needs task support (\"optional\" or \"required\")".into());
        }
        Ok(ToolTaskOptions { support, start })
    }
}

/// The server's task settings (part of [`ServerOptions`](super::ServerOptions)).
#[derive(Clone)]
pub struct TaskOptions {
    /// Where tasks are kept. Default: a [`MemoryTaskStore`] with
    /// [`MemoryTaskLimits::default`].
    pub store: Arc<dyn TaskStore>,
    /// `ttlMs`: how long after its creation a task is kept at least;
    /// `None` keeps finished tasks until the store's limits push them out.
    /// A task still running is never dropped, and one that finishes late
    /// is kept [`TaskOptions::keep_finished`] longer (its `ttlMs` grows).
    pub ttl: Option<Duration>,
    /// How long a finished task stays readable at least.
    pub keep_finished: Duration,
    /// `pollIntervalMs` suggested to clients; at most half of
    /// [`TaskOptions::ttl`], so that a client polling at that pace sees a
    /// quick task's result before it expires.
    pub poll_interval: Duration,
}

impl Default for TaskOptions {
    /// The store `FERROMCP_TASK_STORE` names (`redis://...`), else
    /// memory.
    fn default() -> Self {
        TaskOptions {
            store: store_for_limits(MemoryTaskLimits::default()),
            ttl: Some(Duration::from_secs(3600)),
            keep_finished: Duration::from_secs(60),
            poll_interval: Duration::from_millis(500),
        }
    }
}

impl std::fmt::Debug for TaskOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskOptions")
            .field("ttl", &self.ttl)
            .field("keep_finished", &self.keep_finished)
            .field("poll_interval", &self.poll_interval)
            .finish_non_exhaustive()
    }
}

/// The store for these limits: the one `FERROMCP_TASK_STORE` names,
/// else a [`MemoryTaskStore`].
pub(crate) fn store_for_limits(limits: MemoryTaskLimits) -> Arc<dyn TaskStore> {
    #[cfg(feature = "redis")]
    if let Some(store) = redis::from_env(limits) {
        return store;
    }
    Arc::new(MemoryTaskStore::new(limits))
}

/// A task as a store keeps it (and as replicas tell each other of it: it
/// serialises as JSON, the task in `tasks/get`'s camelCase).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StoredTask {
    /// What `tasks/get` answers.
    pub task: DetailedTask,
    /// Who may read, answer and cancel it: the token's subject (or client
    /// id) on a protected server, `None` otherwise (the unguessable id is
    /// then the only key, as the SEP allows).
    pub owner: Option<String>,
    /// Milliseconds since the Unix epoch after which a finished task may be
    /// dropped (a running one never is).
    pub keep_until_ms: Option<u64>,
    /// Incremented by every write: a store keeps the highest it saw, so
    /// two writes arriving out of order cannot step a task back.
    pub revision: u64,
}

/// Why a store refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TaskStoreError {
    /// No task with this id for this caller (never created, expired, or
    /// someone else's: the three look the same).
    #[error("Task not found")]
    NotFound,
    /// A limit of the store was reached.
    #[error("{0}")]
    Full(String),
    /// The store itself failed (a lost connection...).
    #[error("task store failed: {0}")]
    Failed(String),
}

/// Where tasks are kept, for every request (and, with a shared store, every
/// replica) to read.
///
/// Creation is strongly consistent: once `create` resolves, `get` finds the
/// task (SEP-2663, "Task Creation Consistency"). A store never drops a task
/// that is not terminal.
pub trait TaskStore: Send + Sync + 'static {
    /// Records a new task; fails with [`TaskStoreError::Full`] past a limit.
    fn create(&self, task: StoredTask) -> BoxFuture<Result<(), TaskStoreError>>;
    /// The task `task_id` if `owner` may see it.
    fn get(
        &self,
        task_id: String,
        owner: Option<String>,
    ) -> BoxFuture<Result<StoredTask, TaskStoreError>>;
    /// Replaces a task's state, unless the store holds a later revision or
    /// the task is already terminal.
    fn put(&self, task: StoredTask) -> BoxFuture<Result<(), TaskStoreError>>;
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// What a task id is sealed for (see [`sealed_task_id`]).
pub(crate) const TASK_ID_PURPOSE: &str = "task-id";

/// A new task id: 128 random bits sealed with the server's key, so every
/// replica with the same keys knows an id it made from one it did not (a
/// forged or mistyped id is refused before the store is asked).
pub(crate) fn sealed_task_id(key: &crate::server::SealKey) -> String {
    key.seal(TASK_ID_PURPOSE, &random_128())
}

/// A new, unguessable id: 128 random bits as 32 hex digits.
pub(crate) fn new_task_id() -> String {
    random_128().iter().map(|b| format!("{b:02x}")).collect()
}

fn random_128() -> [u8; 16] {
    let mut bytes = [0u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        // No entropy source: ids must still be unique and hard to guess, so
        // mix the clock, the process and a counter through SHA-256.
        use sha2::Digest;
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let seed = format!("{:?}{}{n}", SystemTime::now(), std::process::id());
        bytes.copy_from_slice(&sha2::Sha256::digest(seed.as_bytes())[..16]);
    }
    bytes
}
