//! OAuth 2.1 for the HTTP client, as the MCP authorization spec
//! (2026-07-28, `basic/authorization`) describes it: a 401 from the MCP
//! endpoint starts discovery (RFC 9728 protected resource metadata, RFC
//! 8414 / OpenID authorization server metadata), client registration
//! (pre-registered, client ID metadata document, or RFC 7591), and an
//! authorization-code flow with PKCE S256, `resource` (RFC 8707) and `iss`
//! checks (RFC 9207). The token then goes as `Authorization: Bearer` on
//! every request; a 403 `insufficient_scope` re-authorizes with the larger
//! scope, a refused token is refreshed when a refresh token exists.
//!
//! One job per file: `challenge` parses `WWW-Authenticate`, `metadata`
//! fetches and checks the documents, `registration` gets a client id,
//! `pkce`, `scope`, `token`, `store`, `loopback` (the desktop redirect
//! listener), `headless` (a redirect without a browser), and `flow` runs
//! them in order; the HTTP transport calls `flow` on 401/403. The HTTP
//! itself (fetches, the well-known locations, query strings and forms) is
//! the shared network layer's (`net::{fetch, urls}`), which the server's
//! token verifier uses too.
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferromcp::Error> {
//! use ferromcp::client::{Client, ClientOptions};
//! use ferromcp::client::auth::OAuthOptions;
//! let oauth = OAuthOptions::new("http://127.0.0.1:8765/callback", |url: String| async move {
//!     // Open `url` in a browser; return the URL the browser was sent back to.
//!     println!("open {url}");
//!     Ok::<_, ferromcp::Error>(String::from("http://127.0.0.1:8765/callback?code=...&state=..."))
//! });
//! let options = ClientOptions { oauth: Some(oauth), ..ClientOptions::default() };
//! let client = Client::connect_http_with("https://mcp.example.com/mcp", options).await?;
//! # Ok(()) }
//! ```

mod challenge;
mod dpop;
mod enterprise;
mod file_store;
pub(crate) mod flow;
mod headless;
mod jwt;
mod loopback;
mod metadata;
mod pkce;
mod registration;
mod scope;
mod store;
mod token;

use std::sync::Arc;

use crate::{BoxFuture, Error};

pub use crate::error::AuthError;
pub use enterprise::EnterpriseIdp;
pub use file_store::FileTokenStore;
pub use headless::headless_authorize;
pub use loopback::LoopbackRedirect;
pub use store::{ClientCredentials, MemoryTokenStore, StoredTokens, TokenStore};

/// The user interaction: receives the authorization URL to open (in a
/// browser), resolves to the redirect URL the authorization server sent
/// the user back to (with `code`, `state`, and usually `iss`).
pub type AuthorizeCallback = Arc<dyn Fn(String) -> BoxFuture<Result<String, Error>> + Send + Sync>;

/// The settings of [`OAuthOptions`] every grant shares, as a binding gathers
/// them from its host's options: `None` keeps the default, pre-registered
/// clients are added. One place for the bindings to apply them
/// ([`OAuthOptions::with_settings`]).
#[derive(Debug, Clone, Default)]
pub struct OAuthSettings {
    /// [`OAuthOptions::client_name`].
    pub client_name: Option<String>,
    /// [`OAuthOptions::client_metadata_url`].
    pub client_metadata_url: Option<String>,
    /// Added to [`OAuthOptions::pre_registered`].
    pub pre_registered: Vec<PreRegisteredClient>,
    /// [`OAuthOptions::offline_access`].
    pub offline_access: Option<bool>,
    /// [`OAuthOptions::dpop`].
    pub dpop: Option<bool>,
    /// [`OAuthOptions::max_authorizations`].
    pub max_authorizations: Option<usize>,
    /// [`OAuthOptions::stored_only`].
    pub stored_only: Option<String>,
}

/// Client credentials registered out of band with an authorization server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreRegisteredClient {
    /// The issuer they are valid at; `None` uses them with any server
    /// (a client that only ever talks to one). Credentials are never sent
    /// to an issuer they were not registered with.
    pub issuer: Option<String>,
    /// The credentials.
    pub credentials: ClientCredentials,
}

