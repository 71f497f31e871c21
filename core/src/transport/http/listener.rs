//! The listener: binds, accepts connections until shutdown (at most
//! `max_connections` at once, shedding the least useful to admit new ones;
//! optionally at most `max_connections_per_address` per address), hands
//! each to `connection` (hyper's HTTP/1.1, hang-up watch, deadlines), and
//! drains them on shutdown.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpSocket, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::connection::{self, Activity, Deadlines};
use super::embed::HttpEndpoint;
use super::hangup::HangupWatcher;
use super::live::{Cause, Live, Shed};
use super::options::{EndpointOptions, Health};
use crate::legacy::SessionLimits;
use crate::protocol::jsonrpc::error_value;
use crate::server::Server;
use crate::transport::DEFAULT_MAX_MESSAGE_BYTES;
use crate::{Error, McpError};

impl Server {
    /// Serves Streamable HTTP until `options.shutdown` is cancelled.
    pub async fn serve_http(&self, options: HttpOptions) -> Result<(), Error> {
        serve(self.clone(), options).await
    }
}

/// How long open connections may take to finish after shutdown before
/// they are cut.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Settings of the HTTP listener. The limits among them can also be read
/// from JSON as [`super::HttpLimits`] (what the bindings do).
///
/// ```
/// use ferromcp::transport::http::HttpOptions;
/// use std::time::Duration;
///
/// // A server facing untrusted clients: shorter deadlines, fewer
/// // connections, at most 32 of them from any one address.
/// let options = HttpOptions {
///     header_read_timeout: Duration::from_secs(5),
///     idle_timeout: Duration::from_secs(30),
///     max_connections: 256,
///     max_connections_per_address: Some(32),
///     ..HttpOptions::localhost(8000)
/// };
/// assert_eq!(options.body_read_timeout, Duration::from_secs(30));
/// ```
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
    /// Cancelled to shut down: the server turns unready (`/readyz`), keeps
    /// serving for [`HttpOptions::drain_delay`], then stops accepting
    /// connections, ends open `subscriptions/listen` streams with their
    /// completion result (clients listen again elsewhere), gives requests
    /// in flight up to 10 s to finish, and `run` returns.
    pub shutdown: CancellationToken,
    /// How long the server goes on serving, unready, after `shutdown`
    /// fires: long enough for a load balancer to see `/readyz` fail and
    /// stop sending (a probe period or two). Default zero.
    pub drain_delay: Duration,
    /// Serve `GET /healthz` (200 while the process serves) and
    /// `GET /readyz` (200, then 503 once shutdown begins), for a load
    /// balancer or Kubernetes probes. Default off.
    pub health: bool,
    /// Interval of SSE comment lines on streams with nothing to say, so
    /// proxies and client idle timeouts do not cut them.
    pub keep_alive: Duration,
    /// Bounds on legacy (2025-11-25) sessions.
    pub session_limits: SessionLimits,
    /// A request head (request line and headers) must be complete this long
    /// after its first byte arrived, or the connection is closed: a client
    /// sending its headers a byte at a time cannot hold a connection. A new
    /// connection must also send its first byte this long after it was
    /// accepted: one that connects and sends nothing is closed then, not
    /// after the idle timeout.
    pub header_read_timeout: Duration,
    /// A request body must be complete this long after the head, or the
    /// request is answered 408 and the connection closed.
    pub body_read_timeout: Duration,
    /// A connection kept alive after a request, with no request in
    /// progress, is closed after this long. A response still streaming
    /// (SSE) is a request in progress and is never cut by it. (A new
    /// connection that has not sent a byte has the shorter
    /// `header_read_timeout` instead.)
    pub idle_timeout: Duration,
    /// At most this many connections are open at once. At the cap, a new
    /// connection is admitted by closing one that is doing nothing:
    /// never-used connections first (oldest first), then idle ones (longest
    /// idle first), then ones still reading a request head (oldest first);
    /// never one answering a request or streaming. Only when every
    /// connection is busy do further clients wait in the kernel's backlog
    /// until one closes (rather than being accepted only to be refused,
    /// which costs a descriptor the server does not have to spare).
    /// Lowered at `run` to fit the process's descriptor limit
    /// (`RLIMIT_NOFILE`), as a connection may use two descriptors.
    pub max_connections: usize,
    /// At most this many connections from one IP address (`None`, the
    /// default: no limit). A new connection from an address at its limit
    /// closes that address's own least useful connection (in the order of
    /// `max_connections`); if they are all busy it is answered `429` with a
    /// JSON-RPC error naming the limit, and closed. Behind a reverse proxy
    /// every client shares the proxy's address (forwarded headers are not
    /// trusted): leave it unset there, or set it above what the proxy opens.
    pub max_connections_per_address: Option<usize>,
    /// Protection by OAuth bearer tokens (see [`super::ProtectedResource`]);
    /// `None` serves everyone.
    pub auth: Option<super::ProtectedResource>,
    /// Serve `https://` (see [`super::ServerTls`]: PEM files reloaded when
    /// they change, optional client certificates); `None` serves plain
    /// HTTP, as behind a proxy that terminates TLS.
    #[cfg(feature = "tls")]
    pub tls: Option<super::ServerTls>,
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
            drain_delay: Duration::ZERO,
            health: false,
            keep_alive: Duration::from_secs(15),
            session_limits: SessionLimits::default(),
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(60),
            max_connections: 1024,
            max_connections_per_address: None,
            auth: None,
            #[cfg(feature = "tls")]
            tls: None,
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

