//! The request context a JS tool handler receives as its second argument
//! (adapts `ferromcp::server::RequestContext`).
//!
//! The JS object may outlive the call (a handler can keep it in a closure),
//! and until the garbage collector runs, so the live core context, whose
//! notification channel keeps the transport's writer open, is held in a
//! [`ContextSlot`] that the handler empties when the call ends. Afterwards
//! the context reads as cancelled and sends nothing.

use std::sync::{Arc, Mutex, MutexGuard};

use ferromcp::server::{LogLevel, RequestContext, RequestMeta};
use napi::{Status, Unknown};
use napi_derive::napi;
use serde_json::Value;

/// The live core context of one call, shared by the JS object and the
/// handler invocation that releases it.
#[derive(Clone)]
pub(crate) struct ContextSlot(Arc<Mutex<Option<RequestContext>>>);

impl ContextSlot {
    fn lock(&self) -> MutexGuard<'_, Option<RequestContext>> {
        // Only an `Option` swap happens under the lock; a panic elsewhere
        // cannot leave it half-written.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Ends the call's access to the core context.
    pub(crate) fn release(&self) {
        self.lock().take();
    }
}

/// What a tool handler knows about the request it serves, and the channels
/// it may use while it runs. Valid during the call; afterwards it reads as
/// cancelled and `progress()`/`log()` send nothing.
///
/// @example
/// ```js
/// server.tool("slow", { inputSchema: { type: "object" } }, async (args, ctx) => {
///   for (let step = 1; step <= 3; step++) {
///     if (ctx.cancelled) return "stopped";
///     ctx.progress(step, 3, `step ${step}`);
///     await new Promise((resolve) => setTimeout(resolve, 100));
///   }
///   ctx.log("info", { done: true });
///   return "done";
/// });
/// ```
#[napi(js_name = "RequestContext")]
pub struct JsRequestContext {
    live: ContextSlot,
    request_id: Value,
    method: String,
    meta: RequestMeta,
}

impl JsRequestContext {
    /// The JS-side context of a call, and the slot that ends its access to
    /// `ctx` when released.
    pub(crate) fn new(ctx: RequestContext) -> (Self, ContextSlot) {
        // A request id is a string or an integer; both always serialise.
        let request_id = serde_json::to_value(ctx.request_id()).unwrap_or(Value::Null);
        let method = ctx.method().to_owned();
        let meta = ctx.meta().clone();
        let live = ContextSlot(Arc::new(Mutex::new(Some(ctx))));
        let context = JsRequestContext {
            live: live.clone(),
            request_id,
            method,
            meta,
        };
        (context, live)
    }
}

#[napi]
impl JsRequestContext {
    /// The JSON-RPC id of the request (a string or a number).
    #[napi(getter, ts_return_type = "string | number")]
    pub fn request_id(&self) -> Value {
        self.request_id.clone()
    }

    /// The method being served, e.g. `"tools/call"`.
    #[napi(getter)]
    pub fn method(&self) -> String {
        self.method.clone()
    }

    /// The protocol revision the client speaks, from
    /// `_meta["io.modelcontextprotocol/protocolVersion"]`.
    #[napi(getter)]
    pub fn protocol_version(&self) -> String {
        self.meta.protocol_version.clone()
    }

    /// The capabilities the client declared in
    /// `_meta["io.modelcontextprotocol/clientCapabilities"]`.
    #[napi(getter, ts_return_type = "Record<string, unknown>")]
    pub fn client_capabilities(&self) -> Value {
        Value::Object(self.meta.client_capabilities.clone())
    }

    /// The client's `Implementation` (`name`, `version`, ...), when it sent one.
    #[napi(getter, ts_return_type = "Record<string, unknown> | undefined")]
    pub fn client_info(&self) -> Option<Value> {
        self.meta.client_info.clone()
    }

    /// True once the client cancelled the request or went away (or the call
    /// is over); a handler doing long work should check it and stop early.
    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.live
            .lock()
            .as_ref()
            .is_none_or(|ctx| ctx.is_cancelled())
    }

    /// Sends `notifications/progress` if the client asked for progress
    /// (sent a `progressToken`). Returns whether a notification was sent.
    #[napi]
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        self.live
            .lock()
            .as_ref()
            .is_some_and(|ctx| ctx.progress(progress, total, message.as_deref()))
    }

    /// Sends `notifications/message` when the request's log level admits
    /// `level` (one of `"debug"`, `"info"`, `"notice"`, `"warning"`,
    /// `"error"`, `"critical"`, `"alert"`, `"emergency"`). Returns whether a
    /// notification was sent.
    #[napi(
        ts_args_type = "level: 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency', data: unknown, logger?: string"
    )]
    pub fn log(
        &self,
        level: String,
        data: Unknown<'_>,
        logger: Option<String>,
    ) -> napi::Result<bool> {
        let level = LogLevel::parse(&level).ok_or_else(|| {
            napi::Error::new(
                Status::InvalidArg,
                format!(
                    "unknown log level {level:?}; expected one of debug, info, notice, warning, error, critical, alert, emergency"
                ),
            )
        })?;
        let data = crate::json::from_js(data)?;
        Ok(self
            .live
            .lock()
            .as_ref()
            .is_some_and(|ctx| ctx.log(level, data, logger.as_deref())))
    }
}
