//! Scopes a tool, resource, resource template or prompt requires, and the
//! lookup of what one request needs.
//!
//! Kept beside the registry entries rather than in them: a requirement is
//! a server policy, not part of the primitive's wire definition, and it
//! survives the primitive being replaced (a tool re-registered with a new
//! schema keeps its protection).

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

use super::AuthInfo;
use crate::protocol::Method;
use crate::protocol::markers::{PromptRefType, ResourceRefType};
use crate::server::registry::Registry;

/// Which kind of primitive a scope requirement is for.
///
/// ```
/// use ferromcp::server::Server;
/// use ferromcp::server::auth::ScopeTarget;
///
/// let server = Server::new("files", "1.0.0");
/// server.require_scopes(ScopeTarget::Tool, "delete_file", ["files:write"]);
/// assert_eq!(server.required_scopes(ScopeTarget::Tool, "delete_file"), ["files:write"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScopeTarget {
    /// A tool, by name (`tools/call`).
    Tool,
    /// A resource, by URI (`resources/read`).
    Resource,
    /// A resource template, by its `uriTemplate` (`resources/read` of a
    /// URI it matches, when no fixed resource has that URI, and
    /// `completion/complete` of its variables).
    ResourceTemplate,
    /// A prompt, by name (`prompts/get`, and `completion/complete` of its
    /// arguments).
    Prompt,
}

/// Decides whether a token's grants cover one required scope, for servers
/// whose scopes form a hierarchy (the spec: a broader scope "MUST" count
/// for the narrower ones it implies). Without one, scopes match exactly.
///
/// ```
/// use ferromcp::server::auth::{AuthInfo, ScopeCheck};
/// use std::sync::Arc;
///
/// // `files` implies `files:read` and `files:write`.
/// let check: ScopeCheck = Arc::new(|info: &AuthInfo, needed: &str| {
///     info.scopes.iter().any(|s| s == needed || needed.starts_with(&format!("{s}:")))
/// });
/// let info = AuthInfo { scopes: vec!["files".into()], ..AuthInfo::default() };
/// assert!(check(&info, "files:write"));
/// ```
pub type ScopeCheck = Arc<dyn Fn(&AuthInfo, &str) -> bool + Send + Sync>;

/// The requirements a server holds, by target and key.
pub(crate) type RequiredScopes = HashMap<(ScopeTarget, String), Vec<String>>;

