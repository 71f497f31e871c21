//! # ferromcp C API
//!
//! A hand-written `extern "C"` layer over the `ferromcp` core, compiled to
//! `libferromcp.a` / `libferromcp.so`. The header `include/ferromcp.h` is
//! generated from these sources by a pinned cbindgen and committed; the
//! `header` test fails when they drift apart.
//!
//! The binding only adapts: C strings and JSON text to core types, C
//! callbacks to core's handlers, core's `Responder` (of any output kind) to
//! the `ferromcp_call` handle. Protocol rules, transports and the tokio runtime
//! all belong to core.
//!
//! Conventions (after rustls-ffi): opaque types with `ferromcp_<thing>_new`
//! / `_free`; object first, then inputs, then outputs; outputs written only
//! on success; every pointer NULL-checked; every exported body inside a
//! panic boundary; a stable numbered [`ferromcp_status`] plus a per-thread
//! message ([`ferromcp_last_error_message`]).
//!
//! One file per C class, holding every exported function of that class:
//! `server` (`ferromcp_server_*`, core `server`), `host_call`
//! (`ferromcp_call_*`: the one call handle, for every kind of call),
//! `context` (`ferromcp_context_*`, core `server::context`), `client`
//! (`ferromcp_client_*` and its cancel handles and listeners), `oauth`
//! (`ferromcp_oauth_*`), `json` (`ferromcp_json_*`), `result`
//! (`ferromcp_result_*`), `gateway` (`ferromcp_mount_*` and the
//! `ferromcp_server_mount_*` functions, core `gateway`), `middleware`
//! (`ferromcp_middleware_request_*` and ferromcp_next_run(), with the
//! adapter of C links, core `server::middleware`), `client_middleware`
//! (ferromcp_client_add_middleware(), `ferromcp_client_middleware_request_*`
//! and ferromcp_client_next_run(), core `client::middleware`) and `error`
//! (statuses and the last error). Beside them, the adapters of each kind
//! of callback (`handler` for tools, `primitives` for resources, prompts and
//! completion, `visibility` for visibility rules, `auth` for token checks)
//! and the JSON `options`; `ffi` (ownership across the boundary),
//! `args`, `panic`, `threads` and `shutdown` are FFI plumbing.

// Exported names are C names (`ferromcp_server`, `ferromcp_status`...).
#![allow(non_camel_case_types)]

mod args;
mod auth;
mod client;
mod client_middleware;
mod client_skill;
mod client_task;
mod context;
mod error;
mod ffi;
mod gateway;
mod handler;
mod host_call;
mod json;
mod logs;
mod middleware;
mod notification_middleware;
mod oauth;
mod options;
mod panic;
mod primitives;
mod result;
mod server;
mod shutdown;
mod telemetry;
mod threads;
mod visibility;

pub use error::{
    ferromcp_last_error_code, ferromcp_last_error_data_json, ferromcp_last_error_message,
    ferromcp_status, ferromcp_status_message,
};
pub use ffi::{ferromcp_string_free, ferromcp_string_new, ferromcp_userdata_free};
pub use gateway::{
    ferromcp_mount, ferromcp_mount_free, ferromcp_mount_unmount, ferromcp_server_mount_client,
    ferromcp_server_mount_server,
};
pub use handler::ferromcp_tool_callback;
pub use host_call::{
    ferromcp_call, ferromcp_call_accept_token, ferromcp_call_context, ferromcp_call_fail,
    ferromcp_call_fail_jsonrpc, ferromcp_call_is_cancelled, ferromcp_call_reject_token,
    ferromcp_call_respond, ferromcp_call_respond_result,
};
pub use server::{
    FERROMCP_TOOL_NONBLOCKING, ferromcp_server, ferromcp_server_add_builtin_middleware,
    ferromcp_server_add_middleware, ferromcp_server_add_prompt, ferromcp_server_add_resource,
    ferromcp_server_add_resource_template, ferromcp_server_add_tool, ferromcp_server_add_tool_ex,
    ferromcp_server_add_tool_json, ferromcp_server_clear_visibility, ferromcp_server_free,
    ferromcp_server_http_port, ferromcp_server_new, ferromcp_server_new_with_options,
    ferromcp_server_notify_resource_updated, ferromcp_server_remove_prompt,
    ferromcp_server_remove_resource, ferromcp_server_remove_resource_template,
    ferromcp_server_remove_tool, ferromcp_server_require_scopes, ferromcp_server_serve_http,
    ferromcp_server_serve_http_ex, ferromcp_server_serve_stdio, ferromcp_server_set_completion,
    ferromcp_server_set_token_verifier, ferromcp_server_set_visibility, ferromcp_server_shutdown,
};

