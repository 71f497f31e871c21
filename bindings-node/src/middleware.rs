//! Server middleware (core's `ferromcp::server::middleware`): a JS function
//! as a link of core's chain (`server.use(link)`), the native `next` it
//! calls, and core's ready-made links (`BuiltinMiddleware`). The facade
//! (`lib/middleware.js`) shapes `ctx` and `next` for the user; which
//! requests go through the chain, in which order, and what a short-circuit
//! or a panic means is core's.
//!
//! Threads: core calls a link from a runtime thread and awaits its future
//! there. A JS link runs on the JS thread, through the one host-call
//! adapter (`host_call.rs`: queued, a value or a promise, never blocking
//! either thread). When the JS link calls `next.run(params)`, the params
//! travel back to the link's future over a oneshot channel, with a
//! deferred promise; the future runs the rest of the chain itself (in the
//! same task, so a request cancelled by core drops the rest too) and
//! settles the promise with the result or the error. A client's JS links
//! (`client_middleware.rs`) go the same way, through the same pieces
//! ([`drive_link`], [`LinkEnd`], [`hand_over`], [`LinkOutput`]).

use std::future::Future;
use std::num::NonZeroUsize;
use std::sync::Arc;

use ferromcp::host::caller::caller_value;
use ferromcp::server::middleware::builtin::{
    LogRequests, MaskErrors, RateLimit, RecordSink, RequestRecord,
};
use ferromcp::server::{
    BoxFuture, FromHost, HandlerError, Middleware, MiddlewareRequest, MiddlewareResult, Next,
    OutputError,
};
use ferromcp::{Error, McpError};
use napi::bindgen_prelude::{FnArgs, Function, Object};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, JsDeferred, Status, Unknown};
use napi_derive::napi;
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use crate::error::{self, ThrownForm};
use crate::host_call::{self, HostFunction, HostOutput, JsCallback};
use crate::server::JsServer;
use crate::values;

/// `(request, next)`: the request as a plain object, and the native `next`.
type LinkArgs = FnArgs<(Value, JsMiddlewareNext)>;

/// A JS link of the chain: `(request, next) => result | Promise<result>`
/// (the facade's adapter around the user's `(ctx, next)` function).
struct JsLink {
    callback: JsCallback,
}

impl Middleware for JsLink {
    fn handle(&self, mut request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        let (sender, called) = oneshot::channel::<NextCall<Map<String, Value>>>();
        let mut input = caller_value(&request.meta);
        input.insert("method".into(), Value::from(request.method.as_str()));
        // A request id is a string or an integer; both always serialise.
        input.insert(
            "requestId".into(),
            serde_json::to_value(&request.id).unwrap_or(Value::Null),
        );
        // Moved, not copied: the params go on as the link passes them.
        input.insert(
            "params".into(),
            Value::Object(std::mem::take(&mut request.params)),
        );
        let js_next = JsMiddlewareNext {
            sender: Some(sender),
        };
        let outcome = host_call::call_with::<LinkOutput, LinkArgs>(
            &self.callback,
            FnArgs::from((Value::Object(input), js_next)),
        );
        Box::pin(async move {
            let rest = move |params| async move {
                request.params = params;
                next.run(request)
                    .await
                    .map(|result| Value::Object(result.into_map()))
                    .map_err(Error::Mcp)
            };
            // The rest's errors are JSON-RPC errors already: a link's
            // failure is classified as a handler's.
            drive_link(outcome, called, rest)
                .await
                .outcome
                .map(|LinkOutput(result)| result.into())
                .map_err(link_error)
        })
    }
}

/// What a JS link's `next` hands back to the link's future: what the rest
/// of the chain runs with (the params of a server request; a client call's
/// params and options), and the promise to settle with its outcome. Shared
/// by the server's links and a client's (`client_middleware.rs`).
pub(crate) struct NextCall<T> {
    pub(crate) input: T,
    pub(crate) reply: Reply,
}

