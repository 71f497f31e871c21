//! C tools: a function pointer plus `void *userdata` adapted to core's
//! `ToolHandler` and registered with the server. Running the callback and
//! answering the call is [`crate::host_call`]'s job, for every kind of
//! call; the exported functions that add tools are in `server.rs`.

use serde_json::Value;
use std::ffi::{CString, c_char, c_void};
use std::sync::Arc;

use ferromcp_core::protocol::Tool;
use ferromcp_core::server::{
    HandlerError, HandlerResult, RequestContext, Server, ToolOutput, ToolTaskOptions,
};

use crate::error::FfiError;
use crate::ffi::Userdata;
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

type ToolFn = unsafe extern "C" fn(*mut c_void, *const c_char, usize, *mut ferromcp_call);

/// A C callback registered as a tool, owning its userdata.
struct CallbackTool {
    callback: ToolFn,
    userdata: Userdata,
    /// Registered with FERROMCP_TOOL_NONBLOCKING: the callback promised not
    /// to block, so it runs on the runtime thread serving the request.
    nonblocking: bool,
}

/// Registers a C tool (see ferromcp_server_add_tool_ex()); on failure the
/// caller keeps the userdata.
pub(crate) fn add_tool(
    server: &Server,
    tool: Tool,
    callback: ToolFn,
    userdata: Userdata,
    nonblocking: bool,
    tasks: ToolTaskOptions,
) -> Result<(), FfiError> {
    let registration = Arc::new(CallbackTool {
        callback,
        userdata,
        nonblocking,
    });
    let handler_registration = Arc::clone(&registration);
    let handler = move |context: RequestContext, arguments: Value| {
        Arc::clone(&handler_registration).call(context, arguments)
    };
    server.add_tool_with(tool, tasks, handler).map_err(|error| {
        // Core dropped the handler; ours is now the last reference.
        registration.userdata.release();
        FfiError::from(error)
    })
}

impl CallbackTool {
    /// Runs one invocation: the callback runs on a host thread (or in
    /// place, if non-blocking) while the request awaits the call handle.
    async fn call(self: Arc<Self>, context: RequestContext, arguments: Value) -> HandlerResult {
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
            Ok(text) => unsafe { (self.callback)(self.userdata.get(), text.as_ptr(), len, call.0) },
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
