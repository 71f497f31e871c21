//! OAuth for the Node client: the native `OAuth` settings object, the
//! `LoopbackRedirect` helper and `headlessAuthorize`, adapting core's
//! [`ferromcp::client::auth`] (which runs the whole protocol: discovery,
//! registration, PKCE, tokens, DPoP, step-up) to JS callbacks.
//!
//! The facade (`lib/oauth.js`) turns the user's `oauth` option into one
//! `new OAuth(options, authorize, assertion, store)`; the connect call then
//! reads it (`JsOAuth::core_options`). JS callbacks go through the
//! binding's one host-call adapter ([`host_call::call`]), so a plain value
//! or a promise may answer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp::Error;
use ferromcp::client::TlsOptions;
use ferromcp::client::auth::{
    AssertionCallback, AssertionRequest, AuthError, AuthorizeCallback, ClientCredentials,
    EnterpriseIdp, LoopbackRedirect, OAuthOptions, OAuthSettings, PreRegisteredClient,
    StoredTokens, TokenStore, headless_authorize,
};
use ferromcp::host::oauth::{HostCallbacks, HostGrant};
use ferromcp::server::{FromHost, HandlerError, OutputError};
use napi::bindgen_prelude::Object;
use napi::{Env, Status};
use napi_derive::napi;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::host_call::{self, HostFunction, HostOutput, JsCallback};
use crate::runtime::spawn;

/// What an authorize or assertion callback must answer: a string.
struct HostText(String);

impl FromHost for HostText {
    const KIND: &'static str = "OAuth callback";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        match value {
            Value::String(text) => Ok(HostText(text)),
            other => Err(OutputError {
                kind: Self::KIND,
                reason: format!("expected a string, got {other}"),
            }),
        }
    }
}

impl HostOutput for HostText {}

/// What a token store method answers: any JSON (`null` for nothing).
struct HostJson(Value);

impl FromHost for HostJson {
    const KIND: &'static str = "token store";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        Ok(HostJson(value))
    }
}

impl HostOutput for HostJson {}

/// A failed authorize or assertion callback, as core's OAuth error (kind
/// `"auth"`): the user closed the browser, the platform token is missing.
fn interaction(error: HandlerError) -> Error {
    let message = match error {
        HandlerError::Protocol(mcp) => mcp.message,
        HandlerError::Tool(message) => message,
    };
    AuthError::Interaction(message).into()
}

/// Calls a JS callback that answers with a string.
async fn text(callback: Arc<JsCallback>, input: Value) -> Result<String, Error> {
    host_call::call::<HostText>(&callback, None, input)
        .await
        .map(|HostText(text)| text)
        .map_err(interaction)
}

/// A JS token store: one dispatcher function `({op, key, value}) => any`
/// that the facade builds from the user's object (naming, error reports).
///
/// Core calls a [`TokenStore`] synchronously, around an authorization only
/// (never per request). The call is made on the JS thread and the runtime
/// worker waits for the answer with `block_in_place`, which hands the
/// worker's other tasks to another thread meanwhile; the JS thread never
/// waits on the runtime, so this cannot deadlock. A method may return a
/// promise: it is awaited the same way.
struct JsTokenStore {
    dispatch: JsCallback,
}

impl JsTokenStore {
    fn call(&self, op: &str, key: &str, value: Value) -> Value {
        let input = json!({ "op": op, "key": key, "value": value });
        let answer = host_call::call::<HostJson>(&self.dispatch, None, input);
        let answer = tokio::task::block_in_place(|| ferromcp::runtime::handle().block_on(answer));
        // The facade reports a throwing store method (process warning) and
        // answers `null`; what still fails here is the adapter itself.
        answer.map_or(Value::Null, |HostJson(value)| value)
    }

    fn load<T: DeserializeOwned>(&self, op: &str, key: &str) -> Option<T> {
        match self.call(op, key, Value::Null) {
            Value::Null => None,
            found => serde_json::from_value(found).ok(),
        }
    }

    fn save<T: Serialize>(&self, op: &str, key: &str, value: &T) {
        if let Ok(value) = serde_json::to_value(value) {
            self.call(op, key, value);
        }
    }
}

