//! C callbacks for resources, resource templates, prompts and the
//! completion provider (core `server::primitives`), each with userdata and
//! a finalizer, adapted to core's handlers and registered with the server;
//! tools are `handler.rs`'s. The exported functions that register and
//! remove them, ferromcp_server_add_resource() and the rest, are in
//! `server.rs`.
//!
//! Definitions come as JSON text of the protocol's own types (`Tool`,
//! `Resource`, `ResourceTemplate`, `Prompt`), so every field the schema has
//! (title, icons, annotations, _meta) is settable without a C setter each.

use serde_json::{Map, Value};
use std::ffi::{CString, c_char, c_void};
use std::sync::Arc;

use ferromcp_core::protocol::{CacheScope, Prompt, Resource, ResourceTemplate};
use ferromcp_core::server::{
    CacheHint, CompletionOutput, HandlerError, PromptOutput, RequestContext, ResourceOutput,
    ResourceRequest, Server,
};

use crate::args::parse_json;
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::Userdata;
use crate::host_call::{self, CallOutput, CallPtr, ferromcp_call, take_call};

/// A resource (or resource template) implementation written in C.
///
/// - `userdata`: the pointer given at registration, passed back unchanged.
/// - `uri`: the URI the client asked to read, NUL-terminated UTF-8.
/// - `variables_json`: the URI template's variables extracted from `uri`,
///   a JSON object (`{}` for a plain resource).
/// - `call`: the handle for this read, owned by the callback until it is
///   completed (exactly once, from any thread, now or later) with
///   ferromcp_call_respond() (a string: the text; one contents item
///   `{"uri","text"|"blob","mimeType"}`, a list of them, or
///   `{"contents":[...]}`), or ferromcp_call_fail() / ferromcp_call_fail_jsonrpc().
///
/// Strings are owned by ferromcp and valid only until the callback returns.
/// Threads: as ferromcp_tool_callback (a host thread that may block; calls
/// may run concurrently).
pub type ferromcp_resource_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        uri: *const c_char,
        variables_json: *const c_char,
        call: *mut ferromcp_call,
    ),
>;

/// A prompt or completion implementation written in C.
///
/// - `userdata`: the pointer given at registration.
/// - `input_json`: for a prompt, its arguments (a JSON object of strings);
///   for the completion provider, the `completion/complete` params
///   (`{"ref":{...},"argument":{"name","value"},"context":{...}}`).
///   Owned by ferromcp, valid until the callback returns.
/// - `call`: completed exactly once, as for ferromcp_resource_callback.
///   A prompt answers a string (one user message), a PromptMessage, a list
///   of them or a GetPromptResult; completion a list of strings or
///   `{"values":[...],"total":N,"hasMore":b}`.
///
/// Threads: as ferromcp_tool_callback.
pub type ferromcp_json_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        input_json: *const c_char,
        call: *mut ferromcp_call,
    ),
>;

/// A registered callback: the function plus its userdata.
struct Hosted<F> {
    callback: F,
    data: Userdata,
}

pub(crate) type ResourceFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut ferromcp_call);
pub(crate) type JsonFn = unsafe extern "C" fn(*mut c_void, *const c_char, *mut ferromcp_call);

/// JSON text for C; serde_json escapes control characters, so it has no
/// interior NUL.
fn c_json(value: &Value) -> CString {
    CString::new(value.to_string()).unwrap_or_default()
}

/// Fails a call C never saw (a string with a NUL cannot be handed over).
fn fail_unseen(call: CallPtr, message: &str) {
    // SAFETY: the handle was never given to C.
    if let Ok(call) = unsafe { take_call(call.0) } {
        let _ = call.finish_error(HandlerError::tool(message));
    }
}

impl Hosted<ResourceFn> {
    async fn read(
        self: Arc<Self>,
        ctx: RequestContext,
        request: ResourceRequest,
    ) -> Result<ResourceOutput, HandlerError> {
        host_call::run::<ResourceOutput>(Some(ctx), false, move |call| {
            let variables = c_json(&Value::Object(request.variables));
            match CString::new(request.uri) {
                // SAFETY: the callback contract; strings outlive the call.
                Ok(uri) => unsafe {
                    (self.callback)(self.data.get(), uri.as_ptr(), variables.as_ptr(), call.0)
                },
                Err(_) => fail_unseen(call, "the resource URI contains a NUL character"),
            }
        })
        .await
    }
}

