//! One accepted connection: served by hyper's HTTP/1.1, watched for
//! hang-ups, and held to the listener's deadlines, so a client that sends
//! nothing, or its headers a byte at a time, cannot keep a connection (and
//! its descriptors and memory) forever.
//!
//! hyper's own `header_read_timeout` starts whenever it waits for a request
//! head, idle keep-alive included, so it cannot tell a slow client from a
//! quiet one. Here a connection is in one of four phases, each with its own
//! rule:
//!
//! - new (accepted, not a byte received yet): closed `header_read_timeout`
//!   after it was accepted. A client that connects and sends nothing is
//!   what fills the connection cap (issue #25), and a real client sends its
//!   request at once, so this is the short deadline, not the idle one;
//! - idle (no request, nothing received since the last response ended):
//!   closed after `idle_timeout`;
//! - reading a head (bytes arrived, hyper has not called the service yet):
//!   closed after `header_read_timeout` from the first byte;
//! - busy (a request is being answered, its response body included): never
//!   cut here, so SSE streams live as long as they stream; the body read has
//!   its own deadline in the endpoint.
//!
//! The listener may also ask a connection to close early, to admit a new
//! one at its connection cap (see `live.rs`): [`Activity::shed`] refuses
//! while busy, and a request that begins before the connection notices
//! withdraws the shed.

use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::embed::{ExchangeInfo, HttpEndpoint};
use super::hangup::Hangup;
use crate::rpc::lock_unpoisoned;

/// The deadlines of a connection's quiet phases.
#[derive(Debug, Clone, Copy)]
pub(super) struct Deadlines {
    pub(super) header_read: Duration,
    pub(super) idle: Duration,
}

/// Serves one connection until it ends, a deadline passes, the listener
/// sheds it (through `activity`), or shutdown (then gracefully: the request
/// in progress finishes).
#[allow(clippy::too_many_arguments)] // one connection's parts, handed over once
pub(super) async fn serve(
    endpoint: HttpEndpoint,
    deadlines: Deadlines,
    stream: TcpStream,
    tls: Option<TlsAcceptor>,
    peer: SocketAddr,
    hangup: Hangup,
    shutdown: CancellationToken,
    activity: Arc<Activity>,
) {
    let stream = match tls {
        None => Io::Plain(stream),
        Some(acceptor) => {
            tokio::select! {
                io = handshake(acceptor, stream, deadlines.header_read, peer) => match io {
                    Some(io) => io,
                    None => return,
                },
                _ = shutdown.cancelled() => return,
                _ = activity.shed_requested() => return,
            }
        }
    };
    let peer_gone = hangup.token().clone();
    let service_activity = activity.clone();
    let service = service_fn(move |req: http::Request<Incoming>| {
        let endpoint = endpoint.clone();
        let peer_gone = peer_gone.clone();
        // Taken before the handler runs: dropped with the response body
        // (or with this future, if hyper drops it).
        let busy = service_activity.begin();
        async move {
            let info = ExchangeInfo {
                peer: Some(peer.ip()),
                client_gone: Some(peer_gone),
            };
            let response = endpoint.handle_with(req, info).await;
            Ok::<_, Infallible>(response.map(|body| Tracked { body, _busy: busy }))
        }
    });
    let io = Watched {
        stream,
        activity: activity.clone(),
    };
    let conn = http1::Builder::new()
        .keep_alive(true)
        .serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    loop {
        let (wake, _) = activity.next_check(deadlines, Instant::now());
        tokio::select! {
            biased;
            // Before the connection: once shed it must not be polled again,
            // or a request could begin only to be cut (see `Activity::shed`).
            _ = activity.shed_requested() => {
                if activity.is_shedding() {
                    tracing::debug!(%peer, "closing a connection to admit a new one");
                    break;
                }
            }
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(error = %e, "HTTP connection ended with an error");
                }
                break;
            }
            _ = shutdown.cancelled() => {
                conn.as_mut().graceful_shutdown();
                let _ = conn.await;
                break;
            }
            _ = tokio::time::sleep_until(wake) => {
                // The phase may have changed while asleep: judge it as it
                // is now.
                let now = Instant::now();
                if activity.next_check(deadlines, now).1.is_some_and(|due| due <= now) {
                    tracing::debug!(%peer, phase = activity.phase_name(), "closing a quiet HTTP connection");
                    break;
                }
            }
        }
    }
    // Before the connection's descriptor closes: stop watching it.
    drop(hangup);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Accepted at this instant; not a byte received since.
    New(Instant),
    /// No request since this instant.
    Idle(Instant),
    /// The first byte of a request head arrived at this instant.
    ReadingHead(Instant),
    /// This many requests are being answered (more than one only while a
    /// pipelined request starts before the previous body is dropped).
    Busy(usize),
}

