//! The legacy 2025-11-25 revision (initialize handshake, sessions), served by
//! the same server and handlers as 2026-07-28 (spec 2026-07-28:
//! basic/versioning.mdx, "Backward Compatibility"; spec 2025-11-25:
//! basic/lifecycle.mdx, basic/transports.mdx).
//!
//! A session is what `initialize` establishes: the negotiated version, the
//! client's capabilities and identity, its log level and resource
//! subscriptions. Requests in a session run the ordinary handlers; when one
//! asks for input, the session sends a real request to the client and waits
//! for the response. Change notifications reach the session on its
//! standalone channel (the GET stream on HTTP, stdout on stdio).

mod session;
pub(crate) mod streams;

pub use session::SessionLimits;
pub(crate) use session::{Refused, Session, SessionStore};

use serde_json::{Map, Value};
use std::sync::Arc;

use crate::McpError;
use crate::protocol::jsonrpc::{Request, error_value, result_value};
use crate::protocol::methods::LOGGING_SET_LEVEL;
use crate::protocol::{LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS, Method, codes};
use crate::rpc::duplicate_id_error;
use crate::server::{LoggingLevel, NotificationSink, RequestMeta, Server, Wire};
use tokio_util::sync::CancellationToken;

/// `initialize` without modern `_meta` starts a legacy session; with it, it
/// is a 2026-07-28 request for a method that revision removed.
pub(crate) fn is_legacy_initialize(request: &Request) -> bool {
    Method::from_name(&request.method) == Some(Method::Initialize)
        && request
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(|m| m.get(crate::protocol::meta::PROTOCOL_VERSION))
            .is_none()
}

/// The reply to `initialize`, and the session it opens.
pub(crate) struct Initialized {
    pub(crate) session: Arc<Session>,
    pub(crate) message: Value,
}

/// Handles `initialize`: negotiates the version (the client's if we speak
/// it, else our newest legacy one) and opens a session; behind the
/// server's middleware chain, as every other request (a link sees the
/// params without `_meta` and may change them, refuse the handshake or
/// change its result). Refusals come back as the JSON-RPC error message.
pub(crate) async fn initialize(
    server: &Server,
    request: &Request,
    session_id: String,
    http: FromHttp,
) -> Result<Initialized, Value> {
    let mut params = request.params.clone().unwrap_or_default();
    if server.middleware_chain().is_none() {
        return open_session(server, &params, session_id)
            .map(|(session, result)| Initialized {
                session,
                message: result_value(Some(&request.id), Value::Object(result)),
            })
            .map_err(|error| error_value(Some(&request.id), &error));
    }
    params.remove("_meta");
    let meta = RequestMeta {
        protocol_version: params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        client_capabilities: match params.get("capabilities") {
            Some(Value::Object(c)) => c.clone(),
            _ => Map::new(),
        },
        client_info: params
            .get("clientInfo")
            .map(crate::protocol::jsonrpc::RawJson::from_value),
        log_level: None,
        progress_token: None,
        http_headers: http.headers,
        auth: http.auth,
        trace: request
            .params
            .as_ref()
            .and_then(|p| p.get("_meta"))
            .and_then(Value::as_object)
            .and_then(crate::telemetry::TraceContext::from_meta),
    };
    // The last step opens the session from the params as the links left
    // them; it is kept here for the transport to register.
    let opened: Arc<std::sync::Mutex<Option<Arc<Session>>>> = Arc::default();
    let slot = opened.clone();
    let owner = server.clone();
    let outcome = server
        .behind_middleware(
            request.id.clone(),
            request.method.clone(),
            params,
            meta,
            CancellationToken::new(),
            move |asked| {
                Box::pin(async move {
                    let (session, result) = open_session(&owner, &asked.params, session_id)?;
                    *crate::rpc::lock_unpoisoned(&slot) = Some(session);
                    Ok(result.into())
                })
            },
        )
        .await;
    let session = crate::rpc::lock_unpoisoned(&opened).take();
    match (outcome, session) {
        (Ok(result), Some(session)) => Ok(Initialized {
            session,
            message: result_value(Some(&request.id), Value::Object(result.into_map())),
        }),
        (Ok(_), None) => Err(error_value(
            Some(&request.id),
            &McpError::internal(
                "a middleware link answered initialize without opening a session (call next)",
            ),
        )),
        (Err(error), _) => Err(error_value(Some(&request.id), &error)),
    }
}

