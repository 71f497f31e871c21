//! The one host-call adapter of the C binding: the `ferromcp_call` handle
//! that answers every kind of call a C callback serves (a tool call, a
//! resource read, a prompt, a completion, a middleware link, a token check,
//! and a client's answers to the server's elicitation, sampling and roots
//! requests), and the functions that answer it.
//!
//! A handle wraps a core [`Responder`] for some output kind `O`
//! (type-erased behind [`Answer`]), so the same exported functions answer
//! every kind: a JSON value, turned into `O` by core's rule for the kind
//! ([`FromHost`]); a tool error; or a JSON-RPC error. The files of each
//! kind (`handler.rs` for tools; `primitives.rs` for resources, templates,
//! prompts and completion; `middleware.rs` for server middleware links;
//! `client_middleware.rs` for client middleware links; `auth.rs` for token
//! checks; `client.rs` for the client's answers) only say which
//! callback runs with which input, through [`run`].

use serde_json::{Value, json};
use std::ffi::{CStr, c_char};

use ferromcp_core::McpError;
use ferromcp_core::server::auth::HostVerdict;
use ferromcp_core::server::{
    FromHost, HandlerError, OutputError, RequestContext, Responder, ResponderReceiver, ToolOutput,
};

use crate::args::{bad, optional_str, parse_json, required_str};
use crate::context::ferromcp_context;
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::{Castable, OwnershipBox, to_boxed_mut_ptr, try_box_from, try_from};
use crate::panic::{ffi_boundary, ffi_boundary_or};
use crate::threads::C_THREADS;

/// One in-progress call of a C callback (a tool call, resource read,
/// prompt, completion, middleware link), handed to the callback. Its
/// request context is ferromcp_call_context().
///
/// Opaque. Owned by the callback from the moment it is called until it
/// passes the handle to exactly one of ferromcp_call_respond(),
/// ferromcp_call_respond_result(), ferromcp_call_fail() or
/// ferromcp_call_fail_jsonrpc(), which consume and free it. The handle may
/// be moved to and completed on any thread, but must not be used from two
/// threads at the same time.
pub struct ferromcp_call {
    answer: Box<dyn Answer>,
    /// The request the call serves, when it serves one.
    pub(crate) context: Option<ferromcp_context>,
    /// What C borrows for as long as the call is not completed (a client
    /// link's request and the rest of its chain): freed with the handle.
    held: Option<Box<dyn std::any::Any + Send>>,
    /// Fires when the request the call serves is cancelled, before its
    /// future is dropped (a server link's: the chain's cancellation).
    cancellation: Option<tokio_util::sync::CancellationToken>,
}

impl Castable for ferromcp_call {
    type Ownership = OwnershipBox;
}

/// An output kind a C callback can answer: core's rule, plus what a whole
/// result object given to ferromcp_call_respond_result() means for it.
pub(crate) trait CallOutput: FromHost {
    /// A complete result object; by default the same rule as any value.
    fn from_whole_result(value: Value) -> Result<Self, OutputError> {
        Self::from_host(value)
    }
}

impl CallOutput for ToolOutput {
    fn from_whole_result(value: Value) -> Result<Self, OutputError> {
        ToolOutput::from_host_result(value)
    }
}

impl CallOutput for ferromcp_core::server::ResourceOutput {}
impl CallOutput for ferromcp_core::server::PromptOutput {}
impl CallOutput for ferromcp_core::server::CompletionOutput {}
impl CallOutput for ferromcp_core::protocol::ElicitResult {}
impl CallOutput for ferromcp_core::protocol::CreateMessageResult {}
impl CallOutput for ferromcp_core::protocol::ListRootsResult {}
impl CallOutput for HostVerdict {}