/// Waits for a JS link (`outcome`, its return value or promise) and runs
/// the rest of the chain with `rest` when the link calls `next` (`called`),
/// settling `next`'s promise with the rest's outcome. The rest runs in the
/// link's own future, so when core drops it (the request cancelled, or
/// over) the rest is dropped too and `next`'s promise rejects as cancelled.
pub(crate) async fn drive_link<T, F, Fut>(
    mut outcome: BoxFuture<Result<LinkOutput, HandlerError>>,
    called: oneshot::Receiver<NextCall<T>>,
    rest: F,
) -> LinkEnd
where
    F: FnOnce(T) -> Fut,
    Fut: Future<Output = Result<Value, Error>>,
{
    // `biased`: a link that called `next` and returned at once without
    // awaiting it still has the rest of the chain run.
    tokio::select! {
        biased;
        called = called => {
            let mut rest_failed = None;
            // Err: the native `next` was collected uncalled.
            if let Ok(NextCall { input, reply }) = called {
                match rest(input).await {
                    Ok(result) => reply.settle(Ok(result)),
                    Err(error) => {
                        let form = ThrownForm::of(&error);
                        reply.settle(Err(form.clone()));
                        rest_failed = Some((form, error));
                    }
                }
            }
            LinkEnd { outcome: outcome.await, rest_failed }
        }
        done = &mut outcome => LinkEnd { outcome: done, rest_failed: None },
    }
}

/// How a JS link ended, and how the rest of the chain failed if it ran and
/// failed.
pub(crate) struct LinkEnd {
    pub(crate) outcome: Result<LinkOutput, HandlerError>,
    rest_failed: Option<(ThrownForm, Error)>,
}

impl LinkEnd {
    /// The link's outcome as a core result. A link that let `next`'s
    /// rejection through (rethrew the very error) fails with the rest's own
    /// error, its kind kept (a client call's `"timeout"`, `"closed"`...);
    /// anything else thrown is classified by [`link_error`].
    pub(crate) fn into_result(self) -> Result<Map<String, Value>, Error> {
        match self.outcome {
            Ok(LinkOutput(result)) => Ok(result),
            Err(HandlerError::Protocol(thrown)) => match self.rest_failed {
                Some((form, error)) if form.is(&thrown) => Err(error),
                _ => Err(Error::Mcp(thrown)),
            },
            Err(other) => Err(Error::Mcp(link_error(other))),
        }
    }
}

/// What a JS link threw, as the JSON-RPC error the request ends in: it is
/// classified as a handler's (a thrown `McpError` is that JSON-RPC error;
/// anything else an internal error with `"<ErrorName>: <message>"`, as for
/// a resource or prompt handler).
pub(crate) fn link_error(error: HandlerError) -> McpError {
    match error {
        HandlerError::Protocol(error) => error,
        HandlerError::Tool(message) => McpError::internal(message),
    }
}

/// What a link returns: the result object.
pub(crate) struct LinkOutput(pub(crate) Map<String, Value>);

impl FromHost for LinkOutput {
    const KIND: &'static str = "middleware";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        match value {
            Value::Object(result) => Ok(LinkOutput(result)),
            other => Err(OutputError {
                kind: Self::KIND,
                reason: format!(
                    "a link returns the result object (what next() resolved to, or one of its own), not {}",
                    match other {
                        Value::Null => "undefined or null",
                        Value::Bool(_) => "a boolean",
                        Value::Number(_) => "a number",
                        Value::String(_) => "a string",
                        Value::Array(_) => "a list",
                        Value::Object(_) => "an object",
                    }
                ),
            }),
        }
    }
}

impl HostOutput for LinkOutput {}

/// The resolver of `next`'s promise.
type Resolve = Box<dyn FnOnce(Env) -> napi::Result<Value> + Send>;

/// `next`'s promise, always settled: dropped unsettled (core gave up on
/// the request while the rest of the chain ran, or the link was over
/// before it called `next`) it rejects with kind `"cancelled"`. An
/// unsettled deferred would also keep the event loop alive.
pub(crate) struct Reply(Option<JsDeferred<Value, Resolve>>);

