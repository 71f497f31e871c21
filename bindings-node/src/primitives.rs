//! Resources, resource templates, prompts and completion implemented in JS
//! (core's `ResourceHandler`, `PromptHandler` and `CompletionHandler`); the
//! native `Server` methods that register them are in `server.rs`.
//!
//! As for tools (`tools.rs`), running the callable is
//! [`crate::host_call`]'s job and what it returns becomes output by core's
//! rule for the kind; this file only says which callable runs with which
//! input. List-changed notifications come from core on every registration
//! change.

use ferromcp::protocol::CacheScope;
use ferromcp::server::{
    BoxFuture, CacheHint, CompletionOutput, Handler, HandlerError, PromptOutput, RequestContext,
    ResourceOutput, ResourceRequest,
};
use napi::{Env, Unknown};
use napi_derive::napi;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::host_call::{self, JsCallback};
use crate::{error, values};

/// A resource (or resource template) read implemented in JS: called with
/// `{ uri, variables }`.
pub(crate) struct JsResourceHandler(pub(crate) JsCallback);

impl Handler<ResourceRequest, ResourceOutput> for JsResourceHandler {
    fn call(
        &self,
        ctx: RequestContext,
        request: ResourceRequest,
    ) -> BoxFuture<Result<ResourceOutput, HandlerError>> {
        let input = json!({ "uri": request.uri, "variables": request.variables });
        host_call::call::<ResourceOutput>(&self.0, Some(ctx), input)
    }
}

/// A prompt implemented in JS: called with the prompt's arguments.
pub(crate) struct JsPromptHandler(pub(crate) JsCallback);

impl Handler<Map<String, Value>, PromptOutput> for JsPromptHandler {
    fn call(
        &self,
        ctx: RequestContext,
        arguments: Map<String, Value>,
    ) -> BoxFuture<Result<PromptOutput, HandlerError>> {
        host_call::call::<PromptOutput>(&self.0, Some(ctx), Value::Object(arguments))
    }
}

/// The completion provider implemented in JS: called with the
/// `completion/complete` params (`ref`, `argument`, `context`).
pub(crate) struct JsCompletionHandler(pub(crate) JsCallback);

impl Handler<Value, CompletionOutput> for JsCompletionHandler {
    fn call(
        &self,
        ctx: RequestContext,
        params: Value,
    ) -> BoxFuture<Result<CompletionOutput, HandlerError>> {
        host_call::call::<CompletionOutput>(&self.0, Some(ctx), params)
    }
}

/// A definition object read as the protocol type `T`, or an `McpError`
/// (kind `invalidDefinition`) saying what was wrong.
pub(crate) fn definition<T: DeserializeOwned>(
    env: &Env,
    what: &str,
    value: Unknown<'_>,
) -> napi::Result<T> {
    serde_json::from_value(values::from_js(value)?).map_err(|e| {
        error::to_js(
            env,
            &ferromcp::Error::InvalidDefinition(format!("invalid {what} definition: {e}")),
        )
    })
}

/// How long a result may be reused, and by whom (`ttlMs` + `cacheScope`
/// of cacheable results).
#[napi(object, js_name = "CacheHint")]
pub struct JsCacheHint {
    /// Milliseconds the client may consider the result fresh.
    pub ttl_ms: f64,
    /// `"public"` (any client may share it, the default) or `"private"`
    /// (only this user).
    #[napi(ts_type = "'public' | 'private'")]
    pub cache_scope: Option<String>,
}

impl JsCacheHint {
    /// The core hint, or an `McpError` (kind `invalidDefinition`).
    pub(crate) fn to_core(&self, env: &Env) -> napi::Result<CacheHint> {
        let invalid = |why: String| error::to_js(env, &ferromcp::Error::InvalidDefinition(why));
        if !(self.ttl_ms.is_finite() && self.ttl_ms >= 0.0) {
            return Err(invalid(format!(
                "ttlMs must be a non-negative number, not {}",
                self.ttl_ms
            )));
        }
        let scope = match self.cache_scope.as_deref() {
            None => CacheScope::Public,
            Some(scope) => serde_json::from_value(Value::from(scope)).map_err(|_| {
                invalid(format!(
                    "cacheScope must be \"public\" or \"private\", not {scope:?}"
                ))
            })?,
        };
        // Whole milliseconds; a fraction says nothing a client can use.
        Ok(CacheHint {
            ttl_ms: self.ttl_ms as u64,
            scope,
        })
    }
}
