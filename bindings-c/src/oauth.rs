//! OAuth for the C client: `ferromcp_oauth_options` (JSON settings plus the
//! authorize, assertion and token-store callbacks), attached to client
//! options with ferromcp_client_options_set_oauth() (in `client.rs`); core's
//! [`ferromcp_core::client::auth`] runs the whole protocol (discovery,
//! registration, PKCE, tokens, DPoP, step-up). C callbacks answer through a
//! borrowed `ferromcp_oauth_reply`, which copies what they give.

use serde_json::{Map, Value};
use std::ffi::{CString, c_char, c_void};
use std::sync::Arc;

use ferromcp_core::Error;
use ferromcp_core::client::TlsOptions;
use ferromcp_core::client::auth::{
    AssertionRequest, AuthError, ClientCredentials, EnterpriseIdp, OAuthOptions, OAuthSettings,
    PreRegisteredClient, StoredTokens, TokenStore, headless_authorize,
};
use ferromcp_core::host::oauth::{HostCallbacks, HostGrant, MissingCallback};

use crate::args::{check_out, parse_json_object, required_str};
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::{
    Castable, OwnershipBox, OwnershipRef, Userdata, ferromcp_userdata_free, free_box, give_string,
    set_boxed_mut_ptr, take_callback, try_from, try_from_mut,
};
use crate::panic::ffi_boundary;
use crate::threads::{C_THREADS, block};

/// Where a callback puts its answer: a text (a redirect URL, an assertion,
/// a stored record's JSON) or a failure message.
///
/// Opaque. Borrowed by the callback it is given to, valid only until the
/// callback returns; ferromcp_oauth_reply_set() and
/// ferromcp_oauth_reply_fail() copy what they are given. The last call
/// before the callback returns wins.
pub struct ferromcp_oauth_reply {
    answer: Option<Result<String, String>>,
}

impl Castable for ferromcp_oauth_reply {
    type Ownership = OwnershipRef;
}

/// Which record a token store callback is about.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ferromcp_oauth_record {
    /// The tokens for an MCP server URL (the key): JSON
    /// `{"access_token","refresh_token"?,"expires_at"?,"scopes":[...],"issuer","token_type"?}`.
    FERROMCP_OAUTH_TOKENS = 0,
    /// The client registration at an authorization server (the key is its
    /// issuer): JSON `{"client_id","client_secret"?,"token_endpoint_auth_method"?,
    /// "redirect_uris"?:[...],...}`. `redirect_uris` lists the redirect URIs a
    /// dynamic registration was made for: a login with another one registers
    /// again and saves the new registration over this one. Keep the whole
    /// JSON as it is (fields may be added).
    FERROMCP_OAUTH_CLIENT = 1,
}

/// Shows the user the authorization URL and gives back the URL the browser
/// was redirected to (with `code`, `state`, usually `iss`).
///
/// - `userdata`: the pointer given to ferromcp_oauth_options_on_authorize().
/// - `authorization_url`: NUL-terminated, valid until the callback returns.
/// - `reply`: answer with ferromcp_oauth_reply_set(reply, redirect_url), or
///   ferromcp_oauth_reply_fail(reply, why); no answer fails the login.
///
/// Threads: called on a ferromcp host thread (never an async runtime
/// worker), so it may block for as long as the user takes (that time does
/// not count against the client's request timeout), and may call
/// ferromcp_oauth_headless_authorize().
pub type ferromcp_oauth_authorize_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        authorization_url: *const c_char,
        reply: *mut ferromcp_oauth_reply,
    ),
>;

/// Gives the current assertion (a JWT) of the `jwtBearer` grant, for the
/// authorization server `issuer` and the MCP server `resource`.
///
/// - `issuer`, `resource`: NUL-terminated, valid until the callback returns.
/// - `reply`: ferromcp_oauth_reply_set(reply, jwt) or _fail().
///
/// Threads: as ferromcp_oauth_authorize_callback.
pub type ferromcp_oauth_assertion_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        issuer: *const c_char,
        resource: *const c_char,
        reply: *mut ferromcp_oauth_reply,
    ),
>;

/// Loads a record from a token store: ferromcp_oauth_reply_set(reply,
/// record_json) with what was saved for `key`, or nothing (or _fail) when
/// nothing is.
///
/// Threads: called on a ferromcp thread around a login only (never per
/// request), while that thread is allowed to block: it may do file or
/// keychain I/O but must not call ferromcp client functions.
pub type ferromcp_oauth_store_load_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        record: ferromcp_oauth_record,
        key: *const c_char,
        reply: *mut ferromcp_oauth_reply,
    ),
