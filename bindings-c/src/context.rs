//! `ferromcp_context`: core's `RequestContext` for C callbacks (core
//! `server::context`): progress, logging, cancellation, what the client
//! declared, HTTP headers, and blocking asks for input (elicitation,
//! sampling, roots) that serve 2026-07-28 rounds and 2025-11-25 sessions
//! with the same callback code.

use serde_json::Value;
use std::ffi::{c_char, c_void};

use ferromcp_core::host::caller::auth_value;
use ferromcp_core::server::{
    AskStart, HandlerError, InputKind, LoggingLevel, RequestContext, RequestMeta,
};
use tokio_util::sync::CancellationToken;

use crate::args::{check_out, optional_str, parse_json, parse_json_object, required_str};
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::{
    Castable, OwnershipRef, Userdata, ferromcp_userdata_free, give_string, take_callback, try_from,
};
use crate::panic::{ffi_boundary, ffi_boundary_or};
use crate::threads::C_THREADS;

/// The request a callback serves: who asked, how, and the channels back to
/// the client (progress, log, asks for input).
///
/// Opaque. Borrowed from a ferromcp_call with ferromcp_call_context(); valid
/// exactly as long as the call is uncompleted (completing the call frees
/// it). May be used from any thread, by several threads at once.
pub struct ferromcp_context {
    pub(crate) ctx: RequestContext,
    /// Cancelled when the call is completed, so a cancellation callback
    /// never runs for a request that ended because it was answered.
    done: CancellationToken,
}

impl Castable for ferromcp_context {
    type Ownership = OwnershipRef;
}

impl ferromcp_context {
    pub(crate) fn new(ctx: RequestContext) -> ferromcp_context {
        ferromcp_context {
            ctx,
            done: CancellationToken::new(),
        }
    }

    /// The call is being completed.
    pub(crate) fn finish(&self) {
        self.done.cancel();
    }
}

/// What a callback may ask the client for (ferromcp_context_ask()).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ferromcp_input_kind {
    /// `elicitation/create`: ask the user (the answer is an ElicitResult).
    FERROMCP_INPUT_ELICITATION = 0,
    /// `sampling/createMessage`: ask the client's model (a CreateMessageResult).
    FERROMCP_INPUT_SAMPLING = 1,
    /// `roots/list`: the client's roots (a ListRootsResult).
    FERROMCP_INPUT_ROOTS = 2,
}

impl From<ferromcp_input_kind> for InputKind {
    fn from(kind: ferromcp_input_kind) -> InputKind {
        match kind {
            ferromcp_input_kind::FERROMCP_INPUT_ELICITATION => InputKind::Elicitation,
            ferromcp_input_kind::FERROMCP_INPUT_SAMPLING => InputKind::Sampling,
            ferromcp_input_kind::FERROMCP_INPUT_ROOTS => InputKind::Roots,
        }
    }
}

/// Called when the client cancels a request (or goes away) before its
/// call was completed (see ferromcp_context_on_cancel()).
pub type ferromcp_cancel_callback = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

/// A handler error on the way to C: a JSON-RPC error keeps its code and
/// data (so a callback can pass it on with ferromcp_call_fail_jsonrpc()).
fn handler_error(error: HandlerError) -> FfiError {
    match error {
        HandlerError::Protocol(error) => FfiError {
            status: ferromcp_status::FERROMCP_PEER_ERROR,
            message: error.message.clone(),
            code: Some(error.code),
            data_json: error.data.as_ref().map(Value::to_string),
        },
        HandlerError::Tool(message) => FfiError::new(ferromcp_status::FERROMCP_INTERNAL, message),
    }
}

fn input_required() -> FfiError {
    FfiError::new(
        ferromcp_status::FERROMCP_INPUT_REQUIRED,
        "the client has not answered yet: complete the call (any outcome) and return; \
         the callback runs again with the answer",
    )
}

fn cancelled() -> FfiError {
    FfiError::new(
        ferromcp_status::FERROMCP_REQUEST_CANCELLED,
        "the request was cancelled while waiting for the client's answer",
    )
}

