//! `ferromcp_server`: core's `Server` behind an opaque pointer, and every
//! `ferromcp_server_*` function: creating and freeing it, registering and
//! removing primitives, middleware and visibility, protection, and the
//! blocking serve functions C programs call from a thread of their own.
//! The callbacks' adapters live with their kind (`handler.rs`,
//! `primitives.rs`, `middleware.rs`, `visibility.rs`, `auth.rs`) and the
//! JSON options in `options.rs`.

use std::ffi::{c_char, c_void};
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

use ferromcp_core::protocol::{Implementation, Tool};
use ferromcp_core::server::{Server, ServerOptions, ToolTaskOptions};
use ferromcp_core::transport::http::{HttpOptions, HttpServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::args::{
    check_out, definition, optional_object, optional_str, parse_json, parse_json_object,
    required_str, strings,
};
use crate::auth::{CallbackVerifier, VerifierSlot, ferromcp_scope_target, ferromcp_token_verifier};
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::{
    Castable, OwnershipBox, Userdata, ferromcp_userdata_free, free_box, give_string,
    set_boxed_mut_ptr, take_callback, try_from,
};
use crate::gateway::KeptMounts;
use crate::handler::{self, ferromcp_tool_callback};
use crate::middleware::{self, ferromcp_middleware_callback};
use crate::options::{bind_address, http_options, server_options};
use crate::panic::ffi_boundary;
use crate::primitives::{
    self, Readable, cache_hint, ferromcp_json_callback, ferromcp_resource_callback,
};
use crate::shutdown::ShutdownSignal;
use crate::visibility::{self, ferromcp_visibility_callback};

/// An MCP server: a set of tools and the functions that serve them.
///
/// Opaque. Created by ferromcp_server_new(), freed by ferromcp_server_free().
/// Functions taking a `const ferromcp_server *` may be called from several
/// threads at once (for example ferromcp_server_shutdown() while another
/// thread is inside ferromcp_server_serve_http()).
pub struct ferromcp_server {
    pub(crate) server: Server,
    shutdown: ShutdownSignal,
    serving: AtomicBool,
    /// The bound HTTP port while serving HTTP, else 0.
    http_port: AtomicU16,
    /// The C token verifier of protected servings (crate::auth).
    verifier: VerifierSlot,
    /// Mounts whose handle was freed, taken out when the server is freed
    /// (crate::gateway).
    pub(crate) kept_mounts: Arc<KeptMounts>,
}

impl Castable for ferromcp_server {
    type Ownership = OwnershipBox;
}

impl Drop for ferromcp_server {
    /// ferromcp_server_free(): the mounts left in place go with the server.
    /// Core would keep them, and through them the server, for as long as
    /// their upstreams listen.
    fn drop(&mut self) {
        self.kept_mounts.unmount_all();
    }
}

/// Clears `serving` (and the port) when a serve call ends, however it ends.
struct ServingGuard<'a>(&'a ferromcp_server);

impl Drop for ServingGuard<'_> {
    fn drop(&mut self) {
        self.0.http_port.store(0, Ordering::Release);
        self.0.serving.store(false, Ordering::Release);
    }
}

impl ferromcp_server {
    /// A server around core's `Server`, not serving yet.
    pub(crate) fn wrap(server: Server) -> Result<ferromcp_server, FfiError> {
        let shutdown = ShutdownSignal::new().map_err(ferromcp_core::Error::from)?;
        Ok(ferromcp_server {
            server,
            shutdown,
            serving: AtomicBool::new(false),
            http_port: AtomicU16::new(0),
            verifier: VerifierSlot::default(),
            kept_mounts: KeptMounts::new(),
        })
    }

    /// Runs `serve` on the shared runtime until it ends or shutdown is
    /// requested, blocking the calling thread.
    fn serve_blocking<F>(&self, serve: F) -> Result<(), FfiError>
    where
        F: Future<Output = Result<(), FfiError>>,
    {
        if tokio::runtime::Handle::try_current().is_ok() {
            // Blocking a runtime thread (a callback's host thread included)
            // would panic in tokio or starve other requests.
            return Err(FfiError::new(
                ferromcp_status::FERROMCP_INVALID_STATE,
                "cannot serve from a ferromcp callback or async runtime thread",
            ));
        }
        if self.serving.swap(true, Ordering::AcqRel) {
            return Err(FfiError::new(
                ferromcp_status::FERROMCP_INVALID_STATE,
                "the server is already serving",
            ));
        }
        let _guard = ServingGuard(self);
        ferromcp_core::runtime::get().block_on(serve)
    }

    async fn serve_http(&self, options: HttpOptions) -> Result<(), FfiError> {
        let stop = options.shutdown.clone();
        let http = HttpServer::bind(self.server.clone(), options).await?;
        let port = http.local_addr()?.port();
        self.http_port.store(port, Ordering::Release);
        // Cancelling `stop` is core's own shutdown path: stop accepting,
        // let connections finish their current response.
        self.until_shutdown(http.run(), stop).await
    }

    async fn serve_stdio(&self) -> Result<(), FfiError> {
        let stop = CancellationToken::new();
        // Cancelling `stop` is core's graceful path: stop reading, end
        // listen streams with their result, give requests in flight the
        // grace period.
        self.until_shutdown(self.server.serve_stdio_until(stop.clone()), stop)
            .await
    }

