//! OpenTelemetry through the application's own SDK: a core
//! [`Telemetry`] whose spans and measurements are made by a
//! `ferromcp._otel.Bridge` (the application's tracer and meter providers),
//! so that ferromcp's spans join the application's traces and exporters
//! instead of going to a second exporter; and the two places where the
//! Python side's current OpenTelemetry context meets core's trace context:
//!
//! - a handler (tool, resource, prompt, completion, middleware link,
//!   visibility rule) runs with its server span as the current
//!   OpenTelemetry span ([`attach`]), so the spans it starts are children
//!   of the MCP span;
//! - a client call is sent under the caller's current OpenTelemetry span
//!   ([`under_caller`]), although core runs it on its own threads.
//!
//! Every call into Python takes the GIL: they happen only while the bridge
//! is installed. Otherwise each of those places costs one atomic load.
//! Measurements are queued and handed over with the next span that ends
//! (core records an operation just before ending its span), so a request
//! costs two GIL acquisitions (start and end), three with metrics on.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use ferromcp::telemetry::{
    self, AttributeValue, Attributes, Span, SpanKind, SpanStart, Telemetry, TraceContext,
};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::sync::lock;

/// Whether the bridge is installed: what every handler and client call
/// reads first.
static ON: AtomicBool = AtomicBool::new(false);
static INSTALLED: RwLock<Option<Arc<PyTelemetry>>> = RwLock::new(None);

/// The installed bridge, if any.
fn active() -> Option<Arc<Bridge>> {
    if !ON.load(Ordering::Acquire) {
        return None;
    }
    INSTALLED
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .as_ref()
        .map(|installed| installed.0.clone())
}

/// Core's [`Telemetry`], made of the Python bridge's calls.
struct PyTelemetry(Arc<Bridge>);

/// The Python bridge, shared by the telemetry and its spans.
struct Bridge {
    /// The `ferromcp._otel.Bridge`.
    bridge: Py<PyAny>,
    /// Whether operations and active requests are measured.
    metrics: bool,
    /// Measurements not yet handed to Python (see the module's comment).
    measured: Mutex<Vec<Measurement>>,
}

struct Measurement {
    kind: SpanKind,
    seconds: f64,
    attributes: Attributes,
}

fn attribute_value<'py>(py: Python<'py>, value: &AttributeValue) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        AttributeValue::String(s) => s.into_pyobject(py)?.into_any(),
        AttributeValue::Int(n) => n.into_pyobject(py)?.into_any(),
        AttributeValue::Bool(b) => b.into_pyobject(py)?.to_owned().into_any(),
    })
}

fn attribute_dict<'py>(py: Python<'py>, attributes: &Attributes) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (key, value) in attributes {
        dict.set_item(*key, attribute_value(py, value)?)?;
    }
    Ok(dict)
}

fn is_server(kind: SpanKind) -> bool {
    kind == SpanKind::Server
}

/// A trace context as the bridge takes it: `traceparent`, `tracestate`.
fn w3c(context: &TraceContext) -> (String, Option<&str>) {
    (context.traceparent(), context.state.as_deref())
}

impl Bridge {
    /// The queued measurements as a Python list of
    /// `(is_server, seconds, attributes)`, `None` if there are none.
    fn take_measurements<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyList>>> {
        let measured = std::mem::take(&mut *lock(&self.measured));
        if measured.is_empty() {
            return Ok(None);
        }
        let list = PyList::empty(py);
        for m in &measured {
            list.append((
                is_server(m.kind),
                m.seconds,
                attribute_dict(py, &m.attributes)?,
            ))?;
        }
        Ok(Some(list))
    }

    fn start(
        &self,
        py: Python<'_>,
        start: &SpanStart,
    ) -> PyResult<(Py<PyAny>, Option<TraceContext>)> {
        let parent = start.parent.as_ref().map(w3c);
        let (parent, state) = match &parent {
            Some((parent, state)) => (Some(parent.as_str()), *state),
            None => (None, None),
        };
        let (span, traceparent, tracestate): (Py<PyAny>, Option<String>, Option<String>) = self
            .bridge
            .bind(py)
            .call_method1(
                "start_span",
                (
                    &start.name,
                    is_server(start.kind),
                    parent,
                    state,
                    start.parent_is_remote,
                    attribute_dict(py, &start.attributes)?,
                ),
            )?
            .extract()?;
        let context = traceparent.and_then(|t| TraceContext::parse(&t, tracestate.as_deref()));
        Ok((span, context))
    }

