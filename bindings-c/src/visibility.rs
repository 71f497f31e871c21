//! A visibility rule written in C (core `server::visibility`): a C
//! predicate with userdata, adapted to core's `VisibilityRule`. Which items
//! a hidden one keeps out of lists, and that a call of a hidden item fails
//! as an unknown one does, are core's rules. The exported functions that
//! set and clear the rule are in `server.rs`.

use std::ffi::{CString, c_char, c_int, c_void};

use ferromcp_core::server::{RequestMeta, Server, VisibilityRule, Visible};

use crate::context::meta_json;
use crate::ffi::Userdata;

/// ferromcp_visibility_callback `kind`: a tool; `key` is its name.
pub const FERROMCP_VISIBLE_TOOL: c_int = 0;
/// ferromcp_visibility_callback `kind`: a resource with a fixed URI; `key`
/// is the URI.
pub const FERROMCP_VISIBLE_RESOURCE: c_int = 1;
/// ferromcp_visibility_callback `kind`: a resource template; `key` is its
/// `uriTemplate` (asked for reads of the URIs it matches, too).
pub const FERROMCP_VISIBLE_RESOURCE_TEMPLATE: c_int = 2;
/// ferromcp_visibility_callback `kind`: a prompt; `key` is its name.
pub const FERROMCP_VISIBLE_PROMPT: c_int = 3;

/// Whether the caller of a request may see and use an item (see
/// ferromcp_server_set_visibility()).
///
/// - `userdata`: the pointer given to ferromcp_server_set_visibility().
/// - `meta_json`: who asks, as compact JSON text:
///   `{"protocolVersion","clientInfo","clientCapabilities","auth"}`, the
///   same document ferromcp_middleware_request_meta_json() gives
///   (`clientInfo` and `auth` null when absent; `auth` is set only on a
///   server served with `"auth"`). Borrowed: valid until the callback
///   returns.
/// - `kind`: FERROMCP_VISIBLE_TOOL, FERROMCP_VISIBLE_RESOURCE,
///   FERROMCP_VISIBLE_RESOURCE_TEMPLATE or FERROMCP_VISIBLE_PROMPT (treat
///   values you do not know as a later version's kinds).
/// - `key`: the item's name, URI or URI template, NUL-terminated UTF-8,
///   borrowed until the callback returns.
///
/// Returns true to show the item to this caller, false to hide it.
///
/// Threads and timing: called synchronously, from whichever thread serves
/// the request (a runtime worker included), for each item of every list
/// page and for every call, read, prompt get and completion, while the
/// server holds its registry's lock. So it must be fast and must not block,
/// and it must not call back into the server (adding or removing a
/// primitive, setting the rule, serving: that deadlocks); reading
/// `meta_json` with ferromcp_json_get() is fine. Several threads may call
/// it at once.
pub type ferromcp_visibility_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        meta_json: *const c_char,
        kind: c_int,
        key: *const c_char,
    ) -> bool,
>;

type RuleFn = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *const c_char) -> bool;

/// A C predicate as core's rule, owning its userdata: the finalizer runs
/// when core drops the rule (replaced, cleared, or the server freed).
struct CallbackRule {
    callback: RuleFn,
    userdata: Userdata,
}

impl VisibilityRule for CallbackRule {
    fn visible(&self, meta: &RequestMeta, item: Visible<'_>) -> bool {
        let (kind, key) = match item {
            Visible::Tool(name) => (FERROMCP_VISIBLE_TOOL, name),
            Visible::Resource(uri) => (FERROMCP_VISIBLE_RESOURCE, uri),
            Visible::ResourceTemplate(template) => (FERROMCP_VISIBLE_RESOURCE_TEMPLATE, template),
            Visible::Prompt(name) => (FERROMCP_VISIBLE_PROMPT, name),
        };
        // serde_json escapes control characters: no interior NUL.
        let (Ok(meta), Ok(key)) = (CString::new(meta_json(meta)), CString::new(key)) else {
            // A key C cannot be shown whole stays hidden: failing closed.
            return false;
        };
        // SAFETY: the callback contract in the header; both strings
        // outlive the call.
        unsafe { (self.callback)(self.userdata.get(), meta.as_ptr(), kind, key.as_ptr()) }
    }
}

/// Sets `server`'s rule to the C predicate (the previous rule, if any, is
/// dropped and its finalizer runs).
pub(crate) fn set_rule(server: &Server, callback: RuleFn, userdata: Userdata) {
    server.set_visibility(CallbackRule { callback, userdata });
}
