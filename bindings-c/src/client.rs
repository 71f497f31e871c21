//! The C client: core's [`ferromcp_core::client::Client`] behind an opaque
//! `ferromcp_client` handle, with blocking calls that return JSON text.
//!
//! Everything protocol stays in core (era detection, `_meta`, MRTR rounds,
//! header mirroring, pagination cursors, cancellation); this file converts
//! C strings and JSON text, plugs C callbacks in as the elicitation,
//! sampling and roots handlers through the binding's one call handle
//! ([`crate::host_call`]), and maps core errors to statuses
//! ([`crate::error`]).

use serde::Serialize;
use serde_json::{Map, Value};
use std::ffi::{CString, c_char, c_void};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ferromcp_core::client::complete_params;
use ferromcp_core::client::{CallOptions, Client, ClientOptions, ProgressUpdate, StdioCommand};
use ferromcp_core::host::input::input_answer;
use ferromcp_core::host::settings;
use ferromcp_core::protocol::{
    CreateMessageResult, ElicitResult, InputKind, ListRootsResult, methods,
};
use ferromcp_core::server::HandlerError;
use tokio_util::sync::CancellationToken;

use crate::args::{
    check_out, optional_object, optional_str, parse_json, parse_json_object, required_str,
};
use crate::context::ferromcp_input_kind;
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::{
    Castable, OwnershipBox, Userdata, ferromcp_userdata_free, free_box, give_string,
    set_boxed_mut_ptr, take_callback, try_from, try_from_mut,
};
use crate::host_call::{self, CallPtr, ferromcp_call, take_call};
use crate::oauth::ferromcp_oauth_options;
use crate::panic::ffi_boundary;
use crate::threads::{C_THREADS, block};

/// An MCP client connected to one server (over stdio or Streamable HTTP).
///
/// Opaque. Created by ferromcp_client_connect_stdio() or
/// ferromcp_client_connect_http(), freed by ferromcp_client_free(). One
/// client may be used from several threads at once: each blocking call is
/// its own request.
pub struct ferromcp_client {
    pub(crate) client: Client,
}

impl Castable for ferromcp_client {
    type Ownership = OwnershipBox;
}

impl Drop for ferromcp_client {
    /// Closes the connection (ferromcp_client_free()): at once on a runtime
    /// thread, which must not block, and otherwise waiting for it.
    fn drop(&mut self) {
        if tokio::task::try_id().is_some() {
            let client = self.client.clone();
            ferromcp_core::runtime::handle().spawn(async move { client.close().await });
        } else {
            ferromcp_core::runtime::get().block_on(self.client.close());
        }
    }
}

/// Settings for a client, built before connecting: JSON options plus the
/// C callbacks that answer the server's elicitation, sampling and roots
/// requests.
///
/// Opaque. Created by ferromcp_client_options_new(), freed by
/// ferromcp_client_options_free(). A connect call copies what it needs, so
/// the options may be freed (or reused for another client) right after.
/// Not to be changed from two threads at once.
pub struct ferromcp_client_options {
    options: ClientOptions,
}

impl Castable for ferromcp_client_options {
    type Ownership = OwnershipBox;
}

/// A cancellation switch for calls in progress: firing it makes every
/// call that was given it return FERROMCP_REQUEST_CANCELLED (the server is
/// told the request was cancelled).
///
/// Opaque. Created by ferromcp_cancel_handle_new(), freed by
/// ferromcp_cancel_handle_free() (after every call using it returned).
/// ferromcp_cancel_handle_cancel() may be called from any thread, any
/// number of times; once fired it stays fired.
pub struct ferromcp_cancel_handle {
    pub(crate) token: CancellationToken,
}

impl Castable for ferromcp_cancel_handle {
    type Ownership = OwnershipBox;
}

/// Answers one request the server sends to the client (`elicitation/create`,
/// `sampling/createMessage` or `roots/list`), both in a 2026-07-28
/// `input_required` round and as a live request of a 2025-11-25 session.
///
/// - `userdata`: the pointer given to ferromcp_client_options_on_input().
/// - `kind`: which request this is.
/// - `params_json`, `params_len`: the request's params, compact UTF-8 JSON
///   text of `params_len` bytes followed by a NUL (for elicitation:
///   `{"message":..., "requestedSchema":{...}}`). Owned by ferromcp, valid
///   only until the callback returns.
/// - `call`: the handle to answer with. Ownership passes to the callback,
///   which completes it exactly once, now or later from any thread:
///   ferromcp_call_respond() with the result (an ElicitResult such as
///   `{"action":"accept","content":{...}}`, a CreateMessageResult, a
///   ListRootsResult `{"roots":[...]}`), or ferromcp_call_fail_jsonrpc()
///   to refuse with a JSON-RPC error.
///
/// Threads: called on a ferromcp host thread (never an async runtime
/// worker), so it may block, and may run concurrently with itself.
pub type ferromcp_client_input_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        kind: ferromcp_input_kind,
        params_json: *const c_char,
        params_len: usize,
        call: *mut ferromcp_call,
    ),
>;

/// Receives the progress of a tool call (ferromcp_client_call_tool()).
///
/// - `userdata`: the `progress_userdata` given with the call.
/// - `progress`: progress so far; `total`: the total, or NAN when the
///   server gave none; `message`: a NUL-terminated message or NULL, valid
///   only during the callback.
///
/// Threads: called on a ferromcp runtime thread, in order, and never after
/// the call returned: it must not block and must not call ferromcp.
pub type ferromcp_progress_callback = Option<
    unsafe extern "C" fn(userdata: *mut c_void, progress: f64, total: f64, message: *const c_char),
>;

/// Which list ferromcp_client_list() reads.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ferromcp_list_kind {
    /// `tools/list`: `{"tools":[...],"nextCursor":...}`.
    FERROMCP_LIST_TOOLS = 0,
    /// `resources/list`: `{"resources":[...],"nextCursor":...}`.
    FERROMCP_LIST_RESOURCES = 1,
    /// `resources/templates/list`: `{"resourceTemplates":[...],...}`.
    FERROMCP_LIST_RESOURCE_TEMPLATES = 2,
    /// `prompts/list`: `{"prompts":[...],"nextCursor":...}`.
    FERROMCP_LIST_PROMPTS = 3,
    /// `skills/list` (the skills extension): `{"skills":[...],"nextCursor":...}`.
    FERROMCP_LIST_SKILLS = 4,
}

fn bad_option(why: impl std::fmt::Display) -> FfiError {
    FfiError::new(
        ferromcp_status::FERROMCP_INVALID_JSON,
        format!("`options_json`: {why}"),
    )
}

/// Reads client options JSON into core's [`ClientOptions`]: core's one
/// reading of client settings, the C members being its camelCase names.
fn client_options(map: &Map<String, Value>) -> Result<ClientOptions, FfiError> {
    settings::client_options(&Value::Object(map.clone())).map_err(bad_option)
}