impl ferromcp_context {
    /// Asks for every `(key, kind, params)` and blocks until each is
    /// answered. Under 2026-07-28 all unanswered asks land in one
    /// `input_required` round (ended when the callback completes the call).
    fn ask_blocking(
        &self,
        asks: Vec<(Option<String>, InputKind, Value)>,
    ) -> Result<Vec<Value>, FfiError> {
        may_wait("the client")?;
        // Start every ask before waiting for any, so a round records all
        // of them and a live session sends them together.
        let mut started = Vec::with_capacity(asks.len());
        for (key, kind, params) in asks {
            started.push(
                self.ctx
                    .ask_start(key.as_deref(), kind, params)
                    .map_err(handler_error)?,
            );
        }
        if started.iter().any(|s| matches!(s, AskStart::Pending)) {
            return Err(input_required());
        }
        let token = self.ctx.cancellation_token();
        ferromcp_core::runtime::get().block_on(async move {
            let mut answers = Vec::with_capacity(started.len());
            for start in started {
                let answer = match start {
                    AskStart::Answered(answer) => answer,
                    AskStart::Live(future) => tokio::select! {
                        answer = future => answer.map_err(handler_error)?,
                        // The request ended: free the thread.
                        _ = token.cancelled() => return Err(cancelled()),
                    },
                    // Cannot happen: handled above.
                    AskStart::Pending => return Err(input_required()),
                };
                answers.push(answer);
            }
            Ok(answers)
        })
    }

    fn ask_one(
        &self,
        key: Option<&str>,
        kind: InputKind,
        params: Value,
    ) -> Result<Value, FfiError> {
        let mut answers = self.ask_blocking(vec![(key.map(str::to_owned), kind, params)])?;
        answers
            .pop()
            .ok_or_else(|| FfiError::new(ferromcp_status::FERROMCP_INTERNAL, "no answer"))
    }
}

/// Turns this `tools/call` into a task, for a tool registered with
/// FERROMCP_TOOL_TASK_BY_CALLBACK: the client gets the task handle and
/// follows the task with `tasks/get` while the callback goes on; its later
/// asks wait for answers sent with `tasks/update`, and `tasks/cancel`
/// cancels it. Asks made before were multi round-trip, so a callback can
/// gather what it needs first.
///
/// - `context`: borrowed.
/// - `out_started`: receives true once the task runs (at once when it
///   already did), false when the call cannot become a task (the tool was
///   not registered so, or the client did not declare the extension): the
///   call then goes on as a plain request.
///
/// Returns FERROMCP_OK; FERROMCP_INTERNAL when the task could not be stored
/// (the message says why, e.g. the server's task limit; the call goes on as
/// a plain request); FERROMCP_INVALID_STATE on a ferromcp runtime thread (a
/// FERROMCP_TOOL_NONBLOCKING callback); FERROMCP_NULL_ARGUMENT.
///
/// Threads: a thread that may block, while the call is uncompleted.
///
/// # Safety
/// `context` NULL or live; `out_started` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_start_task(
    context: *const ferromcp_context,
    out_started: *mut bool,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let context = unsafe { try_from(context, "context") }?;
        check_out(out_started, "out_started")?;
        may_wait("the task")?;
        let ctx = context.ctx.clone();
        let started = ferromcp_core::runtime::get()
            .block_on(async move { ctx.start_task().await })
            .map_err(handler_error)?;
        // SAFETY: checked writable above.
        unsafe { out_started.write(started) };
        Ok(())
    })
}

/// Refuses to wait for `what` on a ferromcp runtime thread. Host threads
/// enter the runtime (so `Handle::current` works there) but run no task:
/// only code inside a task must not block.
fn may_wait(what: &str) -> Result<(), FfiError> {
    if tokio::task::try_id().is_some() {
        return Err(FfiError::new(
            ferromcp_status::FERROMCP_INVALID_STATE,
            format!(
                "cannot wait for {what} on a ferromcp runtime thread \
                 (a FERROMCP_TOOL_NONBLOCKING callback): call this from a host or own thread"
            ),
        ));
    }
    Ok(())
}

