//! Per-caller visibility (core's `Server::set_visibility`) for JS: which
//! tools, prompts, resources and templates each caller sees. Lists, the
//! "hidden is unknown" errors and the private cache scope of filtered
//! lists are core's; so is which items a request needs judged. Core asks
//! once per request, with all of them, never under its registry lock, and
//! awaits the answer: this file hands the question to the facade's
//! evaluator (`lib/middleware.js`) in one call on the JS thread, through
//! the one host-call adapter (`host_call.rs`), and the evaluator answers
//! with a list of booleans or a promise of one.

use ferromcp::host::caller::caller_value;
use ferromcp::server::{
    BoxFuture, FromHost, OutputError, RequestMeta, VisibilityRule, VisibleItem,
};
use napi::bindgen_prelude::FnArgs;
use napi_derive::napi;
use serde_json::{Value, json};

use crate::host_call::{self, HostFunction, HostOutput, JsCallback};
use crate::server::JsServer;

/// Core's rule, answered by the facade's evaluator
/// `(caller, items) => boolean[] | Promise<boolean[]>`.
struct JsRule {
    evaluator: JsCallback,
}

impl VisibilityRule for JsRule {
    fn judge(&self, caller: &RequestMeta, items: Vec<VisibleItem>) -> BoxFuture<Vec<bool>> {
        let items = items
            .iter()
            .map(|item| json!({ "kind": kind(item), "key": item.key() }))
            .collect();
        let args = FnArgs::from((Value::Object(caller_value(caller)), Value::Array(items)));
        let verdicts = host_call::call_with::<Verdicts, _>(&self.evaluator, args);
        // An evaluator that failed hides every item (core fills in `false`).
        Box::pin(async move { verdicts.await.map(|Verdicts(v)| v).unwrap_or_default() })
    }
}

/// An item's kind as the facade names it.
fn kind(item: &VisibleItem) -> &'static str {
    match item {
        VisibleItem::Tool(_) => "tool",
        VisibleItem::Prompt(_) => "prompt",
        VisibleItem::Resource(_) => "resource",
        VisibleItem::ResourceTemplate(_) => "resourceTemplate",
    }
}

/// What the evaluator answers: one boolean per item asked about (anything
/// but `true` hides).
struct Verdicts(Vec<bool>);

impl FromHost for Verdicts {
    const KIND: &'static str = "visibility";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        match value {
            Value::Array(items) => Ok(Verdicts(
                items.iter().map(|v| v.as_bool() == Some(true)).collect(),
            )),
            _ => Err(OutputError {
                kind: Self::KIND,
                reason: "expected a list of booleans".into(),
            }),
        }
    }
}

impl HostOutput for Verdicts {}

#[napi]
impl JsServer {
    /// Sets core's visibility rule to the facade's evaluator, or with
    /// `null` takes it away (everyone sees everything, and lists keep their
    /// configured cache scope). Core calls `evaluate(caller, items)` once
    /// per request with every item it needs judged (`{ kind, key }`) and
    /// the caller (`protocolVersion`, `clientInfo`, `clientCapabilities`,
    /// `auth`, `headers`); it answers one boolean per item, or a promise of
    /// that list.
    ///
    /// @internal The facade's `visibility()` and `visible` option call it.
    #[napi(
        ts_args_type = "evaluate: ((caller: { protocolVersion: string; clientInfo: Record<string, unknown> | null; clientCapabilities: Record<string, unknown>; auth: { subject: string | null; clientId: string | null; scopes: string[]; audience: string[]; expiresAt: number | null; claims: Record<string, unknown> } | null; headers: Record<string, string> }, items: Array<{ kind: 'tool' | 'resource' | 'resourceTemplate' | 'prompt'; key: string }>) => boolean[] | Promise<boolean[]>) | null"
    )]
    pub fn set_visibility(&self, evaluate: Option<HostFunction<'_>>) -> napi::Result<()> {
        match evaluate {
            Some(evaluate) => self.server.set_visibility(JsRule {
                evaluator: JsCallback::new(&evaluate)?,
            }),
            None => self.server.clear_visibility(),
        }
        Ok(())
    }
}