/// A [`Responder`] of some output kind, with the kind erased so one C type
/// answers all of them.
trait Answer: Send {
    /// The kind's name ([`FromHost::KIND`]), for messages.
    fn kind(&self) -> &'static str;
    /// Answers with a host value (`whole`: a complete result object).
    /// A value of the wrong shape still answers the call, with the
    /// conversion error, and is returned as `Err`. `Ok(false)`: nobody waits.
    fn value(self: Box<Self>, value: Value, whole: bool) -> Result<bool, OutputError>;
    /// Answers with an error; `false` when nobody waits.
    fn error(self: Box<Self>, error: HandlerError) -> bool;
    /// Whether nobody waits any more.
    fn is_abandoned(&self) -> bool;
}

impl<O: CallOutput> Answer for Responder<O> {
    fn kind(&self) -> &'static str {
        O::KIND
    }

    fn value(self: Box<Self>, value: Value, whole: bool) -> Result<bool, OutputError> {
        let converted = if whole {
            O::from_whole_result(value)
        } else {
            O::from_host(value)
        };
        match converted {
            Ok(output) => Ok(self.respond(Ok(output))),
            Err(error) => {
                self.respond(Err(HandlerError::from(error.clone())));
                Err(error)
            }
        }
    }

    fn error(self: Box<Self>, error: HandlerError) -> bool {
        self.respond(Err(error))
    }

    fn is_abandoned(&self) -> bool {
        Responder::is_abandoned(self)
    }
}

impl ferromcp_call {
    /// A fresh handle answering an `O`, and the future core awaits.
    pub(crate) fn new<O: CallOutput>(
        context: Option<RequestContext>,
    ) -> (ferromcp_call, ResponderReceiver<O>) {
        let (responder, receiver) = Responder::<O>::new();
        let call = ferromcp_call {
            answer: Box::new(responder),
            context: context.map(ferromcp_context::new),
            held: None,
            cancellation: None,
        };
        (call, receiver)
    }

    /// Reports the call cancelled once `token` fires: a link's call has no
    /// context, and its request's future is dropped only after the link's
    /// wait in `ferromcp_next_run` ended on the cancellation.
    pub(crate) fn cancelled_with(&mut self, token: tokio_util::sync::CancellationToken) {
        self.cancellation = Some(token);
    }

    /// Whether the request was cancelled through [`Self::cancelled_with`]'s
    /// token: whatever the call answers now is discarded, even while the
    /// request's future still waits.
    fn cut_off(&self) -> bool {
        self.cancellation
            .as_ref()
            .is_some_and(tokio_util::sync::CancellationToken::is_cancelled)
    }

    /// Keeps `held` alive until the call is completed (or its handle is
    /// never given back: then it leaks with it).
    pub(crate) fn hold(&mut self, held: Box<dyn std::any::Any + Send>) {
        self.held = Some(held);
    }

    fn discarded() -> FfiError {
        FfiError::new(
            ferromcp_status::FERROMCP_REQUEST_CANCELLED,
            "the request was cancelled or its client went away; the result was discarded",
        )
    }

    /// The kind of output the call answers ([`FromHost::KIND`]).
    pub(crate) fn kind(&self) -> &'static str {
        self.answer.kind()
    }

    /// Delivers an error outcome; reports a discarded result as a status so
    /// the host can tell its work was wasted.
    pub(crate) fn finish_error(self, error: HandlerError) -> Result<(), FfiError> {
        let cut = self.cut_off();
        if self.answer.error(error) && !cut {
            Ok(())
        } else {
            Err(Self::discarded())
        }
    }

    /// Answers with a value converted by core's rule for the call's kind.
    pub(crate) fn finish_value(self, value: Value, whole: bool) -> Result<(), FfiError> {
        let cut = self.cut_off();
        match self.answer.value(value, whole) {
            Ok(true) if !cut => Ok(()),
            Ok(_) => Err(Self::discarded()),
            Err(error) => Err(FfiError::new(
                ferromcp_status::FERROMCP_INVALID_JSON,
                error.to_string(),
            )),
        }
    }

    /// Answers with an error for the handler's mistake and reports `error`
    /// (the caller's mistake) as the status, unless the result went nowhere.
    fn finish_with_error(self, message: String, error: FfiError) -> Result<(), FfiError> {
        self.finish_error(HandlerError::Tool(message))?;
        Err(error)
    }
}

