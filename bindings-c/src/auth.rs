//! Protected HTTP serving from C: the token verifier callback (the same
//! call-handle contract as a tool), the `"auth"` member of
//! ferromcp_server_serve_http_ex()'s options (or core's JWT verifier by
//! settings), per-primitive scopes, and the verified claims of a request.
//!
//! Protocol rules (the bearer gate, audience and expiry checks, metadata,
//! challenges, scopes) are all core's: this file only moves the settings,
//! the callback and the claims across.

use serde_json::{Map, Value, json};
use std::ffi::{CString, c_char, c_void};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_core::client::TlsOptions;
use ferromcp_core::server::BoxFuture;
use ferromcp_core::server::auth::{
    AuthInfo, HostVerdict, ScopeTarget, TokenError, TokenRequest, TokenVerifier,
};
use ferromcp_core::transport::http::ProtectedResource;
use ferromcp_core::verifier::JwtVerifier;

use crate::args::{optional_str, parse_json, required_ref, required_str};
use crate::error::{FfiError, ferromcp_status};
use crate::handler::ferromcp_userdata_free;
use crate::host_call::{self, CallPtr, ferromcp_call, take_call};
use crate::options::{bad, only_known, strings};
use crate::panic::ffi_boundary;
use crate::server::ferromcp_server;

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

/// A C verifier owning its userdata.
pub(crate) struct CallbackVerifier {
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut ferromcp_call),
    userdata: *mut c_void,
    finalizer: ferromcp_userdata_free,
}

// SAFETY: the header requires the callback, userdata and finalizer to be
// usable from any thread; ferromcp never dereferences `userdata`.
unsafe impl Send for CallbackVerifier {}
// SAFETY: as above; concurrent checks are part of the documented contract.
unsafe impl Sync for CallbackVerifier {}

impl Drop for CallbackVerifier {
    fn drop(&mut self) {
        if let Some(finalizer) = self.finalizer {
            // SAFETY: the finalizer contract: called once with its userdata.
            unsafe { finalizer(self.userdata) }
        }
    }
}

/// The verifier a server holds for its protected servings.
pub(crate) type VerifierSlot = Mutex<Option<Arc<CallbackVerifier>>>;

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
                        (verifier.callback)(verifier.userdata, text.as_ptr(), len, call.0)
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

/// Sets the token verifier that checks bearer tokens when the server is
/// served with an `"auth"` option that has no `"jwt"` member (see
/// ferromcp_server_serve_http_ex()). Replaces (and frees) a verifier set
/// before; servings already running keep the one they started with.
///
/// - `verifier`: see ferromcp_token_verifier; NULL removes the verifier.
/// - `userdata`: passed to every call; may be NULL. ferromcp holds it
///   until the verifier is replaced, the server is freed and no serving
///   uses it any more.
/// - `userdata_free`: called exactly once with `userdata` then; may be NULL.
///
/// ```c
/// static void check(void *userdata, const char *token, size_t len, ferromcp_call *call) {
///     if (strcmp(token, "let-me-in") == 0)
///         ferromcp_call_accept_token(call,
///             "{\"sub\":\"alice\",\"scope\":\"files:read\",\"aud\":\"http://127.0.0.1:8000/mcp\"}");
///     else
///         ferromcp_call_reject_token(call, "unknown token");
/// }
/// ferromcp_server_set_token_verifier(server, check, NULL, NULL);
/// ```
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT. Threads: any thread.
///
/// # Safety
/// `server` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_set_token_verifier(
    server: *const ferromcp_server,
    verifier: ferromcp_token_verifier,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let server = unsafe { required_ref(server, "server") }?;
        let new = verifier.map(|callback| {
            Arc::new(CallbackVerifier {
                callback,
                userdata,
                finalizer: userdata_free,
            })
        });
        let old = std::mem::replace(&mut *lock(&server.verifier), new);
        // Dropped (its finalizer run) outside the lock.
        drop(old);
        Ok(())
    })
}

fn lock(slot: &VerifierSlot) -> std::sync::MutexGuard<'_, Option<Arc<CallbackVerifier>>> {
    slot.lock().unwrap_or_else(|p| p.into_inner())
}

/// Completes a token check: the token is valid and these are its claims.
///
/// - `call`: the handle a ferromcp_token_verifier received; consumed.
/// - `claims_json`: a JSON object of JWT claim names (`sub`, `scope` as a
///   space-separated string or `scp`, `aud`, `exp`, `client_id` or `azp`,
///   and any others), borrowed. `aud` must name the server's resource and
///   `exp`, when present, must be in the future: ferromcp checks both.
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_JSON (the check then fails with
/// HTTP 503) for text that is not a JSON object; FERROMCP_INVALID_ARGUMENT
/// when `call` is not a token check (it is completed as a failure);
/// FERROMCP_REQUEST_CANCELLED when the client went away.
///
/// # Safety
/// `call` NULL or an uncompleted handle; `claims_json` NULL or
/// NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_call_accept_token(
    call: *mut ferromcp_call,
    claims_json: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let call = unsafe { token_call(call) }?;
        // SAFETY: forwarded contract.
        let claims = unsafe { required_str(claims_json, "claims_json") }
            .and_then(|text| parse_json(text, "claims_json"));
        match claims {
            Ok(Value::Object(claims)) => call.finish_value(json!({ "claims": claims }), false),
            Ok(_) => {
                let _ = call.finish_value(json!({ "claims": null }), false);
                Err(bad("claims_json", "must be a JSON object"))
            }
            Err(error) => {
                let _ = call.finish_value(json!({ "claims": null }), false);
                Err(error)
            }
        }
    })
}

