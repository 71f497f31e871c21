//! The one adapter that runs a JS callable behind core's handler boundary,
//! for every kind of output (`O: FromHost`: a tool, resource, prompt or
//! completion output, or a client's answer to the server).
//!
//! Calls reach the JS thread in batches: each callable has a queue, and one
//! threadsafe-function call drains every call queued by then. The hop
//! between core's runtime thread and the JS thread (a wake-up and two
//! thread switches, more than a small handler costs) is paid once per
//! batch rather than once per call, which is what makes 16 calls in flight
//! over stdio cheap. The wake-up is sent after the runtime has run
//! everything else that was ready (`yield_now`), so a burst of requests read
//! together is queued before the JS thread starts on it; and the outcomes of
//! a batch are handed back together after its last call, as one message to
//! the runtime (`ferromcp::runtime::run_batch`), so the runtime is not woken
//! (and the JS thread preempted, on a single core) once per call.
//!
//! The callable's return value is read on the JS thread: a plain value
//! answers the call at once; a promise is awaited by attaching
//! `then`/`catch` callbacks that answer it later. Either way the outcome
//! travels back to the runtime through a core [`Responder`], so the runtime
//! thread never blocks on JS. What the callable returned becomes `O` by
//! core's rule for that kind ([`FromHost`]); if core stops waiting
//! (cancellation, closed connection) the call's context is released.
//!
//! While ferromcp reports to the application's OpenTelemetry SDK, a call
//! core makes under a span (a request's, or a JS client call's) goes
//! through the facade's runner, which runs the callable in that span's
//! context (`telemetry.rs`).
//!
//! The per-kind files only say which callable runs with which input:
//! `tools.rs`, `primitives.rs` (resources, prompts, completion), `auth.rs`
//! (a token verifier), `middleware.rs` (a middleware link) and
//! `visibility.rs` (the visibility evaluator), both called with other
//! arguments through [`call_with`], and for a client `client.rs` (answers
//! to the server's input requests) and `oauth.rs` (OAuth callbacks).

use std::cell::Cell;
use std::rc::Rc;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use ferromcp::protocol::{CreateMessageResult, ElicitResult, ListRootsResult};
use ferromcp::server::{
    BoxFuture, CompletionOutput, FromHost, HandlerError, PromptOutput, RequestContext,
    ResourceOutput, Responder, ResponderReceiver, ToolOutput,
};
use ferromcp::telemetry::TraceContext;
use napi::bindgen_prelude::{
    CallbackContext, FnArgs, Function, FunctionRef, JsValuesTupleIntoVec, PromiseRaw, ToNapiValue,
};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, JsValue, Status, Unknown, sys};
use serde_json::Value;

use crate::context::{ContextSlot, JsRequestContext};
use crate::error;

/// Arguments of a JS callable: `(input, ctx)`; `ctx` is `null` for a
/// callable that serves no request (a client's answer to the server).
pub(crate) type HostCallArgs = FnArgs<(Value, Option<JsRequestContext>)>;

/// A JS callable as registered: `(input, ctx) => value | Promise`.
pub(crate) type HostFunction<'a> = Function<'a, HostCallArgs, Unknown<'static>>;

/// A JS callable reachable from any thread, with its queue of calls.
pub(crate) struct JsCallback {
    batch: Arc<Batch>,
}

/// The calls of one callable waiting for the JS thread, and how to wake it.
struct Batch {
    queue: Mutex<Queue>,
    /// Runs the drain on the JS thread. It wraps a no-op JS function: the
    /// drain itself (its `build_callback`) calls the callable once per
    /// queued call. `Weak = true`: a registered callable must not keep the
    /// event loop alive once the server stops serving.
    wake: OnceLock<ThreadsafeFunction<(), Unknown<'static>, (), Status, false, true>>,
}

struct Queue {
    calls: Vec<Box<dyn Job>>,
    /// A wake-up is on its way: later calls join its batch.
    scheduled: bool,
}

impl Batch {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Only pushes and swaps happen under the lock.
        self.queue
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Queues a call; true when the caller must send the wake-up.
    fn push(&self, job: Box<dyn Job>) -> bool {
        let mut queue = self.lock();
        queue.calls.push(job);
        !std::mem::replace(&mut queue.scheduled, true)
    }

    /// Sends the wake-up; if the JS side is gone, fails what is queued.
    fn wake(&self) {
        let status = match self.wake.get() {
            Some(wake) => wake.call((), ThreadsafeFunctionCallMode::NonBlocking),
            None => Status::Closing,
        };
        if status != Status::Ok {
            let calls = {
                let mut queue = self.lock();
                queue.scheduled = false;
                std::mem::take(&mut queue.calls)
            };
            for call in calls {
                call.fail(format!(
                    "Error: the JavaScript handler could not be called ({status})"
                ));
            }
        }
    }