/// Takes back ownership of a handle given to a callback.
///
/// # Safety
/// `call` is NULL or a handle from a callback that was not completed yet.
pub(crate) unsafe fn take_call(call: *mut ferromcp_call) -> Result<Box<ferromcp_call>, FfiError> {
    // SAFETY: per the contract, NULL or a live handle given to C by `run`.
    let call = unsafe { try_box_from(call) }.ok_or_else(|| FfiError::null("call"))?;
    // Before the answer goes out: a cancellation callback must not run for
    // a request that ends because it was answered.
    if let Some(context) = &call.context {
        context.finish();
    }
    Ok(call)
}

/// A raw call handle crossing to a host thread. The handle itself is
/// `Send` (a boxed `Responder` and a `RequestContext`); only the pointer is
/// not.
pub(crate) struct CallPtr(pub(crate) *mut ferromcp_call);

// SAFETY: the pointee is Send and the pointer is used by one thread at a time.
unsafe impl Send for CallPtr {}

/// Runs one call of a C callback and waits for its answer: `invoke` gets
/// the fresh handle (ownership passes to C) and runs on a host thread, or
/// in place when the callback promised not to block.
pub(crate) async fn run<O: CallOutput>(
    context: Option<RequestContext>,
    nonblocking: bool,
    invoke: impl FnOnce(CallPtr) + Send + 'static,
) -> Result<O, HandlerError> {
    let (call, receiver) = ferromcp_call::new::<O>(context);
    let call = CallPtr(to_boxed_mut_ptr(call));
    if nonblocking {
        // Promised not to block: calling in place saves the thread
        // switches a trip to a host thread costs.
        invoke(call);
    } else {
        // C callbacks may block, so never on a runtime worker. The outcome
        // arrives through the responder.
        C_THREADS.submit(Box::new(move || invoke(call)));
    }
    receiver.wait().await
}

/// Completes a call with a JSON value, which ferromcp turns into the
/// result for the call's kind. For a tool: a string becomes one text
/// content block; null gives empty content; with an output schema an object
/// becomes structuredContent (and other values are wrapped as
/// {"result": value}); otherwise the value's JSON text becomes text
/// content. For a resource: a string (the text), one contents item
/// ({"uri","text"|"blob","mimeType"}), a list of them or {"contents":[...]}.
/// For a prompt: a string (one user message), a PromptMessage, a list of
/// them or a GetPromptResult. For completion: a list of strings or
/// {"values":[...],"total":N,"hasMore":b}. For a middleware link: the
/// request's result object (what ferromcp_next_run() or, in a client's
/// link, ferromcp_client_next_run() gave, or the link's own).
///
/// - `call`: a handle received by a callback and not completed yet.
///   Consumed and freed by this function whatever it returns (unless it is
///   NULL): do not use it afterwards.
/// - `result_json`: NUL-terminated UTF-8 JSON text, borrowed for the call.
///
/// Returns FERROMCP_OK when the result was delivered. If `result_json` is
/// NULL, not UTF-8, not valid JSON, or a value of the wrong shape for the
/// call's kind, the call is still completed, as a handler error (for a tool,
/// isError: true) saying what was wrong, and FERROMCP_NULL_ARGUMENT,
/// FERROMCP_INVALID_UTF8 or FERROMCP_INVALID_JSON is returned.
/// FERROMCP_REQUEST_CANCELLED means the result was discarded because nobody
/// waits for it any more.
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
            Ok(value) => call.finish_value(value, false),
            Err(error) => {
                let message = format!(
                    "the {} handler returned invalid JSON: {}",
                    call.answer.kind(),
                    error.message
                );
                call.finish_with_error(message, error)
            }
        }
    })
}

