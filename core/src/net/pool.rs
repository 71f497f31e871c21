//! A minimal HTTP/1.1 connection pool for outgoing requests (the client
//! transport's, and the plain fetches of `fetch`).
//!
//! hyper-util's pooled client keeps a connection open after its request
//! future is dropped until the response arrives, so the server never learns
//! that the call was abandoned. Here each in-flight request owns its
//! connection: dropping the request drops the connection, which closes the
//! socket — the Streamable HTTP cancellation signal. Finished connections go
//! back to the pool for keep-alive reuse.
//!
//! A connection has no task of its own: the request using it drives its
//! I/O ([`PooledConnection::drive`]) on whatever thread polls the request.
//! A driver task would cost every call a hop to it and back, and a caller
//! outside the runtime (a Python or C thread blocking on its call, an
//! asyncio loop sending the request at once) a wake-up of a runtime worker:
//! driven inline, the thread that sends the request writes it itself and
//! only the response's arrival wakes anyone.
//!
//! Connections come in two kinds, kept apart: the runtime's (waited on by
//! its reactor) and the host's: those of calls polled by a host thread that
//! waits for their sockets itself (blocking in `runtime::block_here`, or a
//! host event loop turning a `runtime::HostReactor`; `runtime::wait`). A call
//! takes the kind that matches where it is polled.

use crate::rpc::lock_unpoisoned;
use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use tokio::net::TcpStream;

use super::socket::ClientSocket;
use super::tls::TlsConnect;
use crate::{BoxFuture, Error};

/// Idle connections kept per endpoint.
const MAX_IDLE: usize = 64;

/// Connections a request is offered to when each gives it back unsent.
const SEND_ATTEMPTS: usize = 3;

/// What became of a request [`Pool::send`] sent.
pub(crate) enum Sent {
    /// The response's head, and the connection its body arrives on.
    Answered(PooledConnection, hyper::Response<hyper::body::Incoming>),
    /// The request failed once written (or on the last connection tried):
    /// it may have reached the server, so it is not sent again.
    Failed(PooledConnection, hyper::Error),
}

/// One HTTP/1.1 connection: the request handle and the connection's I/O.
pub(crate) struct PooledConnection {
    pub(crate) sender: SendRequest<Full<Bytes>>,
    driver: Driver,
    tls: bool,
    /// The socket, when host threads wait on it rather than the runtime's
    /// reactor: only calls polled by a host thread may take it.
    host: Option<i32>,
}

/// The connection's I/O future (hyper's `Connection`), polled inline.
enum Driver {
    Running(BoxFuture<Option<Error>>),
    /// The connection is closed, with the TLS failure that closed it, if any.
    Ended(Option<Error>),
}

impl Driver {
    /// Moves the connection's I/O on as far as it can go now.
    fn poll_io(&mut self, cx: &mut Context<'_>) {
        if let Driver::Running(io) = self
            && let Poll::Ready(failure) = io.as_mut().poll(cx)
        {
            *self = Driver::Ended(failure);
        }
    }
}

impl PooledConnection {
    /// Runs `work` (sending on this connection, reading a response body)
    /// while driving the connection's I/O, which `work` waits on.
    pub(crate) async fn drive<F: Future>(&mut self, work: F) -> F::Output {
        let mut work = std::pin::pin!(work);
        let driver = &mut self.driver;
        std::future::poll_fn(|cx| {
            if let Poll::Ready(out) = work.as_mut().poll(cx) {
                return Poll::Ready(out);
            }
            driver.poll_io(cx);
            // The I/O may have given `work` what it waited for (the request
            // written, the response head or a body frame read): take it now
            // rather than after the wake-up it scheduled.
            work.as_mut().poll(cx)
        })
        .await
    }

    /// Why a TLS connection died under a request: a TLS 1.3 server refusing
    /// the client certificate sends its alert after the handshake, and the
    /// request itself may only see "canceled" when the connection read it.
    /// Waits briefly for the connection to end (it already has, or nearly).
    pub(crate) async fn tls_failure(&mut self) -> Option<Error> {
        if !self.tls {
            return None;
        }
        let driver = &mut self.driver;
        let ended = std::future::poll_fn(|cx| {
            driver.poll_io(cx);
            match driver {
                Driver::Ended(failure) => Poll::Ready(failure.take()),
                Driver::Running(_) => Poll::Pending,
            }
        });
        tokio::time::timeout(std::time::Duration::from_millis(500), ended)
            .await
            .ok()
            .flatten()
    }

    /// Whether a new request can go on this connection. Lets the connection
    /// first take in what arrived while nobody drove it: the end of the
    /// previous response, or the server closing the connection (`idle`:
    /// it sat in the pool, where a close may have come).
    #[cfg_attr(not(target_os = "linux"), allow(unused_variables))]
    fn reusable(&mut self, idle: bool) -> bool {
        self.driver.poll_io(&mut Context::from_waker(Waker::noop()));
        // A blocking thread's socket is not read again until its poll(2)
        // says so, so the poll above may not have seen a close: an idle
        // connection has nothing to read unless the server closed it.
        #[cfg(target_os = "linux")]
        if idle
            && let Some(fd) = self.host
            && crate::runtime::wait::readable_now(fd)
        {
            return false;
        }
        matches!(self.driver, Driver::Running(_))
            && !self.sender.is_closed()
            && self.sender.is_ready()
    }
}