/// Whether the client cancelled the request (or went away), or the request
/// ended: a long-running callback should stop early (and still complete
/// its call).
///
/// Returns the flag; false when `context` is NULL. No status: it cannot fail.
///
/// Threads: any thread.
///
/// # Safety
/// `context` is NULL or a live context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_is_cancelled(context: *const ferromcp_context) -> bool {
    ffi_boundary_or(false, || {
        // SAFETY: forwarded contract.
        unsafe { context.as_ref() }.is_some_and(|c| c.ctx.is_cancelled())
    })
}

/// Registers a function called once if the client cancels the request (or
/// goes away) before the call is completed, e.g. to wake a worker waiting
/// on something else. Not called when the call is completed first.
///
/// - `context`: borrowed.
/// - `callback`: not NULL. Runs on a ferromcp host thread, at most once;
///   it must not complete the call itself unless it owns it.
/// - `userdata`: passed to `callback` and `userdata_free`.
/// - `userdata_free`: NULL, or called exactly once with `userdata` after
///   `callback` ran or once it no longer can (the call was completed), on
///   any thread. On failure it is not called: `userdata` stays the caller's.
///
/// Returns FERROMCP_NULL_ARGUMENT for a NULL `context` or `callback`.
///
/// Threads: any thread.
///
/// # Safety
/// `context` is NULL or a live context.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_on_cancel(
    context: *const ferromcp_context,
    callback: ferromcp_cancel_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let context = unsafe { try_from(context, "context") }?;
        let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
        let hook = CancelHook { callback, userdata };
        let cancel = context.ctx.cancellation_token();
        let done = context.done.clone();
        ferromcp_core::runtime::get().spawn(async move {
            tokio::select! {
                biased;
                _ = done.cancelled() => drop(hook),
                _ = cancel.cancelled() => {
                    if done.is_cancelled() {
                        drop(hook);
                    } else {
                        // C may block: on a host thread, never a runtime worker.
                        C_THREADS.submit(Box::new(move || hook.fire()));
                    }
                }
            }
        });
        Ok(())
    })
}

struct CancelHook {
    callback: unsafe extern "C" fn(*mut c_void),
    userdata: Userdata,
}

impl CancelHook {
    fn fire(self) {
        // SAFETY: the callback contract: once, with its userdata.
        unsafe { (self.callback)(self.userdata.get()) };
        // Dropping the userdata runs the finalizer.
    }
}

/// Sends `notifications/progress`, if the request asked for progress (it
/// carries a progressToken).
///
/// - `context`: borrowed.
/// - `progress`: progress so far; should grow with each report.
/// - `total`: the total, or any value <= 0 (or NaN) when unknown.
/// - `message`: NULL or NUL-terminated UTF-8, copied.
/// - `out_sent`: NULL, or receives whether a notification was sent (not
///   when the request asked for none, or the client is far behind reading).
///
/// Returns FERROMCP_OK (also when nothing was sent), FERROMCP_NULL_ARGUMENT,
/// FERROMCP_INVALID_UTF8.
///
/// Threads: any thread, while the call is uncompleted.
///
/// # Safety
/// `context` is NULL or live; `message` NULL or NUL-terminated; `out_sent`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_progress(
    context: *const ferromcp_context,
    progress: f64,
    total: f64,
    message: *const c_char,
    out_sent: *mut bool,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let context = unsafe { try_from(context, "context") }?;
        let message = unsafe { optional_str(message, "message") }?;
        let total = (total > 0.0).then_some(total);
        let sent = context.ctx.progress(progress, total, message);
        if !out_sent.is_null() {
            // SAFETY: non-NULL and writable per the contract.
            unsafe { out_sent.write(sent) };
        }
        Ok(())
    })
}