/// Completes a call with a complete result object, checked against the
/// schema and sent as is; ferromcp only adds what every result carries
/// (resultType, _meta). For a tool, a CallToolResult (for example
/// `{"content":[...],"structuredContent":{...},"isError":false}`; a missing
/// content list is added).
///
/// - `call`: as for ferromcp_call_respond(): consumed whatever happens.
/// - `call_tool_result_json`: NUL-terminated UTF-8 JSON text of an object,
///   borrowed for the call.
///
/// Returns as ferromcp_call_respond() does; JSON that is not such an
/// object is FERROMCP_INVALID_JSON and completes the call with a handler
/// error.
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
            .and_then(|text| parse_json(text, name));
        match parsed {
            Ok(value) => call.finish_value(value, true),
            Err(error) => {
                // Worded as before for tools, so the bytes a client sees
                // do not change.
                let kind = call.answer.kind();
                let what = if kind == ToolOutput::KIND {
                    "CallToolResult"
                } else {
                    "result"
                };
                let message = format!(
                    "the {kind} handler returned an invalid {what}: {}",
                    error.message
                );
                call.finish_with_error(message, error)
            }
        }
    })
}

/// Completes a call as failed. For a tool the client receives a
/// CallToolResult with isError: true and `message` as its text, so the
/// model can react; for other kinds a JSON-RPC internal error with
/// `message`. The server keeps serving. (A client middleware link whose
/// ferromcp_client_next_run() failed with another status than
/// FERROMCP_PEER_ERROR passes that failure on instead: see
/// ferromcp_client_middleware_callback.)
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
            Ok(Some(text)) => call.finish_error(HandlerError::tool(text)),
            Ok(None) => {
                // Worded as before for tools ("the tool handler ..."), so
                // the bytes a client sees do not change.
                let text = format!(
                    "the {} handler failed without a message",
                    call.answer.kind()
                );
                call.finish_with_error(text, FfiError::null("message"))
            }
            Err(error) => {
                // SAFETY: non-NULL (optional_str only fails on a real string).
                let lossy = unsafe { CStr::from_ptr(message) }.to_string_lossy();
                call.finish_with_error(lossy.into_owned(), error)
            }
        }
    })
}

/// Completes a call with a JSON-RPC error: the client receives
/// `{"code": code, "message": message, "data": data}` instead of a result
/// (for a tool: instead of a CallToolResult), for example
/// `-32602` (invalid params) with data naming the bad field.
///
/// - `call`: as for ferromcp_call_respond(): consumed whatever happens.
/// - `code`: the JSON-RPC error code. Codes from -32020 to -32099 are
///   reserved for the MCP specification; use them only with their meaning.
/// - `message`: NUL-terminated UTF-8 text, borrowed for the call. NULL
///   sends a generic message and returns FERROMCP_NULL_ARGUMENT; invalid
///   UTF-8 is replaced and FERROMCP_INVALID_UTF8 returned.
/// - `data_json`: NULL for no data, or NUL-terminated UTF-8 JSON text,
///   borrowed for the call. If it is not valid JSON the error is sent
///   without data and FERROMCP_INVALID_UTF8 or FERROMCP_INVALID_JSON is
///   returned.
///
/// Whatever the arguments, the call is completed with the JSON-RPC error.
/// FERROMCP_REQUEST_CANCELLED means nobody waits for it any more.
///
/// Threads: may be called from any thread, inside or after the callback.
///
/// # Safety
/// `call` is NULL or an uncompleted handle; `message` and `data_json` are
/// NULL or NUL-terminated strings.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_call_fail_jsonrpc(
    call: *mut ferromcp_call,
    code: i32,
    message: *const c_char,
    data_json: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let call = unsafe { take_call(call) }?;
        let mut problem = None;
        // SAFETY: forwarded contract.
        let text = match unsafe { optional_str(message, "message") } {
            Ok(Some(text)) => text.to_owned(),
            Ok(None) => {
                problem = Some(FfiError::null("message"));
                "the handler failed without a message".to_owned()
            }
            Err(error) => {
                problem = Some(error);
                // SAFETY: non-NULL (optional_str only fails on a real string).
                unsafe { CStr::from_ptr(message) }
                    .to_string_lossy()
                    .into_owned()
            }
        };
        let mut error = McpError::new(code, text);
        // SAFETY: forwarded contract.
        match unsafe { optional_str(data_json, "data_json") }
            .and_then(|d| d.map(|d| parse_json(d, "data_json")).transpose())
        {
            Ok(data) => error.data = data,
            Err(e) => problem = problem.or(Some(e)),
        }
        call.finish_error(HandlerError::Protocol(error))?;
        problem.map_or(Ok(()), Err)
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
        match unsafe { try_from(call, "call") } {
            Ok(call) => {
                call.context.as_ref().is_some_and(|c| c.ctx.is_cancelled())
                    || call.cut_off()
                    || call.answer.is_abandoned()
            }
            Err(_) => false,
        }
    })
}