impl TokenStore for JsTokenStore {
    fn load_tokens(&self, resource: &str) -> Option<StoredTokens> {
        self.load("loadTokens", resource)
    }
    fn save_tokens(&self, resource: &str, tokens: &StoredTokens) {
        self.save("saveTokens", resource, tokens);
    }
    fn clear_tokens(&self, resource: &str) {
        self.call("clearTokens", resource, Value::Null);
    }
    fn load_client(&self, issuer: &str) -> Option<ClientCredentials> {
        self.load("loadClient", issuer)
    }
    fn save_client(&self, issuer: &str, client: &ClientCredentials) {
        self.save("saveClient", issuer, client);
    }
}

/// Credentials registered out of band with an authorization server.
#[napi(object, js_name = "OAuthPreRegistered")]
pub struct JsPreRegistered {
    /// The issuer they are valid at; absent: any.
    pub issuer: Option<String>,
    /// `client_id`.
    pub client_id: String,
    /// `client_secret` of a confidential client.
    pub client_secret: Option<String>,
}

/// The enterprise identity provider of `grant: "enterpriseManaged"`.
#[napi(object, js_name = "OAuthEnterpriseIdp")]
pub struct JsEnterpriseIdp {
    /// The IdP's token endpoint (token exchange).
    pub token_endpoint: String,
    /// This client's id at the IdP.
    pub client_id: String,
    /// This client's secret at the IdP, if any.
    pub client_secret: Option<String>,
    /// The user's OpenID Connect ID token from the IdP.
    pub id_token: String,
}

/// The plain-data part of the OAuth settings (callbacks are separate
/// arguments of the `OAuth` constructor). PEM texts: the facade reads files.
#[napi(object, js_name = "OAuthNativeOptions")]
pub struct JsOAuthOptions {
    /// `"authorizationCode"` (default), `"clientCredentials"`,
    /// `"jwtBearer"` or `"enterpriseManaged"`.
    pub grant: Option<String>,
    /// Authorization code: where the authorization server sends the user back.
    pub redirect_uri: Option<String>,
    /// `client_name` in dynamic registrations.
    pub client_name: Option<String>,
    /// This client's metadata document URL (used as its `client_id`).
    pub client_metadata_url: Option<String>,
    /// Credentials registered out of band.
    pub pre_registered: Option<Vec<JsPreRegistered>>,
    /// Ask for `offline_access` (a refresh token).
    pub offline_access: Option<bool>,
    /// Ask for DPoP-bound tokens (RFC 9449).
    pub dpop: Option<bool>,
    /// Authorizations one request may trigger (default 3).
    pub max_authorizations: Option<u32>,
    /// Only the store's tokens (a login made elsewhere) and their refresh;
    /// a request needing a new login fails with this message.
    pub stored_only: Option<String>,
    /// The client's own id (every grant but the authorization code).
    pub client_id: Option<String>,
    /// The client's secret.
    pub client_secret: Option<String>,
    /// `clientCredentials` with `private_key_jwt`: a PKCS#8 P-256 key (PEM).
    pub private_key_pem: Option<String>,
    /// `enterpriseManaged`: the identity provider.
    pub idp: Option<JsEnterpriseIdp>,
}

/// OAuth settings of an HTTP client, made by the facade from the `oauth`
/// option of `Client.http`; see `HttpClientOptions.oauth` in `index.d.ts`.
///
/// @example
/// ```js
/// const native = require("./native.js");
/// const oauth = new native.OAuth({ grant: "clientCredentials", clientId: "svc", clientSecret: "s" });
/// const client = await native.Client.connectHttp("https://mcp.example.com/mcp", {}, null, null, null, oauth);
/// ```
#[napi(js_name = "OAuth")]
pub struct JsOAuth {
    /// How tokens are obtained; core maps it to its options.
    grant: HostGrant,
    /// The JS callbacks and store, adapted to core's.
    callbacks: HostCallbacks,
    settings: OAuthSettings,
}

fn invalid(message: String) -> napi::Error {
    napi::Error::new(Status::InvalidArg, message)
}

fn required(value: Option<String>, what: &str, grant: &str) -> napi::Result<String> {
    value.ok_or_else(|| invalid(format!("oauth.{what} is required with grant {grant:?}")))
}

fn adapt(function: Option<HostFunction<'_>>) -> napi::Result<Option<Arc<JsCallback>>> {
    function
        .map(|f| JsCallback::new(&f).map(Arc::new))
        .transpose()
}