/// Sends a `notifications/message` log entry with `message` as its data,
/// if the request's log level admits `level`. A request that asked for no
/// log level gets no log messages.
///
/// - `context`: borrowed.
/// - `level`: "debug", "info", "notice", "warning", "error", "critical",
///   "alert" or "emergency".
/// - `logger`: NULL or the logger name, copied.
/// - `message`: NUL-terminated UTF-8 text, copied.
/// - `out_sent`: NULL, or receives whether the entry was sent.
///
/// Returns FERROMCP_OK (also when nothing was sent), FERROMCP_INVALID_ARGUMENT
/// for an unknown level, FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8.
///
/// Threads: any thread, while the call is uncompleted.
///
/// # Safety
/// `context` is NULL or live; strings NULL or NUL-terminated; `out_sent`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_log(
    context: *const ferromcp_context,
    level: *const c_char,
    logger: *const c_char,
    message: *const c_char,
    out_sent: *mut bool,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let message = unsafe { required_str(message, "message") }?;
        // SAFETY: forwarded contract.
        unsafe { log(context, level, logger, Value::from(message), out_sent) }
    })
}

/// ferromcp_context_log() with any JSON value as the entry's data.
///
/// - `data_json`: NUL-terminated UTF-8 JSON text, copied.
///
/// Returns what ferromcp_context_log() returns, and FERROMCP_INVALID_JSON
/// for unparsable data.
///
/// # Safety
/// As ferromcp_context_log().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_log_json(
    context: *const ferromcp_context,
    level: *const c_char,
    logger: *const c_char,
    data_json: *const c_char,
    out_sent: *mut bool,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let data = parse_json(
            unsafe { required_str(data_json, "data_json") }?,
            "data_json",
        )?;
        // SAFETY: forwarded contract.
        unsafe { log(context, level, logger, data, out_sent) }
    })
}

/// # Safety
/// As ferromcp_context_log().
unsafe fn log(
    context: *const ferromcp_context,
    level: *const c_char,
    logger: *const c_char,
    data: Value,
    out_sent: *mut bool,
) -> Result<(), FfiError> {
    // SAFETY (all): forwarded contract.
    let context = unsafe { try_from(context, "context") }?;
    let level_name = unsafe { required_str(level, "level") }?;
    let logger = unsafe { optional_str(logger, "logger") }?;
    let level = LoggingLevel::parse(level_name).ok_or_else(|| {
        FfiError::new(
            ferromcp_status::FERROMCP_INVALID_ARGUMENT,
            format!("unknown log level {level_name:?}"),
        )
    })?;
    let sent = context.ctx.log(level, data, logger);
    if !out_sent.is_null() {
        // SAFETY: non-NULL and writable per the contract.
        unsafe { out_sent.write(sent) };
    }
    Ok(())
}

/// Writes one of the request's facts as a new C string.
///
/// # Safety
/// `context` NULL or live; `out` NULL or writable.
unsafe fn fact(
    context: *const ferromcp_context,
    out: *mut *mut c_char,
    read: impl FnOnce(&RequestContext) -> Option<String>,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let context = unsafe { try_from(context, "context") }?;
        check_out(out, "out")?;
        let text = read(&context.ctx).ok_or_else(|| {
            FfiError::new(
                ferromcp_status::FERROMCP_NOT_FOUND,
                "the request carries no such value",
            )
        })?;
        give_string(text, out)
    })
}

/// The protocol version of the request ("2026-07-28", "2025-11-25"...).
///
/// - `out_version`: receives a new string; free it with ferromcp_string_free().
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT. Threads: any thread.
///
/// # Safety
/// `context` NULL or live; `out_version` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_protocol_version(
    context: *const ferromcp_context,
    out_version: *mut *mut c_char,
) -> ferromcp_status {
    // SAFETY: forwarded contract.
    unsafe {
        fact(context, out_version, |c| {
            Some(c.meta().protocol_version.clone())
        })
    }
}

/// The client's capabilities, a JSON object (`{}` when it declared none).
///
/// - `out_json`: receives new JSON text; free it with ferromcp_string_free().
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT. Threads: any thread.
///
/// # Safety
/// `context` NULL or live; `out_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_client_capabilities_json(
    context: *const ferromcp_context,
    out_json: *mut *mut c_char,
) -> ferromcp_status {
    // SAFETY: forwarded contract.
    unsafe {
        fact(context, out_json, |c| {
            Some(Value::Object(c.meta().client_capabilities.clone()).to_string())
        })
    }
}