    /// Runs every queued call. On the JS thread.
    fn drain(&self, env: &Env, function: &FunctionRef<HostCallArgs, Unknown<'static>>) {
        let calls = {
            let mut queue = self.lock();
            queue.scheduled = false;
            std::mem::take(&mut queue.calls)
        };
        let function = match function.borrow_back(env) {
            Ok(function) => function,
            Err(e) => {
                for call in calls {
                    call.fail(format!("Error: the JavaScript handler is gone ({e})"));
                }
                return;
            }
        };
        let raw = function.value().value;
        let mut outcomes = Vec::with_capacity(calls.len());
        for call in calls {
            if let Some(outcome) = call.run(env, raw) {
                outcomes.push(outcome);
            }
        }
        // Handed back together, as one message to the runtime: see the
        // module documentation.
        ferromcp::runtime::run_batch(outcomes);
    }
}

impl JsCallback {
    /// Adapts `function`, on the JS thread that registers it.
    pub(crate) fn new(function: &HostFunction<'_>) -> napi::Result<JsCallback> {
        let env = Env::from_raw(function.value().env);
        let function = function.create_ref()?;
        let queue = Mutex::new(Queue {
            calls: Vec::new(),
            scheduled: false,
        });
        let batch = Arc::new(Batch {
            queue,
            wake: OnceLock::new(),
        });
        // The batch owns the wake-up, whose callback (the drain) needs the
        // batch: it holds it weakly, so dropping the callable frees both.
        let weak = Arc::downgrade(&batch);
        let noop: Function<'_, (), Unknown<'static>> =
            env.create_function("ferromcpDrain", noop)?;
        let wake = noop
            .build_threadsafe_function::<()>()
            .weak::<true>()
            .build_callback(move |ctx| {
                if let Some(batch) = weak.upgrade() {
                    batch.drain(&ctx.env, &function);
                }
                Ok(())
            })?;
        let _ = batch.wake.set(wake);
        Ok(JsCallback { batch })
    }
}

/// The JS function the wake-up nominally calls: the work is the drain.
unsafe extern "C" fn noop(_env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
    // A null return reads as `undefined`.
    std::ptr::null_mut()
}

/// One queued call, with its output kind erased.
trait Job: Send {
    /// Calls the callable (a raw `napi_value` of the current scope); an
    /// outcome ready now is returned, to be handed back after the batch.
    fn run(self: Box<Self>, env: &Env, function: sys::napi_value) -> Option<Outcome>;
    /// Answers the call without running it.
    fn fail(self: Box<Self>, why: String);
}

/// Hands one call's outcome back to core (on a runtime worker).
type Outcome = ferromcp::runtime::BatchJob;

/// One call: the arguments (`(input, ctx)` for a handler, other tuples for
/// a middleware link or the visibility evaluator) and where its outcome
/// goes.
struct Call<O, A> {
    args: A,
    responder: Responder<O>,
    /// The span the call runs under, when the facade's telemetry is on
    /// (see `telemetry.rs`).
    trace: Option<TraceContext>,
}

impl<O: HostOutput + 'static, A: JsValuesTupleIntoVec + Send + 'static> Job for Call<O, A> {
    fn run(self: Box<Self>, env: &Env, function: sys::napi_value) -> Option<Outcome> {
        let Call {
            args,
            responder,
            trace,
        } = *self;
        let runner = trace
            .as_ref()
            .and_then(|trace| Some((trace, crate::telemetry::runner(env)?)));
        let returned = match runner {
            Some((trace, runner)) => invoke_in_span(env, runner, trace, function, args),
            None => invoke(env, function, args),
        };
        settle(env, returned, responder)
    }

    fn fail(self: Box<Self>, why: String) {
        self.responder.respond(Err(HandlerError::Tool(why)));
    }
}

/// Calls `function(...args)` with `this` undefined: its return value, or
/// what it threw.
fn invoke<A: JsValuesTupleIntoVec>(
    env: &Env,
    function: sys::napi_value,
    args: A,
) -> Result<Unknown<'static>, Thrown> {
    let args = args.into_vec(env.raw()).map_err(Thrown::Conversion)?;
    invoke_raw(env, function, args)
}

/// Calls `function(...args)` through the facade's telemetry runner,
/// `runner(traceparent, function, ...args)`, which runs it in the SDK span
/// of `trace`: what [`invoke`] does, under the span.
fn invoke_in_span<A: JsValuesTupleIntoVec>(
    env: &Env,
    runner: sys::napi_value,
    trace: &TraceContext,
    function: sys::napi_value,
    args: A,
) -> Result<Unknown<'static>, Thrown> {
    let raw_env = env.raw();
    let args = args.into_vec(raw_env).map_err(Thrown::Conversion)?;
    // SAFETY: `raw_env` is the current JS thread's env.
    let traceparent = unsafe { String::to_napi_value(raw_env, trace.traceparent()) }
        .map_err(Thrown::Conversion)?;
    let mut all = Vec::with_capacity(args.len() + 2);
    all.push(traceparent);
    all.push(function);
    all.extend(args);
    invoke_raw(env, runner, all)
}