/// How the client obtains tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Grant {
    /// A user consents in a browser (authorization code + PKCE).
    #[default]
    AuthorizationCode,
    /// The client's own credentials (`client_credentials`), no user.
    ClientCredentials,
    /// A JWT the workload already holds (issued by its platform: a
    /// Kubernetes service account token, a cloud identity token) exchanged
    /// for an access token (RFC 7523 `jwt-bearer`, workload identity
    /// federation); [`OAuthOptions::assertion`] supplies it.
    JwtBearer,
}

/// Supplies the current assertion for [`Grant::JwtBearer`] (called at
/// each token request: platform tokens rotate), given the authorization
/// server and resource it is for (an enterprise IdP mints an ID-JAG for
/// exactly that pair).
pub type AssertionCallback =
    Arc<dyn Fn(AssertionRequest) -> BoxFuture<Result<String, Error>> + Send + Sync>;

/// What a jwt-bearer assertion is requested for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssertionRequest {
    /// The authorization server's issuer (the assertion's audience).
    pub issuer: String,
    /// The protected resource (`resource` from its metadata).
    pub resource: String,
}

/// OAuth settings of an HTTP client ([`crate::client::ClientOptions::oauth`]).
#[derive(Clone)]
pub struct OAuthOptions {
    /// Where the authorization server sends the user back (registered with
    /// it): a loopback URL for a desktop app, the app's own page for a web app.
    pub redirect_uri: String,
    /// Shows the authorization URL to the user and returns the redirect.
    pub authorize: AuthorizeCallback,
    /// Keeps tokens and registrations; in memory unless replaced.
    pub store: Arc<dyn TokenStore>,
    /// `client_name` in dynamic registrations.
    pub client_name: String,
    /// The URL of this client's metadata document (SEP-991), used as its
    /// `client_id` with servers that support them.
    pub client_metadata_url: Option<String>,
    /// Credentials registered out of band.
    pub pre_registered: Vec<PreRegisteredClient>,
    /// Ask for `offline_access` (a refresh token) when the authorization
    /// server lists it.
    pub offline_access: bool,
    /// How tokens are obtained: a user's consent (authorization code) or
    /// the client's own credentials (machine to machine).
    pub grant: Grant,
    /// Ask for DPoP-bound tokens (RFC 9449): each request proves
    /// possession of a key made for this client, so a stolen token alone is
    /// useless. Off by default: a server must support it.
    pub dpop: bool,
    /// The assertion source of [`Grant::JwtBearer`].
    pub assertion: Option<AssertionCallback>,
    /// Authorizations one request may trigger before the client gives up
    /// (the first login and step-ups together): a server that keeps
    /// refusing must not loop the user through consent screens.
    pub max_authorizations: usize,
    /// Set for a client that only uses logins made elsewhere (a command
    /// line tool's ordinary commands after its `login` command): it never
    /// obtains tokens itself except by refreshing stored ones. A request
    /// that needs a new authorization (or a step-up) then fails with
    /// [`AuthError::Interaction`] carrying this text, before anything is
    /// registered at the authorization server or shown to a user. `None`
    /// (the default): such a request starts the authorization.
    pub stored_only: Option<String>,
}

impl std::fmt::Debug for OAuthOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthOptions")
            .field("redirect_uri", &self.redirect_uri)
            .field("client_name", &self.client_name)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("offline_access", &self.offline_access)
            .field("max_authorizations", &self.max_authorizations)
            .field("stored_only", &self.stored_only)
            .finish_non_exhaustive()
    }
}

impl OAuthOptions {
    /// Settings with a redirect URI and the user-interaction callback;
    /// tokens in memory, dynamic registration as `ferromcp-client`.
    ///
    /// ```
    /// use ferromcp::client::auth::OAuthOptions;
    /// let oauth = OAuthOptions::new("http://127.0.0.1:8765/callback", |url: String| async move {
    ///     Ok::<_, ferromcp::Error>(url) // a real app opens a browser here
    /// });
    /// assert_eq!(oauth.max_authorizations, 3);
    /// ```
    pub fn new<F, Fut>(redirect_uri: impl Into<String>, authorize: F) -> OAuthOptions
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<String, Error>> + Send + 'static,
    {
        OAuthOptions {
            redirect_uri: redirect_uri.into(),
            authorize: Arc::new(move |url| Box::pin(authorize(url))),
            store: Arc::new(MemoryTokenStore::default()),
            client_name: "ferromcp-client".into(),
            client_metadata_url: None,
            pre_registered: Vec::new(),
            offline_access: true,
            grant: Grant::AuthorizationCode,
            assertion: None,
            dpop: false,
            max_authorizations: 3,
            stored_only: None,
        }
    }