    /// Runs a serving (`run`) until it ends by itself or shutdown is
    /// requested; then cancels `stop`, the serving's own graceful path,
    /// and waits for it to finish.
    async fn until_shutdown(
        &self,
        run: impl Future<Output = Result<(), ferromcp_core::Error>>,
        stop: CancellationToken,
    ) -> Result<(), FfiError> {
        tokio::pin!(run);
        tokio::select! {
            result = &mut run => Ok(result?),
            requested = self.shutdown.requested() => {
                stop.cancel();
                requested.map_err(ferromcp_core::Error::from)?;
                Ok(run.await?)
            }
        }
    }
}

/// Creates a server with no tools.
///
/// - `name`, `version`: the server's identity (serverInfo), NUL-terminated
///   UTF-8, copied.
/// - `out_server`: receives the new server on success; untouched on failure.
///   The caller owns it and must release it with ferromcp_server_free().
///
/// Threads: may be called from any thread.
///
/// # Safety
/// Each pointer is NULL or valid: strings NUL-terminated, `out_server`
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_new(
    name: *const c_char,
    version: *const c_char,
    out_server: *mut *mut ferromcp_server,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all three): forwarded contract.
        let name = unsafe { required_str(name, "name") }?;
        let version = unsafe { required_str(version, "version") }?;
        check_out(out_server, "out_server")?;
        let server = ferromcp_server::wrap(Server::new(name, version))?;
        // SAFETY: checked non-NULL and writable per the contract.
        unsafe { set_boxed_mut_ptr(out_server, server) };
        Ok(())
    })
}

/// Creates a server with options (ferromcp_server_new() uses the defaults).
///
/// - `name`, `version`: the server's identity, copied.
/// - `options_json`: NULL (all defaults) or a JSON object, copied, with any of
///   - `"instructions"`: guidance for the model, returned by discovery;
///   - `"pageSize"`: items per page of every list result (default 100);
///   - `"sealKey"`: a secret string protecting cursors and `requestState`;
///     give every replica behind a load balancer the same one (default:
///     the keys of `FERROMCP_SEAL_KEYS`, else a random key per server);
///   - `"sealKeys"`: instead, base64 secrets of at least 16 bytes, the
///     first sealing and every one opening (to rotate, put the new key
///     first), e.g. `["c2VjcmV0LW9mLTIwMjYtMTI="]`;
///   - `"requestStateTtlMs"`: how long a `requestState` stays valid
///     (default 600000);
///   - `"includeServerInfo"`: whether results carry serverInfo in `_meta`
///     (default true);
///   - `"tasks"`: the tasks extension's settings, `{"ttlMs":3600000,
///     "keepFinishedMs":60000,"pollIntervalMs":500,"maxTasks":10000,
///     "maxTasksPerClient":1000}` (the defaults; `"ttlMs":null` keeps
///     finished tasks until the limits push them out; past a limit,
///     creating a task fails with a message naming it; `"store"`:
///     `"memory"` or a `redis://` URL where every replica finds the tasks,
///     default `FERROMCP_TASK_STORE`, else memory);
///   - `"eventBus"`: a `redis://host:port` URL where replicas tell each
///     other of changes (default: `FERROMCP_EVENT_BUS`, else none);
///   - `"replica"`: this replica's name (letters, digits, `-`, `_`): legacy
///     session ids start with it and a dot, for a load balancer to route
///     on (default: `FERROMCP_REPLICA`). See docs/DEPLOYING.md.
/// - `out_server`: receives the server; free it with ferromcp_server_free().
///
/// Returns FERROMCP_INVALID_JSON for unparsable text, a non-object, an
/// unknown member or a member of the wrong type; FERROMCP_NULL_ARGUMENT,
/// FERROMCP_INVALID_UTF8.
///
/// Threads: any thread.
///
/// ```c
/// ferromcp_server *server = NULL;
/// ferromcp_server_new_with_options("demo", "1.0.0",
///     "{\"instructions\":\"Use the add tool for sums.\",\"pageSize\":50}", &server);
/// ```
///
/// # Safety
/// Each pointer is NULL or valid: strings NUL-terminated, `out_server`
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_new_with_options(
    name: *const c_char,
    version: *const c_char,
    options_json: *const c_char,
    out_server: *mut *mut ferromcp_server,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let name = unsafe { required_str(name, "name") }?;
        let version = unsafe { required_str(version, "version") }?;
        let options = match unsafe { optional_str(options_json, "options_json") }? {
            Some(text) => server_options(&parse_json_object(text, "options_json")?)?,
            None => ServerOptions::default(),
        };
        check_out(out_server, "out_server")?;
        let server = ferromcp_server::wrap(Server::with_options(
            Implementation::new(name, version),
            options,
        ))?;
        // SAFETY: checked non-NULL and writable per the contract.
        unsafe { set_boxed_mut_ptr(out_server, server) };
        Ok(())
    })
}

