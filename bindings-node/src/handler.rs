//! JS tool handlers adapted to core's handler boundary
//! (`ferromcp::server::Handler<Value, ToolOutput>`, i.e. a `ToolHandler`).
//!
//! A call reaches the JS thread through a typed threadsafe function. The
//! handler's return value is read there: a plain value completes the call at
//! once; a promise is awaited by attaching `then`/`catch` callbacks that
//! complete it later. Either way the outcome travels back to the runtime
//! through a core `Completion`, so the runtime thread never blocks on JS.

use std::cell::Cell;
use std::rc::Rc;

use ferromcp::server::{
    BoxFuture, Handler, HandlerError, HandlerResult, RequestContext, Responder, ToolOutput,
};
use napi::bindgen_prelude::{CallbackContext, FnArgs, JsError, PromiseRaw};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, JsValue, Status, Unknown};
use serde_json::Value;

use crate::context::{ContextSlot, JsRequestContext};
use crate::error;

/// Arguments of a JS tool handler: `(args, ctx)`.
pub(crate) type ToolCallArgs = FnArgs<(Value, JsRequestContext)>;

/// A JS tool handler callable from any thread.
///
/// The return type is read as a raw `Unknown` because it may be a plain
/// value or a promise; it is only ever touched inside the completion
/// callback, on the JS thread, while the value is alive, which is what makes
/// the `'static` lifetime sound here. `Weak = true`: a registered handler
/// must not keep the event loop alive once the server stops serving.
pub(crate) type JsToolCallback =
    ThreadsafeFunction<ToolCallArgs, Unknown<'static>, ToolCallArgs, Status, false, true>;

/// A tool implemented in JS.
pub(crate) struct JsToolHandler {
    callback: JsToolCallback,
}

impl JsToolHandler {
    pub(crate) fn new(callback: JsToolCallback) -> Self {
        JsToolHandler { callback }
    }
}

impl Handler<Value, ToolOutput> for JsToolHandler {
    fn call(&self, ctx: RequestContext, arguments: Value) -> BoxFuture<HandlerResult> {
        let (completion, outcome) = Responder::new();
        let (context, slot) = JsRequestContext::new(ctx);
        let release = ReleaseOnDrop(slot);
        let status = self.callback.call_with_return_value(
            FnArgs::from((arguments, context)),
            ThreadsafeFunctionCallMode::NonBlocking,
            move |returned, env| {
                settle(&env, returned, completion);
                Ok(())
            },
        );
        if status != Status::Ok {
            // Not queued: the env is shutting down. The completion was
            // dropped with the call, so report why instead of waiting.
            return Box::pin(async move {
                Err(HandlerError::Tool(format!(
                    "Error: the JavaScript handler could not be called ({status})"
                )))
            });
        }
        Box::pin(async move {
            // Held across the wait: released when the call completes or when
            // core drops this future (cancellation, connection closed).
            let _release = release;
            outcome.wait().await
        })
    }
}

/// Releases a call's context when dropped.
struct ReleaseOnDrop(ContextSlot);

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// Completes a call from what the JS handler did. Runs on the JS thread.
fn settle(env: &Env, returned: napi::Result<Unknown<'static>>, completion: Responder) {
    let value = match returned {
        Ok(value) => value,
        Err(thrown) => {
            // A synchronous throw: napi kept a reference to the thrown
            // value, which `into_unknown` hands back unchanged.
            let thrown = JsError::from(thrown).into_unknown(*env);
            completion.respond(Err(error::from_thrown(env, thrown)));
            return;
        }
    };
    if value.is_promise().unwrap_or(false) {
        // If attaching the callbacks fails, the completion is dropped with
        // them and reports a tool error: the call never hangs.
        let _ = await_promise(value, completion);
    } else {
        completion.respond(output(value));
    }
}

/// Completes the call when `promise` settles.
fn await_promise(promise: Unknown<'static>, completion: Responder) -> napi::Result<()> {
    // SAFETY: `is_promise` said so.
    let promise: PromiseRaw<'_, Unknown<'static>> = unsafe { promise.cast() }?;
    // `then` and `catch` each get a way to complete; whichever runs first
    // takes the completion (a throwing `then` callback would run `catch`
    // too, and must not complete twice).
    let on_resolve = Rc::new(Cell::new(Some(completion)));
    let on_reject = on_resolve.clone();
    promise
        .then(move |resolved: CallbackContext<Unknown<'static>>| {
            if let Some(completion) = on_resolve.take() {
                completion.respond(output(resolved.value));
            }
            Ok(())
        })?
        .catch(move |rejected: CallbackContext<Unknown<'static>>| {
            if let Some(completion) = on_reject.take() {
                completion.respond(Err(error::from_thrown(&rejected.env, rejected.value)));
            }
            Ok(())
        })?;
    Ok(())
}

/// A handler's return value as core output: the value itself, which core
/// turns into a `CallToolResult`.
fn output(value: Unknown<'_>) -> HandlerResult {
    crate::json::from_js(value)
        .map(ToolOutput::Value)
        .map_err(|e| {
            HandlerError::Tool(format!(
                "TypeError: the tool handler returned a value with no JSON form: {}",
                e.reason
            ))
        })
}
