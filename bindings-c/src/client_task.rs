//! `ferromcp_task`: core's [`ToolTask`] for C, the handle on a `tools/call`
//! the server runs as a task (the tasks extension, SEP-2663): its state,
//! answers to its questions, cancellation, and its result with a status
//! callback. ferromcp_client_call_tool() follows tasks by itself; a handle
//! is for callers that show progress, answer from their own UI or resume a
//! task later by id.

use std::ffi::{CString, c_char, c_void};
use std::sync::Arc;
use std::time::Duration;

use ferromcp_core::client::{CallOptions, CallResult, ToolTask};
use serde_json::Value;

use crate::args::{check_out, optional_object, parse_json_object, required_str};
use crate::client::{call_json, ferromcp_cancel_handle, ferromcp_client};
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::{Castable, OwnershipBox, free_box, set_boxed_mut_ptr, try_from};
use crate::panic::ffi_boundary;
use crate::threads::block;

/// A task started by ferromcp_client_start_tool_task() (or resumed by
/// ferromcp_client_tool_task()).
///
/// Opaque. Freed by ferromcp_task_free(); freeing it does not cancel the
/// task (ferromcp_task_cancel() does). Its functions may be called from
/// several threads at once.
pub struct ferromcp_task {
    task: ToolTask,
    /// `task.id()` for C, borrowed by ferromcp_task_id().
    id: Option<CString>,
}

impl Castable for ferromcp_task {
    type Ownership = OwnershipBox;
}

fn handle(task: ToolTask) -> Result<ferromcp_task, FfiError> {
    let id = task
        .id()
        .map(|id| {
            CString::new(id).map_err(|_| {
                FfiError::new(
                    ferromcp_status::FERROMCP_PROTOCOL_ERROR,
                    "a task id with a NUL character",
                )
            })
        })
        .transpose()?;
    Ok(ferromcp_task { task, id })
}

/// Called by ferromcp_task_result() each time the followed task's status
/// or status message changes, on the thread that called it, before it
/// returns.
///
/// - `userdata`: the pointer given to ferromcp_task_result().
/// - `status`: `"working"`, `"input_required"`, `"completed"`, `"failed"`
///   or `"cancelled"`, borrowed for the call.
/// - `state_json`: the task as `tasks/get` answers it (`statusMessage`,
///   `inputRequests`...), borrowed for the call.
///
/// It must not call ferromcp_task_result() on the same task.
pub type ferromcp_task_status_callback = Option<
    unsafe extern "C" fn(userdata: *mut c_void, status: *const c_char, state_json: *const c_char),
>;

/// Calls a tool and hands back a handle on the task the server makes of
/// it, instead of following it as ferromcp_client_call_tool() does. A
/// server may answer at once instead: then ferromcp_task_id() is NULL and
/// ferromcp_task_result() gives the result.
///
/// - `client`: a connected client.
/// - `name`: the tool's name, borrowed.
/// - `arguments_json`: NULL (`{}`) or a JSON object, borrowed.
/// - `timeout_ms`: the timeout of this request; 0 uses the client's.
/// - `cancel`: NULL, or a handle another thread may fire to abandon the
///   request.
/// - `out_task`: receives the handle; free it with ferromcp_task_free().
///   Written only on FERROMCP_OK.
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_JSON for bad `arguments_json`;
/// FERROMCP_REQUEST_CANCELLED; otherwise as ferromcp_client_discover().
///
/// Threads: any thread that may block.
///
/// ```c
/// ferromcp_task *task = NULL;
/// if (ferromcp_client_start_tool_task(client, "render", "{\"pages\":2}", 0, NULL, &task) == FERROMCP_OK) {
///     printf("task %s\n", ferromcp_task_id(task) ? ferromcp_task_id(task) : "(answered at once)");
///     char *result = NULL;
///     ferromcp_task_result(task, 0, NULL, NULL, NULL, &result);
///     ferromcp_string_free(result);
///     ferromcp_task_free(task);
/// }
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_start_tool_task(
    client: *const ferromcp_client,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u64,
    cancel: *const ferromcp_cancel_handle,
    out_task: *mut *mut ferromcp_task,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        let name = unsafe { required_str(name, "name") }?.to_owned();
        let arguments =
            Value::Object(unsafe { optional_object(arguments_json, "arguments_json") }?);
        let cancel = unsafe { cancel.as_ref() }.map(|c| c.token.clone());
        check_out(out_task, "out_task")?;
        let options = CallOptions {
            timeout: (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms)),
            cancel,
            ..CallOptions::default()
        };
        let client = client.client.clone();
        let task = block(async move { client.start_tool_task(&name, arguments, &options).await })?;
        // SAFETY: checked non-NULL; writable per the contract.
        unsafe { set_boxed_mut_ptr(out_task, handle(task)?) };
        Ok(())
    })
}