/// Creates client options.
///
/// - `options_json`: NULL (all defaults) or a JSON object, copied, with any of
///   - `"name"`, `"version"`: the client's identity (clientInfo);
///   - `"protocolVersion"`: the revision requests declare first (default:
///     the latest);
///   - `"era"`: `"auto"` (default: detect the server's), `"modern"`
///     (2026-07-28, stateless) or `"legacy"` (2025-11-25, initialize);
///   - `"timeoutMs"`: default timeout of every request (default 60000; 0
///     waits indefinitely);
///   - `"probeTimeoutMs"`: how long era detection waits (default 5000);
///   - `"stderr"`: a stdio server's stderr: `"capture"` (default),
///     `"inherit"` or `"null"`;
///   - `"tlsRoots"` (`https://`): `"native"` (default: the platform's
///     store, which `SSL_CERT_FILE` / `SSL_CERT_DIR` replace), `"webpki"`
///     (Mozilla's roots built in) or `"none"`;
///   - `"caCerts"` (`https://`): extra trusted CA certificates, an array of
///     PEM texts;
///   - `"clientCert"`, `"clientKey"` (`https://`, together): a client
///     certificate chain and its private key, PEM texts, for mutual TLS; an
///     untrusted server certificate fails the call with FERROMCP_HTTP and a
///     message naming the host and the reason;
///   - `"limits"`: what the client accepts from a server, an object with
///     any of `"maxMessageBytes"` (the largest JSON response, SSE event or
///     stdio line; default 16777216), `"maxQueuedNotifications"` (a call's
///     notifications waiting for their callback; past it progress is
///     coalesced to the newest and others dropped, never the result;
///     default 1024), `"maxPendingServerRequests"` (server requests such
///     as `ping` answered at once; on a 2025-11-25 HTTP session's own
///     stream more wait, elsewhere they are refused; default 64),
///     `"maxConcurrentServerAnswers"` (HTTP: answers POSTed at once, one
///     connection each; default 4) and `"maxStderrLineBytes"` (a stdio
///     server's stderr is read in lines of at most this; default 8192).
/// - `out_options`: receives the options; free them with
///   ferromcp_client_options_free().
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_JSON for unparsable text, a
/// non-object, an unknown member or a member of the wrong type;
/// FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8.
///
/// Threads: any thread.
///
/// ```c
/// ferromcp_client_options *options = NULL;
/// ferromcp_client_options_new("{\"name\":\"demo\",\"timeoutMs\":5000}", &options);
/// ```
///
/// # Safety
/// `options_json` NULL or NUL-terminated; `out_options` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_options_new(
    options_json: *const c_char,
    out_options: *mut *mut ferromcp_client_options,
) -> ferromcp_status {
    ffi_boundary(|| {
        check_out(out_options, "out_options")?;
        // SAFETY: forwarded contract.
        let options = match unsafe { optional_str(options_json, "options_json") }? {
            Some(text) => client_options(&parse_json_object(text, "options_json")?)?,
            None => ClientOptions::default(),
        };
        // SAFETY: checked non-NULL; writable per the contract.
        unsafe { set_boxed_mut_ptr(out_options, ferromcp_client_options { options }) };
        Ok(())
    })
}

/// Frees client options. Clients connected with them are not affected
/// (they hold their own copy); a callback's userdata is released once the
/// options and every client using the callback are freed.
///
/// - `options`: from ferromcp_client_options_new(), or NULL (nothing happens).
///
/// Threads: any thread.
///
/// # Safety
/// `options` is NULL or live and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_options_free(options: *mut ferromcp_client_options) {
    // SAFETY: NULL or allocated by ferromcp_client_options_new; freed
    // once per the contract.
    unsafe { free_box(options) }
}

/// A C input callback owning its userdata.
struct InputCallback {
    callback: unsafe extern "C" fn(
        *mut c_void,
        ferromcp_input_kind,
        *const c_char,
        usize,
        *mut ferromcp_call,
    ),
    userdata: Userdata,
}

fn c_kind(kind: InputKind) -> ferromcp_input_kind {
    match kind {
        InputKind::Elicitation => ferromcp_input_kind::FERROMCP_INPUT_ELICITATION,
        InputKind::Sampling => ferromcp_input_kind::FERROMCP_INPUT_SAMPLING,
        InputKind::Roots => ferromcp_input_kind::FERROMCP_INPUT_ROOTS,
    }
}

impl InputCallback {
    fn invoke(&self, kind: InputKind, params: String, call: CallPtr) {
        let len = params.len();
        match CString::new(params) {
            // SAFETY: the callback contract; `text` outlives the call and
            // `call.0` is a fresh handle owned by the callback from here.
            Ok(text) => unsafe {
                (self.callback)(
                    self.userdata.get(),
                    c_kind(kind),
                    text.as_ptr(),
                    len,
                    call.0,
                )
            },
            Err(_) => {
                // Compact JSON escapes NUL, so this cannot happen; never
                // hand C a truncated document.
                // SAFETY: the handle was never given to C.
                if let Ok(call) = unsafe { take_call(call.0) } {
                    let _ = call.finish_error(HandlerError::tool("params contain a NUL"));
                }
            }
        }
    }
}

async fn run_input<O>(
    callback: Arc<InputCallback>,
    kind: InputKind,
    params: Value,
) -> Result<Value, ferromcp_core::Error>
where
    O: host_call::CallOutput + Serialize,
{
    let text = params.to_string();
    let answer =
        host_call::run::<O>(None, false, move |call| callback.invoke(kind, text, call)).await;
    input_answer(kind, answer)
}

/// Answers one kind of server request with a C callback (and so declares
/// that capability: `elicitation`, `sampling` or `roots`). Setting a kind
/// again replaces its callback.
///
/// - `options`: from ferromcp_client_options_new().
/// - `kind`: which requests `callback` answers.
/// - `callback`: see ferromcp_client_input_callback.
/// - `userdata`: passed to `callback` unchanged.
/// - `userdata_free`: NULL, or called once with `userdata` when neither the
///   options nor any client connected with them uses the callback any more
///   (also when it is replaced). Not called if this function fails. It may
///   run on any thread, shortly after the last ferromcp_client_free() or
///   ferromcp_client_options_free() returned (once the connection's
///   background tasks ended); it must not block or call ferromcp.
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT for a NULL `options` or
/// `callback`.
///
/// Threads: any thread, not concurrently with other uses of `options`.
///
/// ```c
/// static void on_input(void *ud, ferromcp_input_kind kind, const char *params,
///                      size_t len, ferromcp_call *call) {
///     ferromcp_call_respond(call, "{\"action\":\"decline\"}");
/// }
/// ferromcp_client_options_on_input(options, FERROMCP_INPUT_ELICITATION,
///                                  on_input, NULL, NULL);
/// ```
///
/// # Safety
/// `options` NULL or live; `callback` and `userdata_free` usable from any thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_options_on_input(
    options: *mut ferromcp_client_options,
    kind: ferromcp_input_kind,
    callback: ferromcp_client_input_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        let kind = InputKind::from(kind);
        // SAFETY: forwarded contract.
        let options = unsafe { try_from_mut(options, "options") }?;
        let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
        let callback = Arc::new(InputCallback { callback, userdata });
        let current = std::mem::take(&mut options.options);
        options.options = current.on_input(kind, move |params| {
            let callback = callback.clone();
            async move {
                match kind {
                    InputKind::Elicitation => {
                        run_input::<ElicitResult>(callback, kind, params).await
                    }
                    InputKind::Sampling => {
                        run_input::<CreateMessageResult>(callback, kind, params).await
                    }
                    InputKind::Roots => run_input::<ListRootsResult>(callback, kind, params).await,
                }
            }
        });
        Ok(())
    })
}

