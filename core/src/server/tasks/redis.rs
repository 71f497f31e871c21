//! Tasks kept in Redis, where every replica reads them.
//!
//! A task is one key (`{prefix}task:{id}`: its JSON and the replica that
//! runs it); each owner's tasks, and all of them, are sorted sets by
//! creation time, which bound how many there are. Writes are Lua scripts,
//! so "never step back, never change a finished task" holds across
//! replicas exactly as in [`MemoryTaskStore`](super::MemoryTaskStore). A
//! finished task's key expires when its `keep_until_ms` passes; a running
//! task never expires.
//!
//! A task's handler runs on the replica that created it. Each replica that
//! runs tasks keeps a heartbeat key alive (`{prefix}replica:{name}`, a few
//! seconds of TTL, renewed every second). Reading a running task whose
//! replica's heartbeat is gone ends it as failed, with an error that says
//! so: a task never hangs because its replica died.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::{IntoConnectionInfo, Script};
use serde_json::json;
use tokio::sync::OnceCell;

use super::{MemoryTaskLimits, StoredTask, TaskStore, TaskStoreError, now_ms};
use crate::BoxFuture;
use crate::protocol::tasks::TaskStatus;

/// The environment variable naming the task store: `redis://host:port[/db]`;
/// unset, tasks are kept in the process ([`MemoryTaskStore`](super::MemoryTaskStore)).
pub const TASK_STORE_ENV: &str = "FERROMCP_TASK_STORE";

/// How long a replica's heartbeat outlives its last renewal: a replica
/// silent this long is taken for dead and its running tasks fail.
const HEARTBEAT_TTL: Duration = Duration::from_secs(5);
const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);
/// How long a task that failed because its replica died stays readable.
const ORPHAN_KEEP: Duration = Duration::from_secs(600);

/// Settings of a [`RedisTaskStore`].
#[derive(Debug, Clone)]
pub struct RedisTaskOptions {
    /// How many tasks, and how many per owner; past them, finished tasks
    /// make room (oldest first), and creation fails if none is finished.
    pub limits: MemoryTaskLimits,
    /// Prefixed to every key (several servers sharing one Redis).
    pub prefix: String,
    /// This replica's name in its heartbeat; default
    /// `FERROMCP_REPLICA`, else a random one.
    pub replica: Option<String>,
}

impl Default for RedisTaskOptions {
    fn default() -> Self {
        RedisTaskOptions {
            limits: MemoryTaskLimits::default(),
            prefix: "ferromcp:".into(),
            replica: None,
        }
    }
}

/// A [`TaskStore`] in Redis, shared by every replica that uses the same
/// Redis and prefix.
///
/// ```no_run
/// use std::sync::Arc;
/// use ferromcp::server::{RedisTaskOptions, RedisTaskStore, ServerOptions, TaskOptions};
/// let store = RedisTaskStore::new("redis://127.0.0.1:6379", RedisTaskOptions::default())?;
/// let options = ServerOptions {
///     tasks: TaskOptions { store: Arc::new(store), ..TaskOptions::default() },
///     ..ServerOptions::default()
/// };
/// # Ok::<(), String>(())
/// ```
#[derive(Clone)]
pub struct RedisTaskStore {
    inner: Arc<Inner>,
}

struct Inner {
    client: redis::Client,
    options: RedisTaskOptions,
    replica: String,
    connection: OnceCell<ConnectionManager>,
    heartbeat: OnceLock<()>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("options", &self.inner.options)
            .field("replica", &self.inner.replica)
            .finish_non_exhaustive()
    }
}

/// The store's record of a task.
#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    #[serde(rename = "s")]
    stored: StoredTask,
    /// The replica whose process runs the handler.
    #[serde(rename = "r")]
    runner: String,
}

impl RedisTaskStore {
    /// A store on the Redis at `url`. Checks the URL only; connects when
    /// first used (and reconnects after a lost connection).
    pub fn new(url: &str, options: RedisTaskOptions) -> Result<RedisTaskStore, String> {
        if url.starts_with("rediss://") {
            return Err("rediss:// (Redis over TLS) is not supported yet: use redis:// on a private network".into());
        }
        let info = url
            .into_connection_info()
            .map_err(|e| format!("invalid Redis URL {url:?}: {e}"))?;
        let client =
            redis::Client::open(info).map_err(|e| format!("invalid Redis URL {url:?}: {e}"))?;
        let replica = options
            .replica
            .clone()
            .or_else(super::super::replica_from_env)
            .unwrap_or_else(|| super::new_task_id()[..12].to_owned());
        Ok(RedisTaskStore {
            inner: Arc::new(Inner {
                client,
                options,
                replica,
                connection: OnceCell::new(),
                heartbeat: OnceLock::new(),
            }),
        })
    }

    /// The replica name its heartbeat and tasks carry.
    pub fn replica(&self) -> &str {
        &self.inner.replica
    }
}

