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

use ferromcp::protocol::{CreateMessageResult, ElicitResult, ListRootsResult};
use ferromcp::server::{
    BoxFuture, CompletionOutput, FromHost, HandlerError, PromptOutput, RequestContext,
    ResourceOutput, Responder, ToolOutput,
};
use napi::bindgen_prelude::{CallbackContext, FnArgs, JsError, PromiseRaw};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, JsValue, Status, Unknown};
use serde_json::Value;

use crate::context::{ContextSlot, JsRequestContext};
use crate::error;

/// Arguments of a JS callable: `(input, ctx)`; `ctx` is `null` for a
/// callable that serves no request (a client's answer to the server).
pub(crate) type HostCallArgs = FnArgs<(Value, Option<JsRequestContext>)>;

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
pub(crate) fn call<O: HostOutput>(
    callback: &JsCallback,
    ctx: Option<RequestContext>,
    input: Value,
) -> BoxFuture<Result<O, HandlerError>> {
    let (responder, outcome) = Responder::<O>::new();
    let (context, release) = match ctx.map(JsRequestContext::new) {
        Some((context, slot)) => (
            Some(context),
            Some(ReleaseOnDrop {
                slot,
                completed: false,
            }),
        ),
        None => (None, None),
    };
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
        let mut release = release;
        let outcome = outcome.wait().await;
        if let Some(release) = release.as_mut() {
            release.completed = true;
        }
        outcome
    })
}

/// Releases a call's context when dropped; `completed` tells whether the
/// call got its outcome or was given up by core.
struct ReleaseOnDrop {
    slot: ContextSlot,
    completed: bool,
}

impl Drop for ReleaseOnDrop {
    fn drop(&mut self) {
        self.slot.release(self.completed);
    }
}

/// Answers a call from what the JS callable did. Runs on the JS thread.
fn settle<O: HostOutput>(
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
        responder.respond(output(env, value));
    }
}

/// Answers the call when `promise` settles.
fn await_promise<O: HostOutput>(
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
                responder.respond(output(&resolved.env, resolved.value));
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
fn output<O: HostOutput>(env: &Env, value: Unknown<'_>) -> Result<O, HandlerError> {
    if let Some(output) = O::from_js(env, value) {
        return output;
    }
    let value = crate::json::from_js(value).map_err(|e| {
        HandlerError::Tool(format!(
            "TypeError: the {} handler returned a value with no JSON form: {}",
            O::KIND,
            e.reason
        ))
    })?;
    O::from_host(value).map_err(HandlerError::from)
}

/// The bytes of a `Uint8Array`/`Buffer` (other typed arrays are not bytes
/// and go through JSON like any object).
fn bytes(value: Unknown<'_>) -> Option<Vec<u8>> {
    use napi::bindgen_prelude::{FromNapiValue, Uint8Array};
    let raw = value.value();
    // SAFETY: `raw` is a live handle of the current JS thread's env (this
    // runs in the callback that received it); a typed array of another
    // element type fails the conversion instead of being misread.
    let array = unsafe { Uint8Array::from_napi_value(raw.env, raw.value) }.ok()?;
    Some(array.to_vec())
}

/// A kind of output a JS callable may produce: core's [`FromHost`] rule
/// for JSON values, plus what raw bytes (a `Uint8Array` or `Buffer`) mean
/// for the kind, if anything.
pub(crate) trait HostOutput: FromHost {
    /// The output for a JS value that has a meaning of its own for this
    /// kind (not read as JSON); `None` sends the value through JSON and
    /// core's rule.
    fn from_js(_env: &Env, _value: Unknown<'_>) -> Option<Result<Self, HandlerError>> {
        None
    }
}

impl HostOutput for PromptOutput {}
impl HostOutput for CompletionOutput {}
// A client's answers to the server (client.rs).
impl HostOutput for ElicitResult {}
impl HostOutput for CreateMessageResult {}
impl HostOutput for ListRootsResult {}

impl HostOutput for ToolOutput {
    /// An instance of the facade's `ToolResult` is a whole result.
    fn from_js(env: &Env, value: Unknown<'_>) -> Option<Result<Self, HandlerError>> {
        crate::tool_result::from_instance(env, value)
    }
}

impl HostOutput for ResourceOutput {
    /// A resource handler returning bytes (`Uint8Array`, `Buffer`) answers
    /// with one blob item.
    fn from_js(_env: &Env, value: Unknown<'_>) -> Option<Result<Self, HandlerError>> {
        if value.is_typedarray().unwrap_or(false) || value.is_buffer().unwrap_or(false) {
            return bytes(value).map(|bytes| Ok(ResourceOutput::Blob(bytes)));
        }
        None
    }
}

/// Runs `callable(input, null)` through the host-call adapter as a handler
/// of `kind` (`"tool"`, `"resource"`, `"prompt"` or `"completion"`); the
/// promise resolves with the output core built from the return value, as
/// Rust's debug text, or rejects with the handler error's message.
///
/// @internal For the binding's own tests: it shows that every kind goes
/// through the one adapter and core's rule for that kind, before the
/// user-facing APIs of those kinds exist.
#[cfg_attr(test, allow(dead_code))]
#[napi_derive::napi(
    ts_args_type = "kind: string, callable: (input: any, ctx: null) => unknown, input: unknown",
    ts_return_type = "Promise<string>"
)]
pub fn probe_host_call<'env>(
    env: &'env Env,
    kind: String,
    callable: napi::bindgen_prelude::Function<'_, HostCallArgs, Unknown<'static>>,
    input: Value,
) -> napi::Result<napi::bindgen_prelude::Object<'env>> {
    fn debug<O: std::fmt::Debug>(r: Result<O, HandlerError>) -> Result<String, String> {
        r.map(|o| format!("{o:?}")).map_err(|e| e.to_string())
    }
    let callback: JsCallback = callable
        .build_threadsafe_function()
        .weak::<true>()
        .build()?;
    let (deferred, promise) = env.create_deferred()?;
    ferromcp::runtime::handle().spawn(async move {
        let outcome = match kind.as_str() {
            "tool" => debug(call::<ToolOutput>(&callback, None, input).await),
            "resource" => debug(call::<ResourceOutput>(&callback, None, input).await),
            "prompt" => debug(call::<PromptOutput>(&callback, None, input).await),
            "completion" => debug(call::<CompletionOutput>(&callback, None, input).await),
            other => Err(format!("unknown kind {other:?}")),
        };
        deferred.resolve(move |_env| {
            outcome.map_err(|message| napi::Error::new(Status::GenericFailure, message))
        });
    });
    Ok(promise)
}