impl Reply {
    /// Resolves with the result object, or rejects with the error as an
    /// `McpError`.
    fn settle(mut self, result: Result<Value, ThrownForm>) {
        if let Some(deferred) = self.0.take() {
            deferred.resolve(Box::new(move |env| result.map_err(|form| form.to_js(&env))));
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(deferred) = self.0.take() {
            deferred.resolve(Box::new(|env| Err(error::to_js(&env, &Error::Cancelled))));
        }
    }
}

/// The params a JS link passes to `next`: an object.
pub(crate) fn next_params(params: Unknown<'_>) -> napi::Result<Map<String, Value>> {
    match values::from_js(params)? {
        Value::Object(params) => Ok(params),
        _ => Err(napi::Error::new(
            Status::InvalidArg,
            "next(ctx): ctx.params must be an object",
        )),
    }
}

/// Hands `input` to the link's future through `sender` (taken: `next` runs
/// once) and returns the promise of the rest of the chain's outcome.
pub(crate) fn hand_over<'env, T>(
    env: &'env Env,
    sender: &mut Option<oneshot::Sender<NextCall<T>>>,
    input: T,
) -> napi::Result<Object<'env>> {
    let Some(sender) = sender.take() else {
        return Err(napi::Error::new(
            Status::InvalidArg,
            "next() may be called only once per request",
        ));
    };
    let (deferred, promise) = env.create_deferred::<Value, Resolve>()?;
    // The link's future is gone (the request is over): the `NextCall`
    // comes back and its `Reply` rejects as it drops.
    let _ = sender.send(NextCall {
        input,
        reply: Reply(Some(deferred)),
    });
    Ok(promise)
}

/// The rest of the chain, as a JS link's `next` sees it (the facade wraps
/// it in a function).
///
/// @internal Used by the `ferromcp` package itself.
#[napi(js_name = "MiddlewareNext")]
pub struct JsMiddlewareNext {
    sender: Option<oneshot::Sender<NextCall<Map<String, Value>>>>,
}

#[napi]
impl JsMiddlewareNext {
    /// Runs the rest of the chain, and then the request, with `params`:
    /// resolves with the result object, or rejects with the `McpError` it
    /// ended in. Once per request; after the link's request is over it
    /// rejects with kind `"cancelled"`.
    #[napi(
        ts_args_type = "params: Record<string, unknown>",
        ts_return_type = "Promise<Record<string, unknown>>"
    )]
    pub fn run<'env>(&mut self, env: &'env Env, params: Unknown<'_>) -> napi::Result<Object<'env>> {
        let params = next_params(params)?;
        hand_over(env, &mut self.sender, params)
    }
}

/// `{ method, name, ok, code?, message?, durationMs }` for a JS log
/// function. Weak: it must never keep the event loop alive.
type LogHook = ThreadsafeFunction<Value, (), Value, Status, false, true>;

/// One of core's ready-made links (`middleware.logRequests()`,
/// `maskErrors()`, `rateLimit()` of the package), for `server.use()`. Using
/// the same object on two servers shares its state (a rate limit's
/// buckets).
///
/// @example
/// ```js
/// server.use(BuiltinMiddleware.rateLimit(10, 20));
/// ```
///
/// @internal The facade's `middleware` object makes them.
#[napi(js_name = "BuiltinMiddleware")]
pub struct JsBuiltinMiddleware {
    link: Arc<dyn Middleware>,
    name: &'static str,
}

#[napi]
impl JsBuiltinMiddleware {
    /// Core's `LogRequests`: each request, once it ends, reported to `log`,
    /// or without one as a `tracing` event on `ferromcp::requests`.
    #[napi(
        factory,
        ts_args_type = "log?: ((entry: { method: string; name?: string; ok: boolean; code?: number; message?: string; durationMs: number }) => void) | null"
    )]
    pub fn log_requests(log: Option<Function<'_, Value, ()>>) -> napi::Result<Self> {
        let link = match log_sink(log)? {
            Some(sink) => LogRequests::with_sink(sink),
            None => LogRequests::default(),
        };
        Ok(JsBuiltinMiddleware {
            link: Arc::new(link),
            name: "logRequests",
        })
    }

    /// Core's `MaskErrors`; each masked error's real message is reported
    /// to `log`, or without one logged with `tracing`.
    #[napi(
        factory,
        ts_args_type = "log?: ((entry: { method: string; name?: string; ok: boolean; code?: number; message?: string; durationMs: number }) => void) | null"
    )]
    pub fn mask_errors(log: Option<Function<'_, Value, ()>>) -> napi::Result<Self> {
        let link = match log_sink(log)? {
            Some(sink) => MaskErrors::with_sink(sink),
            None => MaskErrors::default(),
        };
        Ok(JsBuiltinMiddleware {
            link: Arc::new(link),
            name: "maskErrors",
        })
    }

    /// Core's `RateLimit`: a token bucket per client, `perSecond` requests
    /// a second with bursts of `burst`, for at most `maxClients` clients
    /// (default 10,000). Settings core refuses throw its reason.
    #[napi(factory)]
    pub fn rate_limit(per_second: f64, burst: f64, max_clients: Option<f64>) -> napi::Result<Self> {
        let invalid = |why: String| napi::Error::new(Status::InvalidArg, why);
        let mut limit = RateLimit::try_new(per_second, whole(burst, "burst")?).map_err(invalid)?;
        if let Some(max) = max_clients {
            let max = NonZeroUsize::new(whole(max, "maxClients")? as usize)
                .ok_or_else(|| invalid("maxClients must be at least 1".into()))?;
            limit = limit.with_max_clients(max);
        }
        Ok(JsBuiltinMiddleware {
            link: Arc::new(limit),
            name: "rateLimit",
        })
    }

    /// `"logRequests"`, `"maskErrors"` or `"rateLimit"`.
    #[napi(getter, ts_return_type = "'logRequests' | 'maskErrors' | 'rateLimit'")]
    pub fn name(&self) -> &'static str {
        self.name
    }
}

