//! The request context a JS tool handler receives as its second argument
//! (adapts `ferromcp::server::RequestContext`).
//!
//! The JS object may outlive the call (a handler can keep it in a closure),
//! and until the garbage collector runs, so the live core context, whose
//! notification channel keeps the transport's writer open, is held in a
//! [`ContextSlot`] that the handler empties when the call ends. Afterwards
//! the context reads as cancelled and sends nothing.

use std::sync::{Arc, Mutex, MutexGuard};

use ferromcp::server::auth::AuthInfo;
use ferromcp::server::{HandlerError, InputKind, LoggingLevel, RequestContext, RequestMeta};
use napi::bindgen_prelude::Object;
use napi::{Env, Status, Unknown};
use napi_derive::napi;
use serde_json::Value;

use crate::abort::Watch;
use crate::error;

/// The live core context of one call, shared by the JS object and the
/// handler invocation that releases it.
#[derive(Clone)]
pub(crate) struct ContextSlot(Arc<Mutex<Slot>>);

/// What a [`ContextSlot`] holds while the call runs.
struct Slot {
    ctx: Option<RequestContext>,
    /// Set once the handler read `ctx.signal` (see `crate::abort`).
    watch: Option<Watch>,
}

impl ContextSlot {
    fn lock(&self) -> MutexGuard<'_, Slot> {
        // Only `Option` swaps happen under the lock; a panic elsewhere
        // cannot leave it half-written.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The core context, while the call runs.
    fn context(&self) -> Option<RequestContext> {
        self.lock().ctx.clone()
    }

    /// Ends the call's access to the core context. `completed` is false
    /// when core gave up on the call (cancelled, client gone, or the round
    /// ended to ask for input): a watched signal is then aborted.
    pub(crate) fn release(&self, completed: bool) {
        let (ctx, watch) = {
            let mut slot = self.lock();
            (slot.ctx.take(), slot.watch.take())
        };
        if let Some(watch) = watch {
            let cancelled = ctx.as_ref().is_none_or(RequestContext::is_cancelled);
            watch.finish(!completed || cancelled);
        }
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
        let live = ContextSlot(Arc::new(Mutex::new(Slot {
            ctx: Some(ctx),
            watch: None,
        })));
        let context = JsRequestContext {
            live: live.clone(),
            request_id,
            method,
            meta,
        };
        (context, live)
    }
}

/// `ctx.auth`: who a protected request's access token belongs to.
#[napi(object, js_name = "AuthInfo")]
pub struct JsAuthInfo {
    /// The resource owner (`sub`).
    pub subject: Option<String>,
    /// The OAuth client the token was issued to (`client_id` or `azp`).
    pub client_id: Option<String>,
    /// The granted scopes.
    pub scopes: Vec<String>,
    /// The audiences (`aud`); the server's resource is one of them.
    pub audience: Vec<String>,
    /// When the token expires (`exp`, seconds since the Unix epoch).
    pub expires_at: Option<f64>,
    /// Every claim as the verifier returned or read it.
    #[napi(ts_type = "Record<string, unknown>")]
    pub claims: Value,
}

impl From<&AuthInfo> for JsAuthInfo {
    fn from(info: &AuthInfo) -> Self {
        JsAuthInfo {
            subject: info.subject.clone(),
            client_id: info.client_id.clone(),
            scopes: info.scopes.clone(),
            audience: info.audience.clone(),
            expires_at: info.expires_at.map(|t| t as f64),
            claims: info.claims.clone(),
        }
    }
}

#[napi]
impl JsRequestContext {
    /// The JSON-RPC id of the request (a string or a number).
    #[napi(getter, ts_return_type = "string | number")]
    pub fn request_id(&self) -> Value {
        self.request_id.clone()
    }

    /// Who the request's access token belongs to, on a server served with
    /// `auth`; `undefined` otherwise (stdio, or HTTP without protection).
    #[napi(getter)]
    pub fn auth(&self) -> Option<JsAuthInfo> {
        self.meta.auth.as_deref().map(Into::into)
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
        self.meta.client_info.as_ref().map(|info| info.to_value())
    }

    /// The headers of the HTTP request that carried this request (names
    /// lower-case; a repeated header's values joined with `", "`); empty
    /// over stdio.
    #[napi(getter, ts_return_type = "Record<string, string>")]
    pub fn headers(&self) -> Value {
        let mut map = serde_json::Map::new();
        if let Some(headers) = self.meta.http_headers.as_deref() {
            for (name, value) in ferromcp::host::headers::joined(headers) {
                map.insert(name, Value::from(value));
            }
        }
        Value::Object(map)
    }