/// Frees a server and drops its tools (running their finalizers, except for
/// tools still used by a request that has not finished: theirs run when it
/// finishes).
///
/// - `server`: a server from ferromcp_server_new(), or NULL (then nothing
///   happens). Invalid after the call.
///
/// When: not while any other function is using the server; in particular,
/// stop a serve call with ferromcp_server_shutdown() and wait for it to
/// return first.
///
/// # Safety
/// `server` is NULL or a live server no other thread is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_free(server: *mut ferromcp_server) {
    // SAFETY: NULL or allocated by ferromcp_server_new; freed once per
    // the contract.
    unsafe { free_box(server) }
}

/// Registers a tool, or replaces the tool with the same name (dropping the
/// old one, which runs its finalizer). Tools may be added while serving.
///
/// - `server`: the server, borrowed.
/// - `name`: the tool name, NUL-terminated UTF-8, copied.
/// - `description`: NUL-terminated UTF-8 for the model, copied; NULL for none.
/// - `input_schema_json`: the arguments' JSON Schema, a JSON object as
///   NUL-terminated UTF-8 text, copied. ferromcp validates arguments against
///   it before calling `callback`.
/// - `output_schema_json`: JSON Schema of the structured result, or NULL if
///   the tool returns no structured content. With one, values given to
///   ferromcp_call_respond() become structuredContent.
/// - `callback`: the implementation (see ferromcp_tool_callback). Not NULL.
/// - `userdata`: passed to every `callback` call; may be NULL. On success
///   ferromcp holds it until the tool is dropped; on failure it stays the
///   caller's and `userdata_free` is not called.
/// - `userdata_free`: called exactly once with `userdata` when the tool is
///   dropped (see ferromcp_userdata_free); NULL if there is nothing to free.
///
/// Returns FERROMCP_INVALID_JSON for unparsable or non-object schemas and
/// FERROMCP_INVALID_DEFINITION when ferromcp rejects the tool (for example a
/// schema that is not valid JSON Schema).
///
/// Threads: may be called from any thread, also while another thread serves.
///
/// # Safety
/// Each pointer is NULL or valid; strings NUL-terminated.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)] // one C call registers one tool
pub unsafe extern "C" fn ferromcp_server_add_tool(
    server: *const ferromcp_server,
    name: *const c_char,
    description: *const c_char,
    input_schema_json: *const c_char,
    output_schema_json: *const c_char,
    callback: ferromcp_tool_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    // SAFETY: the same contract, forwarded.
    unsafe {
        ferromcp_server_add_tool_ex(
            server,
            name,
            description,
            input_schema_json,
            output_schema_json,
            0,
            callback,
            userdata,
            userdata_free,
        )
    }
}

/// Flags for ferromcp_server_add_tool_ex().
///
/// FERROMCP_TOOL_NONBLOCKING: the callback promises not to block (it
/// completes the call at once, or hands it to a thread of its own and
/// returns). It is then called on the ferromcp thread serving the request,
/// saving two thread switches per call. A callback registered this way that
/// does block stalls other requests for as long as it blocks.
pub const FERROMCP_TOOL_NONBLOCKING: u32 = 1;

/// Flag for ferromcp_server_add_tool_ex() / _json(): a call from a client
/// that declared the tasks extension (SEP-2663) becomes a task. The client
/// gets a task handle at once and follows it with `tasks/get`; the callback
/// runs as usual, its asks (ferromcp_context_ask()) wait for answers sent
/// with `tasks/update`, and `tasks/cancel` cancels it like a cancelled
/// request (ferromcp_context_is_cancelled(), ferromcp_context_on_cancel()).
/// Other clients get the plain result.
pub const FERROMCP_TOOL_TASK_OPTIONAL: u32 = 2;

/// Flag: like FERROMCP_TOOL_TASK_OPTIONAL, but a client that did not declare
/// the extension is refused with -32021 before the callback runs.
pub const FERROMCP_TOOL_TASK_REQUIRED: u32 = 4;

/// Flag, with one of the two above: the call becomes a task only when the
/// callback calls ferromcp_context_start_task(), so it can ask the client
/// first (multi round-trip).
pub const FERROMCP_TOOL_TASK_BY_CALLBACK: u32 = 8;

/// What a tool's `flags` ask for: non-blocking, and its task settings;
/// unknown bits and contradictions are refused.
fn tool_flags(flags: u32) -> Result<(bool, ToolTaskOptions), FfiError> {
    let known = FERROMCP_TOOL_NONBLOCKING
        | FERROMCP_TOOL_TASK_OPTIONAL
        | FERROMCP_TOOL_TASK_REQUIRED
        | FERROMCP_TOOL_TASK_BY_CALLBACK;
    let invalid = |why: String| FfiError::new(ferromcp_status::FERROMCP_INVALID_ARGUMENT, why);
    if flags & !known != 0 {
        return Err(invalid(format!("unknown flags {:#x}", flags & !known)));
    }
    let support = match (
        flags & FERROMCP_TOOL_TASK_OPTIONAL != 0,
        flags & FERROMCP_TOOL_TASK_REQUIRED != 0,
    ) {
        (false, false) => None,
        (true, false) => Some("optional"),
        (false, true) => Some("required"),
        (true, true) => {
            return Err(invalid(
                "FERROMCP_TOOL_TASK_OPTIONAL and FERROMCP_TOOL_TASK_REQUIRED exclude each other"
                    .into(),
            ));
        }
    };
    let start = (flags & FERROMCP_TOOL_TASK_BY_CALLBACK != 0).then_some("handler");
    let tasks = ToolTaskOptions::from_names(support, start).map_err(invalid)?;
    Ok((flags & FERROMCP_TOOL_NONBLOCKING != 0, tasks))
}

