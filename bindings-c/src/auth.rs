//! Protected HTTP serving from C: the token verifier callback (the same
//! call-handle contract as a tool), the `"auth"` member of
//! ferromcp_server_serve_http_ex()'s options (or core's JWT verifier by
//! settings) and the kinds of primitive scopes protect. The server's
//! functions that set them are in `server.rs`, the token answers with the
//! other call answers in `host_call.rs`, and the verified claims of a
//! request in `context.rs`.
//!
//! Protocol rules (the bearer gate, audience and expiry checks, metadata,
//! challenges, scopes) are all core's: this file only moves the settings,
//! the callback and the claims across.

use serde_json::{Map, Value, json};
use std::ffi::{CString, c_char, c_void};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use ferromcp_core::client::TlsOptions;
use ferromcp_core::server::BoxFuture;
use ferromcp_core::server::auth::{
    AuthInfo, HostVerdict, ScopeTarget, TokenError, TokenRequest, TokenVerifier,
};
use ferromcp_core::transport::http::ProtectedResource;
use ferromcp_core::verifier::JwtVerifier;

use crate::args::{bad, only_known, strings};
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::Userdata;
use crate::host_call::{self, CallPtr, ferromcp_call, take_call};

/// A bearer-token verifier written in C (see
/// ferromcp_server_set_token_verifier()).
///
/// - `userdata`: the pointer given with the verifier, passed back unchanged.
/// - `token`, `token_len`: the bearer token (without `Bearer `), UTF-8 text
///   of `token_len` bytes followed by a NUL. Owned by ferromcp and valid
///   only until the callback returns: copy what you keep.
/// - `call`: the handle for this check. Ownership passes to the callback,
///   which must complete it exactly once, before returning or later from
///   any thread: ferromcp_call_accept_token() with the token's claims,
///   ferromcp_call_reject_token() for a token it does not accept (HTTP 401
///   `invalid_token`), or ferromcp_call_fail() when it cannot check the
///   token now (HTTP 503: an introspection endpoint is down).
///
/// Threads: called on a ferromcp host thread, so it may block (an HTTP
/// introspection call). Several checks may run at once.
pub type ferromcp_token_verifier = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        token: *const c_char,
        token_len: usize,
        call: *mut ferromcp_call,
    ),
>;

/// Which kind of primitive ferromcp_server_require_scopes() protects.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ferromcp_scope_target {
    /// A tool, by name.
    FERROMCP_SCOPE_TOOL = 0,
    /// A resource, by URI.
    FERROMCP_SCOPE_RESOURCE = 1,
    /// A resource template, by its URI template.
    FERROMCP_SCOPE_RESOURCE_TEMPLATE = 2,
    /// A prompt, by name.
    FERROMCP_SCOPE_PROMPT = 3,
}

impl From<ferromcp_scope_target> for ScopeTarget {
    fn from(target: ferromcp_scope_target) -> ScopeTarget {
        match target {
            ferromcp_scope_target::FERROMCP_SCOPE_TOOL => ScopeTarget::Tool,
            ferromcp_scope_target::FERROMCP_SCOPE_RESOURCE => ScopeTarget::Resource,
            ferromcp_scope_target::FERROMCP_SCOPE_RESOURCE_TEMPLATE => {
                ScopeTarget::ResourceTemplate
            }
            ferromcp_scope_target::FERROMCP_SCOPE_PROMPT => ScopeTarget::Prompt,
        }
    }
}

type VerifierFn = unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut ferromcp_call);

/// A C verifier owning its userdata (concurrent checks are part of the
/// documented contract).
pub(crate) struct CallbackVerifier {
    callback: VerifierFn,
    userdata: Userdata,
}

impl CallbackVerifier {
    pub(crate) fn new(callback: VerifierFn, userdata: Userdata) -> CallbackVerifier {
        CallbackVerifier { callback, userdata }
    }
}

/// The verifier a server holds for its protected servings.
#[derive(Default)]
pub(crate) struct VerifierSlot(Mutex<Option<Arc<CallbackVerifier>>>);

impl VerifierSlot {
    fn lock(&self) -> MutexGuard<'_, Option<Arc<CallbackVerifier>>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Replaces the verifier; servings already running keep theirs.
    pub(crate) fn set(&self, verifier: Option<CallbackVerifier>) {
        let old = std::mem::replace(&mut *self.lock(), verifier.map(Arc::new));
        // Dropped (its finalizer run) outside the lock.
        drop(old);
    }

    fn current(&self) -> Option<Arc<CallbackVerifier>> {
        self.lock().clone()
    }
}

struct CVerifier(Arc<CallbackVerifier>);

