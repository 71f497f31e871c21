//! The handler boundary for C: a function pointer plus `void *userdata`
//! adapted to core's `ToolHandler`, and the `ferromcp_call` completion handle
//! (a boxed core `Completion`) that C completes once, from any thread.

use serde_json::Value;
use std::ffi::{CString, c_char, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

use ferromcp_core::host_threads::HostThreads;
use ferromcp_core::server::{HandlerError, HandlerResult, RequestContext, Responder, ToolOutput};

use crate::args::{optional_str, parse_json, parse_json_object, required_ref, required_str};
use crate::error::{FfiError, ferromcp_status};
use crate::panic::{ffi_boundary, ffi_boundary_or};

/// A tool implementation written in C.
///
/// - `userdata`: the pointer given to ferromcp_server_add_tool(), passed back
///   unchanged.
/// - `arguments_json`, `arguments_len`: the tool's arguments, a JSON object
///   already validated against the tool's input schema, as compact UTF-8
///   JSON text of `arguments_len` bytes followed by a NUL. Owned by ferromcp
///   and valid only until the callback returns: copy what you keep.
/// - `call`: the completion handle for this invocation. Ownership passes to
///   the callback, which must complete it exactly once, with
///   ferromcp_call_respond(), ferromcp_call_respond_result() or
///   ferromcp_call_fail(), either before returning or later from any thread.
///   A handle that is never completed is leaked and its request never answered.
///
/// Threads: called on a ferromcp host thread (a pool that grows while
/// callbacks block, up to 512 threads), never on a thread the caller
/// created and never on an async runtime worker, so it may block.
/// Several calls (of the same or other tools) may run at the same time on
/// different threads, so state reached through `userdata` must be
/// thread-safe. A callback must not call ferromcp_server_serve_stdio() or
/// ferromcp_server_serve_http() (they return FERROMCP_INVALID_STATE there).
pub type ferromcp_tool_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        arguments_json: *const c_char,
        arguments_len: usize,
        call: *mut ferromcp_call,
    ),
>;

/// Releases a tool's userdata. Called exactly once, with the tool's
/// `userdata`, when ferromcp drops the tool: when a later tool with the same
/// name replaces it, or when the server is freed and no request that uses
/// it is still running. It may run on any thread, including after
/// ferromcp_server_free() returned; it must not block for long and must not
/// call back into ferromcp.
pub type ferromcp_userdata_free = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

/// One in-progress tool invocation, handed to a ferromcp_tool_callback.
///
/// Opaque. Owned by the callback from the moment it is called until it
/// passes the handle to exactly one of ferromcp_call_respond(),
/// ferromcp_call_respond_result() or ferromcp_call_fail(), which consume and
/// free it. The handle may be moved to and completed on any thread, but
/// must not be used from two threads at the same time.
pub struct ferromcp_call {
    completion: Responder,
    context: RequestContext,
}

impl ferromcp_call {
    /// Delivers the outcome; reports a discarded result as a status so the
    /// host can tell its work was wasted.
    fn finish(self, result: HandlerResult) -> Result<(), FfiError> {
        if self.completion.respond(result) {
            Ok(())
        } else {
            Err(FfiError::new(
                ferromcp_status::FERROMCP_REQUEST_CANCELLED,
                "the request was cancelled or its client went away; the result was discarded",
            ))
        }
    }

    /// Completes with a tool error and reports `error` (the caller's
    /// mistake) as the status, unless the result went nowhere at all.
    fn finish_with_error(self, tool_message: String, error: FfiError) -> Result<(), FfiError> {
        self.finish(Err(HandlerError::Tool(tool_message)))?;
        Err(error)
    }
}

/// Takes back ownership of a handle given to a callback.
///
/// # Safety
/// `call` is NULL or a handle from a callback that was not completed yet.
unsafe fn take_call(call: *mut ferromcp_call) -> Result<Box<ferromcp_call>, FfiError> {
    if call.is_null() {
        return Err(FfiError::null("call"));
    }
    // SAFETY: per the contract, a live handle allocated by `CallbackTool::start`.
    Ok(unsafe { Box::from_raw(call) })
}

/// How many callbacks may block at once: tokio's default for its blocking
/// pool, which served them before. C callbacks may wait on anything (a
/// socket, a lock another callback holds), so the bound is generous; the
/// pool only grows that far if that many callbacks are blocked at once.
const MAX_C_THREADS: usize = 512;

