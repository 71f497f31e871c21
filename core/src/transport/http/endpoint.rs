//! The MCP endpoint: routes POST, GET and DELETE (the last two only exist
//! for legacy sessions), hands a 2026-07-28 request to the server once to be
//! admitted (`Server::admit_http`: `_meta`, the headers that mirror the
//! body, version and method) and then runs it, answering with one JSON
//! object or, once the handler emits a notification first, an SSE stream.

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Method, Response, StatusCode};
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::auth;
use super::body::{
    McpBody, empty, health_answer, is_json_content_type, json_bytes_response, jsonrpc_error, plain,
    read_limited, rejection_response, sse_response,
};
use super::guard::check_host_and_origin;
use super::legacy::{LegacyHttp, session_not_found};
use super::options::EndpointOptions;
use crate::McpError;
use crate::legacy::SessionStore;
use crate::net::sse::message_event;
use crate::protocol::Method as McpMethod;
use crate::protocol::codes;
use crate::protocol::jsonrpc::{Message, MetaMembers, SplitMessage};
use crate::protocol::mcp_headers::SESSION_ID_HEADER;
use crate::server::auth::AuthInfo;
use crate::server::{Prepared, Server, lazy_notification_channel};

/// `Mcp-Session-Id` as a parsed name: a lookup by `&str` parses and
/// validates the name on every request.
static SESSION_ID: header::HeaderName = header::HeaderName::from_static(SESSION_ID_HEADER);

/// Frames of one SSE response waiting for the client to read them.
const SSE_FRAME_QUEUE: usize = 64;

/// Who is asking, as the gate found them.
struct Caller {
    /// The bearer token's grant, on a protected endpoint.
    auth: Option<Arc<AuthInfo>>,
    /// `Mcp-Session-Id`: a legacy (2025-11-25) session.
    session_id: Option<String>,
    /// Whom a session opened now belongs to: the token's subject or client.
    owner: Option<String>,
}

