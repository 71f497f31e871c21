//! Client middleware links written in C (core `client::middleware`): a C
//! callback adapted to core's `ClientMiddleware`, the two handles it gets
//! besides its `ferromcp_call` (`ferromcp_client_middleware_request_*`:
//! the call on its way out; ferromcp_client_next_run(): the rest of the
//! chain, then the request itself) and ferromcp_client_add_middleware().
//! The server's counterpart is `middleware.rs`, whose conventions this
//! follows: the link runs on a host thread (it may block, and
//! ferromcp_client_next_run() does) and answers through a `ferromcp_call`
//! whose output is the request's result object.
//!
//! Unlike a server link's, the request and the rest of the chain stay
//! valid until the link's call is completed, not only while the callback
//! runs: a link may hand both to a thread of its own and return, and that
//! thread runs the rest of the chain and answers later.

use serde_json::{Map, Value};
use std::ffi::{CString, c_char, c_void};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use ferromcp_core::client::{CallNext, CallRequest, ClientMiddleware};
use ferromcp_core::server::HandlerError;
use ferromcp_core::{BoxFuture, Error, McpError};
use tokio_util::sync::CancellationToken;

use crate::args::{check_out, optional_str, parse_json_object};
use crate::client::ferromcp_client;
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::{
    Castable, Lent, OwnershipRef, Userdata, ferromcp_userdata_free, give_string, take_callback,
    try_from, try_from_mut,
};
use crate::host_call::{self, CallPtr, ferromcp_call};
use crate::middleware::{LinkAnswer, Rest, c_text, wait_for_rest};
use crate::panic::{ffi_boundary, ffi_boundary_or};

/// A client middleware link written in C (see
/// ferromcp_client_add_middleware()).
///
/// - `userdata`: the pointer given at registration, passed back unchanged.
/// - `request`: the call on its way out (ferromcp_client_middleware_request_method(),
///   _name(), _params_json(), _meta_json(), _timeout_ms()). Borrowed: valid
///   until the callback has returned and `call` is completed, whichever
///   comes last.
/// - `next`: the rest of the chain (the links added after this one, then
///   the request sent to the server), run at most once with
///   ferromcp_client_next_run(). Borrowed, as long as `request`; used by
///   one thread at a time.
/// - `call`: the handle that answers the call, owned by the callback until
///   it completes it exactly once, now or later, from any thread:
///   ferromcp_call_respond() with a result object (the one
///   ferromcp_client_next_run() gave, changed or not, or one of the link's
///   own), ferromcp_call_fail_jsonrpc() with a JSON-RPC error (the caller
///   gets FERROMCP_PEER_ERROR with that code, message and data), or
///   ferromcp_call_fail(): after ferromcp_client_next_run() failed with
///   another status than FERROMCP_PEER_ERROR (FERROMCP_TIMEOUT,
///   FERROMCP_CONNECTION_CLOSED...) the caller gets that same failure,
///   otherwise a JSON-RPC internal error (-32603) with the message.
///   ferromcp_call_context() is NULL for a link's call;
///   ferromcp_call_is_cancelled() is true once nobody waits for the answer.
///
/// A link that never calls ferromcp_client_next_run() short-circuits: the
/// caller gets the link's answer, and neither the links after it nor the
/// server see the request. The call's timeout bounds the request sent at
/// the end of the chain, not a link's own work: a call that is never
/// completed leaves the caller waiting until its cancel handle fires (do
/// not leak it).
///
/// Threads: called on a ferromcp host thread, never on a runtime worker,
/// so it may block and make blocking client calls (on any client, this one
/// too: its requests go through the chain again). Calls run through the
/// chain concurrently, so state reached through `userdata` must be
/// thread-safe.
pub type ferromcp_client_middleware_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        request: *const ferromcp_client_middleware_request,
        next: *mut ferromcp_client_next,
        call: *mut ferromcp_call,
    ),
>;

type LinkFn = unsafe extern "C" fn(
    *mut c_void,
    *const ferromcp_client_middleware_request,
    *mut ferromcp_client_next,
    *mut ferromcp_call,
);

/// A client's call on its way through the middleware chain, as a link
/// sees it.
///
/// Opaque. Lent to a ferromcp_client_middleware_callback until the
/// callback has returned and its call is completed; never freed by C. Its
/// accessors may be called from any thread, by several at once, meanwhile.
pub struct ferromcp_client_middleware_request {
    request: Arc<CallRequest>,
    method: CString,
    name: Option<CString>,
    params_json: OnceLock<CString>,
    meta_json: OnceLock<CString>,
}