/// The client's identity (clientInfo: name, version...), a JSON object.
///
/// - `out_json`: receives new JSON text; free it with ferromcp_string_free().
///
/// Returns FERROMCP_OK, FERROMCP_NOT_FOUND when the client sent none,
/// FERROMCP_NULL_ARGUMENT. Threads: any thread.
///
/// # Safety
/// `context` NULL or live; `out_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_client_info_json(
    context: *const ferromcp_context,
    out_json: *mut *mut c_char,
) -> ferromcp_status {
    // SAFETY: forwarded contract.
    unsafe {
        fact(context, out_json, |c| {
            c.meta()
                .client_info
                .as_ref()
                .map(|info| info.get().to_owned())
        })
    }
}

/// Who the request's access token belongs to, on a server served with
/// `"auth"` (see ferromcp_server_serve_http_ex()): JSON text
/// `{"subject","clientId","scopes","audience","expiresAt","claims"}`
/// (`claims`: every claim the verifier returned or read).
///
/// ```c
/// char *auth = NULL;
/// if (ferromcp_context_auth_json(ferromcp_call_context(call), &auth) == FERROMCP_OK) {
///     char *subject = NULL;
///     ferromcp_json_get(auth, "/subject", &subject);
///     ...
///     ferromcp_string_free(subject);
///     ferromcp_string_free(auth);
/// }
/// ```
///
/// - `out_json`: receives new JSON text; free it with ferromcp_string_free().
///
/// Returns FERROMCP_OK, FERROMCP_NOT_FOUND when the request was not
/// authenticated (stdio, or HTTP without protection), FERROMCP_NULL_ARGUMENT.
/// Threads: any thread.
///
/// # Safety
/// `context` NULL or live; `out_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_auth_json(
    context: *const ferromcp_context,
    out_json: *mut *mut c_char,
) -> ferromcp_status {
    // SAFETY: forwarded contract.
    unsafe {
        fact(context, out_json, |c| {
            c.auth().map(|a| auth_value(a).to_string())
        })
    }
}

/// One header of the HTTP request that carried the request (the name is
/// case-insensitive; a repeated header's values are joined with ", ").
///
/// - `name`: NUL-terminated header name.
/// - `out_value`: receives a new string; free it with ferromcp_string_free().
///
/// Returns FERROMCP_OK, FERROMCP_NOT_FOUND when there is no such header or
/// no HTTP request (stdio), FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8.
/// Threads: any thread.
///
/// # Safety
/// `context` NULL or live; `name` NULL or NUL-terminated; `out_value` NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_http_header(
    context: *const ferromcp_context,
    name: *const c_char,
    out_value: *mut *mut c_char,
) -> ferromcp_status {
    let name = match ffi_boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { required_str(name, "name") }.map(drop)
    }) {
        ferromcp_status::FERROMCP_OK => {
            // SAFETY: checked above.
            unsafe { std::ffi::CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()
        }
        status => return status,
    };
    // SAFETY: forwarded contract.
    unsafe { fact(context, out_value, |c| http_header(c.meta(), &name)) }
}

/// One header of the HTTP request that carried a request (the name is
/// case-insensitive; a repeated header's values joined with ", "); `None`
/// without one, or over stdio. Also for middleware requests.
pub(crate) fn http_header(meta: &RequestMeta, name: &str) -> Option<String> {
    let headers = meta.http_headers.as_deref()?;
    let values: Vec<String> = headers
        .get_all(name)
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    (!values.is_empty()).then(|| values.join(", "))
}

/// On the 2025-11-25 HTTP wire, ends the request's SSE connection without
/// ending its stream: the client reconnects and receives the rest.
///
/// - `out_closed`: NULL, or receives whether there was such a stream.
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT. Threads: any thread.
///
/// # Safety
/// `context` NULL or live; `out_closed` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_close_sse_stream(
    context: *const ferromcp_context,
    out_closed: *mut bool,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let context = unsafe { try_from(context, "context") }?;
        let closed = context.ctx.close_sse_stream();
        if !out_closed.is_null() {
            // SAFETY: non-NULL and writable per the contract.
            unsafe { out_closed.write(closed) };
        }
        Ok(())
    })
}

