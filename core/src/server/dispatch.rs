//! Request dispatch for the 2026-07-28 (stateless) wire.
//!
//! A request goes through three steps so a transport can interleave its own
//! checks: [`Server::prepare`] reads `_meta` (every request must carry the
//! protocol version and client capabilities), the transport may compare its
//! headers with the prepared request, [`Server::admit`] checks the version
//! and the method, and [`Server::execute`] runs it and produces the JSON-RPC
//! response, with `resultType` and the server's identity on every result.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::context::{
    InputMode, LiveRequester, NotificationSink, RequestContext, RequestMeta, parse_request_meta,
};
use super::handler::{
    BoxFuture, CompletionOutput, HandlerError, PromptOutput, ResourceOutput, ResourceRequest,
};
use super::input::{InputRound, supports_input};
use super::panic::{catch_panic, panic_message};
use super::registry::ListKind;
use super::reply::{Outgoing, Reply};
use super::subscriptions::{Filter, listen};
use super::tool_result::{error_result, into_call_tool_result};
use super::{CacheHint, Server};
use crate::McpError;
use crate::protocol::jsonrpc::{Request, RequestId, error_value, result_value};
use crate::protocol::{MODERN_PROTOCOL_VERSIONS, codes};

/// The methods this revision defines for a server to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    Discover,
    List(ListKind),
    ToolsCall,
    ResourcesRead,
    PromptsGet,
    Complete,
    Listen,
}

impl Route {
    fn of(method: &str) -> Option<Route> {
        Some(match method {
            "server/discover" => Route::Discover,
            "tools/list" => Route::List(ListKind::Tools),
            "tools/call" => Route::ToolsCall,
            "resources/list" => Route::List(ListKind::Resources),
            "resources/templates/list" => Route::List(ListKind::Templates),
            "resources/read" => Route::ResourcesRead,
            "prompts/list" => Route::List(ListKind::Prompts),
            "prompts/get" => Route::PromptsGet,
            "completion/complete" => Route::Complete,
            "subscriptions/listen" => Route::Listen,
            _ => return None,
        })
    }
}

/// Which wire a request arrived on.
pub(crate) enum Era {
    /// 2026-07-28: stateless, input by MRTR rounds.
    Modern,
    /// 2025-11-25 session: input by live requests; on HTTP, the handler may
    /// close its SSE connection for the client to resume.
    Legacy {
        requester: Arc<dyn LiveRequester>,
        close_stream: Option<Arc<dyn Fn() + Send + Sync>>,
    },
}

/// A request whose `_meta` has been read.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) request: Request,
    pub(crate) meta: RequestMeta,
}

impl Prepared {
    /// Whether this is a long-lived `subscriptions/listen` request.
    pub(crate) fn is_listen(&self) -> bool {
        self.request.method == "subscriptions/listen"
    }
}

/// A request refused before it ran, with the HTTP status it maps to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rejection {
    pub(crate) id: Option<RequestId>,
    pub(crate) error: McpError,
    pub(crate) http_status: u16,
}

impl Rejection {
    pub(crate) fn new(id: Option<RequestId>, error: McpError, http_status: u16) -> Self {
        Rejection {
            id,
            error,
            http_status,
        }
    }

    /// The JSON-RPC error response.
    pub(crate) fn to_message(&self) -> Value {
        error_value(self.id.as_ref(), &self.error)
    }
}

/// The HTTP status for a JSON-RPC error produced while running a request.
pub(crate) fn http_status_for(error: &McpError) -> u16 {
    match error.code {
        codes::METHOD_NOT_FOUND => 404,
        codes::PARSE_ERROR
        | codes::INVALID_REQUEST
        | codes::HEADER_MISMATCH
        | codes::MISSING_REQUIRED_CLIENT_CAPABILITY
        | codes::UNSUPPORTED_PROTOCOL_VERSION => 400,
        _ => 200,
    }
}

