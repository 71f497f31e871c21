//! Per-caller visibility: one rule, given the request's meta (its auth
//! info: subject, scopes, claims; its client info) and the items a request
//! needs judged, says which of them that caller may see and use. Lists
//! leave out what the rule hides, and a call, read or completion of a
//! hidden item gets the same error as an unknown one (nothing tells a
//! caller that it exists). With a rule set, list results are marked
//! `cacheScope: "private"`: a shared cache must not hand one caller's list
//! to another.
//!
//! The rule is asked once per request, with every item at once, and never
//! while the registry is locked: a binding may answer from its host's own
//! thread, asynchronously (a JS function, Python under the GIL), without
//! any risk of waiting on a thread that waits for the registry.

use std::sync::Arc;

use crate::BoxFuture;

use super::{RequestMeta, Server};

/// An item a visibility rule is asked about, by its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visible<'a> {
    /// A tool, by name.
    Tool(&'a str),
    /// A prompt, by name.
    Prompt(&'a str),
    /// A resource with a fixed URI.
    Resource(&'a str),
    /// A resource template, by its `uriTemplate` (for reads of the URIs it
    /// matches, too).
    ResourceTemplate(&'a str),
}

/// An item to judge, owned (a rule may answer later, from another thread).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum VisibleItem {
    /// A tool, by name.
    Tool(String),
    /// A prompt, by name.
    Prompt(String),
    /// A resource with a fixed URI.
    Resource(String),
    /// A resource template, by its `uriTemplate`.
    ResourceTemplate(String),
}

impl VisibleItem {
    /// The borrowed view the closure form of a rule gets.
    pub fn as_visible(&self) -> Visible<'_> {
        match self {
            VisibleItem::Tool(key) => Visible::Tool(key),
            VisibleItem::Prompt(key) => Visible::Prompt(key),
            VisibleItem::Resource(key) => Visible::Resource(key),
            VisibleItem::ResourceTemplate(key) => Visible::ResourceTemplate(key),
        }
    }

    /// The item's key: its name or URI (template).
    pub fn key(&self) -> &str {
        match self {
            VisibleItem::Tool(key)
            | VisibleItem::Prompt(key)
            | VisibleItem::Resource(key)
            | VisibleItem::ResourceTemplate(key) => key,
        }
    }
}

/// Whether a caller may see and use items; closures
/// `Fn(&RequestMeta, Visible<'_>) -> bool` are rules.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ferromcp::Error> {
/// use ferromcp::client::Client;
/// use ferromcp::protocol::Tool;
/// use ferromcp::server::{RequestMeta, Server, ToolOutput, Visible};
/// let server = Server::new("demo", "1.0.0");
/// for name in ["search", "delete_everything"] {
///     server.add_tool(Tool::new(name, serde_json::json!({"type": "object"})), |_ctx, _args| async {
///         Ok(ToolOutput::text("done"))
///     })?;
/// }
/// // Only callers whose token carries the `admin` scope see the admin tool.
/// server.set_visibility(|caller: &RequestMeta, item: Visible<'_>| match item {
///     Visible::Tool("delete_everything") => caller
///         .auth
///         .as_ref()
///         .is_some_and(|auth| auth.scopes.iter().any(|s| s == "admin")),
///     _ => true,
/// });
/// let client = Client::in_memory(&server); // no token: not an admin
/// let names: Vec<String> = client.list_all_tools().await?.into_iter().map(|t| t.name).collect();
/// assert_eq!(names, ["search"]);
/// assert!(client.call_tool("delete_everything", serde_json::json!({})).await.is_err());
/// # Ok(()) }
/// ```
pub trait VisibilityRule: Send + Sync + 'static {
    /// Whether the caller of the request with `caller` may see each of
    /// `items`, in order (an answer missing for an item hides it).
    fn judge(&self, caller: &RequestMeta, items: Vec<VisibleItem>) -> BoxFuture<Vec<bool>>;
}

impl<F> VisibilityRule for F
where
    F: Fn(&RequestMeta, Visible<'_>) -> bool + Send + Sync + 'static,
{
    fn judge(&self, caller: &RequestMeta, items: Vec<VisibleItem>) -> BoxFuture<Vec<bool>> {
        let verdicts = items
            .iter()
            .map(|item| self(caller, item.as_visible()))
            .collect();
        Box::pin(std::future::ready(verdicts))
    }
}

impl Server {
    /// Sets the rule deciding which tools, prompts, resources and templates
    /// each caller sees (replacing any earlier rule); see [`VisibilityRule`].
    pub fn set_visibility(&self, rule: impl VisibilityRule) {
        self.registry_write().visibility = Some(Arc::new(rule));
    }

    /// Takes the visibility rule away: everyone sees everything again.
    pub fn clear_visibility(&self) {
        self.registry_write().visibility = None;
    }

    /// The rule in force, if any (cloned out: it is asked without the
    /// registry's lock).
    pub(crate) fn visibility_rule(&self) -> Option<Arc<dyn VisibilityRule>> {
        self.registry_read().visibility.clone()
    }
}

/// The verdicts of `rule` on `items` for `caller`, one per item. A rule
/// that panics, or answers too few verdicts, hides: failing closed.
pub(crate) async fn judge(
    rule: &dyn VisibilityRule,
    caller: &RequestMeta,
    items: Vec<VisibleItem>,
) -> Vec<bool> {
    let count = items.len();
    let asked =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rule.judge(caller, items)));
    let mut verdicts = match asked {
        Ok(future) => match super::panic::catch_panic(future).await {
            Ok(verdicts) => verdicts,
            Err(panic) => {
                tracing::error!(%panic, "the visibility rule panicked: its items are hidden");
                Vec::new()
            }
        },
        Err(_) => {
            tracing::error!("the visibility rule panicked: its items are hidden");
            Vec::new()
        }
    };
    verdicts.resize(count, false);
    verdicts
}

/// Whether one item is visible to `caller`: yes without a rule.
pub(crate) async fn shown(
    rule: Option<&Arc<dyn VisibilityRule>>,
    caller: &RequestMeta,
    item: VisibleItem,
) -> bool {
    match rule {
        None => true,
        Some(rule) => judge(rule.as_ref(), caller, vec![item])
            .await
            .first()
            .copied()
            .unwrap_or(false),
    }
}
