//! Client middleware (core's [`ClientMiddleware`]): a JS function as a link
//! of a client's chain (`client.use(link)`), around every request the
//! client sends, and the native `next` it calls. The facade
//! (`lib/middleware.js`) shapes `ctx` and `next` for the user; which
//! requests go through the chain and in which order is core's
//! (`core/src/client/middleware.rs`).
//!
//! Threads: as for a server's links (`middleware.rs`, whose pieces this
//! uses): core calls the link from a runtime thread; the JS link runs on
//! the JS thread through the host-call adapter, never blocking either
//! thread; its `next.run(params, meta, timeout)` hands the call back to
//! the link's future, which runs the rest of the chain (then sends) and
//! settles `next`'s promise. So a link may await other calls of the same
//! client: they go through the chain too, on their own futures.

use std::time::Duration;

use ferromcp::client::{CallNext, CallRequest, ClientMiddleware};
use ferromcp::{BoxFuture, Error};
use napi::bindgen_prelude::{FnArgs, Object};
use napi::{Env, Status, Unknown};
use napi_derive::napi;
use serde_json::{Map, Value};
use tokio::sync::oneshot;

use crate::client::JsClient;
use crate::host_call::{self, HostFunction, JsCallback};
use crate::middleware::{LinkOutput, NextCall, drive_link, hand_over, next_params};

/// `(call, next)`: the call as a plain object, and the native `next`.
type LinkArgs = FnArgs<(Value, JsClientMiddlewareNext)>;

/// What a link passes on to the rest of the chain: the params, and the
/// extra `_meta` and timeout when it gave them (`None`: the call's own).
struct NextInput {
    params: Map<String, Value>,
    meta: Option<Map<String, Value>>,
    timeout: Option<Duration>,
}

/// A JS link of a client's chain: `(call, next) => result | Promise<result>`
/// (the facade's adapter around the user's `(ctx, next)` function).
struct JsClientLink {
    callback: JsCallback,
}

impl ClientMiddleware for JsClientLink {
    fn handle(&self, request: CallRequest, next: CallNext) -> BoxFuture<Result<Value, Error>> {
        let CallRequest {
            method,
            params,
            options,
        } = request;
        let (sender, called) = oneshot::channel::<NextCall<NextInput>>();
        let input = serde_json::json!({
            "method": method,
            // Moved, not copied: the params go on as the link passes them.
            "params": Value::Object(params),
            "meta": Value::Object(options.meta.clone()),
            "timeout": options.timeout.map(|t| t.as_secs_f64() * 1000.0),
        });
        let js_next = JsClientMiddlewareNext {
            sender: Some(sender),
        };
        let outcome = host_call::call_with::<LinkOutput, LinkArgs>(
            &self.callback,
            FnArgs::from((input, js_next)),
        );
        Box::pin(async move {
            let rest = move |given: NextInput| {
                let mut options = options;
                if let Some(meta) = given.meta {
                    options.meta = meta;
                }
                if given.timeout.is_some() {
                    options.timeout = given.timeout;
                }
                next.run(CallRequest {
                    method,
                    params: given.params,
                    options,
                })
            };
            drive_link(outcome, called, rest)
                .await
                .into_result()
                .map(Value::Object)
        })
    }
}

/// The rest of a client's chain, as a JS link's `next` sees it (the facade
/// wraps it in a function).
///
/// @internal Used by the `ferromcp` package itself.
#[napi(js_name = "ClientMiddlewareNext")]
pub struct JsClientMiddlewareNext {
    sender: Option<oneshot::Sender<NextCall<NextInput>>>,
}

#[napi]
impl JsClientMiddlewareNext {
    /// Runs the rest of the chain, and then sends the call, with `params`,
    /// the extra `_meta` entries `meta` and `timeout` (milliseconds; `null`
    /// keeps the call's own of each): resolves with the result object as
    /// the server answered it, or rejects with the `McpError` the call
    /// ended in. Once per call; after the call is over (abandoned) it
    /// rejects with kind `"cancelled"`.
    #[napi(
        ts_args_type = "params: Record<string, unknown>, meta?: Record<string, unknown> | null, timeout?: number | null",
        ts_return_type = "Promise<Record<string, unknown>>"
    )]
    pub fn run<'env>(
        &mut self,
        env: &'env Env,
        params: Unknown<'_>,
        meta: Option<Value>,
        timeout: Option<f64>,
    ) -> napi::Result<Object<'env>> {
        let params = next_params(params)?;
        let meta = match meta {
            None | Some(Value::Null) => None,
            Some(Value::Object(meta)) => Some(meta),
            Some(_) => {
                return Err(napi::Error::new(
                    Status::InvalidArg,
                    "next(ctx): ctx.meta must be an object",
                ));
            }
        };
        let timeout = match timeout {
            None => None,
            // Refused rather than read as the call's own timeout: a link
            // that set one meant it.
            Some(ms) => Some(
                Duration::try_from_secs_f64(ms / 1000.0)
                    .ok()
                    .filter(|t| !t.is_zero())
                    .ok_or_else(|| {
                        napi::Error::new(
                            Status::InvalidArg,
                            format!(
                                "next(ctx): ctx.timeout must be a positive number of milliseconds, not {ms}"
                            ),
                        )
                    })?,
            ),
        };
        hand_over(
            env,
            &mut self.sender,
            NextInput {
                params,
                meta,
                timeout,
            },
        )
    }
}

#[napi]
impl JsClient {
    /// Adds a JS link at the end of the client's middleware chain:
    /// `link(call, next)` gets the call as a plain object (`method`,
    /// `params`, `meta`: the call's extra `_meta` entries, `timeout`: its
    /// own timeout in milliseconds or `null`) and the native `next`, and
    /// returns the result object or a promise of it. A thrown `McpError`
    /// fails the call with that JSON-RPC error; anything else thrown fails
    /// it as an internal error.
    ///
    /// @internal The facade's `client.use(link)` calls it with an adapter.
    #[napi(
        ts_args_type = "link: (call: { method: string; params: Record<string, unknown>; meta: Record<string, unknown>; timeout: number | null }, next: ClientMiddlewareNext) => unknown"
    )]
    pub fn use_link(&self, link: HostFunction<'_>) -> napi::Result<()> {
        self.client.add_middleware(JsClientLink {
            callback: JsCallback::new(&link)?,
        });
        Ok(())
    }
}