>;

/// Saves (replaces) a record of a token store; `record_json` NULL forgets it.
/// `key` and `record_json` are valid until the callback returns.
///
/// Threads: as ferromcp_oauth_store_load_callback.
pub type ferromcp_oauth_store_save_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        record: ferromcp_oauth_record,
        key: *const c_char,
        record_json: *const c_char,
    ),
>;

/// C text for a callback argument (NULs cannot occur in URLs or JSON;
/// replaced rather than truncated if they ever do).
fn c_text(text: &str) -> CString {
    CString::new(text.replace('\0', "\u{FFFD}")).unwrap_or_default()
}

/// What a callback answered.
fn reply_of(reply: ferromcp_oauth_reply, what: &str) -> Result<String, String> {
    reply
        .answer
        .unwrap_or_else(|| Err(format!("the {what} callback gave no answer")))
}

type AuthorizeFn = unsafe extern "C" fn(*mut c_void, *const c_char, *mut ferromcp_oauth_reply);
type AssertionFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut ferromcp_oauth_reply);

/// A callback of the OAuth options (`F`: [`AuthorizeFn`] or
/// [`AssertionFn`]) with its userdata.
struct OAuthCallback<F> {
    callback: F,
    userdata: Userdata,
}

/// How core calls each kind of callback, so that one setter serves every
/// kind.
trait CallbackKind: Sized {
    /// Keeps `callback`, adapted to core's, in `callbacks`, replacing the
    /// one set before (released once nothing uses it).
    fn keep(callback: OAuthCallback<Self>, callbacks: &mut HostCallbacks);
}

impl CallbackKind for AuthorizeFn {
    fn keep(callback: OAuthCallback<Self>, callbacks: &mut HostCallbacks) {
        let callback = Arc::new(callback);
        callbacks.authorize = Some(Arc::new(move |url: String| {
            let callback = callback.clone();
            Box::pin(on_host_thread(move || callback.invoke(&url)))
        }));
    }
}

impl CallbackKind for AssertionFn {
    fn keep(callback: OAuthCallback<Self>, callbacks: &mut HostCallbacks) {
        let callback = Arc::new(callback);
        callbacks.assertion = Some(Arc::new(move |request: AssertionRequest| {
            let callback = callback.clone();
            let answer = move || callback.invoke(&request.issuer, &request.resource);
            Box::pin(on_host_thread(answer))
        }));
    }
}

/// Runs `invoke` on a host thread (C callbacks may block) and waits for
/// its answer; a failure is core's `AuthError::Interaction` (FERROMCP_AUTH).
async fn on_host_thread(
    invoke: impl FnOnce() -> Result<String, String> + Send + 'static,
) -> Result<String, Error> {
    let (sender, receiver) = tokio::sync::oneshot::channel();
    C_THREADS.submit(Box::new(move || {
        let _ = sender.send(invoke());
    }));
    receiver
        .await
        .unwrap_or_else(|_| Err("the callback never ran".to_owned()))
        .map_err(|message| AuthError::Interaction(message).into())
}

impl OAuthCallback<AuthorizeFn> {
    fn invoke(&self, url: &str) -> Result<String, String> {
        let url = c_text(url);
        let mut reply = ferromcp_oauth_reply { answer: None };
        // SAFETY: the callback contract; `url` and `reply` outlive the call.
        unsafe { (self.callback)(self.userdata.get(), url.as_ptr(), &mut reply) };
        reply_of(reply, "authorize")
    }
}

impl OAuthCallback<AssertionFn> {
    fn invoke(&self, issuer: &str, resource: &str) -> Result<String, String> {
        let (issuer, resource) = (c_text(issuer), c_text(resource));
        let mut reply = ferromcp_oauth_reply { answer: None };
        // SAFETY: the callback contract; the texts and `reply` outlive the call.
        unsafe {
            (self.callback)(
                self.userdata.get(),
                issuer.as_ptr(),
                resource.as_ptr(),
                &mut reply,
            )
        };
        reply_of(reply, "assertion")
    }
}

/// A C token store. Core calls a [`TokenStore`] synchronously around a
/// login; the callbacks may do I/O, so the call is made inside
/// `block_in_place` (the runtime moves the worker's other tasks away).
struct CStore {
    load: unsafe extern "C" fn(
        *mut c_void,
        ferromcp_oauth_record,
        *const c_char,
        *mut ferromcp_oauth_reply,
    ),
    save: unsafe extern "C" fn(*mut c_void, ferromcp_oauth_record, *const c_char, *const c_char),
    userdata: Userdata,
}