impl Phase {
    /// How readily a connection in this phase may be shed, and since when;
    /// `None` while busy (never shed).
    fn shed_class(self) -> Option<(ShedClass, Instant)> {
        match self {
            Phase::New(since) => Some((ShedClass::New, since)),
            Phase::Idle(since) => Some((ShedClass::Idle, since)),
            Phase::ReadingHead(since) => Some((ShedClass::ReadingHead, since)),
            Phase::Busy(_) => None,
        }
    }
}

/// How readily a connection is closed to admit a new one at the cap, most
/// readily first (the derived order is the order of the variants).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum ShedClass {
    /// Never sent a byte: the likeliest to be a client that never will.
    New,
    /// Kept alive after a request: the client can open another.
    Idle,
    /// Part of a request head received: maybe a slow client, maybe a
    /// slowloris; a real request is lost, so these go last.
    ReadingHead,
}

impl ShedClass {
    pub(super) fn name(self) -> &'static str {
        match self {
            ShedClass::New => "never used",
            ShedClass::Idle => "idle",
            ShedClass::ReadingHead => "reading a request head",
        }
    }
}

/// What the listener sees of a connection when choosing one to shed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Standing {
    /// Asked to close, not closed yet: its slot is about to free.
    Shedding,
    /// Answering a request (its response body included, so a stream):
    /// never cut for a newcomer.
    Busy,
    /// May be closed: how readily, and when its current phase began (the
    /// older goes first).
    Sheddable(ShedClass, Instant),
}

/// A phase, and whether the listener has asked the connection to close.
#[derive(Debug, Clone, Copy)]
struct State {
    phase: Phase,
    shed: bool,
}

/// Which phase a connection is in, updated by its reads and its service,
/// and read by the listener choosing a connection to shed.
///
/// Nothing wakes the connection's loop when the phase changes: that would
/// re-arm its timer on every request. The loop looks at the phase when its
/// timer fires, and the timer never sleeps past a deadline the phase could
/// have reached since (see [`Activity::next_check`]).
pub(super) struct Activity {
    state: Mutex<State>,
    /// Wakes the connection's loop when the listener sheds it.
    shed_wake: Notify,
}

impl Activity {
    /// A connection accepted now.
    pub(super) fn new() -> Activity {
        Activity {
            state: Mutex::new(State {
                phase: Phase::New(Instant::now()),
                shed: false,
            }),
            shed_wake: Notify::new(),
        }
    }

    fn phase(&self) -> Phase {
        lock_unpoisoned(&self.state).phase
    }