/// Makes clients connected with `client_options` log in with `oauth` when
/// a server answers 401 (or 403 `insufficient_scope`): the token then goes
/// on every request, refreshed and stepped up as needed; a failed login
/// fails the call with FERROMCP_AUTH. Set the client options' TLS members
/// first: an enterprise identity provider is reached with them too.
///
/// - `client_options`: from ferromcp_client_options_new().
/// - `oauth`: the settings, copied (still yours to free); NULL removes OAuth.
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT for a NULL `client_options`;
/// FERROMCP_INVALID_ARGUMENT when the grant's callback is not set.
///
/// Threads: any thread, not concurrently with other uses of either.
///
/// ```c
/// ferromcp_client_options_set_oauth(options, oauth);
/// ferromcp_oauth_options_free(oauth);
/// ferromcp_client_connect_http("https://mcp.example.com/mcp", NULL, options, &client);
/// ```
///
/// # Safety
/// Both NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_options_set_oauth(
    client_options: *mut ferromcp_client_options,
    oauth: *const ferromcp_oauth_options,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let client_options = unsafe { try_from_mut(client_options, "client_options") }?;
        // SAFETY: forwarded contract.
        client_options.options.oauth = match unsafe { oauth.as_ref() } {
            Some(oauth) => Some(oauth.core_options(&client_options.options.tls)?),
            None => None,
        };
        Ok(())
    })
}

/// Reads a NULL-terminated array of C strings.
///
/// # Safety
/// `list` is NULL or points to NUL-terminated strings ending with NULL.
unsafe fn string_list<'a>(
    list: *const *const c_char,
    name: &str,
) -> Result<Vec<&'a str>, FfiError> {
    let mut items = Vec::new();
    if list.is_null() {
        return Ok(items);
    }
    for i in 0.. {
        // SAFETY: the list ends with NULL, so every index up to it is valid.
        let item = unsafe { *list.add(i) };
        if item.is_null() {
            break;
        }
        // SAFETY: forwarded contract.
        items.push(unsafe { required_str(item, name) }?);
    }
    Ok(items)
}

pub(crate) fn options_or_default(options: *const ferromcp_client_options) -> ClientOptions {
    // SAFETY: NULL or live, per the callers' contracts.
    unsafe { options.as_ref() }
        .map(|o| o.options.clone())
        .unwrap_or_default()
}

pub(crate) fn give_client(client: Client, out: *mut *mut ferromcp_client) {
    // SAFETY: checked non-NULL by the caller; writable per the contract.
    unsafe { set_boxed_mut_ptr(out, ferromcp_client { client }) };
}

/// Spawns a server program and connects to it over its stdin/stdout.
/// Returns once the process started; the first call detects its era.
///
/// - `command`: the program (looked up in PATH), borrowed.
/// - `args`: NULL or a NULL-terminated array of arguments, borrowed.
/// - `env`: NULL or a NULL-terminated array of `"NAME=VALUE"` strings added
///   to the inherited environment, borrowed.
/// - `cwd`: NULL (inherit) or the server's working directory, borrowed.
/// - `options`: NULL (defaults) or options, copied (still yours to free).
/// - `out_client`: receives the client; free it with ferromcp_client_free().
///
/// Returns FERROMCP_OK; FERROMCP_IO when the program cannot be started;
/// FERROMCP_INVALID_ARGUMENT for an env entry without `=`;
/// (once the server process exits, the calls waiting for it fail with
/// FERROMCP_CONNECTION_CLOSED, whose message ends with the last lines of
/// its stderr; a later call starts the program again);
/// FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8; FERROMCP_INVALID_STATE on
/// a ferromcp runtime thread.
///
/// Threads: any thread that may block.
///
/// ```c
/// const char *args[] = {"--stdio", NULL};
/// ferromcp_client *client = NULL;
/// if (ferromcp_client_connect_stdio("target/bin/everything-server", args, NULL,
///                                   NULL, NULL, &client) == FERROMCP_OK) {
///     ferromcp_client_free(client);
/// }
/// ```
///
/// # Safety
/// Strings and arrays as described; `out_client` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_connect_stdio(
    command: *const c_char,
    args: *const *const c_char,
    env: *const *const c_char,
    cwd: *const c_char,
    options: *const ferromcp_client_options,
    out_client: *mut *mut ferromcp_client,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let program = unsafe { required_str(command, "command") }?;
        let args = unsafe { string_list(args, "args") }?;
        let env = unsafe { string_list(env, "env") }?;
        let cwd = unsafe { optional_str(cwd, "cwd") }?;
        check_out(out_client, "out_client")?;
        let mut command = StdioCommand::new(program, args);
        for entry in env {
            let (name, value) = entry.split_once('=').ok_or_else(|| {
                FfiError::new(
                    ferromcp_status::FERROMCP_INVALID_ARGUMENT,
                    format!("env entry {entry:?} is not NAME=VALUE"),
                )
            })?;
            command.env.push((name.into(), value.into()));
        }
        command.cwd = cwd.map(Into::into);
        let options = options_or_default(options);
        let client = block(Client::connect_stdio_with(command, options))?;
        give_client(client, out_client);
        Ok(())
    })
}

