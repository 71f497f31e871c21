//! Core's `tracing` events in Python's `logging`.
//!
//! Core reports what goes wrong outside any request (an OpenTelemetry
//! export that failed, a connection lost while being set up, a Redis bus
//! that is unreachable) as `tracing` events, which reach nobody in a
//! Python process unless a subscriber is installed. `ferromcp._logs`
//! installs this one when the package is imported: its layer formats each
//! event at or above the level (the `ferromcp` logger's effective level
//! then, or `RUST_LOG`) into a record for the logger `ferromcp.<target>`
//! (`ferromcp::telemetry::otlp` -> `ferromcp.telemetry.otlp`) and queues
//! it; a Python thread (`ferromcp-logs`) takes the records with
//! [`logs_next`] and logs them.
//!
//! The thread emitting an event never waits for the GIL, nor for anything
//! but this module's own queue lock, held for a push: events come from any
//! thread, some of them holding core locks, some of them holding the GIL.
//! The queue is bounded ([`CAPACITY`]); an event that finds it full is
//! dropped and counted, and the count is logged with the next batch. An
//! event emitted while this layer is already handling one on the same
//! thread (formatting a field that logs, say) is dropped the same way.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};

use ferromcp::host::logs::{Handling, event_text};
use pyo3::prelude::*;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::filter::{EnvFilter, LevelFilter};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

use crate::sync::lock;

/// Records waiting for the Python thread; past this many, events are
/// dropped (and counted) until it catches up.
const CAPACITY: usize = 1024;

/// What [`logs_next`] hands to Python: the records as `(logger, level,
/// message)`, and how many events were dropped since the last call.
type Batch = (Vec<(String, u8, String)>, u64);

/// One event, ready for `logging.getLogger(logger).log(level, message)`.
struct Record {
    logger: String,
    level: u8,
    message: String,
}

struct Queue {
    records: VecDeque<Record>,
    /// Set at interpreter exit ([`logs_close`]): later events are dropped
    /// and [`logs_next`] no longer waits.
    closed: bool,
}

static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    records: VecDeque::new(),
    closed: false,
});
/// Signalled when a record is queued or the queue is closed.
static QUEUED: Condvar = Condvar::new();
/// Events dropped since the Python thread last took a batch.
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// `logging`'s number for a `tracing` level (`TRACE` is below `DEBUG`,
/// as the `5` some libraries name `TRACE`).
fn python_level(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 40,
        Level::WARN => 30,
        Level::INFO => 20,
        Level::DEBUG => 10,
        Level::TRACE => 5,
    }
}

/// The `tracing` level filter passing what a logger at `level` (a
/// `logging` number) would log.
fn level_filter(level: i64) -> LevelFilter {
    match level {
        ..=5 => LevelFilter::TRACE,
        6..=10 => LevelFilter::DEBUG,
        11..=20 => LevelFilter::INFO,
        21..=30 => LevelFilter::WARN,
        31..=40 => LevelFilter::ERROR,
        _ => LevelFilter::OFF,
    }
}

/// The logger of a `tracing` target: `ferromcp.` and the target's path
/// with dots, the `ferromcp` crate's own name left out
/// (`ferromcp::transport::http::listener` -> `ferromcp.transport.http.listener`)
/// and the `ferromcp_` of the other crates' (`ferromcp_cli::proxy` ->
/// `ferromcp.cli.proxy`); other libraries keep theirs (`rustls::conn`
/// -> `ferromcp.rustls.conn`).
fn logger_name(target: &str) -> String {
    let mut segments = target.split("::").filter(|s| !s.is_empty()).peekable();
    let mut name = String::from("ferromcp");
    match segments.peek() {
        Some(&"ferromcp") => {
            segments.next();
        }
        Some(first) if first.starts_with("ferromcp_") => {
            let rest = &first["ferromcp_".len()..];
            name.push('.');
            name.push_str(rest);
            segments.next();
        }
        _ => {}
    }
    for segment in segments {
        name.push('.');
        name.push_str(segment);
    }
    name
}