    fn phase_name(&self) -> &'static str {
        match self.phase() {
            Phase::New(_) => "never used",
            Phase::Idle(_) => "idle",
            Phase::ReadingHead(_) => "reading request head",
            Phase::Busy(_) => "busy",
        }
    }

    pub(super) fn bytes_arrived(&self) {
        let mut state = lock_unpoisoned(&self.state);
        if let Phase::New(_) | Phase::Idle(_) = state.phase {
            state.phase = Phase::ReadingHead(Instant::now());
        }
    }

    pub(super) fn begin(self: &Arc<Self>) -> BusyGuard {
        let mut state = lock_unpoisoned(&self.state);
        state.phase = match state.phase {
            Phase::Busy(n) => Phase::Busy(n + 1),
            _ => Phase::Busy(1),
        };
        // A request that began after the listener chose this connection
        // wins: the listener sees the shed withdrawn and picks another.
        state.shed = false;
        BusyGuard(self.clone())
    }

    fn end(&self) {
        let mut state = lock_unpoisoned(&self.state);
        state.phase = match state.phase {
            Phase::Busy(n) if n > 1 => Phase::Busy(n - 1),
            _ => Phase::Idle(Instant::now()),
        };
    }

    /// Whether, and how readily, this connection may be closed to admit
    /// another (one lock: the listener asks every connection at the cap).
    pub(super) fn standing(&self) -> Standing {
        let state = lock_unpoisoned(&self.state);
        if state.shed {
            return Standing::Shedding;
        }
        match state.phase.shed_class() {
            Some((class, since)) => Standing::Sheddable(class, since),
            None => Standing::Busy,
        }
    }

    /// Asks the connection to close, unless it is busy by now; returns the
    /// class it was shed as. Checked and marked under one lock, so a
    /// request cannot have begun in between; one that begins before the
    /// connection's loop notices withdraws the shed (see `begin`).
    pub(super) fn shed(&self) -> Option<ShedClass> {
        let mut state = lock_unpoisoned(&self.state);
        let (class, _) = state.phase.shed_class()?;
        if state.shed {
            return None;
        }
        state.shed = true;
        drop(state);
        // `notify_one` keeps a permit if the loop is not waiting right now.
        self.shed_wake.notify_one();
        Some(class)
    }

    /// Whether the listener asked this connection to close and it still
    /// should (no request began since).
    pub(super) fn is_shedding(&self) -> bool {
        lock_unpoisoned(&self.state).shed
    }

    /// Resolves when the listener sheds the connection; a request that
    /// began since may have withdrawn the shed (see [`Activity::is_shedding`]).
    async fn shed_requested(&self) {
        self.shed_wake.notified().await;
    }

    /// When to look again, and when the connection is due to close (`None`
    /// while busy). The phase may change while the loop sleeps (nothing
    /// wakes it), and a deadline a change starts is at least one header or
    /// idle timeout after the change: a head is due one header timeout
    /// after its first byte, an idle connection one idle timeout after its
    /// request ended. So the loop wakes at the current deadline or one of
    /// those timeouts from now, whichever comes first, and never sleeps past
    /// a deadline. (A new connection's own deadline, one header timeout
    /// after the accept, comes no later than its first head's.)
    fn next_check(&self, deadlines: Deadlines, now: Instant) -> (Instant, Option<Instant>) {
        let due = match self.phase() {
            Phase::New(since) | Phase::ReadingHead(since) => {
                Some(later(since, deadlines.header_read))
            }
            Phase::Idle(since) => Some(later(since, deadlines.idle)),
            Phase::Busy(_) => None,
        };
        let soonest_change = later(now, deadlines.header_read.min(deadlines.idle));
        (
            due.map_or(soonest_change, |due| due.min(soonest_change)),
            due,
        )
    }
}

/// `at + by`, saturating far in the future (a huge timeout disables it).
fn later(at: Instant, by: Duration) -> Instant {
    at.checked_add(by)
        .unwrap_or_else(|| at + Duration::from_secs(100 * 365 * 24 * 3600))
}

