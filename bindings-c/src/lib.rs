//! # polymcp C API
//!
//! A hand-written `extern "C"` layer over the `polymcp` core, compiled to
//! `libpolymcp.a` / `libpolymcp.so`. The header `include/polymcp.h` is
//! generated from these sources by a pinned cbindgen and committed; the
//! `header` test fails when they drift apart.
//!
//! The binding only adapts: C strings and JSON text to core types, C
//! callbacks to core's `ToolHandler`, core's `Completion` to the
//! `polymcp_call` handle. Protocol rules, transports and the tokio runtime
//! all belong to core.
//!
//! Conventions (after rustls-ffi): opaque types with `polymcp_<thing>_new`
//! / `_free`; object first, then inputs, then outputs; outputs written only
//! on success; every pointer NULL-checked; every exported body inside a
//! panic boundary; a stable numbered [`polymcp_status`] plus a per-thread
//! message ([`polymcp_last_error_message`]).
//!
//! Modules mirror core: `server` (core `server`), `handler` (core
//! `server::handler`), `error` (core `error`); `args`, `panic` and
//! `shutdown` are FFI plumbing.

// Exported names are C names (`polymcp_server`, `polymcp_status`...).
#![allow(non_camel_case_types)]

mod args;
mod error;
mod handler;
mod panic;
mod server;
mod shutdown;

pub use error::{polymcp_last_error_message, polymcp_status, polymcp_status_message};
pub use handler::{
    polymcp_call, polymcp_call_fail, polymcp_call_is_cancelled, polymcp_call_respond,
    polymcp_call_respond_result, polymcp_tool_callback, polymcp_userdata_free,
};
pub use server::{
    POLYMCP_TOOL_NONBLOCKING, polymcp_server, polymcp_server_add_tool, polymcp_server_add_tool_ex,
    polymcp_server_free, polymcp_server_http_port, polymcp_server_new, polymcp_server_serve_http,
    polymcp_server_serve_stdio, polymcp_server_shutdown,
};

// Unit tests, not integration tests: the crate builds no rlib, whose file
// name (libpolymcp.rlib) would collide with core's.
#[cfg(test)]
mod ffi_tests;
