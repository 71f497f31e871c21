//! Middleware links written in C (core `server::middleware`): a C callback
//! adapted to core's `Middleware`, and the two handles it gets besides its
//! `ferromcp_call`, with their functions: `ferromcp_middleware_request_*`
//! (what is asked, by whom) and ferromcp_next_run() (the rest of the
//! chain). Core's ready-made links are added by name here too. The
//! exported functions that register links, ferromcp_server_add_middleware()
//! and ferromcp_server_add_builtin_middleware(), are in `server.rs`.
//!
//! A link runs like a tool callback: on a host thread (it may block, and
//! ferromcp_next_run() does), answering through a `ferromcp_call` whose
//! output is the request's result object.

use serde_json::{Map, Value};
use std::ffi::{CString, c_char, c_void};
use std::num::NonZeroUsize;
use std::sync::{Arc, OnceLock};

use ferromcp_core::host::caller::caller_value;
use ferromcp_core::server::middleware::builtin::{LogRequests, MaskErrors, RateLimit};
use ferromcp_core::server::{
    FromHost, HandlerError, Middleware, MiddlewareRequest, MiddlewareResult, Next, OutputError,
    Server,
};
use ferromcp_core::{BoxFuture, McpError};
use tokio::runtime::Handle;
use tokio_util::sync::CancellationToken;

use crate::args::{bad, check_out, only_known, optional_str, parse_json_object, required_str};
use crate::context::http_header;
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::{Castable, OwnershipRef, Userdata, give_string, try_from, try_from_mut};
use crate::host_call::{self, CallOutput, CallPtr, ferromcp_call};
use crate::panic::{ffi_boundary, ffi_boundary_or};

/// A middleware link written in C (see ferromcp_server_add_middleware()).
///
/// - `userdata`: the pointer given at registration, passed back unchanged.
/// - `request`: what is asked (ferromcp_middleware_request_method(),
///   _name(), _params_json(), _meta_json(), _http_header()). Borrowed:
///   valid until the callback returns.
/// - `next`: the rest of the chain, run at most once with
///   ferromcp_next_run(). Borrowed: valid until the callback returns, and
///   used by one thread at a time.
/// - `call`: the handle that answers the request, owned by the callback
///   until it completes it exactly once, now or later, from any thread:
///   ferromcp_call_respond() with the result object (the one
///   ferromcp_next_run() gave, changed or not, or one of the link's own),
///   ferromcp_call_fail_jsonrpc() with a JSON-RPC error, or
///   ferromcp_call_fail() (a JSON-RPC internal error, -32603, with the
///   message). ferromcp_call_context() is NULL for a link's call;
///   ferromcp_call_is_cancelled() works.
///
/// A link that never calls ferromcp_next_run() short-circuits: the
/// request ends with the link's answer, and the links after it and the
/// primitive never run. A call that is never completed leaves the request
/// waiting until the client cancels it or goes away (an HTTP client
/// closing its stream, a client's timeout): do not leak it.
///
/// Threads: called on a ferromcp host thread, as ferromcp_tool_callback is
/// (never on a runtime worker, so it may block); requests run through the
/// chain concurrently, so state reached through `userdata` must be
/// thread-safe.
pub type ferromcp_middleware_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        request: *const ferromcp_middleware_request,
        next: *mut ferromcp_next,
        call: *mut ferromcp_call,
    ),
>;

type LinkFn = unsafe extern "C" fn(
    *mut c_void,
    *const ferromcp_middleware_request,
    *mut ferromcp_next,
    *mut ferromcp_call,
);

/// A request on its way through the middleware chain, as a link sees it.
///
/// Opaque. Lent to a ferromcp_middleware_callback for the duration of the
/// call; never freed by C. Its accessors may be called from any thread,
/// by several at once, while the callback runs.
pub struct ferromcp_middleware_request {
    request: Arc<MiddlewareRequest>,
    method: CString,
    name: Option<CString>,
    params_json: OnceLock<CString>,
    meta_json: OnceLock<CString>,
}

impl Castable for ferromcp_middleware_request {
    type Ownership = OwnershipRef;
}