impl Hosted<JsonFn> {
    async fn run<O: CallOutput>(
        self: Arc<Self>,
        ctx: RequestContext,
        input: Value,
    ) -> Result<O, HandlerError> {
        host_call::run::<O>(Some(ctx), false, move |call| {
            let input = c_json(&input);
            // SAFETY: the callback contract; `input` outlives the call.
            unsafe { (self.callback)(self.data.get(), input.as_ptr(), call.0) }
        })
        .await
    }
}

/// Reads an optional cache hint `{"ttlMs": N, "cacheScope": "public"|"private"}`.
pub(crate) fn cache_hint(text: Option<&str>) -> Result<Option<CacheHint>, FfiError> {
    let Some(text) = text else { return Ok(None) };
    let value = parse_json(text, "cache_json")?;
    let bad = |why: &str| {
        FfiError::new(
            ferromcp_status::FERROMCP_INVALID_JSON,
            format!("`cache_json` {why}"),
        )
    };
    let ttl_ms = value
        .get("ttlMs")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("needs \"ttlMs\", a non-negative integer"))?;
    let scope = match value.get("cacheScope") {
        None => CacheScope::default(),
        Some(scope) => serde_json::from_value(scope.clone())
            .map_err(|_| bad("has a \"cacheScope\" other than \"public\" or \"private\""))?,
    };
    Ok(Some(CacheHint { ttl_ms, scope }))
}

/// Registers `callback` with `register`; on failure gives the userdata
/// back.
fn register<F>(
    callback: F,
    data: Userdata,
    register: impl FnOnce(Arc<Hosted<F>>) -> Result<(), ferromcp_core::Error>,
) -> Result<(), FfiError> {
    let hosted = Arc::new(Hosted { callback, data });
    let keep = Arc::clone(&hosted);
    register(hosted).map_err(|error| {
        // Core dropped the handler; `keep` is the last reference.
        keep.data.release();
        FfiError::from(error)
    })
}

/// What a C resource callback reads: a resource with a fixed URI
/// (ferromcp_server_add_resource()) or the URIs of a template
/// (ferromcp_server_add_resource_template()). Both are read the same way;
/// only core's registration differs.
pub(crate) enum Readable {
    Resource(Resource),
    Template(ResourceTemplate),
}

/// Registers a resource or resource template read by a C callback, with
/// its own cache hint or the server-wide one.
pub(crate) fn add_read(
    server: &Server,
    readable: Readable,
    cache: Option<CacheHint>,
    callback: ResourceFn,
    data: Userdata,
) -> Result<(), FfiError> {
    register(callback, data, |hosted| {
        let handler = move |ctx: RequestContext, request: ResourceRequest| {
            Arc::clone(&hosted).read(ctx, request)
        };
        match (readable, cache) {
            (Readable::Resource(resource), Some(hint)) => {
                server.add_resource_cached(resource, hint, handler)
            }
            (Readable::Resource(resource), None) => server.add_resource(resource, handler),
            (Readable::Template(template), Some(hint)) => {
                server.add_resource_template_cached(template, hint, handler)
            }
            (Readable::Template(template), None) => server.add_resource_template(template, handler),
        }
    })
}

/// Registers a prompt rendered by a C callback (see
/// ferromcp_server_add_prompt()).
pub(crate) fn add_prompt(
    server: &Server,
    prompt: Prompt,
    callback: JsonFn,
    data: Userdata,
) -> Result<(), FfiError> {
    register(callback, data, |hosted| {
        let handler = move |ctx: RequestContext, arguments: Map<String, Value>| {
            Arc::clone(&hosted).run::<PromptOutput>(ctx, Value::Object(arguments))
        };
        server.add_prompt(prompt, handler)
    })
}

/// Makes a C callback the completion provider (see
/// ferromcp_server_set_completion()).
pub(crate) fn set_completion(server: &Server, callback: JsonFn, data: Userdata) {
    let hosted = Arc::new(Hosted { callback, data });
    server.set_completion_handler(move |ctx: RequestContext, params: Value| {
        Arc::clone(&hosted).run::<CompletionOutput>(ctx, params)
    });
}
