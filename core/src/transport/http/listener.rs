//! The listener: binds, accepts connections until shutdown, serves each
//! with hyper's HTTP/1.1 and watches it for hang-ups (a Streamable HTTP
//! client cancels by closing the connection), and drains them on shutdown.

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use super::endpoint::Endpoint;
use super::hangup::HangupWatcher;
use crate::Error;
use crate::legacy::{SessionLimits, SessionStore};
use crate::server::Server;
use crate::transport::DEFAULT_MAX_MESSAGE_BYTES;

impl Server {
    /// Serves Streamable HTTP until `options.shutdown` is cancelled.
    pub async fn serve_http(&self, options: HttpOptions) -> Result<(), Error> {
        serve(self.clone(), options).await
    }
}

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
