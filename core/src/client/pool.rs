//! A minimal HTTP/1.1 connection pool for the client transport.
//!
//! hyper-util's pooled client keeps a connection open after its request
//! future is dropped until the response arrives, so the server never learns
//! that the call was abandoned. Here each in-flight request owns its
//! connection: dropping the request drops the connection, which closes the
//! socket — the Streamable HTTP cancellation signal. Finished connections go
//! back to the pool for keep-alive reuse.

use crate::rpc::lock_unpoisoned;
use bytes::Bytes;
use http_body_util::Full;
use hyper::client::conn::http1::{self, SendRequest};
use hyper_util::rt::TokioIo;
use std::sync::{Arc, Mutex};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

use super::tls::TlsConnect;
use crate::Error;

/// Idle connections kept per endpoint.
const MAX_IDLE: usize = 64;

/// One HTTP/1.1 connection: the request handle and the task driving it.
pub(crate) struct PooledConnection {
    pub(crate) sender: SendRequest<Full<Bytes>>,
    /// Ends with the TLS failure that closed the connection, if any.
    driver: JoinHandle<Option<Error>>,
    tls: bool,
}

impl PooledConnection {
    /// Why a TLS connection died under a request: a TLS 1.3 server refusing
    /// the client certificate sends its alert after the handshake, and the
    /// request itself may only see "canceled" when the driver task read it.
    /// Waits briefly for the driver to finish (it already is, or nearly).
    pub(crate) async fn tls_failure(&mut self) -> Option<Error> {
        if !self.tls {
            return None;
        }
        tokio::time::timeout(std::time::Duration::from_millis(500), &mut self.driver)
            .await
            .ok()
            .and_then(Result::ok)
            .flatten()
    }
}

impl Drop for PooledConnection {
    fn drop(&mut self) {
        // Closing the socket is what tells the server the request is over.
        self.driver.abort();
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
        loop {
            let candidate = lock_unpoisoned(&self.idle).pop();
            match candidate {
                Some(conn) if !conn.sender.is_closed() && conn.sender.is_ready() => {
                    return Ok(conn);
                }
                Some(_) => continue,
                None => break,
            }
        }
        let host = self.host.trim_start_matches('[').trim_end_matches(']');
        let stream = TcpStream::connect((host, self.port)).await.map_err(|e| {
            Error::Http(format!(
                "cannot connect to {}:{}: {e}",
                self.host, self.port
            ))
        })?;
        let _ = stream.set_nodelay(true);
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
        })
    }

    /// Returns a connection whose response was read to the end.
    pub(crate) fn put(&self, conn: PooledConnection) {
        if conn.sender.is_closed() {
            return;
        }
        let mut idle = lock_unpoisoned(&self.idle);
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
    }
}

/// The HTTP/1.1 handshake over a connected stream, and the task driving it.
async fn handshake<S>(
    stream: S,
    target: String,
) -> Result<(SendRequest<Full<Bytes>>, JoinHandle<Option<Error>>), Error>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let (sender, connection) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| Error::Http(format!("HTTP handshake failed: {e}")))?;
    let driver = tokio::spawn(async move {
        let e = connection.await.err()?;
        tracing::debug!(error = %e, "HTTP client connection ended");
        super::tls::classify(&target, &e)
    });
    Ok((sender, driver))
}
