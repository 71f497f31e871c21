//! `ferromcp_server`: core's `Server` behind an opaque pointer, plus the
//! blocking serve functions C programs call from a thread of their own.

use std::ffi::{c_char, c_void};
use std::future::Future;
use std::net::ToSocketAddrs;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};

use ferromcp_core::protocol::Tool;
use ferromcp_core::server::{RequestContext, Server};
use ferromcp_core::transport::http::{HttpOptions, HttpServer};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::args::{check_out, optional_str, parse_json_object, required_ref, required_str};
use crate::error::{FfiError, ferromcp_status};
use crate::handler::{CallbackTool, ferromcp_tool_callback, ferromcp_userdata_free};
use crate::panic::ffi_boundary;
use crate::shutdown::ShutdownSignal;

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
    pub(crate) verifier: crate::auth::VerifierSlot,
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
        let run = http.run();
        tokio::pin!(run);
        tokio::select! {
            result = &mut run => Ok(result?),
            requested = self.shutdown.requested() => {
                // Core's own shutdown path: stop accepting, let connections
                // finish their current response.
                stop.cancel();
                requested.map_err(ferromcp_core::Error::from)?;
                Ok(run.await?)
            }
        }
    }

    async fn serve_stdio(&self) -> Result<(), FfiError> {
        let stop = CancellationToken::new();
        let run = self.server.serve_stdio_until(stop.clone());
        tokio::pin!(run);
        tokio::select! {
            result = &mut run => Ok(result?),
            requested = self.shutdown.requested() => {
                // Core's graceful path: stop reading, end listen streams with
                // their result, give requests in flight the grace period.
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
        unsafe { out_server.write(Box::into_raw(server)) };
        Ok(())
    })
}

impl ferromcp_server {
    pub(crate) fn wrap(server: Server) -> Result<Box<ferromcp_server>, FfiError> {
        let shutdown = ShutdownSignal::new().map_err(ferromcp_core::Error::from)?;
        Ok(Box::new(ferromcp_server {
            server,
            shutdown,
            serving: AtomicBool::new(false),
            http_port: AtomicU16::new(0),
            verifier: std::sync::Mutex::new(None),
        }))
    }
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
    // A panic here (a finalizer cannot unwind) has nowhere to be reported.
    let _ = ffi_boundary(|| {
        if !server.is_null() {
            // SAFETY: allocated by ferromcp_server_new; freed once per the contract.
            drop(unsafe { Box::from_raw(server) });
        }
        Ok(())
    });
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

/// ferromcp_server_add_tool() with flags (see FERROMCP_TOOL_NONBLOCKING;
/// 0 behaves exactly like ferromcp_server_add_tool()).
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
    ffi_boundary(|| {
        if flags & !FERROMCP_TOOL_NONBLOCKING != 0 {
            return Err(FfiError::new(
                ferromcp_status::FERROMCP_INVALID_ARGUMENT,
                format!("unknown flags {flags:#x}"),
            ));
        }
        // SAFETY (every argument): forwarded contract.
        let server = unsafe { required_ref(server, "server") }?;
        let name = unsafe { required_str(name, "name") }?;
        let description = unsafe { optional_str(description, "description") }?;
        let input_schema = unsafe { required_str(input_schema_json, "input_schema_json") }?;
        let output_schema = unsafe { optional_str(output_schema_json, "output_schema_json") }?;
        let callback = callback.ok_or_else(|| FfiError::null("callback"))?;

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
            // Core dropped the handler; ours is now the last reference.
            registration.release_userdata();
            FfiError::from(error)
        })
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
        let server = unsafe { required_ref(server, "server") }?;
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
        let server = unsafe { required_ref(server, "server") }?;
        let host = unsafe { required_str(host, "host") }?;
        let invalid_host = |why: String| {
            FfiError::new(
                ferromcp_status::FERROMCP_INVALID_ARGUMENT,
                format!("cannot listen on host {host:?}: {why}"),
            )
        };
        let bind = (host, port)
            .to_socket_addrs()
            .map_err(|e| invalid_host(e.to_string()))?
            .next()
            .ok_or_else(|| invalid_host("it has no address".to_owned()))?;
        let options = HttpOptions {
            bind,
            shutdown: CancellationToken::new(),
            ..HttpOptions::default()
        };
        server.serve_blocking(server.serve_http(options))
    })
}

/// Resolves `host`:`port` for listening.
pub(crate) fn bind_address(host: &str, port: u16) -> Result<std::net::SocketAddr, FfiError> {
    let invalid_host = |why: String| {
        FfiError::new(
            ferromcp_status::FERROMCP_INVALID_ARGUMENT,
            format!("cannot listen on host {host:?}: {why}"),
        )
    };
    (host, port)
        .to_socket_addrs()
        .map_err(|e| invalid_host(e.to_string()))?
        .next()
        .ok_or_else(|| invalid_host("it has no address".to_owned()))
}

impl ferromcp_server {
    /// Serves HTTP with explicit options (see ferromcp_server_serve_http_ex()).
    pub(crate) fn serve_http_with(&self, options: HttpOptions) -> Result<(), FfiError> {
        self.serve_blocking(self.serve_http(options))
    }
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
        let server = unsafe { required_ref(server, "server") }?;
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
        let server = unsafe { required_ref(server, "server") }?;
        server.shutdown.raise();
        Ok(())
    })
}
