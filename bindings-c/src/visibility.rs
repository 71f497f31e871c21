//! A visibility rule written in C (core `server::visibility`): a C
//! predicate with userdata, adapted to core's `VisibilityRule`. Which items
//! a hidden one keeps out of lists, and that a call of a hidden item fails
//! as an unknown one does, are core's rules. The exported functions that
//! set and clear the rule are in `server.rs`.
//!
//! Core asks once per request, with every item the request needs judged,
//! and never while it holds its registry's lock. The C predicate then runs
//! once per item, on a host thread (as every C callback that is not
//! promised to be quick does), with one meta document built for the
//! request.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Arc;

use ferromcp_core::BoxFuture;
use ferromcp_core::host::caller::caller_value;
use ferromcp_core::server::{RequestMeta, Server, VisibilityRule, VisibleItem};
use serde_json::Value;
use tokio::sync::oneshot;

use crate::ffi::Userdata;
use crate::threads::C_THREADS;

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
///   `{"protocolVersion","clientInfo","clientCapabilities","auth",
///   "headers"}`, the same document ferromcp_middleware_request_meta_json()
///   gives (`clientInfo` and `auth` null when absent; `auth` is set only on
///   a server served with `"auth"`; `headers` the HTTP request's without
///   credentials, `{}` over stdio and in memory). Built once per request: every item of one
///   request is asked with the same text, at the same address. Borrowed:
///   valid until the callback returns.
/// - `kind`: FERROMCP_VISIBLE_TOOL, FERROMCP_VISIBLE_RESOURCE,
///   FERROMCP_VISIBLE_RESOURCE_TEMPLATE or FERROMCP_VISIBLE_PROMPT (treat
///   values you do not know as a later version's kinds).
/// - `key`: the item's name, URI or URI template, NUL-terminated UTF-8,
///   borrowed until the callback returns.
///
/// Returns true to show the item to this caller, false to hide it.
///
/// Threads and timing: for each request the rule judges (every list, and
/// every call, read, prompt get and completion), the items it needs judged
/// (for a list: every item of its kind) are asked one after the other, in
/// one go, on a ferromcp host thread (never a runtime worker, as for
/// ferromcp_tool_callback). The server holds no lock meanwhile: the
/// callback may call back into the server (add or remove a primitive, even
/// set or clear the rule: a rule replaced while it judges a request is
/// finalized once it has answered for that request's every item). The
/// request waits for every answer, so it should not block long. Several
/// threads may call it at once, for different requests.
pub type ferromcp_visibility_callback = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        meta_json: *const c_char,
        kind: c_int,
        key: *const c_char,
    ) -> bool,
>;

type RuleFn = unsafe extern "C" fn(*mut c_void, *const c_char, c_int, *const c_char) -> bool;

/// A C predicate and its userdata, whose finalizer runs when the last
/// holder lets go: core's rule (replaced, cleared, or the server freed), or
/// a judging still running then.
struct Hosted {
    callback: RuleFn,
    userdata: Userdata,
}

/// The rule core holds.
struct CallbackRule(Arc<Hosted>);

impl VisibilityRule for CallbackRule {
    fn judge(&self, caller: &RequestMeta, items: Vec<VisibleItem>) -> BoxFuture<Vec<bool>> {
        if items.is_empty() {
            return Box::pin(std::future::ready(Vec::new()));
        }
        let hosted = Arc::clone(&self.0);
        // Once per request, whatever the number of items.
        let meta = Value::Object(caller_value(caller)).to_string();
        let (sender, verdicts) = oneshot::channel();
        // C callbacks may block, so never on a runtime worker.
        C_THREADS.submit(Box::new(move || {
            let answers = hosted.judge(meta, &items);
            // Let go before answering: once the request is answered,
            // replacing or clearing the rule finalizes it at once.
            drop(hosted);
            let _ = sender.send(answers);
        }));
        // No answer (the pool could not run it): core hides every item.
        Box::pin(async move { verdicts.await.unwrap_or_default() })
    }
}

impl Hosted {
    /// The C predicate's verdict on each of `items`, all asked with the
    /// same `meta` text.
    fn judge(&self, meta: String, items: &[VisibleItem]) -> Vec<bool> {
        let mut meta = meta.into_bytes();
        meta.push(0);
        // serde_json escapes control characters: no interior NUL.
        let Ok(meta) = CStr::from_bytes_with_nul(&meta) else {
            return Vec::new();
        };
        let mut key = Vec::new();
        items
            .iter()
            .map(|item| {
                let kind = match item {
                    VisibleItem::Tool(_) => FERROMCP_VISIBLE_TOOL,
                    VisibleItem::Resource(_) => FERROMCP_VISIBLE_RESOURCE,
                    VisibleItem::ResourceTemplate(_) => FERROMCP_VISIBLE_RESOURCE_TEMPLATE,
                    VisibleItem::Prompt(_) => FERROMCP_VISIBLE_PROMPT,
                };
                key.clear();
                key.extend_from_slice(item.key().as_bytes());
                key.push(0);
                // A key C cannot be shown whole stays hidden: failing closed.
                let Ok(text) = CStr::from_bytes_with_nul(&key) else {
                    return false;
                };
                // SAFETY: the callback contract in the header; both strings
                // outlive the call.
                unsafe { (self.callback)(self.userdata.get(), meta.as_ptr(), kind, text.as_ptr()) }
            })
            .collect()
    }
}

/// Sets `server`'s rule to the C predicate (the previous rule, if any, is
/// dropped and its finalizer runs, or once a judging of it still running
/// ends).
pub(crate) fn set_rule(server: &Server, callback: RuleFn, userdata: Userdata) {
    server.set_visibility(CallbackRule(Arc::new(Hosted { callback, userdata })));
}