impl CStore {
    fn load<T: serde::de::DeserializeOwned>(
        &self,
        record: ferromcp_oauth_record,
        key: &str,
    ) -> Option<T> {
        let key = c_text(key);
        let mut reply = ferromcp_oauth_reply { answer: None };
        tokio::task::block_in_place(|| {
            // SAFETY: the callback contract; `key` and `reply` outlive the call.
            unsafe { (self.load)(self.userdata.get(), record, key.as_ptr(), &mut reply) }
        });
        // An unreadable record reads as none: the login happens again.
        serde_json::from_str(&reply.answer?.ok()?).ok()
    }

    fn save(&self, record: ferromcp_oauth_record, key: &str, json: Option<String>) {
        let key = c_text(key);
        let json = json.map(|text| c_text(&text));
        let json_ptr = json.as_ref().map_or(std::ptr::null(), |j| j.as_ptr());
        tokio::task::block_in_place(|| {
            // SAFETY: the callback contract; the texts outlive the call.
            unsafe { (self.save)(self.userdata.get(), record, key.as_ptr(), json_ptr) }
        });
    }
}

impl TokenStore for CStore {
    fn load_tokens(&self, resource: &str) -> Option<StoredTokens> {
        self.load(ferromcp_oauth_record::FERROMCP_OAUTH_TOKENS, resource)
    }
    fn save_tokens(&self, resource: &str, tokens: &StoredTokens) {
        let json = serde_json::to_string(tokens).ok();
        self.save(ferromcp_oauth_record::FERROMCP_OAUTH_TOKENS, resource, json);
    }
    fn clear_tokens(&self, resource: &str) {
        self.save(ferromcp_oauth_record::FERROMCP_OAUTH_TOKENS, resource, None);
    }
    fn load_client(&self, issuer: &str) -> Option<ClientCredentials> {
        self.load(ferromcp_oauth_record::FERROMCP_OAUTH_CLIENT, issuer)
    }
    fn save_client(&self, issuer: &str, client: &ClientCredentials) {
        let json = serde_json::to_string(client).ok();
        self.save(ferromcp_oauth_record::FERROMCP_OAUTH_CLIENT, issuer, json);
    }
}

/// OAuth settings of an HTTP client: JSON options (ferromcp_oauth_options_new())
/// plus callbacks (ferromcp_oauth_options_on_authorize(),
/// ferromcp_oauth_options_on_assertion(), ferromcp_oauth_options_set_store()),
/// attached to client options with ferromcp_client_options_set_oauth().
///
/// Opaque. Freed by ferromcp_oauth_options_free(); client options it was
/// attached to keep what they need. Not to be changed from two threads at
/// once.
pub struct ferromcp_oauth_options {
    /// The grant and its data, from the options JSON.
    grant: HostGrant,
    settings: OAuthSettings,
    /// The callbacks and the store set so far, adapted to core's.
    callbacks: HostCallbacks,
}

impl Castable for ferromcp_oauth_options {
    type Ownership = OwnershipBox;
}

fn bad(why: impl std::fmt::Display) -> FfiError {
    FfiError::new(
        ferromcp_status::FERROMCP_INVALID_JSON,
        format!("`options_json`: {why}"),
    )
}

fn text(map: &Map<String, Value>, key: &str) -> Result<Option<String>, FfiError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.clone())),
        Some(_) => Err(bad(format!("\"{key}\" must be a string"))),
    }
}

fn needed(map: &Map<String, Value>, key: &str, grant: &str) -> Result<String, FfiError> {
    text(map, key)?.ok_or_else(|| bad(format!("\"{key}\" is required with grant {grant:?}")))
}

fn flag(map: &Map<String, Value>, key: &str) -> Result<Option<bool>, FfiError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(bad(format!("\"{key}\" must be a boolean"))),
    }
}

fn only(map: &Map<String, Value>, known: &[&str], what: &str) -> Result<(), FfiError> {
    match map.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(bad(format!("unknown {what} member {key:?}"))),
        None => Ok(()),
    }
}

fn object<'a>(value: &'a Value, what: &str) -> Result<&'a Map<String, Value>, FfiError> {
    value
        .as_object()
        .ok_or_else(|| bad(format!("\"{what}\" must be an object")))
}

