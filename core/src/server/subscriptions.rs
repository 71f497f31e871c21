//! `subscriptions/listen` (spec: basic/patterns/subscriptions.mdx): a
//! long-lived request whose response stream carries the change
//! notifications the client opted in to.
//!
//! Changes are published once on a broadcast channel; every open listen
//! request filters them and tags each with its subscription id (the JSON-RPC
//! id of the listen request).

use serde_json::{Map, Value, json};
use tokio::sync::broadcast;

use super::context::RequestContext;
use super::tasks::{StoredTask, TaskStore};
use crate::McpError;
use crate::protocol::{meta, methods};

/// Which primitives this server offers (and so declares as capabilities):
/// a kind is offered once anything of it was registered, even if it was
/// removed again later, so the capability does not flicker.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Offered {
    pub(crate) tools: bool,
    pub(crate) resources: bool,
    pub(crate) prompts: bool,
    /// Some tool's calls may become tasks (the tasks extension).
    pub(crate) tasks: bool,
    /// Skills are published (the skills extension).
    pub(crate) skills: bool,
    /// Some prompt or template completes through a handler of its own
    /// (whether or not the server has a provider).
    pub(crate) completions: bool,
}

/// A change worth telling subscribers about.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum ServerEvent {
    ToolsChanged,
    PromptsChanged,
    ResourcesChanged,
    ResourceUpdated(String),
    /// A task's new state (the tasks extension), for the listeners of its
    /// owner that named it.
    Task(std::sync::Arc<StoredTask>),
    /// Events may have been lost on the way from another replica (the event
    /// bus was disconnected): anything may have changed.
    Gap,
}

impl ServerEvent {
    /// The notification that tells a client about the change, in both eras
    /// (a `subscriptions/listen` stream and a legacy session's stream);
    /// none for a gap, which each reader turns into the changes it watches.
    pub(crate) fn notification(&self) -> Option<(&'static str, Map<String, Value>)> {
        Some(match self {
            ServerEvent::ToolsChanged => (methods::NOTIFICATIONS_TOOLS_LIST_CHANGED, Map::new()),
            ServerEvent::PromptsChanged => {
                (methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED, Map::new())
            }
            ServerEvent::ResourcesChanged => {
                (methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED, Map::new())
            }
            ServerEvent::ResourceUpdated(uri) => {
                let mut params = Map::new();
                params.insert("uri".into(), Value::from(uri.clone()));
                (methods::NOTIFICATIONS_RESOURCES_UPDATED, params)
            }
            // The whole task, as `tasks/get` would answer it.
            ServerEvent::Task(stored) => (methods::NOTIFICATIONS_TASKS, stored.task.to_map()),
            ServerEvent::Gap => return None,
        })
    }
}

/// How many events may queue for a slow subscriber before it is told to
/// re-list everything it watches (see `Lagged` below).
pub(crate) const EVENT_BUFFER: usize = 256;

/// The notification types one subscription asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Filter {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: Vec<String>,
    /// Tasks whose status changes are wanted (`taskIds`), of `owner`.
    task_ids: Vec<String>,
    /// Whose tasks the listener may hear about (see `primitives/tasks.rs`).
    owner: Option<String>,
}

