//! Streamable HTTP server: one POST endpoint; each request is answered with
//! a single JSON object, or with an SSE stream when the handler emits
//! notifications (progress, logs) before its result.

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::hangup::HangupWatcher;
use super::headers::decode_header_value;
use crate::legacy::{SessionLimits, SessionStore};
use crate::protocol::codes;
use crate::protocol::jsonrpc::{Message, error_value};
use crate::protocol::mcp_headers::header_matches_value;
use crate::server::{Prepared, Rejection, Server};
use crate::transport::DEFAULT_MAX_MESSAGE_BYTES;
use crate::{Error, McpError};

/// How long open connections may take to finish after shutdown before
/// they are cut.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Settings of the HTTP listener.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    /// Address to listen on. Defaults to `127.0.0.1:8000`: local servers
    /// should not listen on every interface.
    pub bind: SocketAddr,
    /// Path of the MCP endpoint.
    pub path: String,
    /// Largest accepted request body.
    pub max_body_bytes: usize,
    /// `Host` header values (without port) accepted; `None` means the
    /// loopback names when bound to a loopback address, and any host
    /// otherwise.
    pub allowed_hosts: Option<Vec<String>>,
    /// `Origin` values accepted (exact, e.g. `https://app.example`);
    /// `None` means loopback origins only.
    pub allowed_origins: Option<Vec<String>>,
    /// Cancelled to stop accepting connections and return from `run`; open
    /// `subscriptions/listen` streams end with their completion result.
    pub shutdown: CancellationToken,
    /// Interval of SSE comment lines on streams with nothing to say, so
    /// proxies and client idle timeouts do not cut them.
    pub keep_alive: Duration,
    /// Bounds on legacy (2025-11-25) sessions.
    pub session_limits: SessionLimits,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 8000),
            path: "/mcp".into(),
            max_body_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            allowed_hosts: None,
            allowed_origins: None,
            shutdown: CancellationToken::new(),
            keep_alive: Duration::from_secs(15),
            session_limits: SessionLimits::default(),
        }
    }
}

impl HttpOptions {
    /// Options listening on `127.0.0.1:port` (0 picks a free port).
    pub fn localhost(port: u16) -> Self {
        HttpOptions {
            bind: SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port),
            ..HttpOptions::default()
        }
    }
}

/// A bound, not yet running, HTTP server.
pub struct HttpServer {
    listener: TcpListener,
    server: Server,
    options: HttpOptions,
}

/// Binds and serves until `options.shutdown` is cancelled.
pub async fn serve(server: Server, options: HttpOptions) -> Result<(), Error> {
    HttpServer::bind(server, options).await?.run().await
}

impl HttpServer {
    /// Binds the listening socket.
    pub async fn bind(server: Server, options: HttpOptions) -> Result<HttpServer, Error> {
        let listener = TcpListener::bind(options.bind).await?;
        Ok(HttpServer {
            listener,
            server,
            options,
        })
    }

    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, Error> {
        Ok(self.listener.local_addr()?)
    }