/// Completes a token check: the token is not accepted (HTTP 401
/// `invalid_token`; the client logs in again).
///
/// - `call`: the handle a ferromcp_token_verifier received; consumed.
/// - `reason`: why, for the `error_description`; may be NULL.
///
/// Returns FERROMCP_OK, FERROMCP_INVALID_ARGUMENT when `call` is not a
/// token check, FERROMCP_REQUEST_CANCELLED when the client went away.
///
/// # Safety
/// `call` NULL or an uncompleted handle; `reason` NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_call_reject_token(
    call: *mut ferromcp_call,
    reason: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let call = unsafe { token_call(call) }?;
        // SAFETY: forwarded contract.
        let reason = unsafe { optional_str(reason, "reason") }
            .ok()
            .flatten()
            .unwrap_or("invalid token");
        call.finish_value(json!({ "invalid": reason }), false)
    })
}

/// The handle of a token check, or an error (completing any other call).
///
/// # Safety
/// As [`take_call`].
unsafe fn token_call(call: *mut ferromcp_call) -> Result<Box<ferromcp_call>, FfiError> {
    use ferromcp_core::server::FromHost;
    // SAFETY: forwarded contract.
    let call = unsafe { take_call(call) }?;
    if call.kind() != HostVerdict::KIND {
        let kind = call.kind();
        let _ = call.finish_error(ferromcp_core::server::HandlerError::tool(
            "a token answer was given to a call that is not a token check",
        ));
        return Err(FfiError::new(
            ferromcp_status::FERROMCP_INVALID_ARGUMENT,
            format!("the call is a {kind} call, not a token check"),
        ));
    }
    Ok(call)
}

/// Requires OAuth scopes of the bearer token of every request that uses a
/// tool, resource, resource template or prompt, when the server is served
/// with `"auth"` (a token without them gets HTTP 403 `insufficient_scope`).
///
/// - `target`, `key`: the kind and its name (a resource's URI, a template's
///   URI template), NUL-terminated.
/// - `scopes_json`: a JSON list of scope strings, e.g.
///   `["files:write"]`; `[]` removes the requirement.
///
/// ```c
/// ferromcp_server_require_scopes(server, FERROMCP_SCOPE_TOOL, "delete_file", "[\"files:write\"]");
/// ```
///
/// Returns FERROMCP_OK, FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_JSON.
/// Threads: any thread.
///
/// # Safety
/// `server` NULL or live; strings NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_require_scopes(
    server: *const ferromcp_server,
    target: ferromcp_scope_target,
    key: *const c_char,
    scopes_json: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let server = unsafe { required_ref(server, "server") }?;
        let key = unsafe { required_str(key, "key") }?;
        let scopes = unsafe { required_str(scopes_json, "scopes_json") }?;
        let scopes = strings(&parse_json(scopes, "scopes_json")?, "scopes_json", "scopes")?;
        let target = match target {
            ferromcp_scope_target::FERROMCP_SCOPE_TOOL => ScopeTarget::Tool,
            ferromcp_scope_target::FERROMCP_SCOPE_RESOURCE => ScopeTarget::Resource,
            ferromcp_scope_target::FERROMCP_SCOPE_RESOURCE_TEMPLATE => {
                ScopeTarget::ResourceTemplate
            }
            ferromcp_scope_target::FERROMCP_SCOPE_PROMPT => ScopeTarget::Prompt,
        };
        server.server.require_scopes(target, key, scopes);
        Ok(())
    })
}

/// Core's protection from the `"auth"` member of the HTTP options:
/// `{"resource", "authorizationServers", "scopesSupported",
/// "requiredScopes", "resourceName", "resourceDocumentation", "jwt"}`,
/// `"jwt"` being `{"issuer", "audience", "jwksUri", "caCerts",
/// "leewaySeconds", "cacheTtlSeconds"}`; without `"jwt"`, the server's C
/// verifier.
pub(crate) fn protection(
    server: &ferromcp_server,
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
            let verifier = lock(&server.verifier).clone().ok_or_else(|| {
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

/// The verified claims of a request on a protected server, as JSON text:
/// `{"subject", "clientId", "scopes", "audience", "expiresAt", "claims"}`
/// (absent members are null).
pub(crate) fn auth_json(info: &AuthInfo) -> String {
    json!({
        "subject": info.subject,
        "clientId": info.client_id,
        "scopes": info.scopes,
        "audience": info.audience,
        "expiresAt": info.expires_at,
        "claims": info.claims,
    })
    .to_string()
}