/// ferromcp_server_add_tool() with flags (FERROMCP_TOOL_NONBLOCKING, the
/// FERROMCP_TOOL_TASK_* flags; 0 behaves exactly like
/// ferromcp_server_add_tool()).
///
/// Returns FERROMCP_INVALID_ARGUMENT for unknown flag bits, and otherwise
/// what ferromcp_server_add_tool() returns. Ownership, callback and
/// thread-safety rules are those of ferromcp_server_add_tool(), except that a
/// FERROMCP_TOOL_NONBLOCKING callback runs on a ferromcp runtime thread.
///
/// # Safety
/// As ferromcp_server_add_tool().
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_add_tool_ex(
    server: *const ferromcp_server,
    name: *const c_char,
    description: *const c_char,
    input_schema_json: *const c_char,
    output_schema_json: *const c_char,
    flags: u32,
    callback: ferromcp_tool_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    // SAFETY (every argument): forwarded contract; `tool` runs during
    // this call.
    let tool =
        || unsafe { tool_from_parts(name, description, input_schema_json, output_schema_json) };
    ffi_boundary(|| unsafe { add_tool(server, flags, tool, callback, userdata, userdata_free) })
}

/// The tool ferromcp_server_add_tool_ex() describes by its parts.
///
/// # Safety
/// Each pointer is NULL or NUL-terminated.
unsafe fn tool_from_parts(
    name: *const c_char,
    description: *const c_char,
    input_schema_json: *const c_char,
    output_schema_json: *const c_char,
) -> Result<Tool, FfiError> {
    // SAFETY (all): forwarded contract.
    let name = unsafe { required_str(name, "name") }?;
    let description = unsafe { optional_str(description, "description") }?;
    let input_schema = unsafe { required_str(input_schema_json, "input_schema_json") }?;
    let output_schema = unsafe { optional_str(output_schema_json, "output_schema_json") }?;
    let mut tool = Tool::new(
        name,
        Value::Object(parse_json_object(input_schema, "input_schema_json")?),
    );
    if let Some(description) = description {
        tool = tool.with_description(description);
    }
    if let Some(schema) = output_schema {
        tool = tool.with_output_schema(Value::Object(parse_json_object(
            schema,
            "output_schema_json",
        )?));
    }
    Ok(tool)
}