/// Negotiates the version of `initialize` params and opens the session;
/// the session and the result to answer with.
fn open_session(
    server: &Server,
    params: &Map<String, Value>,
    session_id: String,
) -> Result<(Arc<Session>, Map<String, Value>), McpError> {
    let requested = params.get("protocolVersion").and_then(Value::as_str);
    let Some(requested) = requested else {
        return Err(McpError::invalid_params(
            "initialize requires a string \"protocolVersion\"",
        ));
    };
    if !server.options().legacy_sessions {
        return Err(McpError::new(
            codes::UNSUPPORTED_PROTOCOL_VERSION,
            format!(
                "Unsupported protocol version: {requested}: this server speaks only {}",
                MODERN_PROTOCOL_VERSIONS.join(", ")
            ),
        )
        .with_data(serde_json::json!({
            "supported": MODERN_PROTOCOL_VERSIONS,
            "requested": requested,
        })));
    }
    let version = if LEGACY_PROTOCOL_VERSIONS.contains(&requested) {
        requested
    } else {
        LEGACY_PROTOCOL_VERSIONS[0]
    };
    let capabilities = match params.get("capabilities") {
        Some(Value::Object(c)) => c.clone(),
        _ => Map::new(),
    };
    let session = Arc::new(Session::new(
        session_id,
        version.to_owned(),
        capabilities,
        params.get("clientInfo").cloned(),
    ));
    let mut result = Map::new();
    result.insert("protocolVersion".into(), Value::from(version));
    result.insert("capabilities".into(), server.capabilities());
    result.insert(
        "serverInfo".into(),
        serde_json::to_value(server.info()).unwrap_or(Value::Null),
    );
    if let Some(instructions) = &server.options().instructions {
        result.insert("instructions".into(), Value::from(instructions.clone()));
    }
    Ok((session, result))
}

/// What the HTTP request carrying a session request adds to its context.
#[derive(Default)]
pub(crate) struct FromHttp {
    /// Its headers (`ctx.http_headers()`).
    pub(crate) headers: Option<Arc<http::HeaderMap>>,
    /// Its verified bearer token, on a protected server (`ctx.auth()`).
    pub(crate) auth: Option<Arc<crate::server::auth::AuthInfo>>,
}

/// Runs one request of an established session and returns its response.
async fn handle_request(
    server: &Server,
    session: &Arc<Session>,
    request: Request,
    cancel: CancellationToken,
    sink: Option<NotificationSink>,
    close_stream: Option<Arc<dyn Fn() + Send + Sync>>,
    http: FromHttp,
) -> Value {
    session.establish();
    let id = request.id.clone();
    let method = Method::from_name(&request.method);
    let request_meta = request
        .params
        .as_ref()
        .and_then(|p| p.get("_meta"))
        .and_then(Value::as_object);
    let meta = RequestMeta {
        protocol_version: session.protocol_version.clone(),
        client_capabilities: session.client_capabilities.clone(),
        client_info: session.client_info.clone(),
        log_level: Some(session.log_level()),
        progress_token: request_meta
            .and_then(|m| m.get(crate::protocol::meta::PROGRESS_TOKEN))
            .cloned(),
        http_headers: http.headers,
        auth: http.auth,
        trace: request_meta.and_then(crate::telemetry::TraceContext::from_meta),
    };
    if matches!(
        method,
        Some(
            Method::Ping
                | Method::Initialize
                | Method::LoggingSetLevel
                | Method::ResourcesSubscribe
                | Method::ResourcesUnsubscribe
        )
    ) {
        // The session's own requests go through the middleware chain too.
        let mut params = request.params.unwrap_or_default();
        params.remove("_meta");
        let session = session.clone();
        let outcome = server
            .behind_middleware(
                id.clone(),
                request.method,
                params,
                meta,
                cancel,
                move |asked| {
                    Box::pin(
                        async move { session_request(&session, method, &asked).map(Into::into) },
                    )
                },
            )
            .await;
        return match outcome {
            Ok(result) => result_value(Some(&id), Value::Object(result.into_map())),
            Err(error) => error_value(Some(&id), &error),
        };
    }
    let era = Wire::Legacy {
        requester: session.clone(),
        close_stream,
    };
    let Ok(in_flight) = session.track(id.clone(), cancel.clone()) else {
        return error_value(Some(&id), &duplicate_id_error(&id));
    };
    let reply = server
        .execute_legacy(request, meta, cancel, sink, era)
        .await;
    drop(in_flight);
    reply.message.into_value()
}