/// Marks a request in progress until dropped.
pub(super) struct BusyGuard(Arc<Activity>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// A response body that keeps its connection busy until hyper drops it.
pub(super) struct Tracked<B> {
    body: B,
    _busy: BusyGuard,
}

impl<B: Body + Unpin> Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The connection's stream, noting when request bytes arrive.
/// What a connection reads and writes: the socket, or TLS over it.
enum Io {
    Plain(TcpStream),
    #[cfg(feature = "tls")]
    Tls(Box<tokio_rustls::server::TlsStream<TcpStream>>),
}

#[cfg(feature = "tls")]
pub(super) type TlsAcceptor = tokio_rustls::TlsAcceptor;

/// Without the `tls` feature there is no acceptor to give.
#[cfg(not(feature = "tls"))]
#[derive(Clone)]
pub(super) enum TlsAcceptor {}

/// The TLS side of a new connection: the handshake, within the deadline of
/// a new connection (as a request head would be), so a client that
/// connects and stalls holds nothing for long; `None` if it failed.
#[cfg(feature = "tls")]
async fn handshake(
    acceptor: TlsAcceptor,
    stream: TcpStream,
    deadline: Duration,
    peer: SocketAddr,
) -> Option<Io> {
    match tokio::time::timeout(deadline, acceptor.accept(stream)).await {
        Ok(Ok(tls)) => Some(Io::Tls(Box::new(tls))),
        Ok(Err(e)) => {
            tracing::debug!(%peer, error = %e, "TLS handshake failed");
            None
        }
        Err(_) => {
            tracing::debug!(%peer, "TLS handshake timed out");
            None
        }
    }
}

#[cfg(not(feature = "tls"))]
async fn handshake(acceptor: TlsAcceptor, _: TcpStream, _: Duration, _: SocketAddr) -> Option<Io> {
    match acceptor {}
}

macro_rules! both {
    ($io:expr, $s:ident => $e:expr) => {
        match $io {
            Io::Plain($s) => $e,
            #[cfg(feature = "tls")]
            Io::Tls($s) => $e,
        }
    };
}

impl AsyncRead for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        both!(self.get_mut(), s => Pin::new(s).poll_read(cx, buf))
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        both!(self.get_mut(), s => Pin::new(s).poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        both!(self.get_mut(), s => Pin::new(s).poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        both!(self, s => s.is_write_vectored())
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        both!(self.get_mut(), s => Pin::new(s).poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        both!(self.get_mut(), s => Pin::new(s).poll_shutdown(cx))
    }
}

struct Watched {
    stream: Io,
    activity: Arc<Activity>,
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let result = Pin::new(&mut this.stream).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.bytes_arrived();
        }
        result
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.get_mut().stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const D: Deadlines = Deadlines {
        header_read: Duration::from_secs(10),
        idle: Duration::from_secs(60),
    };

    #[test]
    fn each_phase_has_its_own_deadline() {
        let activity = Arc::new(Activity::new());
        let Phase::New(accepted) = activity.phase() else {
            panic!("a connection starts new")
        };
        // new: due one header timeout after the accept, not the idle one
        assert_eq!(
            activity.next_check(D, accepted),
            (accepted + D.header_read, Some(accepted + D.header_read))
        );
        activity.bytes_arrived();
        let Phase::ReadingHead(first_byte) = activity.phase() else {
            panic!("bytes start a head")
        };
        assert_eq!(
            activity.next_check(D, first_byte).1,
            Some(first_byte + D.header_read)
        );
        // busy (two pipelined requests): no deadline until both end
        let a = activity.begin();
        let b = activity.begin();
        // (checked every header timeout: the request may end, and a new
        // head start, at any moment)
        let now = Instant::now();
        assert_eq!(activity.next_check(D, now), (now + D.header_read, None));
        drop(a);
        assert_eq!(activity.next_check(D, now), (now + D.header_read, None));
        drop(b);
        let Phase::Idle(start) = activity.phase() else {
            panic!("a connection whose requests ended is idle")
        };
        // idle (after a request): due after the idle timeout, checked at
        // least every header timeout
        let (wake, due) = activity.next_check(D, start);
        assert_eq!(due, Some(start + D.idle));
        assert_eq!(wake, start + D.header_read);
    }

    #[test]
    fn a_busy_connection_is_never_shed_and_a_request_withdraws_a_shed() {
        let activity = Arc::new(Activity::new());
        let class = |a: &Activity| match a.standing() {
            Standing::Sheddable(class, _) => Some(class),
            _ => None,
        };
        assert_eq!(class(&activity), Some(ShedClass::New));
        let busy = activity.begin();
        assert_eq!(activity.standing(), Standing::Busy);
        assert_eq!(activity.shed(), None);
        drop(busy);
        assert_eq!(class(&activity), Some(ShedClass::Idle));
        assert_eq!(activity.shed(), Some(ShedClass::Idle));
        assert!(activity.is_shedding());
        // once chosen it is not chosen again
        assert_eq!(activity.standing(), Standing::Shedding);
        assert_eq!(activity.shed(), None);
        // a request that begins before the loop notices keeps it open
        let busy = activity.begin();
        assert!(!activity.is_shedding());
        drop(busy);
        activity.bytes_arrived();
        assert_eq!(class(&activity), Some(ShedClass::ReadingHead));
    }
}