/// How a handler round ended.
enum Ran<O> {
    Done(Result<O, HandlerError>),
    Panicked(String),
    InputRequired,
}

/// Runs a handler, isolating panics (while building its future or while
/// polling it) and ending the round as soon as it asks for input the
/// request does not carry yet.
async fn run_handler<O>(
    input: Option<&InputRound>,
    start: impl FnOnce() -> BoxFuture<Result<O, HandlerError>>,
) -> Ran<O> {
    let future = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(start)) {
        Ok(future) => future,
        Err(payload) => return Ran::Panicked(panic_message(payload.as_ref())),
    };
    let mut future = catch_panic(future);
    let outcome = match input {
        Some(round) => tokio::select! {
            biased;
            out = &mut future => {
                if round.has_pending() {
                    return Ran::InputRequired;
                }
                out
            }
            _ = round.pending() => return Ran::InputRequired,
        },
        None => future.await,
    };
    match outcome {
        Ok(result) => Ran::Done(result),
        Err(panic) => Ran::Panicked(panic),
    }
}

fn params_of(request: &Request) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    request
        .params
        .as_ref()
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

impl Server {
    /// Reads and checks the per-request `_meta`.
    pub(crate) fn prepare(&self, mut request: Request) -> Result<Prepared, Rejection> {
        match parse_request_meta(request.params.as_mut()) {
            Ok(meta) => Ok(Prepared { request, meta }),
            Err(why) => Err(Rejection::new(
                Some(request.id),
                McpError::invalid_params(why),
                400,
            )),
        }
    }

    /// Whether this server answers `route` (a primitive it offers).
    fn serves(&self, route: Route) -> bool {
        let registry = self.registry_read();
        let offered = registry.offered;
        match route {
            Route::Discover | Route::Listen => true,
            Route::List(ListKind::Tools) | Route::ToolsCall => offered.tools,
            Route::List(ListKind::Resources | ListKind::Templates) | Route::ResourcesRead => {
                offered.resources
            }
            Route::List(ListKind::Prompts) | Route::PromptsGet => offered.prompts,
            Route::Complete => registry.completion.is_some(),
        }
    }

    /// Checks the protocol version and that the method exists.
    pub(crate) fn admit(&self, prepared: &Prepared) -> Result<(), Rejection> {
        let requested = prepared.meta.protocol_version.as_str();
        if !MODERN_PROTOCOL_VERSIONS.contains(&requested) {
            let error = McpError::new(
                codes::UNSUPPORTED_PROTOCOL_VERSION,
                format!("Unsupported protocol version: {requested}"),
            )
            .with_data(json!({
                "supported": MODERN_PROTOCOL_VERSIONS,
                "requested": requested,
            }));
            return Err(Rejection::new(
                Some(prepared.request.id.clone()),
                error,
                400,
            ));
        }
        match Route::of(&prepared.request.method) {
            Some(route) if self.serves(route) => Ok(()),
            _ => Err(Rejection::new(
                Some(prepared.request.id.clone()),
                McpError::method_not_found(&prepared.request.method),
                404,
            )),
        }
    }

    /// Runs an admitted request to its JSON-RPC response.
    ///
    /// Notifications the handler emits go to `sink`; once `cancel` fires the
    /// caller drops this future and nothing more is produced.
    pub(crate) async fn execute(
        &self,
        prepared: Prepared,
        cancel: CancellationToken,
        sink: Option<NotificationSink>,
    ) -> Reply {
        let Prepared { request, meta } = prepared;
        let id = request.id.clone();
        let outcome = self.route(request, meta, cancel, sink, Era::Modern).await;
        match outcome {
            Ok(result) => Reply {
                message: Outgoing::Result {
                    id,
                    result,
                    server_info: self
                        .shared
                        .options
                        .include_server_info
                        .then(|| self.shared.info_value.clone()),
                },
                http_status: 200,
            },
            Err(error) => Reply {
                http_status: http_status_for(&error),
                message: Outgoing::Message(error_value(Some(&id), &error)),
            },
        }
    }