/// A JS number as the `u32` core takes (a negative one as 0, which core
/// refuses with its reason).
fn whole(value: f64, what: &str) -> napi::Result<u32> {
    if !(value.is_finite() && value.fract() == 0.0) {
        return Err(napi::Error::new(
            Status::InvalidArg,
            format!("{what} must be a whole number, not {value}"),
        ));
    }
    // Saturating: an integral value in range converts exactly.
    Ok(value.clamp(0.0, f64::from(u32::MAX)) as u32)
}

/// A log function as the sink of a ready-made link: each record is queued
/// for the JS thread, never waited for.
fn log_sink(log: Option<Function<'_, Value, ()>>) -> napi::Result<Option<RecordSink>> {
    let Some(log) = log else {
        return Ok(None);
    };
    let log: LogHook = log.build_threadsafe_function().weak::<true>().build()?;
    Ok(Some(Arc::new(move |record: &RequestRecord| {
        // Not queued only while the env shuts down.
        log.call(log_entry(record), ThreadsafeFunctionCallMode::NonBlocking);
    })))
}

/// What the log function is told of a request that ended.
fn log_entry(record: &RequestRecord) -> Value {
    let mut entry = json!({
        "method": record.method,
        "ok": record.error.is_none(),
        "durationMs": record.micros as f64 / 1000.0,
    });
    if let Some(name) = &record.name {
        entry["name"] = Value::from(name.as_str());
    }
    if let Some(error) = &record.error {
        entry["code"] = Value::from(error.code);
        entry["message"] = Value::from(error.message.as_str());
    }
    entry
}

/// A shared link added to a core chain.
struct Shared(Arc<dyn Middleware>);

impl Middleware for Shared {
    fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        self.0.handle(request, next)
    }
}

#[napi]
impl JsServer {
    /// Adds a JS link at the end of the middleware chain:
    /// `link(request, next)` gets the request as a plain object (`method`,
    /// `params`, `requestId`, and who sends it as core's `caller_value`
    /// describes it: `protocolVersion`, `clientInfo`, `clientCapabilities`,
    /// `auth`, `headers`) and the native `next`, and returns
    /// the result object or a promise of it. A thrown `McpError` is that
    /// JSON-RPC error; anything else thrown an internal error.
    ///
    /// @internal The facade's `server.use(link)` calls it with an adapter.
    #[napi(
        ts_args_type = "link: (request: { method: string; params: Record<string, unknown>; requestId: string | number; protocolVersion: string; clientInfo: Record<string, unknown> | null; clientCapabilities: Record<string, unknown>; auth: { subject: string | null; clientId: string | null; scopes: string[]; audience: string[]; expiresAt: number | null; claims: Record<string, unknown> } | null; headers: Record<string, string> }, next: MiddlewareNext) => unknown"
    )]
    pub fn use_link(&self, link: HostFunction<'_>) -> napi::Result<()> {
        self.server.add_middleware(JsLink {
            callback: JsCallback::new(&link)?,
        });
        Ok(())
    }

    /// Adds one of core's ready-made links at the end of the chain.
    #[napi]
    pub fn use_builtin(&self, link: &JsBuiltinMiddleware) {
        self.server.add_middleware(Shared(link.link.clone()));
    }
}
