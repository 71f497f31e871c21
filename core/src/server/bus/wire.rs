//! What the bus's payloads mean: JSON objects, `{"o": origin, "e": event}`
//! for a change, `{"o": origin, "c": {"task": id, ...}}` for a message to a
//! task's runner. Replicas of different ferromcp versions may share a bus,
//! so an unknown kind of event is skipped, never an error that stops the
//! reader.

use serde_json::{Map, Value, json};

use super::super::subscriptions::ServerEvent;
use super::super::tasks::{RunnerEvent, StoredTask};

/// A payload read back.
pub(super) struct Message {
    /// The server that published it.
    pub(super) origin: String,
    pub(super) body: Body,
}

pub(super) enum Body {
    Event(ServerEvent),
    /// For the runner of `task_id`, wherever it runs.
    Control {
        task_id: String,
        event: RunnerEvent,
    },
}

/// `event` as a payload; `None` for what never crosses replicas.
pub(super) fn event(origin: &str, event: &ServerEvent) -> Option<Vec<u8>> {
    let body = match event {
        ServerEvent::ToolsChanged => json!({"t": "tools"}),
        ServerEvent::PromptsChanged => json!({"t": "prompts"}),
        ServerEvent::ResourcesChanged => json!({"t": "resources"}),
        ServerEvent::ResourceUpdated(uri) => json!({"t": "updated", "uri": uri}),
        ServerEvent::Task(stored) => json!({"t": "task", "task": stored.as_ref()}),
        // A replica's own gap is its own business.
        ServerEvent::Gap => return None,
    };
    serde_json::to_vec(&json!({"o": origin, "e": body})).ok()
}

/// A message for a task's runner as a payload; `None` for what only the
/// runner's own replica makes (a question, progress).
pub(super) fn control(origin: &str, task_id: &str, event: &RunnerEvent) -> Option<Vec<u8>> {
    let body = match event {
        RunnerEvent::Answers(answers) => json!({"task": task_id, "answers": answers}),
        RunnerEvent::Cancel => json!({"task": task_id, "cancel": true}),
        RunnerEvent::Ask { .. } | RunnerEvent::Progress(_) => return None,
    };
    serde_json::to_vec(&json!({"o": origin, "c": body})).ok()
}

/// Reads a payload.
pub(super) fn read(payload: &[u8]) -> Result<Message, String> {
    let mut message: Map<String, Value> =
        serde_json::from_slice(payload).map_err(|e| format!("not a JSON object: {e}"))?;
    let Some(Value::String(origin)) = message.remove("o") else {
        return Err("no origin".into());
    };
    let body = if let Some(Value::Object(mut event)) = message.remove("e") {
        let event = match event.get("t").and_then(Value::as_str) {
            Some("tools") => ServerEvent::ToolsChanged,
            Some("prompts") => ServerEvent::PromptsChanged,
            Some("resources") => ServerEvent::ResourcesChanged,
            Some("updated") => match event.remove("uri") {
                Some(Value::String(uri)) => ServerEvent::ResourceUpdated(uri),
                _ => return Err("a resource update without its uri".into()),
            },
            Some("task") => {
                let task: StoredTask =
                    serde_json::from_value(event.remove("task").unwrap_or_default())
                        .map_err(|e| format!("a task event: {e}"))?;
                ServerEvent::Task(std::sync::Arc::new(task))
            }
            other => return Err(format!("unknown event {other:?}")),
        };
        Body::Event(event)
    } else if let Some(Value::Object(mut control)) = message.remove("c") {
        let Some(Value::String(task_id)) = control.remove("task") else {
            return Err("a task message without its task".into());
        };
        let event = match (control.remove("answers"), control.remove("cancel")) {
            (Some(Value::Object(answers)), None) => RunnerEvent::Answers(answers),
            (None, Some(Value::Bool(true))) => RunnerEvent::Cancel,
            _ => return Err("a task message that is neither answers nor a cancel".into()),
        };
        Body::Control { task_id, event }
    } else {
        return Err("neither an event nor a task message".into());
    };
    Ok(Message { origin, body })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_and_task_messages_read_back_as_written() {
        let events = [
            ServerEvent::ToolsChanged,
            ServerEvent::PromptsChanged,
            ServerEvent::ResourcesChanged,
            ServerEvent::ResourceUpdated("file:///a b".into()),
        ];
        for sent in events {
            let payload = event("me", &sent).unwrap();
            let read = read(&payload).unwrap();
            assert_eq!(read.origin, "me");
            assert!(matches!(read.body, Body::Event(e) if e == sent));
        }
        assert!(event("me", &ServerEvent::Gap).is_none());
        let mut answers = Map::new();
        answers.insert("k".into(), json!({"action": "accept"}));
        let payload = control("me", "t1", &RunnerEvent::Answers(answers.clone())).unwrap();
        assert!(matches!(
            read(&payload).unwrap().body,
            Body::Control { task_id, event: RunnerEvent::Answers(a) } if task_id == "t1" && a == answers
        ));
        let payload = control("me", "t1", &RunnerEvent::Cancel).unwrap();
        assert!(matches!(
            read(&payload).unwrap().body,
            Body::Control {
                event: RunnerEvent::Cancel,
                ..
            }
        ));
    }

    #[test]
    fn foreign_payloads_are_errors_not_panics() {
        for payload in [
            &b"not json"[..],
            br#"[]"#,
            br#"{"e": {"t": "tools"}}"#,
            br#"{"o": "x", "e": {"t": "future-kind"}}"#,
            br#"{"o": "x", "e": {"t": "updated"}}"#,
            br#"{"o": "x", "e": {"t": "task", "task": 5}}"#,
            br#"{"o": "x", "c": {"task": "t", "cancel": false}}"#,
            br#"{"o": "x"}"#,
        ] {
            assert!(
                read(payload).is_err(),
                "{}",
                String::from_utf8_lossy(payload)
            );
        }
    }
}