/// Connects to a Streamable HTTP endpoint (`http://host:port/mcp`). No
/// request is sent yet: the first call detects the server's era.
///
/// - `url`: the endpoint, borrowed.
/// - `headers_json`: NULL or a JSON object of extra headers sent with every
///   request (`{"Authorization":"Bearer ..."}`), borrowed.
/// - `options`: NULL (defaults) or options, copied (still yours to free).
/// - `out_client`: receives the client; free it with ferromcp_client_free().
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_ARGUMENT (or FERROMCP_HTTP) for a
/// URL that cannot be used; FERROMCP_INVALID_JSON for bad `headers_json`;
/// FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8; FERROMCP_INVALID_STATE on
/// a ferromcp runtime thread.
///
/// Threads: any thread that may block.
///
/// ```c
/// ferromcp_client *client = NULL;
/// ferromcp_client_connect_http("http://127.0.0.1:8000/mcp", NULL, NULL, &client);
/// ```
///
/// # Safety
/// Strings NULL or NUL-terminated; `options` NULL or live; `out_client`
/// NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_connect_http(
    url: *const c_char,
    headers_json: *const c_char,
    options: *const ferromcp_client_options,
    out_client: *mut *mut ferromcp_client,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let url = unsafe { required_str(url, "url") }?;
        let headers = unsafe { optional_str(headers_json, "headers_json") }?;
        check_out(out_client, "out_client")?;
        let mut options = options_or_default(options);
        if let Some(text) = headers {
            for (name, value) in parse_json_object(text, "headers_json")? {
                let Value::String(value) = value else {
                    return Err(FfiError::new(
                        ferromcp_status::FERROMCP_INVALID_JSON,
                        format!("`headers_json`: header {name:?} must be a string"),
                    ));
                };
                options.http_headers.push((name, value));
            }
        }
        let client = block(Client::connect_http_with(url, options))?;
        give_client(client, out_client);
        Ok(())
    })
}

/// Closes the connection (a stdio server: its stdin is closed, then it is
/// terminated if it does not exit) and frees the client.
///
/// - `client`: from a connect function, or NULL (nothing happens). No call
///   on it may be running or start afterwards.
///
/// Threads: any thread that may block (not a ferromcp runtime thread: there
/// the connection is closed in the background).
///
/// # Safety
/// `client` NULL or live and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_free(client: *mut ferromcp_client) {
    // SAFETY: NULL or allocated by give_client; freed once per the
    // contract. Dropping it closes the connection.
    unsafe { free_box(client) }
}

/// Runs one blocking call and hands its JSON result to C.
pub(crate) fn call_json<T: Serialize>(
    out: *mut *mut c_char,
    work: impl Future<Output = Result<T, ferromcp_core::Error>>,
) -> Result<(), FfiError> {
    check_out(out, "out_result_json")?;
    let value = block(work)?;
    let text = serde_json::to_string(&value)
        .map_err(|e| FfiError::new(ferromcp_status::FERROMCP_INTERNAL, format!("result: {e}")))?;
    give_string(text, out)
}

/// Sends any request a client makes (a method of core's client calls)
/// and blocks until its result: the one path of every client call, which
/// the typed functions (ferromcp_client_call_tool(), ...) take too.
///
/// - `client`: a connected client.
/// - `method`: the request method, e.g. `"tools/call"`, `"resources/read"`,
///   `"server/discover"`, `"tools/list"`, borrowed.
/// - `params_json`: NULL (`{}`) or the request's params as a JSON object,
///   as the wire has them without `_meta` (the client adds it; members
///   of a `_meta` you give join it: a `traceparent` from
///   ferromcp_context_traceparent() makes the call part of that trace),
///   borrowed.
/// - `timeout_ms`: this call's timeout; 0 uses the client's.
/// - `on_progress`: NULL, or called with each progress notification of this
///   call (see ferromcp_progress_callback), never after this returns.
/// - `progress_userdata`: passed to `on_progress`, borrowed for the call.
/// - `cancel`: NULL, or a handle another thread may fire to abandon the call.
/// - `out_result_json`: receives the result as JSON text; free it with
///   ferromcp_string_free(). Written only on FERROMCP_OK.
///
/// Returns FERROMCP_OK; FERROMCP_PROTOCOL_ERROR for a method a client does
/// not send (nothing is sent); FERROMCP_INVALID_JSON for bad
/// `params_json`; FERROMCP_REQUEST_CANCELLED when `cancel` fired;
/// otherwise as ferromcp_client_discover().
///
/// Threads: any thread that may block; concurrent calls on one client are fine.
///
/// ```c
/// char *result = NULL;
/// if (ferromcp_client_request(client, "resources/read", "{\"uri\":\"notes://today\"}",
///                             0, NULL, NULL, NULL, &result) == FERROMCP_OK) {
///     puts(result);
///     ferromcp_string_free(result);
/// }
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ferromcp_client_request(
    client: *const ferromcp_client,
    method: *const c_char,
    params_json: *const c_char,
    timeout_ms: u64,
    on_progress: ferromcp_progress_callback,
    progress_userdata: *mut c_void,
    cancel: *const ferromcp_cancel_handle,
    out_result_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        let method = unsafe { required_str(method, "method") }?;
        let params = unsafe { optional_object(params_json, "params_json") }?;
        let controls =
            unsafe { CallControls::new(timeout_ms, on_progress, progress_userdata, cancel) };
        request(client, method, params, controls, out_result_json)
    })
}

/// A call's own settings as C passes them: its timeout (0: the client's),
/// progress callback and cancel handle. The calls that take none use the
/// default.
#[derive(Default)]
struct CallControls {
    timeout_ms: u64,
    progress: Option<ProgressTarget>,
    cancel: Option<CancellationToken>,
}

/// A call's progress target, switched off (`None`) when the call returns.
type ProgressSwitch = Arc<Mutex<Option<ProgressTarget>>>;

impl CallControls {
    /// # Safety
    /// `cancel` is NULL or a live cancel handle.
    unsafe fn new(
        timeout_ms: u64,
        on_progress: ferromcp_progress_callback,
        progress_userdata: *mut c_void,
        cancel: *const ferromcp_cancel_handle,
    ) -> CallControls {
        CallControls {
            timeout_ms,
            progress: on_progress.map(|callback| ProgressTarget {
                callback,
                userdata: progress_userdata,
            }),
            // SAFETY: forwarded contract.
            cancel: unsafe { cancel.as_ref() }.map(|c| c.token.clone()),
        }
    }

    /// Core's options for the call, and the switch of its progress
    /// callback, which the caller turns off once the call returned.
    fn call_options(self) -> (CallOptions, Option<ProgressSwitch>) {
        let mut options = CallOptions {
            cancel: self.cancel,
            ..CallOptions::default()
        };
        if self.timeout_ms > 0 {
            options.timeout = Some(Duration::from_millis(self.timeout_ms));
        }
        let switch = self
            .progress
            .map(|target| Arc::new(Mutex::new(Some(target))));
        if let Some(switch) = &switch {
            let switch = switch.clone();
            options = options.with_progress(move |update: ProgressUpdate| {
                let guard = switch.lock().unwrap_or_else(|e| e.into_inner());
                let Some(target) = guard.as_ref() else { return };
                let message = update
                    .message
                    .and_then(|m| CString::new(m.replace('\0', "\u{FFFD}")).ok());
                // SAFETY: the progress callback contract; `message` outlives
                // the call. Under the lock, so the call cannot return (and
                // switch the target off) while C runs.
                unsafe {
                    (target.callback)(
                        target.userdata,
                        update.progress,
                        update.total.unwrap_or(f64::NAN),
                        message.as_ref().map_or(std::ptr::null(), |m| m.as_ptr()),
                    )
                }
            });
        }
        (options, switch)
    }
}

