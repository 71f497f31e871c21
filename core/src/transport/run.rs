//! Serving until the process is told to stop: SIGTERM or SIGINT (Ctrl-C)
//! starts a graceful shutdown of either transport.
//!
//! On a signal the transport stops reading (stdio) or accepting (HTTP),
//! open `subscriptions/listen` streams end with their completion result,
//! and requests in flight get a grace period (10 s by default:
//! [`StdioOptions::drain_grace`], the HTTP listener's drain) before they are
//! cancelled. These helpers install process-wide signal handlers, which is
//! what a server binary wants; a program that owns its signals calls
//! `serve_stdio_until` / `serve_http` with its own token instead.

use tokio_util::sync::CancellationToken;

use super::http::HttpOptions;
use super::stdio::StdioOptions;
use crate::Error;
use crate::server::Server;

/// A token cancelled on the first SIGTERM or SIGINT this process receives.
/// Must be called inside a tokio runtime. The handlers stay installed for
/// the life of the process (tokio's rule), so later signals do nothing:
/// the grace period bounds how long shutdown takes.
///
/// ```no_run
/// # async fn run(server: ferromcp::server::Server) -> Result<(), ferromcp::Error> {
/// let stop = ferromcp::transport::shutdown_on_signals()?;
/// server.serve_stdio_until(stop).await
/// # }
/// ```
#[cfg(unix)]
pub fn shutdown_on_signals() -> Result<CancellationToken, Error> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        let name = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        };
        tracing::info!(signal = name, "shutting down");
        cancel.cancel();
        // Keep the streams (and so the handlers) registered: a second
        // signal must not fall back to the default action mid-drain.
        let _keep = (term, int);
        std::future::pending::<()>().await;
    });
    Ok(token)
}

/// A token cancelled on the first Ctrl+C or Ctrl+Break (SIGINT's
/// counterparts), or when the console closes or the system shuts down (what
/// Windows sends where Unix sends SIGTERM). As on Unix, the handlers stay
/// installed for the life of the process.
///
/// ```no_run
/// # async fn run(server: ferromcp::server::Server) -> Result<(), ferromcp::Error> {
/// let stop = ferromcp::transport::shutdown_on_signals()?;
/// server.serve_stdio_until(stop).await
/// # }
/// ```
#[cfg(windows)]
pub fn shutdown_on_signals() -> Result<CancellationToken, Error> {
    use tokio::signal::windows::{ctrl_break, ctrl_c, ctrl_close, ctrl_shutdown};
    let mut c = ctrl_c()?;
    let mut brk = ctrl_break()?;
    let mut close = ctrl_close()?;
    let mut shutdown = ctrl_shutdown()?;
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        let name = tokio::select! {
            _ = c.recv() => "Ctrl+C",
            _ = brk.recv() => "Ctrl+Break",
            _ = close.recv() => "console closed",
            _ = shutdown.recv() => "system shutdown",
        };
        tracing::info!(signal = name, "shutting down");
        cancel.cancel();
        let _keep = (c, brk, close, shutdown);
        std::future::pending::<()>().await;
    });
    Ok(token)
}

impl Server {
    /// Serves stdin/stdout until EOF, SIGTERM or SIGINT, then shuts down
    /// gracefully (see the module docs).
    ///
    /// ```no_run
    /// #[tokio::main]
    /// async fn main() -> Result<(), ferromcp::Error> {
    ///     let server = ferromcp::server::Server::new("demo", "1.0.0");
    ///     server.run_stdio().await
    /// }
    /// ```
    pub async fn run_stdio(&self) -> Result<(), Error> {
        let stop = shutdown_on_signals()?;
        self.serve_stdio_with(StdioOptions::default(), stop).await
    }

    /// Serves Streamable HTTP until SIGTERM or SIGINT (or
    /// `options.shutdown`), then shuts down gracefully.
    ///
    /// ```no_run
    /// # async fn run(server: ferromcp::server::Server) -> Result<(), ferromcp::Error> {
    /// use ferromcp::transport::http::HttpOptions;
    /// server.run_http(HttpOptions::localhost(8000)).await
    /// # }
    /// ```
    pub async fn run_http(&self, options: HttpOptions) -> Result<(), Error> {
        let stop = shutdown_on_signals()?;
        let shutdown = options.shutdown.clone();
        let relay = tokio::spawn(async move {
            stop.cancelled().await;
            shutdown.cancel();
        });
        let served = self.serve_http(options).await;
        relay.abort();
        served
    }
}