    /// Runs a primitive request of a legacy (2025-11-25) session: the same
    /// handlers, but input is asked for with live server-to-client requests
    /// and results carry none of the 2026-07-28 fields.
    pub(crate) async fn execute_legacy(
        &self,
        request: Request,
        meta: RequestMeta,
        cancel: CancellationToken,
        sink: Option<NotificationSink>,
        era: Era,
    ) -> Reply {
        let id = request.id.clone();
        let allowed = Route::of(&request.method)
            .filter(|r| !matches!(r, Route::Discover | Route::Listen))
            .is_some_and(|r| self.serves(r));
        let outcome = if allowed {
            self.route(request, meta, cancel, sink, era).await
        } else {
            Err(McpError::method_not_found(&request.method))
        };
        match outcome {
            Ok(mut result) => {
                for modern_only in ["resultType", "ttlMs", "cacheScope"] {
                    result.remove(modern_only);
                }
                Reply {
                    message: Outgoing::Message(result_value(Some(&id), Value::Object(result))),
                    http_status: 200,
                }
            }
            Err(error) => Reply {
                http_status: 200,
                message: Outgoing::Message(error_value(Some(&id), &error)),
            },
        }
    }

    async fn route(
        &self,
        request: Request,
        meta: RequestMeta,
        cancel: CancellationToken,
        sink: Option<NotificationSink>,
        era: Era,
    ) -> Result<Map<String, Value>, McpError> {
        let Some(route) = Route::of(&request.method) else {
            return Err(McpError::method_not_found(&request.method));
        };
        let options = &self.shared.options;
        let (input, mode, close_stream) = match era {
            _ if !supports_input(&request.method) => (None, InputMode::None, None),
            Era::Modern => {
                let round = Arc::new(InputRound::from_request(
                    &request.method,
                    params_of(&request),
                    &meta.client_capabilities,
                    &options.seal_key,
                )?);
                (Some(round.clone()), InputMode::Rounds(round), None)
            }
            Era::Legacy {
                requester,
                close_stream,
            } => (None, InputMode::Live(requester), close_stream),
        };
        let ctx = RequestContext::new(
            request.id.clone(),
            request.method.clone(),
            meta,
            cancel,
            sink,
            mode,
            close_stream,
        );
        let params = params_of(&request);
        match route {
            Route::Discover => Ok(self.discover()),
            Route::List(kind) => self.list(kind, params),
            Route::ToolsCall => self.call_tool(ctx, params, input.as_deref()).await,
            Route::ResourcesRead => self.read_resource(ctx, params, input.as_deref()).await,
            Route::PromptsGet => self.get_prompt(ctx, params, input.as_deref()).await,
            Route::Complete => self.complete(ctx, params).await,
            Route::Listen => {
                let offered = self.registry_read().offered;
                let filter = Filter::parse(Some(params))?.honoured(offered);
                let events = self.shared.events.subscribe();
                Ok(listen(ctx, filter, events, self.shared.closing.clone()).await)
            }
        }
    }

    /// The `InputRequiredResult` that ends a round.
    fn input_required(
        &self,
        round: &InputRound,
        params: &Map<String, Value>,
    ) -> Map<String, Value> {
        let options = &self.shared.options;
        round.input_required(params, &options.seal_key, options.request_state_ttl)
    }

    pub(crate) fn capabilities(&self) -> Value {
        let registry = self.registry_read();
        let offered = registry.offered;
        let mut caps = Map::new();
        if offered.tools {
            caps.insert("tools".into(), json!({"listChanged": true}));
        }
        if offered.resources {
            caps.insert(
                "resources".into(),
                json!({"subscribe": true, "listChanged": true}),
            );
        }
        if offered.prompts {
            caps.insert("prompts".into(), json!({"listChanged": true}));
        }
        if registry.completion.is_some() {
            caps.insert("completions".into(), json!({}));
        }
        caps.insert("logging".into(), json!({}));
        Value::Object(caps)
    }