/// Runs one request of core's client calls, blocking, and hands its JSON
/// result to C: the one path of every blocking client call.
fn request(
    client: &ferromcp_client,
    method: &str,
    params: Map<String, Value>,
    controls: CallControls,
    out: *mut *mut c_char,
) -> Result<(), FfiError> {
    let (options, progress) = controls.call_options();
    let client = client.client.clone();
    let method = method.to_owned();
    let outcome = call_json(
        out,
        async move { client.call(&method, params, &options).await },
    );
    if let Some(switch) = progress {
        *switch.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
    outcome
}

/// `server/discover`: the server's versions, capabilities and identity. A
/// 2025-11-25 server has no such method; its answer to `initialize` is
/// given instead.
///
/// - `client`: a connected client.
/// - `out_result_json`: receives the result as JSON text; free it with
///   ferromcp_string_free(). Written only on FERROMCP_OK.
///
/// Returns FERROMCP_OK; FERROMCP_PEER_ERROR (ferromcp_last_error_code() and
/// ferromcp_last_error_data_json() on this thread give the JSON-RPC error);
/// FERROMCP_TIMEOUT; FERROMCP_CONNECTION_CLOSED; FERROMCP_PROTOCOL_ERROR;
/// FERROMCP_HTTP; FERROMCP_NULL_ARGUMENT; FERROMCP_INVALID_STATE on a
/// ferromcp runtime thread. The same holds for every blocking client call.
///
/// Threads: any thread that may block; concurrent calls on one client are fine.
///
/// ```c
/// char *found = NULL;
/// if (ferromcp_client_discover(client, &found) == FERROMCP_OK) {
///     puts(found);
///     ferromcp_string_free(found);
/// }
/// ```
///
/// # Safety
/// `client` NULL or live; `out_result_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_discover(
    client: *const ferromcp_client,
    out_result_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        request(
            client,
            methods::SERVER_DISCOVER,
            Map::new(),
            CallControls::default(),
            out_result_json,
        )
    })
}

/// One page of a list, from `cursor`: the whole list result, whose
/// `"nextCursor"` (absent on the last page) is the cursor of the next page.
///
/// - `client`: a connected client.
/// - `kind`: which list.
/// - `cursor`: NULL for the first page, else a `nextCursor`, borrowed.
/// - `out_result_json`: receives the result as JSON text; free it with
///   ferromcp_string_free().
///
/// Returns as ferromcp_client_discover() does.
///
/// Threads: any thread that may block.
///
/// ```c
/// char *page = NULL, *cursor = NULL;
/// do {
///     ferromcp_client_list(client, FERROMCP_LIST_TOOLS, cursor, &page);
///     ferromcp_string_free(cursor); cursor = NULL;
///     ferromcp_json_get(page, "/nextCursor", &cursor); // NOT_FOUND at the end
///     ferromcp_string_free(page);
/// } while (cursor != NULL);
/// ```
///
/// # Safety
/// `client` NULL or live; `cursor` NULL or NUL-terminated; out NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_list(
    client: *const ferromcp_client,
    kind: ferromcp_list_kind,
    cursor: *const c_char,
    out_result_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        let mut params = Map::new();
        if let Some(cursor) = unsafe { optional_str(cursor, "cursor") }? {
            params.insert("cursor".into(), Value::from(cursor));
        }
        let method = match kind {
            ferromcp_list_kind::FERROMCP_LIST_TOOLS => methods::TOOLS_LIST,
            ferromcp_list_kind::FERROMCP_LIST_RESOURCES => methods::RESOURCES_LIST,
            ferromcp_list_kind::FERROMCP_LIST_RESOURCE_TEMPLATES => {
                methods::RESOURCES_TEMPLATES_LIST
            }
            ferromcp_list_kind::FERROMCP_LIST_PROMPTS => methods::PROMPTS_LIST,
            ferromcp_list_kind::FERROMCP_LIST_SKILLS => methods::SKILLS_LIST,
        };
        request(
            client,
            method,
            params,
            CallControls::default(),
            out_result_json,
        )
    })
}

/// The C progress callback of one call; switched off when the call
/// returns, so C never sees it called afterwards.
struct ProgressTarget {
    callback: unsafe extern "C" fn(*mut c_void, f64, f64, *const c_char),
    userdata: *mut c_void,
}

// SAFETY: the header requires the callback to be callable from a ferromcp
// thread with its userdata during the call.
unsafe impl Send for ProgressTarget {}

/// Calls a tool: the CallToolResult as JSON text (a tool's own failure is
/// a result with `"isError":true`, not a failed status).
///
/// - `client`: a connected client.
/// - `name`: the tool's name, borrowed.
/// - `arguments_json`: NULL (`{}`) or a JSON object, borrowed.
/// - `timeout_ms`: this call's timeout; 0 uses the client's.
/// - `on_progress`: NULL, or called with each progress notification of this
///   call (see ferromcp_progress_callback), never after this returns.
/// - `progress_userdata`: passed to `on_progress`, borrowed for the call.
/// - `cancel`: NULL, or a handle another thread may fire to abandon the call.
/// - `out_result_json`: receives the result as JSON text; free it with
///   ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_REQUEST_CANCELLED when `cancel` fired;
/// FERROMCP_TIMEOUT; FERROMCP_PEER_ERROR (e.g. an unknown tool; the code
/// and data through ferromcp_last_error_code() /
/// ferromcp_last_error_data_json()); FERROMCP_INVALID_JSON for bad
/// `arguments_json`; otherwise as ferromcp_client_discover().
///
/// Threads: any thread that may block.
///
/// ```c
/// char *result = NULL;
/// if (ferromcp_client_call_tool(client, "echo", "{\"text\":\"hi\"}", 0, NULL,
///                               NULL, NULL, &result) == FERROMCP_OK) {
///     char *text = NULL;
///     ferromcp_json_get(result, "/content/0/text", &text);
///     ferromcp_string_free(text);
///     ferromcp_string_free(result);
/// }
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn ferromcp_client_call_tool(
    client: *const ferromcp_client,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u64,
    on_progress: ferromcp_progress_callback,
    progress_userdata: *mut c_void,
    cancel: *const ferromcp_cancel_handle,
    out_result_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        let params = unsafe { named_call(name, arguments_json) }?;
        let controls =
            unsafe { CallControls::new(timeout_ms, on_progress, progress_userdata, cancel) };
        request(
            client,
            methods::TOOLS_CALL,
            params,
            controls,
            out_result_json,
        )
    })
}

/// The params of a call by name (`tools/call`, `prompts/get`):
/// `{"name","arguments"}`, NULL `arguments_json` being `{}`.
///
/// # Safety
/// Both NULL or NUL-terminated.
unsafe fn named_call(
    name: *const c_char,
    arguments_json: *const c_char,
) -> Result<Map<String, Value>, FfiError> {
    // SAFETY (both): forwarded contract.
    let name = unsafe { required_str(name, "name") }?;
    let arguments = unsafe { optional_object(arguments_json, "arguments_json") }?;
    let mut params = Map::new();
    params.insert("name".into(), Value::from(name));
    params.insert("arguments".into(), Value::Object(arguments));
    Ok(params)
}

