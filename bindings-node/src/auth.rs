//! Protected HTTP serving: `JwtVerifier` (core's, as is), the native
//! `Protection` the facade builds from `serveHttp({ auth })` /
//! `fetchHandler({ auth })` / `nodeHandler({ auth })`, and the adapter
//! that makes a JS verifier function a core [`TokenVerifier`].
//!
//! Protocol rules (the bearer gate, audience and expiry checks, metadata,
//! challenges, scopes) are all core's: this file only moves the options,
//! the callable and the claims across.

use std::sync::Arc;
use std::time::Duration;

use ferromcp::client::TlsOptions;
use ferromcp::server::BoxFuture;
use ferromcp::server::auth::{AuthInfo, HostVerdict, TokenError, TokenRequest, TokenVerifier};
use ferromcp::transport::http::ProtectedResource;
use ferromcp::verifier::JwtVerifier;
use napi::Status;
use napi_derive::napi;
use serde_json::json;

use crate::host_call::{self, HostFunction, JsCallback};

/// How a `JwtVerifier` checks tokens.
#[napi(object, js_name = "JwtVerifierOptions")]
pub struct JsJwtVerifierOptions {
    /// The authorization server's issuer URL (compared exactly with `iss`).
    pub issuer: String,
    /// The protected resource's URL, which `aud` must name.
    pub audience: String,
    /// Where the signing keys are; default: from the issuer's metadata.
    pub jwks_uri: Option<String>,
    /// Extra trusted CA certificates (PEM texts) for an `https://` issuer.
    pub ca_certs: Option<Vec<String>>,
    /// Tolerated clock skew in seconds (default 60).
    pub leeway_seconds: Option<f64>,
    /// How long a token that verified is answered without checking its
    /// signature again, in seconds (default 60, never past its `exp`; 0
    /// checks every request).
    pub cache_ttl_seconds: Option<f64>,
}

/// Verifies JWT access tokens with the issuer's published keys (core's
/// verifier: RS256/PS256/ES256/EdDSA, `iss`, `aud`, `exp`, key rotation).
///
/// @example
/// ```js
/// const verifier = new JwtVerifier({ issuer: 'https://auth.example.com', audience: 'https://mcp.example.com/mcp' });
/// ```
#[napi(js_name = "JwtVerifier")]
pub struct JsJwtVerifier {
    inner: JwtVerifier,
}

#[napi]
impl JsJwtVerifier {
    #[napi(constructor)]
    pub fn new(options: JsJwtVerifierOptions) -> napi::Result<Self> {
        let mut inner = JwtVerifier::new(options.issuer, options.audience);
        if let Some(uri) = options.jwks_uri {
            inner = inner.with_jwks_uri(uri);
        }
        if let Some(ca_certs) = options.ca_certs {
            inner = inner.with_tls(TlsOptions {
                ca_certs,
                ..TlsOptions::default()
            });
        }
        if let Some(leeway) = options.leeway_seconds {
            let leeway = Duration::try_from_secs_f64(leeway)
                .map_err(|e| napi::Error::new(Status::InvalidArg, format!("leewaySeconds: {e}")))?;
            inner = inner.with_leeway(leeway);
        }
        if let Some(cache_ttl) = options.cache_ttl_seconds {
            let cache_ttl = Duration::try_from_secs_f64(cache_ttl).map_err(|e| {
                napi::Error::new(Status::InvalidArg, format!("cacheTtlSeconds: {e}"))
            })?;
            inner = inner.with_cache_ttl(cache_ttl);
        }
        Ok(JsJwtVerifier { inner })
    }
}

/// The data part of a protection (the verifier is passed beside it).
#[napi(object, js_name = "ProtectionSettings")]
pub struct JsProtectionSettings {
    /// The server's canonical URL (the MCP endpoint as clients reach it).
    pub resource: String,
    /// Issuer URLs of the authorization servers whose tokens are accepted.
    pub authorization_servers: Vec<String>,
    /// `scopes_supported` of the protected resource metadata.
    pub scopes_supported: Option<Vec<String>>,
    /// Scopes every request needs.
    pub required_scopes: Option<Vec<String>>,
    /// `resource_name` of the metadata.
    pub resource_name: Option<String>,
    /// `resource_documentation` of the metadata.
    pub resource_documentation: Option<String>,
}

/// Core's protection of an HTTP endpoint, built by the facade; `verify` is
/// its adapter `(request, null) => { claims } | { invalid }` (or a promise
/// of one), used unless `jwt` is given.
#[napi(js_name = "Protection")]
pub struct JsProtection {
    pub(crate) inner: ProtectedResource,
}

#[napi]
impl JsProtection {
    #[napi(
        constructor,
        ts_args_type = "settings: ProtectionSettings, verify: ((request: { token: string, resource: string, method: string, path: string }, ctx: null) => unknown) | null, jwt?: JwtVerifier"
    )]
    pub fn new(
        settings: JsProtectionSettings,
        verify: Option<HostFunction<'_>>,
        jwt: Option<&JsJwtVerifier>,
    ) -> napi::Result<Self> {
        let resource = settings.resource;
        let servers = settings.authorization_servers;
        let mut inner = match (jwt, verify) {
            (Some(jwt), _) => ProtectedResource::new(resource, servers, jwt.inner.clone()),
            (None, Some(verify)) => ProtectedResource::new(
                resource,
                servers,
                JsVerifier {
                    callback: Arc::new(JsCallback::new(&verify)?),
                },
            ),
            (None, None) => {
                return Err(napi::Error::new(
                    Status::InvalidArg,
                    "a protection needs a verifier",
                ));
            }
        };
        inner = inner
            .with_scopes_supported(settings.scopes_supported.unwrap_or_default())
            .with_required_scopes(settings.required_scopes.unwrap_or_default());
        inner.resource_name = settings.resource_name;
        inner.resource_documentation = settings.resource_documentation;
        Ok(JsProtection { inner })
    }
}

/// A JS verifier function behind core's [`TokenVerifier`], run like a
/// handler (on the JS thread, a value or a promise).
struct JsVerifier {
    callback: Arc<JsCallback>,
}

impl TokenVerifier for JsVerifier {
    fn verify(
        &self,
        token: String,
        request: TokenRequest,
    ) -> BoxFuture<Result<AuthInfo, TokenError>> {
        let input = json!({
            "token": token,
            "resource": request.resource,
            "method": request.method,
            "path": request.path,
        });
        let call = host_call::call::<HostVerdict>(&self.callback, None, input);
        Box::pin(async move {
            match call.await {
                Ok(verdict) => verdict.into_result(),
                // Anything but `InvalidToken` (a bug, an unreachable
                // introspection endpoint) is not the client's fault: 503.
                Err(e) => Err(TokenError::Unavailable(e.to_string())),
            }
        })
    }
}