/// Asks the client for input and blocks until it answers.
///
/// The same code serves both protocol eras. In a 2025-11-25 session the
/// request goes to the client and this waits for its answer. Under
/// 2026-07-28 the answer is either in the request already (this returns it
/// at once) or not yet: then this returns FERROMCP_INPUT_REQUIRED and the
/// callback must complete its call (any outcome: it is discarded) and
/// return; the server answers `input_required`, and when the client retries
/// with the answer the callback runs again and this call returns it. So a
/// callback must reach its asks in the same order each time, or give keys.
///
/// - `context`: borrowed.
/// - `kind`: what to ask for.
/// - `key`: NULL (the ask's position among this callback's asks is its key)
///   or a name for the answer, unique within the request.
/// - `params_json`: the request's params, a JSON object (for elicitation
///   `{"mode":"form","message":...,"requestedSchema":{...}}`; sampling
///   `{"messages":[...],"maxTokens":N}`; roots `{}`).
/// - `out_answer_json`: receives the client's answer (an ElicitResult,
///   CreateMessageResult or ListRootsResult) as new JSON text; free it with
///   ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_INPUT_REQUIRED (above);
/// FERROMCP_PEER_ERROR when the client answered with an error, or lacks the
/// capability (code -32021; ferromcp_last_error_code() and
/// ferromcp_last_error_data_json() give code and data, ready for
/// ferromcp_call_fail_jsonrpc()); FERROMCP_REQUEST_CANCELLED when the
/// request ended while waiting; FERROMCP_INVALID_STATE on a ferromcp runtime
/// thread (a FERROMCP_TOOL_NONBLOCKING callback); FERROMCP_INVALID_JSON,
/// FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8 for bad arguments.
///
/// Threads: any thread that may block (a callback's own thread, or one the
/// host made), while the call is uncompleted.
///
/// # Safety
/// `context` NULL or live; strings NULL or NUL-terminated; `out_answer_json`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_ask(
    context: *const ferromcp_context,
    kind: ferromcp_input_kind,
    key: *const c_char,
    params_json: *const c_char,
    out_answer_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let context = unsafe { try_from(context, "context") }?;
        let key = unsafe { optional_str(key, "key") }?;
        let params = unsafe { required_str(params_json, "params_json") }?;
        let params = Value::Object(parse_json_object(params, "params_json")?);
        check_out(out_answer_json, "out_answer_json")?;
        let answer = context.ask_one(key, kind.into(), params)?;
        give_string(answer.to_string(), out_answer_json)
    })
}

/// Several asks at once, answered together: under 2026-07-28 every
/// unanswered one goes to the client in the same `input_required` round; in
/// a 2025-11-25 session the requests are sent together.
///
/// - `asks_json`: a JSON array of `{"kind": "elicitation"|"sampling"|"roots",
///   "key": "name" (optional), "params": {...}}`.
/// - `out_answers_json`: receives a JSON array of the answers, in order;
///   free it with ferromcp_string_free().
///
/// Returns as ferromcp_context_ask(), failing as a whole when any ask fails.
///
/// # Safety
/// As ferromcp_context_ask().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_ask_all(
    context: *const ferromcp_context,
    asks_json: *const c_char,
    out_answers_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let context = unsafe { try_from(context, "context") }?;
        let asks = unsafe { required_str(asks_json, "asks_json") }?;
        check_out(out_answers_json, "out_answers_json")?;
        let bad = |why: &str| {
            FfiError::new(
                ferromcp_status::FERROMCP_INVALID_JSON,
                format!("`asks_json` {why}"),
            )
        };
        let Value::Array(items) = parse_json(asks, "asks_json")? else {
            return Err(bad("must be a JSON array"));
        };
        let mut asks = Vec::with_capacity(items.len());
        for item in items {
            let kind = match item.get("kind").and_then(Value::as_str) {
                Some(name) => InputKind::ALL
                    .into_iter()
                    .find(|k| k.capability() == name)
                    .ok_or_else(|| bad("has an unknown kind"))?,
                None => return Err(bad("items need a \"kind\"")),
            };
            let key = item.get("key").and_then(Value::as_str).map(str::to_owned);
            let params = item
                .get("params")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({}));
            asks.push((key, kind, params));
        }
        let answers = context.ask_blocking(asks)?;
        give_string(Value::Array(answers).to_string(), out_answers_json)
    })
}

