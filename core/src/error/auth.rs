//! Why an OAuth authorization failed, one variant per step, so a host can
//! tell "the user said no" from "the server is misconfigured".

/// An OAuth failure ([`crate::Error::Auth`], kind `"auth"`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// No usable protected resource metadata (RFC 9728) was found.
    #[error("protected resource metadata: {0}")]
    ResourceMetadata(String),
    /// The protected resource metadata names another resource than the
    /// server the client talks to (RFC 9728 §3.3): a token obtained for it
    /// could be replayed elsewhere, so the client stops.
    #[error("the server's metadata names resource {found:?}, not {expected:?}")]
    ResourceMismatch {
        /// The MCP server URL.
        expected: String,
        /// The `resource` the metadata published.
        found: String,
    },
    /// No usable authorization server metadata (RFC 8414 / OpenID
    /// discovery), or it lacks something the flow needs (PKCE S256).
    #[error("authorization server {issuer}: {reason}")]
    ServerMetadata {
        /// The authorization server's issuer identifier.
        issuer: String,
        /// What is missing or wrong.
        reason: String,
    },
    /// The metadata's `issuer` is not the issuer it was looked up for
    /// (RFC 8414 §3.3): its endpoints are not trusted.
    #[error("authorization server metadata claims issuer {found:?}, expected {expected:?}")]
    IssuerMismatch {
        /// The issuer the metadata was fetched for.
        expected: String,
        /// The issuer it claims.
        found: String,
    },
    /// The client could not get a client id (no pre-registration, no
    /// client ID metadata document support, no dynamic registration, or
    /// registration refused).
    #[error("client registration: {0}")]
    Registration(String),
    /// The authorization server answered the authorization request with an
    /// error (e.g. `access_denied`).
    #[error("authorization denied: {error}{}", .description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        /// The OAuth error code.
        error: String,
        /// `error_description`, when given.
        description: Option<String>,
    },
    /// The authorization response (the redirect) is not acceptable: no
    /// code, a wrong `state`, or an `iss` that is missing or wrong (RFC
    /// 9207) — the code is then not sent to the token endpoint.
    #[error("authorization response refused: {0}")]
    Response(String),
    /// The application's authorization callback failed.
    #[error("authorization callback: {0}")]
    Interaction(String),
    /// The token endpoint refused the request or answered nonsense.
    #[error("token endpoint: {0}")]
    Token(String),
    /// The server kept refusing the token (401, or 403 `insufficient_scope`)
    /// after this many authorizations for one request.
    #[error(
        "the server still refuses access after {attempts} authorization attempts (HTTP {status})"
    )]
    RetryLimit {
        /// Authorizations made for the request.
        attempts: usize,
        /// The last HTTP status.
        status: u16,
    },
}
