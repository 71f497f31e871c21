//! Python links of a client's middleware chain (core's
//! [`ClientMiddleware`]) and the native object a link gets
//! ([`PyClientCall`]: the call's method, options and the rest of the
//! chain). The `ferromcp.Client` layer wraps it (`ClientMiddlewareContext`,
//! `call_next`).
//!
//! A link runs like any client callback ([`HostCall`]): a plain `def` on
//! the Python worker threads, an `async def` on the client's loop. No core
//! lock is held while Python runs (core takes the chain out of its lock
//! before the first link). [`PyClientCall::next`] runs the rest of the
//! chain: for a plain link on its own worker thread with the GIL released
//! ([`host_call::inline`]), for an async link on the runtime, awaited on
//! the link's loop ([`client_future::run`]). What a link raises reaches
//! the caller as a handler's exception is read
//! ([`crate::error::handler_error`]): a `ferromcp.McpError` is that error.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use ferromcp::McpError;
use ferromcp::client::{CallNext, CallRequest, Client, ClientMiddleware};
use ferromcp::server::HandlerError;
use ferromcp::{BoxFuture, Error};

use crate::host_call::{self, HostCall, HostCtx};
use crate::middleware::{AbortOnDrop, LinkResult, block_here};
use crate::refs::{HandlerKey, HandlerKind, PyRefs};
use crate::sync::lock;
use crate::{client_future, error, primitives, values};

/// Tells apart the Python links of every client of the process.
static NEXT_LINK: AtomicU64 = AtomicU64::new(0);

/// Adds the Python callable `link(params, call)` (a coroutine function
/// when `is_async`) at the end of `client`'s chain, stored in `refs`.
pub(crate) fn add(
    client: &Client,
    refs: &Arc<PyRefs>,
    link: Bound<'_, PyAny>,
    is_async: bool,
) -> PyResult<()> {
    primitives::callable(&link)?;
    let name = format!("client link#{}", NEXT_LINK.fetch_add(1, Ordering::Relaxed));
    refs.set_handler(HandlerKind::Middleware, &name, link.unbind());
    client.add_middleware(PyClientMiddleware {
        key: (HandlerKind::Middleware, Arc::from(name)),
        refs: refs.clone(),
        is_async,
    });
    Ok(())
}

/// A Python link, found in `refs` under `key` when a call comes.
struct PyClientMiddleware {
    key: HandlerKey,
    refs: Arc<PyRefs>,
    is_async: bool,
}

impl ClientMiddleware for PyClientMiddleware {
    fn handle(&self, request: CallRequest, next: CallNext) -> BoxFuture<Result<Value, Error>> {
        let CallRequest {
            method,
            params,
            options,
        } = request;
        let call = HostCall {
            key: self.key.clone(),
            refs: self.refs.clone(),
            ctx: HostCtx::ClientLink(Box::new(PyClientCall {
                method,
                options: Mutex::new(Some((options, next))),
            })),
            input: Value::Object(params),
            is_async: self.is_async,
        };
        Box::pin(async move {
            match call.run::<LinkResult>().await {
                Ok(LinkResult(result)) => Ok(Value::Object(result)),
                Err(HandlerError::Protocol(error)) => Err(Error::Mcp(error)),
                Err(HandlerError::Tool(message)) => Err(Error::Mcp(McpError::internal(message))),
            }
        })
    }
}

/// One call as a client middleware link sees it: its method, its options
/// (timeout, extra `_meta`) and the rest of the chain, which `next` runs
/// once. The `ferromcp.client` layer wraps it (`ClientMiddlewareContext`).
#[pyclass(module = "ferromcp._native", name = "ClientCall", frozen)]
pub(crate) struct PyClientCall {
    method: String,
    options: Mutex<Option<(ferromcp::client::CallOptions, CallNext)>>,
}

#[pymethods]
impl PyClientCall {
    /// The method, e.g. `"tools/call"`.
    #[getter]
    fn method(&self) -> &str {
        &self.method
    }

    /// The call's timeout in seconds, or `None` (the client's default, or
    /// none); `None` too once `next` ran.
    #[getter]
    fn timeout(&self) -> Option<f64> {
        lock(&self.options)
            .as_ref()
            .and_then(|(options, _)| options.timeout)
            .map(|t| t.as_secs_f64())
    }

    /// The extra `_meta` entries of the call (a new dict).
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let meta = lock(&self.options)
            .as_ref()
            .map(|(options, _)| options.meta.clone())
            .unwrap_or_default();
        values::to_python_dict(py, &meta)
    }

    /// Runs the rest of the chain with `params`, `meta` (the extra `_meta`
    /// entries) and `timeout` (seconds, `None` for the call's own) and
    /// returns the result dict: here, blocking with the GIL released, or,
    /// given `event_loop`, on the runtime as an awaitable of that loop.
    /// Once only: a second call raises `RuntimeError`.
    #[pyo3(signature = (params, meta, timeout, event_loop=None))]
    fn next(
        &self,
        py: Python<'_>,
        params: &Bound<'_, PyAny>,
        meta: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
        event_loop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let params = values::from_python_object(params, None, "params")?;
        let meta = match meta {
            Some(meta) if !meta.is_none() => Some(values::from_python_object(meta, None, "meta")?),
            _ => None,
        };
        let timeout = match timeout {
            Some(t) if !(t.is_finite() && t > 0.0) => {
                return Err(PyValueError::new_err(
                    "timeout must be a positive number of seconds",
                ));
            }
            Some(t) => Some(Duration::from_secs_f64(t)),
            None => None,
        };
        let (mut options, next) = lock(&self.options).take().ok_or_else(|| {
            PyRuntimeError::new_err(
                "call_next was called already: a link runs the rest of the chain once",
            )
        })?;
        if let Some(meta) = meta {
            options.meta = meta;
        }
        if timeout.is_some() {
            options.timeout = timeout;
        }
        let request = CallRequest {
            method: self.method.clone(),
            params,
            options,
        };
        let to_dict = |py: Python<'_>, result: Value| -> PyResult<Py<PyAny>> {
            match result {
                Value::Object(result) => {
                    Ok(values::to_python_dict(py, &result)?.into_any().unbind())
                }
                other => values::to_python(py, &other).map(Bound::unbind),
            }
        };
        let Some(event_loop) = event_loop else {
            let rest = next.run(request);
            let outcome = py.detach(|| host_call::inline(|| block_here(rest)));
            return match outcome {
                Ok(result) => to_dict(py, result),
                Err(e) => Err(error::to_py_err(py, &e)),
            };
        };
        let rest = AbortOnDrop(ferromcp::runtime::get().spawn(next.run(request)));
        let work = async move {
            match rest.await {
                Ok(result) => result,
                Err(failed) => Err(Error::Mcp(McpError::internal(format!(
                    "middleware failed: {failed}"
                )))),
            }
        };
        client_future::run(
            py,
            Some(event_loop),
            work,
            Box::new(move |py, result: Value| to_dict(py, result)),
        )
    }

    fn __repr__(&self) -> String {
        format!("<ferromcp._native.ClientCall {}>", self.method)
    }
}