/// Reads the options JSON.
fn parse_options(map: &Map<String, Value>) -> Result<ferromcp_oauth_options, FfiError> {
    only(
        map,
        &[
            "grant",
            "redirectUri",
            "clientName",
            "clientMetadataUrl",
            "preRegistered",
            "offlineAccess",
            "dpop",
            "maxAuthorizations",
            "storedOnly",
            "clientId",
            "clientSecret",
            "privateKeyPem",
            "idp",
        ],
        "option",
    )?;
    let name = text(map, "grant")?.unwrap_or_else(|| "authorizationCode".to_owned());
    let grant = match name.as_str() {
        // A stored-only client never redirects anyone.
        "authorizationCode" if text(map, "storedOnly")?.is_some() => HostGrant::AuthorizationCode {
            redirect_uri: text(map, "redirectUri")?.unwrap_or_default(),
        },
        "authorizationCode" => HostGrant::AuthorizationCode {
            redirect_uri: needed(map, "redirectUri", &name)?,
        },
        "clientCredentials" => {
            let (secret, pem) = (text(map, "clientSecret")?, text(map, "privateKeyPem")?);
            if secret.is_some() && pem.is_some() {
                return Err(bad("give \"clientSecret\" or \"privateKeyPem\", not both"));
            }
            HostGrant::ClientCredentials {
                client_id: needed(map, "clientId", &name)?,
                client_secret: secret,
                private_key_pem: pem,
            }
        }
        "jwtBearer" => HostGrant::JwtBearer {
            client_id: needed(map, "clientId", &name)?,
            client_secret: text(map, "clientSecret")?,
        },
        "enterpriseManaged" => {
            let idp = object(
                map.get("idp")
                    .ok_or_else(|| bad("\"idp\" is required with grant \"enterpriseManaged\""))?,
                "idp",
            )?;
            only(
                idp,
                &["tokenEndpoint", "clientId", "clientSecret", "idToken"],
                "idp",
            )?;
            HostGrant::EnterpriseManaged {
                client_id: needed(map, "clientId", &name)?,
                client_secret: text(map, "clientSecret")?,
                idp: EnterpriseIdp {
                    token_endpoint: needed(idp, "tokenEndpoint", &name)?,
                    client_id: needed(idp, "clientId", &name)?,
                    client_secret: text(idp, "clientSecret")?,
                    id_token: needed(idp, "idToken", &name)?,
                },
            }
        }
        other => {
            return Err(bad(format!(
                "\"grant\" must be \"authorizationCode\", \"clientCredentials\", \"jwtBearer\" or \"enterpriseManaged\", not {other:?}"
            )));
        }
    };
    let pre_registered = match map.get("preRegistered") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| {
                let item = object(item, "preRegistered[]")?;
                only(
                    item,
                    &["issuer", "clientId", "clientSecret"],
                    "preRegistered",
                )?;
                Ok(PreRegisteredClient {
                    issuer: text(item, "issuer")?,
                    credentials: ClientCredentials {
                        client_id: text(item, "clientId")?
                            .ok_or_else(|| bad("each of \"preRegistered\" needs \"clientId\""))?,
                        client_secret: text(item, "clientSecret")?,
                        ..Default::default()
                    },
                })
            })
            .collect::<Result<_, FfiError>>()?,
        Some(_) => return Err(bad("\"preRegistered\" must be an array")),
    };
    let max_authorizations = match map.get("maxAuthorizations") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .filter(|n| *n > 0)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| bad("\"maxAuthorizations\" must be a positive integer"))?,
        ),
    };
    Ok(ferromcp_oauth_options {
        grant,
        settings: OAuthSettings {
            client_name: text(map, "clientName")?,
            client_metadata_url: text(map, "clientMetadataUrl")?,
            pre_registered,
            offline_access: flag(map, "offlineAccess")?,
            dpop: flag(map, "dpop")?,
            max_authorizations,
            stored_only: text(map, "storedOnly")?,
        },
        callbacks: HostCallbacks::default(),
    })
}

impl ferromcp_oauth_options {
    /// Core's settings; `tls` is the client's (the enterprise IdP is
    /// reached with it too). Fails when the grant's callback is missing.
    pub(crate) fn core_options(&self, tls: &TlsOptions) -> Result<OAuthOptions, FfiError> {
        let callbacks = self.callbacks.clone();
        let options = self.grant.oauth_options(callbacks, &self.settings, tls);
        options.map_err(|missing| {
            let (grant, what) = match missing {
                MissingCallback::Authorize => (
                    "authorizationCode",
                    "an authorize callback (ferromcp_oauth_options_on_authorize)",
                ),
                MissingCallback::Assertion => (
                    "jwtBearer",
                    "an assertion callback (ferromcp_oauth_options_on_assertion)",
                ),
            };
            FfiError::new(
                ferromcp_status::FERROMCP_INVALID_ARGUMENT,
                format!("grant {grant:?} needs {what}"),
            )
        })
    }
}