impl HttpOptions {
    /// What the endpoint behind the listener checks.
    fn endpoint_options(&self, health: Option<Health>) -> EndpointOptions {
        EndpointOptions {
            health,
            path: Some(self.path.clone()),
            max_body_bytes: self.max_body_bytes,
            allowed_hosts: self.allowed_hosts.clone(),
            allowed_origins: self.allowed_origins.clone(),
            keep_alive: self.keep_alive,
            session_limits: self.session_limits,
            body_read_timeout: self.body_read_timeout,
            auth: self.auth.clone(),
        }
    }
}

/// A bound, not yet running, HTTP server.
pub struct HttpServer {
    listener: TcpListener,
    server: Server,
    options: HttpOptions,
    /// Wraps each connection in TLS (`options.tls`), built once at bind.
    tls: Option<connection::TlsAcceptor>,
}

/// Binds and serves until `options.shutdown` is cancelled.
pub async fn serve(server: Server, options: HttpOptions) -> Result<(), Error> {
    HttpServer::bind(server, options).await?.run().await
}

impl HttpServer {
    /// Binds the listening socket.
    /// Fails when the address cannot be bound, or the TLS files cannot be
    /// read (a misconfigured server does not start).
    pub async fn bind(server: Server, options: HttpOptions) -> Result<HttpServer, Error> {
        #[cfg(feature = "tls")]
        let tls = options
            .tls
            .as_ref()
            .map(super::ServerTls::acceptor)
            .transpose()?;
        #[cfg(not(feature = "tls"))]
        let tls = None;
        let listener = listen(options.bind)?;
        Ok(HttpServer {
            listener,
            server,
            options,
            tls,
        })
    }