/// Answers a request about the session itself: `ping`, a second
/// `initialize`, `logging/setLevel`, `resources/subscribe` and
/// `unsubscribe`.
fn session_request(
    session: &Session,
    method: Option<Method>,
    asked: &crate::server::middleware::MiddlewareRequest,
) -> Result<Map<String, Value>, McpError> {
    let params = &asked.params;
    match method {
        Some(Method::Initialize) => Err(McpError::new(
            crate::protocol::codes::INVALID_REQUEST,
            "the session is already initialized",
        )),
        Some(Method::LoggingSetLevel) => {
            match params
                .get("level")
                .and_then(Value::as_str)
                .and_then(LoggingLevel::parse)
            {
                Some(level) => {
                    session.set_log_level(level);
                    Ok(Map::new())
                }
                None => Err(McpError::invalid_params(format!(
                    "{LOGGING_SET_LEVEL} requires a valid \"level\""
                ))),
            }
        }
        Some(Method::ResourcesSubscribe | Method::ResourcesUnsubscribe) => {
            match params.get("uri").and_then(Value::as_str) {
                Some(uri) => {
                    session.set_subscribed(uri, method == Some(Method::ResourcesSubscribe));
                    Ok(Map::new())
                }
                None => Err(McpError::invalid_params(format!(
                    "{} requires a string \"uri\"",
                    asked.method
                ))),
            }
        }
        // `ping`.
        _ => Ok(Map::new()),
    }
}

/// Runs one request of an established session and returns its response,
/// or `None` once the request was cancelled (`notifications/cancelled`, or
/// the session ended): the handler is stopped and nothing at all is sent
/// for it (spec 2025-11-25 basic/utilities/cancellation.mdx: receivers
/// SHOULD NOT send a response for a cancelled request), on every transport.
pub(crate) async fn answer_request(
    server: &Server,
    session: &Arc<Session>,
    request: Request,
    cancel: CancellationToken,
    sink: Option<NotificationSink>,
    close_stream: Option<Arc<dyn Fn() + Send + Sync>>,
    http: FromHttp,
) -> Option<Value> {
    let run = handle_request(
        server,
        session,
        request,
        cancel.clone(),
        sink,
        close_stream,
        http,
    );
    tokio::select! {
        reply = run => (!cancel.is_cancelled()).then_some(reply),
        _ = cancel.cancelled() => None,
    }
}

/// Handles a client notification within a session.
pub(crate) fn handle_notification(
    session: &Session,
    method: &str,
    params: Option<&Map<String, Value>>,
) {
    if Method::from_name(method) == Some(Method::NotificationsInitialized) {
        session.establish();
    }
    if Method::from_name(method) == Some(Method::NotificationsCancelled)
        && let Some(id) = params
            .and_then(|p| p.get("requestId"))
            .and_then(|v| serde_json::from_value(v.clone()).ok())
    {
        session.cancel(&id);
    }
    // Otherwise nothing to do: the session is usable from `initialize` on,
    // and roots are asked for live (roots/list_changed).
}