/// Creates OAuth settings for an HTTP client.
///
/// - `options_json`: a JSON object, copied, with
///   - `"grant"`: `"authorizationCode"` (default: a user logs in in a
///     browser; needs `"redirectUri"` and an authorize callback),
///     `"clientCredentials"` (the client's own `"clientId"` with
///     `"clientSecret"`, or `"privateKeyPem"` (PKCS#8 P-256, PEM text) for
///     private_key_jwt), `"jwtBearer"` (`"clientId"`, optional
///     `"clientSecret"`, and an assertion callback: workload identity) or
///     `"enterpriseManaged"` (`"clientId"`, `"clientSecret"` and `"idp"`:
///     `{"tokenEndpoint","clientId","clientSecret"?,"idToken"}`);
///   - `"redirectUri"`: where the authorization server sends the browser back;
///   - `"clientName"`: `client_name` in dynamic registrations;
///   - `"clientMetadataUrl"`: this client's metadata document URL (SEP-991);
///   - `"preRegistered"`: `[{"issuer"?,"clientId","clientSecret"?}]`,
///     credentials registered out of band (for that issuer, or any);
///   - `"offlineAccess"`: ask for a refresh token (default true for the
///     authorization code);
///   - `"dpop"`: ask for DPoP-bound tokens (default false);
///   - `"maxAuthorizations"`: logins one request may trigger, step-ups
///     included (default 3);
///   - `"storedOnly"`: a message; the client then only uses the tokens of
///     its store (a login made elsewhere, e.g. by a tool's `login`
///     command) and refreshes them: a request that needs a new login fails
///     with FERROMCP_AUTH and this message before anything is
///     registered at the authorization server. With it, the authorization
///     code grant needs neither `"redirectUri"` nor an authorize callback.
/// - `out_options`: receives the settings; free them with
///   ferromcp_oauth_options_free().
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_JSON for unparsable text, an
/// unknown member, a member of the wrong type, an unknown grant or one
/// missing what it needs; FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8.
///
/// Threads: any thread.
///
/// ```c
/// ferromcp_oauth_options *oauth = NULL;
/// ferromcp_oauth_options_new(
///     "{\"grant\":\"clientCredentials\",\"clientId\":\"svc\",\"clientSecret\":\"s3cret\"}",
///     &oauth);
/// ```
///
/// # Safety
/// `options_json` NULL or NUL-terminated; `out_options` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_options_new(
    options_json: *const c_char,
    out_options: *mut *mut ferromcp_oauth_options,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let text = unsafe { required_str(options_json, "options_json") }?;
        check_out(out_options, "out_options")?;
        let options = parse_options(&parse_json_object(text, "options_json")?)?;
        // SAFETY: checked non-NULL; writable per the contract.
        unsafe { set_boxed_mut_ptr(out_options, options) };
        Ok(())
    })
}

/// Frees OAuth settings. Client options they were attached to are not
/// affected; a callback's userdata is released once no settings, client
/// options or client use it any more.
///
/// - `options`: from ferromcp_oauth_options_new(), or NULL (nothing happens).
///
/// Threads: any thread.
///
/// ```c
/// ferromcp_client_options_set_oauth(client_options, oauth);
/// ferromcp_oauth_options_free(oauth); // the client options keep their copy
/// ```
///
/// # Safety
/// `options` is NULL or live and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_options_free(options: *mut ferromcp_oauth_options) {
    // SAFETY: NULL or allocated by ferromcp_oauth_options_new; freed
    // once per the contract.
    unsafe { free_box(options) }
}