    /// The request's W3C trace context (SEP-414): while the handler runs
    /// with tracing on, that of the request's server span, the parent of
    /// the spans the handler starts (when ferromcp reports to your
    /// OpenTelemetry SDK, the handler already runs in that span's
    /// context); else what the client sent in `_meta`, if anything.
    #[napi(
        getter,
        ts_return_type = "{ traceparent: string; tracestate?: string } | undefined"
    )]
    pub fn trace(&self) -> Option<Value> {
        self.meta.trace.as_ref().map(|trace| {
            let mut value = serde_json::json!({ "traceparent": trace.traceparent() });
            if let Some(state) = &trace.state {
                value["tracestate"] = Value::from(state.as_str());
            }
            value
        })
    }

    /// True once the client cancelled the request or went away (or the call
    /// is over); a handler doing long work should check it and stop early.
    #[napi(getter)]
    pub fn cancelled(&self) -> bool {
        self.live
            .lock()
            .ctx
            .as_ref()
            .is_none_or(|ctx| ctx.is_cancelled())
    }

    /// Sends `notifications/progress` if the client asked for progress
    /// (sent a `progressToken`). Returns whether a notification was sent.
    #[napi]
    pub fn progress(&self, progress: f64, total: Option<f64>, message: Option<String>) -> bool {
        self.live
            .lock()
            .ctx
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
        let level = LoggingLevel::parse(&level).ok_or_else(|| {
            napi::Error::new(
                Status::InvalidArg,
                format!(
                    "unknown log level {level:?}; expected one of debug, info, notice, warning, error, critical, alert, emergency"
                ),
            )
        })?;
        let data = crate::values::from_js(data)?;
        Ok(self
            .live
            .lock()
            .ctx
            .as_ref()
            .is_some_and(|ctx| ctx.log(level, data, logger.as_deref())))
    }

    /// Asks the client for input, several questions at once: each ask is
    /// `{ kind, params, key? }`, `kind` being `"elicitation"`
    /// (`elicitation/create` params), `"sampling"`
    /// (`sampling/createMessage` params) or `"roots"` (`roots/list`,
    /// params `{}`); `key` names the question in a 2026-07-28
    /// `inputRequests` map (default: its position among the handler's asks).
    ///
    /// Resolves with one entry per ask, in order: `{ value }` (the client's
    /// answer, checked by core) or `{ error: { message, code, kind, data } }`
    /// (e.g. code -32021 when the client lacks the capability). Under
    /// 2026-07-28, when an answer is not in the request yet, core ends the
    /// round with `input_required` (every ask of the batch in it), drops
    /// this call and runs the handler again when the client retries; the
    /// promise then rejects with kind `"cancelled"`. In a 2025-11-25
    /// session real requests go to the client.
    ///
    /// @internal The facade's `ctx.ask`/`elicit`/`sample`/`listRoots` call
    /// it, batching the asks a handler makes in one turn of the event loop
    /// (`Promise.all`) so that they land in one round.
    #[napi(
        ts_args_type = "asks: Array<{ kind: 'elicitation' | 'sampling' | 'roots'; params: Record<string, unknown>; key?: string | null }>",
        ts_return_type = "Promise<Array<{ value?: Record<string, unknown>; error?: { message: string; code: number | null; kind: string | null; data?: unknown } }>>"
    )]
    pub fn request_inputs<'env>(&self, env: &'env Env, asks: Value) -> napi::Result<Object<'env>> {
        let asks = parse_asks(asks)?;
        let ctx = self.live.context();
        let (deferred, promise) = env.create_deferred()?;
        ferromcp::runtime::handle().spawn(async move {
            let outcome = match ctx {
                Some(ctx) => {
                    // The token is cancelled when the client cancels and when
                    // the request is over (a round that ended to ask): then no
                    // answer can come and the task must not outlive it.
                    let token = ctx.cancellation_token();
                    tokio::select! {
                        biased;
                        answers = ctx.ask_all(asks) => Some(answers),
                        _ = token.cancelled() => None,
                    }
                }
                None => None,
            };
            deferred.resolve(move |env| match outcome {
                Some(answers) => Ok(Value::Array(answers.into_iter().map(entry).collect())),
                None => Err(error::to_js(&env, &ferromcp::Error::Cancelled)),
            });
        });
        Ok(promise)
    }

    /// Turns this `tools/call` into a task (a tool registered with
    /// `taskStart: 'handler'`, for a client that declared the tasks
    /// extension): resolves `true` once the client has the task handle,
    /// from when the handler's questions go through the task and its
    /// `signal` follows `tasks/cancel`; `false` when the call cannot become
    /// a task (it goes on as a plain request).
    ///
    /// @example
    /// server.tool('deploy', { task: 'optional', taskStart: 'handler' }, async (args, ctx) => {
    ///   await ctx.elicit('Deploy?', { type: 'object', properties: {} });
    ///   await ctx.startTask(); // the client polls from here on
    ///   return 'deployed';
    /// });
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn start_task<'env>(&self, env: &'env Env) -> napi::Result<Object<'env>> {
        let ctx = self.live.context();
        let (deferred, promise) = env.create_deferred()?;
        ferromcp::runtime::handle().spawn(async move {
            let outcome = match ctx {
                Some(ctx) => Some(ctx.start_task().await),
                None => None,
            };
            deferred.resolve(move |env| match outcome {
                Some(Ok(started)) => Ok(started),
                Some(Err(HandlerError::Protocol(mcp))) => {
                    Err(error::to_js(&env, &ferromcp::Error::Mcp(mcp)))
                }
                Some(Err(HandlerError::Tool(message))) => {
                    Err(napi::Error::new(Status::GenericFailure, message))
                }
                None => Err(error::to_js(&env, &ferromcp::Error::Cancelled)),
            });
        });
        Ok(promise)
    }

    /// On the 2025-11-25 HTTP wire, ends the SSE connection carrying this
    /// request without ending its stream: the client reconnects with
    /// `Last-Event-ID` and gets what follows. Returns whether there was such
    /// a stream (elsewhere it does nothing).
    #[napi]
    pub fn close_sse_stream(&self) -> bool {
        self.live
            .context()
            .is_some_and(|ctx| ctx.close_sse_stream())
    }

    /// Starts watching the call for `ctx.signal`: returns the id the abort
    /// hook will be called with when core lets go of the call, or `null`
    /// when the call is already over (or no hook is registered).
    ///
    /// @internal Used by the `ferromcp` package itself.
    #[napi]
    pub fn watch_abort(&self, env: &Env) -> Option<u32> {
        let mut slot = self.live.lock();
        if let Some(watch) = &slot.watch {
            return Some(watch.id());
        }
        slot.ctx.as_ref()?;
        let watch = Watch::new(env)?;
        let id = watch.id();
        slot.watch = Some(watch);
        Some(id)
    }
}

