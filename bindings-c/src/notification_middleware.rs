//! Notification links written in C: a C callback that sees the
//! notifications a server (core `Middleware::notification`) or a client
//! (core `ClientMiddleware::notification`) receives, before it acts on
//! them, and may stop them or change their params. Registered as a link of
//! the same chain as the request links (ferromcp_server_add_middleware(),
//! ferromcp_client_add_middleware()), in the order added; its request side
//! passes every request straight on.
//!
//! Unlike a request link, the callback runs synchronously on the thread
//! that delivers the notification, in arrival order: for a server the
//! runtime task reading the connection; for a client the task awaiting the
//! call the notification belongs to (the thread blocked in a C client
//! call), or the transport's runtime task for those outside any call.

use serde_json::{Map, Value};
use std::ffi::{CString, c_char, c_void};

use ferromcp_core::host::notification_link::NotificationLink;
use ferromcp_core::protocol::jsonrpc::ReceivedNotification;

use crate::args::parse_json_object;
use crate::client::ferromcp_client;
use crate::error::ferromcp_status;
use crate::ffi::{Userdata, ferromcp_userdata_free, take_callback, try_from};
use crate::middleware::c_text;
use crate::panic::ffi_boundary;
use crate::server::ferromcp_server;

/// A notification link of a server, written in C (see
/// ferromcp_server_add_notification_middleware()): sees a notification the
/// server received (`notifications/initialized`,
/// `notifications/cancelled`, `notifications/roots/list_changed`...)
/// before the server acts on it.
///
/// - `userdata`: the pointer given at registration, passed back unchanged.
/// - `method`: e.g. `"notifications/cancelled"`, NUL-terminated UTF-8.
/// - `params_json`: the notification's params as compact JSON object text
///   (`_meta` included), `{}` when it had none.
/// - `replaced_params_json`: points to NULL. To change the params for the
///   links after this one and the server, set `*replaced_params_json` to a
///   JSON object made with ferromcp_string_new() (never a string from
///   malloc(), strdup() or a buffer of the program's own): ferromcp takes
///   it over and frees it, whatever the callback returns. Text that is not
///   a JSON object (or not UTF-8) is dropped and the params go on as they
///   were; a warning tells it to ferromcp_set_log_callback().
///
/// `method` and `params_json` are owned by ferromcp and valid until the
/// callback returns.
///
/// Returns true to pass the notification on (changed or not), false to
/// stop it here: neither the links after this one nor the server see it
/// (a stopped `notifications/cancelled` cancels nothing).
///
/// Threads: called on the ferromcp runtime thread that reads the
/// connection, synchronously, one notification at a time in arrival order
/// (unlike a ferromcp_middleware_callback, which runs on a host thread):
/// while it runs, nothing else arrives on that connection. So it must
/// return quickly: no blocking (no waiting on a lock held for long, no
/// I/O that may stall, no sleep), and no ferromcp function that waits
/// for the network (client calls, ferromcp_next_run()... fail there with
/// FERROMCP_INVALID_STATE). Several connections may call it at once, so
/// state reached through `userdata` must be thread-safe.
pub type ferromcp_notification_middleware_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        method: *const c_char,
        params_json: *const c_char,
        replaced_params_json: *mut *mut c_char,
    ) -> bool,
>;

/// A notification link of a client, written in C (see
/// ferromcp_client_add_notification_middleware()): sees a notification the
/// client received (`notifications/progress`, `notifications/message`,
/// list and resource changes, a subscription's events) before its
/// callbacks do (a call's ferromcp_progress_callback, a
/// ferromcp_notification_callback of ferromcp_client_listen()...).
///
/// - `userdata`: the pointer given at registration, passed back unchanged.
/// - `method`: e.g. `"notifications/progress"`, NUL-terminated UTF-8.
/// - `params_json`: the notification's params as compact JSON object text
///   (`{"progressToken":...,"progress":1,"message":"..."}`), `{}` when it
///   had none.
/// - `replaced_params_json`: points to NULL; set it, as for
///   ferromcp_notification_middleware_callback, to a JSON object made with
///   ferromcp_string_new() to change the params for the links after this
///   one and the callbacks (ferromcp frees it, whatever the callback
///   returns; text that is not a JSON object is dropped with a warning to
///   ferromcp_set_log_callback(), and the params go on as they were).
///
/// `method` and `params_json` are owned by ferromcp and valid until the
/// callback returns.
///
/// Returns true to pass the notification on (changed or not), false to
/// stop it here: the links after this one and the callbacks never see it.
///
/// Threads: called synchronously, in arrival order, on the thread that
/// delivers the notification (unlike a ferromcp_client_middleware_callback,
/// which runs on a host thread): a call's own notifications (its progress)
/// on the thread waiting for that call (the program's thread blocked in
/// ferromcp_client_call_tool() or ferromcp_client_request(), or a ferromcp
/// runtime thread for ferromcp_client_call_tool_async()), and notifications outside
/// any call on a ferromcp runtime thread. Either way the call's (or the
/// connection's) next notifications, and the call's result, wait for it:
/// it must return quickly, must not block, and must not call ferromcp
/// functions that wait for the network (client calls: on a runtime thread
/// they fail with FERROMCP_INVALID_STATE). Notifications of different
/// calls or connections may arrive at once, so state reached through
/// `userdata` must be thread-safe.
pub type ferromcp_client_notification_middleware_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        method: *const c_char,
        params_json: *const c_char,
        replaced_params_json: *mut *mut c_char,
    ) -> bool,
