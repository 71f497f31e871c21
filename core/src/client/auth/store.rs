//! Where tokens and client registrations live between requests and runs:
//! the [`TokenStore`] trait and its in-memory default.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Mutex;

use crate::rpc::lock_unpoisoned;

/// Tokens for one protected resource, with the authorization server that
/// issued them (a token is never sent to a server another issuer now
/// guards, nor refreshed there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredTokens {
    /// Sent as `Authorization: Bearer`.
    pub access_token: String,
    /// Exchanged for a new access token when the server refuses the old one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// Expiry, seconds since the Unix epoch, when the server said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes asked for (step-up adds to them).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The authorization server's issuer identifier.
    pub issuer: String,
    /// `DPoP` for a token bound to the client's DPoP key; `None` (or
    /// `Bearer`) for a bearer token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_type: Option<String>,
}

/// A client's identity at one authorization server.
///
/// ```
/// use ferromcp::client::auth::ClientCredentials;
/// let pre = ClientCredentials { client_id: "my-app".into(), ..Default::default() };
/// // Not tied to a redirect URI: used with any.
/// assert!(pre.redirect_uris.is_empty());
/// // A store from before `redirect_uris` existed still loads.
/// let old: ClientCredentials = serde_json::from_str(r#"{"client_id":"c"}"#).unwrap();
/// assert_eq!(old.client_id, "c");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientCredentials {
    /// `client_id` (a URL for a client ID metadata document).
    pub client_id: String,
    /// `client_secret` of a confidential client.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// How to authenticate at the token endpoint (`none`,
    /// `client_secret_basic`, `client_secret_post`, `private_key_jwt`);
    /// `None` chooses from the server's metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint_auth_method: Option<String>,
    /// A PKCS#8 PEM ES256 key for `private_key_jwt` (the client signs a
    /// short-lived assertion instead of sending a secret).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub private_key_pem: Option<String>,
    /// The redirect URIs a dynamic registration was made for (as the
    /// server answered them). A saved registration is reused only for a
    /// login with one of them: the server refuses any other, so a login
    /// with another one registers again. Empty (pre-registered, or saved
    /// before this was recorded): used with any redirect URI.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub redirect_uris: Vec<String>,
}

/// Keeps tokens (per MCP server URL) and client registrations (per issuer).
///
/// Plug a file or keychain store by implementing it; the calls are
/// synchronous and short (a store that blocks on I/O is fine: they happen
/// only around an authorization). [`MemoryTokenStore`] is the default.
///
/// ```
/// use ferromcp::client::auth::{MemoryTokenStore, StoredTokens, TokenStore};
/// let store = MemoryTokenStore::default();
/// store.save_tokens("https://mcp.example/mcp", &StoredTokens {
///     access_token: "t".into(), refresh_token: None, expires_at: None,
///     scopes: vec![], issuer: "https://as.example".into(), token_type: None,
/// });
/// assert_eq!(store.load_tokens("https://mcp.example/mcp").unwrap().access_token, "t");
/// ```
pub trait TokenStore: Send + Sync {
    /// The tokens saved for an MCP server URL.
    fn load_tokens(&self, resource: &str) -> Option<StoredTokens>;
    /// Saves (replaces) the tokens for an MCP server URL.
    fn save_tokens(&self, resource: &str, tokens: &StoredTokens);
    /// Forgets the tokens for an MCP server URL (they were refused).
    fn clear_tokens(&self, resource: &str);
    /// The registration saved for an authorization server.
    fn load_client(&self, issuer: &str) -> Option<ClientCredentials>;
    /// Saves a registration made with an authorization server.
    fn save_client(&self, issuer: &str, client: &ClientCredentials);
}

/// A [`TokenStore`] in memory: tokens last as long as the process.
#[derive(Debug, Default)]
pub struct MemoryTokenStore {
    tokens: Mutex<HashMap<String, StoredTokens>>,
    clients: Mutex<HashMap<String, ClientCredentials>>,
}

impl TokenStore for MemoryTokenStore {
    fn load_tokens(&self, resource: &str) -> Option<StoredTokens> {
        lock_unpoisoned(&self.tokens).get(resource).cloned()
    }
    fn save_tokens(&self, resource: &str, tokens: &StoredTokens) {
        lock_unpoisoned(&self.tokens).insert(resource.to_owned(), tokens.clone());
    }
    fn clear_tokens(&self, resource: &str) {
        lock_unpoisoned(&self.tokens).remove(resource);
    }
    fn load_client(&self, issuer: &str) -> Option<ClientCredentials> {
        lock_unpoisoned(&self.clients).get(issuer).cloned()
    }
    fn save_client(&self, issuer: &str, client: &ClientCredentials) {
        lock_unpoisoned(&self.clients).insert(issuer.to_owned(), client.clone());
    }
}
