//! The MCP semantic conventions, applied once for every request: span
//! names (`{mcp.method.name} {target}`), attributes, error types, and the
//! duration metric, for the server's dispatch and the client's send.

use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Instant;

use super::{AttributeValue, Attributes, Span, SpanKind, SpanStart, Telemetry, TraceContext};
use crate::protocol::methods;
use crate::{Error, McpError};

/// The low-cardinality target of a method: the tool or prompt named.
fn target<'a>(method: &str, name: Option<&'a str>) -> Option<(&'static str, &'a str)> {
    match method {
        methods::TOOLS_CALL => name.map(|n| ("gen_ai.tool.name", n)),
        methods::PROMPTS_GET => name.map(|n| ("gen_ai.prompt.name", n)),
        _ => None,
    }
}

/// What both sides put on a span and its metric.
struct Described {
    name: String,
    span_attributes: Attributes,
    metric_attributes: Attributes,
}

fn describe(
    method: &str,
    params: Option<&Map<String, Value>>,
    name: Option<&str>,
    version: &str,
) -> Described {
    let name = name.or_else(|| params.and_then(|p| p.get("name")).and_then(Value::as_str));
    let mut metric_attributes: Attributes = vec![("mcp.method.name", method.into())];
    let span_name = match target(method, name) {
        Some((key, target)) => {
            metric_attributes.push((key, target.into()));
            format!("{method} {target}")
        }
        None => method.to_owned(),
    };
    if method == methods::TOOLS_CALL {
        metric_attributes.push(("gen_ai.operation.name", "execute_tool".into()));
    }
    if !version.is_empty() {
        metric_attributes.push(("mcp.protocol.version", version.into()));
    }
    let mut span_attributes = metric_attributes.clone();
    if let Some(uri) = params.and_then(|p| p.get("uri")).and_then(Value::as_str) {
        span_attributes.push(("mcp.resource.uri", uri.into()));
    }
    Described {
        name: span_name,
        span_attributes,
        metric_attributes,
    }
}

/// `error.type` for a tool result that reports failure in its payload.
fn tool_error(method: &str, result: &Map<String, Value>) -> bool {
    method == methods::TOOLS_CALL && result.get("isError").and_then(Value::as_bool) == Some(true)
}

/// A span with its operation's metric, ended once: by `finish`, or, for
/// a request whose future was dropped (cancelled, its client gone), when
/// dropped, as cancelled, so no span is lost and the active count comes
/// back down.
struct Timed {
    telemetry: Arc<dyn Telemetry>,
    span: Option<Box<dyn Span>>,
    kind: SpanKind,
    started: Instant,
    method: String,
    metric_attributes: Attributes,
}

impl Timed {
    fn context(&self) -> TraceContext {
        match &self.span {
            Some(span) => span.context(),
            None => TraceContext::new_root(),
        }
    }

    fn set_attribute(&mut self, key: &'static str, value: AttributeValue) {
        if let Some(span) = &mut self.span {
            span.set_attribute(key, value);
        }
    }

    fn fail(&mut self, error_type: &str, message: &str) {
        if let Some(span) = &mut self.span {
            span.set_error(error_type, message);
        }
        self.metric_attributes
            .push(("error.type", error_type.into()));
    }

    fn fail_with(&mut self, error: &McpError) {
        let code = error.code.to_string();
        self.set_attribute("rpc.response.status_code", code.clone().into());
        self.fail(&code, &error.message);
    }

    fn end(&mut self) {
        let Some(span) = self.span.take() else {
            return;
        };
        let seconds = self.started.elapsed().as_secs_f64();
        if self.kind == SpanKind::Server {
            self.telemetry.active_requests(&self.method, -1);
        }
        self.telemetry
            .record_operation(self.kind, seconds, &self.metric_attributes);
        span.end();
    }
}

impl Drop for Timed {
    fn drop(&mut self) {
        if self.span.is_some() {
            self.fail("cancelled", "the request ended before its answer");
            self.end();
        }
    }
}

/// A request being served.
pub(crate) struct ServerSpan(Timed);

impl ServerSpan {
    /// Starts the span of a request whose `_meta` carried `parent`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start(
        telemetry: Arc<dyn Telemetry>,
        method: &str,
        params: Option<&Map<String, Value>>,
        call_name: Option<&str>,
        id: &impl std::fmt::Display,
        version: &str,
        over_http: bool,
        parent: Option<TraceContext>,
    ) -> ServerSpan {
        let described = describe(method, params, call_name, version);
        let mut attributes = described.span_attributes;
        attributes.push(("jsonrpc.request.id", id.to_string().into()));
        attributes.push((
            "network.transport",
            if over_http { "tcp" } else { "pipe" }.into(),
        ));
        let span = telemetry.start_span(SpanStart {
            name: described.name,
            kind: SpanKind::Server,
            parent_is_remote: parent.is_some(),
            parent,
            attributes,
        });
        telemetry.active_requests(method, 1);
        ServerSpan(Timed {
            telemetry,
            span: Some(span),
            kind: SpanKind::Server,
            started: Instant::now(),
            method: method.to_owned(),
            metric_attributes: described.metric_attributes,
        })
    }

    /// The context a handler's work runs under.
    pub(crate) fn context(&self) -> TraceContext {
        self.0.context()
    }

    /// Ends the span with the request's outcome: `Ok(Some(result))` for a
    /// result object, `Ok(None)` when there is nothing to look into.
    pub(crate) fn finish(mut self, outcome: Result<Option<&Map<String, Value>>, &McpError>) {
        match outcome {
            Ok(Some(result)) if tool_error(&self.0.method, result) => {
                self.0.fail("tool_error", "the tool reported an error");
            }
            Ok(_) => {}
            Err(error) => self.0.fail_with(error),
        }
        self.0.end();
    }
}

/// A request being sent.
pub(crate) struct ClientSpan(Timed);

impl ClientSpan {
    /// Starts the span of a request sent under `parent` (the caller's
    /// context).
    pub(crate) fn start(
        telemetry: Arc<dyn Telemetry>,
        method: &str,
        params: &Map<String, Value>,
        version: &str,
        parent: Option<TraceContext>,
    ) -> ClientSpan {
        let described = describe(method, Some(params), None, version);
        let span = telemetry.start_span(SpanStart {
            name: described.name,
            kind: SpanKind::Client,
            parent,
            parent_is_remote: false,
            attributes: described.span_attributes,
        });
        ClientSpan(Timed {
            telemetry,
            span: Some(span),
            kind: SpanKind::Client,
            started: Instant::now(),
            method: method.to_owned(),
            metric_attributes: described.metric_attributes,
        })
    }

    /// What goes into the request's `_meta`.
    pub(crate) fn context(&self) -> TraceContext {
        self.0.context()
    }

    /// Ends the span with the call's outcome.
    pub(crate) fn finish(mut self, outcome: Result<&Value, &Error>) {
        match outcome {
            Ok(Value::Object(result)) if tool_error(&self.0.method, result) => {
                self.0.fail("tool_error", "the tool reported an error");
            }
            Ok(_) => {}
            Err(Error::Mcp(error)) => self.0.fail_with(error),
            Err(error) => self.0.fail(error.kind().as_str(), &error.to_string()),
        }
        self.0.end();
    }
}
