//! The built-in exporter: spans and metrics sent to an OpenTelemetry
//! collector over OTLP/HTTP, as protobuf or JSON, from a thread of its own
//! (so a busy or blocked application runtime never holds exports up, and an
//! exporter never takes a worker from it).
//!
//! Spans are batched as the OpenTelemetry SDKs' batch processor does: sent
//! every `OTEL_BSP_SCHEDULE_DELAY` or as soon as a batch is full, at most
//! `OTEL_BSP_MAX_QUEUE_SIZE` waiting (more are dropped and counted: memory
//! stays bounded when the collector is down). Metrics are cumulative
//! histograms and counters, sent every `OTEL_METRIC_EXPORT_INTERVAL` and on
//! [`Telemetry::flush`].

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::context::hex;
use super::proto::Writer;
use super::{
    AttributeValue, Attributes, Span, SpanKind, SpanStart, Telemetry, TelemetryError, TraceContext,
};
use crate::net::fetch::{Body, Fetcher};
use crate::net::tls::TlsOptions;
use crate::rpc::lock_unpoisoned;

/// How spans and metrics are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtlpProtocol {
    /// `http/protobuf` (the default): `application/x-protobuf`.
    Protobuf,
    /// `http/json`: `application/json`, ids as hex, 64-bit integers as
    /// strings.
    Json,
}

/// Where and how the exporter sends. [`OtlpConfig::from_env`] reads the
/// standard variables; [`OtlpConfig::new`] starts from an endpoint.
#[derive(Debug, Clone)]
pub struct OtlpConfig {
    /// Full URL spans are POSTed to (`.../v1/traces`); `None`: no spans.
    pub traces_endpoint: Option<String>,
    /// Full URL metrics are POSTed to (`.../v1/metrics`); `None`: no
    /// metrics.
    pub metrics_endpoint: Option<String>,
    /// The encoding.
    pub protocol: OtlpProtocol,
    /// Headers sent with every export (`OTEL_EXPORTER_OTLP_HEADERS`).
    pub headers: Vec<(String, String)>,
    /// Resource attributes; `service.name` among them.
    pub resource: Vec<(String, String)>,
    /// Longest a finished span waits to be sent.
    pub schedule_delay: Duration,
    /// Most spans waiting; more are dropped.
    pub max_queue: usize,
    /// Most spans per export.
    pub max_batch: usize,
    /// How often metrics are sent.
    pub metric_interval: Duration,
    /// Longest one export may take.
    pub timeout: Duration,
}

impl OtlpConfig {
    /// Spans and metrics to the collector at `endpoint` (a base URL such
    /// as `http://localhost:4318`; `/v1/traces` and `/v1/metrics` are
    /// appended), as protobuf, with the SDK's default batching.
    ///
    /// ```
    /// use ferromcp::telemetry::{OtlpConfig, OtlpProtocol};
    /// let mut config = OtlpConfig::new("http://localhost:4318", "my-server");
    /// config.protocol = OtlpProtocol::Json;
    /// assert_eq!(config.traces_endpoint.as_deref(), Some("http://localhost:4318/v1/traces"));
    /// ```
    pub fn new(endpoint: &str, service_name: &str) -> OtlpConfig {
        let base = endpoint.trim_end_matches('/');
        OtlpConfig {
            traces_endpoint: Some(format!("{base}/v1/traces")),
            metrics_endpoint: Some(format!("{base}/v1/metrics")),
            protocol: OtlpProtocol::Protobuf,
            headers: Vec::new(),
            resource: vec![("service.name".into(), service_name.into())],
            schedule_delay: Duration::from_millis(5000),
            max_queue: 2048,
            max_batch: 512,
            metric_interval: Duration::from_millis(60_000),
            timeout: Duration::from_millis(10_000),
        }
    }

    /// Reads the standard OpenTelemetry environment variables; `Ok(None)`
    /// when neither `OTEL_TRACES_EXPORTER` nor `OTEL_METRICS_EXPORTER`
    /// names `otlp` (off is the default), or `OTEL_SDK_DISABLED=true`.
    pub fn from_env() -> Result<Option<OtlpConfig>, TelemetryError> {
        OtlpConfig::from_vars(|name| std::env::var(name).ok())
    }