    fn discover(&self) -> Map<String, Value> {
        let options = &self.shared.options;
        let mut result = Map::new();
        result.insert("supportedVersions".into(), json!(MODERN_PROTOCOL_VERSIONS));
        result.insert("capabilities".into(), self.capabilities());
        if let Some(instructions) = &options.instructions {
            result.insert("instructions".into(), Value::from(instructions.clone()));
        }
        insert_cache_hint(&mut result, options.caching.discover);
        result
    }

    fn list(
        &self,
        kind: ListKind,
        params: &Map<String, Value>,
    ) -> Result<Map<String, Value>, McpError> {
        let options = &self.shared.options;
        let (field, purpose, hint) = match kind {
            ListKind::Tools => ("tools", "tools/list", options.caching.tools),
            ListKind::Resources => ("resources", "resources/list", options.caching.resources),
            ListKind::Templates => (
                "resourceTemplates",
                "resources/templates/list",
                options.caching.resource_templates,
            ),
            ListKind::Prompts => ("prompts", "prompts/list", options.caching.prompts),
        };
        let offset = self.read_cursor(purpose, params)?;
        let page_size = options.page_size.max(1);
        let (items, more) = self.registry_read().page(kind, offset, page_size);
        let next = offset + items.len();
        let mut result = Map::new();
        result.insert(field.into(), Value::Array(items));
        if more {
            result.insert(
                "nextCursor".into(),
                Value::from(self.make_cursor(purpose, next)),
            );
        }
        insert_cache_hint(&mut result, hint);
        Ok(result)
    }

    /// Cursors are sealed offsets bound to the list they page through, so a
    /// client cannot forge one or reuse one across lists.
    fn make_cursor(&self, list: &str, offset: usize) -> String {
        self.shared
            .options
            .seal_key
            .seal(&format!("cursor:{list}"), offset.to_string().as_bytes())
    }

