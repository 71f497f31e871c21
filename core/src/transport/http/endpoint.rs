//! The MCP endpoint: routes POST, GET and DELETE (the last two only exist
//! for legacy sessions), runs a 2026-07-28 request through the server's
//! prepare → header checks → admit → execute steps, and answers with one
//! JSON object or, once the handler emits a notification first, an SSE
//! stream.

use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Method, Response, StatusCode};
use std::net::IpAddr;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::auth;
use super::body::{
    McpBody, empty, is_json_content_type, json_bytes_response, jsonrpc_error, plain, read_limited,
    rejection_response, sse_response,
};
use super::guard::{check_headers, check_host_and_origin, check_param_headers};
use super::legacy::{LegacyHttp, session_not_found};
use super::options::EndpointOptions;
use crate::McpError;
use crate::legacy::SessionStore;
use crate::net::sse::message_event;
use crate::protocol::Method as McpMethod;
use crate::protocol::codes;
use crate::protocol::jsonrpc::{Message, MetaMembers};
use crate::protocol::mcp_headers::SESSION_ID_HEADER;
use crate::server::{Prepared, Server, lazy_notification_channel};

/// `Mcp-Session-Id` as a parsed name: a lookup by `&str` parses and
/// validates the name on every request.
static SESSION_ID: header::HeaderName = header::HeaderName::from_static(SESSION_ID_HEADER);

/// Frames of one SSE response waiting for the client to read them.
const SSE_FRAME_QUEUE: usize = 64;

/// What every exchange of one [`HttpEndpoint`](super::HttpEndpoint) (every
/// connection of one listener) shares.
pub(crate) struct Endpoint {
    pub(super) server: Server,
    pub(super) options: EndpointOptions,
    /// Whether `allowed_hosts: None` means the loopback names (an embedded
    /// endpoint, or a listener bound to loopback) or any host.
    pub(super) loopback: bool,
    /// Legacy (2025-11-25) sessions served on the same endpoint.
    pub(super) sessions: SessionStore,
    /// Whether the session sweeper task runs.
    pub(super) sweeper_started: AtomicBool,
    /// Cancelled when the endpoint is dropped: stops the sweeper.
    pub(super) closed: CancellationToken,
}