#[derive(Clone)]
pub(crate) struct Pool {
    host: String,
    port: u16,
    /// Set for `https://`: every new connection is wrapped before HTTP.
    tls: Option<TlsConnect>,
    idle: Arc<Mutex<Vec<PooledConnection>>>,
}

impl Pool {
    pub(crate) fn new(host: String, port: u16, tls: Option<TlsConnect>) -> Pool {
        Pool {
            host,
            port,
            tls,
            idle: Arc::default(),
        }
    }

    /// An idle connection that is still open, or a new one.
    pub(crate) async fn get(&self) -> Result<PooledConnection, Error> {
        let here = polled_by_host();
        loop {
            // Taken out first: the lock is not held while the connection is polled.
            let candidate = {
                let mut idle = lock_unpoisoned(&self.idle);
                let last = idle.iter().rposition(|conn| conn.host.is_some() == here);
                last.map(|at| idle.remove(at))
            };
            let Some(mut conn) = candidate else {
                break;
            };
            if conn.reusable(true) {
                return Ok(conn);
            }
        }
        // Boxed: connecting (and a TLS handshake) takes a large future,
        // which inline would be part of every request's, reused connection
        // or not, and copied with it.
        Box::pin(self.open(here)).await
    }

    /// A new connection, of the host's kind when `here`.
    async fn open(&self, here: bool) -> Result<PooledConnection, Error> {
        let stream = self.connect(here).await.map_err(|e| {
            Error::Http(format!(
                "cannot connect to {}:{}: {e}",
                self.host, self.port
            ))
        })?;
        let host = stream.host_fd();
        // hyper's connection type depends on the stream's: one arm each,
        // the request handle they give is the same.
        let target = format!("{}:{}", self.host, self.port);
        let (sender, driver) = match &self.tls {
            Some(tls) => handshake(tls.connect(stream).await?, target).await?,
            None => handshake(stream, target).await?,
        };
        Ok(PooledConnection {
            sender,
            driver,
            tls: self.tls.is_some(),
            host,
        })
    }

    /// A new connection: the host's kind when a host thread polls the call,
    /// else one of the runtime's.
    async fn connect(&self, here: bool) -> std::io::Result<ClientSocket> {
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        #[cfg(target_os = "linux")]
        if here {
            return super::socket::connect_here(host, self.port).await;
        }
        let _ = here;
        Ok(ClientSocket::new(
            TcpStream::connect((host, self.port)).await?,
        ))
    }

    /// Sends `request` on an idle connection or a new one. A request the
    /// connection gave back unwritten (the server closed a kept-alive
    /// connection just as the pool handed it out: hyper returns the request
    /// it never wrote) goes on another connection, at most
    /// [`SEND_ATTEMPTS`] in all: it cannot have reached the server, so it
    /// cannot run twice.
    pub(crate) async fn send(&self, request: hyper::Request<Full<Bytes>>) -> Result<Sent, Error> {
        let mut request = request;
        let mut attempt = 1;
        loop {
            let mut conn = self.get().await?;
            let sent = conn.sender.try_send_request(request);
            match conn.drive(sent).await {
                Ok(response) => return Ok(Sent::Answered(conn, response)),
                Err(mut failed) => match failed.take_message() {
                    Some(unsent) if attempt < SEND_ATTEMPTS => {
                        tracing::debug!(error = %failed.error(), "a pooled connection closed before the request was written: sending it on another");
                        request = unsent;
                        attempt += 1;
                    }
                    _ => return Ok(Sent::Failed(conn, failed.into_error())),
                },
            }
        }
    }

    /// Returns a connection whose response was read to the end.
    pub(crate) fn put(&self, mut conn: PooledConnection) {
        if !conn.reusable(false) {
            return;
        }
        let mut idle = lock_unpoisoned(&self.idle);
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }
}

/// Whether a host thread polls the call (in `runtime::block_here` or a
/// `runtime::HostReactor`) and waits for its sockets itself.
fn polled_by_host() -> bool {
    #[cfg(target_os = "linux")]
    return crate::runtime::wait::active();
    #[cfg(not(target_os = "linux"))]
    false
}

/// The HTTP/1.1 handshake over a connected stream, and the connection's
/// I/O future, to be driven by the requests that use it.
async fn handshake<S>(
    stream: S,
    target: String,
) -> Result<(SendRequest<Full<Bytes>>, Driver), Error>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| Error::Http(format!("HTTP handshake failed: {e}")))?;
    let io: BoxFuture<Option<Error>> = Box::pin(async move {
        let e = connection.await.err()?;
        tracing::debug!(error = %e, "HTTP client connection ended");
        super::tls::classify(&target, &e)
    });
    Ok((sender, Driver::Running(io)))
}