    /// The bound address (useful with port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, Error> {
        Ok(self.listener.local_addr()?)
    }

    /// Accepts connections until shutdown.
    pub async fn run(self) -> Result<(), Error> {
        let local = self.listener.local_addr()?;
        // One code path with embedded endpoints: the listener only owns the
        // sockets, the endpoint answers each exchange.
        let health = Health::default();
        let endpoint = HttpEndpoint::with_loopback_default(
            self.server,
            self.options
                .endpoint_options(self.options.health.then(|| health.clone())),
            local.ip().is_loopback(),
        );
        let deadlines = Deadlines {
            header_read: self.options.header_read_timeout,
            idle: self.options.idle_timeout,
        };
        // Shutdown turns the server unready at once; it stops accepting
        // (`shutdown` below) only after the drain delay.
        let shutdown = CancellationToken::new();
        let draining = tokio::spawn({
            let requested = self.options.shutdown.clone();
            let stop = shutdown.clone();
            let delay = self.options.drain_delay;
            async move {
                requested.cancelled().await;
                health.set_ready(false);
                if !delay.is_zero() {
                    tracing::info!(
                        ?delay,
                        "shutting down: unready, serving until the drain delay passes"
                    );
                    tokio::time::sleep(delay).await;
                }
                stop.cancel();
            }
        });
        let _stop_draining = AbortOnDrop(draining);
        tracing::info!(address = %local, path = %self.options.path, "serving MCP over HTTP");
        let cap = connection_cap(self.options.max_connections);
        let per_address = self.options.max_connections_per_address.map(|n| n.max(1));
        let slots = Arc::new(Semaphore::new(cap));
        let live = Arc::new(Live::new());
        let refusals = Arc::new(Semaphore::new(MAX_REFUSING));
        // Connections are tracked so `run` returns only once they are done:
        // a host may free its handlers as soon as `run` returns.
        let mut connections = JoinSet::new();
        let hangups = HangupWatcher::new();
        let mut accept_failures = 0u64;
        loop {
            while connections.try_join_next().is_some() {}
            // Accepted before a slot is free: at the cap, the newcomer is
            // what says a connection should be shed, and holding one
            // accepted socket costs a descriptor from the reserve.
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                _ = shutdown.cancelled() => break,
            };
            let (stream, peer) = match accepted {
                Ok(accepted) => {
                    if accept_failures > 0 {
                        tracing::info!(failures = accept_failures, "accepting connections again");
                        accept_failures = 0;
                    }
                    accepted
                }
                Err(e) => {
                    // Running out of descriptors (EMFILE/ENFILE) must not
                    // end the server, nor spin: the pending connection stays
                    // ready, so back off briefly before trying again. Warned
                    // once per streak, as it repeats until a descriptor frees.
                    if accept_failures == 0 {
                        tracing::warn!(error = %e, "accept failed; retrying");
                    } else {
                        tracing::debug!(error = %e, "accept failed again");
                    }
                    accept_failures += 1;
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            };
            if let Some(limit) = per_address
                && live.at_address_limit(peer.ip(), limit)
            {
                let shed = live.shed_one(Some(peer.ip()));
                live.report(shed, Cause::PerAddress(limit));
                if shed.is_none() {
                    refuse(&mut connections, &refusals, stream, limit);
                    continue;
                }
            }
            let slot = tokio::select! {
                slot = admit(&slots, &live, cap) => slot,
                _ = shutdown.cancelled() => break,
            };
            let _ = stream.set_nodelay(true);
            let (stream, hangup) = match hangups.watch(stream) {
                Ok(pair) => pair,
                Err(e) => {
                    tracing::warn!(error = %e, "lost a connection while setting it up");
                    continue;
                }
            };
            let endpoint = endpoint.clone();
            let tls = self.tls.clone();
            let conn_shutdown = shutdown.clone();
            let activity = Arc::new(Activity::new());
            let registration = live.register(peer.ip(), activity.clone());
            connections.spawn(async move {
                connection::serve(
                    endpoint,
                    deadlines,
                    stream,
                    tls,
                    peer,
                    hangup,
                    conn_shutdown,
                    activity,
                )
                .await;
                // Out of the table before the slot frees: the listener
                // waiting for the slot must not find it there.
                drop(registration);
                drop(slot);
            });
        }
        endpoint.server().close_subscriptions();
        endpoint.close();
        let drained = tokio::time::timeout(SHUTDOWN_GRACE, async {
            while connections.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            connections.abort_all();
            while connections.join_next().await.is_some() {}
        }
        live.flush_report();
        Ok(())
    }
}

