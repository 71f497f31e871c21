//! The method table: every request and notification method of 2026-07-28
//! and of the legacy 2025-11-25 revision, named once, with the facts both
//! the client and the server need about each (which param feeds `Mcp-Name`,
//! whether it may answer `input_required`, whether its result is cacheable,
//! which input kind a server->client request is).
//!
//! Lookups from a wire name ([`Method::from_name`]) are one `match`, so they
//! are cheap enough for the per-request path. The string constants exist so
//! code that matches on a `&str` can still name each method once.

/// `initialize` (2025-11-25 only: the session handshake).
pub const INITIALIZE: &str = "initialize";
/// `ping` (2025-11-25 only; either direction).
pub const PING: &str = "ping";
/// `server/discover` (2026-07-28: versions, capabilities, identity).
pub const SERVER_DISCOVER: &str = "server/discover";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `resources/list`.
pub const RESOURCES_LIST: &str = "resources/list";
/// `resources/templates/list`.
pub const RESOURCES_TEMPLATES_LIST: &str = "resources/templates/list";
/// `resources/read`.
pub const RESOURCES_READ: &str = "resources/read";
/// `resources/subscribe` (2025-11-25 only).
pub const RESOURCES_SUBSCRIBE: &str = "resources/subscribe";
/// `resources/unsubscribe` (2025-11-25 only).
pub const RESOURCES_UNSUBSCRIBE: &str = "resources/unsubscribe";
/// `prompts/list`.
pub const PROMPTS_LIST: &str = "prompts/list";
/// `prompts/get`.
pub const PROMPTS_GET: &str = "prompts/get";
/// `completion/complete`.
pub const COMPLETION_COMPLETE: &str = "completion/complete";
/// `logging/setLevel` (2025-11-25 only; 2026-07-28 carries the level in `_meta`).
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// `subscriptions/listen` (2026-07-28 only).
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `tasks/get` (the tasks extension; also 2025-11-25's experimental tasks).
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/update` (the tasks extension: answers to a task's input requests).
pub const TASKS_UPDATE: &str = "tasks/update";
/// `tasks/result` (2025-11-25 only, experimental).
pub const TASKS_RESULT: &str = "tasks/result";
/// `tasks/list` (2025-11-25 only, experimental).
pub const TASKS_LIST: &str = "tasks/list";
/// `tasks/cancel` (the tasks extension; also 2025-11-25's experimental tasks).
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// `skills/list` (the skills extension: the skills a server publishes).
pub const SKILLS_LIST: &str = "skills/list";
/// `skills/get` (the skills extension: one skill's entry by URI).
pub const SKILLS_GET: &str = "skills/get";
/// `resources/directory/read` (the skills extension: a directory's children).
pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";
/// `elicitation/create` (server -> client).
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// `sampling/createMessage` (server -> client).
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// `roots/list` (server -> client).
pub const ROOTS_LIST: &str = "roots/list";

/// `notifications/initialized` (2025-11-25 only).
pub const NOTIFICATIONS_INITIALIZED: &str = "notifications/initialized";
/// `notifications/cancelled`.
pub const NOTIFICATIONS_CANCELLED: &str = "notifications/cancelled";
/// `notifications/progress`.
pub const NOTIFICATIONS_PROGRESS: &str = "notifications/progress";
/// `notifications/message` (a log message).
pub const NOTIFICATIONS_MESSAGE: &str = "notifications/message";
/// `notifications/tools/list_changed`.
pub const NOTIFICATIONS_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// `notifications/prompts/list_changed`.
pub const NOTIFICATIONS_PROMPTS_LIST_CHANGED: &str = "notifications/prompts/list_changed";
/// `notifications/resources/list_changed`.
pub const NOTIFICATIONS_RESOURCES_LIST_CHANGED: &str = "notifications/resources/list_changed";
/// `notifications/resources/updated`.
pub const NOTIFICATIONS_RESOURCES_UPDATED: &str = "notifications/resources/updated";
/// `notifications/subscriptions/acknowledged` (2026-07-28 only).
pub const NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED: &str =
    "notifications/subscriptions/acknowledged";
/// `notifications/roots/list_changed` (2025-11-25 only).
pub const NOTIFICATIONS_ROOTS_LIST_CHANGED: &str = "notifications/roots/list_changed";
/// `notifications/elicitation/complete` (2025-11-25 only).
pub const NOTIFICATIONS_ELICITATION_COMPLETE: &str = "notifications/elicitation/complete";
/// `notifications/tasks/status` (2025-11-25 only, experimental).
pub const NOTIFICATIONS_TASKS_STATUS: &str = "notifications/tasks/status";
/// `notifications/tasks` (the tasks extension: a task's state, pushed on a
/// `subscriptions/listen` stream).
pub const NOTIFICATIONS_TASKS: &str = "notifications/tasks";

/// Which revisions define a method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revisions {
    /// Both 2026-07-28 and 2025-11-25.
    Both,
    /// 2026-07-28 only.
    Modern,
    /// 2025-11-25 (and earlier) only.
    Legacy,
    /// An extension of 2026-07-28 (tasks), not the core schema.
    Extension,
    /// An extension of 2026-07-28, and 2025-11-25's experimental feature of
    /// the same name (tasks/get, tasks/cancel).
    LegacyAndExtension,
}

/// Who sends a message with this method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sender {
    /// The client sends it to the server.
    Client,
    /// The server sends it to the client.
    Server,
    /// Either side may send it.
    Either,
}

macro_rules! method_table {
    ($( $(#[$doc:meta])* $variant:ident = $name:ident, $notification:expr, $sender:ident, $revs:ident; )*) => {
        /// Every method of 2026-07-28 and 2025-11-25, requests and
        /// notifications.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Method {
            $( $(#[$doc])* $variant, )*
        }

        impl Method {
            /// Every method, in table order.
            pub const ALL: &'static [Method] = &[$(Method::$variant,)*];

            /// The wire name.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( Method::$variant => $name, )*
                }
            }

            /// The method with this wire name, if the table has one.
            pub fn from_name(name: &str) -> Option<Method> {
                Some(match name {
                    $( $name => Method::$variant, )*
                    _ => return None,
                })
            }

            /// Whether this is a notification (no response) rather than a
            /// request.
            pub const fn is_notification(self) -> bool {
                match self {
                    $( Method::$variant => $notification, )*
                }
            }

            /// Who sends it.
            pub const fn sender(self) -> Sender {
                match self {
                    $( Method::$variant => Sender::$sender, )*
                }
            }

            /// Which revisions define it.
            pub const fn revisions(self) -> Revisions {
                match self {
                    $( Method::$variant => Revisions::$revs, )*
                }
            }
        }
    };
}

method_table! {
    /// `initialize`.
    Initialize = INITIALIZE, false, Client, Legacy;
    /// `ping`.
    Ping = PING, false, Either, Legacy;
    /// `server/discover`.
    ServerDiscover = SERVER_DISCOVER, false, Client, Modern;
    /// `tools/list`.
    ToolsList = TOOLS_LIST, false, Client, Both;
    /// `tools/call`.
    ToolsCall = TOOLS_CALL, false, Client, Both;
    /// `resources/list`.
    ResourcesList = RESOURCES_LIST, false, Client, Both;
    /// `resources/templates/list`.
    ResourcesTemplatesList = RESOURCES_TEMPLATES_LIST, false, Client, Both;
    /// `resources/read`.
    ResourcesRead = RESOURCES_READ, false, Client, Both;
    /// `resources/subscribe`.
    ResourcesSubscribe = RESOURCES_SUBSCRIBE, false, Client, Legacy;
    /// `resources/unsubscribe`.
    ResourcesUnsubscribe = RESOURCES_UNSUBSCRIBE, false, Client, Legacy;
    /// `prompts/list`.
    PromptsList = PROMPTS_LIST, false, Client, Both;
    /// `prompts/get`.
    PromptsGet = PROMPTS_GET, false, Client, Both;
    /// `completion/complete`.
    CompletionComplete = COMPLETION_COMPLETE, false, Client, Both;
    /// `logging/setLevel`.
    LoggingSetLevel = LOGGING_SET_LEVEL, false, Client, Legacy;
    /// `subscriptions/listen`.
    SubscriptionsListen = SUBSCRIPTIONS_LISTEN, false, Client, Modern;
    /// `tasks/get`.
    TasksGet = TASKS_GET, false, Either, LegacyAndExtension;
    /// `tasks/update`.
    TasksUpdate = TASKS_UPDATE, false, Client, Extension;
    /// `tasks/result`.
    TasksResult = TASKS_RESULT, false, Either, Legacy;
    /// `tasks/list`.
    TasksList = TASKS_LIST, false, Either, Legacy;
    /// `tasks/cancel`.
    TasksCancel = TASKS_CANCEL, false, Either, LegacyAndExtension;
    /// `skills/list`.
    SkillsList = SKILLS_LIST, false, Client, Extension;
    /// `skills/get`.
    SkillsGet = SKILLS_GET, false, Client, Extension;
    /// `resources/directory/read`.
    ResourcesDirectoryRead = RESOURCES_DIRECTORY_READ, false, Client, Extension;
    /// `elicitation/create`.
    ElicitationCreate = ELICITATION_CREATE, false, Server, Both;
    /// `sampling/createMessage`.
    SamplingCreateMessage = SAMPLING_CREATE_MESSAGE, false, Server, Both;
    /// `roots/list`.
    RootsList = ROOTS_LIST, false, Server, Both;
    /// `notifications/initialized`.
    NotificationsInitialized = NOTIFICATIONS_INITIALIZED, true, Client, Legacy;
    /// `notifications/cancelled`.
    NotificationsCancelled = NOTIFICATIONS_CANCELLED, true, Either, Both;
    /// `notifications/progress`.
    NotificationsProgress = NOTIFICATIONS_PROGRESS, true, Either, Both;
    /// `notifications/message`.
    NotificationsMessage = NOTIFICATIONS_MESSAGE, true, Server, Both;
    /// `notifications/tools/list_changed`.
    NotificationsToolsListChanged = NOTIFICATIONS_TOOLS_LIST_CHANGED, true, Server, Both;
    /// `notifications/prompts/list_changed`.
    NotificationsPromptsListChanged = NOTIFICATIONS_PROMPTS_LIST_CHANGED, true, Server, Both;
    /// `notifications/resources/list_changed`.
    NotificationsResourcesListChanged = NOTIFICATIONS_RESOURCES_LIST_CHANGED, true, Server, Both;
    /// `notifications/resources/updated`.
    NotificationsResourcesUpdated = NOTIFICATIONS_RESOURCES_UPDATED, true, Server, Both;
    /// `notifications/subscriptions/acknowledged`.
    NotificationsSubscriptionsAcknowledged = NOTIFICATIONS_SUBSCRIPTIONS_ACKNOWLEDGED, true, Server, Modern;
    /// `notifications/roots/list_changed`.
    NotificationsRootsListChanged = NOTIFICATIONS_ROOTS_LIST_CHANGED, true, Client, Legacy;
    /// `notifications/elicitation/complete`.
    NotificationsElicitationComplete = NOTIFICATIONS_ELICITATION_COMPLETE, true, Server, Legacy;
    /// `notifications/tasks/status`.
    NotificationsTasksStatus = NOTIFICATIONS_TASKS_STATUS, true, Either, Legacy;
    /// `notifications/tasks`.
    NotificationsTasks = NOTIFICATIONS_TASKS, true, Server, Extension;
}

impl Method {
    /// The param whose value an HTTP request mirrors into `Mcp-Name`
    /// (spec: streamable-http.mdx, "Standard Headers").
    pub const fn name_param(self) -> Option<&'static str> {
        match self {
            Method::ToolsCall | Method::PromptsGet => Some("name"),
            Method::ResourcesRead => Some("uri"),
            // SEP-2663, "Streamable HTTP: Routing Headers": a load balancer
            // routes a task's requests by its id.
            Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => Some("taskId"),
            _ => None,
        }
    }

    /// Whether the method may answer `InputRequiredResult` (spec:
    /// basic/patterns/mrtr.mdx): only these three run handlers that can
    /// ask the client for input.
    pub const fn supports_input(self) -> bool {
        matches!(
            self,
            Method::ToolsCall | Method::PromptsGet | Method::ResourcesRead
        )
    }

    /// Whether complete results of the method carry caching hints (spec:
    /// server/utilities/caching.mdx).
    pub const fn is_cacheable(self) -> bool {
        matches!(
            self,
            Method::ServerDiscover
                | Method::ToolsList
                | Method::PromptsList
                | Method::ResourcesList
                | Method::ResourcesTemplatesList
                | Method::ResourcesRead
        )
    }

    /// Whether sending the request twice is harmless: it reads and changes
    /// nothing. A client may resend such a request that failed before any
    /// answer arrived (a replica gone, a connection refused or reset).
    pub const fn is_idempotent(self) -> bool {
        matches!(
            self,
            Method::ServerDiscover
                | Method::Ping
                | Method::ToolsList
                | Method::PromptsList
                | Method::PromptsGet
                | Method::ResourcesList
                | Method::ResourcesTemplatesList
                | Method::ResourcesRead
                | Method::CompletionComplete
                | Method::TasksGet
                | Method::SkillsList
                | Method::SkillsGet
        )
    }

    /// The input kind, for the server -> client requests that ask for input.
    pub const fn input_kind(self) -> Option<InputKind> {
        match self {
            Method::ElicitationCreate => Some(InputKind::Elicitation),
            Method::SamplingCreateMessage => Some(InputKind::Sampling),
            Method::RootsList => Some(InputKind::Roots),
            _ => None,
        }
    }

    /// For a `notifications/*/list_changed`, the list methods whose cached
    /// results it makes stale (empty for any other method).
    pub const fn invalidates(self) -> &'static [Method] {
        match self {
            Method::NotificationsToolsListChanged => &[Method::ToolsList],
            Method::NotificationsPromptsListChanged => &[Method::PromptsList],
            Method::NotificationsResourcesListChanged => {
                &[Method::ResourcesList, Method::ResourcesTemplatesList]
            }
            _ => &[],
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a method name may answer `InputRequiredResult`.
pub fn supports_input(method: &str) -> bool {
    Method::from_name(method).is_some_and(Method::supports_input)
}

/// Whether complete results of a method name carry caching hints.
pub fn is_cacheable(method: &str) -> bool {
    Method::from_name(method).is_some_and(Method::is_cacheable)
}

/// The kinds of input a server may ask a client for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// `elicitation/create`: ask the user.
    Elicitation,
    /// `sampling/createMessage`: ask the client's model.
    Sampling,
    /// `roots/list`: ask for the client's roots.
    Roots,
}

impl InputKind {
    /// Every kind.
    pub const ALL: [InputKind; 3] = [
        InputKind::Elicitation,
        InputKind::Sampling,
        InputKind::Roots,
    ];

    /// The request method.
    pub const fn method(self) -> &'static str {
        self.as_method().as_str()
    }

    /// The request method as a table entry.
    pub const fn as_method(self) -> Method {
        match self {
            InputKind::Elicitation => Method::ElicitationCreate,
            InputKind::Sampling => Method::SamplingCreateMessage,
            InputKind::Roots => Method::RootsList,
        }
    }

    /// The client capability the request needs (and that a client declares
    /// when it can answer it).
    pub const fn capability(self) -> &'static str {
        match self {
            InputKind::Elicitation => "elicitation",
            InputKind::Sampling => "sampling",
            InputKind::Roots => "roots",
        }
    }

    /// The kind a request method asks for, if it is one of the three.
    pub fn from_method(method: &str) -> Option<InputKind> {
        Method::from_name(method).and_then(Method::input_kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for &m in Method::ALL {
            assert!(seen.insert(m.as_str()), "duplicate name {m}");
            assert_eq!(Method::from_name(m.as_str()), Some(m));
            assert_eq!(
                m.is_notification(),
                m.as_str().starts_with("notifications/")
            );
        }
        assert_eq!(Method::from_name("tools/cal"), None);
        assert_eq!(Method::from_name(""), None);
    }

    #[test]
    fn mcp_name_fields() {
        assert_eq!(Method::ToolsCall.name_param(), Some("name"));
        assert_eq!(Method::PromptsGet.name_param(), Some("name"));
        assert_eq!(Method::ResourcesRead.name_param(), Some("uri"));
        for task_method in [Method::TasksGet, Method::TasksUpdate, Method::TasksCancel] {
            assert_eq!(task_method.name_param(), Some("taskId"));
        }
        let with_field: Vec<_> = Method::ALL
            .iter()
            .filter(|m| m.name_param().is_some())
            .collect();
        assert_eq!(with_field.len(), 6);
    }

    #[test]
    fn input_and_cache_facts() {
        for m in ["tools/call", "prompts/get", "resources/read"] {
            assert!(supports_input(m), "{m}");
        }
        assert!(!supports_input("tools/list"));
        assert!(!supports_input("nope"));
        for m in [
            "server/discover",
            "tools/list",
            "prompts/list",
            "resources/list",
            "resources/templates/list",
            "resources/read",
        ] {
            assert!(is_cacheable(m), "{m}");
        }
        assert!(!is_cacheable("tools/call"));
        assert!(!is_cacheable("prompts/get"));
    }

    #[test]
    fn input_kinds_match_their_methods() {
        for kind in InputKind::ALL {
            assert_eq!(InputKind::from_method(kind.method()), Some(kind));
            assert_eq!(kind.as_method().sender(), Sender::Server);
        }
        assert_eq!(InputKind::Elicitation.method(), "elicitation/create");
        assert_eq!(InputKind::Sampling.method(), "sampling/createMessage");
        assert_eq!(InputKind::Roots.method(), "roots/list");
        assert_eq!(InputKind::Sampling.capability(), "sampling");
        assert_eq!(InputKind::from_method("tools/call"), None);
    }

    #[test]
    fn list_changed_invalidates_lists() {
        assert_eq!(
            Method::NotificationsResourcesListChanged.invalidates(),
            &[Method::ResourcesList, Method::ResourcesTemplatesList]
        );
        assert!(
            Method::NotificationsResourcesUpdated
                .invalidates()
                .is_empty()
        );
    }

    /// The table's 2026-07-28 methods are exactly the schema's: a method
    /// added to (or dropped from) the spec fails here until the table follows.
    #[test]
    fn modern_entries_match_the_2026_07_28_schema() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../tests/fixtures/spec/2026-07-28/schema.json"
        );
        let text = std::fs::read_to_string(path).expect("the spec schema fixture");
        let schema: serde_json::Value = serde_json::from_str(&text).expect("schema JSON");
        let defs = schema["$defs"].as_object().expect("$defs");
        let in_schema: std::collections::BTreeSet<&str> = defs
            .values()
            .filter_map(|d| d["properties"]["method"]["const"].as_str())
            .collect();
        let in_table: std::collections::BTreeSet<&str> = Method::ALL
            .iter()
            .filter(|m| matches!(m.revisions(), Revisions::Both | Revisions::Modern))
            .map(|m| m.as_str())
            .collect();
        assert_eq!(in_table, in_schema);
    }
}
