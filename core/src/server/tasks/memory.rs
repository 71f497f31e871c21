//! The in-process task store: bounded, and never dropping a running task.
//!
//! Finished tasks are kept until their `keep_until_ms` passes; when a limit
//! is reached the finished task due to go first makes room. Only when every
//! task in the way is still running is creation refused, with an error that
//! says which limit was reached.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{StoredTask, TaskStore, TaskStoreError, now_ms};
use crate::BoxFuture;
use crate::rpc::lock_unpoisoned;

/// How many tasks a [`MemoryTaskStore`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryTaskLimits {
    /// All tasks, running or finished.
    pub max_tasks: usize,
    /// The tasks of one owner (one token subject; on an unprotected server
    /// every client is the same owner).
    pub max_tasks_per_owner: usize,
}

impl Default for MemoryTaskLimits {
    fn default() -> Self {
        MemoryTaskLimits {
            max_tasks: 10_000,
            max_tasks_per_owner: 1_000,
        }
    }
}

/// Tasks in this process's memory. Cheap to share behind an `Arc`.
#[derive(Debug)]
pub struct MemoryTaskStore {
    limits: MemoryTaskLimits,
    tasks: Mutex<HashMap<String, StoredTask>>,
}

impl MemoryTaskStore {
    /// An empty store with these limits.
    ///
    /// ```
    /// use ferromcp::server::{MemoryTaskLimits, MemoryTaskStore};
    /// let store = MemoryTaskStore::new(MemoryTaskLimits { max_tasks: 100, max_tasks_per_owner: 10 });
    /// assert_eq!(store.len(), 0);
    /// ```
    pub fn new(limits: MemoryTaskLimits) -> Self {
        MemoryTaskStore {
            limits,
            tasks: Mutex::new(HashMap::new()),
        }
    }

    /// How many tasks are kept now.
    pub fn len(&self) -> usize {
        lock_unpoisoned(&self.tasks).len()
    }

    /// Whether no task is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn create_now(&self, task: StoredTask) -> Result<(), TaskStoreError> {
        let mut tasks = lock_unpoisoned(&self.tasks);
        let now = now_ms();
        tasks.retain(|_, t| !expired(t, now));
        let owned = |tasks: &HashMap<String, StoredTask>| {
            tasks.values().filter(|t| t.owner == task.owner).count()
        };
        if owned(&tasks) >= self.limits.max_tasks_per_owner
            && !evict_finished(&mut tasks, Some(&task.owner))
        {
            return Err(TaskStoreError::Full(format!(
                "Too many tasks: this client has {} running (limit {}); wait for one to finish or cancel one",
                owned(&tasks),
                self.limits.max_tasks_per_owner
            )));
        }
        if tasks.len() >= self.limits.max_tasks && !evict_finished(&mut tasks, None) {
            return Err(TaskStoreError::Full(format!(
                "Too many tasks: the server has {} running (limit {}); try again later",
                tasks.len(),
                self.limits.max_tasks
            )));
        }
        tasks.insert(task.task.task_id.clone(), task);
        Ok(())
    }

    fn get_now(&self, task_id: &str, owner: &Option<String>) -> Result<StoredTask, TaskStoreError> {
        let tasks = lock_unpoisoned(&self.tasks);
        match tasks.get(task_id) {
            Some(t) if &t.owner == owner && !expired(t, now_ms()) => Ok(t.clone()),
            _ => Err(TaskStoreError::NotFound),
        }
    }

    fn put_now(&self, task: StoredTask) -> Result<(), TaskStoreError> {
        let mut tasks = lock_unpoisoned(&self.tasks);
        match tasks.get_mut(&task.task.task_id) {
            Some(kept) if kept.task.status.is_terminal() || kept.revision >= task.revision => {
                Ok(())
            }
            Some(kept) => {
                *kept = task;
                Ok(())
            }
            // Evicted or expired: only finished tasks are, and a finished
            // task is never written again.
            None => Err(TaskStoreError::NotFound),
        }
    }
}

fn expired(task: &StoredTask, now: u64) -> bool {
    task.task.status.is_terminal() && task.keep_until_ms.is_some_and(|until| until < now)
}

/// Drops the finished task due to go first (of `owner`, when given);
/// whether there was one.
fn evict_finished(tasks: &mut HashMap<String, StoredTask>, owner: Option<&Option<String>>) -> bool {
    let victim = tasks
        .values()
        .filter(|t| t.task.status.is_terminal() && owner.is_none_or(|o| &t.owner == o))
        .min_by_key(|t| t.keep_until_ms.unwrap_or(u64::MAX))
        .map(|t| t.task.task_id.clone());
    match victim {
        Some(id) => tasks.remove(&id).is_some(),
        None => false,
    }
}