/// Sets the callback that shows the user the authorization URL and returns
/// the redirect (grant `"authorizationCode"`); replaces an earlier one.
///
/// - `callback`: see ferromcp_oauth_authorize_callback.
/// - `userdata`: passed to `callback` unchanged.
/// - `userdata_free`: NULL, or called once with `userdata` when nothing
///   uses the callback any more (also when it is replaced); not called if
///   this function fails. May run on any thread; must not block or call
///   ferromcp.
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT for a NULL `options` or
/// `callback`.
///
/// Threads: any thread, not concurrently with other uses of `options`.
///
/// ```c
/// static void authorize(void *ud, const char *url, ferromcp_oauth_reply *reply) {
///     printf("Open %s\n", url);
///     char line[4096];
///     if (fgets(line, sizeof line, stdin)) {   // the user pastes the redirect
///         line[strcspn(line, "\n")] = 0;
///         ferromcp_oauth_reply_set(reply, line);
///     }
/// }
/// ferromcp_oauth_options_on_authorize(oauth, authorize, NULL, NULL);
/// ```
///
/// # Safety
/// `options` NULL or live; `callback` and `userdata_free` usable from any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_options_on_authorize(
    options: *mut ferromcp_oauth_options,
    callback: ferromcp_oauth_authorize_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    // SAFETY: forwarded contract.
    unsafe { set_callback(options, callback, userdata, userdata_free) }
}

/// Sets the callback that gives the current assertion (grant
/// `"jwtBearer"`); replaces an earlier one. Arguments and returns as
/// ferromcp_oauth_options_on_authorize().
///
/// Threads: any thread, not concurrently with other uses of `options`.
///
/// ```c
/// static void platform_token(void *ud, const char *issuer, const char *resource,
///                            ferromcp_oauth_reply *reply) {
///     ferromcp_oauth_reply_set(reply, (const char *)ud); // e.g. read from a token file
/// }
/// ferromcp_oauth_options_on_assertion(oauth, platform_token, jwt, free);
/// ```
///
/// # Safety
/// `options` NULL or live; `callback` and `userdata_free` usable from any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_options_on_assertion(
    options: *mut ferromcp_oauth_options,
    callback: ferromcp_oauth_assertion_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    // SAFETY: forwarded contract.
    unsafe { set_callback(options, callback, userdata, userdata_free) }
}

/// The body of ferromcp_oauth_options_on_authorize() and
/// ferromcp_oauth_options_on_assertion(): keeps `callback` with its
/// userdata for core to call, releasing the one it replaces.
///
/// # Safety
/// `options` is NULL or live.
unsafe fn set_callback<F: CallbackKind>(
    options: *mut ferromcp_oauth_options,
    callback: Option<F>,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let options = unsafe { try_from_mut(options, "options") }?;
        let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
        F::keep(OAuthCallback { callback, userdata }, &mut options.callbacks);
        Ok(())
    })
}

/// Keeps tokens (per MCP server URL) and registrations (per issuer) in the
/// application's store (a file, a keychain) instead of memory; replaces an
/// earlier store. Records are JSON texts to keep as they are.
///
/// - `load`, `save`: see ferromcp_oauth_store_load_callback and
///   ferromcp_oauth_store_save_callback; both get `userdata`.
/// - `userdata_free`: as for ferromcp_oauth_options_on_authorize().
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT for a NULL `options`,
/// `load` or `save`.
///
/// Threads: any thread, not concurrently with other uses of `options`.
///
/// ```c
/// static void load(void *dir, ferromcp_oauth_record record, const char *key,
///                  ferromcp_oauth_reply *reply) {
///     char *saved = read_file(dir, record, key); // the application's own storage
///     if (saved) ferromcp_oauth_reply_set(reply, saved);
///     free(saved);
/// }
/// static void save(void *dir, ferromcp_oauth_record record, const char *key,
///                  const char *json) {
///     json ? write_file(dir, record, key, json) : remove_file(dir, record, key);
/// }
/// ferromcp_oauth_options_set_store(oauth, load, save, dir, NULL);
/// ```
///
/// # Safety
/// `options` NULL or live; the callbacks and `userdata_free` usable from
/// any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_options_set_store(
    options: *mut ferromcp_oauth_options,
    load: ferromcp_oauth_store_load_callback,
    save: ferromcp_oauth_store_save_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let options = unsafe { try_from_mut(options, "options") }?;
        let load = load.ok_or_else(|| FfiError::null("load"))?;
        let save = save.ok_or_else(|| FfiError::null("save"))?;
        options.callbacks.store = Some(Arc::new(CStore {
            load,
            save,
            userdata: Userdata::new(userdata, userdata_free),
        }));
        Ok(())
    })
}

