//! The HTTP side of a protected server (spec 2026-07-28
//! `basic/authorization`): what the endpoint needs to know
//! ([`ProtectedResource`], set as `HttpOptions::auth` or
//! `EndpointOptions::auth`), the protected resource metadata document it
//! serves (`metadata`, RFC 9728), the `WWW-Authenticate` challenges of its
//! 401 and 403 answers (`challenge`, RFC 6750 §3), and the gate every MCP
//! request passes before the server sees it (`gate`).

mod challenge;
mod gate;
mod metadata;

pub(super) use gate::{authenticate, authorize};
pub(super) use metadata::serve_metadata;

use std::sync::Arc;

use crate::server::auth::{ScopeCheck, TokenVerifier};

/// Protection of an HTTP-served MCP server: every request must carry
/// `Authorization: Bearer <token>` that `verifier` accepts, meant for
/// `resource` and not expired, with the scopes of the primitive it uses
/// (`Server::require_scopes`) and the server-wide `required_scopes`.
/// The endpoint serves the protected resource metadata at
/// `/.well-known/oauth-protected-resource` and its path-inserted form.
///
/// ```
/// use ferromcp::verifier::JwtVerifier;
/// use ferromcp::transport::http::{HttpOptions, ProtectedResource};
///
/// let resource = "https://mcp.example.com/mcp";
/// let issuer = "https://auth.example.com";
/// let auth = ProtectedResource::new(resource, [issuer], JwtVerifier::new(issuer, resource))
///     .with_scopes_supported(["files:read", "files:write"])
///     .with_resource_name("Example files");
/// let options = HttpOptions { auth: Some(auth), ..HttpOptions::localhost(8000) };
/// # let _ = options;
/// ```
#[derive(Clone)]
pub struct ProtectedResource {
    /// The server's canonical URL (RFC 8707 §2, the MCP endpoint's URL as
    /// clients reach it): the `resource` of the metadata and the audience
    /// tokens must name.
    pub resource: String,
    /// Issuer URLs of the authorization servers whose tokens are accepted
    /// (at least one).
    pub authorization_servers: Vec<String>,
    /// `scopes_supported` of the metadata; also the `scope` of the 401
    /// challenge when `required_scopes` is empty.
    pub scopes_supported: Vec<String>,
    /// Scopes every request needs; the `scope` of the 401 challenge.
    pub required_scopes: Vec<String>,
    /// Checks tokens.
    pub verifier: Arc<dyn TokenVerifier>,
    /// `resource_name` of the metadata.
    pub resource_name: Option<String>,
    /// `resource_documentation` of the metadata (a URL).
    pub resource_documentation: Option<String>,
    /// Whether granted scopes cover a needed one, for scope hierarchies;
    /// `None` compares exactly.
    pub scope_check: Option<ScopeCheck>,
}

impl std::fmt::Debug for ProtectedResource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtectedResource")
            .field("resource", &self.resource)
            .field("authorization_servers", &self.authorization_servers)
            .field("scopes_supported", &self.scopes_supported)
            .field("required_scopes", &self.required_scopes)
            .finish_non_exhaustive()
    }
}

impl ProtectedResource {
    /// Protection of `resource` by tokens of `authorization_servers`,
    /// checked by `verifier`.
    pub fn new<S: Into<String>>(
        resource: impl Into<String>,
        authorization_servers: impl IntoIterator<Item = S>,
        verifier: impl TokenVerifier,
    ) -> ProtectedResource {
        ProtectedResource {
            resource: resource.into(),
            authorization_servers: authorization_servers.into_iter().map(Into::into).collect(),
            scopes_supported: Vec::new(),
            required_scopes: Vec::new(),
            verifier: Arc::new(verifier),
            resource_name: None,
            resource_documentation: None,
            scope_check: None,
        }
    }

    /// Sets `scopes_supported`.
    pub fn with_scopes_supported<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the scopes every request needs.
    pub fn with_required_scopes<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Self {
        self.required_scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Sets `resource_name`.
    pub fn with_resource_name(mut self, name: impl Into<String>) -> Self {
        self.resource_name = Some(name.into());
        self
    }

    /// Sets `resource_documentation`.
    pub fn with_resource_documentation(mut self, url: impl Into<String>) -> Self {
        self.resource_documentation = Some(url.into());
        self
    }

    /// Sets the scope hierarchy check.
    pub fn with_scope_check(mut self, check: ScopeCheck) -> Self {
        self.scope_check = Some(check);
        self
    }
}
