//! A server's task settings (the tasks extension) as every binding
//! receives them from its host: one JSON object, camelCase or the
//! snake_case a Python host uses, read once here into core's
//! [`TaskOptions`] with one message per mistake.

use std::time::Duration;

use serde_json::Value;

use super::given::Given;
use crate::server::{MemoryTaskLimits, MemoryTaskStore, TaskOptions};
use std::sync::Arc;

/// The members, camelCase first and the snake_case alias second.
const MEMBERS: [(&str, &str); 6] = [
    ("store", "store"),
    ("ttlMs", "ttl_ms"),
    ("keepFinishedMs", "keep_finished_ms"),
    ("pollIntervalMs", "poll_interval_ms"),
    ("maxTasks", "max_tasks"),
    ("maxTasksPerClient", "max_tasks_per_client"),
];

/// Reads task settings into [`TaskOptions`] over a [`MemoryTaskStore`];
/// what is absent keeps its default.
///
/// - `ttlMs`: how long after its creation a task is kept at least
///   (default one hour); `null` keeps finished tasks until the limits push
///   them out;
/// - `keepFinishedMs`: how long a finished task stays readable at least
///   (default 60 s);
/// - `pollIntervalMs`: the `pollIntervalMs` suggested to clients (default
///   500; at most half of `ttlMs`);
/// - `maxTasks`, `maxTasksPerClient`: the store's limits (default 10,000
///   and 1,000): past them, creating a task fails with a message naming
///   the limit, and finished tasks make room first;
/// - `store`: `"memory"` (this process) or a `redis://` URL, where every
///   replica finds the tasks (default: `FERROMCP_TASK_STORE`, else memory).
///
/// ```
/// use ferromcp::host::task_settings::task_options;
/// use serde_json::json;
///
/// let options = task_options(&json!({"ttlMs": 2000, "poll_interval_ms": 50}))?;
/// assert_eq!(options.ttl, Some(std::time::Duration::from_secs(2)));
/// assert_eq!(options.poll_interval, std::time::Duration::from_millis(50));
///
/// let error = task_options(&json!({"maxTasks": 0})).unwrap_err();
/// assert_eq!(error, r#""maxTasks" must be a positive integer, not 0"#);
/// # Ok::<(), String>(())
/// ```
pub fn task_options(settings: &Value) -> Result<TaskOptions, String> {
    let map = match settings {
        Value::Null => return Ok(TaskOptions::default()),
        Value::Object(map) => map,
        other => return Err(format!("task settings must be an object, got {other}")),
    };
    let given = Given::read(map, &MEMBERS, "task setting")?.members;
    let mut options = TaskOptions::default();
    let mut limits = MemoryTaskLimits::default();
    let mut store = None;
    for (camel, key, value) in given {
        match camel {
            "store" => {
                store = Some(value.as_str().ok_or_else(|| {
                    format!("{key:?} must be \"memory\" or a redis:// URL, not {value}")
                })?)
            }
            "ttlMs" => {
                options.ttl = match value {
                    Value::Null => None,
                    value => Some(millis(key, value)?),
                }
            }
            "keepFinishedMs" => options.keep_finished = millis(key, value)?,
            "pollIntervalMs" => options.poll_interval = millis(key, value)?,
            "maxTasks" => limits.max_tasks = positive(key, value)?,
            _ => limits.max_tasks_per_owner = positive(key, value)?,
        }
    }
    options.store = match store {
        None => crate::server::tasks::store_for_limits(limits),
        Some("memory") => Arc::new(MemoryTaskStore::new(limits)),
        Some(url) => redis_store(url, limits)?,
    };
    Ok(options)
}

#[cfg(feature = "redis")]
fn redis_store(
    url: &str,
    limits: MemoryTaskLimits,
) -> Result<Arc<dyn crate::server::TaskStore>, String> {
    let options = crate::server::RedisTaskOptions {
        limits,
        ..Default::default()
    };
    Ok(Arc::new(crate::server::RedisTaskStore::new(url, options)?))
}

#[cfg(not(feature = "redis"))]
fn redis_store(
    url: &str,
    _: MemoryTaskLimits,
) -> Result<Arc<dyn crate::server::TaskStore>, String> {
    Err(format!(
        "task store {url:?}: this build of ferromcp has no Redis support"
    ))
}

fn millis(key: &str, value: &Value) -> Result<Duration, String> {
    value
        .as_u64()
        .map(Duration::from_millis)
        .ok_or_else(|| format!("{key:?} must be a whole number of milliseconds, not {value}"))
}

fn positive(key: &str, value: &Value) -> Result<usize, String> {
    value
        .as_u64()
        .filter(|n| *n > 0)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| format!("{key:?} must be a positive integer, not {value}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_member_is_read_in_both_spellings() {
        for settings in [
            json!({"ttlMs": null, "keepFinishedMs": 5, "pollIntervalMs": 7, "maxTasks": 3, "maxTasksPerClient": 2}),
            json!({"ttl_ms": null, "keep_finished_ms": 5, "poll_interval_ms": 7, "max_tasks": 3, "max_tasks_per_client": 2}),
        ] {
            let options = task_options(&settings).unwrap();
            assert_eq!(options.ttl, None);
            assert_eq!(options.keep_finished, Duration::from_millis(5));
            assert_eq!(options.poll_interval, Duration::from_millis(7));
        }
        assert_eq!(
            task_options(&json!({})).unwrap().ttl,
            TaskOptions::default().ttl
        );
    }

    #[test]
    fn mistakes_name_the_member() {
        let cases = [
            (json!({"ttl": 5}), r#"unknown task setting "ttl""#),
            (
                json!({"ttlMs": 1, "ttl_ms": 2}),
                r#"task setting "ttlMs" is given twice"#,
            ),
            (
                json!({"keep_finished_ms": -1}),
                r#""keep_finished_ms" must be a whole number of milliseconds, not -1"#,
            ),
            (json!([]), "task settings must be an object, got []"),
        ];
        for (settings, message) in cases {
            assert_eq!(task_options(&settings).unwrap_err(), message);
        }
    }
}
