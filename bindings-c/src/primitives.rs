//! Registering every kind of primitive from C (core `server::primitives`):
//! tools from a full JSON definition, resources, resource templates,
//! prompts and the completion provider, each a C callback with userdata
//! and a finalizer; removing them; resource-updated notifications.
//!
//! Definitions come as JSON text of the protocol's own types (`Tool`,
//! `Resource`, `ResourceTemplate`, `Prompt`), so every field the schema has
//! (title, icons, annotations, _meta) is settable without a C setter each.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::ffi::{CString, c_char, c_void};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use ferromcp_core::protocol::{CacheScope, Prompt, Resource, ResourceTemplate, Tool};
use ferromcp_core::server::{
    CacheHint, CompletionOutput, HandlerError, PromptOutput, RequestContext, ResourceOutput,
    ResourceRequest,
};

use crate::args::{optional_str, parse_json, required_ref, required_str};
use crate::error::{FfiError, ferromcp_status};
use crate::handler::{CallbackTool, ferromcp_tool_callback, ferromcp_userdata_free};
use crate::host_call::{self, CallOutput, CallPtr, ferromcp_call, take_call};
use crate::panic::ffi_boundary;
use crate::server::{FERROMCP_TOOL_NONBLOCKING, ferromcp_server};

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

/// A C userdata pointer and its finalizer, run once when the registration
/// is dropped (unless registration failed and the caller kept it).
struct Userdata {
    userdata: *mut c_void,
    finalizer: ferromcp_userdata_free,
    owned: AtomicBool,
}

// SAFETY: the header requires userdata and finalizers to be usable from any
// thread; ferromcp never dereferences the pointer.
unsafe impl Send for Userdata {}
// SAFETY: as above.
unsafe impl Sync for Userdata {}

impl Userdata {
    fn new(userdata: *mut c_void, finalizer: ferromcp_userdata_free) -> Userdata {
        Userdata {
            userdata,
            finalizer,
            owned: AtomicBool::new(true),
        }
    }

    /// Registration failed: the caller keeps the userdata.
    fn release(&self) {
        self.owned.store(false, Ordering::Release);
    }
}

impl Drop for Userdata {
    fn drop(&mut self) {
        if let Some(finalizer) = self.finalizer
            && self.owned.load(Ordering::Acquire)
        {
            // SAFETY: the finalizer contract: once, with its userdata.
            unsafe { finalizer(self.userdata) }
        }
    }
}

/// A registered callback: the function plus its userdata.
struct Hosted<F> {
    callback: F,
    data: Userdata,
}

type ResourceFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut ferromcp_call);
type JsonFn = unsafe extern "C" fn(*mut c_void, *const c_char, *mut ferromcp_call);

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
                    (self.callback)(self.data.userdata, uri.as_ptr(), variables.as_ptr(), call.0)
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
            unsafe { (self.callback)(self.data.userdata, input.as_ptr(), call.0) }
        })
        .await
    }
}

/// Parses a definition given as JSON text into a protocol type.
fn definition<T: DeserializeOwned>(text: &str, name: &str) -> Result<T, FfiError> {
    serde_json::from_value(parse_json(text, name)?).map_err(|e| {
        FfiError::new(
            ferromcp_status::FERROMCP_INVALID_DEFINITION,
            format!("`{name}` is not a valid definition: {e}"),
        )
    })
}

/// Reads an optional cache hint `{"ttlMs": N, "cacheScope": "public"|"private"}`.
fn cache_hint(text: Option<&str>) -> Result<Option<CacheHint>, FfiError> {
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

/// Registers `hosted` with `register`; on failure gives the userdata back.
fn register<F>(
    hosted: Arc<Hosted<F>>,
    register: impl FnOnce(Arc<Hosted<F>>) -> Result<(), ferromcp_core::Error>,
) -> Result<(), FfiError> {
    let keep = Arc::clone(&hosted);
    register(hosted).map_err(|error| {
        // Core dropped the handler; `keep` is the last reference.
        keep.data.release();
        FfiError::from(error)
    })
}

/// Registers a tool from its full definition, replacing the tool with the
/// same name. Like ferromcp_server_add_tool_ex(), but every field of the
/// protocol's Tool is settable: `title`, `icons`, `annotations`, `_meta`,
/// `outputSchema`, `x-mcp-header` parameters in `inputSchema`.
///
/// - `server`: borrowed.
/// - `tool_json`: a Tool object as NUL-terminated UTF-8 JSON text, copied,
///   e.g. `{"name":"add","title":"Add","inputSchema":{"type":"object"},
///   "annotations":{"readOnlyHint":true}}`.
/// - `flags`, `callback`, `userdata`, `userdata_free`: as for
///   ferromcp_server_add_tool_ex().
///
/// Returns FERROMCP_INVALID_JSON for unparsable text,
/// FERROMCP_INVALID_DEFINITION for JSON that is not an acceptable Tool,
/// FERROMCP_INVALID_ARGUMENT for unknown flags, FERROMCP_NULL_ARGUMENT.
///
/// Threads: any thread, also while serving.
///
/// # Safety
/// Each pointer is NULL or valid; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_add_tool_json(
    server: *const ferromcp_server,
    tool_json: *const c_char,
    flags: u32,
    callback: ferromcp_tool_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        if flags & !FERROMCP_TOOL_NONBLOCKING != 0 {
            return Err(FfiError::new(
                ferromcp_status::FERROMCP_INVALID_ARGUMENT,
                format!("unknown flags {flags:#x}"),
            ));
        }
        // SAFETY (all): forwarded contract.
        let server = unsafe { required_ref(server, "server") }?;
        let tool: Tool = definition(
            unsafe { required_str(tool_json, "tool_json") }?,
            "tool_json",
        )?;
        let callback = callback.ok_or_else(|| FfiError::null("callback"))?;
        let registration = Arc::new(CallbackTool::new(
            callback,
            userdata,
            userdata_free,
            flags & FERROMCP_TOOL_NONBLOCKING != 0,
        ));
        let handler_registration = Arc::clone(&registration);
        let handler = move |context: RequestContext, arguments: Value| {
            Arc::clone(&handler_registration).call(context, arguments)
        };
        server.server.add_tool(tool, handler).map_err(|error| {
            registration.release_userdata();
            FfiError::from(error)
        })
    })
}

