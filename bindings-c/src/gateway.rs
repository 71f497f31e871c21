//! `ferromcp_mount`: core's gateway (`ferromcp::gateway`) for C. Another
//! server's tools, prompts, resources, templates and completions served as
//! part of a `ferromcp_server` under a prefix, reached through a
//! `ferromcp_client` or, for a server of the same process, an in-memory
//! pipe; and a server that proxies one upstream (`ferromcp_server_proxy`). Core does the mirroring, renaming and forwarding; this file checks
//! the arguments, blocks on core's runtime, and gives C a handle to take
//! the mount out again.

use std::ffi::c_char;
use std::sync::{Arc, Mutex};

use ferromcp_core::client::Client;
use ferromcp_core::gateway::Mount;
use ferromcp_core::server::Server;

use crate::args::{check_out, required_str};
use crate::client::{ferromcp_client, ferromcp_client_options, give_client, options_or_default};
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::{Castable, OwnershipBox, free_box, set_boxed_mut_ptr, try_box_from, try_from};
use crate::panic::ffi_boundary;
use crate::server::ferromcp_server;
use crate::threads::block;

/// Mounts left in place (their handle freed with ferromcp_mount_free()),
/// taken out when their server is freed. Shared by a server and its
/// mounts' handles, since either may go first: `None` once the server is
/// gone, and then a handle freed later takes its mount out itself.
///
/// Core leaves a dropped `Mount` in place for as long as the upstream
/// listens, and its watcher holds the server meanwhile: without this, a C
/// server freed with mounts in place would never drop its tools.
pub(crate) struct KeptMounts(Mutex<Option<Vec<Mount>>>);

impl KeptMounts {
    pub(crate) fn new() -> Arc<KeptMounts> {
        Arc::new(KeptMounts(Mutex::new(Some(Vec::new()))))
    }

    /// Keeps `mount` until the server is freed, or takes it out now if the
    /// server already was.
    fn keep(&self, mount: Mount) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match kept.as_mut() {
            Some(list) => list.push(mount),
            None => {
                drop(kept);
                unmount(mount);
            }
        }
    }

    /// Takes every kept mount out: the server is being freed.
    pub(crate) fn unmount_all(&self) {
        let kept = self.0.lock().unwrap_or_else(|e| e.into_inner()).take();
        for mount in kept.into_iter().flatten() {
            unmount(mount);
        }
    }
}

/// Takes `mount` out of its server, in the runtime's context: dropping the
/// last handle on the upstream client may need it (a C thread has none).
fn unmount(mount: Mount) {
    let _context = ferromcp_core::runtime::handle().enter();
    mount.unmount();
}

/// An upstream mounted in a server by ferromcp_server_mount_server() or
/// ferromcp_server_mount_client().
///
/// Opaque. Released either by ferromcp_mount_unmount(), which takes the
/// mount out of the server, or by ferromcp_mount_free(), which leaves it
/// in place until the server is freed. Not to be released from two threads
/// at once; otherwise any thread.
pub struct ferromcp_mount {
    /// `None` only between ferromcp_mount_unmount() taking it and the
    /// handle being dropped.
    mount: Option<Mount>,
    kept: Arc<KeptMounts>,
}

impl Castable for ferromcp_mount {
    type Ownership = OwnershipBox;
}

impl Drop for ferromcp_mount {
    /// ferromcp_mount_free(): the mount stays with its server.
    fn drop(&mut self) {
        if let Some(mount) = self.mount.take() {
            self.kept.keep(mount);
        }
    }
}

/// The prefix C passed in. Core checks it (before anything is sent) and
/// refuses a bad one as an invalid definition.
///
/// # Safety
/// `prefix` is NULL or NUL-terminated.
unsafe fn mount_prefix<'a>(prefix: *const c_char) -> Result<&'a str, FfiError> {
    // SAFETY: forwarded contract.
    unsafe { required_str(prefix, "prefix") }
}