>;

type NotificationFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, *const c_char, *mut *mut c_char) -> bool;

/// A C notification callback, owning its userdata.
struct Hosted {
    callback: NotificationFn,
    userdata: Userdata,
}

impl Hosted {
    /// Shows the notification to the callback: whether it goes on, and the
    /// params that go on with it (`None`: unchanged).
    fn pass(&self, method: &str, params: &Value) -> (bool, Option<Map<String, Value>>) {
        let method_text = c_text(method);
        let params_text = c_text(&match params {
            Value::Null => "{}".to_owned(),
            params => serde_json::to_string(params).unwrap_or_default(),
        });
        let mut replaced: *mut c_char = std::ptr::null_mut();
        // SAFETY: the callback contract in the header: both strings outlive
        // the call, and `replaced` is a writable pointer set to NULL.
        let go_on = unsafe {
            (self.callback)(
                self.userdata.get(),
                method_text.as_ptr(),
                params_text.as_ptr(),
                &mut replaced,
            )
        };
        if replaced.is_null() {
            return (go_on, None);
        }
        // SAFETY: the contract: a string from ferromcp_string_new(), whose
        // ownership the callback handed over.
        let replaced = unsafe { CString::from_raw(replaced) };
        if !go_on {
            return (false, None);
        }
        let parsed = replaced
            .to_str()
            .map_err(|_| "it is not UTF-8".to_owned())
            .and_then(|text| {
                parse_json_object(text, "replaced_params_json").map_err(|error| error.message)
            });
        match parsed {
            Ok(params) => (true, Some(params)),
            Err(why) => {
                tracing::warn!(
                    method,
                    "a notification middleware callback replaced the params with text that is \
                     not a JSON object ({why}); the notification goes on with its own params"
                );
                (true, None)
            }
        }
    }
}

impl Hosted {
    /// Core's hook: the callback's verdict, with its params if it replaced
    /// them (either side: `NotificationLink` makes it a link of both).
    fn notification(&self, notification: &mut ReceivedNotification) -> bool {
        let (go_on, replaced) = self.pass(&notification.method, &notification.params);
        if let Some(replaced) = replaced {
            notification.params = Value::Object(replaced);
        }
        go_on
    }
}

/// Adds a notification link written in C at the end of the server's
/// middleware chain: every notification the server receives from now on
/// (`notifications/initialized` after a 2025-11-25 client's handshake,
/// `notifications/cancelled`, `notifications/roots/list_changed`...; any
/// transport and era) goes through the chain's links in the order they
/// were added (request links added with ferromcp_server_add_middleware()
/// pass notifications on as they are) before the server acts on it. Each
/// may read it, change its params or stop it (see
/// ferromcp_notification_middleware_callback). As a request link, it
/// passes every request straight on.
///
/// - `server`: borrowed.
/// - `callback`: the link. Not NULL.
/// - `userdata`: passed to every call; may be NULL. On success ferromcp
///   owns it: `userdata_free` (may be NULL) is called once, when the
///   server is freed and no connection uses the chain any more.
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT (then `userdata` stays
/// the caller's and `userdata_free` is not called).
///
/// Threads: any thread, also while serving (notifications already on
/// their way through the chain finish without the new link).
///
/// ```c
/// // Counts what clients tell the server, and keeps it from being
/// // cancelled: a started request always runs to its end.
/// static atomic_long notes = 0;
///
/// static bool no_cancel(void *userdata, const char *method, const char *params_json,
///                       char **replaced_params_json) {
///     (void)userdata;
///     (void)params_json;
///     (void)replaced_params_json;
///     atomic_fetch_add(&notes, 1);
///     return strcmp(method, "notifications/cancelled") != 0;
/// }
/// ferromcp_server_add_notification_middleware(server, no_cancel, NULL, NULL);
/// ```
///
/// # Safety
/// `server` NULL or live; `callback` and `userdata_free` callable from any
/// thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_add_notification_middleware(
    server: *const ferromcp_server,
    callback: ferromcp_notification_middleware_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let server = unsafe { try_from(server, "server") }?;
        let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
        let hosted = Hosted { callback, userdata };
        server
            .server
            .add_middleware(NotificationLink(move |note: &mut ReceivedNotification| {
                hosted.notification(note)
            }));
        Ok(())
    })
}

