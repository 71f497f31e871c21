//! The MCP endpoint as a value a host's own HTTP server calls, one exchange
//! at a time: [`HttpEndpoint`]. The built-in listener serves through the
//! same type, so an endpoint mounted in uvicorn, Express or axum applies the
//! same rules (`Host`/`Origin` guard, mirrored headers, body limit, legacy
//! sessions, SSE) as `Server::serve_http`.

use bytes::Bytes;
use http::{Request, Response};
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::body::McpBody;
use super::endpoint::Endpoint;
use super::options::EndpointOptions;
use crate::legacy::SessionStore;
use crate::server::Server;

/// Who sent one exchange, for the hosts that know.
///
/// ```
/// use ferromcp::server::Server;
/// use ferromcp::transport::http::{EndpointOptions, ExchangeInfo, HttpEndpoint};
/// use tokio_util::sync::CancellationToken;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let endpoint = HttpEndpoint::new(Server::new("demo", "1.0.0"), EndpointOptions::default());
/// let gone = CancellationToken::new(); // the host cancels it when its client disconnects
/// let info = ExchangeInfo {
///     peer: Some("127.0.0.1".parse().unwrap()),
///     client_gone: Some(gone.clone()),
/// };
/// let request = http::Request::get("/mcp")
///     .header("host", "localhost")
///     .body(http_body_util::Empty::<bytes::Bytes>::new())
///     .unwrap();
/// // A GET without a legacy session: this revision only takes POST.
/// assert_eq!(endpoint.handle_with(request, info).await.status(), 405);
/// # }
/// ```
#[derive(Debug, Clone, Default)]
pub struct ExchangeInfo {
    /// The client's address: legacy sessions are capped per address.
    pub peer: Option<IpAddr>,
    /// Cancelled by the host when the client goes away. Dropping the
    /// future of [`HttpEndpoint::handle_with`] or the response body cancels
    /// as well; this token also reaches a request whose SSE stream has not
    /// been polled yet.
    pub client_gone: Option<CancellationToken>,
}

/// The Streamable HTTP endpoint of a [`Server`], for hosts that own the
/// HTTP server: hand it each request, send back the response it returns,
/// pulling the body chunk by chunk (an SSE stream ends when the exchange
/// does). Dropping the response body (the client left) cancels the request
/// behind it. Cheap to clone: clones share sessions.
///
/// ```
/// use ferromcp::server::Server;
/// use ferromcp::transport::http::{EndpointOptions, HttpEndpoint};
/// use http_body_util::{BodyExt, Full};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let endpoint = HttpEndpoint::new(Server::new("demo", "1.0.0"), EndpointOptions::default());
/// let message = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
///     "params": {"_meta": {
///         "io.modelcontextprotocol/protocolVersion": "2026-07-28",
///         "io.modelcontextprotocol/clientCapabilities": {}
///     }}});
/// let request = http::Request::post("/mcp")
///     .header("host", "localhost")
///     .header("content-type", "application/json")
///     .header("mcp-protocol-version", "2026-07-28")
///     .header("mcp-method", "server/discover")
///     .body(Full::new(bytes::Bytes::from(message.to_string())))
///     .unwrap();
/// let response = endpoint.handle(request).await;
/// assert_eq!(response.status(), 200);
/// let body = response.into_body().collect().await.unwrap().to_bytes();
/// assert!(std::str::from_utf8(&body).unwrap().contains("\"supportedVersions\""));
/// # }
/// ```
#[derive(Clone)]
pub struct HttpEndpoint {
    inner: Arc<Endpoint>,
}

impl HttpEndpoint {
    /// An endpoint serving `server`. Needs no runtime until the first
    /// exchange.
    pub fn new(server: Server, options: EndpointOptions) -> HttpEndpoint {
        HttpEndpoint::with_loopback_default(server, options, true)
    }

    /// `loopback`: whether `allowed_hosts: None` means the loopback names
    /// (true) or any host (the listener bound to a public address).
    pub(super) fn with_loopback_default(
        server: Server,
        options: EndpointOptions,
        loopback: bool,
    ) -> HttpEndpoint {
        HttpEndpoint {
            inner: Arc::new(Endpoint {
                server,
                loopback,
                sessions: SessionStore::new(options.session_limits),
                options,
                sweeper_started: AtomicBool::new(false),
                closed: CancellationToken::new(),
            }),
        }
    }

    /// The options it was built with.
    pub fn options(&self) -> &EndpointOptions {
        &self.inner.options
    }

    /// The server it serves.
    pub fn server(&self) -> &Server {
        &self.inner.server
    }

