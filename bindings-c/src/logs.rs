//! Core's log events (`tracing`) for C: without a subscriber they reach
//! nobody in a C program, so a warning such as a failed telemetry export or
//! a refused connection would be lost. ferromcp_set_log_callback() installs
//! one (once per process) that hands each event at or above a level to a C
//! callback.

use std::ffi::{CString, c_char, c_void};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{OnceLock, PoisonError, RwLock};

use ferromcp_core::host::logs::{Handling, event_text, level_rank};
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};
use tracing_subscriber::prelude::*;

use crate::error::{FfiError, ferromcp_status};
use crate::panic::ffi_boundary;

/// How severe a log event is; `FERROMCP_LOG_OFF` passes none.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[allow(non_camel_case_types)]
pub enum ferromcp_log_level {
    FERROMCP_LOG_OFF = 0,
    FERROMCP_LOG_ERROR = 1,
    FERROMCP_LOG_WARN = 2,
    FERROMCP_LOG_INFO = 3,
    FERROMCP_LOG_DEBUG = 4,
    FERROMCP_LOG_TRACE = 5,
}

/// Receives one log event: its level, where it comes from (a Rust module
/// path such as `ferromcp::telemetry::otlp`) and its message with its
/// fields (`OpenTelemetry export failed url=... error=...`). Both strings
/// are borrowed for the call only. Called on the thread that logged, any
/// thread of the process, possibly several at once: it must be
/// thread-safe, quick, and must not call ferromcp functions that block.
pub type ferromcp_log_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        level: ferromcp_log_level,
        target: *const c_char,
        message: *const c_char,
    ),
>;

fn level_of(level: &Level) -> ferromcp_log_level {
    match *level {
        Level::ERROR => ferromcp_log_level::FERROMCP_LOG_ERROR,
        Level::WARN => ferromcp_log_level::FERROMCP_LOG_WARN,
        Level::INFO => ferromcp_log_level::FERROMCP_LOG_INFO,
        Level::DEBUG => ferromcp_log_level::FERROMCP_LOG_DEBUG,
        Level::TRACE => ferromcp_log_level::FERROMCP_LOG_TRACE,
    }
}

/// The most detailed level passed on (0: none).
static MAX: AtomicU8 = AtomicU8::new(0);
type LogFn = unsafe extern "C" fn(*mut c_void, ferromcp_log_level, *const c_char, *const c_char);

/// The callback and its userdata (as an address: ferromcp never reads it,
/// and the header makes it the caller's to share between threads).
static SINK: RwLock<Option<(LogFn, usize)>> = RwLock::new(None);
/// Whether this library's subscriber is the process's (set once).
static INSTALLED: OnceLock<bool> = OnceLock::new();

/// Forwards events to the C callback.
struct ToCallback;

impl<S: Subscriber> Layer<S> for ToCallback {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> tracing::subscriber::Interest {
        // Asked each time (`enabled`): the level can change after a
        // callsite was first seen.
        tracing::subscriber::Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>, _: Context<'_, S>) -> bool {
        level_rank(metadata.level()) <= MAX.load(Ordering::Relaxed)
    }

    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        // A callback that reaches core and logs is not called again inside.
        let Some(_handling) = Handling::enter() else {
            return;
        };
        let Some((callback, userdata)) = *SINK.read().unwrap_or_else(PoisonError::into_inner)
        else {
            return;
        };
        let metadata = event.metadata();
        let target = CString::new(metadata.target().replace('\0', "")).unwrap_or_default();
        let message = CString::new(event_text(event).replace('\0', "\u{FFFD}")).unwrap_or_default();
        // SAFETY: the callback contract in the header; both strings live
        // for the call.
        unsafe {
            callback(
                userdata as *mut c_void,
                level_of(metadata.level()),
                target.as_ptr(),
                message.as_ptr(),
            )
        }
    }
}

/// Sends ferromcp's log events at `level` or more severe to `callback`
/// (replacing any callback set before); `callback` NULL or
/// `FERROMCP_LOG_OFF` stops them. Without it, nothing is logged: a C
/// program hears of a failed telemetry export, a refused connection or a
/// misbehaving peer only through this.
///
/// ```c
/// static void to_stderr(void *userdata, enum ferromcp_log_level level,
///                       const char *target, const char *message) {
///     (void)userdata;
///     fprintf(stderr, "[%d] %s: %s\n", (int)level, target, message);
/// }
/// ferromcp_set_log_callback(to_stderr, NULL, FERROMCP_LOG_WARN);
/// ```
///
/// - `callback`: see ferromcp_log_callback (thread-safe, quick, never
///   blocking on ferromcp).
/// - `userdata`: passed to every call, borrowed until the callback is
///   replaced or removed; a call that started before may still be running
///   with it for a moment after that.
/// - `level`: the most detailed level passed on.
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_STATE when the process already has
/// another `tracing` subscriber (a Rust library that set one), whose logs
/// then stay its own.
///
/// Threads: any thread.
#[unsafe(no_mangle)]
pub extern "C" fn ferromcp_set_log_callback(
    callback: ferromcp_log_callback,
    userdata: *mut c_void,
    level: ferromcp_log_level,
) -> ferromcp_status {
    ffi_boundary(|| {
        let ours = *INSTALLED.get_or_init(|| {
            tracing_subscriber::registry()
                .with(ToCallback)
                .try_init()
                .is_ok()
        });
        if !ours {
            return Err(FfiError::new(
                ferromcp_status::FERROMCP_INVALID_STATE,
                "the process already has a tracing subscriber of its own",
            ));
        }
        let level = if callback.is_some() {
            level
        } else {
            ferromcp_log_level::FERROMCP_LOG_OFF
        };
        *SINK.write().unwrap_or_else(PoisonError::into_inner) =
            callback.map(|c| (c, userdata as usize));
        MAX.store(level as u8, Ordering::Relaxed);
        Ok(())
    })
}
