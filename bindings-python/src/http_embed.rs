//! `ferromcp._native.HttpEndpoint` and `Exchange`: core's
//! [`HttpEndpoint`] for a Python web server that owns the sockets (the ASGI
//! application in `ferromcp/asgi.py` drives them).
//!
//! Nothing here knows MCP: an exchange hands core the request head, feeds
//! it the body chunks the host receives, and pulls response chunks back.
//! Core answers on its runtime; each answer reaches asyncio through a
//! `wake(value)` callable the Python side made from a future of its loop
//! (`loop.call_soon_threadsafe`), called from a Python worker thread so no
//! runtime worker ever waits for the GIL.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use tokio_util::sync::CancellationToken;

use ferromcp::transport::http::{
    BodySender, EndpointOptions, ExchangeInfo, HttpEndpoint, McpBody, RequestBody,
};

use crate::refs::PyRefs;
use crate::server::PyServer;
use crate::sync::lock;
use crate::workers;

/// A server's MCP endpoint for a host's HTTP server. Made by
/// `ferromcp.Server.asgi_app()`; `start()` begins one exchange.
///
/// ```python
/// endpoint = native.HttpEndpoint(server._native, path="/mcp", allowed_hosts=["api.example"])
/// ```
#[pyclass(module = "ferromcp._native", name = "HttpEndpoint", frozen)]
pub(crate) struct PyHttpEndpoint {
    endpoint: HttpEndpoint,
    refs: Arc<PyRefs>,
}

#[pymethods]
impl PyHttpEndpoint {
    /// `path=None` accepts every path (the host routes); `allowed_hosts=None`
    /// accepts the loopback names only; `allowed_origins=None` loopback
    /// origins only.
    #[new]
    #[pyo3(signature = (server, *, path, allowed_hosts=None, allowed_origins=None, max_body_bytes=None, auth=None))]
    fn new(
        server: &Bound<'_, PyServer>,
        path: Option<String>,
        allowed_hosts: Option<Vec<String>>,
        allowed_origins: Option<Vec<String>>,
        max_body_bytes: Option<usize>,
        auth: Option<PyRef<'_, crate::auth::PyProtection>>,
    ) -> PyResult<Self> {
        if path.as_deref().is_some_and(|p| !p.starts_with('/')) {
            return Err(PyValueError::new_err("path must start with '/'"));
        }
        let auth = auth
            .map(|p| p.build(server.py(), &server.get().refs))
            .transpose()?
            // The endpoint serves as long as the application lives: its
            // verifier stays registered with the server.
            .map(|(protection, _registered)| protection);
        let defaults = EndpointOptions::default();
        let options = EndpointOptions {
            auth,
            path,
            allowed_hosts,
            allowed_origins,
            max_body_bytes: max_body_bytes.unwrap_or(defaults.max_body_bytes),
            ..defaults
        };
        let server = server.get();
        Ok(PyHttpEndpoint {
            endpoint: HttpEndpoint::new(server.server.clone(), options),
            refs: server.refs.clone(),
        })
    }

    /// Makes `event_loop` the loop async handlers run on (the host's own).
    fn use_event_loop(&self, event_loop: Py<PyAny>) {
        self.refs.set_event_loop(event_loop);
    }

    /// Forgets `event_loop` (the host shut down) unless another took over.
    fn release_event_loop(&self, event_loop: Py<PyAny>) {
        self.refs.release_event_loop(&event_loop);
    }

