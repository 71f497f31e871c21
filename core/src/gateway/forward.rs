//! One downstream request carried upstream: the call's options built from
//! the request's context, so what the upstream does during the call reaches
//! the client that made it (progress, log messages, questions for input,
//! cancellation), and the upstream's failures are told the way a handler's
//! are.
//!
//! Questions cross the eras here: the upstream asks through an
//! `input_required` round (2026-07-28) or a request of its own
//! (2025-11-25), the client call hands it to [`CallOptions::input`], and
//! that asks the downstream client through the request context, which
//! speaks the downstream's era. A 2026-07-28 downstream answers by
//! retrying its request: the round ends, this call is dropped (cancelling
//! the upstream call) and made again with the answer at hand, which a
//! 2026-07-28 upstream asks for again in the same order (so the same
//! positional key finds the answer).

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::Arc;

use crate::client::{CallInput, CallOptions, Client, NotificationCallback};
use crate::protocol::{LoggingLevel, meta, methods};
use crate::server::{HandlerError, InputKind, RequestContext};
use crate::{Error, McpError};

/// The options of an upstream call made for the request of `ctx`.
pub(crate) fn call_options(ctx: &RequestContext) -> CallOptions {
    let mut options = CallOptions {
        cancel: Some(ctx.cancellation_token()),
        input: Some(input(ctx.clone())),
        capabilities: Some(ctx.meta().client_capabilities.clone()),
        ..CallOptions::default()
    };
    if ctx.meta().progress_token.is_some() {
        let progress = ctx.clone();
        options = options.with_progress(move |update| {
            progress.progress(update.progress, update.total, update.message.as_deref());
        });
    }
    // Log messages only for a client that asked for them: without one, the
    // call needs no notification route (a queue per call) at all.
    if let Some(level) = ctx.meta().log_level
        && let Ok(level) = serde_json::to_value(level)
    {
        options.meta.insert(meta::LOG_LEVEL.into(), level);
        options.on_notification = Some(notifications(ctx.clone()));
    }
    options
}

/// Passes the upstream's questions to the downstream client.
fn input(ctx: RequestContext) -> CallInput {
    Arc::new(move |kind: InputKind, params: Value| {
        let ctx = ctx.clone();
        Box::pin(async move { ctx.ask(None, kind, params).await.map_err(client_error) })
    })
}

/// Passes the upstream's log messages about the call on.
fn notifications(ctx: RequestContext) -> NotificationCallback {
    Arc::new(move |method: &str, params: &Value| {
        if method != methods::NOTIFICATIONS_MESSAGE {
            return;
        }
        let level = params
            .get("level")
            .and_then(|l| serde_json::from_value::<LoggingLevel>(l.clone()).ok())
            .unwrap_or(LoggingLevel::Info);
        let data = params.get("data").cloned().unwrap_or(Value::Null);
        let logger = params.get("logger").and_then(Value::as_str);
        ctx.log(level, data, logger);
    })
}

/// The downstream's failure to answer a question, as the upstream call's
/// error.
fn client_error(error: HandlerError) -> Error {
    match error {
        HandlerError::Protocol(e) => Error::Mcp(e),
        HandlerError::Tool(message) => Error::Protocol(message),
    }
}

/// Sends one request upstream for the request of `ctx`; the result as the
/// upstream gave it (without its `resultType`, which the server sets).
pub(crate) async fn send(
    upstream: &Upstream,
    ctx: &RequestContext,
    method: &str,
    params: Map<String, Value>,
) -> Result<Map<String, Value>, HandlerError> {
    let options = call_options(ctx);
    match upstream.client.send(method, params, &options).await {
        Ok(Value::Object(mut result)) => {
            result.remove("resultType");
            Ok(result)
        }
        Ok(other) => Err(upstream.failed(&Error::Protocol(format!(
            "{method} answered with {other} instead of an object"
        )))),
        Err(error) => Err(upstream.failed(&error)),
    }
}

/// An upstream server as a mount knows it: its client and its name in
/// messages (the quoted prefix; empty for a proxy's one upstream).
#[derive(Clone)]
pub(crate) struct Upstream {
    pub(crate) client: Client,
    pub(crate) label: String,
}

impl Upstream {
    /// The upstream's failure as the downstream sees it: its own JSON-RPC
    /// error as it is; anything else (unreachable, timed out, a malformed
    /// answer) as an internal error naming the upstream.
    pub(crate) fn failed(&self, error: &Error) -> HandlerError {
        HandlerError::Protocol(self.error(error))
    }

    /// [`Upstream::failed`] as a JSON-RPC error (what a relayed call
    /// answers).
    fn error(&self, error: &Error) -> McpError {
        match error {
            Error::Mcp(e) => e.clone(),
            other if self.label.is_empty() => McpError::internal(format!("upstream: {other}")),
            other => McpError::internal(format!("upstream {}: {other}", self.label)),
        }
    }
}

/// A proxy's one upstream as the server's relay (`server/relay.rs`).
pub(crate) struct Relayed {
    pub(crate) upstream: Upstream,
    /// Whether the upstream offers the tasks extension.
    pub(crate) offers_tasks: bool,
}

impl crate::server::Relay for Relayed {
    fn takes(&self, protocol_version: &str, wants_tasks: bool) -> bool {
        !(wants_tasks && self.offers_tasks) && self.upstream.client.relays(protocol_version)
    }

    fn relay(
        &self,
        method: &'static str,
        params: Box<RawValue>,
    ) -> crate::BoxFuture<Result<Box<RawValue>, McpError>> {
        let upstream = self.upstream.clone();
        Box::pin(async move {
            let failed = |error: &Error| upstream.error(error);
            match upstream.client.send_raw_as_is(method, params).await {
                Ok(result) if result.get().starts_with('{') => Ok(result),
                Ok(other) => Err(failed(&Error::Protocol(format!(
                    "{method} answered with {} instead of an object",
                    other.get()
                )))),
                Err(error) => Err(failed(&error)),
            }
        })
    }
}