impl Endpoint {
    /// This endpoint's part in a legacy (2025-11-25) exchange.
    fn legacy(&self) -> LegacyHttp<'_> {
        LegacyHttp {
            server: &self.server,
            sessions: &self.sessions,
            options: &self.options,
        }
    }

    /// Answers one HTTP request from `peer`; `peer_gone` fires when the
    /// client hangs up.
    pub(super) async fn handle<B>(
        &self,
        req: http::Request<B>,
        peer: Option<IpAddr>,
        peer_gone: CancellationToken,
    ) -> Response<McpBody>
    where
        B: http_body::Body,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let protection = self.options.auth.as_ref();
        if let Some(metadata) = protection.and_then(|p| {
            auth::serve_metadata(
                p,
                req.method(),
                req.uri().path(),
                self.options.path.as_deref(),
            )
        }) {
            return metadata;
        }
        if self
            .options
            .path
            .as_deref()
            .is_some_and(|path| req.uri().path() != path)
        {
            return plain(StatusCode::NOT_FOUND, "not found");
        }
        if let Err(why) = check_host_and_origin(req.headers(), &self.options, self.loopback) {
            return jsonrpc_error(
                StatusCode::FORBIDDEN,
                None,
                McpError::new(codes::INVALID_REQUEST, why),
            );
        }
        // Every exchange of a protected endpoint needs a good token: GET and
        // DELETE of legacy sessions too (spec: "authorization MUST be
        // included in every HTTP request").
        let auth = match protection {
            Some(p) => match auth::authenticate(p, req.method(), req.uri(), req.headers()).await {
                Ok(info) => Some(info),
                Err(refusal) => return refusal,
            },
            None => None,
        };
        let session_id = req
            .headers()
            .get(&SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // On a protected server a session belongs to whoever opened it
        // (spec: bind session ids to the user); someone else's token gets
        // the answer of an unknown session, revealing nothing.
        let owner = auth
            .as_ref()
            .and_then(|a| a.subject.clone().or_else(|| a.client_id.clone()));
        if let Some(id) = session_id.as_ref().filter(|_| auth.is_some())
            && let Some(session) = self.sessions.get(id)
            && !session.usable_by(owner.as_deref())
        {
            return session_not_found();
        }
        match (req.method(), &session_id) {
            (&Method::POST, _) => {}
            (&Method::GET, Some(id)) => return self.legacy().get(id, req.headers()),
            (&Method::DELETE, Some(id)) => return self.legacy().delete(id),
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
        let (mut parts, body) = req.into_parts();
        let bytes = match read_limited(
            body,
            self.options.max_body_bytes,
            self.options.body_read_timeout,
        )
        .await
        {
            Ok(bytes) => bytes,
            Err(response) => return response,
        };
        // `_meta` read apart: the 2026-07-28 path below reads its reserved
        // members only, and this saves building a tree for them. So are a
        // call's `name` and `arguments`, which the authorization check and
        // legacy sessions read from the params (rarer paths: they go back).
        let (mut message, mut meta, mut call) = match Message::from_slice_split(&bytes) {
            Ok(m) => m,
            Err(e) => return jsonrpc_error(StatusCode::BAD_REQUEST, e.id, e.error),
        };
        if (protection.is_some() || session_id.is_some())
            && let Message::Request(request) = &mut message
        {
            std::mem::take(&mut call).restore_into(&mut request.params);
        }
        if let (Some(p), Some(info), Message::Request(r)) = (protection, &auth, &message)
            && let Some(refusal) =
                auth::authorize(p, &self.server, info, &r.method, r.params.as_ref())
        {
            return refusal;
        }
        let initialize = matches!(&message, Message::Request(r)
            if McpMethod::from_name(&r.method) == Some(McpMethod::Initialize));
        if session_id.is_some() || initialize {
            // Legacy sessions, and the check for the legacy handshake, read
            // `_meta` from the params: put it back (rare paths).
            let params = match &mut message {
                Message::Request(r) => Some(&mut r.params),
                Message::Notification(n) => Some(&mut n.params),
                Message::Response(_) => None,
            };
            if let Some(params) = params {
                std::mem::take(&mut meta).restore_into(params);
            }
            if let Some(id) = session_id {
                // Moved, not copied: nothing reads them here any more.
                let headers = std::sync::Arc::new(std::mem::take(&mut parts.headers));
                return self.legacy().post(&id, message, headers, auth).await;
            }
            if let Message::Request(request) = &mut message {
                if crate::legacy::is_legacy_initialize(request) {
                    return self.legacy().initialize(request, peer, owner);
                }
                // A 2026-07-28 `initialize` (not a method of this revision):
                // on to the usual answer.
                meta = MetaMembers::take_from(request.params.as_mut());
            }
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
        let mut prepared = match self.server.prepare_split(request, meta, call) {
            Ok(p) => p,
            Err(rejection) => return rejection_response(rejection),
        };
        if let Err(rejection) = check_headers(&parts.headers, &prepared)
            .and_then(|()| check_param_headers(&parts.headers, &self.server, &prepared))
        {
            return rejection_response(rejection);
        }
        if let Err(rejection) = self.server.admit(&prepared) {
            return rejection_response(rejection);
        }
        // Handlers may read them (ctx.http_headers); the checks are done.
        prepared.meta.http_headers = Some(std::sync::Arc::new(std::mem::take(&mut parts.headers)));
        prepared.meta.auth = auth;
        self.run(prepared, peer_gone).await
    }

    /// Runs the request: JSON if the result comes before any notification,
    /// otherwise an SSE stream carrying the notifications and then the result.
    async fn run(&self, prepared: Prepared, peer_gone: CancellationToken) -> Response<McpBody> {
        let cancel = CancellationToken::new();
        // If hyper drops this future (the connection ended) the guard
        // cancels the handler.
        let guard = cancel.clone().drop_guard();
        let (note_tx, mut note_rx) = lazy_notification_channel();
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
                        frames.push(message_event(None, &note));
                    }
                    if frames.is_empty() || status != StatusCode::OK {
                        drop(guard);
                        return json_bytes_response(status, reply.message.to_json_bytes());
                    }
                    frames.push(message_event(None, &reply.message));
                    // Room for exactly these frames: nothing follows them.
                    let (frame_tx, frame_rx) = mpsc::channel::<Bytes>(frames.len());
                    for frame in frames {
                        let _ = frame_tx.try_send(frame);
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
        // Bounded: while the client does not read, the feeder below waits,
        // the handler's notification sink fills, and the server holds back
        // instead of queueing.
        let (frame_tx, frame_rx) = mpsc::channel::<Bytes>(SSE_FRAME_QUEUE);
        let _ = frame_tx.try_send(message_event(None, &first_note));
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
                        Some(note) => {
                            if frame_tx.send(message_event(None, &note)).await.is_err() {
                                break;
                            }
                        }
                        None => notes_open = false,
                    },
                    reply = &mut run => {
                        while let Ok(note) = note_rx.try_recv() {
                            let _ = frame_tx.send(message_event(None, &note)).await;
                        }
                        let _ = frame_tx.send(message_event(None, &reply.message)).await;
                        break;
                    }
                    // A keep-alive is only worth sending when there is room.
                    _ = keep_alive.tick() => { let _ = frame_tx.try_send(Bytes::from_static(b":\n\n")); }
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