/// The rest of a middleware chain (the links after this one, then the
/// request's own handling), for ferromcp_next_run().
///
/// Opaque. Lent to a ferromcp_middleware_callback for the duration of the
/// call; never freed by C.
pub struct ferromcp_next {
    rest: Option<Next>,
    request: Arc<MiddlewareRequest>,
    /// The runtime serving the request: the rest runs there, as it would
    /// without this link.
    runtime: Handle,
    /// Cancelled when the request ends (answered, cancelled, its client
    /// gone): a wait in ferromcp_next_run() stops then.
    ended: CancellationToken,
}

impl Castable for ferromcp_next {
    type Ownership = OwnershipRef;
}

/// How the rest of a chain that a C link runs with `next` ended.
pub(crate) enum Rest<T> {
    /// It gave `T`.
    Done(T),
    /// A later link panicked.
    Panicked,
    /// The link's request or call ended first (cancelled, its caller
    /// gone): the rest was stopped, and nothing it gives would be used.
    Ended,
}

/// Runs `rest` on `runtime`, where it would run without the link, while
/// this host thread waits for it, until it ends or `stop` (or `also`)
/// fires; then it is aborted. The server's and the client's `next` share
/// it.
pub(crate) fn wait_for_rest<T: Send + 'static>(
    runtime: &Handle,
    rest: impl std::future::Future<Output = T> + Send + 'static,
    stop: &CancellationToken,
    also: Option<&CancellationToken>,
) -> Rest<T> {
    let task = runtime.spawn(rest);
    let abort = task.abort_handle();
    let joined = ferromcp_core::runtime::block_here(async {
        let also_fired = async {
            match also {
                Some(token) => token.cancelled().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            () = stop.cancelled() => None,
            () = also_fired => None,
            joined = task => Some(joined),
        }
    });
    // A rest that ended while a token fired is discarded all the same.
    let stopped = stop.is_cancelled() || also.is_some_and(CancellationToken::is_cancelled);
    match joined {
        Some(Ok(value)) if !stopped => Rest::Done(value),
        Some(Err(failure)) if failure.is_panic() => Rest::Panicked,
        Some(_) => Rest::Ended,
        None => {
            abort.abort();
            Rest::Ended
        }
    }
}

/// Text for C from Rust text that may hold a NUL (a JSON string may): the
/// NUL is replaced, as the text is only for reading.
pub(crate) fn c_text(text: &str) -> CString {
    CString::new(text.replace('\0', "\u{FFFD}")).unwrap_or_default()
}

/// What a link's call answers (a server link's or a client link's): the
/// request's result object.
pub(crate) struct LinkAnswer(pub(crate) Map<String, Value>);

impl FromHost for LinkAnswer {
    const KIND: &'static str = "middleware";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        match value {
            Value::Object(result) => Ok(LinkAnswer(result)),
            _ => Err(OutputError {
                kind: Self::KIND,
                reason: "expected a result object".into(),
            }),
        }
    }
}

impl CallOutput for LinkAnswer {}

/// A C callback registered as a link, owning its userdata.
struct Hosted {
    callback: LinkFn,
    userdata: Userdata,
}

/// The link core holds.
struct CallbackLink(Arc<Hosted>);

/// Adds a C link at the end of `server`'s chain.
pub(crate) fn add_link(server: &Server, callback: LinkFn, userdata: Userdata) {
    server.add_middleware(CallbackLink(Arc::new(Hosted { callback, userdata })));
}

impl Middleware for CallbackLink {
    fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        let hosted = Arc::clone(&self.0);
        let runtime = Handle::try_current().unwrap_or_else(|_| ferromcp_core::runtime::handle());
        let ended = CancellationToken::new();
        let guard = ended.clone().drop_guard();
        Box::pin(async move {
            // Dropped when the request ends, answered or abandoned.
            let _ended = guard;
            let outcome = host_call::run::<LinkAnswer>(None, false, move |call| {
                hosted.invoke(request, next, runtime, ended, call)
            })
            .await;
            match outcome {
                Ok(LinkAnswer(result)) => Ok(result.into()),
                Err(HandlerError::Protocol(error)) => Err(error),
                // ferromcp_call_fail(), or an answer of the wrong shape.
                Err(HandlerError::Tool(message)) => Err(McpError::internal(message)),
            }
        })
    }
}