/// Registers a tool for ferromcp_server_add_tool_ex() and
/// ferromcp_server_add_tool_json(), which differ only in how the tool's
/// definition is read: `tool`, called once the flags and the server are
/// checked.
///
/// # Safety
/// `server` is NULL or live.
unsafe fn add_tool(
    server: *const ferromcp_server,
    flags: u32,
    tool: impl FnOnce() -> Result<Tool, FfiError>,
    callback: ferromcp_tool_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> Result<(), FfiError> {
    let (nonblocking, tasks) = tool_flags(flags)?;
    // SAFETY: forwarded contract.
    let server = unsafe { try_from(server, "server") }?;
    let tool = tool()?;
    let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
    handler::add_tool(&server.server, tool, callback, userdata, nonblocking, tasks)
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
    // SAFETY (all): forwarded contract; `tool` runs during this call.
    let tool = || unsafe { definition(tool_json, "tool_json") };
    ffi_boundary(|| unsafe { add_tool(server, flags, tool, callback, userdata, userdata_free) })
}

/// Publishes every skill under a directory (the skills extension,
/// SEP-2640): each directory holding a `SKILL.md` (YAML frontmatter with
/// `name` equal to the directory's name and a `description`) is a skill,
/// its path below `dir` its `skill://` path; its files become resources,
/// read once now (hidden files and symbolic links skipped), and
/// `skills/list` lists it with each file's digest and size. The server
/// then declares the extension.
///
/// - `server`: borrowed.
/// - `dir`: the directory, NUL-terminated UTF-8, copied.
/// - `out_uris_json`: NULL, or receives the published `SKILL.md` URIs as a
///   JSON array (new text; free it with ferromcp_string_free()).
///
/// Returns FERROMCP_INVALID_DEFINITION naming what is wrong (an unreadable
/// directory, a skill without frontmatter, a name that does not match its
/// directory, more than 512 files or 16 MiB in a skill);
/// FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8.
///
/// Threads: any thread, also while serving.
///
/// # Safety
/// `server` NULL or live; `dir` NULL or NUL-terminated; `out_uris_json`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_add_skills_dir(
    server: *const ferromcp_server,
    dir: *const c_char,
    out_uris_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        let dir = unsafe { required_str(dir, "dir") }?;
        let published = server.server.add_skills_dir(dir)?;
        if out_uris_json.is_null() {
            return Ok(());
        }
        give_string(Value::from(published).to_string(), out_uris_json)
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
    // SAFETY (all): forwarded contract; `resource` runs during this call.
    let resource = || unsafe { definition(resource_json, "resource_json") }.map(Readable::Resource);
    ffi_boundary(|| unsafe {
        add_read(
            server,
            resource,
            cache_json,
            callback,
            userdata,
            userdata_free,
        )
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
    // SAFETY (all): forwarded contract; `template` runs during this call.
    let template = || unsafe { definition(template_json, "template_json") }.map(Readable::Template);
    ffi_boundary(|| unsafe {
        add_read(
            server,
            template,
            cache_json,
            callback,
            userdata,
            userdata_free,
        )
    })
}

/// Registers what a resource callback reads for
/// ferromcp_server_add_resource() and
/// ferromcp_server_add_resource_template(), which differ only in the
/// definition: `readable`, called once the server is checked.
///
/// # Safety
/// `server` is NULL or live; `cache_json` NULL or NUL-terminated.
unsafe fn add_read(
    server: *const ferromcp_server,
    readable: impl FnOnce() -> Result<Readable, FfiError>,
    cache_json: *const c_char,
    callback: ferromcp_resource_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> Result<(), FfiError> {
    // SAFETY (both): forwarded contract.
    let server = unsafe { try_from(server, "server") }?;
    let readable = readable()?;
    let cache = cache_hint(unsafe { optional_str(cache_json, "cache_json") }?)?;
    let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
    primitives::add_read(&server.server, readable, cache, callback, userdata)
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
        let server = unsafe { try_from(server, "server") }?;
        let prompt = unsafe { definition(prompt_json, "prompt_json") }?;
        let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
        primitives::add_prompt(&server.server, prompt, callback, userdata)
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
        let server = &unsafe { try_from(server, "server") }?.server;
        let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
        primitives::set_completion(server, callback, userdata);
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
    remove: impl FnOnce(&Server, &str) -> bool,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
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
        let server = unsafe { try_from(server, "server") }?;
        let uri = unsafe { required_str(uri, "uri") }?;
        server.server.notify_resource_updated(uri);
        Ok(())
    })
}

/// Sets the token verifier that checks bearer tokens when the server is
/// served with an `"auth"` option that has no `"jwt"` member (see
/// ferromcp_server_serve_http_ex()). Replaces (and frees) a verifier set
/// before; servings already running keep the one they started with.
///
/// - `verifier`: see ferromcp_token_verifier; NULL removes the verifier.
/// - `userdata`: passed to every call; may be NULL. ferromcp holds it
///   until the verifier is replaced, the server is freed and no serving
///   uses it any more.
/// - `userdata_free`: called exactly once with `userdata` then; may be NULL.
///
/// ```c
/// static void check(void *userdata, const char *token, size_t len, ferromcp_call *call) {
///     if (strcmp(token, "let-me-in") == 0)
///         ferromcp_call_accept_token(call,
///             "{\"sub\":\"alice\",\"scope\":\"files:read\",\"aud\":\"http://127.0.0.1:8000/mcp\"}");
///     else
///         ferromcp_call_reject_token(call, "unknown token");
/// }
/// ferromcp_server_set_token_verifier(server, check, NULL, NULL);
/// ```
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT. Threads: any thread.
///
/// # Safety
/// `server` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_set_token_verifier(
    server: *const ferromcp_server,
    verifier: ferromcp_token_verifier,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        server.verifier.set(verifier.map(|callback| {
            CallbackVerifier::new(callback, Userdata::new(userdata, userdata_free))
        }));
        Ok(())
    })
}

/// Requires OAuth scopes of the bearer token of every request that uses a
/// tool, resource, resource template or prompt, when the server is served
/// with `"auth"` (a token without them gets HTTP 403 `insufficient_scope`).
///
/// - `target`, `key`: the kind and its name (a resource's URI, a template's
///   URI template), NUL-terminated.
/// - `scopes_json`: a JSON list of scope strings, e.g.
///   `["files:write"]`; `[]` removes the requirement.
///
/// ```c
/// ferromcp_server_require_scopes(server, FERROMCP_SCOPE_TOOL, "delete_file", "[\"files:write\"]");
/// ```
///
/// Returns FERROMCP_OK, FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_JSON.
/// Threads: any thread.
///
/// # Safety
/// `server` NULL or live; strings NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_require_scopes(
    server: *const ferromcp_server,
    target: ferromcp_scope_target,
    key: *const c_char,
    scopes_json: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        let key = unsafe { required_str(key, "key") }?;
        let scopes = unsafe { required_str(scopes_json, "scopes_json") }?;
        let scopes = strings(&parse_json(scopes, "scopes_json")?, "scopes_json", "scopes")?;
        server.server.require_scopes(target.into(), key, scopes);
        Ok(())
    })
}