impl TokenVerifier for CVerifier {
    fn verify(
        &self,
        token: String,
        _request: TokenRequest,
    ) -> BoxFuture<Result<AuthInfo, TokenError>> {
        let verifier = self.0.clone();
        Box::pin(async move {
            let outcome = host_call::run::<HostVerdict>(None, false, move |call: CallPtr| {
                let len = token.len();
                match CString::new(token) {
                    // SAFETY: the callback contract above; the text outlives
                    // the call and `call.0` is a fresh, owned handle.
                    Ok(text) => unsafe {
                        (verifier.callback)(verifier.userdata.get(), text.as_ptr(), len, call.0)
                    },
                    Err(_) => {
                        // HTTP header values cannot hold a NUL; never hand C
                        // a truncated token.
                        // SAFETY: the handle was never given to C.
                        if let Ok(call) = unsafe { take_call(call.0) } {
                            let _ = call.finish_value(json!({"invalid": "NUL in token"}), false);
                        }
                    }
                }
            })
            .await;
            match outcome {
                Ok(verdict) => verdict.into_result(),
                // ferromcp_call_fail(): the token could not be checked now.
                Err(e) => Err(TokenError::Unavailable(e.to_string())),
            }
        })
    }
}

/// Core's protection from the `"auth"` member of the HTTP options:
/// `{"resource", "authorizationServers", "scopesSupported",
/// "requiredScopes", "resourceName", "resourceDocumentation", "jwt"}`,
/// `"jwt"` being `{"issuer", "audience", "jwksUri", "caCerts",
/// "leewaySeconds", "cacheTtlSeconds"}`; without `"jwt"`, the server's C
/// verifier.
pub(crate) fn protection(
    verifier: &VerifierSlot,
    value: &Value,
) -> Result<ProtectedResource, FfiError> {
    const NAME: &str = "options_json.auth";
    let map = value
        .as_object()
        .ok_or_else(|| bad(NAME, "must be an object"))?;
    only_known(
        map,
        &[
            "resource",
            "authorizationServers",
            "scopesSupported",
            "requiredScopes",
            "resourceName",
            "resourceDocumentation",
            "jwt",
        ],
        NAME,
    )?;
    let text = |member: &str| -> Result<Option<String>, FfiError> {
        map.get(member)
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| bad(NAME, format!("\"{member}\" must be a string")))
            })
            .transpose()
    };
    let list = |member: &str| -> Result<Vec<String>, FfiError> {
        map.get(member)
            .map_or(Ok(Vec::new()), |v| strings(v, NAME, member))
    };
    let resource = text("resource")?.ok_or_else(|| bad(NAME, "\"resource\" is required"))?;
    let servers = list("authorizationServers")?;
    if servers.is_empty() {
        return Err(bad(
            NAME,
            "\"authorizationServers\" needs at least one issuer",
        ));
    }
    let mut protection = match map.get("jwt") {
        Some(jwt) => ProtectedResource::new(resource, servers, jwt_verifier(jwt)?),
        None => {
            let verifier = verifier.current().ok_or_else(|| {
                FfiError::new(
                    ferromcp_status::FERROMCP_INVALID_STATE,
                    "\"auth\" has no \"jwt\" settings and no verifier was set with ferromcp_server_set_token_verifier()",
                )
            })?;
            ProtectedResource::new(resource, servers, CVerifier(verifier))
        }
    };
    protection = protection
        .with_scopes_supported(list("scopesSupported")?)
        .with_required_scopes(list("requiredScopes")?);
    protection.resource_name = text("resourceName")?;
    protection.resource_documentation = text("resourceDocumentation")?;
    Ok(protection)
}

fn jwt_verifier(value: &Value) -> Result<JwtVerifier, FfiError> {
    const NAME: &str = "options_json.auth.jwt";
    let map: &Map<String, Value> = value
        .as_object()
        .ok_or_else(|| bad(NAME, "must be an object"))?;
    only_known(
        map,
        &[
            "issuer",
            "audience",
            "jwksUri",
            "caCerts",
            "leewaySeconds",
            "cacheTtlSeconds",
        ],
        NAME,
    )?;
    let text = |member: &str| map.get(member).and_then(Value::as_str);
    let issuer = text("issuer").ok_or_else(|| bad(NAME, "\"issuer\" must be a string"))?;
    let audience = text("audience").ok_or_else(|| bad(NAME, "\"audience\" must be a string"))?;
    let mut verifier = JwtVerifier::new(issuer, audience);
    if let Some(uri) = map.get("jwksUri") {
        let uri = uri
            .as_str()
            .ok_or_else(|| bad(NAME, "\"jwksUri\" must be a string"))?;
        verifier = verifier.with_jwks_uri(uri);
    }
    if let Some(cas) = map.get("caCerts") {
        verifier = verifier.with_tls(TlsOptions {
            ca_certs: strings(cas, NAME, "caCerts")?,
            ..TlsOptions::default()
        });
    }
    // A duration member in seconds, if given.
    let seconds = |member: &str| -> Result<Option<Duration>, FfiError> {
        map.get(member)
            .map(|value| {
                value
                    .as_f64()
                    .and_then(|s| Duration::try_from_secs_f64(s).ok())
                    .ok_or_else(|| bad(NAME, format!("\"{member}\" must be a non-negative number")))
            })
            .transpose()
    };
    if let Some(leeway) = seconds("leewaySeconds")? {
        verifier = verifier.with_leeway(leeway);
    }
    if let Some(ttl) = seconds("cacheTtlSeconds")? {
        verifier = verifier.with_cache_ttl(ttl);
    }
    Ok(verifier)
}