/// The threads blocking callbacks run on: core's pool, which drains its
/// queue in batches instead of waking a thread per call, and grows only
/// while callbacks block.
static C_THREADS: LazyLock<HostThreads> = LazyLock::new(|| {
    HostThreads::new("ferromcp-c", MAX_C_THREADS, |drain| {
        drain();
        true
    })
});

/// A raw call handle crossing to a host thread. The handle itself is
/// `Send` (a `Completion` and a `RequestContext`); only the pointer is not.
struct CallPtr(*mut ferromcp_call);

// SAFETY: the pointee is Send and the pointer is used by one thread at a time.
unsafe impl Send for CallPtr {}

/// A C callback registered as a tool, owning its userdata.
pub(crate) struct CallbackTool {
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut ferromcp_call),
    userdata: *mut c_void,
    finalizer: ferromcp_userdata_free,
    /// Registered with FERROMCP_TOOL_NONBLOCKING: the callback promised not
    /// to block, so it runs on the runtime thread serving the request.
    nonblocking: bool,
    /// Cleared when registration fails: the caller then still owns the
    /// userdata and must not see the finalizer run.
    owns_userdata: AtomicBool,
}

// SAFETY: the header requires callbacks, userdata and finalizers to be
// usable from any thread; ferromcp itself never dereferences `userdata`.
unsafe impl Send for CallbackTool {}
// SAFETY: as above; concurrent invocations are part of the documented contract.
unsafe impl Sync for CallbackTool {}

impl CallbackTool {
    pub(crate) fn new(
        callback: unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut ferromcp_call),
        userdata: *mut c_void,
        finalizer: ferromcp_userdata_free,
        nonblocking: bool,
    ) -> CallbackTool {
        CallbackTool {
            callback,
            userdata,
            finalizer,
            nonblocking,
            owns_userdata: AtomicBool::new(true),
        }
    }

    /// Gives the userdata back to the caller (the finalizer will not run).
    pub(crate) fn release_userdata(&self) {
        self.owns_userdata.store(false, Ordering::Release);
    }

    /// Runs one invocation: the callback runs on a host thread (or in
    /// place, if non-blocking) while the request awaits the completion
    /// handle.
    pub(crate) async fn call(
        self: Arc<Self>,
        context: RequestContext,
        arguments: Value,
    ) -> HandlerResult {
        let (completion, receiver) = Responder::new();
        let call = CallPtr(Box::into_raw(Box::new(ferromcp_call {
            completion,
            context,
        })));
        // Display of a Value is compact JSON; serde_json escapes control
        // characters, so the text has no interior NUL.
        let arguments = arguments.to_string();
        if self.nonblocking {
            // Promised not to block: calling in place saves the thread
            // switches a trip to a host thread costs.
            self.invoke(arguments, call);
        } else {
            // C callbacks may block, so never on a runtime worker. The
            // outcome arrives through the completion handle.
            C_THREADS.submit(Box::new(move || self.invoke(arguments, call)));
        }
        receiver.wait().await
    }

    fn invoke(&self, arguments: String, call: CallPtr) {
        let len = arguments.len();
        match CString::new(arguments) {
            // SAFETY: the callback contract in the header; `arguments`
            // outlives the call, and `call.0` is a fresh, owned handle.
            Ok(text) => unsafe { (self.callback)(self.userdata, text.as_ptr(), len, call.0) },
            Err(_) => {
                // Cannot happen (see `call`), but never hand C a truncated
                // document: fail the request instead.
                // SAFETY: the handle was never given to C.
                if let Ok(call) = unsafe { take_call(call.0) } {
                    let _ = call.finish(Err(HandlerError::tool(
                        "the tool arguments contain a NUL character",
                    )));
                }
            }
        }
    }
}

impl Drop for CallbackTool {
    fn drop(&mut self) {
        if let Some(finalizer) = self.finalizer
            && self.owns_userdata.load(Ordering::Acquire)
        {
            // SAFETY: the finalizer contract: called once, with the
            // userdata it was registered with. Drop runs once.
            unsafe { finalizer(self.userdata) }
        }
    }
}