/// Adds a middleware link written in C at the end of the server's chain:
/// every request the server answers (discovery, lists, tool calls,
/// resource reads, prompts, completion; whatever the transport, HTTP, stdio
/// or in memory) goes through the links in the order they were added, the
/// first added seeing the request first and its result last, and then to
/// its primitive. A link may read the request, change its params, call the
/// rest of the chain (ferromcp_next_run()) or not (short-circuit: answer
/// with an error or a result of its own), and change what comes back.
///
/// - `server`: borrowed.
/// - `callback`: the link (see ferromcp_middleware_callback). Not NULL.
/// - `userdata`: passed to every call; may be NULL. On success ferromcp
///   holds it until the server is freed and no request uses the link any
///   more; on failure it stays the caller's and `userdata_free` is not
///   called.
/// - `userdata_free`: called exactly once with `userdata` then (see
///   ferromcp_userdata_free); NULL if there is nothing to free.
///
/// A link cannot be removed. Each C link hands every request to a host
/// thread and the rest of the chain back to a runtime thread while the
/// callback waits there (a link waiting in ferromcp_next_run() holds its
/// host thread, as a blocked tool callback does; the pool has at most 512);
/// with no links, requests go straight to their primitive.
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT.
///
/// Threads: any thread, also while serving (requests already in the chain
/// finish without the new link).
///
/// ```c
/// // Refuses the "delete" tool to every client but "admin-console".
/// static void guard(void *userdata, const ferromcp_middleware_request *request,
///                   ferromcp_next *next, ferromcp_call *call) {
///     (void)userdata;
///     const char *name = ferromcp_middleware_request_name(request);
///     char *client = NULL;
///     ferromcp_json_get(ferromcp_middleware_request_meta_json(request), "/clientInfo/name",
///                       &client);
///     bool refuse = name != NULL && strcmp(name, "delete") == 0 &&
///                   (client == NULL || strcmp(client, "admin-console") != 0);
///     ferromcp_string_free(client);
///     if (refuse) {
///         ferromcp_call_fail_jsonrpc(call, -32602, "delete is not allowed", NULL);
///         return;
///     }
///     char *result = NULL;
///     if (ferromcp_next_run(next, NULL, &result) == FERROMCP_OK) {
///         ferromcp_call_respond(call, result);
///         ferromcp_string_free(result);
///     } else {
///         ferromcp_call_fail_jsonrpc(call, ferromcp_last_error_code(),
///                                    ferromcp_last_error_message(),
///                                    ferromcp_last_error_data_json());
///     }
/// }
/// ferromcp_server_add_middleware(server, guard, NULL, NULL);
/// ```
///
/// # Safety
/// `server` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_add_middleware(
    server: *const ferromcp_server,
    callback: ferromcp_middleware_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
        middleware::add_link(&server.server, callback, userdata);
        Ok(())
    })
}

/// Adds one of ferromcp's ready-made middleware links at the end of the
/// server's chain (in order with those of ferromcp_server_add_middleware()).
///
/// - `server`: borrowed.
/// - `name`: which, NUL-terminated:
///   - `"logRequests"`: each request's method, tool or prompt name,
///     outcome and duration, logged when it ends as `tracing` events on
///     the `ferromcp::requests` target (info; failures at warn). The C
///     library installs no `tracing` subscriber: the events are seen when
///     the library is part of a Rust program that installs one; a C
///     program logs with a link of its own (see ferromcp_next_run()).
///   - `"maskErrors"`: internal errors (-32603) reach the client as
///     `"Internal error"` without data (the detail goes to the log);
///     other errors, and tool results flagged `isError`, pass unchanged.
///   - `"rateLimit"`: a token bucket per client (its auth subject or OAuth
///     client id when authenticated, else its clientInfo): `burst`
///     requests at once and `perSecond` more each second; past that a
///     request is refused before it runs with error -32000 and
///     `data.retryAfterMs`. At most `maxClients` buckets are kept (the
///     longest idle goes first).
/// - `settings_json`: NULL or a JSON object, copied: none for
///   `"logRequests"` and `"maskErrors"` (NULL or `{}`); for `"rateLimit"`
///   `{"perSecond": number >= 0, "burst": integer >= 1, "maxClients":
///   integer >= 1 (optional, default 10000)}`.
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_ARGUMENT for an unknown `name`;
/// FERROMCP_INVALID_JSON for settings that are not such an object (an
/// unknown member, a missing or out-of-range one; the message names it);
/// FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8. Nothing is added on
/// failure.
///
/// Threads: any thread, also while serving.
///
/// ```c
/// ferromcp_server_add_builtin_middleware(server, "rateLimit", "{\"perSecond\":10,\"burst\":20}");
/// ferromcp_server_add_builtin_middleware(server, "maskErrors", NULL);
/// ```
///
/// # Safety
/// `server` NULL or live; `name` and `settings_json` NULL or
/// NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_add_builtin_middleware(
    server: *const ferromcp_server,
    name: *const c_char,
    settings_json: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        let name = unsafe { required_str(name, "name") }?;
        let settings = unsafe { optional_object(settings_json, "settings_json") }?;
        middleware::add_builtin(&server.server, name, &settings)
    })
}

