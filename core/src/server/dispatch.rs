//! Request dispatch for the 2026-07-28 (stateless) wire.
//!
//! A transport hands a request over once to be admitted
//! ([`super::admission`]) and then to [`Server::execute`], which runs it and
//! produces the JSON-RPC response, with `resultType` and the server's
//! identity on every result.
//!
//! Each primitive's own rules live in [`super::primitives`]; this file only
//! decides which one runs, in which era, with what context.

use serde_json::{Map, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

use super::Server;
use super::context::{InputMode, LiveRequester, NotificationSink, RequestContext, RequestMeta};
use super::input::InputRound;
use super::middleware::{
    LastStep, Middleware, MiddlewareOutput, MiddlewareRequest, MiddlewareResult, Next,
};
use super::prepared::Prepared;
use super::primitives::{SkillMethod, TaskMethod};
use super::registry::ListKind;
use super::reply::{Reply, ReplyMessage, ResultObject};
use super::subscriptions::{Filter, listen};
use crate::McpError;
use crate::protocol::jsonrpc::{CallMembers, Request, error_value, result_value};
use crate::protocol::{Method, codes};

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
    /// `tasks/get`, `tasks/update`, `tasks/cancel` (the tasks extension).
    Tasks(TaskMethod),
    /// `skills/list`, `skills/get`, `resources/directory/read` (the skills
    /// extension).
    Skills(SkillMethod),
}

impl Route {
    pub(super) fn of(method: Method) -> Option<Route> {
        Some(match method {
            Method::ServerDiscover => Route::Discover,
            Method::ToolsList => Route::List(ListKind::Tools),
            Method::ToolsCall => Route::ToolsCall,
            Method::ResourcesList => Route::List(ListKind::Resources),
            Method::ResourcesTemplatesList => Route::List(ListKind::Templates),
            Method::ResourcesRead => Route::ResourcesRead,
            Method::PromptsList => Route::List(ListKind::Prompts),
            Method::PromptsGet => Route::PromptsGet,
            Method::CompletionComplete => Route::Complete,
            Method::SubscriptionsListen => Route::Listen,
            Method::TasksGet => Route::Tasks(TaskMethod::Get),
            Method::TasksUpdate => Route::Tasks(TaskMethod::Update),
            Method::TasksCancel => Route::Tasks(TaskMethod::Cancel),
            Method::SkillsList => Route::Skills(SkillMethod::List),
            Method::SkillsGet => Route::Skills(SkillMethod::Get),
            Method::ResourcesDirectoryRead => Route::Skills(SkillMethod::DirectoryRead),
            _ => return None,
        })
    }
}

/// Which wire a request arrived on.
pub(crate) enum Wire {
    /// 2026-07-28: stateless, input by MRTR rounds.
    Modern,
    /// 2025-11-25 session: input by live requests; on HTTP, the handler may
    /// close its SSE connection for the client to resume.
    Legacy {
        requester: Arc<dyn LiveRequester>,
        close_stream: Option<Arc<dyn Fn() + Send + Sync>>,
    },
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

/// Runs `request` through `chain` to `last`; `Err` holds the message of a
/// link's panic. The first link is called inside the panic guard too, since
/// [`Next::run`] calls it at once.
async fn run_chain(
    chain: Arc<[Arc<dyn Middleware>]>,
    last: LastStep,
    cancel: CancellationToken,
    request: MiddlewareRequest,
) -> Result<MiddlewareResult, String> {
    let started = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Next::new(chain, last, cancel).run(request)
    }))
    .map_err(|payload| super::panic::panic_message(payload.as_ref()))?;
    super::panic::catch_panic(started).await
}

fn params_of(request: &Request) -> &Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    request
        .params
        .as_ref()
        .unwrap_or_else(|| EMPTY.get_or_init(Map::new))
}

impl Server {
    /// Runs an admitted request to its JSON-RPC response.
    ///
    /// Notifications the handler emits go to `sink`; once `cancel` fires the
    /// caller drops this future and nothing more is produced.
    pub(crate) async fn execute(
        &self,
        mut prepared: Prepared,
        cancel: CancellationToken,
        sink: Option<NotificationSink>,
    ) -> Reply {
        if let Some((relay, params)) = self.relay_for(&mut prepared) {
            // Boxed: the commonest path's future keeps its size.
            return Box::pin(self.execute_relayed(relay, prepared.request.id, params)).await;
        }
        prepared.read_deferred_arguments();
        let Prepared {
            request,
            meta,
            method,
            call,
            ..
        } = prepared;
        let id = request.id.clone();
        let outcome = self
            .route(request, method, meta, cancel, sink, Wire::Modern, call)
            .await;
        self.modern_reply(id, outcome)
    }