impl TaskStore for MemoryTaskStore {
    fn create(&self, task: StoredTask) -> BoxFuture<Result<(), TaskStoreError>> {
        Box::pin(std::future::ready(self.create_now(task)))
    }

    fn get(
        &self,
        task_id: String,
        owner: Option<String>,
    ) -> BoxFuture<Result<StoredTask, TaskStoreError>> {
        Box::pin(std::future::ready(self.get_now(&task_id, &owner)))
    }

    fn put(&self, task: StoredTask) -> BoxFuture<Result<(), TaskStoreError>> {
        Box::pin(std::future::ready(self.put_now(task)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::tasks::{DetailedTask, TaskStatus};

    fn task(id: &str, owner: Option<&str>, status: TaskStatus, keep_until: u64) -> StoredTask {
        StoredTask {
            task: DetailedTask {
                task_id: id.into(),
                status,
                status_message: None,
                created_at: String::new(),
                last_updated_at: String::new(),
                ttl_ms: None,
                poll_interval_ms: None,
                input_requests: None,
                result: None,
                error: None,
            },
            owner: owner.map(str::to_owned),
            keep_until_ms: Some(keep_until),
            revision: 0,
        }
    }

    fn store(max: usize, per_owner: usize) -> MemoryTaskStore {
        MemoryTaskStore::new(MemoryTaskLimits {
            max_tasks: max,
            max_tasks_per_owner: per_owner,
        })
    }

    #[test]
    fn running_tasks_are_never_evicted_and_the_limit_is_named() {
        let s = store(2, 10);
        let later = now_ms() + 60_000;
        s.create_now(task("a", None, TaskStatus::Working, later))
            .unwrap();
        s.create_now(task("b", None, TaskStatus::InputRequired, later))
            .unwrap();
        let err = s
            .create_now(task("c", None, TaskStatus::Working, later))
            .unwrap_err();
        assert!(
            matches!(&err, TaskStoreError::Full(m) if m.contains("limit 2")),
            "{err}"
        );
        assert!(s.get_now("a", &None).is_ok() && s.get_now("b", &None).is_ok());
    }

    #[test]
    fn a_finished_task_makes_room_oldest_first() {
        let s = store(2, 10);
        let now = now_ms();
        s.create_now(task("old", None, TaskStatus::Completed, now + 10_000))
            .unwrap();
        s.create_now(task("new", None, TaskStatus::Completed, now + 20_000))
            .unwrap();
        s.create_now(task("c", None, TaskStatus::Working, now + 30_000))
            .unwrap();
        assert_eq!(s.get_now("old", &None), Err(TaskStoreError::NotFound));
        assert!(s.get_now("new", &None).is_ok());
    }

    #[test]
    fn the_per_owner_limit_leaves_other_owners_alone() {
        let s = store(10, 1);
        let later = now_ms() + 60_000;
        s.create_now(task("a", Some("alice"), TaskStatus::Working, later))
            .unwrap();
        assert!(
            s.create_now(task("a2", Some("alice"), TaskStatus::Working, later))
                .is_err()
        );
        s.create_now(task("b", Some("bob"), TaskStatus::Working, later))
            .unwrap();
    }

    #[test]
    fn another_owner_sees_nothing_and_expired_tasks_go() {
        let s = store(10, 10);
        s.create_now(task("a", Some("alice"), TaskStatus::Working, 0))
            .unwrap();
        assert_eq!(
            s.get_now("a", &Some("bob".into())),
            Err(TaskStoreError::NotFound)
        );
        assert_eq!(s.get_now("a", &None), Err(TaskStoreError::NotFound));
        // Running past its keep-until: still there.
        assert!(s.get_now("a", &Some("alice".into())).is_ok());
        let mut done = task("a", Some("alice"), TaskStatus::Completed, 0);
        done.revision = 1;
        s.put_now(done).unwrap();
        assert_eq!(
            s.get_now("a", &Some("alice".into())),
            Err(TaskStoreError::NotFound)
        );
    }

    #[test]
    fn writes_never_step_back() {
        let s = store(10, 10);
        let later = now_ms() + 60_000;
        s.create_now(task("a", None, TaskStatus::Working, later))
            .unwrap();
        let mut done = task("a", None, TaskStatus::Completed, later);
        done.revision = 2;
        s.put_now(done).unwrap();
        let mut stale = task("a", None, TaskStatus::Working, later);
        stale.revision = 1;
        s.put_now(stale).unwrap();
        assert_eq!(
            s.get_now("a", &None).unwrap().task.status,
            TaskStatus::Completed
        );
        let mut after = task("a", None, TaskStatus::Working, later);
        after.revision = 3;
        s.put_now(after).unwrap();
        assert_eq!(
            s.get_now("a", &None).unwrap().task.status,
            TaskStatus::Completed
        );
    }
}