    /// Accepts connections until shutdown.
    pub async fn run(self) -> Result<(), Error> {
        let local = self.listener.local_addr()?;
        let endpoint = std::sync::Arc::new(Endpoint {
            server: self.server,
            loopback: local.ip().is_loopback(),
            sessions: SessionStore::new(self.options.session_limits),
            options: self.options,
        });
        let sweeper = endpoint.clone();
        tokio::spawn(async move {
            let shutdown = sweeper.options.shutdown.clone();
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(30)) => sweeper.sessions.expire(),
                    _ = shutdown.cancelled() => {
                        sweeper.sessions.close_all();
                        return;
                    }
                }
            }
        });
        let shutdown = endpoint.options.shutdown.clone();
        tracing::info!(address = %local, path = %endpoint.options.path, "serving MCP over HTTP");
        // Connections are tracked so `run` returns only once they are done:
        // a host may free its handlers as soon as `run` returns.
        let mut connections = tokio::task::JoinSet::new();
        let hangups = HangupWatcher::new();
        loop {
            while connections.try_join_next().is_some() {}
            let (stream, _) = tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok(conn) => conn,
                    Err(e) => {
                        // Running out of file descriptors must not end the
                        // server; back off briefly and keep accepting.
                        tracing::warn!(error = %e, "accept failed");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                },
                _ = shutdown.cancelled() => {
                    endpoint.server.close_subscriptions();
                    endpoint.sessions.close_all();
                    let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
                        while connections.join_next().await.is_some() {}
                    })
                    .await;
                    if drained.is_err() {
                        connections.abort_all();
                        while connections.join_next().await.is_some() {}
                    }
                    return Ok(());
                }
            };
            let _ = stream.set_nodelay(true);
            let endpoint = endpoint.clone();
            let conn_shutdown = shutdown.clone();
            let (stream, hangup) = match hangups.watch(stream) {
                Ok(pair) => pair,
                Err(e) => {
                    tracing::warn!(error = %e, "could not watch connection; dropping it");
                    continue;
                }
            };
            connections.spawn(async move {
                let peer_gone = hangup.token().clone();
                let service = service_fn(move |req| {
                    let endpoint = endpoint.clone();
                    let peer_gone = peer_gone.clone();
                    async move { Ok::<_, Infallible>(endpoint.handle(req, peer_gone).await) }
                });
                let conn = http1::Builder::new()
                    .keep_alive(true)
                    .serve_connection(TokioIo::new(stream), service);
                tokio::pin!(conn);
                tokio::select! {
                    result = conn.as_mut() => {
                        if let Err(e) = result {
                            tracing::debug!(error = %e, "HTTP connection ended with an error");
                        }
                    }
                    _ = conn_shutdown.cancelled() => {
                        conn.as_mut().graceful_shutdown();
                        let _ = conn.await;
                    }
                }
                // Before the connection's descriptor closes: stop watching it.
                drop(hangup);
            });
        }
    }
}

pub(super) struct Endpoint {
    pub(super) server: Server,
    pub(super) options: HttpOptions,
    loopback: bool,
    /// Legacy (2025-11-25) sessions served on the same endpoint.
    pub(super) sessions: SessionStore,
}

const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "[::1]", "::1"];

/// The host part of a `Host` header or an origin's authority.
fn host_without_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        // IPv6 literal: keep the brackets
        return match rest.find(']') {
            Some(end) => &authority[..end + 2],
            None => authority,
        };
    }
    authority.split(':').next().unwrap_or(authority)
}