/// Completes a call with a JSON value, which ferromcp turns into the
/// CallToolResult: a string becomes one text content block; null gives empty
/// content; with an output schema an object becomes structuredContent (and
/// other values are wrapped as {"result": value}); otherwise the value's JSON
/// text becomes text content.
///
/// - `call`: a handle received by a ferromcp_tool_callback and not completed
///   yet. Consumed and freed by this function whatever it returns (unless it
///   is NULL): do not use it afterwards.
/// - `result_json`: NUL-terminated UTF-8 JSON text, borrowed for the call.
///
/// Returns FERROMCP_OK when the result was delivered. If `result_json` is NULL,
/// not UTF-8 or not valid JSON, the call is still completed, as a tool error
/// (isError: true) saying the handler returned invalid JSON, and
/// FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8 or FERROMCP_INVALID_JSON is
/// returned. FERROMCP_REQUEST_CANCELLED means the result was discarded because
/// nobody waits for it any more.
///
/// Threads: may be called from any thread, inside or after the callback.
///
/// # Safety
/// `call` is NULL or an uncompleted handle; `result_json` is NULL or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_call_respond(
    call: *mut ferromcp_call,
    result_json: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let call = unsafe { take_call(call) }?;
        // SAFETY: forwarded contract.
        let parsed = unsafe { required_str(result_json, "result_json") }
            .and_then(|text| parse_json(text, "result_json"));
        match parsed {
            Ok(value) => call.finish(Ok(ToolOutput::Value(value))),
            Err(error) => {
                let message = format!("the tool handler returned invalid JSON: {}", error.message);
                call.finish_with_error(message, error)
            }
        }
    })
}

/// Completes a call with a complete CallToolResult object (for example
/// `{"content":[...],"structuredContent":{...},"isError":false}`), sent as
/// is; ferromcp only adds what every result carries (resultType, _meta).
///
/// - `call`: as for ferromcp_call_respond(): consumed whatever happens.
/// - `call_tool_result_json`: NUL-terminated UTF-8 JSON text of an object,
///   borrowed for the call.
///
/// Returns as ferromcp_call_respond() does; JSON that is not an object is
/// FERROMCP_INVALID_JSON and completes the call with a tool error.
///
/// Threads: may be called from any thread, inside or after the callback.
///
/// # Safety
/// `call` is NULL or an uncompleted handle; `call_tool_result_json` is NULL
/// or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_call_respond_result(
    call: *mut ferromcp_call,
    call_tool_result_json: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let call = unsafe { take_call(call) }?;
        let name = "call_tool_result_json";
        // SAFETY: forwarded contract.
        let parsed = unsafe { required_str(call_tool_result_json, name) }
            .and_then(|text| parse_json_object(text, name));
        match parsed {
            Ok(map) => call.finish(Ok(ToolOutput::Result(map))),
            Err(error) => {
                let message = format!(
                    "the tool handler returned an invalid CallToolResult: {}",
                    error.message
                );
                call.finish_with_error(message, error)
            }
        }
    })
}

/// Completes a call as failed: the client receives a CallToolResult with
/// isError: true and `message` as its text, so the model can react. The
/// server keeps serving.
///
/// - `call`: as for ferromcp_call_respond(): consumed whatever happens.
/// - `message`: NUL-terminated UTF-8 text, borrowed for the call. If it is
///   NULL a generic message is sent and FERROMCP_NULL_ARGUMENT returned; if it
///   is not UTF-8 the invalid bytes are replaced and FERROMCP_INVALID_UTF8
///   returned. Either way the call is completed.
///
/// Threads: may be called from any thread, inside or after the callback.
///
/// # Safety
/// `call` is NULL or an uncompleted handle; `message` is NULL or a
/// NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_call_fail(
    call: *mut ferromcp_call,
    message: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let call = unsafe { take_call(call) }?;
        // SAFETY: forwarded contract.
        match unsafe { optional_str(message, "message") } {
            Ok(Some(text)) => call.finish(Err(HandlerError::tool(text))),
            Ok(None) => call.finish_with_error(
                "the tool handler failed without a message".to_owned(),
                FfiError::null("message"),
            ),
            Err(error) => {
                // SAFETY: non-NULL (optional_str only fails on a real string).
                let lossy = unsafe { std::ffi::CStr::from_ptr(message) }.to_string_lossy();
                call.finish_with_error(lossy.into_owned(), error)
            }
        }
    })
}

/// Whether the client cancelled the request (or went away), so the result
/// will be discarded: long-running callbacks should check this and stop
/// early. The call must still be completed (any outcome will do).
///
/// - `call`: an uncompleted handle, borrowed. NULL returns false.
///
/// Threads: may be called from any thread while the handle is uncompleted.
///
/// # Safety
/// `call` is NULL or an uncompleted handle not being completed concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_call_is_cancelled(call: *const ferromcp_call) -> bool {
    ffi_boundary_or(false, || {
        // SAFETY: forwarded contract.
        match unsafe { required_ref(call, "call") } {
            Ok(call) => call.context.is_cancelled() || call.completion.is_abandoned(),
            Err(_) => false,
        }
    })
}