impl Hosted {
    fn invoke(
        &self,
        request: MiddlewareRequest,
        rest: Next,
        runtime: Handle,
        ended: CancellationToken,
        call: CallPtr,
    ) {
        // SAFETY: `call.0` is the fresh handle `host_call::run` made, not
        // yet given to C: this thread is its only user.
        if let Some(handle) = unsafe { call.0.as_mut() } {
            handle.cancelled_with(rest.cancellation().clone());
        }
        let request = Arc::new(request);
        let lent = ferromcp_middleware_request {
            method: c_text(&request.method),
            name: request.name().map(c_text),
            request: Arc::clone(&request),
            params_json: OnceLock::new(),
            meta_json: OnceLock::new(),
        };
        let mut next = ferromcp_next {
            rest: Some(rest),
            request,
            runtime,
            ended,
        };
        // SAFETY: the callback contract in the header: `lent` and `next`
        // outlive the call, and `call.0` is a fresh, owned handle.
        unsafe { (self.callback)(self.userdata.get(), &lent, &mut next, call.0) }
    }
}

/// Core's ready-made link named `name`, configured by `settings`, added at
/// the end of `server`'s chain.
pub(crate) fn add_builtin(
    server: &Server,
    name: &str,
    settings: &Map<String, Value>,
) -> Result<(), FfiError> {
    const SETTINGS: &str = "settings_json";
    match name {
        "logRequests" => {
            only_known(settings, &[], SETTINGS)?;
            server.add_middleware(LogRequests::default());
        }
        "maskErrors" => {
            only_known(settings, &[], SETTINGS)?;
            server.add_middleware(MaskErrors::default());
        }
        "rateLimit" => {
            only_known(settings, &["perSecond", "burst", "maxClients"], SETTINGS)?;
            // The JSON types are read here; the values are core's to judge.
            let per_second = settings
                .get("perSecond")
                .and_then(Value::as_f64)
                .ok_or_else(|| bad(SETTINGS, "\"perSecond\" must be a number"))?;
            let burst = settings
                .get("burst")
                .and_then(Value::as_u64)
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| bad(SETTINGS, "\"burst\" must be an integer from 1 to 2^32-1"))?;
            let mut limit =
                RateLimit::try_new(per_second, burst).map_err(|why| bad(SETTINGS, why))?;
            if let Some(max) = settings.get("maxClients") {
                let max = max
                    .as_u64()
                    .and_then(|n| usize::try_from(n).ok())
                    .and_then(NonZeroUsize::new)
                    .ok_or_else(|| bad(SETTINGS, "\"maxClients\" must be an integer >= 1"))?;
                limit = limit.with_max_clients(max);
            }
            server.add_middleware(limit);
        }
        _ => {
            return Err(FfiError::new(
                ferromcp_status::FERROMCP_INVALID_ARGUMENT,
                format!(
                    "no ready-made middleware is named {name:?} \
                     (there are \"logRequests\", \"maskErrors\" and \"rateLimit\")"
                ),
            ));
        }
    }
    Ok(())
}

/// The request's method, e.g. `"tools/call"`, `"tools/list"`,
/// `"resources/read"`, `"server/discover"`.
///
/// - `request`: the request a ferromcp_middleware_callback received,
///   borrowed.
///
/// Returns NUL-terminated UTF-8 owned by the request: valid until the
/// callback returns, never freed by the caller. NULL when `request` is
/// NULL.
///
/// Threads: any thread, while the callback runs.
///
/// # Safety
/// `request` NULL or the live request of a running callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_middleware_request_method(
    request: *const ferromcp_middleware_request,
) -> *const c_char {
    ffi_boundary_or(std::ptr::null(), || {
        // SAFETY: forwarded contract.
        unsafe { request.as_ref() }.map_or(std::ptr::null(), |r| r.method.as_ptr())
    })
}

/// The `name` param of the request: the tool of a `tools/call`, the prompt
/// of a `prompts/get`.
///
/// Returns NUL-terminated UTF-8 owned by the request (valid until the
/// callback returns, never freed), or NULL when the params have no string
/// `name` (or `request` is NULL).
///
/// Threads: any thread, while the callback runs.
///
/// # Safety
/// `request` NULL or the live request of a running callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_middleware_request_name(
    request: *const ferromcp_middleware_request,
) -> *const c_char {
    ffi_boundary_or(std::ptr::null(), || {
        // SAFETY: forwarded contract.
        unsafe { request.as_ref() }
            .and_then(|r| r.name.as_ref())
            .map_or(std::ptr::null(), |name| name.as_ptr())
    })
}

