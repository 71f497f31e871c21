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

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
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
    let term = signal(SignalKind::terminate())?;
    let int = signal(SignalKind::interrupt())?;
    Ok(cancel_on_first(vec![
        ("SIGTERM", Box::new(term)),
        ("SIGINT", Box::new(int)),
    ]))
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
    Ok(cancel_on_first(vec![
        ("Ctrl+C", Box::new(ctrl_c()?)),
        ("Ctrl+Break", Box::new(ctrl_break()?)),
        ("console closed", Box::new(ctrl_close()?)),
        ("system shutdown", Box::new(ctrl_shutdown()?)),
    ]))
}

/// A source of one kind of signal (tokio's per-platform listeners).
trait Arrivals: Send + 'static {
    /// The next arrival; `None` when no more can come.
    fn next(&mut self) -> Pin<Box<dyn Future<Output = Option<()>> + Send + '_>>;
}

/// tokio's listeners, each with its own `recv`.
macro_rules! arrivals {
    ($($listener:ty),*) => {$(
        impl Arrivals for $listener {
            fn next(&mut self) -> Pin<Box<dyn Future<Output = Option<()>> + Send + '_>> {
                Box::pin(self.recv())
            }
        }
    )*};
}

#[cfg(unix)]
arrivals!(tokio::signal::unix::Signal);
#[cfg(windows)]
arrivals!(
    tokio::signal::windows::CtrlC,
    tokio::signal::windows::CtrlBreak,
    tokio::signal::windows::CtrlClose,
    tokio::signal::windows::CtrlShutdown
);

/// A signal's name and its listener.
type Listener = (&'static str, Box<dyn Arrivals>);

/// A token cancelled at the first arrival on any of `listeners`, logged by
/// name. Shared by every platform, so the Unix tests run what Windows does.
/// The listeners are kept for the life of the process: dropped, their
/// handlers would go, and a second signal mid-drain would take its default
/// action (ending the process) instead of doing nothing.
fn cancel_on_first(listeners: Vec<Listener>) -> CancellationToken {
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        let mut listeners = listeners;
        let name = first_arrival(&mut listeners).await;
        tracing::info!(signal = name, "shutting down");
        cancel.cancel();
        let _keep = listeners;
        std::future::pending::<()>().await;
    });
    token
}

/// The name of the first listener to report an arrival (or its end).
async fn first_arrival(listeners: &mut [Listener]) -> &'static str {
    let mut waits: Vec<_> = listeners
        .iter_mut()
        .map(|(name, listener)| (*name, listener.next()))
        .collect();
    std::future::poll_fn(|cx| {
        for (name, wait) in &mut waits {
            if wait.as_mut().poll(cx).is_ready() {
                return Poll::Ready(*name);
            }
        }
        Poll::Pending
    })
    .await
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
        // The process is about to end: the last spans go out first.
        crate::telemetry::flush_async(std::time::Duration::from_secs(5)).await;
        served
    }
}

#[cfg(test)]
mod tests {
    use super::{Arrivals, cancel_on_first};
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Duration;
    use tokio::sync::mpsc;

    /// A listener the test raises by hand; records being dropped.
    struct Fake {
        arrivals: mpsc::UnboundedReceiver<()>,
        dropped: Arc<AtomicBool>,
    }

    impl Arrivals for Fake {
        fn next(&mut self) -> Pin<Box<dyn Future<Output = Option<()>> + Send + '_>> {
            Box::pin(self.arrivals.recv())
        }
    }

    impl Drop for Fake {
        fn drop(&mut self) {
            self.dropped.store(true, Ordering::SeqCst);
        }
    }

    fn fake() -> (
        mpsc::UnboundedSender<()>,
        Arc<AtomicBool>,
        Box<dyn Arrivals>,
    ) {
        let (raise, arrivals) = mpsc::unbounded_channel();
        let dropped = Arc::new(AtomicBool::new(false));
        let listener = Fake {
            arrivals,
            dropped: dropped.clone(),
        };
        (raise, dropped, Box::new(listener))
    }

    /// What each platform's `shutdown_on_signals` runs, Windows' four
    /// console events included: any one cancels, and every listener stays
    /// (its handler installed) afterwards.
    #[tokio::test]
    async fn the_first_signal_of_any_kind_cancels_and_every_listener_is_kept() {
        let (_c, c_dropped, c) = fake();
        let (close, close_dropped, closed) = fake();
        let token = cancel_on_first(vec![("Ctrl+C", c), ("console closed", closed)]);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!token.is_cancelled(), "nothing was raised yet");
        close.send(()).unwrap();
        tokio::time::timeout(Duration::from_secs(10), token.cancelled())
            .await
            .expect("cancelled by the second listener");
        // A second signal finds the listeners still there.
        close.send(()).unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!c_dropped.load(Ordering::SeqCst));
        assert!(!close_dropped.load(Ordering::SeqCst));
    }
}