    /// Settings for a client that only uses logins made elsewhere (see
    /// [`OAuthOptions::stored_only`](OAuthOptions#structfield.stored_only)):
    /// the store's tokens and their refresh; a request that needs a new
    /// authorization fails with `message`. No redirect URI and no
    /// user-interaction callback: nothing would ever call it.
    ///
    /// ```
    /// use ferromcp::client::auth::{MemoryTokenStore, OAuthOptions};
    /// use std::sync::Arc;
    ///
    /// let store = Arc::new(MemoryTokenStore::default()); // where `login` saved its tokens
    /// let oauth = OAuthOptions::stored_only("run `mytool login` first").with_store(store);
    /// assert_eq!(oauth.stored_only.as_deref(), Some("run `mytool login` first"));
    /// ```
    pub fn stored_only(message: impl Into<String>) -> OAuthOptions {
        let message = message.into();
        let interaction = message.clone();
        let mut options = OAuthOptions::new("", move |_url: String| {
            // Never called: the flow stops at `stored_only` first.
            let interaction = interaction.clone();
            async move { Err(AuthError::Interaction(interaction).into()) }
        });
        options.stored_only = Some(message);
        options
    }

    /// [`OAuthOptions::client_credentials`] authenticating with
    /// `private_key_jwt`: an ES256 assertion signed with `private_key_pem`
    /// (PKCS#8 PEM, P-256) instead of a secret.
    ///
    /// ```
    /// use ferromcp::client::auth::OAuthOptions;
    /// let pem = "-----BEGIN PRIVATE KEY-----\n...\n-----END PRIVATE KEY-----\n";
    /// let oauth = OAuthOptions::client_credentials_jwt("my-service", pem);
    /// assert!(oauth.pre_registered[0].credentials.private_key_pem.is_some());
    /// ```
    pub fn client_credentials_jwt(
        client_id: impl Into<String>,
        private_key_pem: impl Into<String>,
    ) -> OAuthOptions {
        let mut options = OAuthOptions::client_credentials(client_id, None);
        if let Some(pre) = options.pre_registered.last_mut() {
            pre.credentials.private_key_pem = Some(private_key_pem.into());
            pre.credentials.token_endpoint_auth_method = Some("private_key_jwt".into());
        }
        options
    }