fn give_mount(server: &ferromcp_server, mount: Mount, out: *mut *mut ferromcp_mount) {
    let handle = ferromcp_mount {
        mount: Some(mount),
        kept: server.kept_mounts.clone(),
    };
    // SAFETY: checked non-NULL by the caller; writable per the contract.
    unsafe { set_boxed_mut_ptr(out, handle) };
}

/// Serves another server of this process as part of `server`: its tools,
/// prompts, resources, resource templates and completions, renamed with
/// `prefix` (tool `echo` under `"alpha"` is `alpha_echo`, resource
/// `mem://r` is `alpha+mem://r`; in URIs a `_` of the prefix is written
/// `-`; an empty prefix keeps the names). What `upstream` adds or removes
/// later is followed (clients of `server` are told the list changed);
/// calls are forwarded over an in-memory pipe, with their progress, logs,
/// cancellation and questions to the client. Blocks until `upstream` has
/// been listed.
///
/// - `server`: the server that serves the mount, borrowed.
/// - `prefix`: a letter, then letters, digits, `-`, `_` and `.`, or "";
///   borrowed.
/// - `upstream`: the mounted server, borrowed; not `server` itself. The
///   mount holds its registrations, so it may be freed first: its
///   callbacks then go on serving the mount, and their finalizers run
///   once the mount is gone.
/// - `out_mount`: receives the mount handle on FERROMCP_OK; release it
///   with ferromcp_mount_unmount() or ferromcp_mount_free().
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_DEFINITION for a bad prefix (the
/// message, ferromcp_last_error_message(), says "invalid mount prefix")
/// or `upstream` being `server`; FERROMCP_NULL_ARGUMENT;
/// FERROMCP_INVALID_UTF8; FERROMCP_INVALID_STATE on a ferromcp runtime
/// thread (a FERROMCP_TOOL_NONBLOCKING callback).
///
/// Threads: any thread that may block, also while either server serves.
///
/// ```c
/// ferromcp_mount *mount = NULL;
/// if (ferromcp_server_mount_server(gateway, "weather", weather, &mount) == FERROMCP_OK) {
///     // clients of `gateway` now see `weather_forecast`
///     ferromcp_mount_unmount(mount); // and now no longer
/// }
/// ```
///
/// # Safety
/// `server` and `upstream` NULL or live; `prefix` NULL or NUL-terminated;
/// `out_mount` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_mount_server(
    server: *const ferromcp_server,
    prefix: *const c_char,
    upstream: *const ferromcp_server,
    out_mount: *mut *mut ferromcp_mount,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        let prefix = unsafe { mount_prefix(prefix) }?;
        let upstream = unsafe { try_from(upstream, "upstream") }?;
        check_out(out_mount, "out_mount")?;
        let mount = block(server.server.mount_server(prefix, &upstream.server))?;
        give_mount(server, mount, out_mount);
        Ok(())
    })
}