pub use auth::{ferromcp_scope_target, ferromcp_token_verifier};
pub use client::{
    ferromcp_cancel_handle, ferromcp_cancel_handle_cancel, ferromcp_cancel_handle_free,
    ferromcp_cancel_handle_new, ferromcp_client, ferromcp_client_call_tool,
    ferromcp_client_complete, ferromcp_client_connect_http, ferromcp_client_connect_stdio,
    ferromcp_client_discover, ferromcp_client_free, ferromcp_client_get_prompt,
    ferromcp_client_input_callback, ferromcp_client_list, ferromcp_client_options,
    ferromcp_client_options_free, ferromcp_client_options_new, ferromcp_client_options_on_input,
    ferromcp_client_options_set_oauth, ferromcp_client_protocol_version,
    ferromcp_client_read_resource, ferromcp_list_kind, ferromcp_progress_callback,
};
pub use context::{
    ferromcp_cancel_callback, ferromcp_context, ferromcp_context_ask, ferromcp_context_ask_all,
    ferromcp_context_auth_json, ferromcp_context_client_capabilities_json,
    ferromcp_context_client_info_json, ferromcp_context_close_sse_stream, ferromcp_context_elicit,
    ferromcp_context_http_header, ferromcp_context_is_cancelled, ferromcp_context_list_roots,
    ferromcp_context_log, ferromcp_context_log_json, ferromcp_context_on_cancel,
    ferromcp_context_progress, ferromcp_context_protocol_version, ferromcp_context_sample,
    ferromcp_input_kind,
};
pub use json::{ferromcp_json_get, ferromcp_json_get_json, ferromcp_json_keys};
pub use middleware::{
    ferromcp_middleware_callback, ferromcp_middleware_request,
    ferromcp_middleware_request_http_header, ferromcp_middleware_request_meta_json,
    ferromcp_middleware_request_method, ferromcp_middleware_request_name,
    ferromcp_middleware_request_params_json, ferromcp_next, ferromcp_next_run,
};
pub use notification_middleware::{
    ferromcp_client_add_notification_middleware, ferromcp_client_notification_middleware_callback,
    ferromcp_notification_middleware_callback, ferromcp_server_add_notification_middleware,
};
pub use oauth::{
    ferromcp_oauth_assertion_callback, ferromcp_oauth_authorize_callback,
    ferromcp_oauth_headless_authorize, ferromcp_oauth_loopback, ferromcp_oauth_loopback_bind,
    ferromcp_oauth_loopback_free, ferromcp_oauth_loopback_redirect_uri,
    ferromcp_oauth_loopback_wait, ferromcp_oauth_options, ferromcp_oauth_options_free,
    ferromcp_oauth_options_new, ferromcp_oauth_options_on_assertion,
    ferromcp_oauth_options_on_authorize, ferromcp_oauth_options_set_store, ferromcp_oauth_record,
    ferromcp_oauth_reply, ferromcp_oauth_reply_fail, ferromcp_oauth_reply_set,
    ferromcp_oauth_store_load_callback, ferromcp_oauth_store_save_callback,
};
pub use primitives::{ferromcp_json_callback, ferromcp_resource_callback};
pub use visibility::{
    FERROMCP_VISIBLE_PROMPT, FERROMCP_VISIBLE_RESOURCE, FERROMCP_VISIBLE_RESOURCE_TEMPLATE,
    FERROMCP_VISIBLE_TOOL, ferromcp_visibility_callback,
};

// Unit tests, not integration tests: the crate builds no rlib, whose file
// name (libferromcp.rlib) would collide with core's.
#[cfg(test)]
mod ffi_tests;
