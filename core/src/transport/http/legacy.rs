//! The legacy (2025-11-25) side of the one HTTP endpoint: `initialize`
//! opens a session (`Mcp-Session-Id`), later POSTs carry requests,
//! notifications and the client's answers to server requests, GET opens the
//! session's standalone SSE stream or resumes a stream (`Last-Event-ID`),
//! DELETE ends the session. An ended or unknown session gets 404.

use bytes::Bytes;
use http::header::{HeaderMap, HeaderValue};
use http::{Response, StatusCode};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::body::{McpBody, empty, json_response, jsonrpc_error, sse_response};
use super::options::EndpointOptions;
use crate::McpError;
use crate::legacy::{self, Refused, Session, SessionStore};
use crate::net::sse::message_event;
use crate::protocol::codes;
use crate::protocol::jsonrpc::{Message, Request, error_value};
use crate::protocol::mcp_headers::SESSION_ID_HEADER;
use crate::server::auth::AuthInfo;
use crate::server::{Server, notification_channel};

pub(super) fn session_not_found() -> Response<McpBody> {
    jsonrpc_error(
        StatusCode::NOT_FOUND,
        None,
        McpError::new(
            codes::INVALID_REQUEST,
            "Session not found: start a new one with initialize",
        ),
    )
}

/// A dummy guard: dropping a legacy stream's body must not cancel its
/// request (the client may resume; disconnection is not cancellation there).
fn detached_guard() -> tokio_util::sync::DropGuard {
    CancellationToken::new().drop_guard()
}

/// What the legacy exchanges of one endpoint use of it: its server, its
/// sessions and its options.
pub(super) struct LegacyHttp<'a> {
    pub(super) server: &'a Server,
    pub(super) sessions: &'a SessionStore,
    pub(super) options: &'a EndpointOptions,
}