/// The context of the request a call serves.
///
/// - `call`: an uncompleted handle, borrowed.
///
/// Returns the context, owned by the call: valid until the call is
/// completed, never freed by the caller. NULL when `call` is NULL.
///
/// Threads: any thread, while the call is uncompleted.
///
/// # Safety
/// `call` is NULL or an uncompleted handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_call_context(
    call: *const ferromcp_call,
) -> *const ferromcp_context {
    ffi_boundary_or(std::ptr::null(), || {
        // SAFETY: forwarded contract.
        match unsafe { call.as_ref() } {
            Some(call) => call
                .context
                .as_ref()
                .map_or(std::ptr::null(), |c| c as *const ferromcp_context),
            None => std::ptr::null(),
        }
    })
}

/// Completes a token check: the token is valid and these are its claims.
///
/// - `call`: the handle a ferromcp_token_verifier received; consumed.
/// - `claims_json`: a JSON object of JWT claim names (`sub`, `scope` as a
///   space-separated string or `scp`, `aud`, `exp`, `client_id` or `azp`,
///   and any others), borrowed. `aud` must name the server's resource and
///   `exp`, when present, must be in the future: ferromcp checks both.
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_JSON (the check then fails with
/// HTTP 503) for text that is not a JSON object; FERROMCP_INVALID_ARGUMENT
/// when `call` is not a token check (it is completed as a failure);
/// FERROMCP_REQUEST_CANCELLED when the client went away.
///
/// # Safety
/// `call` NULL or an uncompleted handle; `claims_json` NULL or
/// NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_call_accept_token(
    call: *mut ferromcp_call,
    claims_json: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let call = unsafe { token_call(call) }?;
        // SAFETY: forwarded contract.
        let claims = unsafe { required_str(claims_json, "claims_json") }
            .and_then(|text| parse_json(text, "claims_json"));
        match claims {
            Ok(Value::Object(claims)) => call.finish_value(json!({ "claims": claims }), false),
            Ok(_) => {
                let _ = call.finish_value(json!({ "claims": null }), false);
                Err(bad("claims_json", "must be a JSON object"))
            }
            Err(error) => {
                let _ = call.finish_value(json!({ "claims": null }), false);
                Err(error)
            }
        }
    })
}

/// Completes a token check: the token is not accepted (HTTP 401
/// `invalid_token`; the client logs in again).
///
/// - `call`: the handle a ferromcp_token_verifier received; consumed.
/// - `reason`: why, for the `error_description`; may be NULL.
///
/// Returns FERROMCP_OK, FERROMCP_INVALID_ARGUMENT when `call` is not a
/// token check, FERROMCP_REQUEST_CANCELLED when the client went away.
///
/// # Safety
/// `call` NULL or an uncompleted handle; `reason` NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_call_reject_token(
    call: *mut ferromcp_call,
    reason: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let call = unsafe { token_call(call) }?;
        // SAFETY: forwarded contract.
        let reason = unsafe { optional_str(reason, "reason") }
            .ok()
            .flatten()
            .unwrap_or("invalid token");
        call.finish_value(json!({ "invalid": reason }), false)
    })
}