/// A handle on a task started earlier (by this client or another run of
/// the program: task ids are meant to be kept). Sends nothing.
///
/// - `client`: a connected client.
/// - `task_id`: the id ferromcp_task_id() gave, borrowed.
/// - `out_task`: receives the handle; free it with ferromcp_task_free().
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT; FERROMCP_INVALID_UTF8.
///
/// Threads: any thread.
///
/// ```c
/// ferromcp_task *again = NULL;
/// ferromcp_client_tool_task(client, saved_id, &again);
/// char *state = NULL;
/// ferromcp_task_refresh(again, &state);
/// ferromcp_string_free(state);
/// ferromcp_task_free(again);
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_tool_task(
    client: *const ferromcp_client,
    task_id: *const c_char,
    out_task: *mut *mut ferromcp_task,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        let task_id = unsafe { required_str(task_id, "task_id") }?;
        check_out(out_task, "out_task")?;
        let task = handle(client.client.tool_task(task_id))?;
        // SAFETY: checked non-NULL; writable per the contract.
        unsafe { set_boxed_mut_ptr(out_task, task) };
        Ok(())
    })
}

/// The task's id, or NULL when the server answered the call at once (no
/// task). Borrowed: valid until ferromcp_task_free().
///
/// Threads: any thread.
///
/// ```c
/// const char *id = ferromcp_task_id(task);
/// if (id != NULL) save_for_later(id);
/// ```
///
/// # Safety
/// `task` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_task_id(task: *const ferromcp_task) -> *const c_char {
    // SAFETY: forwarded contract.
    match unsafe { task.as_ref() } {
        Some(task) => task.id.as_ref().map_or(std::ptr::null(), |id| id.as_ptr()),
        None => std::ptr::null(),
    }
}

/// Asks the server for the task's state now (`tasks/get`): a JSON object
/// with `taskId`, `status`, and by status `inputRequests` (answer them with
/// ferromcp_task_respond()), `result` or `error`. Without a task, the
/// result the server answered with.
///
/// - `task`: a live handle.
/// - `out_state_json`: receives the state; free it with
///   ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_PEER_ERROR (e.g. an unknown or expired
/// task); otherwise as ferromcp_client_discover().
///
/// Threads: any thread that may block.
///
/// ```c
/// char *state = NULL, *status = NULL;
/// ferromcp_task_refresh(task, &state);
/// ferromcp_json_get(state, "/status", &status);
/// ferromcp_string_free(status);
/// ferromcp_string_free(state);
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_task_refresh(
    task: *const ferromcp_task,
    out_state_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let task = unsafe { try_from(task, "task") }?.task.clone();
        call_json(out_state_json, async move { task.refresh().await })
    })
}

/// Answers some of the task's `inputRequests` by key (`tasks/update`).
/// Questions answered here are not answered again by the client's input
/// callbacks when ferromcp_task_result() follows the task. (The client
/// must declare the capabilities the questions need: an input callback,
/// or `"capabilities"` in its options JSON.)
///
/// - `task`: a live handle.
/// - `responses_json`: a JSON object of answers by request key, e.g.
///   `{"confirm":{"action":"accept","content":{"ok":true}}}`, borrowed.
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_JSON; FERROMCP_PROTOCOL_ERROR
/// when the call was answered without a task; otherwise as
/// ferromcp_client_discover().
///
/// Threads: any thread that may block.
///
/// ```c
/// ferromcp_task_respond(task, "{\"confirm\":{\"action\":\"accept\",\"content\":{\"ok\":true}}}");
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_task_respond(
    task: *const ferromcp_task,
    responses_json: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let task = unsafe { try_from(task, "task") }?.task.clone();
        let text = unsafe { required_str(responses_json, "responses_json") }?;
        let responses = parse_json_object(text, "responses_json")?;
        block(async move { task.respond(responses).await })
    })
}