    /// Answers one exchange. Must run inside a tokio runtime (for a
    /// binding: [`crate::runtime::get`]).
    pub async fn handle<B>(&self, request: Request<B>) -> Response<McpBody>
    where
        B: http_body::Body + Send,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.handle_with(request, ExchangeInfo::default()).await
    }

    /// Answers one exchange, knowing the client's address and when it goes
    /// away.
    pub async fn handle_with<B>(&self, request: Request<B>, info: ExchangeInfo) -> Response<McpBody>
    where
        B: http_body::Body + Send,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        self.start_sweeper();
        let client_gone = info.client_gone.unwrap_or_default();
        self.inner.handle(request, info.peer, client_gone).await
    }

    /// Ends every legacy session (their streams close). Later exchanges
    /// are still served; for a host shutting down.
    pub fn close(&self) {
        self.inner.sessions.close_all();
    }

    /// Expires idle legacy sessions in the background while the endpoint
    /// lives; started on the first exchange, so `new` needs no runtime.
    fn start_sweeper(&self) {
        if self.inner.sweeper_started.swap(true, Ordering::Relaxed) {
            return;
        }
        let weak: Weak<Endpoint> = Arc::downgrade(&self.inner);
        let closed = self.inner.closed.clone();
        // Often enough that a half-open session does not outlive its
        // timeout by much more than the timeout itself.
        let limits = self.inner.options.session_limits;
        let sweep_every = limits
            .half_open_timeout
            .min(limits.idle_timeout)
            .clamp(Duration::from_secs(1), Duration::from_secs(30));
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(sweep_every) => match weak.upgrade() {
                        Some(endpoint) => endpoint.sessions.expire(),
                        None => return,
                    },
                    _ = closed.cancelled() => return,
                }
            }
        });
    }
}

impl std::fmt::Debug for HttpEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpEndpoint")
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        // The last handle is gone: stop the sweeper and end the sessions'
        // streams, which would otherwise wait for events that never come.
        self.closed.cancel();
        self.sessions.close_all();
    }
}

/// Why a request body ended early.
#[derive(Debug, thiserror::Error)]
#[error("the request body was aborted by the host")]
pub struct BodyAborted;

/// A request body the host feeds chunk by chunk as it receives them
/// (ASGI `http.request` messages, a Node `IncomingMessage`...), made by
/// [`RequestBody::channel`].
///
/// ```
/// use ferromcp::transport::http::RequestBody;
/// use http_body_util::BodyExt;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let (sender, body) = RequestBody::channel();
/// assert!(sender.send(bytes::Bytes::from_static(b"{\"a\":")));
/// assert!(sender.send(bytes::Bytes::from_static(b"1}")));
/// drop(sender); // the end of the body
/// assert_eq!(body.collect().await.unwrap().to_bytes(), "{\"a\":1}");
/// # }
/// ```
#[derive(Debug)]
pub struct RequestBody {
    chunks: mpsc::UnboundedReceiver<Result<Bytes, BodyAborted>>,
}

/// The feeding end of a [`RequestBody`]; dropping it ends the body.
#[derive(Debug, Clone)]
pub struct BodySender {
    chunks: mpsc::UnboundedSender<Result<Bytes, BodyAborted>>,
}

impl RequestBody {
    /// A body and its sender. Unbounded on purpose: the endpoint reads a
    /// body as soon as its headers pass, stops at the size limit and then
    /// drops the body, after which [`BodySender::send`] returns false, so
    /// what waits here is at most what the host already holds.
    pub fn channel() -> (BodySender, RequestBody) {
        let (tx, rx) = mpsc::unbounded_channel();
        (BodySender { chunks: tx }, RequestBody { chunks: rx })
    }
}

impl BodySender {
    /// Appends a chunk; false once the endpoint no longer reads the body
    /// (it answered already): the host can stop receiving.
    pub fn send(&self, chunk: Bytes) -> bool {
        self.chunks.send(Ok(chunk)).is_ok()
    }

    /// Ends the body with an error (the client disconnected mid-body):
    /// the endpoint answers 400 instead of parsing a truncated message.
    pub fn abort(self) {
        let _ = self.chunks.send(Err(BodyAborted));
    }
}

impl http_body::Body for RequestBody {
    type Data = Bytes;
    type Error = BodyAborted;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, BodyAborted>>> {
        self.get_mut()
            .chunks
            .poll_recv(cx)
            .map(|chunk| chunk.map(|c| c.map(http_body::Frame::data)))
    }
}