    pub(crate) fn from_vars(
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<OtlpConfig>, TelemetryError> {
        let var = |name: &str| {
            var(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        if var("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let names_otlp =
            |name: &str| var(name).is_some_and(|v| v.split(',').any(|e| e.trim() == "otlp"));
        let traces = names_otlp("OTEL_TRACES_EXPORTER");
        let metrics = names_otlp("OTEL_METRICS_EXPORTER");
        if !traces && !metrics {
            return Ok(None);
        }
        let protocol_var = |name: &str| -> Result<Option<OtlpProtocol>, TelemetryError> {
            match var(name).as_deref() {
                None => Ok(None),
                Some("http/protobuf") => Ok(Some(OtlpProtocol::Protobuf)),
                Some("http/json") => Ok(Some(OtlpProtocol::Json)),
                Some(other) => Err(setting(
                    name,
                    format!("{other:?} is not supported (http/protobuf or http/json)"),
                )),
            }
        };
        let protocol = match protocol_var("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")? {
            Some(p) if traces => p,
            _ => protocol_var("OTEL_EXPORTER_OTLP_PROTOCOL")?.unwrap_or(OtlpProtocol::Protobuf),
        };
        let base =
            var("OTEL_EXPORTER_OTLP_ENDPOINT").unwrap_or_else(|| "http://localhost:4318".into());
        let signal = |specific: &str, path: &str| -> Result<String, TelemetryError> {
            let url =
                var(specific).unwrap_or_else(|| format!("{}/{path}", base.trim_end_matches('/')));
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(setting(
                    specific,
                    format!("{url:?} is not an http:// or https:// URL"),
                ));
            }
            Ok(url)
        };
        let millis = |name: &str, default: u64| -> Result<Duration, TelemetryError> {
            match var(name) {
                None => Ok(Duration::from_millis(default)),
                Some(v) => v
                    .parse::<u64>()
                    .map(Duration::from_millis)
                    .map_err(|_| setting(name, format!("{v:?} is not a number of milliseconds"))),
            }
        };
        let count = |name: &str, default: usize| -> Result<usize, TelemetryError> {
            match var(name) {
                None => Ok(default),
                Some(v) => v
                    .parse::<usize>()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| setting(name, format!("{v:?} is not a positive number"))),
            }
        };
        let mut resource = pairs(var("OTEL_RESOURCE_ATTRIBUTES").as_deref());
        let service = var("OTEL_SERVICE_NAME")
            .or_else(|| {
                resource
                    .iter()
                    .find(|(k, _)| k == "service.name")
                    .map(|(_, v)| v.clone())
            })
            .unwrap_or_else(default_service_name);
        resource.retain(|(k, _)| k != "service.name");
        resource.insert(0, ("service.name".into(), service));
        let max_queue = count("OTEL_BSP_MAX_QUEUE_SIZE", 2048)?;
        Ok(Some(OtlpConfig {
            traces_endpoint: traces
                .then(|| signal("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "v1/traces"))
                .transpose()?,
            metrics_endpoint: metrics
                .then(|| signal("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "v1/metrics"))
                .transpose()?,
            protocol,
            headers: pairs(var("OTEL_EXPORTER_OTLP_HEADERS").as_deref()),
            resource,
            schedule_delay: millis("OTEL_BSP_SCHEDULE_DELAY", 5000)?,
            max_queue,
            max_batch: count("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)?.min(max_queue),
            metric_interval: millis("OTEL_METRIC_EXPORT_INTERVAL", 60_000)?,
            timeout: millis("OTEL_EXPORTER_OTLP_TIMEOUT", 10_000)?,
        }))
    }
}

fn setting(name: &str, reason: String) -> TelemetryError {
    TelemetryError::Setting {
        name: name.into(),
        reason,
    }
}

/// `key=value,key2=value2`, values percent-decoded (the W3C Baggage form
/// OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS use).
fn pairs(text: Option<&str>) -> Vec<(String, String)> {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(s.trim())
            .decode_utf8_lossy()
            .into_owned()
    };
    text.unwrap_or("")
        .split(',')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .filter(|(k, _)| !k.is_empty())
        .collect()
}

/// `unknown_service:<executable>`, as the SDKs name a service nobody named.
fn default_service_name() -> String {
    let exe = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    if exe.is_empty() {
        "unknown_service".into()
    } else {
        format!("unknown_service:{exe}")
    }
}

/// A finished span, as exported.
struct SpanData {
    context: TraceContext,
    parent_span_id: Option<[u8; 8]>,
    parent_is_remote: bool,
    name: String,
    kind: SpanKind,
    start_ns: u64,
    end_ns: u64,
    attributes: Attributes,
    error: Option<String>,
}

/// Histogram bucket bounds (seconds) the MCP conventions recommend for
/// operation durations.
const BOUNDS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

#[derive(Default)]
struct Histogram {
    buckets: [u64; BOUNDS.len() + 1],
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
}

impl Histogram {
    fn record(&mut self, value: f64) {
        let bucket = BOUNDS
            .iter()
            .position(|b| value <= *b)
            .unwrap_or(BOUNDS.len());
        self.buckets[bucket] += 1;
        if self.count == 0 || value < self.min {
            self.min = value;
        }
        if self.count == 0 || value > self.max {
            self.max = value;
        }
        self.count += 1;
        self.sum += value;
    }
}

/// Cumulative metrics since the exporter started. Attribute sets are few
/// (methods x tool names x error types): the keys are the low-cardinality
/// attributes only.
#[derive(Default)]
struct Metrics {
    /// By a hash of (kind, attributes), so recording looks a series up
    /// without building its key.
    operations: HashMap<u64, Vec<(SpanKind, Attributes, Histogram)>>,
    series: usize,
    active: HashMap<String, i64>,
}

/// Most distinct attribute sets kept per metric: a server with endless
/// tool names (a hostile client calling made-up ones) must not grow this.
const MAX_SERIES: usize = 2000;

/// One flush's outcome, waited for on the caller's thread. (A Condvar, not
/// a channel: a channel's receiver registers the waiting thread in a
/// thread-local a C program's main thread never frees.)
#[derive(Default)]
struct Flushed {
    sent: Mutex<Option<bool>>,
    done: Condvar,
}

impl Flushed {
    fn set(&self, sent: bool) {
        *lock_unpoisoned(&self.sent) = Some(sent);
        self.done.notify_all();
    }

    fn wait(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut sent = lock_unpoisoned(&self.sent);
        loop {
            if let Some(sent) = *sent {
                return sent;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            sent = match self.done.wait_timeout(sent, left) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

#[derive(Default)]
struct Queue {
    spans: Vec<SpanData>,
    dropped: u64,
    flushes: Vec<Arc<Flushed>>,
    stopping: bool,
}

struct Shared {
    config: OtlpConfig,
    queue: Mutex<Queue>,
    metrics: Mutex<Metrics>,
    wake: tokio::sync::Notify,
    start_ns: u64,
}

/// The built-in [`Telemetry`]: OTLP/HTTP to a collector.
///
/// ```no_run
/// use ferromcp::telemetry::{self, OtlpConfig, OtlpExporter};
/// let exporter = OtlpExporter::start(OtlpConfig::new("http://localhost:4318", "my-server"))?;
/// telemetry::install(std::sync::Arc::new(exporter));
/// // ... serve ...
/// telemetry::flush(std::time::Duration::from_secs(5));
/// # Ok::<(), ferromcp::telemetry::TelemetryError>(())
/// ```
pub struct OtlpExporter {
    shared: Arc<Shared>,
}

impl OtlpExporter {
    /// Starts the export thread.
    pub fn start(config: OtlpConfig) -> Result<OtlpExporter, TelemetryError> {
        let shared = Arc::new(Shared {
            config,
            queue: Mutex::default(),
            metrics: Mutex::default(),
            wake: tokio::sync::Notify::new(),
            start_ns: now_ns(),
        });
        let worker = shared.clone();
        std::thread::Builder::new()
            .name("ferromcp-otlp".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        tracing::warn!(%error, "OpenTelemetry export thread has no runtime");
                        return;
                    }
                };
                runtime.block_on(export_loop(worker));
            })?;
        Ok(OtlpExporter { shared })
    }
}

impl Drop for OtlpExporter {
    fn drop(&mut self) {
        lock_unpoisoned(&self.shared.queue).stopping = true;
        self.shared.wake.notify_one();
    }
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A span being recorded by the exporter.
struct RecordingSpan {
    shared: Arc<Shared>,
    data: SpanData,
    started: Instant,
}

/// A span of an unsampled trace: it has a context to pass on, and nothing
/// is recorded.
struct UnsampledSpan(TraceContext);

impl Span for UnsampledSpan {
    fn context(&self) -> TraceContext {
        self.0.clone()
    }
    fn set_attribute(&mut self, _: &'static str, _: AttributeValue) {}
    fn set_error(&mut self, _: &str, _: &str) {}
    fn end(self: Box<Self>) {}
}

impl Span for RecordingSpan {
    fn context(&self) -> TraceContext {
        self.data.context.clone()
    }

    fn set_attribute(&mut self, key: &'static str, value: AttributeValue) {
        match self.data.attributes.iter_mut().find(|(k, _)| *k == key) {
            Some((_, slot)) => *slot = value,
            None => self.data.attributes.push((key, value)),
        }
    }

    fn set_error(&mut self, error_type: &str, message: &str) {
        self.set_attribute("error.type", error_type.into());
        self.data.error = Some(message.to_owned());
    }

    fn end(self: Box<Self>) {
        let RecordingSpan {
            shared,
            mut data,
            started,
        } = *self;
        data.end_ns = data.start_ns + started.elapsed().as_nanos() as u64;
        let full = {
            let mut queue = lock_unpoisoned(&shared.queue);
            if queue.spans.len() >= shared.config.max_queue {
                queue.dropped += 1;
                return;
            }
            queue.spans.push(data);
            queue.spans.len() >= shared.config.max_batch
        };
        if full {
            shared.wake.notify_one();
        }
    }
}

impl Telemetry for OtlpExporter {
    fn start_span(&self, start: SpanStart) -> Box<dyn Span> {
        let context = match &start.parent {
            Some(parent) => parent.child(),
            None => TraceContext::new_root(),
        };
        // Parent-based sampling, always on for roots: a trace its root
        // chose not to record is not recorded here either.
        if self.shared.config.traces_endpoint.is_none() || !context.sampled() {
            return Box::new(UnsampledSpan(context));
        }
        Box::new(RecordingSpan {
            shared: self.shared.clone(),
            data: SpanData {
                context,
                parent_span_id: start.parent.as_ref().map(|p| p.span_id),
                parent_is_remote: start.parent_is_remote,
                name: start.name,
                kind: start.kind,
                start_ns: now_ns(),
                end_ns: 0,
                attributes: start.attributes,
                error: None,
            },
            started: Instant::now(),
        })
    }

    fn record_operation(
        &self,
        kind: SpanKind,
        seconds: f64,
        attributes: &[(&'static str, AttributeValue)],
    ) {
        if self.shared.config.metrics_endpoint.is_none() {
            return;
        }
        let hash = {
            use std::hash::{BuildHasher, Hash, Hasher};
            let mut hasher = foldhash::fast::FixedState::default().build_hasher();
            kind.hash(&mut hasher);
            attributes.hash(&mut hasher);
            hasher.finish()
        };
        let mut metrics = lock_unpoisoned(&self.shared.metrics);
        let full = metrics.series >= MAX_SERIES;
        let bucket = metrics.operations.entry(hash).or_default();
        match bucket
            .iter_mut()
            .find(|(k, a, _)| *k == kind && a.as_slice() == attributes)
        {
            Some((_, _, histogram)) => histogram.record(seconds),
            None if !full => {
                let mut histogram = Histogram::default();
                histogram.record(seconds);
                bucket.push((kind, attributes.to_vec(), histogram));
                metrics.series += 1;
            }
            None => {}
        }
    }

    fn active_requests(&self, method: &str, delta: i64) {
        if self.shared.config.metrics_endpoint.is_none() {
            return;
        }
        let mut metrics = lock_unpoisoned(&self.shared.metrics);
        if let Some(count) = metrics.active.get_mut(method) {
            *count += delta;
        } else if metrics.active.len() < MAX_SERIES {
            metrics.active.insert(method.to_owned(), delta);
        }
    }

    fn flush(&self, timeout: Duration) -> bool {
        let flushed = Arc::new(Flushed::default());
        lock_unpoisoned(&self.shared.queue)
            .flushes
            .push(Arc::clone(&flushed));
        self.shared.wake.notify_one();
        flushed.wait(timeout)
    }
}

async fn export_loop(shared: Arc<Shared>) {
    let config = &shared.config;
    let mut next_metrics = Instant::now() + config.metric_interval;
    let mut reported_dropped = 0;
    loop {
        let until_metrics = next_metrics.saturating_duration_since(Instant::now());
        let _ = tokio::time::timeout(
            config.schedule_delay.min(until_metrics),
            shared.wake.notified(),
        )
        .await;
        let (spans, flushes, dropped, stopping) = {
            let mut queue = lock_unpoisoned(&shared.queue);
            (
                std::mem::take(&mut queue.spans),
                std::mem::take(&mut queue.flushes),
                queue.dropped,
                queue.stopping,
            )
        };
        if dropped > reported_dropped {
            tracing::warn!(
                dropped = dropped - reported_dropped,
                "OpenTelemetry spans dropped: the export queue was full"
            );
            reported_dropped = dropped;
        }
        // A connection pool per round, gone before the round's flushes are
        // answered: between rounds this thread holds nothing but the queue,
        // so a process ending while it waits leaves nothing half-owned
        // (valgrind's "possibly lost" in C programs). One connection per
        // batch, every few seconds, costs nothing worth keeping one open.
        let fetcher = Fetcher::new(TlsOptions::default());
        let mut sent = true;
        if let Some(url) = &config.traces_endpoint {
            for batch in spans.chunks(config.max_batch) {
                let body = encode_traces(config, batch);
                sent &= post(&fetcher, config, url, body).await;
            }
        }
        let metrics_due = Instant::now() >= next_metrics;
        if let Some(url) = &config.metrics_endpoint
            && (metrics_due || !flushes.is_empty() || stopping)
        {
            let body = {
                let metrics = lock_unpoisoned(&shared.metrics);
                (!metrics.operations.is_empty() || !metrics.active.is_empty())
                    .then(|| encode_metrics(config, shared.start_ns, &metrics))
            };
            if let Some(body) = body {
                sent &= post(&fetcher, config, url, body).await;
            }
        }
        if metrics_due {
            next_metrics = Instant::now() + config.metric_interval;
        }
        drop(fetcher);
        for flush in flushes {
            flush.set(sent);
        }
        if stopping {
            return;
        }
    }
}

async fn post(fetcher: &Fetcher, config: &OtlpConfig, url: &str, body: Vec<u8>) -> bool {
    let content_type = match config.protocol {
        OtlpProtocol::Protobuf => "application/x-protobuf",
        OtlpProtocol::Json => "application/json",
    };
    let sent = fetcher.post_with_headers(url, Body::Raw(content_type, body), &config.headers);
    match tokio::time::timeout(config.timeout, sent).await {
        Ok(Ok(answer)) if answer.ok() => true,
        Ok(Ok(answer)) => {
            tracing::warn!(
                url,
                status = answer.status,
                "OpenTelemetry collector refused an export"
            );
            false
        }
        Ok(Err(error)) => {
            tracing::warn!(url, %error, "OpenTelemetry export failed");
            false
        }
        Err(_) => {
            tracing::warn!(url, "OpenTelemetry export timed out");
            false
        }
    }
}

const SCOPE_NAME: &str = "ferromcp";
const SCOPE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Resource attributes have owned keys; span attributes static ones.
fn resource_pairs(config: &OtlpConfig) -> Vec<(String, AttributeValue)> {
    let mut pairs: Vec<(String, AttributeValue)> = config
        .resource
        .iter()
        .map(|(k, v)| (k.clone(), AttributeValue::String(v.clone())))
        .collect();
    for (key, value) in [
        ("telemetry.sdk.name", "ferromcp"),
        ("telemetry.sdk.language", "rust"),
        ("telemetry.sdk.version", SCOPE_VERSION),
    ] {
        if !pairs.iter().any(|(k, _)| k == key) {
            pairs.push((key.into(), value.into()));
        }
    }
    pairs
}

/// OTLP span kinds.
fn kind_number(kind: SpanKind) -> u64 {
    match kind {
        SpanKind::Server => 2,
        SpanKind::Client => 3,
    }
}

/// `Span.flags`: the trace flags, and whether the parent was remote.
fn span_flags(span: &SpanData) -> u32 {
    const HAS_IS_REMOTE: u32 = 0x100;
    const IS_REMOTE: u32 = 0x200;
    let mut flags = u32::from(span.context.flags) | HAS_IS_REMOTE;
    if span.parent_is_remote {
        flags |= IS_REMOTE;
    }
    flags
}

fn encode_traces(config: &OtlpConfig, spans: &[SpanData]) -> Vec<u8> {
    match config.protocol {
        OtlpProtocol::Protobuf => traces_protobuf(config, spans),
        OtlpProtocol::Json => traces_json(config, spans).to_string().into_bytes(),
    }
}

fn encode_metrics(config: &OtlpConfig, start_ns: u64, metrics: &Metrics) -> Vec<u8> {
    match config.protocol {
        OtlpProtocol::Protobuf => metrics_protobuf(config, start_ns, metrics),
        OtlpProtocol::Json => metrics_json(config, start_ns, metrics)
            .to_string()
            .into_bytes(),
    }
}

// ---- protobuf (opentelemetry/proto/{trace,metrics,common,resource}/v1) ----

fn any_value(w: &mut Writer, value: &AttributeValue) {
    match value {
        // Each oneof member is written even when zero or empty: a value
        // that is "" or 0 is present, not absent.
        AttributeValue::String(s) if s.is_empty() => w.bytes.extend_from_slice(&[0x0a, 0x00]),
        AttributeValue::String(s) => w.string(1, s),
        AttributeValue::Bool(b) => {
            w.bytes.extend_from_slice(&[0x10, u8::from(*b)]);
        }
        AttributeValue::Int(i) => {
            if *i == 0 {
                w.bytes.extend_from_slice(&[0x18, 0x00]);
            } else {
                w.int(3, *i);
            }
        }
    }
}

fn key_value(w: &mut Writer, field: u32, key: &str, value: &AttributeValue) {
    w.message(field, |kv| {
        kv.string(1, key);
        kv.message(2, |v| any_value(v, value));
    });
}

fn resource_protobuf(w: &mut Writer, config: &OtlpConfig) {
    w.message(1, |resource| {
        for (key, value) in resource_pairs(config) {
            key_value(resource, 1, &key, &value);
        }
    });
}

fn scope_protobuf(w: &mut Writer) {
    w.message(1, |scope| {
        scope.string(1, SCOPE_NAME);
        scope.string(2, SCOPE_VERSION);
    });
}

fn traces_protobuf(config: &OtlpConfig, spans: &[SpanData]) -> Vec<u8> {
    let mut request = Writer::default();
    // ExportTraceServiceRequest.resource_spans = 1
    request.message(1, |resource_spans| {
        resource_protobuf(resource_spans, config);
        // ResourceSpans.scope_spans = 2
        resource_spans.message(2, |scope_spans| {
            scope_protobuf(scope_spans);
            for span in spans {
                // ScopeSpans.spans = 2
                scope_spans.message(2, |s| {
                    s.bytes(1, &span.context.trace_id);
                    s.bytes(2, &span.context.span_id);
                    s.string(3, span.context.state.as_deref().unwrap_or(""));
                    if let Some(parent) = &span.parent_span_id {
                        s.bytes(4, parent);
                    }
                    s.string(5, &span.name);
                    s.uint(6, kind_number(span.kind));
                    s.fixed64(7, span.start_ns);
                    s.fixed64(8, span.end_ns);
                    for (key, value) in &span.attributes {
                        key_value(s, 9, key, value);
                    }
                    if let Some(message) = &span.error {
                        // Status: message = 2, code = 3 (ERROR = 2).
                        s.message(15, |status| {
                            status.string(2, message);
                            status.uint(3, 2);
                        });
                    }
                    // flags = 16, fixed32.
                    s.bytes.push((16 << 3 | 5) as u8);
                    s.bytes.push(0x01);
                    s.bytes.extend_from_slice(&span_flags(span).to_le_bytes());
                });
            }
        });
    });
    request.bytes
}

fn operation_metric_name(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::Client => "mcp.client.operation.duration",
        SpanKind::Server => "mcp.server.operation.duration",
    }
}

fn metrics_protobuf(config: &OtlpConfig, start_ns: u64, metrics: &Metrics) -> Vec<u8> {
    let now = now_ns();
    let mut request = Writer::default();
    // ExportMetricsServiceRequest.resource_metrics = 1
    request.message(1, |resource_metrics| {
        resource_protobuf(resource_metrics, config);
        // ResourceMetrics.scope_metrics = 2
        resource_metrics.message(2, |scope_metrics| {
            scope_protobuf(scope_metrics);
            for kind in [SpanKind::Client, SpanKind::Server] {
                let series: Vec<_> = metrics
                    .operations
                    .values()
                    .flatten()
                    .filter(|(k, _, _)| *k == kind)
                    .collect();
                if series.is_empty() {
                    continue;
                }
                // ScopeMetrics.metrics = 2
                scope_metrics.message(2, |metric| {
                    metric.string(1, operation_metric_name(kind));
                    metric.string(2, "Duration of MCP operations");
                    metric.string(3, "s");
                    // Metric.histogram = 9
                    metric.message(9, |histogram| {
                        for (_, attributes, h) in &series {
                            // Histogram.data_points = 1
                            histogram.message(1, |point| {
                                point.fixed64(2, start_ns);
                                point.fixed64(3, now);
                                point.fixed64(4, h.count);
                                point.double(5, h.sum);
                                point.packed_fixed64(6, &h.buckets);
                                point.packed_double(7, &BOUNDS);
                                for (key, value) in attributes {
                                    key_value(point, 9, key, value);
                                }
                                point.double(11, h.min);
                                point.double(12, h.max);
                            });
                        }
                        // aggregation_temporality = 2: CUMULATIVE (2).
                        histogram.uint(2, 2);
                    });
                });
            }
            if !metrics.active.is_empty() {
                scope_metrics.message(2, |metric| {
                    metric.string(1, "mcp.server.active_requests");
                    metric.string(2, "MCP requests being served");
                    metric.string(3, "{request}");
                    // Metric.sum = 7 (an up-down counter: not monotonic).
                    metric.message(7, |sum| {
                        for (method, count) in &metrics.active {
                            // NumberDataPoint: start 2, time 3, as_int 6
                            // (sfixed64), attributes 7.
                            sum.message(1, |point| {
                                point.fixed64(2, start_ns);
                                point.fixed64(3, now);
                                point.bytes.push((6 << 3 | 1) as u8);
                                point.bytes.extend_from_slice(&count.to_le_bytes());
                                key_value(
                                    point,
                                    7,
                                    "mcp.method.name",
                                    &AttributeValue::String(method.clone()),
                                );
                            });
                        }
                        sum.uint(2, 2);
                    });
                });
            }
        });
    });
    request.bytes
}

// ---- JSON (the OTLP/JSON mapping: hex ids, 64-bit integers as strings) ----

fn json_value(value: &AttributeValue) -> Value {
    match value {
        AttributeValue::String(s) => json!({"stringValue": s}),
        AttributeValue::Int(i) => json!({"intValue": i.to_string()}),
        AttributeValue::Bool(b) => json!({"boolValue": b}),
    }
}

fn json_attributes<'a>(
    attributes: impl IntoIterator<Item = (&'a str, &'a AttributeValue)>,
) -> Value {
    Value::Array(
        attributes
            .into_iter()
            .map(|(k, v)| json!({"key": k, "value": json_value(v)}))
            .collect(),
    )
}

fn json_resource(config: &OtlpConfig) -> Value {
    let pairs = resource_pairs(config);
    json!({"attributes": json_attributes(pairs.iter().map(|(k, v)| (k.as_str(), v)))})
}

fn json_scope() -> Value {
    json!({"name": SCOPE_NAME, "version": SCOPE_VERSION})
}

fn traces_json(config: &OtlpConfig, spans: &[SpanData]) -> Value {
    let spans: Vec<Value> = spans
        .iter()
        .map(|span| {
            let mut s = json!({
                "traceId": hex(&span.context.trace_id),
                "spanId": hex(&span.context.span_id),
                "name": span.name,
                "kind": kind_number(span.kind),
                "startTimeUnixNano": span.start_ns.to_string(),
                "endTimeUnixNano": span.end_ns.to_string(),
                "attributes": json_attributes(span.attributes.iter().map(|(k, v)| (*k, v))),
                "flags": span_flags(span),
            });
            if let Some(parent) = &span.parent_span_id {
                s["parentSpanId"] = hex(parent).into();
            }
            if let Some(state) = &span.context.state {
                s["traceState"] = state.clone().into();
            }
            if let Some(message) = &span.error {
                s["status"] = json!({"code": 2, "message": message});
            }
            s
        })
        .collect();
    json!({"resourceSpans": [{
        "resource": json_resource(config),
        "scopeSpans": [{"scope": json_scope(), "spans": spans}],
    }]})
}

fn metrics_json(config: &OtlpConfig, start_ns: u64, metrics: &Metrics) -> Value {
    let now = now_ns().to_string();
    let start = start_ns.to_string();
    let mut out = Vec::new();
    for kind in [SpanKind::Client, SpanKind::Server] {
        let points: Vec<Value> = metrics
            .operations
            .values()
            .flatten()
            .filter(|(k, _, _)| *k == kind)
            .map(|(_, attributes, h)| {
                json!({
                    "startTimeUnixNano": start,
                    "timeUnixNano": now,
                    "count": h.count.to_string(),
                    "sum": h.sum,
                    "min": h.min,
                    "max": h.max,
                    "bucketCounts": h.buckets.iter().map(u64::to_string).collect::<Vec<_>>(),
                    "explicitBounds": BOUNDS,
                    "attributes": json_attributes(attributes.iter().map(|(k, v)| (*k, v))),
                })
            })
            .collect();
        if !points.is_empty() {
            out.push(json!({
                "name": operation_metric_name(kind),
                "description": "Duration of MCP operations",
                "unit": "s",
                "histogram": {"dataPoints": points, "aggregationTemporality": 2},
            }));
        }
    }
    if !metrics.active.is_empty() {
        let points: Vec<Value> = metrics
            .active
            .iter()
            .map(|(method, count)| {
                json!({
                    "startTimeUnixNano": start,
                    "timeUnixNano": now,
                    "asInt": count.to_string(),
                    "attributes": [{"key": "mcp.method.name", "value": {"stringValue": method}}],
                })
            })
            .collect();
        out.push(json!({
            "name": "mcp.server.active_requests",
            "description": "MCP requests being served",
            "unit": "{request}",
            "sum": {"dataPoints": points, "aggregationTemporality": 2, "isMonotonic": false},
        }));
    }
    json!({"resourceMetrics": [{
        "resource": json_resource(config),
        "scopeMetrics": [{"scope": json_scope(), "metrics": out}],
    }]})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn off_unless_an_exporter_names_otlp() {
        assert!(OtlpConfig::from_vars(vars(&[])).unwrap().is_none());
        assert!(
            OtlpConfig::from_vars(vars(&[("OTEL_TRACES_EXPORTER", "none")]))
                .unwrap()
                .is_none()
        );
        assert!(
            OtlpConfig::from_vars(vars(&[
                ("OTEL_TRACES_EXPORTER", "otlp"),
                ("OTEL_SDK_DISABLED", "true")
            ]))
            .unwrap()
            .is_none()
        );
    }

    #[test]
    fn the_standard_variables_are_read() {
        let config = OtlpConfig::from_vars(vars(&[
            ("OTEL_TRACES_EXPORTER", "console,otlp"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=abc%20def,tenant=7"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=ignored,deployment.environment=prod",
            ),
            ("OTEL_SERVICE_NAME", "weather"),
            ("OTEL_BSP_SCHEDULE_DELAY", "100"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            config.traces_endpoint.as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        assert_eq!(config.metrics_endpoint, None);
        assert_eq!(config.protocol, OtlpProtocol::Json);
        assert_eq!(
            config.headers,
            vec![
                ("x-api-key".into(), "abc def".into()),
                ("tenant".into(), "7".into())
            ]
        );
        assert_eq!(
            config.resource[0],
            ("service.name".into(), "weather".into())
        );
        assert!(
            config
                .resource
                .contains(&("deployment.environment".into(), "prod".into()))
        );
        assert_eq!(config.schedule_delay, Duration::from_millis(100));
    }

    #[test]
    fn unusable_settings_are_named() {
        let error = OtlpConfig::from_vars(vars(&[
            ("OTEL_TRACES_EXPORTER", "otlp"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]))
        .unwrap_err();
        assert!(
            error.to_string().contains("OTEL_EXPORTER_OTLP_PROTOCOL"),
            "{error}"
        );
        let error = OtlpConfig::from_vars(vars(&[
            ("OTEL_METRICS_EXPORTER", "otlp"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "soon"),
        ]))
        .unwrap_err();
        assert!(
            error.to_string().contains("OTEL_METRIC_EXPORT_INTERVAL"),
            "{error}"
        );
    }

    #[test]
    fn histograms_count_into_the_recommended_buckets() {
        let mut h = Histogram::default();
        for v in [0.001, 0.01, 0.011, 400.0] {
            h.record(v);
        }
        assert_eq!(h.buckets[0], 2);
        assert_eq!(h.buckets[1], 1);
        assert_eq!(h.buckets[BOUNDS.len()], 1);
        assert_eq!(h.count, 4);
        assert_eq!(h.min, 0.001);
        assert_eq!(h.max, 400.0);
    }
}
