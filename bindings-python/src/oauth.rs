//! OAuth for the Python client: core's [`OAuthOptions`] from the settings
//! `ferromcp.OAuth` passes, the Python callables behind its callbacks (the
//! user interaction, the jwt-bearer assertion) and a Python object behind
//! its [`TokenStore`]; plus `LoopbackRedirect` and `headless_authorize`.
//!
//! Nothing OAuth happens here: discovery, registration, PKCE, token
//! requests, DPoP and step-up are core's (`ferromcp::client::auth`). The
//! callables run through the binding's one host-call adapter ([`HostCall`]:
//! a plain function on a worker thread, an `async def` on the client's
//! loop), and are kept in the client's [`PyRefs`] so the collector sees
//! them and `close()` drops them.

use std::sync::Arc;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use ferromcp::Error;
use ferromcp::client::TlsOptions;
use ferromcp::client::auth::{
    AssertionRequest, AuthError, ClientCredentials, EnterpriseIdp, LoopbackRedirect, OAuthOptions,
    OAuthSettings, StoredTokens, TokenStore,
};
use ferromcp::server::{FromHost, HandlerError, OutputError};

use crate::client_future;
use crate::error;
use crate::host_call::{HostCall, HostCtx, PyOutput};
use crate::refs::{HandlerKind, PyRefs};
use crate::values as convert;

/// The names the callables and the store have in the client's [`PyRefs`].
const AUTHORIZE: &str = "authorize";
const ASSERTION: &str = "assertion";
const STORE: &str = "store";

/// What an OAuth callback returns: a string (the redirect URL, or the
/// assertion JWT); anything else is the callback's mistake.
#[derive(Debug)]
pub(crate) struct CallbackText(pub(crate) String);

impl FromHost for CallbackText {
    const KIND: &'static str = "OAuth callback";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        match value {
            Value::String(text) => Ok(CallbackText(text)),
            other => Err(OutputError {
                kind: Self::KIND,
                reason: format!("expected a string, got {other}"),
            }),
        }
    }
}

impl PyOutput for CallbackText {}

/// Runs the registered callable `name` with `input`; a failure (it raised,
/// returned a non-string, the client was closed) is an authorization
/// failure of kind `"auth"`, which stops the flow.
async fn call_text(
    refs: Arc<PyRefs>,
    name: &'static str,
    is_async: bool,
    input: Value,
) -> Result<String, Error> {
    let call = HostCall {
        key: (HandlerKind::OAuth, Arc::from(name)),
        refs,
        ctx: HostCtx::None,
        input,
        is_async,
    };
    match call.run::<CallbackText>().await {
        Ok(CallbackText(text)) => Ok(text),
        Err(HandlerError::Tool(message)) => Err(AuthError::Interaction(message).into()),
        Err(HandlerError::Protocol(mcp)) => Err(AuthError::Interaction(mcp.message).into()),
    }
}