#[napi]
impl JsOAuth {
    /// Checks the settings now (a missing `redirectUri`, an unknown grant
    /// throw here, not at the first request). `authorize(url, null)` and
    /// `assertion({issuer, resource}, null)` answer with a string;
    /// `store({op, key, value}, null)` is the token store's dispatcher.
    #[napi(
        constructor,
        ts_args_type = "options: OAuthNativeOptions, authorize?: ((url: string, ctx: null) => unknown) | null, assertion?: ((request: { issuer: string; resource: string }, ctx: null) => unknown) | null, store?: ((call: { op: string; key: string; value: any }, ctx: null) => unknown) | null"
    )]
    pub fn new(
        options: JsOAuthOptions,
        authorize: Option<HostFunction<'_>>,
        assertion: Option<HostFunction<'_>>,
        store: Option<HostFunction<'_>>,
    ) -> napi::Result<JsOAuth> {
        let grant = options
            .grant
            .unwrap_or_else(|| "authorizationCode".to_owned());
        let (grant, authorize, assertion) = match grant.as_str() {
            // `storedOnly`: the store's tokens and their refresh, never a
            // login (core stops first), so no redirect and no callback.
            "authorizationCode" if options.stored_only.is_some() && authorize.is_none() => {
                let redirect_uri = String::new();
                (HostGrant::AuthorizationCode { redirect_uri }, None, None)
            }
            "authorizationCode" => {
                let redirect_uri = required(options.redirect_uri, "redirectUri", &grant)?;
                let authorize = adapt(authorize)?.ok_or_else(|| {
                    invalid("oauth.authorize is required with grant \"authorizationCode\"".into())
                })?;
                let grant = HostGrant::AuthorizationCode { redirect_uri };
                (grant, Some(authorize), None)
            }
            "clientCredentials" => {
                if options.private_key_pem.is_some() && options.client_secret.is_some() {
                    return Err(invalid(
                        "oauth: give clientSecret or privateKeyPem, not both".into(),
                    ));
                }
                let grant = HostGrant::ClientCredentials {
                    client_id: required(options.client_id, "clientId", &grant)?,
                    client_secret: options.client_secret,
                    private_key_pem: options.private_key_pem,
                };
                (grant, None, None)
            }
            "jwtBearer" => {
                let grant = HostGrant::JwtBearer {
                    client_id: required(options.client_id, "clientId", &grant)?,
                    client_secret: options.client_secret,
                };
                let assertion = adapt(assertion)?.ok_or_else(|| {
                    invalid("oauth.assertion is required with grant \"jwtBearer\"".into())
                })?;
                (grant, None, Some(assertion))
            }
            "enterpriseManaged" => {
                let idp = options.idp.ok_or_else(|| {
                    invalid("oauth.idp is required with grant \"enterpriseManaged\"".into())
                })?;
                let grant = HostGrant::EnterpriseManaged {
                    client_id: required(options.client_id, "clientId", &grant)?,
                    client_secret: options.client_secret,
                    idp: EnterpriseIdp {
                        token_endpoint: idp.token_endpoint,
                        client_id: idp.client_id,
                        client_secret: idp.client_secret,
                        id_token: idp.id_token,
                    },
                };
                (grant, None, None)
            }
            other => {
                return Err(invalid(format!(
                    "oauth.grant must be \"authorizationCode\", \"clientCredentials\", \"jwtBearer\" or \"enterpriseManaged\", not {other:?}"
                )));
            }
        };
        let store = store
            .map(|f| JsCallback::new(&f))
            .transpose()?
            .map(|dispatch| Arc::new(JsTokenStore { dispatch }) as Arc<dyn TokenStore>);
        let callbacks = HostCallbacks {
            authorize: authorize.map(authorize_callback),
            assertion: assertion.map(assertion_callback),
            store,
        };
        let pre_registered = options
            .pre_registered
            .unwrap_or_default()
            .into_iter()
            .map(|pre| PreRegisteredClient {
                issuer: pre.issuer,
                credentials: ClientCredentials {
                    client_id: pre.client_id,
                    client_secret: pre.client_secret,
                    ..Default::default()
                },
            })
            .collect();
        Ok(JsOAuth {
            grant,
            callbacks,
            settings: OAuthSettings {
                client_name: options.client_name,
                client_metadata_url: options.client_metadata_url,
                pre_registered,
                offline_access: options.offline_access,
                dpop: options.dpop,
                max_authorizations: options.max_authorizations.map(|n| n as usize),
                stored_only: options.stored_only,
            },
        })
    }
}