    /// Settings for a client acting on its own behalf (the OAuth
    /// `client_credentials` grant, the MCP client-credentials extension):
    /// no user, no redirect; the secret is sent as the authorization server
    /// supports (`client_secret_basic` or `client_secret_post`).
    ///
    /// ```
    /// use ferromcp::client::auth::{Grant, OAuthOptions};
    /// let oauth = OAuthOptions::client_credentials("my-service", Some("s3cret".into()));
    /// assert_eq!(oauth.grant, Grant::ClientCredentials);
    /// ```
    pub fn client_credentials(
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> OAuthOptions {
        let mut options = OAuthOptions::new("", |_url: String| async {
            Err(
                AuthError::Interaction("a client-credentials client has no user to ask".into())
                    .into(),
            )
        })
        .with_pre_registered(None, client_id, client_secret);
        options.grant = Grant::ClientCredentials;
        options.offline_access = false;
        options
    }

    /// Settings for a workload presenting a JWT its platform issued
    /// (RFC 7523 `jwt-bearer` grant, workload identity federation): no
    /// user; `assertion` is asked for the current JWT at each token request.
    /// A refused assertion is reported, not retried with another grant.
    ///
    /// A confidential client passes its secret (sent as the server
    /// supports); a workload without one passes `None`.
    ///
    /// ```
    /// use ferromcp::client::auth::{AssertionRequest, Grant, OAuthOptions};
    /// let oauth = OAuthOptions::jwt_bearer("my-workload", None, |_for: AssertionRequest| async {
    ///     std::fs::read_to_string("/var/run/secrets/tokens/mcp").map_err(ferromcp::Error::from)
    /// });
    /// assert_eq!(oauth.grant, Grant::JwtBearer);
    /// ```
    pub fn jwt_bearer<F, Fut>(
        client_id: impl Into<String>,
        client_secret: Option<String>,
        assertion: F,
    ) -> OAuthOptions
    where
        F: Fn(AssertionRequest) -> Fut + Send + Sync + 'static,
        Fut: std::future::Future<Output = Result<String, Error>> + Send + 'static,
    {
        let mut options = OAuthOptions::client_credentials(client_id, client_secret);
        options.grant = Grant::JwtBearer;
        options.assertion = Some(Arc::new(move |request| Box::pin(assertion(request))));
        options
    }

    /// Enterprise-managed authorization (SEP-990): the user's ID token from
    /// the enterprise identity provider is exchanged there (RFC 8693) for an
    /// identity assertion grant (ID-JAG) for this authorization server and
    /// resource, which the client then presents with the `jwt-bearer` grant
    /// and its own credentials. No browser round trip.
    ///
    /// ```
    /// use ferromcp::client::auth::{EnterpriseIdp, OAuthOptions};
    /// let idp = EnterpriseIdp {
    ///     token_endpoint: "https://idp.example.com/token".into(),
    ///     client_id: "mcp-client-at-idp".into(),
    ///     client_secret: None,
    ///     id_token: "eyJ...".into(),
    /// };
    /// let oauth = OAuthOptions::enterprise_managed("mcp-client", Some("secret".into()), idp, Default::default());
    /// ```
    pub fn enterprise_managed(
        client_id: impl Into<String>,
        client_secret: Option<String>,
        idp: EnterpriseIdp,
        tls: crate::net::TlsOptions,
    ) -> OAuthOptions {
        let idp = Arc::new(idp);
        OAuthOptions::jwt_bearer(client_id, client_secret, move |request| {
            let idp = idp.clone();
            let tls = tls.clone();
            async move { enterprise::id_jag(&idp, &request, &tls).await }
        })
    }

    /// Applies the settings every grant shares (see [`OAuthSettings`]).
    ///
    /// ```
    /// use ferromcp::client::auth::{OAuthOptions, OAuthSettings};
    /// let settings = OAuthSettings { dpop: Some(true), max_authorizations: Some(1), ..Default::default() };
    /// let oauth = OAuthOptions::client_credentials("svc", Some("s".into())).with_settings(&settings);
    /// assert!(oauth.dpop);
    /// assert_eq!(oauth.max_authorizations, 1);
    /// assert_eq!(oauth.client_name, "ferromcp-client"); // unset: the default stays
    /// ```
    pub fn with_settings(mut self, settings: &OAuthSettings) -> Self {
        if let Some(name) = &settings.client_name {
            self.client_name = name.clone();
        }
        if let Some(url) = &settings.client_metadata_url {
            self.client_metadata_url = Some(url.clone());
        }
        self.pre_registered
            .extend(settings.pre_registered.iter().cloned());
        if let Some(offline) = settings.offline_access {
            self.offline_access = offline;
        }
        if let Some(dpop) = settings.dpop {
            self.dpop = dpop;
        }
        if let Some(max) = settings.max_authorizations {
            self.max_authorizations = max;
        }
        if let Some(message) = &settings.stored_only {
            self.stored_only = Some(message.clone());
        }
        self
    }

    /// Replaces the token store.
    pub fn with_store(mut self, store: Arc<dyn TokenStore>) -> Self {
        self.store = store;
        self
    }

    /// Sets the client ID metadata document URL.
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Adds pre-registered credentials (for `issuer`, or any when `None`).
    pub fn with_pre_registered(
        mut self,
        issuer: Option<String>,
        client_id: impl Into<String>,
        client_secret: Option<String>,
    ) -> Self {
        self.pre_registered.push(PreRegisteredClient {
            issuer,
            credentials: ClientCredentials {
                client_id: client_id.into(),
                client_secret,
                ..Default::default()
            },
        });
        self
    }
}