    /// Starts one exchange. `headers` as ASGI gives them (lowercase names,
    /// bytes); `client` the peer's address when known. `on_head` is called
    /// once with `(status, headers)`, or `None` if the exchange was
    /// cancelled first.
    #[pyo3(signature = (method, path, query, headers, client, on_head))]
    fn start(
        &self,
        method: &str,
        path: &str,
        query: &[u8],
        headers: Vec<(Vec<u8>, Vec<u8>)>,
        client: Option<&str>,
        on_head: Py<PyAny>,
    ) -> PyResult<PyExchange> {
        let uri = if query.is_empty() {
            path.to_owned()
        } else {
            format!("{path}?{}", String::from_utf8_lossy(query))
        };
        let mut builder = http::Request::builder().method(method).uri(uri);
        for (name, value) in headers {
            builder = builder.header(name, value);
        }
        let (sender, body) = RequestBody::channel();
        let request = builder
            .body(body)
            .map_err(|e| PyValueError::new_err(format!("invalid request: {e}")))?;
        let cancel = CancellationToken::new();
        let info = ExchangeInfo {
            peer: client.and_then(|c| c.parse::<IpAddr>().ok()),
            client_gone: Some(cancel.clone()),
        };
        let slot: Arc<tokio::sync::Mutex<Option<McpBody>>> = Default::default();
        let endpoint = self.endpoint.clone();
        let task_slot = slot.clone();
        let task_cancel = cancel.clone();
        ferromcp::runtime::get().spawn(async move {
            let response = tokio::select! {
                response = endpoint.handle_with(request, info) => Some(response),
                _ = task_cancel.cancelled() => None,
            };
            let head = response.map(|response| {
                let (parts, body) = response.into_parts();
                let headers: Vec<(Vec<u8>, Vec<u8>)> = parts
                    .headers
                    .iter()
                    .map(|(n, v)| (n.as_str().as_bytes().to_vec(), v.as_bytes().to_vec()))
                    .collect();
                (parts.status.as_u16(), headers, body)
            });
            let head = match head {
                Some((status, headers, body)) => {
                    *task_slot.lock().await = Some(body);
                    Some((status, headers))
                }
                None => None,
            };
            wake(on_head, move |py| match head {
                Some((status, headers)) => {
                    let headers = headers
                        .into_iter()
                        .map(|(n, v)| (PyBytes::new(py, &n), PyBytes::new(py, &v)));
                    let headers = PyList::new(py, headers)?;
                    Ok(PyTuple::new(
                        py,
                        [status.into_pyobject(py)?.into_any(), headers.into_any()],
                    )?
                    .into_any())
                }
                None => Ok(py.None().into_bound(py)),
            });
        });
        Ok(PyExchange {
            sender: Mutex::new(Some(sender)),
            body: slot,
            cancel,
        })
    }

    /// Ends every legacy session (the host is shutting down).
    fn close(&self) {
        self.endpoint.close();
    }
}

/// Adds the classes to the native module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyHttpEndpoint>()?;
    m.add_class::<PyExchange>()
}

/// Calls `callable(value)` on a Python worker thread; what `make` builds is
/// the value. A closed loop (the host went away) is not an error here.
fn wake(
    callable: Py<PyAny>,
    make: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>> + Send + 'static,
) {
    workers::submit(move |py| {
        let result = make(py).and_then(|value| callable.bind(py).call1((value,)));
        if let Err(e) = result {
            e.print(py);
        }
    });
}

/// One request/response exchange in progress.
#[pyclass(module = "ferromcp._native", name = "Exchange", frozen)]
pub(crate) struct PyExchange {
    sender: Mutex<Option<BodySender>>,
    /// The response body once the head is out; dropped on cancel.
    body: Arc<tokio::sync::Mutex<Option<McpBody>>>,
    cancel: CancellationToken,
}

#[pymethods]
impl PyExchange {
    /// Feeds a chunk of the request body; false once core stopped reading
    /// it (it answered already), when the host can stop receiving.
    fn feed(&self, chunk: &[u8]) -> bool {
        match &*lock(&self.sender) {
            Some(sender) => chunk.is_empty() || sender.send(Bytes::copy_from_slice(chunk)),
            None => false,
        }
    }

    /// The request body is complete.
    fn end_body(&self) {
        lock(&self.sender).take();
    }

    /// The request body was cut short (the client left mid-body).
    fn abort_body(&self) {
        if let Some(sender) = lock(&self.sender).take() {
            sender.abort();
        }
    }

    /// Calls `wake(chunk)` with the next response chunk (`bytes`), or
    /// `wake(None)` at the end of the body or once cancelled. One call at a
    /// time: wait for its wake before asking again.
    fn next_chunk(&self, wake_with: Py<PyAny>) {
        let slot = self.body.clone();
        let cancel = self.cancel.clone();
        ferromcp::runtime::get().spawn(async move {
            let chunk = ferromcp::host::http_body::next_chunk(&slot, &cancel).await;
            wake(wake_with, move |py| {
                Ok(match chunk {
                    Some(chunk) => PyBytes::new(py, &chunk).into_any(),
                    None => py.None().into_bound(py),
                })
            });
        });
    }

    /// Cancels the exchange (the client went away): the request behind it
    /// is cancelled and pending wakes get `None`.
    fn cancel(&self) {
        self.cancel.cancel();
        lock(&self.sender).take();
        if let Ok(mut body) = self.body.try_lock() {
            body.take();
        }
    }
}

impl Drop for PyExchange {
    fn drop(&mut self) {
        self.cancel();
    }
}