/// Sets the rule deciding which tools, prompts, resources and resource
/// templates each caller sees, replacing an earlier rule (whose finalizer
/// then runs). Lists leave out what the rule hides, and a call, read,
/// prompt get or completion of a hidden item fails exactly as one of an
/// unknown item does, so nothing tells a caller it exists. With a rule set,
/// list results are marked `"cacheScope":"private"`.
///
/// - `server`: borrowed.
/// - `callback`: the rule (see ferromcp_visibility_callback: asked on a
///   host thread, once per item a request needs judged, with one meta
///   document per request; it may call back into the server, and should
///   not block long). Not NULL; ferromcp_server_clear_visibility() removes
///   the rule.
/// - `userdata`: passed to every call; may be NULL. On success ferromcp
///   holds it until the rule is replaced or cleared or the server freed;
///   on failure it stays the caller's.
/// - `userdata_free`: called exactly once with `userdata` then: at once,
///   on the thread that replaces or clears the rule (unless the rule is
///   judging a request at that moment, the rule's own call included: then
///   on a ferromcp thread once that judging ends, before the request is
///   answered); after ferromcp_server_free(), once nothing uses the server
///   any more, on any thread (see ferromcp_userdata_free). May be NULL.
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT.
///
/// Threads: any thread, also while serving, the rule itself included.
///
/// ```c
/// // Only the "admin-console" client sees the tool "delete".
/// static bool visible(void *userdata, const char *meta_json, int kind, const char *key) {
///     (void)userdata;
///     if (kind != FERROMCP_VISIBLE_TOOL || strcmp(key, "delete") != 0)
///         return true;
///     char *client = NULL;
///     bool admin = ferromcp_json_get(meta_json, "/clientInfo/name", &client) == FERROMCP_OK &&
///                  strcmp(client, "admin-console") == 0;
///     ferromcp_string_free(client);
///     return admin;
/// }
/// ferromcp_server_set_visibility(server, visible, NULL, NULL);
/// ```
///
/// # Safety
/// `server` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_set_visibility(
    server: *const ferromcp_server,
    callback: ferromcp_visibility_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
        visibility::set_rule(&server.server, callback, userdata);
        Ok(())
    })
}

/// Removes the visibility rule (its finalizer runs): every caller sees
/// everything again. Without a rule it does nothing.
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT.
///
/// Threads: any thread, also while serving, the rule itself included (see
/// ferromcp_server_set_visibility() for when the finalizer runs then).
///
/// # Safety
/// `server` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_clear_visibility(
    server: *const ferromcp_server,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        server.server.clear_visibility();
        Ok(())
    })
}

/// Serves MCP over this process's stdin and stdout, blocking the calling
/// thread until stdin reaches end of file (after answering the requests
/// already read) or ferromcp_server_shutdown() is called. Shutdown is
/// graceful: no more input is read, open subscriptions/listen streams end
/// with their completion result, and requests in flight get 10 seconds to
/// finish before they are cancelled. At most 64 requests run at once and
/// 256 answers wait to be written: while that is full, stdin is not read.
///
/// While serving, stdout carries only MCP messages: the program must not
/// print anything else to it (log to stderr).
///
/// - `server`: the server, borrowed; it must stay alive until this returns.
///
/// Returns FERROMCP_OK at end of input or on shutdown;
/// FERROMCP_CONNECTION_CLOSED if the client closed stdout (its session is
/// over: a program would normally exit quietly); FERROMCP_IO if stdin or
/// stdout fails otherwise; FERROMCP_INVALID_STATE if the server is already
/// serving or this is called from a ferromcp callback.
///
/// Threads: any thread the caller owns. One serve call per server at a time.
///
/// # Safety
/// `server` is NULL or a live server.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_serve_stdio(
    server: *const ferromcp_server,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        server.serve_blocking(server.serve_stdio())
    })
}

/// Serves MCP over Streamable HTTP at http://host:port/mcp, blocking the
/// calling thread until ferromcp_server_shutdown() is called (from another
/// thread or a signal handler). Shutdown is graceful: no new connections
/// are accepted, open subscriptions/listen streams end with their
/// completion result, and requests in flight get 10 seconds to finish.
///
/// - `server`: the server, borrowed; it must stay alive until this returns.
/// - `host`: NUL-terminated address or host name to listen on, for example
///   "127.0.0.1" (loopback only; then only loopback Host and Origin headers
///   are accepted, against DNS rebinding) or "0.0.0.0".
/// - `port`: TCP port; 0 picks a free one (see ferromcp_server_http_port()).
///
/// Returns FERROMCP_OK after shutdown; FERROMCP_INVALID_ARGUMENT if `host`
/// does not resolve; FERROMCP_IO if the port cannot be bound;
/// FERROMCP_INVALID_STATE as for ferromcp_server_serve_stdio().
///
/// Threads: any thread the caller owns. One serve call per server at a time.
///
/// # Safety
/// `server` is NULL or a live server; `host` is NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_serve_http(
    server: *const ferromcp_server,
    host: *const c_char,
    port: u16,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        let host = unsafe { required_str(host, "host") }?;
        let options = HttpOptions {
            bind: bind_address(host, port)?,
            shutdown: CancellationToken::new(),
            ..HttpOptions::default()
        };
        server.serve_blocking(server.serve_http(options))
    })
}

