//! Core's log events (`tracing`) for Node: without a subscriber they reach
//! nobody in a Node process, so a failed OpenTelemetry export, a refused
//! connection or a misbehaving peer would go unnoticed. [`logs_set`]
//! installs one (once per process, `try_init`) whose layer formats each
//! event at or above the level and hands it to a JS function,
//! `fn(level, target, message)`, through a threadsafe function.
//!
//! The thread emitting an event never waits for JS: the call is
//! non-blocking on a bounded queue ([`CAPACITY`]); an event that finds it
//! full is dropped and counted, and the count is reported with the next
//! event that gets through. The threadsafe function is weak: it never keeps
//! the event loop alive. An event emitted while this layer is handling one
//! on the same thread is dropped the same way.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ferromcp::host::logs::{Handling, event_text, level_rank};
use napi::Status;
use napi::bindgen_prelude::{FnArgs, Function, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;

/// Events waiting for the JS thread, at most; past this many, events are
/// dropped (and counted) until it catches up.
const CAPACITY: usize = 1024;

type Args = FnArgs<(String, String, String)>;
type Sink = ThreadsafeFunction<Args, Unknown<'static>, Args, Status, false, true, CAPACITY>;

/// The JS function, while one is set.
static SINK: Mutex<Option<Arc<Sink>>> = Mutex::new(None);
/// The most detailed level passed on (0: none, 1: error ... 5: trace).
static MAX: AtomicU8 = AtomicU8::new(0);
/// Events dropped since the last one that reached JS.
static DROPPED: AtomicU64 = AtomicU64::new(0);
/// Whether this addon's subscriber is the process's (set once).
static INSTALLED: OnceLock<bool> = OnceLock::new();

fn name(level: &Level) -> &'static str {
    match *level {
        Level::ERROR => "error",
        Level::WARN => "warn",
        Level::INFO => "info",
        Level::DEBUG => "debug",
        Level::TRACE => "trace",
    }
}

/// Hands events to the JS function.
struct ToJs;

impl<S: Subscriber> Layer<S> for ToJs {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        // Asked each time (`enabled`): the level can change after a
        // callsite was first seen.
        tracing::subscriber::Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>, _: Context<'_, S>) -> bool {
        level_rank(metadata.level()) <= MAX.load(Ordering::Relaxed)
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        let Some(_handling) = Handling::enter() else {
            DROPPED.fetch_add(1, Ordering::Relaxed);
            return;
        };
        let Some(sink) = SINK.lock().unwrap_or_else(PoisonError::into_inner).clone() else {
            return;
        };
        let metadata = event.metadata();
        let dropped = DROPPED.swap(0, Ordering::Relaxed);
        if dropped > 0 {
            let note = (
                "warn".to_owned(),
                "ferromcp_node::logs".to_owned(),
                format!("{dropped} log events dropped: the logger did not keep up"),
            );
            if sink.call(note.into(), ThreadsafeFunctionCallMode::NonBlocking) != Status::Ok {
                DROPPED.fetch_add(dropped, Ordering::Relaxed);
            }
        }
        let args = (
            name(metadata.level()).to_owned(),
            metadata.target().to_owned(),
            event_text(event),
        );
        if sink.call(args.into(), ThreadsafeFunctionCallMode::NonBlocking) != Status::Ok {
            DROPPED.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Sends core's log events at `level` (1 error, 2 warn, 3 info, 4 debug,
/// 5 trace) or more severe to `sink(level, target, message)` from now on,
/// replacing the function set before; `null` (or level 0) stops them.
/// Returns false when the process already has another `tracing` subscriber
/// (one a Rust library in the process installed), whose logs stay its own.
///
/// @internal Used by the `ferromcp` package itself (`setLogger`).
#[cfg_attr(test, allow(dead_code))]
#[napi(
    ts_args_type = "sink: ((level: string, target: string, message: string) => void) | null, level: number"
)]
pub fn logs_set(
    sink: Option<Function<'_, Args, Unknown<'static>>>,
    level: u32,
) -> napi::Result<bool> {
    let ours =
        *INSTALLED.get_or_init(|| tracing_subscriber::registry().with(ToJs).try_init().is_ok());
    let sink = match sink {
        Some(sink) => Some(Arc::new(
            sink.build_threadsafe_function()
                .max_queue_size::<CAPACITY>()
                .weak::<true>()
                .build()?,
        )),
        None => None,
    };
    let level = if sink.is_some() {
        level.min(5) as u8
    } else {
        0
    };
    let old = std::mem::replace(
        &mut *SINK.lock().unwrap_or_else(PoisonError::into_inner),
        sink,
    );
    MAX.store(level, Ordering::Relaxed);
    drop(old);
    Ok(ours)
}
