//! OpenTelemetry for Node: core's spans reported to the application's own
//! OpenTelemetry SDK (`@opentelemetry/api`), instead of core's exporter.
//!
//! Core starts a span synchronously, on a runtime thread, and needs its
//! context at once (a client span's goes out in `_meta`; a handler runs
//! under the server span). JS runs only on the JS thread, and a runtime
//! thread must never wait for it (the JS thread may itself be waiting on
//! core). So nothing here calls into JS and waits:
//!
//! - A span core starts on its own (a request served, a call core makes
//!   itself) gets its ids here ([`TraceContext::child`] / `new_root`); its
//!   start and end are queued as events, and the facade (`lib/telemetry.js`)
//!   creates the SDK span from them (its start time, attributes, parent)
//!   when it drains the queue: woken by a non-blocking threadsafe function,
//!   and before it runs a handler under the span. The SDK picks the span's
//!   own id, so the facade maps the id given here to the SDK's span: a
//!   handler's spans, and the spans core starts under this one in this
//!   process, are children of the SDK span.
//! - A client call made from JS already has its SDK span: the facade starts
//!   it under the application's active context before calling the addon and
//!   names it with [`telemetry_next_call`]. The call runs in that span's
//!   scope, and the first client span core starts in it *is* that span
//!   (adopted: its context goes out in `_meta`, so the server's span is its
//!   child even in another process); core's name, attributes and outcome
//!   are queued for the facade to put on it. Further requests of the same
//!   call (a skill's files) carry its context and have no span of their own.
//! - A JS callable that core calls while a span is current (a handler, a
//!   middleware link, a visibility rule) is called through the facade's
//!   runner with the span's context, which drains the queue and runs the
//!   callable in `context.with(<the SDK span>)` ([`handler_trace`],
//!   [`runner`]; `host_call.rs`).
//!
//! The queue is bounded: past [`MAX_QUEUED`] events, new spans and
//! measurements are dropped (a span whose start was queued always gets its
//! end queued, so the facade never keeps an unfinished span).

use std::cell::RefCell;
use std::future::Future;
use std::mem::ManuallyDrop;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ferromcp::server::RequestContext;
use ferromcp::telemetry::{
    self, AttributeValue, Span, SpanKind, SpanStart, Telemetry, TraceContext,
};
use napi::bindgen_prelude::{Function, FunctionRef};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, JsValue, Status, Unknown, sys};
use napi_derive::napi;
use serde_json::{Map, Value, json};

/// Events waiting for the facade, at most; past this, new spans and
/// measurements are dropped.
const MAX_QUEUED: usize = 10_000;

/// Whether the facade's telemetry is the installed one: read before
/// anything else is done for a JS call.
static ON: AtomicBool = AtomicBool::new(false);
/// Whether the facade records the duration and active-request metrics.
static METRICS: AtomicBool = AtomicBool::new(false);

/// Span events for the facade, in the order they happened.
static QUEUE: Mutex<Queue> = Mutex::new(Queue {
    events: Vec::new(),
    scheduled: false,
});

/// The facade's wake-up: `() => drain()`. Weak: it never keeps the event
/// loop alive (the facade also drains before the process exits).
type Wake = ThreadsafeFunction<(), Unknown<'static>, (), Status, false, true>;
static WAKE: Mutex<Option<Arc<Wake>>> = Mutex::new(None);

