//! Protected HTTP serving: `ferromcp.JwtVerifier` (core's, as is), the
//! native half of `ferromcp.Protection`, and the adapter that makes a
//! Python verifier callable a core [`TokenVerifier`].
//!
//! Protocol rules (the bearer gate, audience and expiry checks, metadata,
//! challenges, scopes) are all core's: this file only moves the options,
//! the callable and the claims across.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use serde_json::json;

use ferromcp::client::TlsOptions;
use ferromcp::server::BoxFuture;
use ferromcp::server::auth::{AuthInfo, HostVerdict, TokenError, TokenRequest, TokenVerifier};
use ferromcp::transport::http::ProtectedResource;
use ferromcp::verifier::JwtVerifier;

use crate::host_call::{HostCall, HostCtx};
use crate::refs::{HandlerKind, PyRefs};

/// Verifies JWT access tokens signed by `issuer` for `audience` (the
/// server's resource URL) with the issuer's published keys (found in its
/// metadata, or `jwks_uri`). `ca_certs` are extra trusted CA certificates
/// (PEM texts) for an `https://` issuer; `leeway` the tolerated clock skew
/// in seconds (60); `cache_ttl` how long a token that verified is answered
/// without checking its signature again, in seconds (60, never past its
/// `exp`; 0 checks every request).
///
/// >>> import ferromcp
/// >>> verifier = ferromcp.JwtVerifier("https://auth.example.com",
/// ...                                 "https://mcp.example.com/mcp", leeway=30)
/// >>> auth = ferromcp.Protection(resource="https://mcp.example.com/mcp",
/// ...                            authorization_servers=["https://auth.example.com"],
/// ...                            verifier=verifier)
/// >>> isinstance(auth.verifier, ferromcp.JwtVerifier)
/// True
#[pyclass(module = "ferromcp._native", name = "JwtVerifier", frozen)]
pub(crate) struct PyJwtVerifier {
    inner: JwtVerifier,
}

#[pymethods]
impl PyJwtVerifier {
    #[new]
    #[pyo3(signature = (issuer, audience, *, jwks_uri=None, ca_certs=None, leeway=None, cache_ttl=None))]
    fn new(
        issuer: String,
        audience: String,
        jwks_uri: Option<String>,
        ca_certs: Option<Vec<String>>,
        leeway: Option<f64>,
        cache_ttl: Option<f64>,
    ) -> PyResult<Self> {
        let mut inner = JwtVerifier::new(issuer, audience);
        if let Some(uri) = jwks_uri {
            inner = inner.with_jwks_uri(uri);
        }
        if let Some(ca_certs) = ca_certs {
            inner = inner.with_tls(TlsOptions {
                ca_certs,
                ..TlsOptions::default()
            });
        }
        if let Some(leeway) = leeway {
            let leeway = Duration::try_from_secs_f64(leeway)
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("leeway: {e}")))?;
            inner = inner.with_leeway(leeway);
        }
        if let Some(cache_ttl) = cache_ttl {
            let cache_ttl = Duration::try_from_secs_f64(cache_ttl)
                .map_err(|e| pyo3::exceptions::PyValueError::new_err(format!("cache_ttl: {e}")))?;
            inner = inner.with_cache_ttl(cache_ttl);
        }
        Ok(PyJwtVerifier { inner })
    }

    fn __repr__(&self) -> String {
        format!("<ferromcp.JwtVerifier {:?}>", self.inner)
    }
}

/// The native half of `ferromcp.Protection`: `verifier` is a
/// `JwtVerifier` or the Python layer's adapter of the user's callable
/// (`adapter(request, None)` returns `{"claims": {...}}` or
/// `{"invalid": reason}`).
#[pyclass(module = "ferromcp._native", name = "Protection", frozen)]
pub(crate) struct PyProtection {
    resource: String,
    authorization_servers: Vec<String>,
    scopes_supported: Vec<String>,
    required_scopes: Vec<String>,
    resource_name: Option<String>,
    resource_documentation: Option<String>,
    verifier: Py<PyAny>,
    is_async: bool,
}

