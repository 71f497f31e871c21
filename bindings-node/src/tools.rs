//! JS tool handlers adapted to core's handler boundary
//! (`ferromcp::server::Handler<Value, ToolOutput>`, i.e. a `ToolHandler`).
//!
//! Running the callable (value or promise, on the JS thread, released on
//! drop) is [`crate::host_call`]'s job for every kind; this file only says
//! which callable a tool runs.

use ferromcp::server::{BoxFuture, Handler, HandlerResult, RequestContext, ToolOutput};
use serde_json::Value;

use crate::host_call::{self, JsCallback};

/// A tool implemented in JS.
pub(crate) struct JsToolHandler {
    callback: JsCallback,
}

impl JsToolHandler {
    pub(crate) fn new(callback: JsCallback) -> Self {
        JsToolHandler { callback }
    }
}

impl Handler<Value, ToolOutput> for JsToolHandler {
    fn call(&self, ctx: RequestContext, arguments: Value) -> BoxFuture<HandlerResult> {
        host_call::call::<ToolOutput>(&self.callback, Some(ctx), arguments)
    }
}