/// 405 for anything but POST outside a legacy session.
fn only_post() -> Response<McpBody> {
    let mut response = plain(StatusCode::METHOD_NOT_ALLOWED, "only POST is supported");
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    response
}

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
    ///
    /// The steps: the gate (documents, path, `Host`/`Origin`, token,
    /// session owner), the method (GET and DELETE only for legacy
    /// sessions), the body, then one POST: legacy sessions and handshakes
    /// go to [`LegacyHttp`], a 2026-07-28 request is handed to the server
    /// once to be admitted and then run.
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
        // Parts apart from the body first: the gate awaits (a token check)
        // holding only them, so the exchange's future is `Send` whatever
        // the body (a tower `Service` must be, for axum).
        let (parts, body) = req.into_parts();
        let caller = match self.gate(&parts).await {
            Ok(caller) => caller,
            Err(refusal) => return refusal,
        };
        match (&parts.method, &caller.session_id) {
            (&Method::POST, _) => {}
            (&Method::GET, Some(id)) => return self.legacy().get(id, &parts.headers),
            (&Method::DELETE, Some(id)) => return self.legacy().delete(id),
            _ => return only_post(),
        }
        let parsed = match self.read_message(&parts.headers, body).await {
            Ok(parsed) => parsed,
            Err(refusal) => return refusal,
        };
        self.post(parsed, parts.headers, caller, peer, peer_gone)
            .await
    }

    /// What is checked before anything reads the body: the authorization
    /// server metadata this endpoint serves, the path, `Host` and `Origin`,
    /// the bearer token, and whose session `Mcp-Session-Id` names.
    async fn gate(&self, req: &http::request::Parts) -> Result<Caller, Response<McpBody>> {
        if let Some(health) = &self.options.health
            && req.method == Method::GET
        {
            match req.uri.path() {
                "/healthz" => return Err(health_answer(StatusCode::OK, "ok")),
                "/readyz" if health.is_ready() => {
                    return Err(health_answer(StatusCode::OK, "ready"));
                }
                "/readyz" => {
                    return Err(health_answer(StatusCode::SERVICE_UNAVAILABLE, "draining"));
                }
                _ => {}
            }
        }
        let protection = self.options.auth.as_ref();
        if let Some(metadata) = protection.and_then(|p| {
            auth::serve_metadata(p, &req.method, req.uri.path(), self.options.path.as_deref())
        }) {
            return Err(metadata);
        }
        if self
            .options
            .path
            .as_deref()
            .is_some_and(|path| req.uri.path() != path)
        {
            return Err(plain(StatusCode::NOT_FOUND, "not found"));
        }
        if let Err(why) = check_host_and_origin(&req.headers, &self.options, self.loopback) {
            return Err(jsonrpc_error(
                StatusCode::FORBIDDEN,
                None,
                McpError::new(codes::INVALID_REQUEST, why),
            ));
        }
        // Every exchange of a protected endpoint needs a good token: GET and
        // DELETE of legacy sessions too (spec: "authorization MUST be
        // included in every HTTP request").
        let auth = match protection {
            Some(p) => Some(auth::authenticate(p, &req.method, &req.uri, &req.headers).await?),
            None => None,
        };
        let session_id = req
            .headers
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
            return Err(session_not_found());
        }
        Ok(Caller {
            auth,
            session_id,
            owner,
        })
    }

    /// The POST body as a JSON-RPC message, with `_meta` and a call's
    /// `name` and `arguments` read apart: the 2026-07-28 path reads only
    /// their reserved members, and this saves building a tree for them.
    async fn read_message<B>(
        &self,
        headers: &HeaderMap,
        body: B,
    ) -> Result<SplitMessage, Response<McpBody>>
    where
        B: http_body::Body,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        if !is_json_content_type(headers) {
            return Err(jsonrpc_error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                None,
                McpError::new(
                    codes::INVALID_REQUEST,
                    "Content-Type must be application/json",
                ),
            ));
        }
        let bytes = read_limited(
            body,
            self.options.max_body_bytes,
            self.options.body_read_timeout,
        )
        .await?;
        // A call's params as written are kept where a relay may forward
        // them.
        Message::from_slice_split(&bytes, self.server.has_relay())
            .map_err(|e| jsonrpc_error(StatusCode::BAD_REQUEST, e.id, e.error))
    }

    /// Answers one parsed POST: the call's authorization, then either a
    /// legacy session (or handshake) or the one handoff of a 2026-07-28
    /// request to the server.
    async fn post(
        &self,
        (mut message, mut meta, mut call, call_params): SplitMessage,
        headers: HeaderMap,
        caller: Caller,
        peer: Option<IpAddr>,
        peer_gone: CancellationToken,
    ) -> Response<McpBody> {
        let protection = self.options.auth.as_ref();
        // The authorization check and legacy sessions read a call's `name`
        // and `arguments` from the params (rarer paths: they go back).
        if (protection.is_some() || caller.session_id.is_some())
            && let Message::Request(request) = &mut message
        {
            if let Some(params) = &call_params {
                call.read_deferred_arguments(params);
            }
            std::mem::take(&mut call).restore_into(&mut request.params);
        }
        if let (Some(p), Some(info), Message::Request(r)) = (protection, &caller.auth, &message)
            && let Some(refusal) =
                auth::authorize(p, &self.server, info, &r.method, r.params.as_ref())
        {
            return refusal;
        }
        let initialize = matches!(&message, Message::Request(r)
            if McpMethod::from_name(&r.method) == Some(McpMethod::Initialize));
        if caller.session_id.is_some() || initialize {
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
            if let Some(id) = &caller.session_id {
                return self
                    .legacy()
                    .post(id, message, Arc::new(headers), caller.auth)
                    .await;
            }
            if let Message::Request(request) = &mut message {
                if crate::legacy::is_legacy_initialize(request) {
                    let http = crate::legacy::FromHttp {
                        headers: Some(Arc::new(headers)),
                        auth: caller.auth,
                    };
                    return self
                        .legacy()
                        .initialize(request, peer, caller.owner, http)
                        .await;
                }
                // A 2026-07-28 `initialize` (not a method of this revision):
                // on to the usual answer.
                meta = MetaMembers::take_from(request.params.as_mut());
            }
        }
        let request = match message {
            Message::Request(request) => request,
            Message::Notification(note) => {
                // This revision defines no client notifications over HTTP;
                // accepting and ignoring keeps older clients working. The
                // chain's links still see it.
                let _ = self.server.pass_notification(note);
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
        match self
            .server
            .admit_http(request, (meta, call, call_params), headers, caller.auth)
        {
            Ok(prepared) => self.run(prepared, peer_gone).await,
            Err(rejection) => rejection_response(rejection),
        }
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