/// Registers a resource with a fixed URI (replacing one with the same URI).
///
/// - `server`: borrowed.
/// - `resource_json`: a Resource object, NUL-terminated UTF-8 JSON, copied:
///   `{"uri":"file:///a.txt","name":"a","mimeType":"text/plain"}` plus any
///   of title, description, size, icons, annotations, _meta.
/// - `cache_json`: NULL (the server-wide hint), or the caching hint of this
///   resource's reads: `{"ttlMs":60000,"cacheScope":"public"|"private"}`.
/// - `callback`: reads it (see ferromcp_resource_callback). Not NULL.
/// - `userdata`, `userdata_free`: as for ferromcp_server_add_tool().
///
/// Returns FERROMCP_INVALID_JSON, FERROMCP_INVALID_DEFINITION,
/// FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8.
///
/// Threads: any thread, also while serving (subscribers are told the list
/// changed).
///
/// # Safety
/// Each pointer is NULL or valid; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_add_resource(
    server: *const ferromcp_server,
    resource_json: *const c_char,
    cache_json: *const c_char,
    callback: ferromcp_resource_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let server = unsafe { required_ref(server, "server") }?;
        let resource: Resource = definition(
            unsafe { required_str(resource_json, "resource_json") }?,
            "resource_json",
        )?;
        let cache = cache_hint(unsafe { optional_str(cache_json, "cache_json") }?)?;
        let callback = callback.ok_or_else(|| FfiError::null("callback"))?;
        let hosted = Arc::new(Hosted {
            callback,
            data: Userdata::new(userdata, userdata_free),
        });
        register(hosted, |hosted| {
            let handler = move |ctx: RequestContext, request: ResourceRequest| {
                Arc::clone(&hosted).read(ctx, request)
            };
            match cache {
                Some(hint) => server.server.add_resource_cached(resource, hint, handler),
                None => server.server.add_resource(resource, handler),
            }
        })
    })
}

/// Registers a resource template: reads of URIs matching its RFC 6570
/// `uriTemplate` go to `callback` with the extracted variables.
///
/// - `template_json`: a ResourceTemplate object, e.g.
///   `{"uriTemplate":"test://item/{id}","name":"item"}`, copied.
/// - the rest as for ferromcp_server_add_resource().
///
/// Returns as ferromcp_server_add_resource() (a bad template is
/// FERROMCP_INVALID_DEFINITION).
///
/// # Safety
/// As ferromcp_server_add_resource().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_add_resource_template(
    server: *const ferromcp_server,
    template_json: *const c_char,
    cache_json: *const c_char,
    callback: ferromcp_resource_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let server = unsafe { required_ref(server, "server") }?;
        let template: ResourceTemplate = definition(
            unsafe { required_str(template_json, "template_json") }?,
            "template_json",
        )?;
        let cache = cache_hint(unsafe { optional_str(cache_json, "cache_json") }?)?;
        let callback = callback.ok_or_else(|| FfiError::null("callback"))?;
        let hosted = Arc::new(Hosted {
            callback,
            data: Userdata::new(userdata, userdata_free),
        });
        register(hosted, |hosted| {
            let handler = move |ctx: RequestContext, request: ResourceRequest| {
                Arc::clone(&hosted).read(ctx, request)
            };
            match cache {
                Some(hint) => server
                    .server
                    .add_resource_template_cached(template, hint, handler),
                None => server.server.add_resource_template(template, handler),
            }
        })
    })
}

