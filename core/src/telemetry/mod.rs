//! OpenTelemetry for MCP: a span for every request a server serves and a
//! client sends, named and attributed per the OpenTelemetry semantic
//! conventions for MCP, with the W3C trace context carried in `_meta`
//! (SEP-414) so a server's span is the child of its client's; and the
//! duration of each operation as a metric.
//!
//! Off by default, and then free: one atomic load per request. It is on
//! when a [`Telemetry`] is installed: by the standard environment variables
//! ([`init_from_env`], which every server and client calls once:
//! `OTEL_TRACES_EXPORTER=otlp`, `OTEL_METRICS_EXPORTER=otlp`,
//! `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_PROTOCOL`
//! `http/protobuf` or `http/json`, `OTEL_SERVICE_NAME`, ...), by
//! [`install`] with [`OtlpExporter`], or by a binding that hands spans to
//! its application's own OpenTelemetry SDK (Python, Node).
//!
//! A handler's work joins the trace: [`current`] is the server span's
//! context while a handler runs (on the handler's task), a client call made
//! there becomes its child, and `RequestContext::meta().trace` gives it to
//! code that starts its own spans.

mod context;
mod instrument;
mod otlp;
mod proto;

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once, RwLock};
use std::time::Duration;

pub use context::{TRACEPARENT, TRACESTATE, TraceContext};
pub(crate) use instrument::{ClientSpan, ServerSpan};
pub use otlp::{OtlpConfig, OtlpExporter, OtlpProtocol};

/// Which side of an exchange a span describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpanKind {
    /// A request or notification this process sent.
    Client,
    /// A request or notification this process received.
    Server,
}

/// An attribute's value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AttributeValue {
    /// A string.
    String(String),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
}

impl From<&str> for AttributeValue {
    fn from(value: &str) -> Self {
        AttributeValue::String(value.to_owned())
    }
}

impl From<String> for AttributeValue {
    fn from(value: String) -> Self {
        AttributeValue::String(value)
    }
}

impl From<i64> for AttributeValue {
    fn from(value: i64) -> Self {
        AttributeValue::Int(value)
    }
}