struct Queue {
    events: Vec<Value>,
    /// A wake-up is on its way: later events join its drain.
    scheduled: bool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // Only pushes and swaps happen under these locks.
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Queues `event` for the facade (dropped when `bounded` and the queue is
/// full); whether it was queued. Sends the wake-up if this event opened a
/// batch. Never blocks on JS.
fn push(event: Value, bounded: bool) -> bool {
    let wake = {
        let mut queue = lock(&QUEUE);
        if bounded && queue.events.len() >= MAX_QUEUED {
            return false;
        }
        queue.events.push(event);
        !std::mem::replace(&mut queue.scheduled, true)
    };
    if wake {
        let wake = lock(&WAKE).clone();
        let status = wake.map_or(Status::Closing, |wake| {
            wake.call((), ThreadsafeFunctionCallMode::NonBlocking)
        });
        if status != Status::Ok {
            // The next event tries again; the facade also drains on its own.
            lock(&QUEUE).scheduled = false;
        }
    }
    true
}

/// Now, as the `[seconds, nanoseconds]` of an OpenTelemetry `HrTime`.
fn now() -> Value {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    json!([since.as_secs(), since.subsec_nanos()])
}

fn value(value: &AttributeValue) -> Value {
    match value {
        AttributeValue::String(s) => Value::from(s.as_str()),
        AttributeValue::Int(i) => Value::from(*i),
        AttributeValue::Bool(b) => Value::from(*b),
    }
}

fn attributes(attributes: &[(&'static str, AttributeValue)]) -> Value {
    Value::Object(
        attributes
            .iter()
            .map(|(k, v)| ((*k).to_owned(), value(v)))
            .collect(),
    )
}

fn kind(kind: SpanKind) -> &'static str {
    match kind {
        SpanKind::Client => "client",
        SpanKind::Server => "server",
    }
}

/// The facade's [`Telemetry`]: every span and measurement becomes an event
/// of the queue.
struct JsTelemetry;

impl Telemetry for JsTelemetry {
    fn start_span(&self, start: SpanStart) -> Box<dyn Span> {
        if start.kind == SpanKind::Client {
            match adopt() {
                Some(Adopted::First(own)) => {
                    let told = push(
                        json!({
                            "t": "adopt",
                            "id": own.span_id_hex(),
                            "name": start.name,
                            "attributes": attributes(&start.attributes),
                        }),
                        true,
                    );
                    return Box::new(JsSpan::new(own, told));
                }
                Some(Adopted::Again(own)) => return Box::new(Carried(own)),
                None => {}
            }
        }
        let context = start
            .parent
            .as_ref()
            .map_or_else(TraceContext::new_root, TraceContext::child);
        let parent = start.parent.as_ref().map(|parent| {
            json!({
                "traceId": parent.trace_id_hex(),
                "spanId": parent.span_id_hex(),
                "flags": parent.flags,
                "state": parent.state,
                "remote": start.parent_is_remote,
            })
        });
        let told = push(
            json!({
                "t": "start",
                "id": context.span_id_hex(),
                "traceId": context.trace_id_hex(),
                "kind": kind(start.kind),
                "name": start.name,
                "attributes": attributes(&start.attributes),
                "parent": parent,
                "time": now(),
            }),
            true,
        );
        Box::new(JsSpan::new(context, told))
    }

    fn record_operation(
        &self,
        kind_: SpanKind,
        seconds: f64,
        attrs: &[(&'static str, AttributeValue)],
    ) {
        if METRICS.load(Ordering::Relaxed) {
            push(
                json!({
                    "t": "operation",
                    "kind": kind(kind_),
                    "seconds": seconds,
                    "attributes": attributes(attrs),
                }),
                true,
            );
        }
    }

    fn active_requests(&self, method: &str, delta: i64) {
        if METRICS.load(Ordering::Relaxed) {
            push(
                json!({ "t": "active", "method": method, "delta": delta }),
                true,
            );
        }
    }
}

/// A span the facade was told of (its start or adoption queued, `told`):
/// its end (or abandonment, when core drops it unended) is queued too.
struct JsSpan {
    context: TraceContext,
    told: bool,
    added: Map<String, Value>,
    error: Option<String>,
    ended: bool,
}

impl JsSpan {
    fn new(context: TraceContext, told: bool) -> JsSpan {
        JsSpan {
            context,
            told,
            added: Map::new(),
            error: None,
            ended: false,
        }
    }
}

impl Span for JsSpan {
    fn context(&self) -> TraceContext {
        self.context.clone()
    }

    fn set_attribute(&mut self, key: &'static str, attribute: AttributeValue) {
        self.added.insert(key.to_owned(), value(&attribute));
    }

    fn set_error(&mut self, error_type: &str, message: &str) {
        self.added
            .insert("error.type".to_owned(), Value::from(error_type));
        self.error = Some(message.to_owned());
    }

    fn end(mut self: Box<Self>) {
        self.ended = true;
        if self.told {
            push(
                json!({
                    "t": "end",
                    "id": self.context.span_id_hex(),
                    "attributes": std::mem::take(&mut self.added),
                    "error": self.error.take(),
                    "time": now(),
                }),
                false,
            );
        }
    }
}

impl Drop for JsSpan {
    fn drop(&mut self) {
        if self.told && !self.ended {
            push(
                json!({ "t": "abandon", "id": self.context.span_id_hex(), "time": now() }),
                false,
            );
        }
    }
}

/// A request of a JS call after the one that adopted the call's span: it
/// carries that span's context and has no span of its own.
struct Carried(TraceContext);

impl Span for Carried {
    fn context(&self) -> TraceContext {
        self.0.clone()
    }
    fn set_attribute(&mut self, _: &'static str, _: AttributeValue) {}
    fn set_error(&mut self, _: &str, _: &str) {}
    fn end(self: Box<Self>) {}
}

/// The SDK span of a JS call, which the call's first client span adopts.
#[derive(Default)]
pub(crate) struct CallSpan {
    own: Option<TraceContext>,
    adopted: bool,
}

/// A shared [`CallSpan`]: a task that serves several JS calls (a list's
/// pages) gets the span of each in turn.
pub(crate) type CallSlot = Arc<Mutex<CallSpan>>;

impl CallSpan {
    /// The slot a call of `own` (or of no span) starts with.
    pub(crate) fn slot(own: Option<TraceContext>) -> CallSlot {
        Arc::new(Mutex::new(CallSpan {
            own,
            adopted: false,
        }))
    }

    /// Gives the slot the span of the next call.
    pub(crate) fn set(slot: &CallSlot, own: Option<TraceContext>) {
        *lock(slot) = CallSpan {
            own,
            adopted: false,
        };
    }
}

tokio::task_local! {
    /// The JS call this task runs, if the facade gave it a span.
    static CALL: CallSlot;
}

enum Adopted {
    /// The call's first client span: it is the call's SDK span.
    First(TraceContext),
    /// A later one: it carries the call's span.
    Again(TraceContext),
}

/// What a client span started on this task makes of the JS call's span.
fn adopt() -> Option<Adopted> {
    CALL.try_with(|slot| {
        let mut call = lock(slot);
        let own = call.own.clone()?;
        Some(if std::mem::replace(&mut call.adopted, true) {
            Adopted::Again(own)
        } else {
            Adopted::First(own)
        })
    })
    .ok()
    .flatten()
}

/// Runs `work` in `slot`'s JS call: the scope [`adopt`] reads.
pub(crate) fn in_call_slot<F: Future>(slot: CallSlot, work: F) -> impl Future<Output = F::Output> {
    CALL.scope(slot, work)
}

thread_local! {
    /// The SDK span of the JS call about to be made on this (JS) thread,
    /// set by the facade around the call ([`telemetry_next_call`]).
    static NEXT_CALL: RefCell<Option<TraceContext>> = const { RefCell::new(None) };
}

/// Takes the span the facade named for the call being made now. On the
/// JS thread.
pub(crate) fn take_next_call() -> Option<TraceContext> {
    if !ON.load(Ordering::Acquire) {
        return None;
    }
    NEXT_CALL.with(|next| next.borrow_mut().take())
}

/// `work`, run in the span the facade named for this call, if any: its
/// client span adopts it, and it is the task's current trace context (the
/// parent of what the call starts besides, and of the JS handlers core
/// calls for it, such as an elicitation handler). On the JS thread.
pub(crate) fn in_next_call<F>(work: F) -> impl Future<Output = F::Output> + Send + 'static
where
    F: Future + Send + 'static,
{
    let own = take_next_call();
    async move {
        match own {
            None => work.await,
            Some(own) => {
                let slot = CallSpan::slot(Some(own.clone()));
                telemetry::scope(own, CALL.scope(slot, work)).await
            }
        }
    }
}

/// The trace context a JS callable called now runs under: the current
/// span (a request's, or a JS call's), or the request's own. `None` unless
/// the facade's telemetry is on. On a runtime thread, in core's task.
pub(crate) fn handler_trace(ctx: Option<&RequestContext>) -> Option<TraceContext> {
    if !ON.load(Ordering::Acquire) {
        return None;
    }
    telemetry::current().or_else(|| ctx.and_then(|ctx| ctx.meta().trace.clone()))
}

/// The facade's runner: `(traceparent, callable, ...args)`.
type Runner = FunctionRef<(), Unknown<'static>>;

thread_local! {
    /// The runner registered on this JS thread, with its env. Never
    /// dropped at thread exit (see `error.rs`'s `ERROR_CLASS`).
    static RUNNER: RefCell<Option<(usize, ManuallyDrop<Runner>)>> = const { RefCell::new(None) };
}

/// The runner registered on `env`'s thread, as a value of the current
/// scope. On the JS thread.
pub(crate) fn runner(env: &Env) -> Option<sys::napi_value> {
    RUNNER.with(|slot| {
        let slot = slot.borrow();
        let (owner, runner) = slot.as_ref()?;
        if *owner != env.raw() as usize {
            return None;
        }
        runner.borrow_back(env).ok().map(|f| f.value().value)
    })
}

/// Reports core's spans (and, with `metrics`, its duration and
/// active-request measurements) to the facade from now on, replacing any
/// exporter installed (the one the `OTEL_*` variables start): `wake()` is
/// called, on the JS thread and without waiting, when events are queued;
/// `runner(traceparent, callable, ...args)` runs a JS callable that core
/// calls under a span.
///
/// @internal Used by the `ferromcp` package itself (`telemetry.useOpenTelemetry`).
#[cfg_attr(test, allow(dead_code))]
#[napi(
    ts_args_type = "wake: () => void, runner: (traceparent: string, callable: (...args: any[]) => unknown, ...args: any[]) => unknown, metrics: boolean"
)]
pub fn telemetry_install(
    env: &Env,
    wake: Function<'_, (), Unknown<'static>>,
    runner: Function<'_, (), Unknown<'static>>,
    metrics: bool,
) -> napi::Result<()> {
    let wake: Wake = wake.build_threadsafe_function().weak::<true>().build()?;
    let runner = runner.create_ref()?;
    RUNNER.with(|slot| {
        let old = slot
            .borrow_mut()
            .replace((env.raw() as usize, ManuallyDrop::new(runner)));
        // Replaced on the thread that made it: released here.
        if let Some((_, old)) = old {
            drop(ManuallyDrop::into_inner(old));
        }
    });
    *lock(&WAKE) = Some(Arc::new(wake));
    METRICS.store(metrics, Ordering::Relaxed);
    telemetry::install(Arc::new(JsTelemetry));
    ON.store(true, Ordering::Release);
    Ok(())
}

/// The events queued since the last drain, oldest first: `{ t: "start",
/// id, traceId, kind, name, attributes, parent, time }`, `{ t: "adopt", id,
/// name, attributes }`, `{ t: "end", id, attributes, error, time }`, `{ t:
/// "abandon", id, time }`, `{ t: "operation", kind, seconds, attributes }`,
/// `{ t: "active", method, delta }`. Times are `[seconds, nanoseconds]`.
///
/// @internal Used by the `ferromcp` package itself.
#[cfg_attr(test, allow(dead_code))]
#[napi(ts_return_type = "Array<Record<string, any>>")]
pub fn telemetry_drain() -> Vec<Value> {
    let mut queue = lock(&QUEUE);
    queue.scheduled = false;
    std::mem::take(&mut queue.events)
}

/// Names the SDK span of the client call the facade makes next on this
/// thread (`null` clears it); whether `traceparent` was read.
///
/// @internal Used by the `ferromcp` package itself.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn telemetry_next_call(traceparent: Option<String>, tracestate: Option<String>) -> bool {
    let own = traceparent.and_then(|parent| TraceContext::parse(&parent, tracestate.as_deref()));
    let named = own.is_some();
    NEXT_CALL.with(|next| *next.borrow_mut() = own);
    named
}

/// Sends what core's exporter holds (the one the `OTEL_*` variables
/// start), waiting at most `timeoutMs`; whether all of it was sent. The
/// exporter runs on its own thread, so waiting here cannot hold it up.
///
/// @internal Used by the `ferromcp` package itself (`telemetry.flush`, and
/// before the process exits).
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn telemetry_flush(timeout_ms: f64) -> bool {
    let timeout =
        Duration::try_from_secs_f64(timeout_ms.max(0.0) / 1000.0).unwrap_or(Duration::ZERO);
    telemetry::flush(timeout)
}