/// Adds a notification link written in C at the end of the client's
/// middleware chain: every notification the client receives from now on
/// (progress, log messages, list and resource changes, subscription
/// events; either era, any transport) goes through the chain's links in
/// the order they were added (request links added with
/// ferromcp_client_add_middleware() pass notifications on as they are)
/// before the client's callbacks see it. Each may read it, change its
/// params or stop it (see
/// ferromcp_client_notification_middleware_callback). As a request link,
/// it passes every call straight on.
///
/// - `client`: borrowed (every function that takes it shares the chain).
/// - `callback`: the link. Not NULL.
/// - `userdata`: passed to every call; may be NULL. On success ferromcp
///   owns it: `userdata_free` (may be NULL) is called once, when the
///   client is freed and nothing delivers to the chain any more.
///
/// Returns FERROMCP_OK or FERROMCP_NULL_ARGUMENT (then `userdata` stays
/// the caller's and `userdata_free` is not called).
///
/// Threads: any thread, also while calls run.
///
/// ```c
/// // Progress messages reach the application in upper case.
/// static bool shout(void *userdata, const char *method, const char *params_json,
///                   char **replaced_params_json) {
///     (void)userdata;
///     char *message = NULL;
///     if (strcmp(method, "notifications/progress") != 0 ||
///         ferromcp_json_get(params_json, "/message", &message) != FERROMCP_OK) {
///         return true;
///     }
///     char *progress = NULL, *token = NULL, text[512];
///     ferromcp_json_get_json(params_json, "/progress", &progress);
///     ferromcp_json_get_json(params_json, "/progressToken", &token);
///     for (char *c = message; *c != '\0'; c++) *c = (char)toupper((unsigned char)*c);
///     // (a message with quotes or backslashes would need escaping)
///     if (progress != NULL && token != NULL &&
///         snprintf(text, sizeof text, "{\"progressToken\":%s,\"progress\":%s,\"message\":\"%s\"}",
///                  token, progress, message) < (int)sizeof text) {
///         ferromcp_string_new(text, replaced_params_json);
///     }
///     ferromcp_string_free(message);
///     ferromcp_string_free(progress);
///     ferromcp_string_free(token);
///     return true;
/// }
/// ferromcp_client_add_notification_middleware(client, shout, NULL, NULL);
/// ```
///
/// # Safety
/// `client` NULL or live; `callback` and `userdata_free` callable from any
/// thread.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_add_notification_middleware(
    client: *const ferromcp_client,
    callback: ferromcp_client_notification_middleware_callback,
    userdata: *mut c_void,
    userdata_free: ferromcp_userdata_free,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let client = unsafe { try_from(client, "client") }?;
        let (callback, userdata) = take_callback(callback, userdata, userdata_free)?;
        let hosted = Hosted { callback, userdata };
        client
            .client
            .add_middleware(NotificationLink(move |note: &mut ReceivedNotification| {
                hosted.notification(note)
            }));
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Replaces the params with the text `userdata` points to (NULL: none)
    /// and passes the notification on unless its method is "stop".
    unsafe extern "C" fn replace(
        userdata: *mut c_void,
        method: *const c_char,
        _params: *const c_char,
        replaced: *mut *mut c_char,
    ) -> bool {
        if !userdata.is_null() {
            // SAFETY: the test's userdata is a NUL-terminated string.
            let text = unsafe { std::ffi::CStr::from_ptr(userdata.cast()) };
            // SAFETY: `replaced` is writable, as ferromcp_string_new() wants.
            let status = unsafe { crate::ffi::ferromcp_string_new(text.as_ptr(), replaced) };
            assert_eq!(status, ferromcp_status::FERROMCP_OK);
        }
        // SAFETY: `method` is NUL-terminated.
        unsafe { std::ffi::CStr::from_ptr(method) }.to_bytes() != b"stop"
    }

    fn hosted(text: Option<&'static std::ffi::CStr>) -> Hosted {
        let userdata = text.map_or(std::ptr::null_mut(), |t| t.as_ptr().cast_mut().cast());
        Hosted {
            callback: replace,
            userdata: Userdata::new(userdata, None),
        }
    }

    #[test]
    fn a_callback_passes_changes_or_stops_a_notification() {
        let params = json!({"progress": 1});
        assert_eq!(hosted(None).pass("go", &params), (true, None));
        assert_eq!(hosted(None).pass("stop", &params), (false, None));
        let changed = hosted(Some(c"{\"progress\":2}")).pass("go", &params);
        assert_eq!(changed, (true, json!({"progress": 2}).as_object().cloned()));
        // Stopped: the replacement is freed and dropped.
        assert_eq!(hosted(Some(c"{}")).pass("stop", &params), (false, None));
        // Not a JSON object: the params go on as they were.
        for bad in [c"{not json", c"[1]", c"null"] {
            assert_eq!(hosted(Some(bad)).pass("go", &params), (true, None));
        }
    }
}