/// Registers a prompt (replacing one with the same name).
///
/// - `prompt_json`: a Prompt object, e.g. `{"name":"greet","arguments":
///   [{"name":"who","required":true}]}` plus title, description, icons...,
///   copied.
/// - `callback`: renders it (see ferromcp_json_callback). Not NULL.
/// - `userdata`, `userdata_free`: as for ferromcp_server_add_tool().
///
/// Returns as ferromcp_server_add_resource().
///
/// # Safety
/// Each pointer is NULL or valid; strings NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_add_prompt(
    server: *const ferromcp_server,
    prompt_json: *const c_char,
    callback: ferromcp_json_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let server = unsafe { required_ref(server, "server") }?;
        let prompt: Prompt = definition(
            unsafe { required_str(prompt_json, "prompt_json") }?,
            "prompt_json",
        )?;
        let callback = callback.ok_or_else(|| FfiError::null("callback"))?;
        let hosted = Arc::new(Hosted {
            callback,
            data: Userdata::new(userdata, userdata_free),
        });
        register(hosted, |hosted| {
            let handler = move |ctx: RequestContext, arguments: Map<String, Value>| {
                Arc::clone(&hosted).run::<PromptOutput>(ctx, Value::Object(arguments))
            };
            server.server.add_prompt(prompt, handler)
        })
    })
}

/// Sets the provider answering `completion/complete` for every prompt
/// argument and resource template variable (replacing an earlier one, whose
/// finalizer then runs), and declares the `completions` capability.
///
/// - `callback`: see ferromcp_json_callback. Not NULL.
/// - `userdata`, `userdata_free`: as for ferromcp_server_add_tool().
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT (then `userdata` stays the
/// caller's).
///
/// Threads: any thread, also while serving.
///
/// # Safety
/// Each pointer is NULL or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_set_completion(
    server: *const ferromcp_server,
    callback: ferromcp_json_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let server = unsafe { required_ref(server, "server") }?;
        let callback = callback.ok_or_else(|| FfiError::null("callback"))?;
        let hosted = Arc::new(Hosted {
            callback,
            data: Userdata::new(userdata, userdata_free),
        });
        server
            .server
            .set_completion_handler(move |ctx: RequestContext, params: Value| {
                Arc::clone(&hosted).run::<CompletionOutput>(ctx, params)
            });
        Ok(())
    })
}

/// Removes a registration by its key; FERROMCP_NOT_FOUND when absent.
///
/// # Safety
/// `server` NULL or live; `key` NULL or NUL-terminated.
unsafe fn remove(
    server: *const ferromcp_server,
    key: *const c_char,
    remove: impl FnOnce(&ferromcp_core::server::Server, &str) -> bool,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let server = unsafe { required_ref(server, "server") }?;
        let key = unsafe { required_str(key, "key") }?;
        if remove(&server.server, key) {
            Ok(())
        } else {
            Err(FfiError::new(
                ferromcp_status::FERROMCP_NOT_FOUND,
                format!("nothing is registered as {key:?}"),
            ))
        }
    })
}

/// Removes the tool named `name` (its finalizer runs once no request uses
/// it); clients listening are told the list changed.
///
/// Returns FERROMCP_OK, FERROMCP_NOT_FOUND when there is no such tool,
/// FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8. Threads: any thread.
///
/// # Safety
/// `server` NULL or live; `name` NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_remove_tool(
    server: *const ferromcp_server,
    name: *const c_char,
) -> ferromcp_status {
    // SAFETY: forwarded contract.
    unsafe { remove(server, name, |s, k| s.remove_tool(k)) }
}

/// Removes the resource with URI `uri`; as ferromcp_server_remove_tool().
///
/// # Safety
/// `server` NULL or live; `uri` NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_remove_resource(
    server: *const ferromcp_server,
    uri: *const c_char,
) -> ferromcp_status {
    // SAFETY: forwarded contract.
    unsafe { remove(server, uri, |s, k| s.remove_resource(k)) }
}

/// Removes the resource template `uri_template`; as ferromcp_server_remove_tool().
///
/// # Safety
/// `server` NULL or live; `uri_template` NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_remove_resource_template(
    server: *const ferromcp_server,
    uri_template: *const c_char,
) -> ferromcp_status {
    // SAFETY: forwarded contract.
    unsafe { remove(server, uri_template, |s, k| s.remove_resource_template(k)) }
}

/// Removes the prompt named `name`; as ferromcp_server_remove_tool().
///
/// # Safety
/// `server` NULL or live; `name` NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_remove_prompt(
    server: *const ferromcp_server,
    name: *const c_char,
) -> ferromcp_status {
    // SAFETY: forwarded contract.
    unsafe { remove(server, name, |s, k| s.remove_prompt(k)) }
}

/// Tells clients subscribed to `uri` that the resource changed
/// (`notifications/resources/updated`). List changes (tools, resources,
/// prompts added or removed) are announced by ferromcp itself.
///
/// Returns FERROMCP_OK, FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8.
/// Threads: any thread, also from a callback.
///
/// # Safety
/// `server` NULL or live; `uri` NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_notify_resource_updated(
    server: *const ferromcp_server,
    uri: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let server = unsafe { required_ref(server, "server") }?;
        let uri = unsafe { required_str(uri, "uri") }?;
        server.server.notify_resource_updated(uri);
        Ok(())
    })
}
