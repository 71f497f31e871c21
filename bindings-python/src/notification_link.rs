//! Python links that see the notifications a server or a client receives
//! (core's [`Middleware::notification`] and
//! [`ClientMiddleware::notification`]).
//!
//! Core calls a link's notification side synchronously, in arrival order,
//! where the notification is delivered (the task reading a server's
//! connection; the call or the transport delivering a client's), and must
//! have its verdict before it goes on: there is no future to await, so the
//! Python callable runs right there, holding the GIL for the call (as a
//! telemetry span starts, `telemetry.rs`), not on a worker thread. The
//! callable is the `ferromcp.middleware` adapter `link(method, params)`:
//! it returns `None` to stop the notification, or the params (a dict,
//! changed or not) it goes on with.
//!
//! An exception (or params that are not JSON) must not end the connection
//! nor silently drop what the server or client relies on (a cancellation,
//! the handshake's `notifications/initialized`): it is logged to the
//! `ferromcp.middleware` logger of `logging`, with its traceback, and the
//! notification goes on as it came. The request side of these links passes
//! every request straight on, so they sit in the one chain and keep the
//! order links were added in.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use ferromcp::client::Client;
use ferromcp::host::notification_link::NotificationLink;
use ferromcp::protocol::jsonrpc::ReceivedNotification;

use crate::refs::{HandlerKey, HandlerKind, PyRefs};
use crate::{primitives, values};

/// Tells apart the notification links of every server and client of the
/// process (stored beside the request links, under other names).
static NEXT_LINK: AtomicU64 = AtomicU64::new(0);

/// The logger an exception of a link is reported to.
const LOGGER: &str = "ferromcp.middleware";

/// Adds the Python `link(method, params)` at the end of `server`'s chain.
pub(crate) fn add_to_server(
    server: &ferromcp::server::Server,
    refs: &Arc<PyRefs>,
    link: Bound<'_, PyAny>,
) -> PyResult<()> {
    let link = store(refs, link)?;
    server.add_middleware(NotificationLink(move |note: &mut ReceivedNotification| {
        link.notification(note)
    }));
    Ok(())
}

/// Adds the Python `link(method, params)` at the end of `client`'s chain.
pub(crate) fn add_to_client(
    client: &Client,
    refs: &Arc<PyRefs>,
    link: Bound<'_, PyAny>,
) -> PyResult<()> {
    let link = store(refs, link)?;
    client.add_middleware(NotificationLink(move |note: &mut ReceivedNotification| {
        link.notification(note)
    }));
    Ok(())
}

/// Keeps `link` in `refs` (so a cleared server or client calls no Python
/// any more) and makes the core link that finds it there.
fn store(refs: &Arc<PyRefs>, link: Bound<'_, PyAny>) -> PyResult<PyNotificationLink> {
    primitives::callable(&link)?;
    let name = format!(
        "notification link#{}",
        NEXT_LINK.fetch_add(1, Ordering::Relaxed)
    );
    refs.set_handler(HandlerKind::Middleware, &name, link.unbind());
    Ok(PyNotificationLink {
        key: (HandlerKind::Middleware, Arc::from(name)),
        refs: refs.clone(),
    })
}

/// A Python notification link, found in `refs` under `key`.
struct PyNotificationLink {
    key: HandlerKey,
    refs: Arc<PyRefs>,
}

/// What a link decided.
enum Verdict {
    /// The notification goes no further.
    Stop,
    /// It goes on with these params (`None`: as it came).
    Pass(Option<Value>),
}

impl PyNotificationLink {
    /// Core's hook (server and client alike): the link's verdict, with the
    /// params it goes on with.
    fn notification(&self, notification: &mut ReceivedNotification) -> bool {
        match self.judge(&notification.method, &notification.params) {
            Verdict::Stop => false,
            Verdict::Pass(None) => true,
            Verdict::Pass(Some(changed)) => {
                notification.params = changed;
                true
            }
        }
    }

    /// Runs the link on `method` and `params` (a dict; `{}` for params
    /// that are not an object, such as a client's `null`).
    fn judge(&self, method: &str, params: &Value) -> Verdict {
        // `None`: the interpreter is shutting down; nothing to ask.
        Python::try_attach(|py| {
            let Some(link) = self.refs.handler(py, &self.key) else {
                // A cleared server or client: as if the link were gone.
                return Verdict::Pass(None);
            };
            let outcome = given(py, params).and_then(|given| {
                let returned = link.bind(py).call1((method, given))?;
                if returned.is_none() {
                    return Ok(Verdict::Stop);
                }
                let changed = values::from_python_object(&returned, None, "params")?;
                // A `null` given as `{}` and left empty goes on as it came.
                Ok(if !params.is_object() && changed.is_empty() {
                    Verdict::Pass(None)
                } else {
                    Verdict::Pass(Some(Value::Object(changed)))
                })
            });
            outcome.unwrap_or_else(|e| {
                report(py, method, e);
                Verdict::Pass(None)
            })
        })
        .unwrap_or(Verdict::Pass(None))
    }
}

/// The dict a link gets for `params`.
fn given<'py>(py: Python<'py>, params: &Value) -> PyResult<Bound<'py, PyDict>> {
    match params {
        Value::Object(params) => values::to_python_dict(py, params),
        _ => Ok(PyDict::new(py)),
    }
}

/// Logs a link's exception with its traceback; when logging itself fails,
/// the exception goes to `sys.unraisablehook` rather than nowhere.
fn report(py: Python<'_>, method: &str, error: PyErr) {
    let logged = (|| -> PyResult<()> {
        let options = PyDict::new(py);
        options.set_item("exc_info", error.value(py))?;
        py.import("logging")?
            .call_method1("getLogger", (LOGGER,))?
            .call_method(
                "error",
                (
                    "a notification middleware link raised on %s; the notification goes on unchanged",
                    method,
                ),
                Some(&options),
            )?;
        Ok(())
    })();
    if let Err(failed) = logged {
        failed.write_unraisable(py, None);
        error.write_unraisable(py, None);
    }
}