impl Castable for ferromcp_client_middleware_request {
    type Ownership = OwnershipRef;
}

/// The rest of a client's middleware chain (the links after this one, then
/// the request sent to the server), for ferromcp_client_next_run().
///
/// Opaque. Lent to a ferromcp_client_middleware_callback until the
/// callback has returned and its call is completed; never freed by C.
pub struct ferromcp_client_next {
    rest: Option<CallNext>,
    request: Arc<CallRequest>,
    /// Cancelled when the link's call ends (answered, or its caller gone):
    /// a wait in ferromcp_client_next_run() stops then.
    ended: CancellationToken,
    /// The rest of the chain's failure when it is not a JSON-RPC error,
    /// for the link's ferromcp_call_fail() to pass on as it is.
    failure: Arc<Mutex<Option<Error>>>,
}

impl Castable for ferromcp_client_next {
    type Ownership = OwnershipRef;
}

/// A C callback registered as a link, owning its userdata.
struct Hosted {
    callback: LinkFn,
    userdata: Userdata,
}

/// The link core holds.
struct CallbackLink(Arc<Hosted>);

impl ClientMiddleware for CallbackLink {
    fn handle(&self, request: CallRequest, next: CallNext) -> BoxFuture<Result<Value, Error>> {
        let hosted = Arc::clone(&self.0);
        let ended = CancellationToken::new();
        let guard = ended.clone().drop_guard();
        let cancel = request.options.cancel.clone();
        let failure = Arc::new(Mutex::new(None));
        let passed = Arc::clone(&failure);
        Box::pin(async move {
            let mut answer =
                std::pin::pin!(host_call::run::<LinkAnswer>(None, false, move |call| {
                    hosted.invoke(request, next, ended, passed, call)
                },));
            // Dropped when the call ends, answered or abandoned, and before
            // `answer` (locals drop in reverse order): a link that sees its
            // call cancelled finds the rest of the chain ended too.
            let end_guard = guard;
            // The caller's cancel handle ends a link's own wait too, not
            // only the request sent at the end of the chain: the link's
            // call then reads as cancelled.
            let outcome = match cancel {
                Some(token) => tokio::select! {
                    biased;
                    () = token.cancelled() => {
                        drop(end_guard);
                        return Err(Error::Cancelled);
                    }
                    outcome = &mut answer => outcome,
                },
                None => answer.await,
            };
            match outcome {
                Ok(LinkAnswer(result)) => Ok(Value::Object(result)),
                Err(HandlerError::Protocol(error)) => Err(Error::Mcp(error)),
                // ferromcp_call_fail(), or an answer of the wrong shape:
                // the rest of the chain's own failure when there was one.
                Err(HandlerError::Tool(message)) => {
                    let failed = failure.lock().unwrap_or_else(|e| e.into_inner()).take();
                    Err(failed.unwrap_or_else(|| Error::Mcp(McpError::internal(message))))
                }
            }
        })
    }
}

impl Hosted {
    fn invoke(
        &self,
        request: CallRequest,
        rest: CallNext,
        ended: CancellationToken,
        failure: Arc<Mutex<Option<Error>>>,
        call: CallPtr,
    ) {
        let request = Arc::new(request);
        let view = Lent::new(ferromcp_client_middleware_request {
            method: c_text(&request.method),
            name: request.name().map(c_text),
            request: Arc::clone(&request),
            params_json: OnceLock::new(),
            meta_json: OnceLock::new(),
        });
        let next = Lent::new(ferromcp_client_next {
            rest: Some(rest),
            request,
            ended,
            failure,
        });
        let (view_ptr, next_ptr) = (view.as_ptr(), next.as_ptr());
        // Both live until the callback returns (this frame's clone) and
        // the call is completed (the call's clone), whichever is later.
        let lent = Arc::new((view, next));
        // SAFETY: `call.0` is the fresh handle `host_call::run` made, not
        // given to C yet.
        unsafe { &mut *call.0 }.hold(Box::new(Arc::clone(&lent)));
        // SAFETY: the callback contract in the header: `lent` outlives the
        // callback and, through the call, its completion; `call.0` is
        // owned by the callback from here.
        unsafe { (self.callback)(self.userdata.get(), view_ptr, next_ptr, call.0) }
        drop(lent);
    }
}