impl Inner {
    async fn connection(&self) -> Result<ConnectionManager, TaskStoreError> {
        self.connection
            .get_or_try_init(|| async {
                let config = redis::aio::ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(Duration::from_secs(2)))
                    .set_response_timeout(Some(Duration::from_secs(2)))
                    .set_number_of_retries(2);
                self.client
                    .get_connection_manager_with_config(config)
                    .await
                    .map_err(failed)
            })
            .await
            .cloned()
    }

    fn key(&self, task_id: &str) -> String {
        format!("{}task:{task_id}", self.options.prefix)
    }

    fn owner_key(&self, owner: &Option<String>) -> String {
        // The owner is the token's subject: hashed, so any text is a key.
        use sha2::Digest;
        let owner = owner.as_deref().map_or_else(
            || "-".to_owned(),
            |o| {
                sha2::Sha256::digest(o.as_bytes())
                    .iter()
                    .take(16)
                    .map(|b| format!("{b:02x}"))
                    .collect()
            },
        );
        format!("{}owner:{owner}", self.options.prefix)
    }

    fn heartbeat_key(&self, replica: &str) -> String {
        format!("{}replica:{replica}", self.options.prefix)
    }

    /// Renews this replica's heartbeat every second from now on, for as
    /// long as the store lives (a replica that created a task).
    async fn beat(self: &Arc<Self>) -> Result<(), TaskStoreError> {
        let key = self.heartbeat_key(&self.replica);
        let connection = self.connection().await?;
        let beat = |mut connection: ConnectionManager, key: String| async move {
            redis::cmd("SET")
                .arg(&key)
                .arg(1)
                .arg("PX")
                .arg(HEARTBEAT_TTL.as_millis() as u64)
                .query_async::<()>(&mut connection)
                .await
        };
        beat(connection.clone(), key.clone())
            .await
            .map_err(failed)?;
        if self.heartbeat.set(()).is_ok() {
            // Weak: a dropped store (its server freed) stops beating, and
            // its connection closes.
            let store = Arc::downgrade(self);
            drop(connection);
            crate::runtime::spawn_here_or_shared(async move {
                let mut every = tokio::time::interval(HEARTBEAT_EVERY);
                every.tick().await;
                loop {
                    every.tick().await;
                    let Some(connection) = store
                        .upgrade()
                        .and_then(|store| store.connection.get().cloned())
                    else {
                        return;
                    };
                    if let Err(error) = beat(connection, key.clone()).await {
                        tracing::warn!(%error, "task store: heartbeat not renewed");
                    }
                }
            });
        }
        Ok(())
    }

    async fn create_now(self: &Arc<Self>, task: StoredTask) -> Result<(), TaskStoreError> {
        self.beat().await?;
        let mut connection = self.connection().await?;
        let id = task.task.task_id.clone();
        let record = Record {
            runner: self.replica.clone(),
            stored: task,
        };
        let owner_key = self.owner_key(&record.stored.owner);
        let json =
            serde_json::to_string(&record).map_err(|e| TaskStoreError::Failed(e.to_string()))?;
        let limits = self.options.limits;
        let answer: String = create_script()
            .key(self.key(&id))
            .key(owner_key)
            .key(format!("{}tasks", self.options.prefix))
            .arg(json)
            .arg(&id)
            .arg(now_ms())
            .arg(limits.max_tasks_per_owner)
            .arg(limits.max_tasks)
            .arg(format!("{}task:", self.options.prefix))
            .invoke_async(&mut connection)
            .await
            .map_err(failed)?;
        match answer.as_str() {
            "ok" => Ok(()),
            "owner" => Err(TaskStoreError::Full(format!(
                "Too many tasks: this client has {} running (limit {}); wait for one to finish or cancel one",
                limits.max_tasks_per_owner, limits.max_tasks_per_owner
            ))),
            _ => Err(TaskStoreError::Full(format!(
                "Too many tasks: the server runs {} (limit {}); try again later",
                limits.max_tasks, limits.max_tasks
            ))),
        }
    }

    async fn get_now(
        &self,
        task_id: String,
        owner: Option<String>,
    ) -> Result<StoredTask, TaskStoreError> {
        let mut connection = self.connection().await?;
        let text: Option<String> = redis::cmd("GET")
            .arg(self.key(&task_id))
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        let record: Record = text
            .and_then(|t| serde_json::from_str(&t).ok())
            .ok_or(TaskStoreError::NotFound)?;
        if record.stored.owner != owner {
            return Err(TaskStoreError::NotFound);
        }
        if record.stored.task.status.is_terminal() {
            return Ok(record.stored);
        }
        let alive: bool = redis::cmd("EXISTS")
            .arg(self.heartbeat_key(&record.runner))
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        if alive {
            return Ok(record.stored);
        }
        // Its replica is gone, and its handler with it: end the task.
        let mut ended = record.stored;
        let now = now_ms();
        ended.revision += 1;
        ended.task.status = TaskStatus::Failed;
        let message = format!(
            "The replica running this task ({}) stopped before the task finished",
            record.runner
        );
        ended.task.status_message = Some(message.clone());
        ended.task.input_requests = None;
        ended.task.error = Some(json!({"code": -32603, "message": message}));
        ended.task.last_updated_at = crate::protocol::tasks::iso8601_utc(now);
        ended.keep_until_ms = Some(now + ORPHAN_KEEP.as_millis() as u64);
        self.write(&mut connection, &ended, &record.runner).await?;
        // Another replica may have ended it first: answer what is kept.
        let text: Option<String> = redis::cmd("GET")
            .arg(self.key(&task_id))
            .query_async(&mut connection)
            .await
            .map_err(failed)?;
        text.and_then(|t| serde_json::from_str::<Record>(&t).ok())
            .map(|r| r.stored)
            .ok_or(TaskStoreError::NotFound)
    }

    async fn write(
        &self,
        connection: &mut ConnectionManager,
        task: &StoredTask,
        runner: &str,
    ) -> Result<bool, TaskStoreError> {
        let record = json!({"s": task, "r": runner});
        let expire_at = match (task.task.status.is_terminal(), task.keep_until_ms) {
            (true, Some(until)) => until,
            _ => 0,
        };
        let written: i64 = put_script()
            .key(self.key(&task.task.task_id))
            .arg(record.to_string())
            .arg(task.revision)
            .arg(expire_at)
            .invoke_async(connection)
            .await
            .map_err(failed)?;
        Ok(written == 1)
    }

    async fn put_now(&self, task: StoredTask) -> Result<(), TaskStoreError> {
        let mut connection = self.connection().await?;
        self.write(&mut connection, &task, &self.replica).await?;
        Ok(())
    }
}