impl LegacyHttp<'_> {
    /// Opens a session for `peer`. Refusals carry a JSON-RPC error for the
    /// `initialize` (-32603, as the request was valid) with the HTTP status
    /// saying whether to slow down (429: this address holds its share of
    /// sessions) or retry later (503: the table is full of sessions in use).
    pub(super) async fn initialize(
        &self,
        request: &Request,
        peer: Option<IpAddr>,
        owner: Option<String>,
        http: legacy::FromHttp,
    ) -> Response<McpBody> {
        let initialized = match legacy::initialize(
            self.server,
            request,
            SessionStore::new_id_on(self.server.options().replica.as_deref()),
            http,
        )
        .await
        {
            Ok(init) => init,
            Err(message) => return json_response(StatusCode::BAD_REQUEST, &message),
        };
        if let Err(refused) = self.sessions.insert(initialized.session.clone(), peer) {
            let status = match refused {
                Refused::PeerFull(_) => StatusCode::TOO_MANY_REQUESTS,
                Refused::Full => StatusCode::SERVICE_UNAVAILABLE,
            };
            let error = McpError::internal(refused.to_string());
            return json_response(status, &error_value(Some(&request.id), &error));
        }
        if let Some(owner) = owner {
            initialized.session.bind_owner(owner);
        }
        initialized.session.forward_events(self.server);
        let mut response = json_response(StatusCode::OK, &initialized.message);
        if let Ok(value) = HeaderValue::from_str(&initialized.session.id) {
            response.headers_mut().insert(SESSION_ID_HEADER, value);
        }
        response
    }

    pub(super) fn delete(&self, session_id: &str) -> Response<McpBody> {
        if self.sessions.remove(session_id) {
            empty(StatusCode::OK)
        } else {
            session_not_found()
        }
    }

    pub(super) fn get(&self, session_id: &str, headers: &HeaderMap) -> Response<McpBody> {
        let Some(session) = self.sessions.get(session_id) else {
            return session_not_found();
        };
        if let Some(last) = headers.get("last-event-id").and_then(|v| v.to_str().ok()) {
            return match session.streams.find(last) {
                Some((log, seq)) => sse_response(log.resume_after(seq), detached_guard()),
                None => jsonrpc_error(
                    StatusCode::NOT_FOUND,
                    None,
                    McpError::invalid_params(format!("no stream to resume after event {last:?}")),
                ),
            };
        }
        if session.has_standalone() {
            return jsonrpc_error(
                StatusCode::CONFLICT,
                None,
                McpError::new(
                    codes::INVALID_REQUEST,
                    "this session already has an open GET stream",
                ),
            );
        }
        let (note_tx, mut note_rx) = notification_channel();
        session.set_standalone(Some(note_tx));
        // Bounded: while the client does not read, this feeder waits and
        // the session's sink fills (and then drops) instead of queueing here.
        let (frame_tx, frame_rx) = mpsc::channel::<Bytes>(64);
        let period = self.options.keep_alive.max(Duration::from_millis(10));
        let closed = session.closed.clone();
        tokio::spawn(async move {
            let mut keep_alive =
                tokio::time::interval_at(tokio::time::Instant::now() + period, period);
            loop {
                let frame = tokio::select! {
                    note = note_rx.recv() => match note {
                        Some(note) => message_event(None, &note),
                        None => break,
                    },
                    _ = keep_alive.tick() => Bytes::from_static(b":\n\n"),
                    _ = closed.cancelled() => break,
                };
                if frame_tx.send(frame).await.is_err() {
                    break;
                }
            }
        });
        sse_response(frame_rx, detached_guard())
    }

    pub(super) async fn post(
        &self,
        session_id: &str,
        message: Message,
        headers: Arc<HeaderMap>,
        auth: Option<Arc<AuthInfo>>,
    ) -> Response<McpBody> {
        let Some(session) = self.sessions.get(session_id) else {
            return session_not_found();
        };
        match message {
            Message::Response(response) => {
                if let Some(id) = response.id {
                    session.deliver_response(&id, response.outcome);
                }
                empty(StatusCode::ACCEPTED)
            }
            Message::Notification(note) => {
                if let Some(note) = self.server.pass_notification(note) {
                    legacy::handle_notification(&session, &note.method, note.params.as_ref());
                }
                empty(StatusCode::ACCEPTED)
            }
            Message::Request(request) => self.request(session, request, headers, auth).await,
        }
    }

    /// Runs a session request: plain JSON unless something is sent before
    /// the result (notifications, or requests to the client), in which case
    /// the answer becomes a resumable SSE stream.
    async fn request(
        &self,
        session: Arc<Session>,
        request: Request,
        headers: Arc<HeaderMap>,
        auth: Option<Arc<AuthInfo>>,
    ) -> Response<McpBody> {
        let cancel = CancellationToken::new();
        let (note_tx, mut note_rx) = notification_channel();
        let log = session.streams.open();
        // The handler may end the connection (not the stream) to make the
        // client poll; before anything was streamed that first opens the
        // stream so the client has an event id to resume from.
        let (close_tx, mut close_rx) = mpsc::unbounded_channel::<()>();
        let close_stream: Arc<dyn Fn() + Send + Sync> = Arc::new(move || {
            let _ = close_tx.send(());
        });
        let server = self.server.clone();
        let run_session = session.clone();
        let run_cancel = cancel.clone();
        // `None` once cancelled: then nothing is sent for the request.
        let mut run = Box::pin(async move {
            legacy::answer_request(
                &server,
                &run_session,
                request,
                run_cancel,
                Some(note_tx),
                Some(close_stream),
                legacy::FromHttp {
                    headers: Some(headers),
                    auth,
                },
            )
            .await
        });
        let mut notes_open = true;
        let mut closes_open = true;
        let first = loop {
            tokio::select! {
                biased;
                close = close_rx.recv(), if closes_open => match close {
                    Some(()) => break None,
                    None => closes_open = false,
                },
                reply = &mut run => {
                    let Some(reply) = reply else {
                        // Cancelled before anything was sent: a request
                        // must be answered with JSON or a stream, so it gets
                        // a stream that ends without a response.
                        let frames = log.start();
                        log.finish();
                        return sse_response(frames, detached_guard());
                    };
                    if let Ok(note) = note_rx.try_recv() {
                        // Sent in the same poll as the result: still ordered.
                        let frames = log.start();
                        log.push(&note);
                        while let Ok(more) = note_rx.try_recv() {
                            log.push(&more);
                        }
                        log.push(&reply);
                        log.finish();
                        return sse_response(frames, detached_guard());
                    }
                    return json_response(StatusCode::OK, &reply);
                }
                note = note_rx.recv(), if notes_open => match note {
                    Some(note) => break Some(note),
                    None => notes_open = false,
                },
                _ = session.closed.cancelled() => {
                    cancel.cancel();
                    return session_not_found();
                }
            }
        };
        let frames = log.start();
        match first {
            Some(note) => log.push(&note),
            None => log.detach(),
        }
        let closed = session.closed.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    biased;
                    close = close_rx.recv(), if closes_open => match close {
                        Some(()) => log.detach(),
                        None => closes_open = false,
                    },
                    note = note_rx.recv(), if notes_open => match note {
                        Some(note) => log.push(&note),
                        None => notes_open = false,
                    },
                    reply = &mut run => {
                        // Cancelled: the stream ends without a response.
                        if let Some(reply) = reply {
                            while let Ok(note) = note_rx.try_recv() {
                                log.push(&note);
                            }
                            log.push(&reply);
                        }
                        break;
                    }
                    _ = closed.cancelled() => {
                        cancel.cancel();
                        break;
                    }
                }
            }
            log.finish();
        });
        sse_response(frames, detached_guard())
    }
}