/// Serves what a connected client reaches as part of `server`, as
/// ferromcp_server_mount_server() does for a server of this process: a
/// program on stdio or a server on HTTP, of either protocol era (each
/// client of `server` is spoken to in its own). Blocks until the upstream
/// has been discovered and listed.
///
/// - `server`: the server that serves the mount, borrowed.
/// - `prefix`: as for ferromcp_server_mount_server().
/// - `upstream`: a client from ferromcp_client_connect_stdio() or
///   ferromcp_client_connect_http(), borrowed: the mount shares its
///   connection (and its options: timeouts, OAuth). Keep it until the
///   mount is gone: ferromcp_client_free() closes that connection, and
///   forwarded calls fail from then on. Questions an upstream on the
///   2025-11-25 era asks during a forwarded call reach the downstream
///   client only if `upstream`'s options declared them (an
///   ferromcp_client_options_on_input() callback of each kind).
/// - `out_mount`: receives the mount handle on FERROMCP_OK; release it
///   with ferromcp_mount_unmount() or ferromcp_mount_free().
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_DEFINITION for a bad prefix
/// ("invalid mount prefix"); the upstream's failures as
/// ferromcp_client_discover() returns them (FERROMCP_PEER_ERROR,
/// FERROMCP_TIMEOUT, FERROMCP_CONNECTION_CLOSED, FERROMCP_HTTP...);
/// FERROMCP_NULL_ARGUMENT; FERROMCP_INVALID_UTF8; FERROMCP_INVALID_STATE
/// on a ferromcp runtime thread.
///
/// Threads: any thread that may block, also while `server` serves.
///
/// ```c
/// ferromcp_client *files = NULL;
/// const char *args[] = {"-y", "@modelcontextprotocol/server-filesystem", ".", NULL};
/// ferromcp_client_connect_stdio("npx", args, NULL, NULL, NULL, &files);
/// ferromcp_mount *mount = NULL;
/// if (ferromcp_server_mount_client(gateway, "files", files, &mount) == FERROMCP_OK) {
///     ferromcp_mount_free(mount); // `files_read_file`... until `gateway` is freed
/// }
/// // after ferromcp_server_free(gateway): ferromcp_client_free(files);
/// ```
///
/// # Safety
/// `server` and `upstream` NULL or live; `prefix` NULL or NUL-terminated;
/// `out_mount` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_mount_client(
    server: *const ferromcp_server,
    prefix: *const c_char,
    upstream: *const ferromcp_client,
    out_mount: *mut *mut ferromcp_mount,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        let prefix = unsafe { mount_prefix(prefix) }?;
        let upstream = unsafe { try_from(upstream, "upstream") }?;
        check_out(out_mount, "out_mount")?;
        let mount = block(server.server.mount(prefix, upstream.client.clone()))?;
        give_mount(server, mount, out_mount);
        Ok(())
    })
}

/// Creates a server that serves what `upstream` serves, under the
/// upstream's own names, to clients of either protocol era: what
/// `ferromcp proxy` serves (a stdio program over HTTP, an HTTP server over
/// stdio, a 2025-11-25 server to 2026-07-28 clients and back). Its name,
/// version and instructions are the upstream's. Serve it like any server
/// (ferromcp_server_serve_http(), ferromcp_server_serve_stdio()); add tools
/// of its own beside the upstream's if you like. Blocks until the upstream
/// has been discovered and listed.
///
/// - `upstream`: a client from ferromcp_client_connect_stdio() or
///   ferromcp_client_connect_http(), borrowed: the proxy shares its
///   connection (and its options: timeouts, OAuth). Free it after the
///   proxy: ferromcp_client_free() closes that connection, and forwarded
///   calls fail from then on. Freeing the proxy lets the upstream go (it
///   stops following the upstream's changes).
/// - `out_server`: receives the new server on FERROMCP_OK; free it with
///   ferromcp_server_free().
///
/// Returns FERROMCP_OK; the upstream's failures as
/// ferromcp_client_discover() returns them (FERROMCP_PEER_ERROR,
/// FERROMCP_TIMEOUT, FERROMCP_CONNECTION_CLOSED, FERROMCP_HTTP...);
/// FERROMCP_NULL_ARGUMENT; FERROMCP_INVALID_STATE on a ferromcp runtime
/// thread.
///
/// Threads: any thread that may block.
///
/// ```c
/// ferromcp_client *remote = NULL;
/// ferromcp_client_connect_http("https://mcp.example.com/mcp", NULL, NULL, &remote);
/// ferromcp_server *proxy = NULL;
/// if (ferromcp_server_proxy(remote, &proxy) == FERROMCP_OK) {
///     ferromcp_server_serve_stdio(proxy); // until stdin closes
///     ferromcp_server_free(proxy);
/// }
/// ferromcp_client_free(remote);
/// ```
///
/// # Safety
/// `upstream` NULL or live; `out_server` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_proxy(
    upstream: *const ferromcp_client,
    out_server: *mut *mut ferromcp_server,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let upstream = unsafe { try_from(upstream, "upstream") }?;
        check_out(out_server, "out_server")?;
        let proxy = block(Server::proxy(upstream.client.clone()))?;
        let proxy = ferromcp_server::wrap(proxy)?;
        // SAFETY: checked non-NULL and writable per the contract.
        unsafe { set_boxed_mut_ptr(out_server, proxy) };
        Ok(())
    })
}