/// `elicitation/create` in form mode: ferromcp_context_ask() with params
/// `{"mode":"form","message":message,"requestedSchema":requested_schema}`.
///
/// - `requested_schema_json`: a JSON object (the form's flat JSON Schema).
/// - `out_answer_json`: receives the ElicitResult
///   (`{"action":"accept"|"decline"|"cancel","content":{...}}`).
///
/// Returns as ferromcp_context_ask().
///
/// # Safety
/// As ferromcp_context_ask().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_elicit(
    context: *const ferromcp_context,
    key: *const c_char,
    message: *const c_char,
    requested_schema_json: *const c_char,
    out_answer_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let context = unsafe { try_from(context, "context") }?;
        let key = unsafe { optional_str(key, "key") }?;
        let message = unsafe { required_str(message, "message") }?;
        let schema = unsafe { required_str(requested_schema_json, "requested_schema_json") }?;
        let schema = Value::Object(parse_json_object(schema, "requested_schema_json")?);
        check_out(out_answer_json, "out_answer_json")?;
        let params =
            serde_json::json!({"mode": "form", "message": message, "requestedSchema": schema});
        let answer = context.ask_one(key, InputKind::Elicitation, params)?;
        give_string(answer.to_string(), out_answer_json)
    })
}

/// `sampling/createMessage` with one user text message: ferromcp_context_ask()
/// with params `{"messages":[{"role":"user","content":{"type":"text",
/// "text":prompt}}],"maxTokens":max_tokens}`.
///
/// - `out_answer_json`: receives the CreateMessageResult.
///
/// Returns as ferromcp_context_ask().
///
/// # Safety
/// As ferromcp_context_ask().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_sample(
    context: *const ferromcp_context,
    key: *const c_char,
    prompt: *const c_char,
    max_tokens: u32,
    out_answer_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let context = unsafe { try_from(context, "context") }?;
        let key = unsafe { optional_str(key, "key") }?;
        let prompt = unsafe { required_str(prompt, "prompt") }?;
        check_out(out_answer_json, "out_answer_json")?;
        let params = serde_json::json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
            "maxTokens": max_tokens,
        });
        let answer = context.ask_one(key, InputKind::Sampling, params)?;
        give_string(answer.to_string(), out_answer_json)
    })
}

/// `roots/list`: ferromcp_context_ask() for the client's roots.
///
/// - `out_answer_json`: receives the ListRootsResult (`{"roots":[...]}`).
///
/// Returns as ferromcp_context_ask().
///
/// # Safety
/// As ferromcp_context_ask().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_context_list_roots(
    context: *const ferromcp_context,
    key: *const c_char,
    out_answer_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let context = unsafe { try_from(context, "context") }?;
        let key = unsafe { optional_str(key, "key") }?;
        check_out(out_answer_json, "out_answer_json")?;
        let answer = context.ask_one(key, InputKind::Roots, serde_json::json!({}))?;
        give_string(answer.to_string(), out_answer_json)
    })
}

#[cfg(test)]
mod tests {
    use ferromcp_core::server::auth::AuthInfo;
    use serde_json::json;

    use super::auth_value;

    /// ferromcp_context_auth_json()'s text, which C programs parse, is
    /// core's description of a token: pinned here as the C binding wrote
    /// it before it used core's.
    #[test]
    fn auth_json_keeps_its_format() {
        let info = AuthInfo {
            subject: Some("alice".into()),
            client_id: None,
            scopes: vec!["files:read".into()],
            audience: vec!["https://mcp.example".into()],
            expires_at: Some(1_700_000_000),
            claims: json!({"sub": "alice", "n": 1}),
        };
        let before = json!({
            "subject": info.subject,
            "clientId": info.client_id,
            "scopes": info.scopes,
            "audience": info.audience,
            "expiresAt": info.expires_at,
            "claims": info.claims,
        });
        assert_eq!(auth_value(&info).to_string(), before.to_string());
    }
}