/// Asks the server to cancel the task (`tasks/cancel`); the next
/// ferromcp_task_refresh() shows whether it did. Nothing is sent without a
/// task.
///
/// - `task`: a live handle.
///
/// Returns FERROMCP_OK; otherwise as ferromcp_client_discover().
///
/// Threads: any thread that may block.
///
/// ```c
/// ferromcp_task_cancel(task);
/// ```
///
/// # Safety
/// `task` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_task_cancel(task: *const ferromcp_task) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let task = unsafe { try_from(task, "task") }?.task.clone();
        block(async move { task.cancel().await })
    })
}

/// Follows the task to its end and gives the tool's result (the
/// CallToolResult as JSON text), answering the task's questions with the
/// client's input callbacks, as ferromcp_client_call_tool() does.
///
/// - `task`: a live handle.
/// - `timeout_ms`: the timeout of each poll; 0 uses the client's. The task
///   itself may run far longer.
/// - `on_status`: NULL, or called each time the task's status or status
///   message changes (see ferromcp_task_status_callback), first with the
///   state seen last; never after this returns.
/// - `userdata`: passed to `on_status`, borrowed for the call.
/// - `cancel`: NULL, or a handle another thread may fire: this returns
///   FERROMCP_REQUEST_CANCELLED and the task is cancelled on the server.
/// - `out_result_json`: receives the result; free it with
///   ferromcp_string_free(). Written only on FERROMCP_OK.
///
/// Returns FERROMCP_OK (a tool's own failure is a result with
/// `"isError":true`); FERROMCP_PEER_ERROR for a failed task (its JSON-RPC
/// error through ferromcp_last_error_code()); FERROMCP_PROTOCOL_ERROR for a
/// task the server cancelled; FERROMCP_REQUEST_CANCELLED; otherwise as
/// ferromcp_client_discover().
///
/// Threads: any thread that may block; `on_status` runs on it.
///
/// ```c
/// static void shown(void *ud, const char *status, const char *state) {
///     (void)ud; (void)state;
///     fprintf(stderr, "task: %s\n", status);
/// }
/// char *result = NULL;
/// if (ferromcp_task_result(task, 0, shown, NULL, NULL, &result) == FERROMCP_OK) {
///     puts(result);
///     ferromcp_string_free(result);
/// }
/// ```
///
/// # Safety
/// Pointers NULL or valid as described; `on_status` callable with
/// `userdata` on this thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_task_result(
    task: *const ferromcp_task,
    timeout_ms: u64,
    on_status: ferromcp_task_status_callback,
    userdata: *mut c_void,
    cancel: *const ferromcp_cancel_handle,
    out_result_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let task = unsafe { try_from(task, "task") }?.task.clone();
        let cancel = unsafe { cancel.as_ref() }.map(|c| c.token.clone());
        check_out(out_result_json, "out_result_json")?;
        let mut options = CallOptions {
            timeout: (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms)),
            cancel,
            ..CallOptions::default()
        };
        if let Some(callback) = on_status {
            let target = StatusTarget { callback, userdata };
            options.on_task_state = Some(Arc::new(move |state: &Value| target.show(state)));
        }
        call_json(out_result_json, async move {
            task.result_with(&options).await.map(CallResult::CallTool)
        })
    })
}

/// The C status callback of one ferromcp_task_result(). `block` polls the
/// call on the caller's thread, so the callback runs there, and never
/// after the call returned (the future is gone by then).
struct StatusTarget {
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char),
    userdata: *mut c_void,
}

// SAFETY: only ever called on the thread that called ferromcp_task_result()
// (see above); the bound is for the options' `Send + Sync` callback type.
unsafe impl Send for StatusTarget {}
unsafe impl Sync for StatusTarget {}

impl StatusTarget {
    fn show(&self, state: &Value) {
        let status = state["status"].as_str().unwrap_or_default();
        let (Ok(status), Ok(json)) = (CString::new(status), CString::new(state.to_string())) else {
            return;
        };
        // SAFETY: the callback contract; both strings outlive the call.
        unsafe { (self.callback)(self.userdata, status.as_ptr(), json.as_ptr()) }
    }
}

/// Frees a task handle. The task goes on on the server (cancel it first
/// with ferromcp_task_cancel() if it should not).
///
/// - `task`: from ferromcp_client_start_tool_task() or
///   ferromcp_client_tool_task(), or NULL. No call may still be using it.
///
/// Threads: any thread.
///
/// # Safety
/// `task` NULL or live and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_task_free(task: *mut ferromcp_task) {
    // SAFETY: NULL or allocated by this file's constructors; freed once
    // per the contract.
    unsafe { free_box(task) }
}