/// Attributes as the semantic conventions name them.
pub type Attributes = Vec<(&'static str, AttributeValue)>;

/// What a span starts with.
#[derive(Debug, Clone)]
pub struct SpanStart {
    /// `{mcp.method.name} {target}`: `tools/call echo`, `resources/read`.
    pub name: String,
    /// Client or server.
    pub kind: SpanKind,
    /// The remote parent (a server span: what the request's `_meta`
    /// carried) or the local one (a client span: the caller's context).
    pub parent: Option<TraceContext>,
    /// Whether `parent` came from the peer.
    pub parent_is_remote: bool,
    /// `mcp.method.name`, `gen_ai.tool.name`, `jsonrpc.request.id`, ...
    pub attributes: Attributes,
}

/// A started span: ended once, by [`Span::end`].
pub trait Span: Send {
    /// This span's context: what goes into an outgoing request's `_meta`,
    /// and the parent of spans started under it.
    fn context(&self) -> TraceContext;
    /// Adds or replaces an attribute.
    fn set_attribute(&mut self, key: &'static str, value: AttributeValue);
    /// Marks the span failed: `error.type` and an error status with
    /// `message`.
    fn set_error(&mut self, error_type: &str, message: &str);
    /// Ends the span (its end time is now).
    fn end(self: Box<Self>);
}

/// Where spans and measurements go. Installed once per process
/// ([`install`]); called from any thread, so it must not block.
///
/// ```
/// use ferromcp::telemetry::{Span, SpanStart, Telemetry, TraceContext, AttributeValue};
/// use std::sync::{Arc, Mutex};
///
/// /// Prints each span's name as it ends.
/// struct Printing;
/// struct Printed(String, TraceContext);
/// impl Span for Printed {
///     fn context(&self) -> TraceContext { self.1.clone() }
///     fn set_attribute(&mut self, _: &'static str, _: AttributeValue) {}
///     fn set_error(&mut self, _: &str, _: &str) {}
///     fn end(self: Box<Self>) { eprintln!("span {}", self.0) }
/// }
/// impl Telemetry for Printing {
///     fn start_span(&self, start: SpanStart) -> Box<dyn Span> {
///         let ctx = start.parent.as_ref().map_or_else(TraceContext::new_root, TraceContext::child);
///         Box::new(Printed(start.name, ctx))
///     }
/// }
/// ferromcp::telemetry::install(Arc::new(Printing));
/// # ferromcp::telemetry::uninstall();
/// ```
pub trait Telemetry: Send + Sync + 'static {
    /// Starts a span.
    fn start_span(&self, start: SpanStart) -> Box<dyn Span>;

    /// Records one finished operation: `mcp.client.operation.duration` or
    /// `mcp.server.operation.duration` (seconds), with the low-cardinality
    /// attributes of its span (method, tool or prompt name, error type).
    fn record_operation(
        &self,
        kind: SpanKind,
        seconds: f64,
        attributes: &[(&'static str, AttributeValue)],
    ) {
        let _ = (kind, seconds, attributes);
    }

    /// A request of `method` started (`delta` 1) or ended (-1) being served:
    /// `mcp.server.active_requests`.
    fn active_requests(&self, method: &str, delta: i64) {
        let _ = (method, delta);
    }

    /// Sends what is buffered, waiting at most `timeout`; whether all of it
    /// was sent.
    fn flush(&self, timeout: Duration) -> bool {
        let _ = timeout;
        true
    }
}

/// Whether a [`Telemetry`] is installed: read before anything else is done
/// for a request, so that tracing off costs this load.
static ON: AtomicBool = AtomicBool::new(false);
static INSTALLED: RwLock<Option<Arc<dyn Telemetry>>> = RwLock::new(None);

/// Installs `telemetry` for the whole process (replacing any other): every
/// server and client of the process reports to it from now on.
pub fn install(telemetry: Arc<dyn Telemetry>) {
    *crate::rpc::write_unpoisoned(&INSTALLED) = Some(telemetry);
    ON.store(true, Ordering::Release);
}

/// Removes the installed [`Telemetry`] (after flushing it), if any, and
/// returns it.
pub fn uninstall() -> Option<Arc<dyn Telemetry>> {
    ON.store(false, Ordering::Release);
    let removed = crate::rpc::write_unpoisoned(&INSTALLED).take();
    if let Some(telemetry) = &removed {
        telemetry.flush(Duration::from_secs(5));
    }
    removed
}

/// The installed [`Telemetry`], if tracing is on.
pub fn installed() -> Option<Arc<dyn Telemetry>> {
    if !ON.load(Ordering::Acquire) {
        return None;
    }
    crate::rpc::read_unpoisoned(&INSTALLED).clone()
}

/// Sends what the installed [`Telemetry`] holds, waiting at most
/// `timeout`: what a process does before it exits (servers do it when
/// their stdio input ends).
pub fn flush(timeout: Duration) -> bool {
    installed().is_none_or(|t| t.flush(timeout))
}

/// [`flush`] from async code: waits on a blocking thread, so the runtime
/// goes on meanwhile. Nothing to do (no thread) when tracing is off.
pub async fn flush_async(timeout: Duration) -> bool {
    if installed().is_none() {
        return true;
    }
    tokio::task::spawn_blocking(move || flush(timeout))
        .await
        .unwrap_or(false)
}

static FROM_ENV: Once = Once::new();

/// Installs an [`OtlpExporter`] if the standard environment variables ask
/// for one (`OTEL_TRACES_EXPORTER` or `OTEL_METRICS_EXPORTER` naming
/// `otlp`, and `OTEL_SDK_DISABLED` not `true`), unless a [`Telemetry`] is
/// installed already. Runs once per process; every `Server` and `Client`
/// calls it, so setting the variables is all a program needs. A setting
/// that cannot be used (`grpc`, a bad endpoint) is reported as a warning
/// and leaves tracing off.
pub fn init_from_env() {
    FROM_ENV.call_once(|| {
        if installed().is_some() {
            return;
        }
        match OtlpConfig::from_env() {
            Ok(Some(config)) => match OtlpExporter::start(config) {
                Ok(exporter) => install(Arc::new(exporter)),
                Err(error) => tracing::warn!(%error, "OpenTelemetry export not started"),
            },
            Ok(None) => {}
            Err(error) => tracing::warn!(%error, "OpenTelemetry settings ignored"),
        }
    });
}

tokio::task_local! {
    static CURRENT: TraceContext;
}

/// The trace context of the span the current task runs under: a server
/// span while its handler runs, or what [`scope`] set.
pub fn current() -> Option<TraceContext> {
    CURRENT.try_with(Clone::clone).ok()
}

/// Runs `future` with `context` as [`current`]: client calls made in it
/// are children of that span.
pub async fn scope<F: Future>(context: TraceContext, future: F) -> F::Output {
    CURRENT.scope(context, future).await
}

/// Why telemetry settings could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// An environment variable or option has a value that cannot be used.
    #[error("{name}: {reason}")]
    Setting {
        /// The variable or option.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The export thread could not be started.
    #[error("cannot start the export thread: {0}")]
    Thread(#[from] std::io::Error),
}