/// The request's params object as the client sent it (`_meta` included),
/// compact JSON text, e.g. `{"name":"echo","arguments":{"text":"hi"}}`
/// for a `tools/call`; `{}` when it had none. To change them, pass new
/// params to ferromcp_next_run().
///
/// Returns NUL-terminated UTF-8 owned by the request (valid until the
/// callback returns, never freed); NULL when `request` is NULL.
///
/// Threads: any thread, while the callback runs.
///
/// # Safety
/// `request` NULL or the live request of a running callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_middleware_request_params_json(
    request: *const ferromcp_middleware_request,
) -> *const c_char {
    ffi_boundary_or(std::ptr::null(), || {
        // SAFETY: forwarded contract.
        unsafe { request.as_ref() }.map_or(std::ptr::null(), |r| {
            r.params_json
                .get_or_init(|| {
                    c_text(&serde_json::to_string(&r.request.params).unwrap_or_default())
                })
                .as_ptr()
        })
    })
}

/// Who asks, as compact JSON text: `{"protocolVersion":"2026-07-28",
/// "clientInfo":{"name":...,"version":...},"clientCapabilities":{...},
/// "auth":{"subject","clientId","scopes","audience","expiresAt","claims"},
/// "headers":{"user-agent":...}}`; `clientInfo` and `auth` are null when
/// the request has none (`auth` is set only on a server served with
/// `"auth"`, see ferromcp_server_serve_http_ex()); `headers` holds the HTTP
/// request's headers but `authorization`, `cookie` and
/// `proxy-authorization` (the verified claims are `auth`), lower-case
/// names, a repeated header's values joined with ", " (`{}` over stdio and
/// in memory). The same document a
/// ferromcp_visibility_callback gets. Read members with ferromcp_json_get().
///
/// Returns NUL-terminated UTF-8 owned by the request (valid until the
/// callback returns, never freed); NULL when `request` is NULL.
///
/// Threads: any thread, while the callback runs.
///
/// ```c
/// char *subject = NULL;
/// if (ferromcp_json_get(ferromcp_middleware_request_meta_json(request), "/auth/subject",
///                       &subject) == FERROMCP_OK) {
///     ...
///     ferromcp_string_free(subject);
/// }
/// ```
///
/// # Safety
/// `request` NULL or the live request of a running callback.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_middleware_request_meta_json(
    request: *const ferromcp_middleware_request,
) -> *const c_char {
    ffi_boundary_or(std::ptr::null(), || {
        // SAFETY: forwarded contract.
        unsafe { request.as_ref() }.map_or(std::ptr::null(), |r| {
            r.meta_json
                .get_or_init(|| c_text(&Value::Object(caller_value(&r.request.meta)).to_string()))
                .as_ptr()
        })
    })
}

/// One header of the HTTP request that carried the request (the name is
/// case-insensitive; a repeated header's values are joined with ", "), as
/// ferromcp_context_http_header() gives it to a tool.
///
/// - `request`: borrowed.
/// - `name`: NUL-terminated header name, borrowed.
/// - `out_value`: receives a new string; free it with ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_NOT_FOUND when there is no such header or
/// no HTTP request (stdio, in memory); FERROMCP_NULL_ARGUMENT,
/// FERROMCP_INVALID_UTF8.
///
/// Threads: any thread, while the callback runs.
///
/// # Safety
/// `request` NULL or the live request of a running callback; `name` NULL or
/// NUL-terminated; `out_value` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_middleware_request_http_header(
    request: *const ferromcp_middleware_request,
    name: *const c_char,
    out_value: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let request = unsafe { try_from(request, "request") }?;
        let name = unsafe { required_str(name, "name") }?;
        check_out(out_value, "out_value")?;
        let value = http_header(&request.request.meta, name).ok_or_else(|| {
            FfiError::new(
                ferromcp_status::FERROMCP_NOT_FOUND,
                format!("the request carries no {name:?} header"),
            )
        })?;
        give_string(value, out_value)
    })
}