/// A `(callable, is_async)` pair of the settings, registered in `refs`.
fn register_callable(
    settings: &Bound<'_, PyDict>,
    key: &str,
    refs: &PyRefs,
) -> PyResult<Option<bool>> {
    let Some(entry) = settings.get_item(key)? else {
        return Ok(None);
    };
    if entry.is_none() {
        return Ok(None);
    }
    let (callable, is_async): (Bound<'_, PyAny>, bool) = entry.extract()?;
    if !callable.is_callable() {
        return Err(PyTypeError::new_err(format!(
            "the OAuth {key} callback must be callable"
        )));
    }
    refs.set_handler(HandlerKind::OAuth, key, callable.unbind());
    Ok(Some(is_async))
}

fn text(settings: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<String>> {
    match settings.get_item(key)? {
        Some(value) if !value.is_none() => Ok(Some(value.extract()?)),
        _ => Ok(None),
    }
}

fn required_text(settings: &Bound<'_, PyDict>, key: &str) -> PyResult<String> {
    text(settings, key)?.ok_or_else(|| PyValueError::new_err(format!("OAuth settings need {key}")))
}

fn flag(settings: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<bool>> {
    match settings.get_item(key)? {
        Some(value) if !value.is_none() => Ok(Some(value.extract()?)),
        _ => Ok(None),
    }
}

/// Core's options from the settings dict `ferromcp.OAuth` builds (see
/// `ferromcp/oauth.py`, `OAuth._settings`). `tls` is the client's: the
/// enterprise identity provider is reached with the same trust.
pub(crate) fn options(
    settings: &Bound<'_, PyDict>,
    refs: &Arc<PyRefs>,
    tls: &TlsOptions,
) -> PyResult<OAuthOptions> {
    let grant = required_text(settings, "grant")?;
    let client_id = text(settings, "client_id")?;
    let client_secret = text(settings, "client_secret")?;
    let need_id = || {
        client_id
            .clone()
            .ok_or_else(|| PyValueError::new_err(format!("a {grant} client needs client_id")))
    };
    let mut oauth = match grant.as_str() {
        "authorization_code" => {
            let mut oauth = match register_callable(settings, AUTHORIZE, refs)? {
                Some(is_async) => {
                    let refs = refs.clone();
                    OAuthOptions::new(required_text(settings, "redirect_uri")?, move |url| {
                        call_text(refs.clone(), AUTHORIZE, is_async, Value::String(url))
                    })
                }
                // `OAuth.stored_only`: core stops before any authorization,
                // so there is no user to ask and no redirect.
                None => OAuthOptions::stored_only(
                    text(settings, "stored_only")?
                        .ok_or_else(|| PyValueError::new_err("OAuth settings need authorize"))?,
                ),
            };
            if let Some(id) = &client_id {
                oauth = oauth.with_pre_registered(
                    text(settings, "issuer")?,
                    id.clone(),
                    client_secret.clone(),
                );
            }
            oauth
        }
        "client_credentials" => match text(settings, "private_key_pem")? {
            Some(pem) => OAuthOptions::client_credentials_jwt(need_id()?, pem),
            None => OAuthOptions::client_credentials(need_id()?, client_secret.clone()),
        },
        "jwt_bearer" => {
            let is_async = register_callable(settings, ASSERTION, refs)?
                .ok_or_else(|| PyValueError::new_err("a jwt_bearer client needs assertion"))?;
            let refs = refs.clone();
            OAuthOptions::jwt_bearer(
                need_id()?,
                client_secret.clone(),
                move |request: AssertionRequest| {
                    let input = json!({"issuer": request.issuer, "resource": request.resource});
                    call_text(refs.clone(), ASSERTION, is_async, input)
                },
            )
        }
        "enterprise_managed" => {
            let idp = EnterpriseIdp {
                token_endpoint: required_text(settings, "idp_token_endpoint")?,
                client_id: required_text(settings, "idp_client_id")?,
                client_secret: text(settings, "idp_client_secret")?,
                id_token: required_text(settings, "id_token")?,
            };
            OAuthOptions::enterprise_managed(need_id()?, client_secret.clone(), idp, tls.clone())
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown OAuth grant {other:?}"
            )));
        }
    };
    let max_authorizations = match settings.get_item("max_authorizations")? {
        Some(limit) if !limit.is_none() => Some(limit.extract()?),
        _ => None,
    };
    oauth = oauth.with_settings(&OAuthSettings {
        client_name: text(settings, "client_name")?,
        client_metadata_url: text(settings, "client_metadata_url")?,
        offline_access: flag(settings, "offline_access")?,
        dpop: flag(settings, "dpop")?,
        max_authorizations,
        stored_only: text(settings, "stored_only")?,
        ..OAuthSettings::default()
    });
    if let Some(store) = settings.get_item(STORE)?
        && !store.is_none()
    {
        refs.set_handler(HandlerKind::OAuth, STORE, store.unbind());
        oauth = oauth.with_store(Arc::new(PyTokenStore { refs: refs.clone() }));
    }
    Ok(oauth)
}

/// A Python object with the `TokenStore` methods (`load_tokens`,
/// `save_tokens`, `clear_tokens`, `load_client`, `save_client`), taking
/// and returning the JSON form of core's records as dicts.
///
/// Core calls a store synchronously and only around an authorization, so
/// the call takes the GIL on the runtime thread it happens on, telling the
/// runtime first (`block_in_place`) so other tasks move off that thread
/// while it waits. A store that raises is reported as unraisable (core's
/// store interface has no failures: a lost save means a new login later,
/// a failed load means no saved tokens).
struct PyTokenStore {
    refs: Arc<PyRefs>,
}