/// `resources/read`: the ReadResourceResult (`{"contents":[...]}`) as JSON text.
///
/// - `client`: a connected client; `uri`: the resource, borrowed.
/// - `out_result_json`: receives the result; free it with ferromcp_string_free().
///
/// Returns as ferromcp_client_discover() does (an unknown resource is
/// FERROMCP_PEER_ERROR with code -32602 or -32002).
///
/// Threads: any thread that may block.
///
/// ```c
/// char *contents = NULL;
/// ferromcp_client_read_resource(client, "test://static-text", &contents);
/// ferromcp_string_free(contents);
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_read_resource(
    client: *const ferromcp_client,
    uri: *const c_char,
    out_result_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        let mut params = Map::new();
        params.insert(
            "uri".into(),
            Value::from(unsafe { required_str(uri, "uri") }?),
        );
        request(
            client,
            methods::RESOURCES_READ,
            params,
            CallControls::default(),
            out_result_json,
        )
    })
}

/// `prompts/get`: the GetPromptResult as JSON text.
///
/// - `client`: a connected client; `name`: the prompt, borrowed.
/// - `arguments_json`: NULL (`{}`) or a JSON object of string values, borrowed.
/// - `out_result_json`: receives the result; free it with ferromcp_string_free().
///
/// Returns as ferromcp_client_discover() does; FERROMCP_INVALID_JSON for
/// bad `arguments_json`.
///
/// Threads: any thread that may block.
///
/// ```c
/// char *prompt = NULL;
/// ferromcp_client_get_prompt(client, "test_simple_prompt", NULL, &prompt);
/// ferromcp_string_free(prompt);
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_get_prompt(
    client: *const ferromcp_client,
    name: *const c_char,
    arguments_json: *const c_char,
    out_result_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        let params = unsafe { named_call(name, arguments_json) }?;
        request(
            client,
            methods::PROMPTS_GET,
            params,
            CallControls::default(),
            out_result_json,
        )
    })
}

/// `completion/complete`: completions for one argument of a prompt or
/// resource template, as the CompleteResult's JSON text
/// (`{"completion":{"values":[...],...}}`).
///
/// - `client`: a connected client.
/// - `reference_json`: the reference object, borrowed:
///   `{"type":"ref/prompt","name":"..."}` or
///   `{"type":"ref/resource","uri":"template://{x}"}`.
/// - `argument`, `value`: the argument's name and what is typed so far.
/// - `context_json`: NULL, or a JSON object of arguments already resolved.
/// - `out_result_json`: receives the result; free it with ferromcp_string_free().
///
/// Returns as ferromcp_client_discover() does; FERROMCP_INVALID_JSON for
/// bad `reference_json` / `context_json`.
///
/// Threads: any thread that may block.
///
/// ```c
/// char *done = NULL;
/// ferromcp_client_complete(client, "{\"type\":\"ref/prompt\",\"name\":\"greet\"}",
///                          "name", "Al", NULL, &done);
/// ferromcp_string_free(done);
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_complete(
    client: *const ferromcp_client,
    reference_json: *const c_char,
    argument: *const c_char,
    value: *const c_char,
    context_json: *const c_char,
    out_result_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        let reference = parse_json(
            unsafe { required_str(reference_json, "reference_json") }?,
            "reference_json",
        )?;
        let argument = unsafe { required_str(argument, "argument") }?;
        let value = unsafe { required_str(value, "value") }?;
        let resolved = unsafe { optional_object(context_json, "context_json") }?;
        let params = complete_params(reference, argument, value, resolved);
        request(
            client,
            methods::COMPLETION_COMPLETE,
            params,
            CallControls::default(),
            out_result_json,
        )
    })
}

/// The protocol version the client's requests currently declare (after
/// the first call: the one agreed with the server).
///
/// - `client`: a connected client.
/// - `out_version`: receives a new string; free it with ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT.
///
/// Threads: any thread.
///
/// # Safety
/// `client` NULL or live; `out_version` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_protocol_version(
    client: *const ferromcp_client,
    out_version: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        check_out(out_version, "out_version")?;
        give_string(client.client.protocol_version(), out_version)
    })
}

/// Creates a cancel handle for ferromcp_client_call_tool().
///
/// - `out_cancel`: receives the handle; free it with
///   ferromcp_cancel_handle_free() once no call uses it.
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT.
///
/// Threads: any thread.
///
/// ```c
/// ferromcp_cancel_handle *cancel = NULL;
/// ferromcp_cancel_handle_new(&cancel);
/// // another thread: ferromcp_cancel_handle_cancel(cancel);
/// ```
///
/// # Safety
/// `out_cancel` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_cancel_handle_new(
    out_cancel: *mut *mut ferromcp_cancel_handle,
) -> ferromcp_status {
    ffi_boundary(|| {
        check_out(out_cancel, "out_cancel")?;
        let cancel = ferromcp_cancel_handle {
            token: CancellationToken::new(),
        };
        // SAFETY: checked non-NULL; writable per the contract.
        unsafe { set_boxed_mut_ptr(out_cancel, cancel) };
        Ok(())
    })
}

/// Fires a cancel handle: every call given it (running now or started
/// later) returns FERROMCP_REQUEST_CANCELLED and the server is told.
///
/// - `cancel`: a live handle.
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT.
///
/// Threads: any thread, concurrently with the calls it cancels.
///
/// # Safety
/// `cancel` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_cancel_handle_cancel(
    cancel: *const ferromcp_cancel_handle,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        unsafe { try_from(cancel, "cancel") }?.token.cancel();
        Ok(())
    })
}

/// Frees a cancel handle.
///
/// - `cancel`: from ferromcp_cancel_handle_new(), or NULL. No call may
///   still be using it, and no thread may fire it afterwards.
///
/// Threads: any thread.
///
/// # Safety
/// `cancel` NULL or live and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_cancel_handle_free(cancel: *mut ferromcp_cancel_handle) {
    // SAFETY: NULL or allocated by ferromcp_cancel_handle_new; freed
    // once per the contract.
    unsafe { free_box(cancel) }
}

/// Receives the notifications of a subscription (ferromcp_client_listen()).
///
/// - `userdata`: the pointer given to ferromcp_client_listen().
/// - `method`: e.g. `"notifications/tools/list_changed"`; NULL once, last,
///   when the subscription ended by itself (the server ended it or the
///   connection closed; never after ferromcp_listener_free()).
/// - `params_json`: the notification's params as JSON text (NULL with a
///   NULL `method`). Both valid only during the callback.
///
/// Threads: called on a ferromcp host thread the listener keeps while it
/// lasts, one notification at a time and in order; it may block and may make blocking client calls,
/// and may call ferromcp_listener_free() on its own listener.
pub type ferromcp_notification_callback = Option<
    unsafe extern "C" fn(userdata: *mut c_void, method: *const c_char, params_json: *const c_char),