    fn read_cursor(&self, list: &str, params: &Map<String, Value>) -> Result<usize, McpError> {
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => return Ok(0),
            Some(Value::String(c)) => c,
            Some(_) => return Err(McpError::invalid_params("cursor must be a string")),
        };
        self.shared
            .options
            .seal_key
            .open(&format!("cursor:{list}"), cursor)
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|s| s.parse::<usize>().ok())
            .ok_or_else(|| McpError::invalid_params("Invalid cursor"))
    }

    async fn call_tool(
        &self,
        ctx: RequestContext,
        params: &Map<String, Value>,
        input: Option<&InputRound>,
    ) -> Result<Map<String, Value>, McpError> {
        let name = match params.get("name") {
            Some(Value::String(name)) => name.clone(),
            _ => {
                return Err(McpError::invalid_params(
                    "tools/call requires a string \"name\"",
                ));
            }
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(args @ Value::Object(_)) => args.clone(),
            Some(_) => return Err(McpError::invalid_params("\"arguments\" must be an object")),
        };
        let Some(entry) = self.registry_read().tools.get(&name).cloned() else {
            return Err(McpError::invalid_params(format!("Unknown tool: {name}"))
                .with_data(json!({ "name": name })));
        };
        if let Err(problems) = entry.input.check(&arguments) {
            return Ok(error_result(&format!(
                "Invalid arguments for tool '{name}': {problems}"
            )));
        }
        let handler = entry.handler.clone();
        match run_handler(input, move || handler.call(ctx, arguments)).await {
            Ran::InputRequired => Ok(self.input_required(expect_round(input)?, params)),
            Ran::Done(Ok(output)) => {
                let result = into_call_tool_result(output, entry.output.is_some());
                if let (Some(schema), Some(structured)) =
                    (&entry.output, result.get("structuredContent"))
                    && result.get("isError") != Some(&Value::Bool(true))
                    && let Err(problems) = schema.check(structured)
                {
                    tracing::warn!(tool = %name, %problems, "structured output does not match outputSchema");
                    return Ok(error_result(&format!(
                        "Tool '{name}' produced output that does not match its outputSchema: {problems}"
                    )));
                }
                Ok(result)
            }
            Ran::Done(Err(HandlerError::Tool(message))) => Ok(error_result(&message)),
            Ran::Done(Err(HandlerError::Protocol(error))) => Err(error),
            Ran::Panicked(panic) => {
                tracing::error!(tool = %name, %panic, "tool handler panicked");
                Ok(error_result(&format!("Tool '{name}' failed: {panic}")))
            }
        }
    }

    /// How a resource or prompt handler's round ends: its output, the
    /// `InputRequiredResult` (as `Ok(Err(..))`), or a JSON-RPC error (these
    /// have no `isError` result to carry a failure).
    fn non_tool_outcome<O>(
        &self,
        ran: Ran<O>,
        input: Option<&InputRound>,
        params: &Map<String, Value>,
        what: &str,
    ) -> Result<Result<O, Map<String, Value>>, McpError> {
        match ran {
            Ran::InputRequired => Ok(Err(self.input_required(expect_round(input)?, params))),
            Ran::Done(Ok(output)) => Ok(Ok(output)),
            Ran::Done(Err(HandlerError::Protocol(error))) => Err(error),
            Ran::Done(Err(HandlerError::Tool(message))) => Err(McpError::internal(message)),
            Ran::Panicked(panic) => {
                tracing::error!(%what, %panic, "handler panicked");
                Err(McpError::internal(format!("{what} failed: {panic}")))
            }
        }
    }

    async fn read_resource(
        &self,
        ctx: RequestContext,
        params: &Map<String, Value>,
        input: Option<&InputRound>,
    ) -> Result<Map<String, Value>, McpError> {
        let Some(Value::String(uri)) = params.get("uri") else {
            return Err(McpError::invalid_params(
                "resources/read requires a string \"uri\"",
            ));
        };
        let resolved = self.registry_read().resolve_resource(uri);
        let Some(super::registry::ResolvedResource {
            handler,
            mime_type,
            variables,
        }) = resolved
        else {
            return Err(
                McpError::invalid_params(format!("Resource not found: {uri}"))
                    .with_data(json!({ "uri": uri })),
            );
        };
        let request = ResourceRequest {
            uri: uri.clone(),
            variables,
        };
        let ran = run_handler(input, move || handler.call(ctx, request)).await;
        let output = match self.non_tool_outcome(ran, input, params, &format!("Reading {uri}"))? {
            Ok(output) => output,
            Err(input_required) => return Ok(input_required),
        };
        let contents = match output {
            ResourceOutput::Text(text) => vec![contents_item(
                uri,
                mime_type.as_deref(),
                "text",
                Value::from(text),
            )],
            ResourceOutput::Blob(bytes) => vec![contents_item(
                uri,
                mime_type.as_deref(),
                "blob",
                Value::from(BASE64.encode(bytes)),
            )],
            ResourceOutput::Contents(items) => items,
        };
        let mut result = Map::new();
        result.insert("contents".into(), Value::Array(contents));
        insert_cache_hint(&mut result, self.shared.options.caching.resource_read);
        Ok(result)
    }

    async fn get_prompt(
        &self,
        ctx: RequestContext,
        params: &Map<String, Value>,
        input: Option<&InputRound>,
    ) -> Result<Map<String, Value>, McpError> {
        let Some(Value::String(name)) = params.get("name") else {
            return Err(McpError::invalid_params(
                "prompts/get requires a string \"name\"",
            ));
        };
        let Some(entry) = self.registry_read().prompts.get(name).cloned() else {
            return Err(McpError::invalid_params(format!("Unknown prompt: {name}"))
                .with_data(json!({ "name": name })));
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args.clone(),
            Some(_) => return Err(McpError::invalid_params("\"arguments\" must be an object")),
        };
        if let Some((key, _)) = arguments.iter().find(|(_, v)| !v.is_string()) {
            return Err(McpError::invalid_params(format!(
                "prompt argument {key:?} must be a string"
            )));
        }
        let missing: Vec<&str> = entry
            .required
            .iter()
            .filter(|r| !arguments.contains_key(r.as_str()))
            .map(String::as_str)
            .collect();
        if !missing.is_empty() {
            return Err(McpError::invalid_params(format!(
                "prompt {name:?} is missing required arguments: {}",
                missing.join(", ")
            )));
        }
        let handler = entry.handler.clone();
        let ran = run_handler(input, move || handler.call(ctx, arguments)).await;
        let output = match self.non_tool_outcome(ran, input, params, &format!("Prompt '{name}'"))? {
            Ok(output) => output,
            Err(input_required) => return Ok(input_required),
        };
        Ok(match output {
            PromptOutput::Text(text) => {
                let mut result = Map::new();
                result.insert(
                    "messages".into(),
                    json!([{"role": "user", "content": {"type": "text", "text": text}}]),
                );
                result
            }
            PromptOutput::Messages(messages) => {
                let mut result = Map::new();
                result.insert("messages".into(), Value::Array(messages));
                result
            }
            PromptOutput::Result(result) => result,
        })
    }

    async fn complete(
        &self,
        ctx: RequestContext,
        params: &Map<String, Value>,
    ) -> Result<Map<String, Value>, McpError> {
        if !params.get("ref").is_some_and(Value::is_object)
            || !params.get("argument").is_some_and(Value::is_object)
        {
            return Err(McpError::invalid_params(
                "completion/complete requires \"ref\" and \"argument\" objects",
            ));
        }
        let Some(handler) = self.registry_read().completion.clone() else {
            return Err(McpError::method_not_found("completion/complete"));
        };
        let input = Value::Object(params.clone());
        let output: CompletionOutput = match run_handler(None, move || handler.call(ctx, input))
            .await
        {
            Ran::Done(Ok(output)) => output,
            Ran::Done(Err(HandlerError::Protocol(error))) => return Err(error),
            Ran::Done(Err(HandlerError::Tool(message))) => return Err(McpError::internal(message)),
            Ran::Panicked(panic) => {
                return Err(McpError::internal(format!("completion failed: {panic}")));
            }
            Ran::InputRequired => {
                return Err(McpError::internal("completion cannot ask for input"));
            }
        };
        // The spec caps a completion response at 100 values.
        const MAX_VALUES: usize = 100;
        let total = output.total.unwrap_or(output.values.len() as u64);
        // Values dropped by the cap are more results, whatever the handler
        // claimed.
        let has_more = output.has_more.unwrap_or(false) || output.values.len() > MAX_VALUES;
        let mut values = output.values;
        values.truncate(MAX_VALUES);
        let mut completion = Map::new();
        completion.insert("values".into(), json!(values));
        completion.insert("total".into(), json!(total));
        completion.insert("hasMore".into(), json!(has_more));
        let mut result = Map::new();
        result.insert("completion".into(), Value::Object(completion));
        Ok(result)
    }
}

/// A round that ended in `InputRequired` always had an input round.
fn expect_round(input: Option<&InputRound>) -> Result<&InputRound, McpError> {
    input.ok_or_else(|| McpError::internal("input required outside an input-capable request"))
}

fn contents_item(uri: &str, mime_type: Option<&str>, field: &str, value: Value) -> Value {
    let mut item = Map::new();
    item.insert("uri".into(), Value::from(uri));
    if let Some(mime) = mime_type {
        item.insert("mimeType".into(), Value::from(mime));
    }
    item.insert(field.into(), value);
    Value::Object(item)
}

fn insert_cache_hint(result: &mut Map<String, Value>, hint: CacheHint) {
    result.insert("ttlMs".into(), Value::from(hint.ttl_ms));
    result.insert(
        "cacheScope".into(),
        serde_json::to_value(hint.scope).unwrap_or(Value::from("private")),
    );
}
