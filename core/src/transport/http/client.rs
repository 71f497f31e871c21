//! The client side of Streamable HTTP: one POST per request, each on a
//! pooled connection of its own; the answer is a JSON object or an SSE
//! stream of notifications ending with the response. With OAuth, a 401 or
//! 403 runs the client's authorization flow and the request is sent again.
//! `Client::connect_http` is here.

use crate::rpc::{read_unpoisoned, write_unpoisoned};
use bytes::Bytes;
use http::header::{self, HeaderValue};
use http::{Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::Value;

use crate::client::OutOfCall;
use crate::client::answers::Answerer;
use crate::client::auth::flow::{self, Authorizer};
use crate::client::auth::{AuthError, OAuthOptions};
use crate::client::deadline::InteractionClock;
use crate::client::notes::NoteSender;
use crate::client::{
    Client, ClientLimits, ClientOptions, ClientTransport, NotificationCallback, OutgoingRequest,
    ServerRequestHandler,
};
use crate::net::pool::{Pool, PooledConnection, Sent};
use crate::net::sse::SseParser;
use crate::net::tls::{TlsConnect, TlsOptions, classify};
use crate::protocol::jsonrpc::{Message, RequestId, RequestOut, notification_value};
use crate::protocol::mcp_headers::{
    METHOD_HEADER, NAME_HEADER, PROTOCOL_VERSION_HEADER, SESSION_ID_HEADER, encode_header_value,
    mcp_name_value,
};
use crate::protocol::methods::{self, Method};
use crate::{BoxFuture, Error, McpError};
use serde_json::Map;
use std::sync::{Arc, RwLock};
use std::time::Duration;

impl Client {
    /// Talks to a Streamable HTTP endpoint (`http://host:port/mcp`, or
    /// `https://` with [`ClientOptions::tls`]).
    pub async fn connect_http(url: &str) -> Result<Client, Error> {
        Self::connect_http_with(url, ClientOptions::default()).await
    }

    /// [`Client::connect_http`] with explicit options.
    pub async fn connect_http_with(url: &str, options: ClientOptions) -> Result<Client, Error> {
        let out_of_call = OutOfCall::new();
        let transport = HttpTransport::new(
            url,
            &options.http_headers,
            &options.tls,
            Some(out_of_call.requests(&options)),
            Some(out_of_call.notifications(&options)),
            options.limits,
        )?
        .with_oauth(url, options.oauth.clone(), &options.tls);
        Ok(Self::from_transport(
            Arc::new(transport),
            options,
            out_of_call,
        ))
    }
}

pub(crate) struct HttpTransport {
    inner: Arc<HttpInner>,
}

struct HttpInner {
    /// Origin-form target (`/mcp`) and Host value: a bare connection needs
    /// both. Parsed once rather than on every request.
    target_uri: Uri,
    host_value: HeaderValue,
    pool: Pool,
    /// The legacy session, once `initialize` issued one.
    session_id: RwLock<Option<String>>,
    /// Answers requests a legacy server sends on its SSE streams.
    answers: Answerer,
    /// The answers being POSTed: a burst of server requests opens at most
    /// `max_concurrent_server_answers` connections.
    posting: Arc<tokio::sync::Semaphore>,
    limits: ClientLimits,
    /// Receives notifications a legacy server sends on its GET stream.
    on_notification: Option<NotificationCallback>,
    /// The application's own headers, sent with every request.
    extra_headers: Vec<(header::HeaderName, HeaderValue)>,
    /// OAuth: adds the bearer token and answers 401/403 challenges.
    auth: Option<Arc<Authorizer>>,
}

/// How many times a message that expects no answer is sent before giving
/// up (see `HttpInner::post_message`).
const POST_ATTEMPTS: usize = 3;

/// A response stream read without a pause for this many bytes yields once.
const YIELD_EVERY_BYTES: usize = 256 * 1024;

/// At most this many reconnections to resume one legacy SSE stream.
const MAX_RESUMES: usize = 8;

/// How many times an idempotent request is sent at most when it fails
/// before any answer (see `exchange_resending`): with the backoff below,
/// about 3 s of trying, enough for a load balancer to route around a
/// replica that died.
const RESEND_ATTEMPTS: u32 = 6;

/// The wait before the `attempt + 1`th send: 100 ms doubling up to 1 s,
/// each with up to half again of random jitter, so the clients of a replica
/// that died do not all come back at the same instant.
fn resend_backoff(attempt: u32) -> Duration {
    let base = Duration::from_millis(100u64 << attempt.min(4).saturating_sub(1))
        .min(Duration::from_secs(1));
    let mut byte = [0u8; 1];
    let _ = getrandom::fill(&mut byte);
    base + base.mul_f64(f64::from(byte[0]) / 510.0)
}

/// The shortest wait before reconnecting, whatever `retry` the server sent:
/// a server saying `retry: 0` and ending its streams at once must not turn
/// the client into a tight reconnect loop.
const MIN_RECONNECT_MS: u64 = 100;

impl HttpTransport {
    pub(crate) fn new(
        url: &str,
        extra_headers: &[(String, String)],
        tls: &TlsOptions,
        server_requests: Option<ServerRequestHandler>,
        on_notification: Option<NotificationCallback>,
        limits: ClientLimits,
    ) -> Result<HttpTransport, Error> {
        let uri: Uri = url
            .parse()
            .map_err(|e| Error::Http(format!("invalid URL {url:?}: {e}")))?;
        let secure = match uri.scheme_str() {
            Some("http") => false,
            Some("https") => true,
            Some(other) => {
                return Err(Error::Http(format!(
                    "unsupported URL scheme {other:?} (http:// and https:// are supported)"
                )));
            }
            None => return Err(Error::Http(format!("URL {url:?} has no scheme"))),
        };
        let host = uri
            .host()
            .ok_or_else(|| Error::Http(format!("URL {url:?} has no host")))?
            .to_owned();
        let port = uri.port_u16().unwrap_or(if secure { 443 } else { 80 });
        let tls = if secure {
            Some(TlsConnect::new(&host, port, tls)?)
        } else {
            None
        };
        let extra_headers = extra_headers
            .iter()
            .map(|(name, value)| extra_header(name, value))
            .collect::<Result<Vec<_>, Error>>()?;
        let target_uri: Uri = uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .parse()
            .map_err(|e| Error::Http(format!("invalid URL {url:?}: {e}")))?;
        let host_value = HeaderValue::from_str(uri.authority().map_or("", |a| a.as_str()))
            .map_err(|e| Error::Http(format!("invalid URL {url:?}: {e}")))?;
        Ok(HttpTransport {
            inner: Arc::new(HttpInner {
                target_uri,
                host_value,
                pool: Pool::new(host, port, tls),
                session_id: RwLock::new(None),
                answers: Answerer::new(server_requests, &limits),
                posting: Arc::new(tokio::sync::Semaphore::new(
                    limits.max_concurrent_server_answers.max(1),
                )),
                limits,
                on_notification,
                extra_headers,
                auth: None,
            }),
        })
    }

    /// Turns OAuth on (before the transport is shared).
    pub(crate) fn with_oauth(
        mut self,
        url: &str,
        oauth: Option<OAuthOptions>,
        tls: &TlsOptions,
    ) -> HttpTransport {
        if let (Some(oauth), Some(inner)) = (oauth, Arc::get_mut(&mut self.inner)) {
            inner.auth = Some(Arc::new(Authorizer::new(oauth, url, tls)));
        }
        self
    }
}

/// Checks one application header: a valid name and value, and not one the
/// transport writes itself (two `Host` or `Mcp-Method` headers would make
/// the request ambiguous, and the `Mcp-*` headers are protocol).
fn extra_header(name: &str, value: &str) -> Result<(header::HeaderName, HeaderValue), Error> {
    let parsed = header::HeaderName::from_bytes(name.as_bytes())
        .map_err(|e| Error::Http(format!("invalid header name {name:?}: {e}")))?;
    let reserved = [
        header::HOST,
        header::CONTENT_TYPE,
        header::CONTENT_LENGTH,
        header::ACCEPT,
    ];
    if reserved.contains(&parsed) || parsed.as_str().starts_with("mcp-") {
        return Err(Error::Http(format!(
            "header {name:?} is set by the transport and cannot be overridden"
        )));
    }
    Ok((parsed, header_value(name, value)?))
}

/// The value of `Mcp-Name` for a request, when its method has one.
fn name_header(method: &str, params: &serde_json::Map<String, Value>) -> Option<String> {
    let method = methods::Method::from_name(method)?;
    mcp_name_value(method, params).map(encode_header_value)
}

fn header_value(name: &str, value: &str) -> Result<HeaderValue, Error> {
    HeaderValue::from_str(value).map_err(|e| Error::Http(format!("{name} header: {e}")))
}

impl HttpInner {
    fn session(&self) -> Option<String> {
        read_unpoisoned(&self.session_id).clone()
    }

    fn builder(
        &self,
        method: http::Method,
        version: &str,
    ) -> Result<http::request::Builder, Error> {
        let mut builder = Request::builder()
            .method(method)
            .uri(self.target_uri.clone())
            .header(header::HOST, self.host_value.clone())
            .header(
                header::ACCEPT,
                HeaderValue::from_static("application/json, text/event-stream"),
            );
        if !version.is_empty() {
            builder = builder.header(
                PROTOCOL_VERSION_HEADER,
                header_value("MCP-Protocol-Version", version)?,
            );
        }
        if let Some(session) = self.session() {
            builder = builder.header(SESSION_ID_HEADER, header_value("Mcp-Session-Id", &session)?);
        }
        for (name, value) in &self.extra_headers {
            builder = builder.header(name, value);
        }
        Ok(builder)
    }

    /// Sends one request on a connection it owns until the response is read,
    /// so abandoning the call closes the connection. With OAuth, the
    /// request carries the current token, and a 401 or a 403
    /// `insufficient_scope` is answered by authorizing and sending again,
    /// at most `max_authorizations` times.
    async fn exchange(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<(PooledConnection, http::Response<Incoming>), Error> {
        match &self.auth {
            None => self.exchange_once(request).await,
            // Boxed: the authorizing loop's state is large, and inline it
            // would be part of every request's future, copied with it
            // whether or not the client authorizes.
            Some(auth) => Box::pin(self.exchange_authorized(auth, request)).await,
        }
    }

    /// [`HttpInner::exchange`] for a request that is harmless to send
    /// twice: sent again, after a backoff with jitter, when it failed before
    /// any answer arrived (refused, reset: a replica that went away) or a
    /// proxy answered that no replica could (502, 503, 504), at most
    /// [`RESEND_ATTEMPTS`] times in all.
    async fn exchange_resending(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<(PooledConnection, http::Response<Incoming>), Error> {
        let (parts, body) = request.into_parts();
        let copy = || {
            let mut request = Request::new(body.clone());
            *request.method_mut() = parts.method.clone();
            *request.uri_mut() = parts.uri.clone();
            *request.version_mut() = parts.version;
            *request.headers_mut() = parts.headers.clone();
            request
        };
        let mut attempt = 1;
        loop {
            let failure = match self.exchange(copy()).await {
                Ok((mut conn, response))
                    if attempt < RESEND_ATTEMPTS
                        && matches!(response.status().as_u16(), 502..=504) =>
                {
                    let status = response.status();
                    let _ = conn.drive(response.into_body().collect()).await;
                    self.pool.put(conn);
                    format!("HTTP {status}")
                }
                Ok(answered) => return Ok(answered),
                Err(error @ (Error::Io(_) | Error::Http(_))) if attempt < RESEND_ATTEMPTS => {
                    error.to_string()
                }
                Err(error) => return Err(error),
            };
            let wait = resend_backoff(attempt);
            tracing::debug!(%failure, attempt, ?wait, "an idempotent request failed before any answer: sending it again");
            tokio::time::sleep(wait).await;
            attempt += 1;
        }
    }

    async fn exchange_authorized(
        &self,
        auth: &Authorizer,
        request: Request<Full<Bytes>>,
    ) -> Result<(PooledConnection, http::Response<Incoming>), Error> {
        let (parts, body) = request.into_parts();
        let mut attempts = 0;
        loop {
            let mut request = Request::new(body.clone());
            *request.method_mut() = parts.method.clone();
            *request.uri_mut() = parts.uri.clone();
            *request.version_mut() = parts.version;
            *request.headers_mut() = parts.headers.clone();
            let sent = auth.fresh_bearer().await;
            if let Some(token) = &sent {
                let (authorization, proof) = auth.authorization(parts.method.as_str(), token)?;
                request.headers_mut().insert(
                    header::AUTHORIZATION,
                    header_value("Authorization", &authorization)?,
                );
                if let Some(proof) = proof {
                    request
                        .headers_mut()
                        .insert("dpop", header_value("DPoP", &proof)?);
                }
            }
            let (conn, response) = self.exchange_once(request).await?;
            let status = response.status().as_u16();
            let challenge = response
                .headers()
                .get(header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            if !flow::wants(status, challenge.as_deref()) {
                return Ok((conn, response));
            }
            if attempts >= auth.max_authorizations() {
                return Err(AuthError::RetryLimit { attempts, status }.into());
            }
            let nonce = response
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let mut conn = conn;
            let _ = conn.drive(response.into_body().collect()).await;
            self.pool.put(conn);
            if auth.nonce_challenge(status, challenge.as_deref(), nonce.as_deref()) {
                attempts += 1;
                continue;
            }
            auth.handle(status, challenge.as_deref(), sent.as_deref())
                .await?;
            attempts += 1;
        }
    }

    async fn exchange_once(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<(PooledConnection, http::Response<Incoming>), Error> {
        let (conn, response) = match self.pool.send(request).await? {
            Sent::Answered(conn, response) => (conn, response),
            Sent::Failed(mut conn, e) => {
                // A TLS 1.3 server checks the client certificate after the
                // handshake: its refusal surfaces on the first request,
                // either in this error or in the connection's own.
                if let Some(tls) = classify(self.host_value.to_str().unwrap_or(""), &e) {
                    return Err(tls);
                }
                if let Some(tls) = conn.tls_failure().await {
                    return Err(tls);
                }
                return Err(Error::Http(format!("request failed: {e}")));
            }
        };
        if let Some(session) = response
            .headers()
            .get(SESSION_ID_HEADER)
            .and_then(|v| v.to_str().ok())
        {
            *write_unpoisoned(&self.session_id) = Some(session.to_owned());
        }
        Ok((conn, response))
    }

    /// POSTs a JSON-RPC message that expects no answer (a notification, or
    /// our response to a server request). A message that could not be
    /// delivered (the request failed before the server answered) is sent
    /// again, at most [`POST_ATTEMPTS`] times in all: a server may close a
    /// kept-alive connection just as the pool hands it out, and losing an
    /// answer leaves the server's request hanging. Sending one of these
    /// twice is harmless (a response to an id already answered, or a
    /// notification repeated, is ignored); a request is never resent.
    async fn post_message(&self, message: &Value, version: &str) -> Result<(), Error> {
        let body = Bytes::from(serde_json::to_vec(message)?);
        let method = message.get("method").and_then(Value::as_str).unwrap_or("");
        let mut attempt = 1;
        loop {
            let request = self
                .builder(http::Method::POST, version)?
                .header(header::CONTENT_TYPE, "application/json")
                .header(METHOD_HEADER, header_value("Mcp-Method", method)?)
                .body(Full::new(body.clone()))
                .map_err(|e| Error::Http(e.to_string()))?;
            match self.exchange(request).await {
                Ok((mut conn, response)) => {
                    let status = response.status();
                    let _ = conn.drive(response.into_body().collect()).await;
                    self.pool.put(conn);
                    return if status.is_success() {
                        Ok(())
                    } else {
                        Err(Error::Http(format!("HTTP {status} for a posted message")))
                    };
                }
                Err(e @ (Error::Http(_) | Error::Io(_))) if attempt < POST_ATTEMPTS => {
                    tracing::debug!(error = %e, attempt, "posting a message failed; sending it again");
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads the session's GET stream (spec 2025-11-25, "Listening for
    /// Messages from the Server"): server requests are answered,
    /// notifications handed to the client-wide callback. Reconnects while the
    /// session lasts; a server without the stream answers 405 and is left be.
    async fn listen_standalone(
        self: Arc<Self>,
        version: String,
        opened: tokio::sync::oneshot::Sender<()>,
    ) {
        // Dropped (so the waiting handshake resumes) once the first attempt
        // has an answer, whatever it is.
        let mut opened = Some(opened);
        let mut last_event_id: Option<String> = None;
        for _attempt in 0..MAX_RESUMES {
            let Some(session) = self.session() else {
                return;
            };
            let Ok(mut builder) = self.builder(http::Method::GET, &version) else {
                return;
            };
            builder = builder.header(header::ACCEPT, "text/event-stream");
            if let Some(last) = &last_event_id
                && let Ok(v) = header_value("Last-Event-ID", last)
            {
                builder = builder.header("last-event-id", v);
            }
            let Ok(request) = builder.body(Full::new(Bytes::new())) else {
                return;
            };
            let Ok((mut conn, response)) = self.exchange(request).await else {
                return;
            };
            if let Some(opened) = opened.take() {
                let _ = opened.send(());
            }
            if !response.status().is_success() {
                tracing::debug!(status = %response.status(), %session, "no standalone stream");
                return;
            }
            let mut body = response.into_body();
            let mut parser = SseParser::new(self.limits.max_message_bytes);
            let mut retry = 1000;
            while let Some(Ok(frame)) = conn.drive(body.frame()).await {
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                let Ok(events) = parser.push_events(&data) else {
                    return;
                };
                for event in events {
                    if event.id.is_some() {
                        last_event_id = event.id;
                    }
                    if let Some(r) = event.retry {
                        retry = r;
                    }
                    match Message::from_slice(event.data.as_bytes()) {
                        // This stream carries only the server's messages:
                        // past the bound, stop reading it until there is room.
                        Ok(Message::Request(request)) => {
                            let deliver = self.deliverer(version.clone());
                            self.answers.answer_in_turn(request, deliver).await;
                        }
                        Ok(Message::Notification(n)) => {
                            if let Some(cb) = &self.on_notification {
                                cb(
                                    &n.method,
                                    &n.params.map(Value::Object).unwrap_or(Value::Null),
                                );
                            }
                        }
                        _ => {}
                    }
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(
                retry.max(MIN_RECONNECT_MS),
            ))
            .await;
        }
    }

    /// Answers a request a legacy server sent on a response's SSE stream
    /// (which also carries the response: a request past
    /// `max_pending_server_requests` is refused rather than waited for, and
    /// not answered, since that would take a connection too; the warning
    /// says why).
    fn answer(
        self: &Arc<Self>,
        request: crate::protocol::jsonrpc::Request,
        handler: Option<ServerRequestHandler>,
        version: String,
    ) {
        let _refused = self
            .answers
            .answer_with(request, handler, self.deliverer(version));
    }

    /// POSTs one answer to a server request, once one of the `posting`
    /// slots is free.
    fn deliverer(
        self: &Arc<Self>,
        version: String,
    ) -> impl FnOnce(Value) -> BoxFuture<()> + Send + 'static {
        let inner = self.clone();
        move |message: Value| -> BoxFuture<()> {
            Box::pin(async move {
                let Ok(_slot) = inner.posting.clone().acquire_owned().await else {
                    return;
                };
                if let Err(e) = inner.post_message(&message, &version).await {
                    tracing::warn!(error = %e, "could not deliver the answer to a server request");
                }
            })
        }
    }
}

impl ClientTransport for HttpTransport {
    fn interaction_clock(&self) -> Option<&InteractionClock> {
        self.inner.auth.as_deref().map(Authorizer::interactions)
    }
    fn send(&self, request: OutgoingRequest) -> BoxFuture<Result<Value, Error>> {
        let OutgoingRequest {
            id,
            method,
            params,
            headers,
            notifications,
            version,
            input,
        } = request;
        let name = name_header(&method, &params);
        let body = serde_json::to_vec(&RequestOut {
            id: &id,
            method: &method,
            params: Some(&params),
        });
        let inner = self.inner.clone();
        Box::pin(async move {
            let mut builder = inner
                .builder(http::Method::POST, &version)?
                .header(header::CONTENT_TYPE, "application/json")
                .header(METHOD_HEADER, header_value("Mcp-Method", &method)?);
            if let Some(name) = name {
                builder = builder.header(NAME_HEADER, header_value("Mcp-Name", &name)?);
            }
            for (name, value) in headers {
                builder = builder.header(name.as_str(), header_value(&name, &value)?);
            }
            let http_request = builder
                .body(Full::new(Bytes::from(body?)))
                .map_err(|e| Error::Http(e.to_string()))?;
            let idempotent = Method::from_name(&method).is_some_and(Method::is_idempotent);
            let (mut conn, response) = if idempotent {
                // Boxed: retrying is rare, and its state would otherwise be
                // part of every request's future.
                Box::pin(inner.exchange_resending(http_request)).await?
            } else {
                inner.exchange(http_request).await?
            };
            let mut reader = ResponseReader {
                inner: &inner,
                id: &id,
                notifications,
                version: &version,
                input: input.map(ClientOptions::call_request_handler),
                last_event_id: None,
                retry_ms: None,
            };
            let outcome = match reader.read(&mut conn, response).await {
                Ok(Some(result)) => Ok(result),
                // Boxed: resuming is rare and its future large (see exchange).
                Ok(None) => Box::pin(reader.resume()).await,
                Err(e) => Err(e),
            };
            inner.pool.put(conn);
            outcome
        })
    }

    fn notify(
        &self,
        method: &str,
        params: Map<String, Value>,
        version: &str,
    ) -> BoxFuture<Result<(), Error>> {
        let inner = self.inner.clone();
        let message = notification_value(method, Some(&params));
        let version = version.to_owned();
        Box::pin(async move { inner.post_message(&message, &version).await })
    }

    fn mirrors_headers(&self) -> bool {
        true
    }

    fn legacy_session_started(&self, version: &str) -> BoxFuture<()> {
        let inner = self.inner.clone();
        let version = version.to_owned();
        let (opened_tx, opened_rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move { inner.listen_standalone(version, opened_tx).await });
        Box::pin(async move {
            let _ = opened_rx.await;
        })
    }

    fn close(&self) -> BoxFuture<()> {
        let inner = self.inner.clone();
        Box::pin(async move {
            // A legacy session is ended explicitly (spec 2025-11-25:
            // "Session Management").
            if inner.session().is_some()
                && let Ok(builder) = inner.builder(http::Method::DELETE, "")
                && let Ok(request) = builder.body(Full::new(Bytes::new()))
                && let Ok((mut conn, response)) = inner.exchange(request).await
            {
                let _ = conn.drive(response.into_body().collect()).await;
            }
        })
    }
}

/// Reads one request's answer, following a legacy stream across
/// reconnections.
struct ResponseReader<'a> {
    inner: &'a Arc<HttpInner>,
    id: &'a RequestId,
    notifications: Option<NoteSender>,
    version: &'a str,
    /// The call's own answers to a legacy server's requests.
    input: Option<ServerRequestHandler>,
    last_event_id: Option<String>,
    retry_ms: Option<u64>,
}

impl ResponseReader<'_> {
    /// The result, or `None` when an SSE stream ended early but can be
    /// resumed (it carried event ids).
    async fn read(
        &mut self,
        conn: &mut PooledConnection,
        response: http::Response<Incoming>,
    ) -> Result<Option<Value>, Error> {
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let mut body = response.into_body();
        if content_type.starts_with("text/event-stream") {
            let max = self.inner.limits.max_message_bytes;
            let mut parser = SseParser::new(max);
            let mut unyielded = 0usize;
            while let Some(frame) = conn.drive(body.frame()).await {
                let frame = frame.map_err(|e| Error::Http(format!("reading SSE stream: {e}")))?;
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                // A server that never stops sending keeps every frame
                // ready: hand the thread back now and then, so the call's
                // timeout (and whatever else runs there) gets its turn.
                unyielded += data.len();
                if unyielded >= YIELD_EVERY_BYTES {
                    unyielded = 0;
                    yield_now().await;
                }
                for event in parser.push_events(&data)? {
                    if let Some(id) = event.id {
                        self.last_event_id = Some(id);
                    }
                    if let Some(retry) = event.retry {
                        self.retry_ms = Some(retry);
                    }
                    if event.data.is_empty() {
                        continue;
                    }
                    if let Some(result) = self.dispatch(&event.data) {
                        return result.map(Some);
                    }
                }
            }
            return match self.last_event_id {
                Some(_) => Ok(None),
                None => Err(Error::Protocol(
                    "SSE stream ended before the response arrived".into(),
                )),
            };
        }
        let max = self.inner.limits.max_message_bytes;
        let limited = http_body_util::Limited::new(body, max);
        let bytes = conn
            .drive(limited.collect())
            .await
            .map_err(|e| {
                if e.is::<http_body_util::LengthLimitError>() {
                    Error::Protocol(format!(
                        "the response is larger than the {max}-byte limit (max_message_bytes)"
                    ))
                } else {
                    Error::Http(format!("reading response: {e}"))
                }
            })?
            .to_bytes();
        if status == StatusCode::ACCEPTED && bytes.is_empty() {
            return Err(Error::Protocol(
                "server accepted the request without answering".into(),
            ));
        }
        match Message::from_slice(&bytes) {
            Ok(Message::Response(r)) => answer_to(self.id, r).map(Some),
            _ if !status.is_success() => Err(Error::HttpStatus(
                status.as_u16(),
                String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).into_owned(),
            )),
            Ok(_) => Err(Error::Protocol("expected a JSON-RPC response".into())),
            Err(e) => Err(Error::Mcp(McpError::new(e.error.code, e.error.message))),
        }
    }

    /// Handles one SSE message; `Some` once it is this request's response.
    fn dispatch(&self, data: &str) -> Option<Result<Value, Error>> {
        match Message::from_slice(data.as_bytes()) {
            Ok(Message::Response(r)) if r.id.as_ref() == Some(self.id) => {
                Some(r.outcome.map_err(Error::Mcp))
            }
            Ok(Message::Notification(n)) => {
                if let Some(tx) = &self.notifications {
                    tx.send(notification_value(&n.method, n.params.as_ref()));
                }
                None
            }
            Ok(Message::Request(request)) => {
                self.inner
                    .answer(request, self.input.clone(), self.version.to_owned());
                None
            }
            Ok(_) => None,
            Err(e) => {
                tracing::warn!(error = %e.error, "unreadable SSE event");
                None
            }
        }
    }

    /// Reconnects with `GET` + `Last-Event-ID` after the server's `retry`
    /// delay until the response arrives (spec 2025-11-25, "Resumability").
    async fn resume(&mut self) -> Result<Value, Error> {
        for _ in 0..MAX_RESUMES {
            let Some(last) = self.last_event_id.clone() else {
                break;
            };
            tokio::time::sleep(std::time::Duration::from_millis(
                self.retry_ms.unwrap_or(1000).max(MIN_RECONNECT_MS),
            ))
            .await;
            let request = self
                .inner
                .builder(http::Method::GET, self.version)?
                .header("last-event-id", header_value("Last-Event-ID", &last)?)
                .body(Full::new(Bytes::new()))
                .map_err(|e| Error::Http(e.to_string()))?;
            let (mut conn, response) = self.inner.exchange(request).await?;
            if !response.status().is_success() {
                return Err(Error::Http(format!(
                    "resuming the stream failed: HTTP {}",
                    response.status()
                )));
            }
            let outcome = self.read(&mut conn, response).await;
            self.inner.pool.put(conn);
            if let Some(result) = outcome? {
                return Ok(result);
            }
        }
        Err(Error::Protocol(
            "SSE stream ended before the response arrived".into(),
        ))
    }
}

/// Returns `Pending` once, having asked to be polled again: lets whatever
/// polls the caller (a `select!` with the call's timeout, a host's loop)
/// look at its other work. Works under any executor, unlike
/// `tokio::task::yield_now`, whose budget applies only on the runtime's
/// own threads.
async fn yield_now() {
    let mut yielded = false;
    std::future::poll_fn(|cx| {
        if yielded {
            return std::task::Poll::Ready(());
        }
        yielded = true;
        cx.waker().wake_by_ref();
        std::task::Poll::Pending
    })
    .await;
}

/// The outcome a JSON response gives the request `id`. A response to
/// another id is a protocol error, never this request's result; one with
/// no id (the server could not read the request) is taken as its error.
fn answer_to(id: &RequestId, response: crate::protocol::jsonrpc::Response) -> Result<Value, Error> {
    match (&response.id, response.outcome) {
        (Some(answered), _) if answered != id => Err(Error::Protocol(format!(
            "the server answered request {answered}, not request {id} that was sent"
        ))),
        (None, Ok(_)) => Err(Error::Protocol(format!(
            "the server answered request {id} with a result that has no id"
        ))),
        (_, outcome) => outcome.map_err(Error::Mcp),
    }
}

#[cfg(test)]
mod tests {
    use super::{HttpTransport, name_header};
    use crate::protocol::methods;
    use serde_json::json;

    #[test]
    fn application_headers_go_on_every_request_but_cannot_replace_protocol_ones() {
        let transport = HttpTransport::new(
            "http://127.0.0.1:9/mcp",
            &[("Authorization".into(), "Bearer t0ken".into())],
            &Default::default(),
            None,
            None,
            Default::default(),
        )
        .unwrap();
        let request = transport
            .inner
            .builder(http::Method::POST, "2026-07-28")
            .unwrap()
            .body(())
            .unwrap();
        assert_eq!(request.headers()["authorization"], "Bearer t0ken");
        assert_eq!(request.headers()["mcp-protocol-version"], "2026-07-28");
        for name in ["Mcp-Method", "mcp-protocol-version", "Host", "Content-Type"] {
            let refused = HttpTransport::new(
                "http://127.0.0.1:9/mcp",
                &[(name.into(), "x".into())],
                &Default::default(),
                None,
                None,
                Default::default(),
            );
            assert!(matches!(refused, Err(crate::Error::Http(_))), "{name}");
        }
        let invalid = HttpTransport::new(
            "http://127.0.0.1:9/mcp",
            &[("X-Bad".into(), "line\nbreak".into())],
            &Default::default(),
            None,
            None,
            Default::default(),
        );
        assert!(invalid.is_err());
    }

    #[test]
    fn https_is_a_supported_scheme_with_port_443_by_default() {
        let tls = HttpTransport::new(
            "https://localhost/mcp",
            &[],
            &Default::default(),
            None,
            None,
            Default::default(),
        )
        .unwrap();
        assert_eq!(tls.inner.host_value, "localhost");
        let other = HttpTransport::new(
            "ftp://localhost/mcp",
            &[],
            &Default::default(),
            None,
            None,
            Default::default(),
        );
        assert!(
            matches!(&other, Err(crate::Error::Http(m)) if m.contains("https://")),
            "{:?}",
            other.err()
        );
    }

    #[test]
    fn mcp_name_comes_from_the_method_table_and_is_encoded() {
        let params = json!({"name": "Hello, 世界", "uri": "file:///a b"});
        let params = params.as_object().cloned().unwrap_or_default();
        assert_eq!(
            name_header(methods::TOOLS_CALL, &params).as_deref(),
            Some("=?base64?SGVsbG8sIOS4lueVjA==?=")
        );
        assert_eq!(
            name_header(methods::RESOURCES_READ, &params).as_deref(),
            Some("file:///a b")
        );
        assert_eq!(name_header(methods::TOOLS_LIST, &params), None);
        assert_eq!(name_header("x/unknown", &params), None);
    }

    #[test]
    fn a_json_response_to_another_id_is_a_protocol_error() {
        use crate::protocol::jsonrpc::{RequestId, Response};
        let sent = RequestId::Number(7);
        let answer =
            |id: Option<RequestId>, outcome| super::answer_to(&sent, Response { id, outcome });
        assert_eq!(
            answer(Some(RequestId::Number(7)), Ok(json!({"ok": 1}))).ok(),
            Some(json!({"ok": 1}))
        );
        let other = answer(Some(RequestId::Number(8)), Ok(json!({"ok": 1})));
        assert!(
            matches!(&other, Err(crate::Error::Protocol(m)) if m.contains("request 8, not request 7")),
            "{other:?}"
        );
        let other = answer(Some(RequestId::String("7".into())), Ok(json!({})));
        assert!(
            matches!(other, Err(crate::Error::Protocol(_))),
            "a string id is another id"
        );
        assert!(matches!(
            answer(None, Ok(json!({}))),
            Err(crate::Error::Protocol(_))
        ));
        let unreadable = answer(None, Err(crate::McpError::new(-32700, "parse error")));
        assert!(matches!(unreadable, Err(crate::Error::Mcp(e)) if e.code == -32700));
    }
}