/// Gives a text answer to the callback that received `reply`.
///
/// - `reply`: the callback's reply, borrowed.
/// - `text`: NUL-terminated UTF-8 (a redirect URL, an assertion, a record's
///   JSON), copied.
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT; FERROMCP_INVALID_UTF8.
///
/// Threads: the callback's thread, before it returns.
///
/// ```c
/// ferromcp_oauth_reply_set(reply, "http://127.0.0.1:8765/callback?code=abc&state=xyz");
/// ```
///
/// # Safety
/// `reply` NULL or the live reply of the running callback; `text` NULL or
/// NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_reply_set(
    reply: *mut ferromcp_oauth_reply,
    text: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let reply = unsafe { try_from_mut(reply, "reply") }?;
        // SAFETY: forwarded contract.
        let text = unsafe { required_str(text, "text") }?;
        reply.answer = Some(Ok(text.to_owned()));
        Ok(())
    })
}

/// Answers the callback that received `reply` with a failure: the login
/// fails with FERROMCP_AUTH and this message (a store load reads as
/// "nothing stored").
///
/// - `message`: NUL-terminated UTF-8, copied; NULL for a generic message.
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT for a NULL `reply`;
/// FERROMCP_INVALID_UTF8.
///
/// Threads: the callback's thread, before it returns.
///
/// ```c
/// ferromcp_oauth_reply_fail(reply, "the user cancelled the login");
/// ```
///
/// # Safety
/// `reply` NULL or the live reply of the running callback; `message` NULL
/// or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_reply_fail(
    reply: *mut ferromcp_oauth_reply,
    message: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let reply = unsafe { try_from_mut(reply, "reply") }?;
        // SAFETY: forwarded contract.
        let message = unsafe { crate::args::optional_str(message, "message") }?
            .unwrap_or("the callback failed");
        reply.answer = Some(Err(message.to_owned()));
        Ok(())
    })
}

/// Requests an authorization URL and gives where it redirects, without
/// following it: what an authorize callback answers for an authorization
/// server that approves without a login page (tests, CI). A real user
/// authorizes in a browser instead.
///
/// - `authorization_url`: borrowed.
/// - `out_redirect`: receives the redirect URL; free it with
///   ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_AUTH when the answer is not a redirect;
/// FERROMCP_HTTP when the server cannot be reached; FERROMCP_NULL_ARGUMENT,
/// FERROMCP_INVALID_UTF8; FERROMCP_INVALID_STATE on a ferromcp runtime
/// thread.
///
/// Threads: any thread that may block (an authorize callback's host thread
/// included).
///
/// ```c
/// static void authorize(void *ud, const char *url, ferromcp_oauth_reply *reply) {
///     char *redirect = NULL;
///     if (ferromcp_oauth_headless_authorize(url, &redirect) == FERROMCP_OK) {
///         ferromcp_oauth_reply_set(reply, redirect);
///     } else {
///         ferromcp_oauth_reply_fail(reply, ferromcp_last_error_message());
///     }
///     ferromcp_string_free(redirect);
/// }
/// ```
///
/// # Safety
/// `authorization_url` NULL or NUL-terminated; `out_redirect` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_headless_authorize(
    authorization_url: *const c_char,
    out_redirect: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let url = unsafe { required_str(authorization_url, "authorization_url") }?;
        check_out(out_redirect, "out_redirect")?;
        let redirect = block(headless_authorize(url, &TlsOptions::default()))?;
        give_string(redirect, out_redirect)
    })
}

/// A one-shot listener on `127.0.0.1` for the browser coming back from the
/// authorization server (a desktop login, RFC 8252): core's
/// [`LoopbackRedirect`](ferromcp_core::client::auth::LoopbackRedirect).
///
/// Opaque. Created by ferromcp_oauth_loopback_bind(), freed (the port
/// released) by ferromcp_oauth_loopback_free(). May be used from any
/// thread; one wait at a time.
pub struct ferromcp_oauth_loopback {
    listener: ferromcp_core::client::auth::LoopbackRedirect,
    redirect_uri: CString,
}

impl Castable for ferromcp_oauth_loopback {
    type Ownership = OwnershipBox;
}

