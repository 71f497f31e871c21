//! OpenTelemetry for C: core sends spans and metrics when the standard
//! `OTEL_*` variables ask for it (see core's `telemetry` module); a C
//! program sends what is buffered before it exits, and reads a request's
//! trace context to give its own spans their parent.

use std::ffi::c_char;
use std::time::Duration;

use crate::args::check_out;
use crate::context::ferromcp_context;
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::{give_string, try_from};
use crate::panic::ffi_boundary;

/// Sends the spans and metrics ferromcp holds to the OpenTelemetry
/// collector, waiting at most `timeout_ms`: what a program does before it
/// exits (a stdio server does it by itself when its input ends). Tracing is
/// on when `OTEL_TRACES_EXPORTER=otlp` (or `OTEL_METRICS_EXPORTER=otlp`) is
/// set when the first server or client is created; see the README's
/// "OpenTelemetry" section for the other variables.
///
/// ```c
/// ferromcp_telemetry_flush(5000);
/// return 0;
/// ```
///
/// Returns FERROMCP_OK when everything was sent (or tracing is off);
/// FERROMCP_TIMEOUT when the collector did not take it all in time.
///
/// Threads: any thread that may block (not a ferromcp callback's thread
/// while it holds a call: the flush does not need it, but it waits).
#[unsafe(no_mangle)]
pub extern "C" fn ferromcp_telemetry_flush(timeout_ms: u64) -> ferromcp_status {
    ffi_boundary(|| {
        if ferromcp_core::telemetry::flush(Duration::from_millis(timeout_ms)) {
            Ok(())
        } else {
            Err(FfiError::new(
                ferromcp_status::FERROMCP_TIMEOUT,
                "the telemetry was not all sent in time",
            ))
        }
    })
}

/// The W3C `traceparent` of the span the request is served under
/// (`00-<trace id>-<span id>-<flags>`): with tracing on, the request's
/// server span; with it off, what the client sent in `_meta`. Give it to
/// your tracing library as the parent of the spans your callback starts;
/// pass it in a client call's `params._meta` to make that call its child.
///
/// ```c
/// char *parent = NULL;
/// if (ferromcp_context_traceparent(ferromcp_call_context(call), &parent) == FERROMCP_OK) {
///     start_my_span("lookup", parent);
///     ferromcp_string_free(parent);
/// }
/// ```
///
/// - `context`: the request's context, borrowed.
/// - `out_traceparent`: receives a new string; free it with
///   ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_NOT_FOUND when the request has no trace
/// context (tracing off and none sent); FERROMCP_NULL_ARGUMENT.
///
/// Threads: any thread, while the context is lent.
///
/// # Safety
/// `context` NULL or live; `out_traceparent` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_traceparent(
    context: *const ferromcp_context,
    out_traceparent: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let context = unsafe { try_from(context, "context") }?;
        check_out(out_traceparent, "out_traceparent")?;
        let trace = context.ctx.meta().trace.as_ref().ok_or_else(|| {
            FfiError::new(
                ferromcp_status::FERROMCP_NOT_FOUND,
                "the request has no trace context",
            )
        })?;
        give_string(trace.traceparent(), out_traceparent)
    })
}