    fn report(&self, py: Python<'_>, error: PyErr) {
        error.write_unraisable(py, Some(self.bridge.bind(py)));
    }
}

impl Telemetry for PyTelemetry {
    fn start_span(&self, start: SpanStart) -> Box<dyn Span> {
        let bridge = &self.0;
        let started = Python::try_attach(|py| {
            bridge
                .start(py, &start)
                .map_err(|e| bridge.report(py, e))
                .ok()
        })
        .flatten();
        let (span, context) = match started {
            Some((span, context)) => (Some(span), context),
            None => (None, None),
        };
        // Without a valid span of its own (no SDK behind the API, or the
        // bridge failed) the span passes its parent's context on, as
        // OpenTelemetry's no-op tracer does.
        let context = context
            .or_else(|| start.parent.clone())
            .unwrap_or_else(|| TraceContext {
                flags: 0,
                ..TraceContext::new_root()
            });
        Box::new(PySpan {
            bridge: bridge.clone(),
            span,
            server: is_server(start.kind),
            context,
            attributes: Vec::new(),
            error: None,
        })
    }

    fn record_operation(
        &self,
        kind: SpanKind,
        seconds: f64,
        attributes: &[(&'static str, AttributeValue)],
    ) {
        if self.0.metrics {
            lock(&self.0.measured).push(Measurement {
                kind,
                seconds,
                attributes: attributes.to_vec(),
            });
        }
    }

    fn active_requests(&self, method: &str, delta: i64) {
        let bridge = &self.0;
        if !bridge.metrics {
            return;
        }
        Python::try_attach(|py| {
            let counted = bridge
                .bridge
                .bind(py)
                .call_method1("active_requests", (method, delta));
            if let Err(e) = counted {
                bridge.report(py, e);
            }
        });
    }

    fn flush(&self, timeout: Duration) -> bool {
        let bridge = &self.0;
        Python::try_attach(|py| {
            let flushed = bridge.take_measurements(py).and_then(|measured| {
                if let Some(measured) = measured {
                    bridge.bridge.bind(py).call_method1("record", (measured,))?;
                }
                bridge
                    .bridge
                    .bind(py)
                    .call_method1("flush", (timeout.as_secs_f64(),))?
                    .is_truthy()
            });
            flushed.unwrap_or_else(|e| {
                bridge.report(py, e);
                false
            })
        })
        .unwrap_or(false)
    }
}

/// A span of the application's SDK; attributes and the error are set when
/// it ends (one GIL acquisition).
struct PySpan {
    bridge: Arc<Bridge>,
    /// `None`: the bridge could not start one.
    span: Option<Py<PyAny>>,
    server: bool,
    context: TraceContext,
    attributes: Attributes,
    error: Option<(String, String)>,
}

impl PySpan {
    fn finish(&mut self) {
        let Some(span) = self.span.take() else {
            return;
        };
        let attributes = std::mem::take(&mut self.attributes);
        let error = self.error.take();
        let bridge = &self.bridge;
        Python::try_attach(|py| {
            let ended = attribute_dict(py, &attributes).and_then(|attributes| {
                let measured = bridge.take_measurements(py)?;
                bridge
                    .bridge
                    .bind(py)
                    .call_method1("end_span", (span, self.server, attributes, error, measured))
            });
            if let Err(e) = ended {
                bridge.report(py, e);
            }
        });
    }
}

impl Span for PySpan {
    fn context(&self) -> TraceContext {
        self.context.clone()
    }

    fn set_attribute(&mut self, key: &'static str, value: AttributeValue) {
        match self.attributes.iter_mut().find(|(k, _)| *k == key) {
            Some((_, slot)) => *slot = value,
            None => self.attributes.push((key, value)),
        }
    }

    fn set_error(&mut self, error_type: &str, message: &str) {
        self.error = Some((error_type.to_owned(), message.to_owned()));
    }

    fn end(mut self: Box<Self>) {
        self.finish();
    }
}

impl Drop for PySpan {
    /// A span dropped unended (its request abandoned) still ends: the
    /// application's SDK would otherwise never export it.
    fn drop(&mut self) {
        self.finish();
    }
}

/// The current OpenTelemetry context made current for a handler call;
/// restored when dropped.
pub(crate) struct Attached<'py> {
    py: Python<'py>,
    token: Option<(Arc<Bridge>, Py<PyAny>)>,
}

impl Drop for Attached<'_> {
    fn drop(&mut self) {
        if let Some((bridge, token)) = self.token.take()
            && let Err(e) = bridge.bridge.bind(self.py).call_method1("detach", (token,))
        {
            bridge.report(self.py, e);
        }
    }
}