impl Endpoint {
    async fn handle(
        &self,
        req: http::Request<Incoming>,
        peer_gone: CancellationToken,
    ) -> Response<McpBody> {
        if req.uri().path() != self.options.path {
            return plain(StatusCode::NOT_FOUND, "not found");
        }
        if let Err(response) = self.check_host_and_origin(req.headers()) {
            return *response;
        }
        let session_id = req
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        match (req.method(), &session_id) {
            (&Method::POST, _) => {}
            (&Method::GET, Some(id)) => return self.legacy_get(id, req.headers()),
            (&Method::DELETE, Some(id)) => return self.legacy_delete(id),
            _ => {
                let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "only POST is supported");
                response
                    .headers_mut()
                    .insert(header::ALLOW, HeaderValue::from_static("POST"));
                return response;
            }
        }
        if !is_json_content_type(req.headers()) {
            return jsonrpc_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                None,
                McpError::new(
                    codes::INVALID_REQUEST,
                    "Content-Type must be application/json",
                ),
            );
        }
        let (parts, body) = req.into_parts();
        let bytes = match Limited::new(body, self.options.max_body_bytes)
            .collect()
            .await
        {
            Ok(collected) => collected.to_bytes(),
            Err(e) => {
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some()
                {
                    return jsonrpc_error(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        None,
                        McpError::new(
                            codes::INVALID_REQUEST,
                            format!(
                                "request body exceeds the {}-byte limit",
                                self.options.max_body_bytes
                            ),
                        ),
                    );
                }
                return plain(StatusCode::BAD_REQUEST, "could not read the request body");
            }
        };
        let message = match Message::from_slice(&bytes) {
            Ok(m) => m,
            Err(e) => return jsonrpc_error(StatusCode::BAD_REQUEST, e.id, e.error),
        };
        if let Some(id) = session_id {
            return self.legacy_post(&id, message).await;
        }
        if let Message::Request(request) = &message
            && crate::legacy::is_legacy_initialize(request)
        {
            return self.legacy_initialize(request);
        }
        let request = match message {
            Message::Request(request) => request,
            Message::Notification(_) => {
                // This revision defines no client notifications over HTTP;
                // accepting and ignoring keeps older clients working.
                return empty(StatusCode::ACCEPTED);
            }
            Message::Response(_) => {
                return jsonrpc_error(
                    StatusCode::BAD_REQUEST,
                    None,
                    McpError::new(
                        codes::INVALID_REQUEST,
                        "clients must not send JSON-RPC responses to this endpoint",
                    ),
                );
            }
        };
        let prepared = match self.server.prepare(request) {
            Ok(p) => p,
            Err(rejection) => return rejection_response(rejection),
        };
        if let Err(rejection) = check_headers(&parts.headers, &prepared)
            .and_then(|()| self.check_param_headers(&parts.headers, &prepared))
        {
            return rejection_response(rejection);
        }
        if let Err(rejection) = self.server.admit(&prepared) {
            return rejection_response(rejection);
        }
        self.run(prepared, peer_gone).await
    }

    /// `Mcp-Param-*` headers must mirror the tool's `x-mcp-header`
    /// arguments exactly (spec: "Server Behavior for Custom Headers").
    fn check_param_headers(
        &self,
        headers: &HeaderMap,
        prepared: &Prepared,
    ) -> Result<(), Rejection> {
        if prepared.request.method != "tools/call" {
            return Ok(());
        }
        let params = prepared.request.params.as_ref();
        let Some(tool) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
            return Ok(());
        };
        let header_params = self.server.header_params(tool);
        if header_params.is_empty() {
            return Ok(());
        }
        let arguments = params.and_then(|p| p.get("arguments"));
        let id = Some(prepared.request.id.clone());
        let mismatch =
            |why: String| Rejection::new(id.clone(), McpError::header_mismatch(why), 400);
        for param in header_params {
            let header_name = format!("mcp-param-{}", param.name.to_ascii_lowercase());
            let body = param
                .path
                .iter()
                .try_fold(arguments, |v, key| Some(v?.get(key)))
                .flatten()
                .filter(|v| !v.is_null());
            let header = match headers.get(&header_name) {
                None => None,
                Some(raw) => {
                    let raw = raw.to_str().map_err(|_| {
                        mismatch(format!(
                            "Mcp-Param-{} contains invalid characters",
                            param.name
                        ))
                    })?;
                    Some(
                        decode_header_value(raw)
                            .map_err(|e| mismatch(format!("Mcp-Param-{}: {e}", param.name)))?,
                    )
                }
            };
            match (body, header) {
                (None, None) => {}
                (Some(_), None) => {
                    return Err(mismatch(format!(
                        "Mcp-Param-{} header is required when the argument is present",
                        param.name
                    )));
                }
                (None, Some(_)) => {
                    return Err(mismatch(format!(
                        "Mcp-Param-{} header was sent but the argument is absent",
                        param.name
                    )));
                }
                (Some(body), Some(header)) => {
                    if !header_matches_value(&header, body) {
                        return Err(mismatch(format!(
                            "Mcp-Param-{} header value '{header}' does not match body value '{body}'",
                            param.name
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    fn check_host_and_origin(&self, headers: &HeaderMap) -> Result<(), Box<Response<McpBody>>> {
        let forbidden = |why: String| {
            jsonrpc_error(
                StatusCode::FORBIDDEN,
                None,
                McpError::new(codes::INVALID_REQUEST, why),
            )
        };
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .map(host_without_port);
        let host_ok = match (&self.options.allowed_hosts, host) {
            (Some(allowed), Some(h)) => allowed.iter().any(|a| a.eq_ignore_ascii_case(h)),
            (Some(_), None) => false,
            (None, Some(h)) if self.loopback => {
                LOOPBACK_HOSTS.iter().any(|a| a.eq_ignore_ascii_case(h))
            }
            (None, _) => true,
        };
        if !host_ok {
            return Err(Box::new(forbidden(format!(
                "Host {:?} is not allowed",
                host.unwrap_or("")
            ))));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            let origin_ok = match &self.options.allowed_origins {
                Some(allowed) => allowed.iter().any(|a| a == origin),
                None => origin
                    .split_once("://")
                    .filter(|(scheme, _)| *scheme == "http" || *scheme == "https")
                    .map(|(_, authority)| host_without_port(authority))
                    .is_some_and(|h| LOOPBACK_HOSTS.iter().any(|a| a.eq_ignore_ascii_case(h))),
            };
            if !origin_ok {
                return Err(Box::new(forbidden(format!(
                    "Origin {origin:?} is not allowed"
                ))));
            }
        }
        Ok(())
    }

    /// Runs the request: JSON if the result comes before any notification,
    /// otherwise an SSE stream carrying the notifications and then the result.
    async fn run(&self, prepared: Prepared, peer_gone: CancellationToken) -> Response<McpBody> {
        let cancel = CancellationToken::new();
        // If hyper drops this future (the connection ended) the guard
        // cancels the handler.
        let guard = cancel.clone().drop_guard();
        let (note_tx, mut note_rx) = mpsc::unbounded_channel::<Value>();
        let server = self.server.clone();
        let run_cancel = cancel.clone();
        // Boxed and owning its server handle, so it can move into a task if
        // the response turns into a stream.
        let mut run =
            Box::pin(async move { server.execute(prepared, run_cancel, Some(note_tx)).await });
        // Until the handler emits a notification the answer can be plain
        // JSON. A closed notification channel only means the handler let
        // go of its context, not that it finished.
        let mut notes_open = true;
        let first_note = loop {
            tokio::select! {
                biased;
                reply = &mut run => {
                    let status = StatusCode::from_u16(reply.http_status).unwrap_or(StatusCode::OK);
                    // Notifications emitted in the same poll as the result
                    // must still precede it — unless the reply needs an
                    // error status, which only a JSON response can carry.
                    let mut frames = Vec::new();
                    while let Ok(note) = note_rx.try_recv() {
                        frames.push(sse_event(&note));
                    }
                    if frames.is_empty() || status != StatusCode::OK {
                        drop(guard);
                        return json_response(status, &reply.message);
                    }
                    frames.push(sse_event(&reply.message));
                    let (frame_tx, frame_rx) = mpsc::unbounded_channel::<Bytes>();
                    for frame in frames {
                        let _ = frame_tx.send(frame);
                    }
                    return sse_response(frame_rx, guard);
                }
                note = note_rx.recv(), if notes_open => match note {
                    Some(note) => break note,
                    None => notes_open = false,
                },
                _ = peer_gone.cancelled() => {
                    // The client hung up, which cancels the request:
                    // dropping `run` and the guard stops the handler.
                    return empty(StatusCode::NO_CONTENT);
                }
            }
        };
        // Switch to SSE: the rest of the work continues in a task that feeds
        // the response body; dropping the body cancels it.
        let (frame_tx, frame_rx) = mpsc::unbounded_channel::<Bytes>();
        let _ = frame_tx.send(sse_event(&first_note));
        let task_cancel = cancel.clone();
        let period = self.options.keep_alive.max(Duration::from_millis(10));
        let owned_run = async move {
            let mut keep_alive =
                tokio::time::interval_at(tokio::time::Instant::now() + period, period);
            let mut notes_open = true;
            loop {
                tokio::select! {
                    biased;
                    note = note_rx.recv(), if notes_open => match note {
                        Some(note) => { let _ = frame_tx.send(sse_event(&note)); }
                        None => notes_open = false,
                    },
                    reply = &mut run => {
                        while let Ok(note) = note_rx.try_recv() {
                            let _ = frame_tx.send(sse_event(&note));
                        }
                        let _ = frame_tx.send(sse_event(&reply.message));
                        break;
                    }
                    _ = keep_alive.tick() => { let _ = frame_tx.send(Bytes::from_static(b":\n\n")); }
                    _ = task_cancel.cancelled() => break,
                    _ = peer_gone.cancelled() => {
                        task_cancel.cancel();
                        break;
                    }
                }
            }
        };
        tokio::spawn(owned_run);
        sse_response(frame_rx, guard)
    }
}

/// Compares the mirrored headers with the body (spec: "Server Validation").
fn check_headers(headers: &HeaderMap, prepared: &Prepared) -> Result<(), Rejection> {
    let id = Some(prepared.request.id.clone());
    let mismatch = |why: String| Rejection::new(id.clone(), McpError::header_mismatch(why), 400);
    let header_str = |name: &str| -> Result<Option<&str>, Rejection> {
        match headers.get(name) {
            None => Ok(None),
            Some(v) => v
                .to_str()
                .map(|s| Some(s.trim_matches([' ', '\t'])))
                .map_err(|_| mismatch(format!("{name} header contains invalid characters"))),
        }
    };
    match header_str("mcp-protocol-version")? {
        None => return Err(mismatch("MCP-Protocol-Version header is required".into())),
        Some(v) if v != prepared.meta.protocol_version => {
            return Err(mismatch(format!(
                "MCP-Protocol-Version header value '{v}' does not match body value '{}'",
                prepared.meta.protocol_version
            )));
        }
        Some(_) => {}
    }
    let method = prepared.request.method.as_str();
    match header_str("mcp-method")? {
        None => return Err(mismatch("Mcp-Method header is required".into())),
        Some(v) if v != method => {
            return Err(mismatch(format!(
                "Mcp-Method header value '{v}' does not match body value '{method}'"
            )));
        }
        Some(_) => {}
    }
    let name_field = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = name_field {
        let body_value = prepared
            .request
            .params
            .as_ref()
            .and_then(|p| p.get(field))
            .and_then(Value::as_str);
        match (header_str("mcp-name")?, body_value) {
            (None, _) => return Err(mismatch("Mcp-Name header is required".into())),
            (Some(raw), body) => {
                let decoded = decode_header_value(raw).map_err(&mismatch)?;
                if Some(decoded.as_str()) != body {
                    return Err(mismatch(format!(
                        "Mcp-Name header value '{decoded}' does not match body value '{}'",
                        body.unwrap_or("")
                    )));
                }
            }
        }
    }
    Ok(())
}

fn is_json_content_type(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"))
}

pub(super) fn sse_event(message: &(impl serde::Serialize + ?Sized)) -> Bytes {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"event: message\ndata: ");
    // serde_json never emits raw newlines, so one data line suffices.
    let _ = serde_json::to_writer(&mut out, message);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

/// The response body: a complete buffer, or an SSE stream fed by a task.
pub(crate) enum McpBody {
    Full(Option<Bytes>),
    Stream {
        frames: mpsc::UnboundedReceiver<Bytes>,
        _cancel_on_drop: DropGuard,
    },
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match self.get_mut() {
            McpBody::Full(data) => Poll::Ready(data.take().map(|d| Ok(Frame::data(d)))),
            McpBody::Stream { frames, .. } => frames
                .poll_recv(cx)
                .map(|frame| frame.map(|d| Ok(Frame::data(d)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self, McpBody::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            McpBody::Full(Some(d)) => SizeHint::with_exact(d.len() as u64),
            McpBody::Full(None) => SizeHint::with_exact(0),
            McpBody::Stream { .. } => SizeHint::default(),
        }
    }
}

pub(super) fn plain(status: StatusCode, text: &'static str) -> Response<McpBody> {
    let mut response = Response::new(McpBody::Full(Some(Bytes::from_static(text.as_bytes()))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

pub(super) fn empty(status: StatusCode) -> Response<McpBody> {
    let mut response = Response::new(McpBody::Full(None));
    *response.status_mut() = status;
    response
}

pub(super) fn json_response(
    status: StatusCode,
    message: &(impl serde::Serialize + ?Sized),
) -> Response<McpBody> {
    let body = serde_json::to_vec(message).unwrap_or_default();
    let mut response = Response::new(McpBody::Full(Some(Bytes::from(body))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

pub(super) fn jsonrpc_error(
    status: StatusCode,
    id: Option<crate::protocol::jsonrpc::RequestId>,
    error: McpError,
) -> Response<McpBody> {
    json_response(status, &error_value(id.as_ref(), &error))
}

fn rejection_response(rejection: Rejection) -> Response<McpBody> {
    let status = StatusCode::from_u16(rejection.http_status).unwrap_or(StatusCode::BAD_REQUEST);
    json_response(status, &rejection.to_message())
}

pub(super) fn sse_response(
    frames: mpsc::UnboundedReceiver<Bytes>,
    guard: DropGuard,
) -> Response<McpBody> {
    let mut response = Response::new(McpBody::Stream {
        frames,
        _cancel_on_drop: guard,
    });
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}