/// Adds a middleware link written in C at the end of the client's chain:
/// every request the client sends from now on (tool calls, lists, reads,
/// prompts, completion, discovery, tasks; either era, any transport; also
/// the client's own, such as the `tools/list` it sends over HTTP before
/// calling a tool it does not know yet, to learn which arguments go in
/// headers) goes through the links in the order they were added, the first
/// added seeing the call first and its result last, and then to the
/// server. A link may read the call, change its params, extra `_meta` or
/// timeout, run the rest of the chain (ferromcp_client_next_run()) or not
/// (short-circuit: answer with a result or a JSON-RPC error of its own),
/// and change what comes back.
///
/// - `client`: a connected client, borrowed. The link applies to the
///   client's every call, also those of the functions that take the client
///   (tasks, skills, a gateway mount of it).
/// - `callback`: the link (see ferromcp_client_middleware_callback). Not NULL.
/// - `userdata`: passed to every call; may be NULL. On success ferromcp
///   holds it until the client is freed and no call uses the link any
///   more; on failure it stays the caller's and `userdata_free` is not
///   called.
/// - `userdata_free`: called exactly once with `userdata` then (see
///   ferromcp_userdata_free); NULL if there is nothing to free.
///
/// A link cannot be removed. Each C link hands every call to a host thread
/// (a link waiting in ferromcp_client_next_run() holds its host thread, as
/// a blocked tool callback does; the pool has at most 512); with no links,
/// calls go straight out.
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT.
///
/// Threads: any thread, also while calls run (calls already in the chain
/// finish without the new link).
///
/// ```c
/// // Every tool call carries a tenant in its _meta (replacing any other
/// // extra _meta: this program's calls give none), and waits at most 5 s.
/// static void tenant(void *userdata, const ferromcp_client_middleware_request *request,
///                    ferromcp_client_next *next, ferromcp_call *call) {
///     (void)userdata;
///     bool tool = strcmp(ferromcp_client_middleware_request_method(request), "tools/call") == 0;
///     char *result = NULL;
///     ferromcp_status status =
///         ferromcp_client_next_run(next, NULL, tool ? "{\"example.com/tenant\":\"acme\"}" : NULL,
///                                  tool ? 5000 : 0, &result);
///     if (status == FERROMCP_OK) {
///         ferromcp_call_respond(call, result);
///         ferromcp_string_free(result);
///     } else if (status == FERROMCP_PEER_ERROR) {
///         ferromcp_call_fail_jsonrpc(call, ferromcp_last_error_code(),
///                                    ferromcp_last_error_message(),
///                                    ferromcp_last_error_data_json());
///     } else {
///         ferromcp_call_fail(call, ferromcp_last_error_message());  // passed on as is
///     }
/// }
/// ferromcp_client_add_middleware(client, tenant, NULL, NULL);
/// ```
///
/// # Safety
/// `client` NULL or live; `callback` and `userdata_free` callable from any
/// thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_add_middleware(
    client: *const ferromcp_client,
    callback: ferromcp_client_middleware_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
        client
            .client
            .add_middleware(CallbackLink(Arc::new(Hosted { callback, userdata })));
        Ok(())
    })
}

/// The method of the call, e.g. `"tools/call"`, `"tools/list"`,
/// `"resources/read"`.
///
/// - `request`: borrowed.
///
/// Returns NUL-terminated UTF-8 owned by the request (valid as long as the
/// request, never freed by the caller); NULL when `request` is NULL.
///
/// Threads: any thread, while the request is lent.
///
/// # Safety
/// `request` NULL or a request lent to a link.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_middleware_request_method(
    request: *const ferromcp_client_middleware_request,
) -> *const c_char {
    ffi_boundary_or(std::ptr::null(), || {
        // SAFETY: forwarded contract.
        unsafe { request.as_ref() }.map_or(std::ptr::null(), |r| r.method.as_ptr())
    })
}

/// The `name` param of the call: the tool of a `tools/call`, the prompt of
/// a `prompts/get`.
///
/// Returns NUL-terminated UTF-8 owned by the request (valid as long as the
/// request, never freed), or NULL when the params have no string `name`
/// (or `request` is NULL).
///
/// Threads: any thread, while the request is lent.
///
/// # Safety
/// `request` NULL or a request lent to a link.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_middleware_request_name(
    request: *const ferromcp_client_middleware_request,
) -> *const c_char {
    ffi_boundary_or(std::ptr::null(), || {
        // SAFETY: forwarded contract.
        unsafe { request.as_ref() }
            .and_then(|r| r.name.as_ref())
            .map_or(std::ptr::null(), |name| name.as_ptr())
    })
}