impl PyTokenStore {
    /// Calls `store.method(*args)` and reads what it returned with `read`
    /// (`None` returned stays `None`); a failure of either is reported.
    fn call<T>(
        &self,
        method: &str,
        args: Vec<Value>,
        read: impl FnOnce(Value) -> Result<T, String>,
    ) -> Option<T> {
        let work = || {
            Python::try_attach(|py| {
                let store = self
                    .refs
                    .handler(py, &(HandlerKind::OAuth, Arc::from(STORE)))?;
                let called = args
                    .iter()
                    .map(|a| convert::to_python(py, a))
                    .collect::<PyResult<Vec<_>>>()
                    .and_then(|args| PyTuple::new(py, args))
                    .and_then(|args| store.bind(py).call_method1(method, args))
                    .and_then(|returned| {
                        if returned.is_none() {
                            return Ok(None);
                        }
                        let value = convert::from_python(&returned, None)?;
                        read(value).map(Some).map_err(|reason| {
                            PyValueError::new_err(format!(
                                "the token store's {method}() returned an invalid record: {reason}"
                            ))
                        })
                    });
                match called {
                    Ok(value) => value,
                    Err(e) => {
                        e.write_unraisable(py, Some(store.bind(py)));
                        None
                    }
                }
            })
            .flatten()
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(work)
            }
            _ => work(),
        }
    }

    fn load<T: DeserializeOwned>(&self, method: &str, key: &str) -> Option<T> {
        self.call(method, vec![Value::from(key)], |value| {
            serde_json::from_value(value).map_err(|e| e.to_string())
        })
    }

    fn save<T: Serialize>(&self, method: &str, key: &str, record: &T) {
        // Core's records always serialise; `Null` would only hide a bug.
        let record = serde_json::to_value(record).unwrap_or(Value::Null);
        self.call(method, vec![Value::from(key), record], |_| Ok(()));
    }
}

impl TokenStore for PyTokenStore {
    fn load_tokens(&self, resource: &str) -> Option<StoredTokens> {
        self.load("load_tokens", resource)
    }
    fn save_tokens(&self, resource: &str, tokens: &StoredTokens) {
        self.save("save_tokens", resource, tokens);
    }
    fn clear_tokens(&self, resource: &str) {
        self.call("clear_tokens", vec![Value::from(resource)], |_| Ok(()));
    }
    fn load_client(&self, issuer: &str) -> Option<ClientCredentials> {
        self.load("load_client", issuer)
    }
    fn save_client(&self, issuer: &str, client: &ClientCredentials) {
        self.save("save_client", issuer, client);
    }
}

fn to_string_py() -> client_future::ToPy<String> {
    Box::new(|py, text: String| Ok(text.into_pyobject(py)?.into_any().unbind()))
}

/// A one-shot listener on `127.0.0.1` for the browser coming back from
/// the authorization server (core's [`LoopbackRedirect`]). Use
/// `ferromcp.LoopbackRedirect`.
#[pyclass(module = "ferromcp._native", name = "LoopbackRedirect", frozen)]
pub(crate) struct PyLoopbackRedirect {
    inner: Arc<LoopbackRedirect>,
}

#[pymethods]
impl PyLoopbackRedirect {
    /// Binds `127.0.0.1:port` (0: any free port) for redirects to `path`.
    #[new]
    #[pyo3(signature = (port=0, path="/callback"))]
    fn new(py: Python<'_>, port: u16, path: &str) -> PyResult<Self> {
        let bound =
            py.detach(|| ferromcp::runtime::get().block_on(LoopbackRedirect::bind(port, path)));
        match bound {
            Ok(inner) => Ok(PyLoopbackRedirect {
                inner: Arc::new(inner),
            }),
            Err(e) => Err(error::to_py_err(py, &e)),
        }
    }

    /// `http://127.0.0.1:PORT/path`: the redirect URI to register.
    #[getter]
    fn redirect_uri(&self) -> String {
        self.inner.redirect_uri().to_owned()
    }

    /// Waits up to `timeout` seconds for the redirect and returns its full
    /// URL: an awaitable of `event_loop`, or blocking when it is `None`.
    fn wait(
        &self,
        py: Python<'_>,
        timeout: f64,
        event_loop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let timeout = Duration::try_from_secs_f64(timeout)
            .map_err(|e| PyValueError::new_err(format!("invalid timeout: {e}")))?;
        let inner = self.inner.clone();
        client_future::run(
            py,
            event_loop,
            async move { inner.wait(timeout).await },
            to_string_py(),
        )
    }

    fn __repr__(&self) -> String {
        format!("<ferromcp.LoopbackRedirect {}>", self.inner.redirect_uri())
    }
}

/// Requests the authorization URL `url` without following its redirect
/// and returns the `Location` (core's `headless_authorize`): the "user
/// interaction" of a test against an authorization server that approves
/// at once. An awaitable of `event_loop`, or blocking when it is `None`.
#[pyfunction]
fn headless_authorize(
    py: Python<'_>,
    url: String,
    event_loop: Option<&Bound<'_, PyAny>>,
) -> PyResult<Py<PyAny>> {
    client_future::run(
        py,
        event_loop,
        async move { ferromcp::client::auth::headless_authorize(&url, &TlsOptions::default()).await },
        to_string_py(),
    )
}

/// Adds the OAuth helpers to the native module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyLoopbackRedirect>()?;
    m.add_function(wrap_pyfunction!(headless_authorize, m)?)?;
    Ok(())
}