/// Listens on `127.0.0.1:port` for the redirect to `path`. Bind it in the
/// authorize callback before showing the URL, so the browser cannot come
/// back before anyone listens.
///
/// - `port`: the port registered in the redirect URI (0: any free port,
///   for servers that accept any loopback port).
/// - `path`: the redirect URI's path (`"/callback"`), borrowed.
/// - `out_loopback`: receives the listener; free it with
///   ferromcp_oauth_loopback_free().
///
/// Returns FERROMCP_OK; FERROMCP_IO when the port cannot be bound;
/// FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8; FERROMCP_INVALID_STATE on
/// a ferromcp runtime thread.
///
/// Threads: any thread that may block (an authorize callback's included).
///
/// ```c
/// static void authorize(void *ud, const char *url, ferromcp_oauth_reply *reply) {
///     ferromcp_oauth_loopback *loopback = NULL;
///     char *redirect = NULL;
///     if (ferromcp_oauth_loopback_bind(8765, "/callback", &loopback) == FERROMCP_OK) {
///         printf("Open %s\n", url);
///         if (ferromcp_oauth_loopback_wait(loopback, 300000, &redirect) == FERROMCP_OK)
///             ferromcp_oauth_reply_set(reply, redirect);
///     }
///     ferromcp_string_free(redirect);
///     ferromcp_oauth_loopback_free(loopback);
/// }
/// ```
///
/// # Safety
/// `path` NULL or NUL-terminated; `out_loopback` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_loopback_bind(
    port: u16,
    path: *const c_char,
    out_loopback: *mut *mut ferromcp_oauth_loopback,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let path = unsafe { required_str(path, "path") }?;
        check_out(out_loopback, "out_loopback")?;
        let listener = block(ferromcp_core::client::auth::LoopbackRedirect::bind(
            port, path,
        ))?;
        let redirect_uri = c_text(listener.redirect_uri());
        let loopback = ferromcp_oauth_loopback {
            listener,
            redirect_uri,
        };
        // SAFETY: checked non-NULL; writable per the contract.
        unsafe { set_boxed_mut_ptr(out_loopback, loopback) };
        Ok(())
    })
}

/// The redirect URI the listener answers (`http://127.0.0.1:PORT/path`):
/// the `"redirectUri"` to give when `port` was 0. Owned by the listener,
/// valid until ferromcp_oauth_loopback_free(); NULL for a NULL `loopback`.
///
/// Threads: any thread.
///
/// ```c
/// ferromcp_oauth_loopback *loopback = NULL;
/// ferromcp_oauth_loopback_bind(0, "/callback", &loopback);
/// printf("redirect URI: %s\n", ferromcp_oauth_loopback_redirect_uri(loopback));
/// ferromcp_oauth_loopback_free(loopback);
/// ```
///
/// # Safety
/// `loopback` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_loopback_redirect_uri(
    loopback: *const ferromcp_oauth_loopback,
) -> *const c_char {
    // SAFETY: forwarded contract.
    match unsafe { loopback.as_ref() } {
        Some(loopback) => loopback.redirect_uri.as_ptr(),
        None => std::ptr::null(),
    }
}

/// Waits for the browser's request to the redirect path (other paths get a
/// 404 and the wait goes on), answers it with a short page, and gives the
/// full redirect URL.
///
/// - `timeout_ms`: how long to wait.
/// - `out_redirect`: receives the URL; free it with ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_AUTH when nothing came within the
/// timeout; FERROMCP_IO; FERROMCP_NULL_ARGUMENT; FERROMCP_INVALID_STATE on
/// a ferromcp runtime thread.
///
/// Threads: any thread that may block.
///
/// ```c
/// char *redirect = NULL;
/// if (ferromcp_oauth_loopback_wait(loopback, 300000, &redirect) == FERROMCP_OK) {
///     ferromcp_oauth_reply_set(reply, redirect);
///     ferromcp_string_free(redirect);
/// }
/// ```
///
/// # Safety
/// `loopback` NULL or live; `out_redirect` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_loopback_wait(
    loopback: *const ferromcp_oauth_loopback,
    timeout_ms: u64,
    out_redirect: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let loopback = unsafe { try_from(loopback, "loopback") }?;
        check_out(out_redirect, "out_redirect")?;
        let timeout = std::time::Duration::from_millis(timeout_ms);
        let redirect = block(loopback.listener.wait(timeout))?;
        give_string(redirect, out_redirect)
    })
}

/// Stops listening and frees the listener.
///
/// - `loopback`: from ferromcp_oauth_loopback_bind(), or NULL (nothing
///   happens). No wait may be running on it.
///
/// Threads: any thread.
///
/// ```c
/// ferromcp_oauth_loopback_free(loopback); // the port is free again
/// ```
///
/// # Safety
/// `loopback` NULL or live and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_oauth_loopback_free(loopback: *mut ferromcp_oauth_loopback) {
    // SAFETY: NULL or allocated by ferromcp_oauth_loopback_bind; freed
    // once per the contract.
    unsafe { free_box(loopback) }
}
