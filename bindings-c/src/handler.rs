//! C tools: a function pointer plus `void *userdata` adapted to core's
//! `ToolHandler`. Running the callback and answering the call is
//! [`crate::host_call`]'s job, for every kind of call.

use serde_json::Value;
use std::ffi::{CString, c_char, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ferromcp_core::server::{HandlerError, HandlerResult, RequestContext, ToolOutput};

use crate::host_call::{self, CallPtr, ferromcp_call, take_call};

/// A tool implementation written in C.
///
/// - `userdata`: the pointer given to ferromcp_server_add_tool(), passed back
///   unchanged.
/// - `arguments_json`, `arguments_len`: the tool's arguments, a JSON object
///   already validated against the tool's input schema, as compact UTF-8
///   JSON text of `arguments_len` bytes followed by a NUL. Owned by ferromcp
///   and valid only until the callback returns: copy what you keep.
/// - `call`: the handle for this invocation. Ownership passes to the
///   callback, which must complete it exactly once, with
///   ferromcp_call_respond(), ferromcp_call_respond_result(),
///   ferromcp_call_fail() or ferromcp_call_fail_jsonrpc(), either before
///   returning or later from any thread.
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
    /// place, if non-blocking) while the request awaits the call handle.
    pub(crate) async fn call(
        self: Arc<Self>,
        context: RequestContext,
        arguments: Value,
    ) -> HandlerResult {
        // Display of a Value is compact JSON; serde_json escapes control
        // characters, so the text has no interior NUL.
        let arguments = arguments.to_string();
        let nonblocking = self.nonblocking;
        host_call::run::<ToolOutput>(Some(context), nonblocking, move |call| {
            self.invoke(arguments, call)
        })
        .await
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
                    let _ = call.finish_error(HandlerError::tool(
                        "the tool arguments contain a NUL character",
                    ));
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
