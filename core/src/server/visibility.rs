//! Per-caller visibility: one rule, given the request's meta (its auth
//! info: subject, scopes, claims; its client info) and an item, says
//! whether that caller may see and use the item. Lists leave out what the
//! rule hides, and a call, read or completion of a hidden item gets the
//! same error as an unknown one (nothing tells a caller that it exists).
//! With a rule set, list results are marked `cacheScope: "private"`: a
//! shared cache must not hand one caller's list to another.

use std::sync::Arc;

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

/// Whether a caller may see and use an item; closures
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
    /// Whether the caller of the request with `meta` may see `item`.
    fn visible(&self, meta: &RequestMeta, item: Visible<'_>) -> bool;
}

impl<F> VisibilityRule for F
where
    F: Fn(&RequestMeta, Visible<'_>) -> bool + Send + Sync + 'static,
{
    fn visible(&self, meta: &RequestMeta, item: Visible<'_>) -> bool {
        self(meta, item)
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
}

/// Whether `item` is visible to the caller under `rule` (no rule: yes). A
/// rule that panics hides the item: failing closed.
pub(crate) fn allows(
    rule: Option<&Arc<dyn VisibilityRule>>,
    meta: &RequestMeta,
    item: Visible<'_>,
) -> bool {
    let Some(rule) = rule else {
        return true;
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rule.visible(meta, item))) {
        Ok(visible) => visible,
        Err(_) => {
            tracing::error!(?item, "the visibility rule panicked: the item is hidden");
            false
        }
    }
}