/// Whether handlers and client calls should look for trace contexts: the
/// bridge is installed.
pub(crate) fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Makes `trace` (a server span's context, while its handler runs) the
/// current OpenTelemetry span until the guard drops: the live span object
/// when the bridge made it. Nothing without the bridge or a context.
pub(crate) fn attach<'py>(py: Python<'py>, trace: Option<&TraceContext>) -> Attached<'py> {
    let token = trace
        .and_then(|trace| Some((trace, active()?)))
        .and_then(|(trace, bridge)| {
            let (traceparent, tracestate) = w3c(trace);
            match bridge
                .bridge
                .bind(py)
                .call_method1("attach", (traceparent, tracestate))
            {
                Ok(token) => Some((bridge, token.unbind())),
                Err(e) => {
                    bridge.report(py, e);
                    None
                }
            }
        });
    Attached { py, token }
}

/// The caller's current OpenTelemetry span context, if the bridge is
/// installed and there is a valid one.
pub(crate) fn caller_context(py: Python<'_>) -> Option<TraceContext> {
    let bridge = active()?;
    let current = bridge.bridge.bind(py).call_method0("current");
    let current: Option<(String, Option<String>)> = match current.and_then(|c| c.extract()) {
        Ok(current) => current,
        Err(e) => {
            bridge.report(py, e);
            return None;
        }
    };
    let (traceparent, tracestate) = current?;
    TraceContext::parse(&traceparent, tracestate.as_deref())
}

/// A client call's future, sent under the caller's current OpenTelemetry
/// span (core's [`telemetry::current`] while it runs) when there is one.
pub(crate) type Traced<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// `work` under the caller's span ([`caller_context`]): boxed once more
/// only then.
pub(crate) fn under_caller<T: 'static>(py: Python<'_>, work: Traced<T>) -> Traced<T> {
    if !on() {
        return work;
    }
    match caller_context(py) {
        Some(context) => Box::pin(telemetry::scope(context, work)),
        None => work,
    }
}

/// Installs `bridge` (a `ferromcp._otel.Bridge`) as the process's
/// telemetry, in place of any other (core's exporter from the `OTEL_*`
/// variables included). Private: `ferromcp.telemetry.use_opentelemetry`.
#[pyfunction]
pub(crate) fn telemetry_use(bridge: Py<PyAny>, metrics: bool) {
    let installed = Arc::new(PyTelemetry(Arc::new(Bridge {
        bridge,
        metrics,
        measured: Mutex::new(Vec::new()),
    })));
    *INSTALLED.write().unwrap_or_else(|p| p.into_inner()) = Some(installed.clone());
    ON.store(true, Ordering::Release);
    telemetry::install(installed);
}

/// Removes the installed telemetry, whichever it is (after flushing it).
/// Private: `ferromcp.telemetry.disable`.
#[pyfunction]
pub(crate) fn telemetry_stop(py: Python<'_>) {
    ON.store(false, Ordering::Release);
    let ours = INSTALLED.write().unwrap_or_else(|p| p.into_inner()).take();
    // Flushing may wait for an export, and the bridge's takes the GIL.
    py.detach(|| drop(telemetry::uninstall()));
    drop(ours);
}

/// Sends what the installed telemetry holds, waiting at most `timeout`
/// seconds; whether all of it was sent. Private:
/// `ferromcp.telemetry.flush`, and at exit.
#[pyfunction]
pub(crate) fn telemetry_flush(py: Python<'_>, timeout: f64) -> bool {
    let timeout = Duration::try_from_secs_f64(timeout).unwrap_or(Duration::ZERO);
    py.detach(|| telemetry::flush(timeout))
}

/// Which telemetry is installed: `"opentelemetry"` (the bridge),
/// `"otlp"` (another: core's exporter from the `OTEL_*` variables), or
/// `None`. Private: `ferromcp.telemetry.installed`.
#[pyfunction]
pub(crate) fn telemetry_installed() -> Option<&'static str> {
    let installed = telemetry::installed()?;
    let ours = INSTALLED.read().unwrap_or_else(|p| p.into_inner()).clone();
    match ours {
        Some(ours) if std::ptr::addr_eq(Arc::as_ptr(&installed), Arc::as_ptr(&ours)) => {
            Some("opentelemetry")
        }
        _ => Some("otlp"),
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(telemetry_use, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry_stop, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry_flush, m)?)?;
    m.add_function(wrap_pyfunction!(telemetry_installed, m)?)?;
    Ok(())
}