fn failed(error: redis::RedisError) -> TaskStoreError {
    TaskStoreError::Failed(error.to_string())
}

/// KEYS: task, owner set, all set. ARGV: record, id, now, per-owner limit,
/// total limit, task key prefix. Makes room by dropping ids whose task is
/// gone or finished, oldest first; answers "ok", "owner" or "total".
fn create_script() -> &'static Script {
    static SCRIPT: OnceLock<Script> = OnceLock::new();
    SCRIPT.get_or_init(|| {
        Script::new(
            r#"
local function finished(key)
  local text = redis.call('GET', key)
  if not text then return true end
  local status = cjson.decode(text)['s']['task']['status']
  return status == 'completed' or status == 'failed' or status == 'cancelled'
end
local function room(set, limit)
  if redis.call('ZCARD', set) < limit then return true end
  for _, id in ipairs(redis.call('ZRANGE', set, 0, -1)) do
    local key = ARGV[6] .. id
    if finished(key) then
      redis.call('DEL', key)
      redis.call('ZREM', KEYS[2], id)
      redis.call('ZREM', KEYS[3], id)
      if redis.call('ZCARD', set) < limit then return true end
    end
  end
  return false
end
if not room(KEYS[2], tonumber(ARGV[4])) then return 'owner' end
if not room(KEYS[3], tonumber(ARGV[5])) then return 'total' end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[2])
return 'ok'
"#,
        )
    })
}

/// KEYS: task. ARGV: record, revision, expire-at (ms, 0: never). Writes
/// unless the task is gone, finished, or at a later revision; 1 if written.
fn put_script() -> &'static Script {
    static SCRIPT: OnceLock<Script> = OnceLock::new();
    SCRIPT.get_or_init(|| {
        Script::new(
            r#"
local text = redis.call('GET', KEYS[1])
if not text then return 0 end
local kept = cjson.decode(text)['s']
local status = kept['task']['status']
if status == 'completed' or status == 'failed' or status == 'cancelled' then return 0 end
if tonumber(kept['revision']) >= tonumber(ARGV[2]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
if tonumber(ARGV[3]) > 0 then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
return 1
"#,
        )
    })
}

impl TaskStore for RedisTaskStore {
    fn create(&self, task: StoredTask) -> BoxFuture<Result<(), TaskStoreError>> {
        let this = self.inner.clone();
        Box::pin(async move { this.create_now(task).await })
    }

    fn get(
        &self,
        task_id: String,
        owner: Option<String>,
    ) -> BoxFuture<Result<StoredTask, TaskStoreError>> {
        let this = self.inner.clone();
        Box::pin(async move { this.get_now(task_id, owner).await })
    }

    fn put(&self, task: StoredTask) -> BoxFuture<Result<(), TaskStoreError>> {
        let this = self.inner.clone();
        Box::pin(async move { this.put_now(task).await })
    }
}

/// The store named by [`TASK_STORE_ENV`], if set and usable.
pub(crate) fn from_env(limits: MemoryTaskLimits) -> Option<Arc<dyn TaskStore>> {
    let url = std::env::var(TASK_STORE_ENV)
        .ok()
        .filter(|u| !u.is_empty())?;
    match RedisTaskStore::new(
        &url,
        RedisTaskOptions {
            limits,
            ..RedisTaskOptions::default()
        },
    ) {
        Ok(store) => Some(Arc::new(store)),
        Err(error) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::error!(%error, "{TASK_STORE_ENV} ignored: tasks are kept in this process");
            });
            None
        }
    }
}