/// The layer queuing events for `logging`.
struct ToLogging;

impl<S: Subscriber> Layer<S> for ToLogging {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let Some(_handling) = Handling::enter() else {
            DROPPED.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let metadata = event.metadata();
        let record = Record {
            logger: logger_name(metadata.target()),
            level: python_level(metadata.level()),
            message: event_text(event),
        };
        push(record);
    }
}

fn push(record: Record) {
    let mut queue = lock(&QUEUE);
    if queue.closed {
        return;
    }
    if queue.records.len() >= CAPACITY {
        drop(queue);
        DROPPED.fetch_add(1, Ordering::Relaxed);
        return;
    }
    queue.records.push_back(record);
    drop(queue);
    QUEUED.notify_one();
}

/// Installs the subscriber forwarding core's events at `level` (a
/// `logging` level number) and above, or at what `RUST_LOG` says when it
/// is set, unless the process has a global `tracing` subscriber already.
/// Returns whether it was installed.
///
/// >>> _native.logs_install(30)  # the package installed it at import
/// False
#[pyfunction]
pub(crate) fn logs_install(level: i64) -> bool {
    let from_env = std::env::var_os("RUST_LOG")
        .filter(|value| !value.is_empty())
        .and_then(|_| EnvFilter::try_from_default_env().ok());
    let by_level = from_env.is_none().then(|| level_filter(level));
    tracing_subscriber::registry()
        .with(from_env)
        .with(by_level)
        .with(ToLogging)
        .try_init()
        .is_ok()
}

/// The records queued so far as `(logger, level, message)`, and how many
/// events were dropped since the last call. With `block`, waits (the GIL
/// released) until there is a record; `None` once the queue is closed and
/// empty.
///
/// >>> records, dropped = _native.logs_next(False)
/// >>> isinstance(records, list), dropped >= 0
/// (True, True)
#[pyfunction]
pub(crate) fn logs_next(py: Python<'_>, block: bool) -> Option<Batch> {
    let taken = py.detach(|| {
        let mut queue = lock(&QUEUE);
        while block && queue.records.is_empty() && !queue.closed {
            queue = QUEUED
                .wait(queue)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        if queue.records.is_empty() && queue.closed {
            return None;
        }
        Some(std::mem::take(&mut queue.records))
    })?;
    let dropped = DROPPED.swap(0, Ordering::Relaxed);
    let records = taken
        .into_iter()
        .map(|r| (r.logger, r.level, r.message))
        .collect();
    Some((records, dropped))
}

/// Closes the queue at interpreter exit: events from then on are dropped,
/// and [`logs_next`] returns what is left, then `None`, without waiting.
#[pyfunction]
pub(crate) fn logs_close() {
    lock(&QUEUE).closed = true;
    QUEUED.notify_all();
}

/// Private, for tests: emits a `tracing` event of `level` (`"error"`,
/// `"warn"`, `"info"`, `"debug"`, `"trace"`) with the target
/// `ferromcp::python`, as core's own events are emitted.
///
/// >>> _native._logs_emit("debug", "not forwarded at the default level")
#[pyfunction]
pub(crate) fn _logs_emit(level: &str, message: &str) -> PyResult<()> {
    match level {
        "error" => tracing::error!(target: "ferromcp::python", "{message}"),
        "warn" => tracing::warn!(target: "ferromcp::python", extra = 1, "{message}"),
        "info" => tracing::info!(target: "ferromcp::python", "{message}"),
        "debug" => tracing::debug!(target: "ferromcp::python", "{message}"),
        "trace" => tracing::trace!(target: "ferromcp::python", "{message}"),
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "unknown level {other:?}"
            )));
        }
    }
    Ok(())
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(logs_install, m)?)?;
    m.add_function(wrap_pyfunction!(logs_next, m)?)?;
    m.add_function(wrap_pyfunction!(logs_close, m)?)?;
    m.add_function(wrap_pyfunction!(_logs_emit, m)?)?;
    Ok(())
}