impl Filter {
    pub(crate) fn parse(params: Option<&Map<String, Value>>) -> Result<Filter, McpError> {
        let Some(Value::Object(n)) = params.and_then(|p| p.get("notifications")) else {
            return Err(McpError::invalid_params(format!(
                "{} requires a \"notifications\" filter object",
                methods::SUBSCRIPTIONS_LISTEN
            )));
        };
        let flag = |key: &str| -> Result<bool, McpError> {
            match n.get(key) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(_) => Err(McpError::invalid_params(format!("{key} must be a boolean"))),
            }
        };
        let uris = match n.get("resourceSubscriptions") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|u| {
                    u.as_str().map(str::to_owned).ok_or_else(|| {
                        McpError::invalid_params("resourceSubscriptions must be strings")
                    })
                })
                .collect::<Result<_, _>>()?,
            Some(_) => {
                return Err(McpError::invalid_params(
                    "resourceSubscriptions must be an array",
                ));
            }
        };
        let task_ids = match n.get("taskIds") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) => items
                .iter()
                .map(|t| {
                    t.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| McpError::invalid_params("taskIds must be strings"))
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(McpError::invalid_params("taskIds must be an array")),
        };
        Ok(Filter {
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resources: flag("resourcesListChanged")?,
            uris,
            task_ids,
            owner: None,
        })
    }

    /// The tasks it names, if any (they need the tasks extension).
    pub(crate) fn wants_tasks(&self) -> bool {
        !self.task_ids.is_empty()
    }

    /// Task events are heard for `owner`'s tasks only.
    pub(crate) fn for_owner(mut self, owner: Option<String>) -> Filter {
        self.owner = owner;
        self
    }

    /// The subset the server honours: only primitives it offers.
    pub(crate) fn honoured(self, offered: Offered) -> Filter {
        Filter {
            tools: self.tools && offered.tools,
            prompts: self.prompts && offered.prompts,
            resources: self.resources && offered.resources,
            uris: if offered.resources {
                self.uris
            } else {
                Vec::new()
            },
            task_ids: if offered.tasks {
                self.task_ids
            } else {
                Vec::new()
            },
            owner: self.owner,
        }
    }

    fn to_value(&self) -> Value {
        let mut n = Map::new();
        if self.tools {
            n.insert("toolsListChanged".into(), Value::Bool(true));
        }
        if self.prompts {
            n.insert("promptsListChanged".into(), Value::Bool(true));
        }
        if self.resources {
            n.insert("resourcesListChanged".into(), Value::Bool(true));
        }
        if !self.uris.is_empty() {
            n.insert("resourceSubscriptions".into(), json!(self.uris));
        }
        if !self.task_ids.is_empty() {
            n.insert("taskIds".into(), json!(self.task_ids));
        }
        Value::Object(n)
    }

    /// The notification (method, params) an event becomes, if admitted.
    fn admit(&self, event: &ServerEvent) -> Option<(&'static str, Map<String, Value>)> {
        let admitted = match event {
            ServerEvent::ToolsChanged => self.tools,
            ServerEvent::PromptsChanged => self.prompts,
            ServerEvent::ResourcesChanged => self.resources,
            ServerEvent::ResourceUpdated(uri) => self.uris.iter().any(|u| u == uri),
            ServerEvent::Task(stored) => {
                stored.owner == self.owner
                    && self.task_ids.iter().any(|t| *t == stored.task.task_id)
            }
            ServerEvent::Gap => false,
        };
        admitted.then(|| event.notification()).flatten()
    }

    /// After missing events, everything the subscription watches may have
    /// changed: tell it so rather than silently dropping changes (the
    /// tasks it watches are read again from the store: see `listen`).
    fn everything(&self) -> Vec<ServerEvent> {
        let mut all = vec![
            ServerEvent::ToolsChanged,
            ServerEvent::PromptsChanged,
            ServerEvent::ResourcesChanged,
        ];
        all.extend(self.uris.iter().cloned().map(ServerEvent::ResourceUpdated));
        all
    }
}

impl Filter {
    /// The current state of each task the subscription watches, as events
    /// (after a gap: a task may have changed meanwhile). A task gone or
    /// unreadable is left out; the client's `tasks/get` will say why.
    async fn tasks_now(&self, store: &dyn TaskStore) -> Vec<ServerEvent> {
        let mut events = Vec::new();
        for task_id in &self.task_ids {
            if let Ok(stored) = store.get(task_id.clone(), self.owner.clone()).await {
                events.push(ServerEvent::Task(std::sync::Arc::new(stored)));
            }
        }
        events
    }
}

fn with_subscription(mut params: Map<String, Value>, id: &Value) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(meta::SUBSCRIPTION_ID.into(), id.clone());
    params.insert("_meta".into(), Value::Object(m));
    params
}

/// Serves one listen request until the server closes subscriptions (then
/// returns the graceful completion result) or the request is cancelled (the
/// caller drops this future).
pub(crate) async fn listen(
    ctx: RequestContext,
    filter: Filter,
    mut events: broadcast::Receiver<ServerEvent>,
    store: std::sync::Arc<dyn TaskStore>,
    closing: tokio_util::sync::CancellationToken,
) -> Map<String, Value> {
    let id = serde_json::to_value(ctx.request_id()).unwrap_or(Value::Null);
    let mut ack = Map::new();
    ack.insert("notifications".into(), filter.to_value());
    let acknowledged = ctx.notify_waiting(
        methods::NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED,
        with_subscription(ack, &id),
    );
    // Biased: with room, the acknowledgement goes out even on a server
    // that is already closing (the stream then ends at once after it).
    tokio::select! {
        biased;
        _ = acknowledged => {}
        _ = closing.cancelled() => {}
    }
    'serve: loop {
        let event = tokio::select! {
            event = events.recv() => event,
            _ = closing.cancelled() => break 'serve,
        };
        let batch = match event {
            Ok(ServerEvent::Gap) | Err(broadcast::error::RecvError::Lagged(_)) => {
                let mut batch = filter.everything();
                batch.extend(filter.tasks_now(store.as_ref()).await);
                batch
            }
            Ok(event) => vec![event],
            Err(broadcast::error::RecvError::Closed) => break 'serve,
        };
        for event in batch {
            if let Some((method, params)) = filter.admit(&event) {
                // Waits while the client is not reading; meanwhile the
                // events channel may lag, which sends a catch-up batch.
                tokio::select! {
                    biased;
                    _ = ctx.notify_waiting(method, with_subscription(params, &id)) => {}
                    _ = closing.cancelled() => break 'serve,
                }
            }
        }
    }
    let mut result = Map::new();
    let mut m = Map::new();
    m.insert(meta::SUBSCRIPTION_ID.into(), id);
    result.insert("_meta".into(), Value::Object(m));
    result
}