/// The call's params as they will be sent, compact JSON text, e.g.
/// `{"name":"echo","arguments":{"text":"hi"}}` for a `tools/call`; `{}`
/// when it has none. Without the `_meta` the client adds (see
/// ferromcp_client_middleware_request_meta_json()). To change them, pass
/// new params to ferromcp_client_next_run().
///
/// Returns NUL-terminated UTF-8 owned by the request (valid as long as the
/// request, never freed); NULL when `request` is NULL.
///
/// Threads: any thread, while the request is lent.
///
/// # Safety
/// `request` NULL or a request lent to a link.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_middleware_request_params_json(
    request: *const ferromcp_client_middleware_request,
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

/// The extra `_meta` entries of the call, a compact JSON object (`{}` when
/// there are none): what the caller or an earlier link added (a trace
/// context, a key of its own). The client adds them to the request's
/// `_meta` beside its own (protocol version, client info...), which are
/// not listed. To change them, pass new entries to
/// ferromcp_client_next_run().
///
/// Returns NUL-terminated UTF-8 owned by the request (valid as long as the
/// request, never freed); NULL when `request` is NULL.
///
/// Threads: any thread, while the request is lent.
///
/// # Safety
/// `request` NULL or a request lent to a link.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_middleware_request_meta_json(
    request: *const ferromcp_client_middleware_request,
) -> *const c_char {
    ffi_boundary_or(std::ptr::null(), || {
        // SAFETY: forwarded contract.
        unsafe { request.as_ref() }.map_or(std::ptr::null(), |r| {
            r.meta_json
                .get_or_init(|| {
                    c_text(&serde_json::to_string(&r.request.options.meta).unwrap_or_default())
                })
                .as_ptr()
        })
    })
}

/// The call's own timeout in milliseconds (the `timeout_ms` the caller
/// gave, or an earlier link set), or 0 when it has none: the client's
/// default (`"timeoutMs"` of ferromcp_client_options_new()) applies then.
///
/// Returns the milliseconds; 0 when `request` is NULL.
///
/// Threads: any thread, while the request is lent.
///
/// # Safety
/// `request` NULL or a request lent to a link.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_middleware_request_timeout_ms(
    request: *const ferromcp_client_middleware_request,
) -> u64 {
    ffi_boundary_or(0, || {
        // SAFETY: forwarded contract.
        unsafe { request.as_ref() }
            .and_then(|r| r.request.options.timeout)
            .map_or(0, |t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX))
    })
}

fn call_ended() -> FfiError {
    FfiError::new(
        ferromcp_status::FERROMCP_REQUEST_CANCELLED,
        "the call ended (its caller cancelled it or went away) before the rest of the chain \
         answered",
    )
}