/// A JS authorize callback as core's: `(url, null) => string`.
fn authorize_callback(authorize: Arc<JsCallback>) -> AuthorizeCallback {
    Arc::new(move |url: String| Box::pin(text(authorize.clone(), Value::String(url))))
}

/// A JS assertion callback as core's: `({issuer, resource}, null) => string`.
fn assertion_callback(assertion: Arc<JsCallback>) -> AssertionCallback {
    Arc::new(move |request: AssertionRequest| {
        let input = json!({ "issuer": request.issuer, "resource": request.resource });
        Box::pin(text(assertion.clone(), input))
    })
}

impl JsOAuth {
    /// Core's settings; `tls` is the client's (the enterprise IdP is
    /// reached with it too).
    pub(crate) fn core_options(&self, tls: &TlsOptions) -> napi::Result<OAuthOptions> {
        // The constructor refused a grant without its callback already.
        self.grant
            .oauth_options(self.callbacks.clone(), &self.settings, tls)
            .map_err(|missing| invalid(format!("oauth: the {missing:?} callback is missing")))
    }
}

/// A one-shot listener on `127.0.0.1` for the authorization redirect of a
/// desktop login (RFC 8252 §7.3): core's [`LoopbackRedirect`].
///
/// @example
/// ```js
/// const native = require("./native.js");
/// const loopback = await native.LoopbackRedirect.bind(0, "/callback");
/// console.log(loopback.redirectUri); // http://127.0.0.1:PORT/callback
/// const redirect = await loopback.wait(300000);
/// ```
#[napi(js_name = "LoopbackRedirect")]
pub struct JsLoopbackRedirect {
    redirect_uri: String,
    /// `None` once closed: the port is released when no wait holds it.
    listener: Mutex<Option<Arc<LoopbackRedirect>>>,
}

#[napi]
impl JsLoopbackRedirect {
    /// Binds `127.0.0.1:port` (0: any free port) for redirects to `path`.
    #[napi(ts_return_type = "Promise<LoopbackRedirect>")]
    pub fn bind<'env>(env: &'env Env, port: u32, path: String) -> napi::Result<Object<'env>> {
        let port = u16::try_from(port).map_err(|_| invalid(format!("invalid port {port}")))?;
        spawn(
            env,
            async move { LoopbackRedirect::bind(port, &path).await },
            |listener| {
                Ok(JsLoopbackRedirect {
                    redirect_uri: listener.redirect_uri().to_owned(),
                    listener: Mutex::new(Some(Arc::new(listener))),
                })
            },
        )
    }

    /// The redirect URI to register (`http://127.0.0.1:PORT/path`).
    #[napi(getter)]
    pub fn redirect_uri(&self) -> String {
        self.redirect_uri.clone()
    }

    /// Waits up to `timeoutMs` for the browser's redirect; resolves with the
    /// full redirect URL (rejects with kind `"auth"` on timeout).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn wait<'env>(&self, env: &'env Env, timeout_ms: f64) -> napi::Result<Object<'env>> {
        let timeout = Duration::try_from_secs_f64(timeout_ms / 1000.0)
            .map_err(|e| invalid(format!("invalid timeout: {e}")))?;
        let listener = self
            .listener
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone();
        spawn(
            env,
            async move {
                match listener {
                    Some(listener) => listener.wait(timeout).await,
                    None => {
                        Err(AuthError::Interaction("the loopback listener is closed".into()).into())
                    }
                }
            },
            Ok::<String, napi::Error>,
        )
    }

    /// Stops listening (once no `wait` is pending).
    #[napi]
    pub fn close(&self) {
        self.listener
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
    }
}

/// Requests an authorization URL and resolves with where it redirects,
/// without following it: for an authorization server that approves without
/// a login page (test servers). Core's [`headless_authorize`].
///
/// @example
/// ```js
/// const native = require("./native.js");
/// const redirect = await native.headlessAuthorize("http://127.0.0.1:9000/authorize?client_id=x");
/// ```
#[cfg_attr(test, allow(dead_code))]
#[napi(js_name = "headlessAuthorize", ts_return_type = "Promise<string>")]
pub fn headless_authorize_url<'env>(env: &'env Env, url: String) -> napi::Result<Object<'env>> {
    spawn(
        env,
        async move { headless_authorize(&url, &TlsOptions::default()).await },
        Ok::<String, napi::Error>,
    )
}
