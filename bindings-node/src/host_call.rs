//! The one adapter that runs a JS callable behind core's handler boundary,
//! for every kind of output (`O: FromHost`: a tool, resource, prompt or
//! completion output, or a client's answer to the server).
//!
//! A call reaches the JS thread through a typed threadsafe function. The
//! callable's return value is read there: a plain value answers the call at
//! once; a promise is awaited by attaching `then`/`catch` callbacks that
//! answer it later. Either way the outcome travels back to the runtime
//! through a core [`Responder`], so the runtime thread never blocks on JS.
//! What the callable returned becomes `O` by core's rule for that kind
//! ([`FromHost`]); if core stops waiting (cancellation, closed connection)
//! the call's context is released.
//!
//! Per-kind files (today `handler.rs` for tools) only say which callable
//! runs with which input.

use std::cell::Cell;
use std::rc::Rc;

use ferromcp::server::{BoxFuture, FromHost, HandlerError, RequestContext, Responder};
use napi::bindgen_prelude::{CallbackContext, FnArgs, JsError, PromiseRaw};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, JsValue, Status, Unknown};
use serde_json::Value;

use crate::context::{ContextSlot, JsRequestContext};
use crate::error;

/// Arguments of a JS callable: `(input, ctx)`.
pub(crate) type HostCallArgs = FnArgs<(Value, JsRequestContext)>;

/// A JS callable reachable from any thread.
///
/// The return type is read as a raw `Unknown` because it may be a plain
/// value or a promise; it is only ever touched inside the completion
/// callback, on the JS thread, while the value is alive, which is what makes
/// the `'static` lifetime sound here. `Weak = true`: a registered callable
/// must not keep the event loop alive once the server stops serving.
pub(crate) type JsCallback =
    ThreadsafeFunction<HostCallArgs, Unknown<'static>, HostCallArgs, Status, false, true>;

/// Runs `callback(input, ctx)` on the JS thread and turns its outcome into
/// `O`.
pub(crate) fn call<O: FromHost>(
    callback: &JsCallback,
    ctx: RequestContext,
    input: Value,
) -> BoxFuture<Result<O, HandlerError>> {
    let (responder, outcome) = Responder::<O>::new();
    let (context, slot) = JsRequestContext::new(ctx);
    let release = ReleaseOnDrop(slot);
    let status = callback.call_with_return_value(
        FnArgs::from((input, context)),
        ThreadsafeFunctionCallMode::NonBlocking,
        move |returned, env| {
            settle(&env, returned, responder);
            Ok(())
        },
    );
    if status != Status::Ok {
        // Not queued: the env is shutting down. The responder was dropped
        // with the call, so report why instead of waiting.
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

/// Releases a call's context when dropped.
struct ReleaseOnDrop(ContextSlot);

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        self.0.release();
    }
}

/// Answers a call from what the JS callable did. Runs on the JS thread.
fn settle<O: FromHost>(
    env: &Env,
    returned: napi::Result<Unknown<'static>>,
    responder: Responder<O>,
) {
    let value = match returned {
        Ok(value) => value,
        Err(thrown) => {
            // A synchronous throw: napi kept a reference to the thrown
            // value, which `into_unknown` hands back unchanged.
            let thrown = JsError::from(thrown).into_unknown(*env);
            responder.respond(Err(error::from_thrown(env, thrown)));
            return;
        }
    };
    if value.is_promise().unwrap_or(false) {
        // If attaching the callbacks fails, the responder is dropped with
        // them and reports a handler error: the call never hangs.
        let _ = await_promise(value, responder);
    } else {
        responder.respond(output(value));
    }
}

/// Answers the call when `promise` settles.
fn await_promise<O: FromHost>(
    promise: Unknown<'static>,
    responder: Responder<O>,
) -> napi::Result<()> {
    // SAFETY: `is_promise` said so.
    let promise: PromiseRaw<'_, Unknown<'static>> = unsafe { promise.cast() }?;
    // `then` and `catch` each get a way to answer; whichever runs first
    // takes the responder (a throwing `then` callback would run `catch`
    // too, and must not answer twice).
    let on_resolve = Rc::new(Cell::new(Some(responder)));
    let on_reject = on_resolve.clone();
    promise
        .then(move |resolved: CallbackContext<Unknown<'static>>| {
            if let Some(responder) = on_resolve.take() {
                responder.respond(output(resolved.value));
            }
            Ok(())
        })?
        .catch(move |rejected: CallbackContext<Unknown<'static>>| {
            if let Some(responder) = on_reject.take() {
                responder.respond(Err(error::from_thrown(&rejected.env, rejected.value)));
            }
            Ok(())
        })?;
    Ok(())
}

/// A callable's return value as core output: converted to JSON, then
/// turned into `O` by core's rule for the kind.
fn output<O: FromHost>(value: Unknown<'_>) -> Result<O, HandlerError> {
    let value = crate::json::from_js(value).map_err(|e| {
        HandlerError::Tool(format!(
            "TypeError: the {} handler returned a value with no JSON form: {}",
            O::KIND,
            e.reason
        ))
    })?;
    O::from_host(value).map_err(HandlerError::from)
}