/// The scopes `method` with `params` needs: those of the tool, prompt, or
/// the resource (else the first matching template, as reads resolve) it
/// names, and for `completion/complete` those of the prompt or resource
/// template whose values it completes. Other methods need none beyond the
/// server-wide ones.
pub(crate) fn required_for(
    registry: &Registry,
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Vec<String> {
    if registry.scopes.is_empty() {
        return Vec::new();
    }
    let arg = |name: &str| params.and_then(|p| p.get(name)).and_then(Value::as_str);
    let lookup = |target: ScopeTarget, key: &str| lookup(registry, target, key);
    match Method::from_name(method) {
        Some(Method::ToolsCall) => {
            arg("name").map_or_else(Vec::new, |n| lookup(ScopeTarget::Tool, n))
        }
        Some(Method::PromptsGet) => {
            arg("name").map_or_else(Vec::new, |n| lookup(ScopeTarget::Prompt, n))
        }
        Some(Method::ResourcesRead | Method::ResourcesSubscribe) => {
            arg("uri").map_or_else(Vec::new, |uri| for_resource(registry, uri))
        }
        Some(Method::CompletionComplete) => {
            // Completing a prompt's argument or a template's variable
            // reveals what using it would (e.g. the names of files): the
            // same scopes.
            let reference = params.and_then(|p| p.get("ref")).and_then(Value::as_object);
            let member = |name: &str| reference.and_then(|r| r.get(name)).and_then(Value::as_str);
            match member("type") {
                Some(PromptRefType::VALUE) => {
                    member("name").map_or_else(Vec::new, |n| lookup(ScopeTarget::Prompt, n))
                }
                Some(ResourceRefType::VALUE) => member("uri").map_or_else(Vec::new, |uri| {
                    // A template as written, else a URI as a read resolves it.
                    if registry.templates.contains_key(uri) {
                        lookup(ScopeTarget::ResourceTemplate, uri)
                    } else {
                        for_resource(registry, uri)
                    }
                }),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// The scopes set for `target` `key`.
fn lookup(registry: &Registry, target: ScopeTarget, key: &str) -> Vec<String> {
    registry
        .scopes
        .get(&(target, key.to_owned()))
        .cloned()
        .unwrap_or_default()
}

/// The scopes reading `uri` needs: the resource's, else those of the first
/// template matching it, as reads resolve.
fn for_resource(registry: &Registry, uri: &str) -> Vec<String> {
    if registry.resources.contains_key(uri) {
        return lookup(registry, ScopeTarget::Resource, uri);
    }
    registry
        .templates
        .values()
        .find(|t| t.template.matches(uri).is_some())
        .map_or_else(
            // Not registered (yet): a requirement set by URI still
            // applies, so the answer does not reveal which exist.
            || lookup(registry, ScopeTarget::Resource, uri),
            |t| lookup(registry, ScopeTarget::ResourceTemplate, &t.uri_template),
        )
}

impl crate::server::Server {
    /// Requires `scopes` (all of them) of the bearer token of any request
    /// that uses the tool, resource, resource template or prompt `key`
    /// when the server is served protected over HTTP (`HttpOptions::auth`);
    /// a token without them gets HTTP 403 `insufficient_scope` naming what
    /// is missing. Completing a prompt's arguments or a template's variables
    /// (`completion/complete`) needs the same scopes as using it. An empty
    /// list removes the requirement. Set it with the
    /// registration; it stays when the primitive is replaced or removed.
    /// Lists are not filtered by scope (see `docs/ARCHITECTURE.md`).
    ///
    /// ```
    /// use ferromcp::protocol::Tool;
    /// use ferromcp::server::{RequestContext, Server, ToolOutput};
    /// use ferromcp::server::auth::ScopeTarget;
    /// use serde_json::{Value, json};
    ///
    /// let server = Server::new("files", "1.0.0");
    /// server.add_tool(Tool::new("delete_file", json!({"type": "object"})),
    ///     |ctx: RequestContext, _args: Value| async move {
    ///         let who = ctx.auth().and_then(|a| a.subject.clone()).unwrap_or_default();
    ///         Ok(ToolOutput::text(format!("deleted for {who}")))
    ///     })?;
    /// server.require_scopes(ScopeTarget::Tool, "delete_file", ["files:write"]);
    /// # Ok::<(), ferromcp::Error>(())
    /// ```
    pub fn require_scopes<S: Into<String>>(
        &self,
        target: ScopeTarget,
        key: &str,
        scopes: impl IntoIterator<Item = S>,
    ) {
        let scopes: Vec<String> = scopes.into_iter().map(Into::into).collect();
        let mut registry = self.registry_write();
        if scopes.is_empty() {
            registry.scopes.remove(&(target, key.to_owned()));
        } else {
            registry.scopes.insert((target, key.to_owned()), scopes);
        }
    }

    /// The scopes set by [`Server::require_scopes`](crate::server::Server::require_scopes) for `key`.
    pub fn required_scopes(&self, target: ScopeTarget, key: &str) -> Vec<String> {
        self.registry_read()
            .scopes
            .get(&(target, key.to_owned()))
            .cloned()
            .unwrap_or_default()
    }

    /// The scopes one request (`method` with `params`) needs.
    pub(crate) fn scopes_for_request(
        &self,
        method: &str,
        params: Option<&Map<String, Value>>,
    ) -> Vec<String> {
        required_for(&self.registry_read(), method, params)
    }
}