fn request_ended() -> FfiError {
    FfiError::new(
        ferromcp_status::FERROMCP_REQUEST_CANCELLED,
        "the request ended (cancelled, its client gone, or its call already completed) \
         before the rest of the chain answered",
    )
}

/// Runs the rest of the chain (the links added after this one, then the
/// request's own handling: the tool, the list...) and waits for its
/// outcome, blocking the calling thread. At most once per request.
///
/// - `next`: the handle the ferromcp_middleware_callback received, borrowed.
/// - `params_json`: NULL to go on with the request's params unchanged, or
///   new params, a JSON object as NUL-terminated UTF-8 text, copied (e.g.
///   the `tools/call` params with other `arguments`). The params are
///   checked again downstream as if the client had sent them: arguments
///   that break the tool's schema fail the call.
/// - `out_result_json`: receives the result object as new JSON text (free
///   it with ferromcp_string_free()), to answer with as it is
///   (ferromcp_call_respond()) or changed.
///
/// Returns:
/// - FERROMCP_OK: `out_result_json` holds the result.
/// - FERROMCP_PEER_ERROR: the rest of the chain ended in a JSON-RPC error
///   (an unknown tool, invalid params, a later link's refusal...):
///   ferromcp_last_error_code(), ferromcp_last_error_message() and
///   ferromcp_last_error_data_json() give its code, message and data, so
///   `ferromcp_call_fail_jsonrpc(call, ferromcp_last_error_code(),
///   ferromcp_last_error_message(), ferromcp_last_error_data_json())`
///   passes it on unchanged. (A tool's own failure is not an error here:
///   it is a result with `"isError":true`.)
/// - FERROMCP_REQUEST_CANCELLED: the request ended while waiting (the
///   client cancelled it or went away, or the link's call was already
///   completed); the rest of the chain is stopped. Complete the call
///   anyway (any outcome: it is discarded).
/// - FERROMCP_INVALID_STATE: `next` was run already, or this is a ferromcp
///   runtime thread.
/// - FERROMCP_INVALID_JSON, FERROMCP_INVALID_UTF8: `params_json` is not a
///   JSON object (`next` is not used up: it may be run again);
///   FERROMCP_NULL_ARGUMENT.
///
/// Threads: the callback's thread, or another while the callback runs
/// (not two at once); it blocks.
///
/// ```c
/// static void timing(void *userdata, const ferromcp_middleware_request *request,
///                    ferromcp_next *next, ferromcp_call *call) {
///     (void)userdata;
///     char *result = NULL;
///     struct timespec start, end;
///     clock_gettime(CLOCK_MONOTONIC, &start);
///     ferromcp_status status = ferromcp_next_run(next, NULL, &result);
///     clock_gettime(CLOCK_MONOTONIC, &end);
///     fprintf(stderr, "%s: %ld us\n", ferromcp_middleware_request_method(request),
///             (end.tv_sec - start.tv_sec) * 1000000L + (end.tv_nsec - start.tv_nsec) / 1000);
///     if (status == FERROMCP_OK) {
///         ferromcp_call_respond(call, result);
///         ferromcp_string_free(result);
///     } else if (status == FERROMCP_PEER_ERROR) {
///         ferromcp_call_fail_jsonrpc(call, ferromcp_last_error_code(),
///                                    ferromcp_last_error_message(),
///                                    ferromcp_last_error_data_json());
///     } else {
///         ferromcp_call_fail(call, ferromcp_last_error_message());
///     }
/// }
/// ```
///
/// # Safety
/// `next` NULL or the live handle of a running callback; `params_json`
/// NULL or NUL-terminated; `out_result_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_next_run(
    next: *mut ferromcp_next,
    params_json: *const c_char,
    out_result_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let next = unsafe { try_from_mut(next, "next") }?;
        check_out(out_result_json, "out_result_json")?;
        let params = match unsafe { optional_str(params_json, "params_json") }? {
            Some(text) => parse_json_object(text, "params_json")?,
            None => next.request.params.clone(),
        };
        if tokio::task::try_id().is_some() {
            return Err(FfiError::new(
                ferromcp_status::FERROMCP_INVALID_STATE,
                "cannot wait for the rest of the middleware chain on a ferromcp runtime thread",
            ));
        }
        let rest = next.rest.take().ok_or_else(|| {
            FfiError::new(
                ferromcp_status::FERROMCP_INVALID_STATE,
                "the rest of the chain was run already (ferromcp_next_run() runs once)",
            )
        })?;
        let request = MiddlewareRequest {
            id: next.request.id.clone(),
            method: next.request.method.clone(),
            params,
            meta: next.request.meta.clone(),
        };
        // The rest runs on the runtime, where it would run without this
        // link; this thread only waits.
        // Cancelled as soon as the client cancels, before the request's
        // future is dropped (`ended`): a handler that stops on the
        // cancellation may answer in between, and that answer is
        // discarded all the same.
        let cancelled = rest.cancellation().clone();
        let result = match wait_for_rest(
            &next.runtime,
            rest.run(request),
            &next.ended,
            Some(&cancelled),
        ) {
            Rest::Done(result) => result,
            // As core answers a panicking link.
            Rest::Panicked => Err(McpError::internal("middleware failed: a link panicked")),
            Rest::Ended => return Err(request_ended()),
        };
        match result {
            Ok(result) => give_string(
                serde_json::to_string(&result).unwrap_or_default(),
                out_result_json,
            ),
            Err(error) => Err(FfiError {
                status: ferromcp_status::FERROMCP_PEER_ERROR,
                code: Some(error.code),
                data_json: error.data.as_ref().map(Value::to_string),
                message: error.message,
            }),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(text: &str) -> Map<String, Value> {
        parse_json_object(text, "settings_json").expect("an object")
    }

    #[test]
    fn builtins_are_added_by_name_with_checked_settings() {
        let server = Server::new("builtin", "1.0.0");
        let add = |name: &str, text: &str| add_builtin(&server, name, &settings(text));
        assert_eq!(add("logRequests", "{}"), Ok(()));
        assert_eq!(add("maskErrors", "{}"), Ok(()));
        assert_eq!(add("rateLimit", r#"{"perSecond":0.5,"burst":2}"#), Ok(()));
        assert_eq!(
            add("rateLimit", r#"{"perSecond":1,"burst":1,"maxClients":3}"#),
            Ok(())
        );
        let status = |result: Result<(), FfiError>| result.map_err(|e| e.status);
        assert_eq!(
            status(add("ratelimit", "{}")),
            Err(ferromcp_status::FERROMCP_INVALID_ARGUMENT)
        );
        for bad in [
            r#"{}"#,
            r#"{"perSecond":1}"#,
            r#"{"burst":1}"#,
            r#"{"perSecond":-1,"burst":1}"#,
            r#"{"perSecond":"1","burst":1}"#,
            r#"{"perSecond":1,"burst":0}"#,
            r#"{"perSecond":1,"burst":1.5}"#,
            r#"{"perSecond":1,"burst":4294967296}"#,
            r#"{"perSecond":1,"burst":1,"maxClients":0}"#,
            r#"{"perSecond":1,"burst":1,"extra":true}"#,
        ] {
            assert_eq!(
                status(add("rateLimit", bad)),
                Err(ferromcp_status::FERROMCP_INVALID_JSON),
                "{bad}"
            );
        }
        // Core judges the values, and its reason reaches C.
        let message = |result: Result<(), FfiError>| result.err().map(|e| e.message);
        assert_eq!(
            message(add("rateLimit", r#"{"perSecond":1,"burst":0}"#)).as_deref(),
            Some("`settings_json`: burst must be at least 1")
        );
        assert_eq!(
            status(add("maskErrors", r#"{"x":1}"#)),
            Err(ferromcp_status::FERROMCP_INVALID_JSON)
        );
    }

    #[test]
    fn a_link_answers_with_a_result_object() {
        assert!(LinkAnswer::from_host(serde_json::json!({"content": []})).is_ok());
        let error = LinkAnswer::from_host(serde_json::json!([1]))
            .err()
            .expect("a list is no result object");
        assert_eq!(
            error.to_string(),
            "invalid middleware result: expected a result object"
        );
    }

    #[test]
    fn text_for_c_keeps_no_nul() {
        assert_eq!(c_text("a\0b").to_str(), Ok("a\u{FFFD}b"));
    }
}
