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
//! settles the promise with the result or the error.

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

use crate::host_call::{self, HostFunction, HostOutput, JsCallback};
use crate::server::JsServer;
use crate::{error, values};

/// `(request, next)`: the request as a plain object, and the native `next`.
type LinkArgs = FnArgs<(Value, JsMiddlewareNext)>;

/// A JS link of the chain: `(request, next) => result | Promise<result>`
/// (the facade's adapter around the user's `(ctx, next)` function).
struct JsLink {
    callback: JsCallback,
}

/// What a JS link's `next.run(params)` hands back to the link's future.
struct NextCall {
    params: Map<String, Value>,
    reply: Reply,
}

impl Middleware for JsLink {
    fn handle(&self, mut request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        let (sender, called) = oneshot::channel::<NextCall>();
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
        let mut outcome = host_call::call_with::<LinkOutput, LinkArgs>(
            &self.callback,
            FnArgs::from((Value::Object(input), js_next)),
        );
        Box::pin(async move {
            // `biased`: a link that called `next` and returned at once
            // without awaiting it still has the rest of the chain run.
            tokio::select! {
                biased;
                called = called => {
                    if let Ok(NextCall { params, reply }) = called {
                        request.params = params;
                        reply.settle(next.run(request).await);
                    }
                    // Err: the native `next` was collected uncalled.
                    link_result(outcome.await)
                }
                done = &mut outcome => link_result(done),
            }
        })
    }
}

/// A JS link's outcome as core's: what it threw is classified as a
/// handler's (a thrown `McpError` is that JSON-RPC error; anything else an
/// internal error with `"<ErrorName>: <message>"`, as for a resource or
/// prompt handler).
fn link_result(outcome: Result<LinkOutput, HandlerError>) -> MiddlewareResult {
    match outcome {
        Ok(LinkOutput(result)) => Ok(result),
        Err(HandlerError::Protocol(error)) => Err(error),
        Err(HandlerError::Tool(message)) => Err(McpError::internal(message)),
    }
}

/// What a link returns: the result object.
struct LinkOutput(Map<String, Value>);

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
struct Reply(Option<JsDeferred<Value, Resolve>>);

impl Reply {
    /// Resolves with the result object, or rejects with the `McpError`.
    fn settle(mut self, result: MiddlewareResult) {
        if let Some(deferred) = self.0.take() {
            deferred.resolve(Box::new(move |env| match result {
                Ok(result) => Ok(Value::Object(result)),
                Err(error) => Err(error::to_js(&env, &Error::Mcp(error))),
            }));
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

/// The rest of the chain, as a JS link's `next` sees it (the facade wraps
/// it in a function).
///
/// @internal Used by the `ferromcp` package itself.
#[napi(js_name = "MiddlewareNext")]
pub struct JsMiddlewareNext {
    sender: Option<oneshot::Sender<NextCall>>,
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
        let Value::Object(params) = values::from_js(params)? else {
            return Err(napi::Error::new(
                Status::InvalidArg,
                "next(ctx): ctx.params must be an object",
            ));
        };
        let Some(sender) = self.sender.take() else {
            return Err(napi::Error::new(
                Status::InvalidArg,
                "next() may be called only once per request",
            ));
        };
        let (deferred, promise) = env.create_deferred::<Value, Resolve>()?;
        // The link's future is gone (the request is over): the `Reply`
        // comes back and rejects as it drops.
        let _ = sender.send(NextCall {
            params,
            reply: Reply(Some(deferred)),
        });
        Ok(promise)
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
