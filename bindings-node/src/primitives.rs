//! Resources, resource templates, prompts and completion implemented in JS
//! (core's `ResourceHandler`, `PromptHandler` and `CompletionHandler`), and
//! the native `Server` methods that register them.
//!
//! As for tools (`handler.rs`), running the callable is
//! [`crate::host_call`]'s job and what it returns becomes output by core's
//! rule for the kind; this file only says which callable runs with which
//! input. List-changed notifications come from core on every registration
//! change.

use ferromcp::protocol::{CacheScope, Prompt, Resource, ResourceTemplate};
use ferromcp::server::{
    BoxFuture, CacheHint, CompletionOutput, Handler, HandlerError, PromptOutput, RequestContext,
    ResourceOutput, ResourceRequest,
};
use napi::bindgen_prelude::Function;
use napi::{Env, Unknown};
use napi_derive::napi;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};

use crate::host_call::{self, HostCallArgs, JsCallback};
use crate::server::JsServer;
use crate::{error, json};

/// A resource (or resource template) read implemented in JS: called with
/// `{ uri, variables }`.
struct JsResourceHandler(JsCallback);

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
struct JsPromptHandler(JsCallback);

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
struct JsCompletionHandler(JsCallback);

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
fn definition<T: DeserializeOwned>(env: &Env, what: &str, value: Unknown<'_>) -> napi::Result<T> {
    serde_json::from_value(json::from_js(value)?).map_err(|e| {
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

fn callback(handler: Function<'_, HostCallArgs, Unknown<'static>>) -> napi::Result<JsCallback> {
    JsCallback::new(&handler)
}

#[napi]
impl JsServer {
    /// Registers (or replaces) a resource with a fixed URI. `definition` is
    /// an MCP `Resource` (`uri`, `name`, optionally `title`, `description`,
    /// `mimeType`, `size`, `icons`, `annotations`, `_meta`); `handler` gets
    /// `{ uri, variables }` and returns the contents (a string, bytes, a
    /// contents item, a list of them or `{ contents }`). `cache` is the
    /// caching hint of its reads (default: the server-wide one).
    #[napi(
        ts_args_type = "definition: { uri: string; name: string; [key: string]: unknown }, handler: (request: { uri: string; variables: Record<string, unknown> }, ctx: RequestContext) => unknown, cache?: CacheHint | undefined | null"
    )]
    pub fn add_resource(
        &self,
        env: &Env,
        definition: Unknown<'_>,
        handler: Function<'_, HostCallArgs, Unknown<'static>>,
        cache: Option<JsCacheHint>,
    ) -> napi::Result<()> {
        let resource: Resource = self::definition(env, "resource", definition)?;
        let handler = JsResourceHandler(callback(handler)?);
        let added = match cache {
            Some(cache) => self
                .server
                .add_resource_cached(resource, cache.to_core(env)?, handler),
            None => self.server.add_resource(resource, handler),
        };
        added.map_err(|e| error::to_js(env, &e))
    }

    /// Registers (or replaces) a resource template. `definition` is an MCP
    /// `ResourceTemplate` (`uriTemplate` in RFC 6570 form, `name`, ...);
    /// reads of matching URIs call `handler` with the URI and the extracted
    /// `variables`. `cache` is the caching hint of those reads.
    #[napi(
        ts_args_type = "definition: { uriTemplate: string; name: string; [key: string]: unknown }, handler: (request: { uri: string; variables: Record<string, unknown> }, ctx: RequestContext) => unknown, cache?: CacheHint | undefined | null"
    )]
    pub fn add_resource_template(
        &self,
        env: &Env,
        definition: Unknown<'_>,
        handler: Function<'_, HostCallArgs, Unknown<'static>>,
        cache: Option<JsCacheHint>,
    ) -> napi::Result<()> {
        let template: ResourceTemplate = self::definition(env, "resource template", definition)?;
        let handler = JsResourceHandler(callback(handler)?);
        let added = match cache {
            Some(cache) => {
                self.server
                    .add_resource_template_cached(template, cache.to_core(env)?, handler)
            }
            None => self.server.add_resource_template(template, handler),
        };
        added.map_err(|e| error::to_js(env, &e))
    }

    /// Removes a resource with a fixed URI; returns whether it existed.
    #[napi]
    pub fn remove_resource(&self, uri: String) -> bool {
        self.server.remove_resource(&uri)
    }

    /// Removes a resource template (by its `uriTemplate` as registered);
    /// returns whether it existed.
    #[napi]
    pub fn remove_resource_template(&self, uri_template: String) -> bool {
        self.server.remove_resource_template(&uri_template)
    }

    /// Registers (or replaces) a prompt. `definition` is an MCP `Prompt`
    /// (`name`, optionally `title`, `description`, `arguments`, `icons`,
    /// `_meta`); `handler` gets the arguments and returns a string, a
    /// message, a list of messages or a `GetPromptResult`.
    #[napi(
        ts_args_type = "definition: { name: string; [key: string]: unknown }, handler: (args: Record<string, string>, ctx: RequestContext) => unknown"
    )]
    pub fn add_prompt(
        &self,
        env: &Env,
        definition: Unknown<'_>,
        handler: Function<'_, HostCallArgs, Unknown<'static>>,
    ) -> napi::Result<()> {
        let prompt: Prompt = self::definition(env, "prompt", definition)?;
        let handler = JsPromptHandler(callback(handler)?);
        self.server
            .add_prompt(prompt, handler)
            .map_err(|e| error::to_js(env, &e))
    }

    /// Removes a prompt; returns whether it existed.
    #[napi]
    pub fn remove_prompt(&self, name: String) -> bool {
        self.server.remove_prompt(&name)
    }

    /// Sets the provider answering `completion/complete` (core checks that
    /// `ref` names a registered prompt or resource first). `handler` gets
    /// the request's params and returns a list of strings or
    /// `{ values, total?, hasMore? }`.
    #[napi(
        ts_args_type = "handler: (params: { ref: Record<string, unknown>; argument: { name: string; value: string }; context?: { arguments?: Record<string, string> } }, ctx: RequestContext) => unknown"
    )]
    pub fn set_completion_handler(
        &self,
        handler: Function<'_, HostCallArgs, Unknown<'static>>,
    ) -> napi::Result<()> {
        self.server
            .set_completion_handler(JsCompletionHandler(callback(handler)?));
        Ok(())
    }

    /// Tells the clients subscribed to `uri` that it changed
    /// (`notifications/resources/updated` on `subscriptions/listen`
    /// streams, and to 2025-11-25 sessions that subscribed).
    #[napi]
    pub fn notify_resource_updated(&self, uri: String) {
        self.server.notify_resource_updated(&uri);
    }
}