/// The asks of `requestInputs` as core takes them.
fn parse_asks(asks: Value) -> napi::Result<Vec<(Option<String>, InputKind, Value)>> {
    let invalid = |why: String| napi::Error::new(Status::InvalidArg, why);
    let Value::Array(asks) = asks else {
        return Err(invalid("asks must be an array".into()));
    };
    asks.into_iter()
        .map(|ask| {
            let kind = match ask.get("kind").and_then(Value::as_str) {
                Some("elicitation") => InputKind::Elicitation,
                Some("sampling") => InputKind::Sampling,
                Some("roots") => InputKind::Roots,
                other => {
                    return Err(invalid(format!(
                        "unknown input kind {other:?}; expected elicitation, sampling or roots"
                    )));
                }
            };
            let key = ask.get("key").and_then(Value::as_str).map(str::to_owned);
            let params = ask
                .get("params")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({}));
            Ok((key, kind, params))
        })
        .collect()
}

/// One ask's outcome for the facade: `{ value }` or `{ error }`, the error
/// classified by core.
fn entry(answer: Result<Value, HandlerError>) -> Value {
    match answer {
        Ok(value) => serde_json::json!({ "value": value }),
        Err(HandlerError::Protocol(mcp)) => {
            let data = mcp.data.clone();
            let error = ferromcp::Error::Mcp(mcp);
            serde_json::json!({ "error": {
                "message": error.host_message(),
                "code": error.host_code(),
                "kind": error.kind().as_str(),
                "data": data,
            }})
        }
        Err(HandlerError::Tool(message)) => {
            serde_json::json!({ "error": { "message": message, "code": null, "kind": null } })
        }
    }
}
