//! `ferromcp._native.Mount`, and the adapters of core's gateway
//! ([`ferromcp::gateway`]) behind `Server.mount` and `Server.proxy`.
//!
//! Everything a mount does (renaming, forwarding calls, following the
//! upstream's changes) is core's; this file only finds the core object
//! behind a Python upstream, runs core's setup on the shared runtime with
//! the GIL released, and keeps the upstream's Python object alive for as
//! long as it is mounted.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use ferromcp::client::Client;
use ferromcp::gateway::Mount;
use ferromcp::server::Server;

use crate::client::PyClient;
use crate::error;
use crate::refs::{HandlerKind, PyRefs};
use crate::server::PyServer;
use crate::sync::lock;

/// What a Python upstream is in core.
enum Upstream {
    Server(Server),
    Client(Client),
}

impl Upstream {
    /// The core server or client behind a native `Server` or `Client`.
    fn of(upstream: &Bound<'_, PyAny>) -> PyResult<Upstream> {
        if let Ok(server) = upstream.cast::<PyServer>() {
            return Ok(Upstream::Server(server.get().server.clone()));
        }
        if let Ok(client) = upstream.cast::<PyClient>() {
            return Ok(Upstream::Client(client.get().core()));
        }
        Err(PyTypeError::new_err(format!(
            "a mount's upstream is a ferromcp.Server, Client or SyncClient, not {}",
            upstream.get_type().name()?
        )))
    }
}

/// Makes each upstream's key in its server's [`PyRefs`] unique: one
/// prefix may be mounted again after an unmount while the old key is
/// still being released.
static NEXT_MOUNT: AtomicU64 = AtomicU64::new(0);

/// Holds `upstream` in `refs` (the server's, so the collector sees it)
/// and returns its key.
fn hold(refs: &PyRefs, prefix: &str, upstream: &Bound<'_, PyAny>) -> String {
    let key = format!("{prefix}#{}", NEXT_MOUNT.fetch_add(1, Ordering::Relaxed));
    refs.set_handler(HandlerKind::Upstream, &key, upstream.clone().unbind());
    key
}

/// `Server.mount`: mounts `upstream` (a native `Server` or `Client`) in
/// `server` under `prefix`, listing it on the core runtime with the GIL
/// released (as `start_http` binds). A bad prefix or a server mounted in
/// itself raises core's `InvalidDefinitionError` (a `ValueError`) before
/// anything is contacted; a failure to reach or list the upstream raises its
/// `ferromcp.McpError`.
pub(crate) fn mount(
    py: Python<'_>,
    server: &PyServer,
    prefix: &str,
    upstream: &Bound<'_, PyAny>,
) -> PyResult<PyMount> {
    let source = Upstream::of(upstream)?;
    let core = server.server.clone();
    let mounted = py
        .detach(|| {
            ferromcp::runtime::get().block_on(async {
                match source {
                    Upstream::Server(upstream) => core.mount_server(prefix, &upstream).await,
                    Upstream::Client(upstream) => core.mount(prefix, upstream).await,
                }
            })
        })
        .map_err(|e| error::to_py_err(py, &e))?;
    let key = hold(&server.refs, prefix, upstream);
    // A mounted server's async handlers run on the loop serving this one.
    let inner = upstream.cast::<PyServer>().ok().map(|inner| {
        let refs = inner.get().refs.clone();
        refs.add_lender(&key, &server.refs);
        refs
    });
    Ok(PyMount {
        prefix: prefix.to_owned(),
        mounted: Mutex::new(Some(Mounted {
            mount: mounted,
            key,
            refs: server.refs.clone(),
            inner,
        })),
    })
}

/// `Server.proxy`: a new native server serving what the client `upstream`
/// serves, set up on the core runtime with the GIL released.
pub(crate) fn proxy(
    py: Python<'_>,
    upstream: &Bound<'_, PyClient>,
    json_default: Option<Py<PyAny>>,
) -> PyResult<PyServer> {
    let client = upstream.get().core();
    let server = py
        .detach(|| ferromcp::runtime::get().block_on(Server::proxy(client)))
        .map_err(|e| error::to_py_err(py, &e))?;
    let refs = Arc::new(PyRefs::new(json_default));
    // The proxy serves through the client for as long as it lives.
    hold(&refs, "", upstream.as_any());
    Ok(PyServer { server, refs })
}

/// One upstream mounted in a server (core's [`Mount`]). Use
/// `ferromcp.Mount`, which `ferromcp.Server.mount` returns.
///
/// ```python
/// from ferromcp import _native
///
/// inner = _native.Server("weather", "1.0.0")
/// outer = _native.Server("app", "1.0.0")
/// mount = outer.mount("weather", inner)
/// mount.unmount()
/// ```
#[pyclass(module = "ferromcp._native", name = "Mount", frozen)]
pub(crate) struct PyMount {
    prefix: String,
    /// `None` once unmounted.
    mounted: Mutex<Option<Mounted>>,
}

/// What an unmount takes apart.
struct Mounted {
    mount: Mount,
    /// The upstream's key in `refs`.
    key: String,
    /// The references of the server mounted in.
    refs: Arc<PyRefs>,
    /// The references of the upstream, when it is a server of this process.
    inner: Option<Arc<PyRefs>>,
}

#[pymethods]
impl PyMount {
    /// The prefix the upstream's names are served under.
    #[getter]
    fn prefix(&self) -> &str {
        &self.prefix
    }

    /// Whether the upstream is still mounted.
    #[getter]
    fn mounted(&self) -> bool {
        lock(&self.mounted).is_some()
    }

    /// Stops following the upstream and removes what it mounted (clients
    /// listening hear of a list change); again, does nothing.
    fn unmount(&self, py: Python<'_>) {
        let Some(Mounted {
            mount,
            key,
            refs,
            inner,
        }) = lock(&self.mounted).take()
        else {
            return;
        };
        // Core's removal takes the server's registry locks, which a
        // handler running with the GIL may also be waiting for; it runs in
        // the runtime's context in case telling listeners needs it.
        py.detach(|| {
            let _runtime = ferromcp::runtime::get().enter();
            mount.unmount();
        });
        if let Some(inner) = inner {
            inner.remove_lender(&key);
        }
        refs.remove_handler(HandlerKind::Upstream, &key);
    }

    fn __repr__(&self) -> String {
        let state = if self.mounted() { "" } else { " (unmounted)" };
        format!("<ferromcp._native.Mount {:?}{state}>", self.prefix)
    }
}
