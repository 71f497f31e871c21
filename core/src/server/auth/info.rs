//! The verified identity behind a request and the interface that
//! produces it from a bearer token.

use serde_json::{Map, Value};
use std::future::Future;

use crate::BoxFuture;

/// What a verified access token says: who, which client, which scopes, for
/// which audience, until when. Handlers read it with
/// [`RequestContext::auth`](crate::server::RequestContext::auth).
///
/// ```
/// use ferromcp::server::auth::AuthInfo;
///
/// let info = AuthInfo {
///     subject: Some("alice".into()),
///     scopes: vec!["files:read".into()],
///     audience: vec!["https://mcp.example.com/mcp".into()],
///     ..AuthInfo::default()
/// };
/// assert!(info.has_scope("files:read"));
/// assert!(!info.has_scope("files:write"));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuthInfo {
    /// The resource owner (`sub`).
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id`, or `azp`).
    pub client_id: Option<String>,
    /// The granted scopes.
    pub scopes: Vec<String>,
    /// The audiences the token is valid for (`aud`); the server's resource
    /// URL must be one of them.
    pub audience: Vec<String>,
    /// When the token expires (`exp`, seconds since the Unix epoch).
    pub expires_at: Option<u64>,
    /// Every claim as the verifier read it (a JWT's payload).
    pub claims: Value,
}

impl AuthInfo {
    /// Reads the usual access-token claims (RFC 9068, RFC 8693): `sub`,
    /// `client_id` (else `azp`), `scope` (space-separated) or `scp` (a
    /// string or a list), `aud` (a string or a list) and `exp`; `claims`
    /// keeps them all. How [`JwtVerifier`](crate::verifier::JwtVerifier)
    /// and the language bindings' verifier callbacks (which return a
    /// claims object) build one.
    ///
    /// ```
    /// use ferromcp::server::auth::AuthInfo;
    /// use serde_json::json;
    ///
    /// let claims = json!({"sub": "alice", "scope": "files:read files:write",
    ///                     "aud": "https://mcp.example.com/mcp", "exp": 1_900_000_000});
    /// let info = AuthInfo::from_claims(claims.as_object().unwrap().clone());
    /// assert_eq!(info.subject.as_deref(), Some("alice"));
    /// assert_eq!(info.scopes, ["files:read", "files:write"]);
    /// assert_eq!(info.audience, ["https://mcp.example.com/mcp"]);
    /// assert_eq!(info.expires_at, Some(1_900_000_000));
    /// ```
    pub fn from_claims(claims: Map<String, Value>) -> AuthInfo {
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        let scopes = match claims.get("scope").or_else(|| claims.get("scp")) {
            Some(Value::String(s)) => s.split_whitespace().map(str::to_owned).collect(),
            other => strings(other),
        };
        AuthInfo {
            subject: text("sub"),
            client_id: text("client_id").or_else(|| text("azp")),
            scopes,
            audience: strings(claims.get("aud")),
            expires_at: claims.get("exp").and_then(Value::as_f64).map(|t| t as u64),
            claims: Value::Object(claims),
        }
    }

    /// Whether `scope` was granted (exactly; hierarchies are the
    /// [`ScopeCheck`](super::ScopeCheck) of the protection options).
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }
}

/// The HTTP request a token came with, for verifiers that look further
/// than the token (a per-path policy, logging).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenRequest {
    /// The protected resource (the canonical server URL, RFC 8707) the
    /// token must be meant for.
    pub resource: String,
    /// The HTTP method.
    pub method: String,
    /// The request path.
    pub path: String,
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token is malformed, forged, expired, revoked or meant for
    /// another resource: HTTP 401 `invalid_token`.
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The token could not be checked right now (the issuer's keys could
    /// not be fetched): HTTP 503, so the client retries instead of sending
    /// the user through a new login.
    #[error("token verification unavailable: {0}")]
    Unavailable(String),
}

/// Turns a bearer token into verified claims, or rejects it. The host
/// supplies one (an introspection call, a session lookup) or uses
/// [`JwtVerifier`](crate::verifier::JwtVerifier). Any
/// `Fn(String, TokenRequest) -> impl Future<Output = Result<AuthInfo, TokenError>>`
/// is one.
///
/// Whatever the verifier says, the server also refuses a token whose
/// `expires_at` has passed or whose `audience` does not name the resource
/// (spec: tokens "MUST" have been issued for this server).
///
/// ```
/// use ferromcp::server::auth::{AuthInfo, TokenError, TokenRequest, TokenVerifier};
///
/// // A fixed table of API keys, for a demo.
/// let verifier = |token: String, request: TokenRequest| async move {
///     match token.as_str() {
///         "let-me-in" => Ok(AuthInfo {
///             subject: Some("demo".into()),
///             scopes: vec!["tools".into()],
///             audience: vec![request.resource],
///             ..AuthInfo::default()
///         }),
///         _ => Err(TokenError::Invalid("unknown token".into())),
///     }
/// };
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let request = TokenRequest { resource: "http://localhost:8000/mcp".into(), ..TokenRequest::default() };
/// let info = verifier.verify("let-me-in".into(), request).await.unwrap();
/// assert_eq!(info.subject.as_deref(), Some("demo"));
/// # });
/// ```
pub trait TokenVerifier: Send + Sync + 'static {
    /// Verifies `token` (without the `Bearer ` prefix).
    fn verify(
        &self,
        token: String,
        request: TokenRequest,
    ) -> BoxFuture<Result<AuthInfo, TokenError>>;
}

impl<F, Fut> TokenVerifier for F
where
    F: Fn(String, TokenRequest) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<AuthInfo, TokenError>> + Send + 'static,
{
    fn verify(
        &self,
        token: String,
        request: TokenRequest,
    ) -> BoxFuture<Result<AuthInfo, TokenError>> {
        Box::pin(self(token, request))
    }
}

/// A claim that is one string or a list of strings, as a list.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}