/// Takes a mount out of its server (clients listening are told the lists
/// changed) and frees the handle. Calls already forwarded finish.
///
/// - `mount`: from ferromcp_server_mount_server() or
///   ferromcp_server_mount_client(), or NULL (nothing happens). Invalid
///   after the call. Its server may already have been freed.
///
/// Returns nothing: it cannot fail.
///
/// Threads: any thread.
///
/// ```c
/// ferromcp_mount_unmount(mount); // `alpha_echo` is gone
/// ```
///
/// # Safety
/// `mount` NULL or live and not released yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_mount_unmount(mount: *mut ferromcp_mount) {
    let _ = ffi_boundary(|| {
        // SAFETY: NULL or from give_mount, released once per the contract.
        if let Some(mut handle) = unsafe { try_box_from(mount) }
            && let Some(mount) = handle.mount.take()
        {
            unmount(mount);
        }
        Ok(())
    });
}

/// Frees a mount handle, leaving the mount in place: its server serves it
/// until ferromcp_server_free() (which then takes it out). For a gateway
/// that mounts once and never unmounts.
///
/// - `mount`: from ferromcp_server_mount_server() or
///   ferromcp_server_mount_client(), or NULL (nothing happens). Invalid
///   after the call. If its server was already freed, the mount is taken
///   out now.
///
/// Returns nothing: it cannot fail.
///
/// Threads: any thread.
///
/// ```c
/// ferromcp_mount *mount = NULL;
/// if (ferromcp_server_mount_server(gateway, "alpha", alpha, &mount) == FERROMCP_OK)
///     ferromcp_mount_free(mount); // `alpha_*` stays until ferromcp_server_free(gateway)
/// ```
///
/// # Safety
/// `mount` NULL or live and not released yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_mount_free(mount: *mut ferromcp_mount) {
    // SAFETY: NULL or from give_mount, released once per the contract.
    // Dropping it keeps the mount with its server.
    unsafe { free_box(mount) }
}

/// Connects to a server of this process over an in-memory pipe: no
/// socket, no process, the whole protocol (questions for input, listen
/// streams, tasks). The way to test a server from C: make calls on the
/// client as a remote client would.
///
/// - `server`: the server to reach, borrowed; it serves this client (its
///   callbacks run as for any client) while you hold both. Free the client
///   before the server.
/// - `options`: NULL (defaults: the 2026-07-28 era) or options, copied
///   (still yours to free); their input callbacks answer the server's
///   questions.
/// - `out_client`: receives the client; free it with ferromcp_client_free().
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT; FERROMCP_INVALID_STATE on a
/// ferromcp runtime thread.
///
/// Threads: any thread that may block.
///
/// ```c
/// ferromcp_client *client = NULL;
/// if (ferromcp_client_connect_in_memory(server, NULL, &client) == FERROMCP_OK) {
///     char *result = NULL;
///     ferromcp_client_call_tool(client, "echo", "{\"text\":\"hi\"}", 0, NULL, NULL, NULL, &result);
///     ferromcp_string_free(result);
///     ferromcp_client_free(client);
/// }
/// ```
///
/// # Safety
/// `server` NULL or live; `options` NULL or live; `out_client` NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_connect_in_memory(
    server: *const ferromcp_server,
    options: *const ferromcp_client_options,
    out_client: *mut *mut ferromcp_client,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        check_out(out_client, "out_client")?;
        let options = options_or_default(options);
        let server = server.server.clone();
        // The pipe's tasks start on the runtime.
        let client = block(async move {
            Ok::<_, ferromcp_core::Error>(Client::in_memory_with(&server, options))
        })?;
        give_client(client, out_client);
        Ok(())
    })
}