>;

/// An open `subscriptions/listen` stream delivering notifications to a C
/// callback.
///
/// Opaque. Created by ferromcp_client_listen(), stopped and freed by
/// ferromcp_listener_free().
pub struct ferromcp_listener {
    stop: CancellationToken,
    /// Set once the listener's loop ended and its userdata was released.
    done: Arc<Done>,
    /// Which listener runs on a thread (see [`LISTENER_ON_THREAD`]).
    id: u64,
}

impl Castable for ferromcp_listener {
    type Ownership = OwnershipBox;
}

impl Drop for ferromcp_listener {
    /// Ends the subscription (ferromcp_listener_free()) and, unless called
    /// from the listener's own callback, waits for a running callback.
    fn drop(&mut self) {
        self.stop.cancel();
        if LISTENER_ON_THREAD.with(|current| current.get()) != self.id {
            self.done.wait();
        }
    }
}

/// A flag another thread can wait for.
#[derive(Default)]
struct Done {
    finished: Mutex<bool>,
    changed: std::sync::Condvar,
}

impl Done {
    fn finish(&self) {
        *self.finished.lock().unwrap_or_else(|e| e.into_inner()) = true;
        self.changed.notify_all();
    }

    fn wait(&self) {
        let mut finished = self.finished.lock().unwrap_or_else(|e| e.into_inner());
        while !*finished {
            finished = self
                .changed
                .wait(finished)
                .unwrap_or_else(|e| e.into_inner());
        }
    }
}

static NEXT_LISTENER: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The listener whose loop runs on this thread (0: none), so freeing a
    /// listener from its own callback does not wait for itself.
    static LISTENER_ON_THREAD: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A notification callback owning its userdata.
struct NotificationTarget {
    callback: unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char),
    userdata: Userdata,
}

impl NotificationTarget {
    fn deliver(&self, method: Option<&str>, params: Option<String>) {
        let clean = |s: &str| CString::new(s.replace('\0', "\u{FFFD}")).ok();
        let method = method.and_then(clean);
        let params = params.as_deref().and_then(clean);
        let ptr = |s: &Option<CString>| s.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
        // SAFETY: the callback contract; both strings outlive the call.
        unsafe { (self.callback)(self.userdata.get(), ptr(&method), ptr(&params)) }
    }
}

/// Subscribes to change notifications (2026-07-28 `subscriptions/listen`)
/// and delivers each to `callback` on a host thread the listener keeps.
/// Returns once the server acknowledged the subscription.
///
/// - `client`: a connected client.
/// - `filter_json`: the notifications wanted, a JSON object, borrowed:
///   `{"toolsListChanged":true, "promptsListChanged":true,
///   "resourcesListChanged":true, "resourceSubscriptions":["uri",...]}`.
/// - `callback`: see ferromcp_notification_callback.
/// - `userdata`: passed to `callback`.
/// - `userdata_free`: NULL, or called once with `userdata` after the last
///   callback, on the listener's thread (before ferromcp_listener_free()
///   returns, unless called from the callback itself). Not called if this
///   function fails.
/// - `out_listener`: receives the listener; stop and free it with
///   ferromcp_listener_free().
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_JSON for a bad filter; otherwise
/// as ferromcp_client_discover() (e.g. FERROMCP_PEER_ERROR from a server
/// without subscriptions).
///
/// Threads: any thread that may block.
///
/// ```c
/// static void on_note(void *ud, const char *method, const char *params) {
///     if (method != NULL) printf("%s\n", method);
/// }
/// ferromcp_listener *listener = NULL;
/// ferromcp_client_listen(client, "{\"toolsListChanged\":true}", on_note, NULL,
///                        NULL, &listener);
/// // ...
/// ferromcp_listener_free(listener);
/// ```
///
/// # Safety
/// Pointers NULL or valid as described; `callback`/`userdata_free` usable
/// from another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_listen(
    client: *const ferromcp_client,
    filter_json: *const c_char,
    callback: ferromcp_notification_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
    out_listener: *mut *mut ferromcp_listener,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let client = unsafe { try_from(client, "client") }?.client.clone();
        let filter = parse_json(
            unsafe { required_str(filter_json, "filter_json") }?,
            "filter_json",
        )?;
        let callback = callback.ok_or_else(|| FfiError::null("callback"))?;
        check_out(out_listener, "out_listener")?;
        let filter = serde_json::from_value(filter).map_err(|e| {
            FfiError::new(
                ferromcp_status::FERROMCP_INVALID_JSON,
                format!("`filter_json`: {e}"),
            )
        })?;
        let mut subscription = block(client.listen(filter))?;
        let target = NotificationTarget {
            callback,
            userdata: Userdata::new(userdata, userdata_free),
        };
        let stop = CancellationToken::new();
        let stopped = stop.clone();
        let done = Arc::new(Done::default());
        let finished = done.clone();
        let id = NEXT_LISTENER.fetch_add(1, Ordering::Relaxed);
        // On a host thread, which it keeps while the subscription lasts:
        // notifications arrive in order and the callback may block
        // without holding up the runtime.
        C_THREADS.submit(Box::new(move || {
            LISTENER_ON_THREAD.with(|current| current.set(id));
            loop {
                let next = ferromcp_core::runtime::get().block_on(async {
                    tokio::select! {
                        note = subscription.next() => note,
                        _ = stopped.cancelled() => None,
                    }
                });
                if stopped.is_cancelled() {
                    break;
                }
                match next {
                    Some(note) => target.deliver(Some(&note.method), Some(note.params.to_string())),
                    None => {
                        target.deliver(None, None);
                        break;
                    }
                }
            }
            drop(subscription);
            drop(target);
            LISTENER_ON_THREAD.with(|current| current.set(0));
            finished.finish();
        }));
        let listener = ferromcp_listener { stop, done, id };
        // SAFETY: checked non-NULL; writable per the contract.
        unsafe { set_boxed_mut_ptr(out_listener, listener) };
        Ok(())
    })
}

/// Ends a subscription and frees its listener: no callback starts after
/// this returns (called from another thread, it waits for a running
/// callback to return; called from the listener's own callback, the
/// subscription ends once that callback returns).
///
/// - `listener`: from ferromcp_client_listen(), or NULL (nothing happens).
///
/// Threads: any thread that may block, including the listener's callback.
///
/// # Safety
/// `listener` NULL or live and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_listener_free(listener: *mut ferromcp_listener) {
    // SAFETY: NULL or allocated by ferromcp_client_listen; freed once
    // per the contract. Dropping it ends the subscription.
    unsafe { free_box(listener) }
}

