//! The tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`): a
//! `tools/call` answered with a task handle the client follows with
//! `tasks/get`, `tasks/update` and `tasks/cancel` (spec:
//! extensions/tasks/sep-2663-tasks-extension.mdx).
//!
//! Only wire facts live here: the identifier, the statuses, the task as it
//! travels and the timestamps it carries. The server's task store is in
//! `server::tasks`, the client's follower in `client::tasks`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The extension identifier, declared under `capabilities.extensions` by
/// the server (`server/discover`) and in every request's client
/// capabilities by a client that can take a task.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// `resultType` of a `CreateTaskResult`.
pub const RESULT_TYPE_TASK: &str = "task";

/// Whether a request's client capabilities (`_meta`'s
/// `io.modelcontextprotocol/clientCapabilities`) declare the tasks
/// extension. A client declaring only the 2025-11-25 `tasks` capability
/// does not (SEP-2663, "Backward Compatibility").
pub fn declares_tasks(client_capabilities: &Map<String, Value>) -> bool {
    client_capabilities
        .get("extensions")
        .and_then(Value::as_object)
        .is_some_and(|extensions| extensions.contains_key(TASKS_EXTENSION))
}

/// The `data` of the `-32021` error for a request that needs the client to
/// declare the extension.
pub fn required_capability_data() -> Value {
    json!({"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})
}

/// Where a task stands (schema: `Task.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The request is being processed.
    Working,
    /// The server waits for answers to the task's `inputRequests`.
    InputRequired,
    /// Finished with a result (a tool result with `isError: true` too).
    Completed,
    /// Ended by a JSON-RPC error, carried in `error`.
    Failed,
    /// Cancelled before it finished.
    Cancelled,
}

impl TaskStatus {
    /// `completed`, `failed` and `cancelled`: the task no longer changes.
    pub const fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }

    /// The wire name.
    pub const fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }
}

impl std::fmt::Display for TaskStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task with the payload of its status (schema: `DetailedTask`), as
/// `tasks/get` answers it, `notifications/tasks` carries it and, without
/// the payload, `CreateTaskResult` seeds it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DetailedTask {
    /// Stable, unguessable identifier.
    pub task_id: String,
    /// Current status.
    pub status: TaskStatus,
    /// What the task is doing, waiting for, or why it ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// ISO 8601 (UTC) creation time.
    pub created_at: String,
    /// ISO 8601 (UTC) time of the last change.
    pub last_updated_at: String,
    /// How long after creation the server keeps the task (ms); `null`:
    /// no limit. Always present on the wire.
    pub ttl_ms: Option<u64>,
    /// Suggested polling interval (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// `input_required`: the outstanding requests, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<Map<String, Value>>,
    /// `completed`: what the request would have returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Map<String, Value>>,
    /// `failed`: the JSON-RPC error object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
}

impl DetailedTask {
    /// The task as a JSON object (the members of a result or notification).
    pub fn to_map(&self) -> Map<String, Value> {
        match serde_json::to_value(self) {
            Ok(Value::Object(map)) => map,
            // A struct of strings, numbers and maps always serialises.
            _ => Map::new(),
        }
    }
}

/// Milliseconds since the Unix epoch as ISO 8601 UTC with milliseconds
/// (`2026-12-05T01:02:03.456Z`), the form `createdAt`/`lastUpdatedAt`
/// carry.
pub fn iso8601_utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let millis = unix_ms % 1000;
    let days = (secs / 86_400) as i64;
    let of_day = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        of_day / 3600,
        (of_day / 60) % 60,
        of_day % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`, valid far beyond any clock we will read).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_iso8601_utc() {
        assert_eq!(iso8601_utc(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day of a century leap year) 12:34:56.789.
        assert_eq!(iso8601_utc(951_827_696_789), "2000-02-29T12:34:56.789Z");
        assert_eq!(iso8601_utc(1_796_432_400_000), "2026-12-05T01:00:00.000Z");
    }

    #[test]
    fn statuses_use_the_wire_names() {
        for status in [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Completed,
            TaskStatus::Failed,
            TaskStatus::Cancelled,
        ] {
            assert_eq!(
                serde_json::to_value(status).unwrap(),
                Value::from(status.as_str())
            );
        }
        assert!(TaskStatus::Cancelled.is_terminal());
        assert!(!TaskStatus::InputRequired.is_terminal());
    }

    #[test]
    fn ttl_is_always_written_and_payloads_only_when_set() {
        let task = DetailedTask {
            task_id: "t".into(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: iso8601_utc(0),
            last_updated_at: iso8601_utc(0),
            ttl_ms: None,
            poll_interval_ms: Some(500),
            input_requests: None,
            result: None,
            error: None,
        };
        let map = task.to_map();
        assert_eq!(map["ttlMs"], Value::Null);
        assert_eq!(map["pollIntervalMs"], 500);
        for absent in ["result", "error", "inputRequests", "statusMessage"] {
            assert!(!map.contains_key(absent), "{absent}");
        }
    }

    #[test]
    fn only_the_extension_declares_tasks() {
        let caps = |v: Value| v.as_object().cloned().unwrap();
        assert!(declares_tasks(&caps(
            json!({"extensions": {TASKS_EXTENSION: {}}})
        )));
        // The 2025-11-25 capability is not the extension.
        assert!(!declares_tasks(&caps(json!({"tasks": {"list": {}}}))));
        assert!(!declares_tasks(&caps(json!({}))));
    }
}