/// Calls `function(...args)`, `args` being values of the current scope.
fn invoke_raw(
    env: &Env,
    function: sys::napi_value,
    args: Vec<sys::napi_value>,
) -> Result<Unknown<'static>, Thrown> {
    let raw_env = env.raw();
    let mut this = std::ptr::null_mut();
    let mut returned = std::ptr::null_mut();
    // SAFETY: `raw_env` is the current JS thread's env, `function` a live
    // value of this scope and `args` values just created in it.
    let status = unsafe {
        sys::napi_get_undefined(raw_env, &mut this);
        sys::napi_call_function(
            raw_env,
            this,
            function,
            args.len(),
            args.as_ptr(),
            &mut returned,
        )
    };
    match status {
        sys::Status::napi_ok => Ok(unsafe { Unknown::from_raw_unchecked(raw_env, returned) }),
        sys::Status::napi_pending_exception => {
            let mut thrown = std::ptr::null_mut();
            // SAFETY: an exception is pending on this env; taking it clears it.
            unsafe { sys::napi_get_and_clear_last_exception(raw_env, &mut thrown) };
            Err(Thrown::Value(unsafe {
                Unknown::from_raw_unchecked(raw_env, thrown)
            }))
        }
        other => Err(Thrown::Conversion(napi::Error::new(
            Status::from(other),
            "calling the handler failed",
        ))),
    }
}

/// Why a call produced no return value.
enum Thrown {
    /// The callable threw this value.
    Value(Unknown<'static>),
    /// The call could not be made (its arguments had no JS form).
    Conversion(napi::Error),
}

/// Runs `callback(input, ctx)` on the JS thread and turns its outcome into
/// `O`.
pub(crate) fn call<O: HostOutput + 'static>(
    callback: &JsCallback,
    ctx: Option<RequestContext>,
    input: Value,
) -> BoxFuture<Result<O, HandlerError>> {
    let (responder, outcome) = Responder::<O>::new();
    let trace = crate::telemetry::handler_trace(ctx.as_ref());
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
    enqueue(
        callback,
        Call {
            args: FnArgs::from((input, context)),
            responder,
            trace,
        },
        outcome,
        release,
    )
}

/// Runs `callback(...args)` on the JS thread and turns its outcome (a value
/// or a promise, or what it threw) into `O`, as [`call`] does for a
/// handler; for callables with other arguments than `(input, ctx)`.
pub(crate) fn call_with<O, A>(callback: &JsCallback, args: A) -> BoxFuture<Result<O, HandlerError>>
where
    O: HostOutput + 'static,
    A: JsValuesTupleIntoVec + Send + 'static,
{
    let (responder, outcome) = Responder::<O>::new();
    let trace = crate::telemetry::handler_trace(None);
    enqueue(
        callback,
        Call {
            args,
            responder,
            trace,
        },
        outcome,
        None,
    )
}

/// Queues `job` on `callback`'s batch; the future sends the batch's
/// wake-up if this call opened it, and resolves with the call's outcome.
fn enqueue<O, J>(
    callback: &JsCallback,
    job: J,
    outcome: ResponderReceiver<O>,
    release: Option<ReleaseOnDrop>,
) -> BoxFuture<Result<O, HandlerError>>
where
    O: Send + 'static,
    J: Job + 'static,
{
    let first = callback.batch.push(Box::new(job));
    let mut wake = PendingWake(first.then(|| callback.batch.clone()));
    Box::pin(async move {
        if wake.0.is_some() {
            // Let the runtime queue whatever else is ready (the rest of a
            // burst of requests) before the JS thread starts on the batch.
            tokio::task::yield_now().await;
            wake.send();
        }
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

/// The wake-up a call owes its batch: sent once, even if core drops the
/// call's future before it ran (the batch would otherwise wait forever).
struct PendingWake(Option<Arc<Batch>>);

impl PendingWake {
    fn send(&mut self) {
        if let Some(batch) = self.0.take() {
            batch.wake();
        }
    }
}

impl Drop for PendingWake {
    fn drop(&mut self) {
        self.send();
    }
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

/// Answers a call from what the JS callable did. Runs on the JS thread. An
/// outcome known now is returned for the caller to deliver; a promise
/// answers when it settles.
fn settle<O: HostOutput + 'static>(
    env: &Env,
    returned: Result<Unknown<'static>, Thrown>,
    responder: Responder<O>,
) -> Option<Outcome> {
    let result = match returned {
        Ok(value) if value.is_promise().unwrap_or(false) => {
            // If attaching the callbacks fails, the responder is dropped with
            // them and reports a handler error: the call never hangs.
            let _ = await_promise(value, responder);
            return None;
        }
        Ok(value) => output(env, value),
        Err(Thrown::Value(thrown)) => Err(error::from_thrown(env, thrown)),
        Err(Thrown::Conversion(e)) => Err(HandlerError::Tool(format!(
            "TypeError: the handler's arguments have no JavaScript form: {}",
            e.reason
        ))),
    };
    Some(Box::new(move || {
        responder.respond(result);
    }))
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
    let value = crate::values::from_js(value).map_err(|e| {
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
// A protected server's verifier (auth.rs).
impl HostOutput for ferromcp::server::auth::HostVerdict {}

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
    let callback = JsCallback::new(&callable)?;
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