    /// The 2026-07-28 response to request `id`: its result with
    /// `resultType` and the server's identity, or its error.
    pub(super) fn modern_reply(
        &self,
        id: crate::protocol::jsonrpc::RequestId,
        outcome: Result<ResultObject, McpError>,
    ) -> Reply {
        match outcome {
            Ok(result) => Reply {
                message: ReplyMessage::Result {
                    id,
                    result,
                    server_info: self
                        .shared
                        .options
                        .include_server_info
                        .then(|| self.shared.identity.clone()),
                },
                http_status: 200,
            },
            Err(error) => Reply {
                http_status: http_status_for(&error),
                message: ReplyMessage::Message(error_value(Some(&id), &error)),
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
        era: Wire,
    ) -> Reply {
        let id = request.id.clone();
        let method = Method::from_name(&request.method);
        let allowed = method
            .and_then(Route::of)
            // 2025-11-25's experimental tasks are not the extension's.
            .filter(|r| !matches!(r, Route::Discover | Route::Listen | Route::Tasks(_)))
            .is_some_and(|r| self.serves(r));
        let outcome = if allowed {
            self.route(
                request,
                method,
                meta,
                cancel,
                sink,
                era,
                CallMembers::default(),
            )
            .await
        } else {
            Err(McpError::method_not_found(&request.method))
        };
        match outcome {
            Ok(result) => {
                let mut result = result.into_map();
                for modern_only in ["resultType", "ttlMs", "cacheScope"] {
                    result.remove(modern_only);
                }
                Reply {
                    message: ReplyMessage::Message(result_value(Some(&id), Value::Object(result))),
                    http_status: 200,
                }
            }
            Err(error) => Reply {
                http_status: 200,
                message: ReplyMessage::Message(error_value(Some(&id), &error)),
            },
        }
    }

    /// Runs `request` (in a span when tracing is on) through the
    /// middleware chain to its primitive; `call` holds the members of a
    /// `tools/call` read apart from its params.
    #[allow(clippy::too_many_arguments)]
    async fn route(
        &self,
        request: Request,
        method: Option<Method>,
        meta: RequestMeta,
        cancel: CancellationToken,
        sink: Option<NotificationSink>,
        era: Wire,
        call: CallMembers,
    ) -> Result<ResultObject, McpError> {
        match crate::telemetry::installed() {
            None => {
                self.route_chain(request, method, meta, cancel, sink, era, call)
                    .await
            }
            // Boxed: an untraced request's future keeps its size.
            Some(telemetry) => {
                Box::pin(
                    self.route_traced(telemetry, request, method, meta, cancel, sink, era, call),
                )
                .await
            }
        }
    }

    /// [`Server::route`] in a server span: the request's `_meta` trace
    /// context is its parent, and the handler runs under it (its
    /// `meta().trace`, and `telemetry::current()` on its task).
    #[allow(clippy::too_many_arguments)]
    async fn route_traced(
        &self,
        telemetry: Arc<dyn crate::telemetry::Telemetry>,
        request: Request,
        method: Option<Method>,
        mut meta: RequestMeta,
        cancel: CancellationToken,
        sink: Option<NotificationSink>,
        era: Wire,
        call: CallMembers,
    ) -> Result<ResultObject, McpError> {
        let span = crate::telemetry::ServerSpan::start(
            telemetry,
            &request.method,
            request.params.as_ref(),
            call.name.as_ref().and_then(Value::as_str),
            &request.id,
            &meta.protocol_version,
            meta.http_headers.is_some(),
            meta.trace.take(),
        );
        let context = span.context();
        meta.trace = Some(context.clone());
        let outcome = crate::telemetry::scope(
            context,
            self.route_chain(request, method, meta, cancel, sink, era, call),
        )
        .await;
        span.finish(match &outcome {
            Ok(ResultObject::Map(result)) => Ok(Some(result)),
            Ok(ResultObject::Text(_) | ResultObject::Raw(_)) => Ok(None),
            Err(error) => Err(error),
        });
        outcome
    }

    /// Runs `request` through the middleware chain, if there is one, to
    /// its primitive.
    #[allow(clippy::too_many_arguments)]
    async fn route_chain(
        &self,
        mut request: Request,
        method: Option<Method>,
        meta: RequestMeta,
        cancel: CancellationToken,
        sink: Option<NotificationSink>,
        era: Wire,
        mut call: CallMembers,
    ) -> Result<ResultObject, McpError> {
        let Some(chain) = self.middleware_chain() else {
            return self
                .route_primitive(request, method, meta, cancel, sink, era, call)
                .await;
        };
        // Middleware sees (and may change) the params whole.
        if !call.is_empty() {
            std::mem::take(&mut call).restore_into(&mut request.params);
        }
        let mut params = request.params.take().unwrap_or_default();
        // Links see the params without `_meta` in both eras: a 2026-07-28
        // request's was read into `meta` while parsing; a 2025-11-25 one's
        // is still here, and goes back for the primitive.
        let legacy_meta = params.remove("_meta");
        let incoming = MiddlewareRequest {
            id: request.id.clone(),
            method: request.method.clone(),
            params,
            meta,
        };
        let server = self.clone();
        let last: LastStep = Box::new(move |incoming: MiddlewareRequest, cancel| {
            Box::pin(async move {
                let mut params = incoming.params;
                if let Some(meta) = legacy_meta {
                    params.insert("_meta".into(), meta);
                }
                request.params = Some(params);
                server
                    .route_primitive(
                        request,
                        method,
                        incoming.meta,
                        cancel,
                        sink,
                        era,
                        CallMembers::default(),
                    )
                    .await
                    .map(MiddlewareOutput::from)
            })
        });
        // A link that panics fails its request, as a handler that panics
        // does; the connection and the other requests go on.
        match run_chain(chain, last, cancel, incoming).await {
            Ok(result) => result.map(MiddlewareOutput::into_object),
            Err(panic) => Err(McpError::internal(format!("middleware failed: {panic}"))),
        }
    }

    /// Runs `last` behind the middleware chain (straight away without one):
    /// for requests answered outside the primitives (a 2025-11-25
    /// session's `ping`, `logging/setLevel`, subscriptions). Links see the
    /// params without `_meta`, as for every request.
    pub(crate) async fn behind_middleware(
        &self,
        id: crate::protocol::jsonrpc::RequestId,
        method: String,
        params: Map<String, Value>,
        meta: RequestMeta,
        cancel: CancellationToken,
        last: impl FnOnce(MiddlewareRequest) -> crate::BoxFuture<MiddlewareResult> + Send + 'static,
    ) -> MiddlewareResult {
        let request = MiddlewareRequest {
            id,
            method,
            params,
            meta,
        };
        let Some(chain) = self.middleware_chain() else {
            return last(request).await;
        };
        let last: LastStep = Box::new(move |request, _cancel| last(request));
        match run_chain(chain, last, cancel, request).await {
            Ok(result) => result,
            Err(panic) => Err(McpError::internal(format!("middleware failed: {panic}"))),
        }
    }

    /// Runs `request`, whose method table entry is `method`, in its
    /// primitive.
    #[allow(clippy::too_many_arguments)]
    async fn route_primitive(
        &self,
        mut request: Request,
        method: Option<Method>,
        meta: RequestMeta,
        cancel: CancellationToken,
        sink: Option<NotificationSink>,
        era: Wire,
        mut call: CallMembers,
    ) -> Result<ResultObject, McpError> {
        let Some((method, route)) = method.and_then(|m| Some((m, Route::of(m)?))) else {
            return Err(McpError::method_not_found(&request.method));
        };
        // A later round of a call (its `requestState` covers the params
        // as sent) reads the whole params: the members go back.
        if !call.is_empty()
            && (route != Route::ToolsCall
                || params_of(&request).contains_key("requestState")
                || params_of(&request).contains_key("inputResponses"))
        {
            std::mem::take(&mut call).restore_into(&mut request.params);
        }
        let options = &self.shared.options;
        let (input, mode, close_stream) = match era {
            _ if !method.supports_input() => (None, InputMode::None, None),
            Wire::Modern => {
                let round = Arc::new(InputRound::from_request(
                    method.as_str(),
                    params_of(&request),
                    &meta.client_capabilities,
                    &options.seal_key,
                )?);
                (Some(round.clone()), InputMode::Rounds(round), None)
            }
            Wire::Legacy {
                requester,
                close_stream,
            } => (None, InputMode::Live(requester), close_stream),
        };
        let ctx = RequestContext::new(
            request.id.clone(),
            method.as_str(),
            meta,
            cancel,
            sink,
            mode,
            close_stream,
        );
        match route {
            Route::ToolsCall => {
                // Mutable: the call may move its arguments out of the params.
                let params = request.params.get_or_insert_with(Map::new);
                self.call_tool(ctx, params, call, input.as_deref()).await
            }
            Route::Discover => Ok(self.discover().into()),
            Route::List(kind) => Box::pin(self.list(kind, params_of(&request), ctx.meta()))
                .await
                .map(Into::into),
            // The other primitives' futures are boxed too, for the reason
            // given at `Route::Listen`: `tools/call`, the commonest call,
            // then sets the size alone.
            Route::ResourcesRead => {
                Box::pin(self.read_resource(ctx, params_of(&request), input.as_deref()))
                    .await
                    .map(Into::into)
            }
            Route::PromptsGet => {
                Box::pin(self.get_prompt(ctx, params_of(&request), input.as_deref()))
                    .await
                    .map(Into::into)
            }
            Route::Complete => Box::pin(self.complete(ctx, params_of(&request)))
                .await
                .map(Into::into),
            Route::Skills(method) => self
                .skill_request(method, params_of(&request))
                .map(Into::into),
            Route::Tasks(method) => {
                Box::pin(self.task_request(method, ctx.meta(), params_of(&request))).await
            }
            Route::Listen => {
                let offered = self.registry_read().offered;
                let filter = Filter::parse(Some(params_of(&request)))?;
                // SEP-2663: task notifications need the extension.
                if filter.wants_tasks()
                    && !crate::protocol::tasks::declares_tasks(&ctx.meta().client_capabilities)
                {
                    return Err(super::primitives::tasks_required(format!(
                        "taskIds in {} need the client to declare the {} extension",
                        crate::protocol::methods::SUBSCRIPTIONS_LISTEN,
                        crate::protocol::tasks::TASKS_EXTENSION
                    )));
                }
                let filter = filter
                    .for_owner(super::primitives::task_owner(ctx.meta()))
                    .honoured(offered);
                let events = self.shared.events.subscribe();
                // Boxed: a future is as large as its largest branch, and
                // every request's future is allocated (see the HTTP
                // endpoint's `run`); past about 1 KiB glibc's malloc takes
                // its slow path (about 700 instructions more per request),
                // so the listen loop must not set that size for every call.
                Ok(Box::pin(listen(
                    ctx,
                    filter,
                    events,
                    self.shared.options.tasks.store.clone(),
                    self.shared.closing.clone(),
                ))
                .await
                .into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::jsonrpc::Message;
    use crate::protocol::{LATEST_PROTOCOL_VERSION, Tool};
    use crate::server::ToolOutput;
    use serde_json::json;

    fn echo_server() -> Server {
        let server = Server::new("chain", "1.0.0");
        server
            .add_tool(
                Tool::new("echo", json!({"type": "object"})),
                |_ctx, args: Value| async move {
                    Ok(ToolOutput::text(
                        args["text"].as_str().unwrap_or("").to_owned(),
                    ))
                },
            )
            .expect("valid tool");
        server
    }

    /// The reply to one `echo` call, as the transports get it.
    async fn call_echo(server: &Server) -> Reply {
        let bytes = json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {
                "name": "echo", "arguments": {"text": "hi \"there\""},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": LATEST_PROTOCOL_VERSION,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
            }
        })
        .to_string();
        let Ok(Message::Request(request)) = Message::from_slice(bytes.as_bytes()) else {
            panic!("a request");
        };
        let prepared = match server.admit_request(request) {
            Ok(prepared) => prepared,
            Err(rejection) => panic!("{}", rejection.to_message()),
        };
        server
            .execute(prepared, CancellationToken::new(), None)
            .await
    }

    fn is_text(reply: &Reply) -> bool {
        matches!(
            reply.message,
            ReplyMessage::Result {
                result: ResultObject::Text(_),
                ..
            }
        )
    }

    /// Links that pass a text result on, or only read it, leave it in the
    /// form written without a JSON tree: the same bytes as without links.
    /// A link that changes it gets the whole object.
    #[tokio::test]
    async fn a_result_stays_text_through_links_that_do_not_change_it() {
        let server = echo_server();
        let direct = call_echo(&server).await;
        assert!(is_text(&direct));
        server.add_middleware(|request, next: Next| next.run(request));
        server.add_middleware(|request, next: Next| async move {
            let result = next.run(request).await?;
            assert_eq!(result.as_map()["content"][0]["text"], json!("hi \"there\""));
            Ok(result)
        });
        let through = call_echo(&server).await;
        assert!(is_text(&through));
        assert_eq!(
            through.message.to_json_bytes(),
            direct.message.to_json_bytes()
        );

        server.add_middleware(|request, next: Next| async move {
            let mut result = next.run(request).await?;
            result
                .as_map_mut()
                .insert("isError".into(), Value::Bool(true));
            Ok(result)
        });
        let changed = call_echo(&server).await;
        assert!(!is_text(&changed));
        let value = changed.message.into_value();
        assert_eq!(value["result"]["isError"], json!(true));
        assert_eq!(value["result"]["content"][0]["text"], json!("hi \"there\""));
    }

    /// A link that panics before its future exists (in the call that
    /// makes it) fails its request like one that panics while running.
    #[tokio::test]
    async fn a_link_panicking_when_called_fails_only_its_request() {
        let server = echo_server();
        server.add_middleware(|request: MiddlewareRequest, next: Next| {
            if request.method == "tools/call" {
                panic!("refused at once");
            }
            next.run(request)
        });
        let value = call_echo(&server).await.message.into_value();
        assert_eq!(value["error"]["code"], json!(codes::INTERNAL_ERROR));
        assert!(
            value["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("refused at once")),
            "{value}"
        );
    }
}