/// Receives the outcome of ferromcp_client_call_tool_async().
///
/// - `userdata`: the pointer given with the call.
/// - `status`: FERROMCP_OK, or why the call failed (as
///   ferromcp_client_call_tool() would return it); during the callback,
///   ferromcp_last_error_message(), ferromcp_last_error_code() and
///   ferromcp_last_error_data_json() describe a failure.
/// - `result_json`: on FERROMCP_OK the CallToolResult as JSON text, else
///   NULL. Owned by ferromcp, valid only during the callback.
///
/// Threads: called exactly once, on a ferromcp host thread (never the
/// thread that started the call, never a runtime worker); it may block and
/// may call ferromcp, so an event loop usually posts the result to itself.
pub type ferromcp_call_done_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        status: ferromcp_status,
        result_json: *const c_char,
    ),
>;

struct DoneTarget {
    callback: unsafe extern "C" fn(*mut c_void, ferromcp_status, *const c_char),
    userdata: *mut c_void,
}

// SAFETY: the header requires the callback to be callable from a ferromcp
// thread with its userdata.
unsafe impl Send for DoneTarget {}

impl DoneTarget {
    fn finish(self, outcome: Result<String, FfiError>) {
        let outcome = outcome.and_then(|text| {
            CString::new(text).map_err(|_| {
                FfiError::new(
                    ferromcp_status::FERROMCP_INTERNAL,
                    "the result contains a NUL",
                )
            })
        });
        match outcome {
            // SAFETY: the callback contract; `text` outlives the call.
            Ok(text) => unsafe {
                (self.callback)(self.userdata, ferromcp_status::FERROMCP_OK, text.as_ptr())
            },
            Err(error) => {
                crate::error::set_last_error(&error);
                // SAFETY: the callback contract.
                unsafe { (self.callback)(self.userdata, error.status, std::ptr::null()) }
            }
        }
    }
}

/// Calls a tool without blocking: returns at once, and `done` receives the
/// outcome later on a ferromcp host thread. For event-loop programs.
///
/// - `client`: a connected client; it may be freed only after `done` ran.
/// - `name`, `arguments_json`, `timeout_ms`: as for ferromcp_client_call_tool().
/// - `cancel`: NULL, or a handle whose firing abandons the call (`done` then
///   gets FERROMCP_REQUEST_CANCELLED); it may be freed once this returns.
/// - `done`: called exactly once if this returns FERROMCP_OK, never otherwise.
/// - `userdata`: passed to `done`.
///
/// Returns FERROMCP_OK when the call started; FERROMCP_NULL_ARGUMENT,
/// FERROMCP_INVALID_UTF8, FERROMCP_INVALID_JSON for bad arguments (then
/// `done` is not called).
///
/// Threads: any thread, including ferromcp callbacks and runtime threads.
///
/// ```c
/// static void on_done(void *ud, ferromcp_status status, const char *result) {
///     if (status == FERROMCP_OK) puts(result);
/// }
/// ferromcp_client_call_tool_async(client, "echo", "{\"text\":\"hi\"}", 0, NULL,
///                                 on_done, NULL);
/// ```
///
/// # Safety
/// Pointers NULL or valid as described; `done` callable from another thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_call_tool_async(
    client: *const ferromcp_client,
    name: *const c_char,
    arguments_json: *const c_char,
    timeout_ms: u64,
    cancel: *const ferromcp_cancel_handle,
    done: ferromcp_call_done_callback,
    userdata: *mut c_void,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let client = unsafe { try_from(client, "client") }?.client.clone();
        let name = unsafe { required_str(name, "name") }?.to_owned();
        let arguments =
            Value::Object(unsafe { optional_object(arguments_json, "arguments_json") }?);
        let callback = done.ok_or_else(|| FfiError::null("done"))?;
        let controls = unsafe { CallControls::new(timeout_ms, None, std::ptr::null_mut(), cancel) };
        let (options, _) = controls.call_options();
        let target = DoneTarget { callback, userdata };
        let runtime = ferromcp_core::runtime::handle();
        let worker = runtime.clone();
        runtime.spawn(async move {
            // A task of its own: a panic still reaches `done` (through the
            // join handle) instead of leaving the caller waiting forever.
            let outcome = worker
                .spawn(async move {
                    let result = client.call_tool_with(&name, arguments, &options).await?;
                    Ok::<String, ferromcp_core::Error>(serde_json::to_string(&result)?)
                })
                .await;
            let outcome = match outcome {
                Ok(Ok(text)) => Ok(text),
                Ok(Err(error)) => Err(FfiError::from(error)),
                Err(join) => Err(FfiError::new(
                    ferromcp_status::FERROMCP_PANIC,
                    format!("ferromcp panicked: {join}"),
                )),
            };
            C_THREADS.submit(Box::new(move || target.finish(outcome)));
        });
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferromcp_core::client::{ClientCertificate, EraPreference, TlsOptions, TlsRoots};

    fn parse(text: &str) -> Result<ClientOptions, FfiError> {
        client_options(&parse_json_object(text, "options_json")?)
    }

    #[test]
    fn options_json_sets_identity_era_and_timeouts() {
        let options = parse(
            r#"{"name":"n","version":"2","era":"legacy","timeoutMs":0,"probeTimeoutMs":7,"stderr":"null"}"#,
        )
        .expect("valid options");
        assert_eq!(options.info.name, "n");
        assert_eq!(options.info.version, "2");
        assert_eq!(options.era, EraPreference::Legacy);
        assert_eq!(options.timeout, None);
        assert_eq!(options.probe_timeout, Duration::from_millis(7));
        let defaults = parse("{}").expect("empty options");
        assert_eq!(defaults.timeout, ClientOptions::default().timeout);
    }

    #[test]
    fn options_json_sets_tls() {
        let options =
            parse(r#"{"tlsRoots":"webpki","caCerts":["A","B"],"clientCert":"C","clientKey":"K"}"#)
                .expect("valid options");
        assert_eq!(options.tls.roots, TlsRoots::WebPki);
        assert_eq!(options.tls.ca_certs, ["A", "B"]);
        assert_eq!(
            options.tls.client_cert,
            Some(ClientCertificate {
                cert_chain_pem: "C".into(),
                key_pem: "K".into(),
            })
        );
        assert_eq!(parse("{}").expect("empty").tls, TlsOptions::default());
    }

    #[test]
    fn options_json_refuses_unknown_and_mistyped_members() {
        for bad in [
            r#"{"timeout":1}"#,
            r#"{"era":"old"}"#,
            r#"{"timeoutMs":-1}"#,
            r#"{"name":1}"#,
            r#"{"stderr":"file"}"#,
            r#"{"tlsRoots":"mine"}"#,
            r#"{"caCerts":"one"}"#,
            r#"{"caCerts":[1]}"#,
            r#"{"clientCert":"c"}"#,
        ] {
            let error = parse(bad).map(|_| ()).expect_err(bad);
            assert_eq!(
                error.status,
                ferromcp_status::FERROMCP_INVALID_JSON,
                "{bad}"
            );
        }
    }
}