/// ferromcp_server_serve_http() with HTTP options.
///
/// - `options_json`: NULL (defaults) or a JSON object with any of
///   - `"path"`: the MCP endpoint's path (default "/mcp");
///   - `"allowedHosts"`: Host header names (without port) accepted, against
///     DNS rebinding (default: the loopback names when listening on
///     loopback, any host otherwise);
///   - `"allowedOrigins"`: Origin values accepted, exactly (default:
///     loopback origins only);
///   - `"limits"`: an object with any of (a missing or null member keeps
///     its default; snake_case names are accepted too)
///     - `"maxConnections"`: connections served at once (default 1024,
///       lowered to fit the descriptor limit). At the cap a new client is
///       admitted by closing a connection doing nothing (never used first,
///       then idle, oldest first); only when all are busy does it wait;
///     - `"maxConnectionsPerAddress"`: connections from one IP address
///       (default: no limit). Over it the address's own oldest idle
///       connection is closed, or the new one refused with 429. Behind a
///       reverse proxy every client has the proxy's address;
///     - `"headerReadTimeout"`: seconds for a request head to arrive after
///       its first byte, and for a new connection to send its first byte
///       (default 10);
///     - `"bodyReadTimeout"`: seconds for a body after its head (default 30);
///     - `"idleTimeout"`: seconds a kept-alive connection may wait for its
///       next request (default 60); a streaming response is never cut;
///     - `"maxBodyBytes"`: largest request body (default 16777216);
///     - `"maxSessions"`: legacy 2025-11-25 sessions at once (default
///       10000);
///     - `"maxSessionsPerAddress"`: legacy sessions of one client address
///       (default 64; behind a reverse proxy, raise it);
///   - `"health"`: true to serve `GET /healthz` (200 while serving) and
///     `GET /readyz` (200, then 503 once shutdown begins), default false;
///   - `"drainDelayMs"`: how long a server told to shut down
///     (ferromcp_server_shutdown()) goes on serving, unready, before it
///     stops accepting (default 0): time for a load balancer to notice;
///   - `"tls"`: serve `https://`: `{"certFile":"cert.pem","keyFile":
///     "key.pem"}` (PEM, read when serving starts: a bad file fails the
///     call with FERROMCP_HTTP, the message naming the file; read again
///     when they change), with `"clientCaFile"` to require client certificates
///     it signed and `"clientAuthOptional":true` to serve clients without
///     one too.
///
/// Returns what ferromcp_server_serve_http() returns, and
/// FERROMCP_INVALID_JSON for bad options (unknown members included; the
/// error message, ferromcp_last_error_message(), names the member).
///
/// ```c
/// ferromcp_server_serve_http_ex(server, "127.0.0.1", 8000,
///     "{\"limits\":{\"maxConnectionsPerAddress\":32,\"idleTimeout\":30}}");
/// ```
///
/// Threads: any thread the caller owns. One serve call per server at a time.
///
/// # Safety
/// `server` NULL or live; strings NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_serve_http_ex(
    server: *const ferromcp_server,
    host: *const c_char,
    port: u16,
    options_json: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        const NAME: &str = "options_json";
        // SAFETY (all): forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        let host = unsafe { required_str(host, "host") }?;
        let map = unsafe { optional_object(options_json, NAME) }?;
        let options = http_options(&map, host, port, &server.verifier)?;
        server.serve_blocking(server.serve_http(options))
    })
}

/// The TCP port ferromcp_server_serve_http() is listening on (useful after
/// asking for port 0).
///
/// - `server`: the server, borrowed.
/// - `out_port`: receives the port on success; untouched on failure.
///
/// Returns FERROMCP_INVALID_STATE when the server is not (yet) listening:
/// poll until it is.
///
/// Threads: any thread; meant for a thread other than the serving one.
///
/// # Safety
/// `server` is NULL or a live server; `out_port` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_http_port(
    server: *const ferromcp_server,
    out_port: *mut u16,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        check_out(out_port, "out_port")?;
        match server.http_port.load(Ordering::Acquire) {
            0 => Err(FfiError::new(
                ferromcp_status::FERROMCP_INVALID_STATE,
                "the server is not listening on HTTP",
            )),
            port => {
                // SAFETY: checked non-NULL and writable per the contract.
                unsafe { out_port.write(port) };
                Ok(())
            }
        }
    })
}

/// Asks the running serve call to return after a graceful shutdown (HTTP:
/// stop accepting connections; stdio: stop reading; both: end listen
/// streams with their completion result and give requests in flight 10
/// seconds). If no serve call is running, the next one returns at once.
/// Requesting more than once before it takes effect is the same as
/// requesting once.
///
/// - `server`: the server, borrowed.
///
/// Threads: any thread. Async-signal-safe when `server` is not NULL: it may
/// be called from a SIGINT/SIGTERM handler (it performs a single write(2)).
/// The library installs no signal handler of its own: the host decides
/// which signals stop the server, e.g.
///
/// ```c
/// static ferromcp_server *g_server;
/// static void on_signal(int signo) { (void)signo; ferromcp_server_shutdown(g_server); }
/// // in main:
/// struct sigaction action = {0};
/// action.sa_handler = on_signal;
/// sigaction(SIGTERM, &action, NULL);
/// ```
///
/// # Safety
/// `server` is NULL or a live server.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_shutdown(
    server: *const ferromcp_server,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        server.shutdown.raise();
        Ok(())
    })
}