/// Aborts a spawned task when dropped (`run` returning, or its future
/// dropped).
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Connections the kernel may hold completed for the accept loop (capped by
/// the system, `net.core.somaxconn`: 4096 on Linux since 5.4).
/// `TcpListener::bind` asks for 128 (mio follows std); when a flood of
/// connections reaches the cap, shedding makes each accept wait for a
/// closing connection, a queue that short fills, and every connection past
/// it has its SYN dropped and retried a second later (then 3 s, 7 s...), a
/// good client's included.
const LISTEN_BACKLOG: u32 = 4096;

/// Binds a listening socket as `TcpListener::bind` does, with a longer
/// backlog.
fn listen(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = match address {
        SocketAddr::V4(_) => TcpSocket::new_v4()?,
        SocketAddr::V6(_) => TcpSocket::new_v6()?,
    };
    // As `TcpListener::bind` (mio) does: a restarted server can bind while
    // its old connections are in TIME_WAIT. Not on Windows, where it would
    // let another process take the port.
    #[cfg(not(windows))]
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// How long the accept loop waits after a failed accept.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// How often the listener, holding a connection to admit while every
/// connection is busy, looks for one that has gone idle: a request ending
/// wakes nobody (that would cost every request a wake-up).
const BUSY_RECHECK: Duration = Duration::from_millis(100);

/// A free connection slot: at once if there is one; otherwise by shedding
/// the connection that matters least (unless one is already closing) and
/// waiting for its slot; while every connection is busy, whenever one ends
/// or goes idle.
async fn admit(slots: &Arc<Semaphore>, live: &Live, cap: usize) -> OwnedSemaphorePermit {
    loop {
        if let Ok(slot) = slots.clone().try_acquire_owned() {
            return slot;
        }
        if let Shed::Started(class) = live.shed_for_cap() {
            live.report(Some(class), Cause::Cap(cap));
        }
        // The semaphore is never closed, so an error cannot happen; were it
        // to, looping is as good as anything.
        if let Ok(Ok(slot)) =
            tokio::time::timeout(BUSY_RECHECK, slots.clone().acquire_owned()).await
        {
            return slot;
        }
    }
}

/// At most this many refused connections are being answered at once; past
/// it a refused connection is closed without an answer, so a flood from
/// one address cannot hold descriptors through its refusals.
const MAX_REFUSING: usize = 16;

/// How long a refusal may take to write its answer and see the client close.
const REFUSAL_LINGER: Duration = Duration::from_millis(500);

/// Answers a connection over `max_connections_per_address` with 429 and a
/// JSON-RPC error naming the limit, then closes it.
fn refuse(
    connections: &mut JoinSet<()>,
    refusals: &Arc<Semaphore>,
    mut stream: TcpStream,
    limit: usize,
) {
    let Ok(permit) = refusals.clone().try_acquire_owned() else {
        return;
    };
    let error = McpError::internal(format!(
        "too many connections from this address (max_connections_per_address = {limit})"
    ));
    let body = error_value(None, &error).to_string();
    let response = format!(
        "HTTP/1.1 429 Too Many Requests\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    connections.spawn(async move {
        let answered = tokio::time::timeout(REFUSAL_LINGER, async {
            stream.write_all(response.as_bytes()).await?;
            stream.shutdown().await?;
            // Read what the client sent until it closes: closing with its
            // request unread would reset the connection, and a reset can
            // destroy the answer before the client reads it.
            let mut buf = [0u8; 2048];
            while stream.read(&mut buf).await? > 0 {}
            Ok::<_, std::io::Error>(())
        })
        .await;
        if let Ok(Err(e)) = answered {
            tracing::debug!(error = %e, "refused connection ended with an error");
        }
        drop(permit);
    });
}

/// Descriptors kept aside from the connection cap for everything else the
/// process opens (its runtime, logs, the host's own files).
const RESERVED_DESCRIPTORS: u64 = 64;

/// The connection cap: `configured`, lowered so that connections (two
/// descriptors each: the socket and its hang-up watch) fit the descriptor
/// limit; otherwise running out of descriptors is what limits connections,
/// and that fails accepts instead of queueing them.
fn connection_cap(configured: usize) -> usize {
    connection_cap_within(configured, descriptor_limit())
}

/// [`connection_cap`] under a known descriptor limit, or none (Windows,
/// where sockets are handles without such a per-process limit).
fn connection_cap_within(configured: usize, limit: Option<u64>) -> usize {
    let Some(limit) = limit else {
        return configured.max(1);
    };
    let fits = limit.saturating_sub(RESERVED_DESCRIPTORS) / 2;
    let fits = usize::try_from(fits).unwrap_or(usize::MAX).max(1);
    if fits < configured {
        // Info, not warn: with the default cap and a common 1024 limit this
        // is the normal case, not a misconfiguration.
        tracing::info!(
            max_connections = configured,
            lowered_to = fits,
            descriptor_limit = limit,
            "lowering max_connections to fit the descriptor limit"
        );
    }
    configured.min(fits).max(1)
}

/// The soft `RLIMIT_NOFILE`, where there is one: every Unix, macOS's
/// default of 256 being the one most in need of it.
#[cfg(unix)]
fn descriptor_limit() -> Option<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit to fill in.
    let ok = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0;
    (ok && limit.rlim_cur != libc::RLIM_INFINITY).then_some(limit.rlim_cur)
}

#[cfg(not(unix))]
fn descriptor_limit() -> Option<u64> {
    None
}

#[cfg(test)]
mod tests {
    use super::connection_cap_within;

    #[test]
    fn the_cap_fits_the_descriptor_limit_and_stands_where_there_is_none() {
        // Windows: no descriptor limit, the configured cap stands.
        assert_eq!(connection_cap_within(10_000, None), 10_000);
        assert_eq!(connection_cap_within(0, None), 1);
        // macOS's default soft limit: (256 - 64 reserved) / 2 per connection.
        assert_eq!(connection_cap_within(10_000, Some(256)), 96);
        assert_eq!(connection_cap_within(50, Some(256)), 50);
        // Hardly any descriptors: still one connection.
        assert_eq!(connection_cap_within(10, Some(10)), 1);
    }
}