/// The handle of a token check, or an error (completing any other call).
///
/// # Safety
/// As [`take_call`].
unsafe fn token_call(call: *mut ferromcp_call) -> Result<Box<ferromcp_call>, FfiError> {
    // SAFETY: forwarded contract.
    let call = unsafe { take_call(call) }?;
    if call.kind() != HostVerdict::KIND {
        let kind = call.kind();
        let _ = call.finish_error(HandlerError::tool(
            "a token answer was given to a call that is not a token check",
        ));
        return Err(FfiError::new(
            ferromcp_status::FERROMCP_INVALID_ARGUMENT,
            format!("the call is a {kind} call, not a token check"),
        ));
    }
    Ok(call)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferromcp_core::server::PromptOutput;

    /// The same handle and functions answer a second kind (a prompt), by
    /// core's rule for that kind.
    #[tokio::test]
    async fn a_prompt_call_is_answered_through_the_same_handle() {
        let (call, receiver) = ferromcp_call::new::<PromptOutput>(None);
        let call = to_boxed_mut_ptr(call);
        // SAFETY: a fresh, owned handle; the text is NUL-terminated.
        let status = unsafe { ferromcp_call_respond(call, c"\"hello\"".as_ptr()) };
        assert_eq!(status, ferromcp_status::FERROMCP_OK);
        assert_eq!(
            receiver.wait().await,
            Ok(PromptOutput::Text("hello".into()))
        );

        let (call, receiver) = ferromcp_call::new::<PromptOutput>(None);
        // SAFETY: as above.
        let status = unsafe { ferromcp_call_respond(to_boxed_mut_ptr(call), c"42".as_ptr()) };
        assert_eq!(status, ferromcp_status::FERROMCP_INVALID_JSON);
        let Err(HandlerError::Tool(message)) = receiver.wait().await else {
            panic!("a wrong shape must answer with an error");
        };
        assert!(message.starts_with("invalid prompt result"), "{message}");

        let (call, receiver) = ferromcp_call::new::<PromptOutput>(None);
        let message = json!({"role": "user", "content": {"type": "text", "text": "x"}});
        let text = std::ffi::CString::new(message.to_string()).expect("no NUL");
        // SAFETY: as above.
        let status = unsafe { ferromcp_call_respond_result(to_boxed_mut_ptr(call), text.as_ptr()) };
        assert_eq!(status, ferromcp_status::FERROMCP_OK);
        assert_eq!(
            receiver.wait().await,
            Ok(PromptOutput::Messages(vec![message]))
        );
    }

    #[tokio::test]
    async fn a_jsonrpc_error_answers_any_kind() {
        let (call, receiver) = ferromcp_call::new::<PromptOutput>(None);
        // SAFETY: a fresh, owned handle; NUL-terminated texts.
        let status = unsafe {
            ferromcp_call_fail_jsonrpc(
                to_boxed_mut_ptr(call),
                -32602,
                c"bad".as_ptr(),
                c"{\"field\":\"x\"}".as_ptr(),
            )
        };
        assert_eq!(status, ferromcp_status::FERROMCP_OK);
        assert_eq!(
            receiver.wait().await,
            Err(HandlerError::Protocol(
                McpError::new(-32602, "bad").with_data(json!({"field": "x"}))
            ))
        );

        let (call, receiver) = ferromcp_call::new::<ToolOutput>(None);
        // SAFETY: as above; NULL message and bad data are reported, not fatal.
        let status = unsafe {
            ferromcp_call_fail_jsonrpc(
                to_boxed_mut_ptr(call),
                -32000,
                std::ptr::null(),
                c"{".as_ptr(),
            )
        };
        assert_eq!(status, ferromcp_status::FERROMCP_NULL_ARGUMENT);
        assert!(matches!(
            receiver.wait().await,
            Err(HandlerError::Protocol(McpError {
                code: -32000,
                data: None,
                ..
            }))
        ));
    }
}