#[pymethods]
impl PyProtection {
    #[new]
    #[pyo3(signature = (resource, authorization_servers, verifier, *, is_async=false,
        scopes_supported=Vec::new(), required_scopes=Vec::new(), resource_name=None,
        resource_documentation=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        resource: String,
        authorization_servers: Vec<String>,
        verifier: Py<PyAny>,
        is_async: bool,
        scopes_supported: Vec<String>,
        required_scopes: Vec<String>,
        resource_name: Option<String>,
        resource_documentation: Option<String>,
    ) -> Self {
        PyProtection {
            resource,
            authorization_servers,
            scopes_supported,
            required_scopes,
            resource_name,
            resource_documentation,
            verifier,
            is_async,
        }
    }
}

/// Tells apart the verifiers of several protected servings of one server.
static NEXT_VERIFIER: AtomicU64 = AtomicU64::new(0);

impl PyProtection {
    /// Core's protection, with a Python callable registered in `refs`
    /// (where the collector sees it and the serving loop runs it) under
    /// the returned name, which the serving forgets when it ends.
    pub(crate) fn build(
        &self,
        py: Python<'_>,
        refs: &Arc<PyRefs>,
    ) -> PyResult<(ProtectedResource, Option<String>)> {
        let verifier = self.verifier.bind(py);
        let mut registered = None;
        let mut protection = if let Ok(jwt) = verifier.cast::<PyJwtVerifier>() {
            ProtectedResource::new(
                self.resource.clone(),
                self.authorization_servers.clone(),
                jwt.get().inner.clone(),
            )
        } else {
            if !verifier.is_callable() {
                return Err(PyTypeError::new_err(
                    "verifier must be a ferromcp.JwtVerifier or a callable",
                ));
            }
            let name = format!("verifier#{}", NEXT_VERIFIER.fetch_add(1, Ordering::Relaxed));
            refs.set_handler(HandlerKind::Verifier, &name, self.verifier.clone_ref(py));
            let verifier = PyVerifier {
                name: Arc::from(name.as_str()),
                refs: refs.clone(),
                is_async: self.is_async,
            };
            registered = Some(name);
            ProtectedResource::new(
                self.resource.clone(),
                self.authorization_servers.clone(),
                verifier,
            )
        };
        protection = protection
            .with_scopes_supported(self.scopes_supported.clone())
            .with_required_scopes(self.required_scopes.clone());
        protection.resource_name = self.resource_name.clone();
        protection.resource_documentation = self.resource_documentation.clone();
        Ok((protection, registered))
    }
}

/// A Python verifier callable behind core's [`TokenVerifier`], run like a
/// handler (sync on worker threads, async on the serving loop).
struct PyVerifier {
    name: Arc<str>,
    refs: Arc<PyRefs>,
    is_async: bool,
}

impl TokenVerifier for PyVerifier {
    fn verify(
        &self,
        token: String,
        request: TokenRequest,
    ) -> BoxFuture<Result<AuthInfo, TokenError>> {
        let call = HostCall {
            key: (HandlerKind::Verifier, self.name.clone()),
            refs: self.refs.clone(),
            ctx: HostCtx::None,
            input: json!({
                "token": token,
                "resource": request.resource,
                "method": request.method,
                "path": request.path,
            }),
            is_async: self.is_async,
        };
        Box::pin(async move {
            match call.run::<HostVerdict>().await {
                Ok(verdict) => verdict.into_result(),
                // Anything but `InvalidToken` (a bug, an unreachable
                // introspection endpoint) is not the client's fault: 503,
                // not a new login.
                Err(e) => Err(TokenError::Unavailable(e.to_string())),
            }
        })
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyJwtVerifier>()?;
    m.add_class::<PyProtection>()?;
    Ok(())
}