/// Runs the rest of the chain (the links added after this one, then the
/// request sent to the server) and waits for its outcome, blocking the
/// calling thread. At most once per call.
///
/// - `next`: the handle the ferromcp_client_middleware_callback received,
///   borrowed.
/// - `params_json`: NULL to send the call's params unchanged, or new
///   params, a JSON object as NUL-terminated UTF-8 text, copied (e.g. the
///   `tools/call` params with other `arguments`), without `_meta`.
/// - `meta_json`: NULL to keep the call's extra `_meta` entries, or a JSON
///   object that replaces them (start from
///   ferromcp_client_middleware_request_meta_json() to add one), copied.
/// - `timeout_ms`: 0 to keep the call's timeout, or a new one for the rest
///   of the chain.
/// - `out_result_json`: receives the result object as the server answered
///   it (or a later link changed it), new JSON text (free it with
///   ferromcp_string_free()), to answer with as it is
///   (ferromcp_call_respond()) or changed. Written only on FERROMCP_OK.
///
/// Returns:
/// - FERROMCP_OK: `out_result_json` holds the result.
/// - FERROMCP_PEER_ERROR: the server or a later link answered with a
///   JSON-RPC error: ferromcp_last_error_code(),
///   ferromcp_last_error_message() and ferromcp_last_error_data_json() give
///   its code, message and data, so `ferromcp_call_fail_jsonrpc(call,
///   ferromcp_last_error_code(), ferromcp_last_error_message(),
///   ferromcp_last_error_data_json())` passes it on unchanged. (A tool's
///   own failure is not an error here: it is a result with
///   `"isError":true`.)
/// - FERROMCP_TIMEOUT, FERROMCP_CONNECTION_CLOSED, FERROMCP_HTTP,
///   FERROMCP_PROTOCOL_ERROR, FERROMCP_AUTH: as a client call fails;
///   ferromcp_call_fail() passes the failure on as it is.
/// - FERROMCP_REQUEST_CANCELLED: the caller's cancel handle fired, or the
///   call ended while waiting (its caller went away); the rest of the
///   chain is stopped. Complete the call anyway (any outcome: it is
///   discarded).
/// - FERROMCP_INVALID_STATE: `next` was run already, or this is a ferromcp
///   runtime thread.
/// - FERROMCP_INVALID_JSON, FERROMCP_INVALID_UTF8: `params_json` or
///   `meta_json` is not a JSON object (`next` is not used up: it may be run
///   again); FERROMCP_NULL_ARGUMENT.
///
/// Threads: any thread that may block (the callback's, or one the link
/// handed `next` to), not two at once; not once the link's call is being
/// completed.
///
/// ```c
/// // Answers tools/list from a cache once it has one.
/// static char *cached_tools = NULL;  // guarded by cache_lock
/// static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
///
/// static void cache(void *userdata, const ferromcp_client_middleware_request *request,
///                   ferromcp_client_next *next, ferromcp_call *call) {
///     (void)userdata;
///     bool list = strcmp(ferromcp_client_middleware_request_method(request), "tools/list") == 0 &&
///                 strcmp(ferromcp_client_middleware_request_params_json(request), "{}") == 0;
///     pthread_mutex_lock(&cache_lock);
///     if (list && cached_tools != NULL) {
///         ferromcp_call_respond(call, cached_tools);  // short-circuit
///         pthread_mutex_unlock(&cache_lock);
///         return;
///     }
///     pthread_mutex_unlock(&cache_lock);
///     char *result = NULL;
///     ferromcp_status status = ferromcp_client_next_run(next, NULL, NULL, 0, &result);
///     if (status == FERROMCP_OK) {
///         ferromcp_call_respond(call, result);
///         pthread_mutex_lock(&cache_lock);
///         if (list && cached_tools == NULL) cached_tools = result, result = NULL;
///         pthread_mutex_unlock(&cache_lock);
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
/// `next` NULL or lent to a link whose call is not completed; strings NULL
/// or NUL-terminated; `out_result_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_next_run(
    next: *mut ferromcp_client_next,
    params_json: *const c_char,
    meta_json: *const c_char,
    timeout_ms: u64,
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
        let meta: Option<Map<String, Value>> =
            match unsafe { optional_str(meta_json, "meta_json") }? {
                Some(text) => Some(parse_json_object(text, "meta_json")?),
                None => None,
            };
        if tokio::task::try_id().is_some() {
            return Err(FfiError::new(
                ferromcp_status::FERROMCP_INVALID_STATE,
                "cannot wait for the rest of the client middleware chain on a ferromcp runtime \
                 thread",
            ));
        }
        if next.ended.is_cancelled() {
            // Nobody waits: do not start the rest of the chain at all.
            return Err(call_ended());
        }
        let rest = next.rest.take().ok_or_else(|| {
            FfiError::new(
                ferromcp_status::FERROMCP_INVALID_STATE,
                "the rest of the chain was run already (ferromcp_client_next_run() runs once)",
            )
        })?;
        let mut options = next.request.options.clone();
        if let Some(meta) = meta {
            options.meta = meta;
        }
        if timeout_ms > 0 {
            options.timeout = Some(Duration::from_millis(timeout_ms));
        }
        let request = CallRequest {
            method: next.request.method.clone(),
            params,
            options,
        };
        // The rest runs on the runtime; this thread only waits, and stops
        // waiting (and the rest) when the link's call ends.
        let result = match wait_for_rest(
            &ferromcp_core::runtime::handle(),
            rest.run(request),
            &next.ended,
            None,
        ) {
            Rest::Done(result) => result,
            // As core answers a panicking server link.
            Rest::Panicked => Err(Error::Mcp(McpError::internal(
                "middleware failed: a link panicked",
            ))),
            Rest::Ended => return Err(call_ended()),
        };
        match result {
            Ok(result) => give_string(
                serde_json::to_string(&result).unwrap_or_default(),
                out_result_json,
            ),
            Err(error) => {
                let failed = FfiError::from(&error);
                if failed.status != ferromcp_status::FERROMCP_PEER_ERROR {
                    *next.failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(error);
                }
                Err(failed)
            }
        }
    })
}
