//! Request dispatch for the 2026-07-28 (stateless) wire.
//!
//! A request goes through three steps so a transport can interleave its own
//! checks: [`Server::prepare`] reads `_meta` (every request must carry the
//! protocol version and client capabilities), the transport may compare its
//! headers with the prepared request, [`Server::admit`] checks the version
//! and the method, and [`Server::execute`] runs it and produces the JSON-RPC
//! response, with `resultType` and the server's identity on every result.

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::context::{NotificationSink, RequestContext, RequestMeta, parse_request_meta};
use super::handler::HandlerError;
use super::panic::{catch_panic, panic_message};
use super::tool_result::{error_result, into_call_tool_result};
use super::{CacheHint, Server};
use crate::McpError;
use crate::protocol::jsonrpc::{Request, RequestId, error_value, result_value};
use crate::protocol::{MODERN_PROTOCOL_VERSIONS, codes, meta};

/// Who may cache a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheScope {
    /// Not user-specific: any cache may serve it to anyone.
    Public,
    /// User-specific: only for the same authorization context.
    Private,
}

impl CacheScope {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// The methods this revision defines for a server to answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Route {
    Discover,
    ToolsList,
    ToolsCall,
}

impl Route {
    fn of(method: &str) -> Option<Route> {
        Some(match method {
            "server/discover" => Route::Discover,
            "tools/list" => Route::ToolsList,
            "tools/call" => Route::ToolsCall,
            _ => return None,
        })
    }
}

/// A request whose `_meta` has been read.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) request: Request,
    pub(crate) meta: RequestMeta,
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

/// The response to one request, and the HTTP status to send it with.
pub(crate) struct Reply {
    pub(crate) message: Value,
    pub(crate) http_status: u16,
}

impl Server {
    /// Reads and checks the per-request `_meta`.
    pub(crate) fn prepare(&self, request: Request) -> Result<Prepared, Rejection> {
        match parse_request_meta(request.params.as_ref()) {
            Ok(meta) => Ok(Prepared { request, meta }),
            Err(why) => Err(Rejection::new(
                Some(request.id),
                McpError::invalid_params(why),
                400,
            )),
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
            return Err(Rejection::new(Some(prepared.request.id.clone()), error, 400));
        }
        if Route::of(&prepared.request.method).is_none() {
            return Err(Rejection::new(
                Some(prepared.request.id.clone()),
                McpError::method_not_found(&prepared.request.method),
                404,
            ));
        }
        Ok(())
    }

    /// Runs an admitted request to its JSON-RPC response.
    ///
    /// Notifications the handler emits go to `sink`; once `cancel` fires the
    /// handler is dropped and nothing more is produced.
    pub(crate) async fn execute(
        &self,
        prepared: Prepared,
        cancel: CancellationToken,
        sink: Option<NotificationSink>,
    ) -> Reply {
        let Prepared { request, meta } = prepared;
        let id = request.id.clone();
        let route = Route::of(&request.method);
        let outcome = match route {
            Some(Route::Discover) => Ok(self.discover()),
            Some(Route::ToolsList) => self.list_tools(request.params.as_ref()),
            Some(Route::ToolsCall) => {
                let ctx = RequestContext::new(
                    request.id.clone(),
                    request.method.clone(),
                    meta,
                    cancel,
                    sink,
                );
                self.call_tool(ctx, request.params).await
            }
            None => Err(McpError::method_not_found(&request.method)),
        };
        match outcome {
            Ok(result) => Reply {
                message: result_value(Some(&id), Value::Object(self.finish_result(result))),
                http_status: 200,
            },
            Err(error) => Reply {
                http_status: http_status_for(&error),
                message: error_value(Some(&id), &error),
            },
        }
    }

    /// Every result says it is complete (unless the handler said otherwise)
    /// and who answered.
    fn finish_result(&self, mut result: Map<String, Value>) -> Map<String, Value> {
        result
            .entry("resultType")
            .or_insert_with(|| Value::from("complete"));
        if self.shared.options.include_server_info {
            let info = serde_json::to_value(&self.shared.info).unwrap_or(Value::Null);
            match result.entry("_meta").or_insert_with(|| json!({})) {
                Value::Object(m) => {
                    m.insert(meta::SERVER_INFO.into(), info);
                }
                other => *other = json!({ meta::SERVER_INFO: info }),
            }
        }
        result
    }

    fn capabilities(&self) -> Value {
        json!({ "tools": {} })
    }

    fn discover(&self) -> Map<String, Value> {
        let options = &self.shared.options;
        let mut result = Map::new();
        result.insert("supportedVersions".into(), json!(MODERN_PROTOCOL_VERSIONS));
        result.insert("capabilities".into(), self.capabilities());
        if let Some(instructions) = &options.instructions {
            result.insert("instructions".into(), Value::from(instructions.clone()));
        }
        insert_cache_hint(&mut result, options.discover_cache);
        result
    }

    fn list_tools(&self, params: Option<&Map<String, Value>>) -> Result<Map<String, Value>, McpError> {
        let options = &self.shared.options;
        let offset = self.read_cursor("tools/list", params)?;
        let page_size = options.page_size.max(1);
        let (tools, more) = self.registry_read().tool_page(offset, page_size);
        let mut result = Map::new();
        let next = offset + tools.len();
        result.insert("tools".into(), Value::Array(tools));
        if more {
            result.insert(
                "nextCursor".into(),
                Value::from(self.make_cursor("tools/list", next)),
            );
        }
        insert_cache_hint(&mut result, options.tools_cache);
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

    fn read_cursor(&self, list: &str, params: Option<&Map<String, Value>>) -> Result<usize, McpError> {
        let cursor = match params.and_then(|p| p.get("cursor")) {
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
        params: Option<Map<String, Value>>,
    ) -> Result<Map<String, Value>, McpError> {
        let mut params = params.unwrap_or_default();
        let name = match params.get("name") {
            Some(Value::String(name)) => name.clone(),
            _ => return Err(McpError::invalid_params("tools/call requires a string \"name\"")),
        };
        let arguments = match params.remove("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(args @ Value::Object(_)) => args,
            Some(_) => return Err(McpError::invalid_params("\"arguments\" must be an object")),
        };
        let Some(entry) = self.registry_read().tool(&name) else {
            return Err(McpError::invalid_params(format!("Unknown tool: {name}"))
                .with_data(json!({ "name": name })));
        };
        if let Err(problems) = entry.input.check(&arguments) {
            return Ok(error_result(&format!(
                "Invalid arguments for tool '{name}': {problems}"
            )));
        }
        // A handler may panic while building its future as well as while
        // running it; both become a tool error for this request only.
        let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            entry.handler.call(ctx, arguments)
        }));
        let outcome = match started {
            Ok(future) => catch_panic(future).await,
            Err(payload) => Err(panic_message(payload.as_ref())),
        };
        match outcome {
            Ok(Ok(output)) => {
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
            Ok(Err(HandlerError::Tool(message))) => Ok(error_result(&message)),
            Ok(Err(HandlerError::Protocol(error))) => Err(error),
            Err(panic) => {
                tracing::error!(tool = %name, %panic, "tool handler panicked");
                Ok(error_result(&format!("Tool '{name}' failed: {panic}")))
            }
        }
    }
}

fn insert_cache_hint(result: &mut Map<String, Value>, hint: CacheHint) {
    result.insert("ttlMs".into(), Value::from(hint.ttl_ms));
    result.insert("cacheScope".into(), Value::from(hint.scope.as_str()));
}
