//! An outgoing TCP connection (the connection pool's): either a tokio `TcpStream`, waited on by
//! the runtime's reactor, or (on Linux) a socket the polling thread waits
//! on itself, for calls polled by `runtime::block_here` or a
//! `runtime::HostReactor` (`runtime::wait`).
//! Either way its writes cannot raise `SIGPIPE`.
//!
//! A request's connection is driven by whichever thread polls the request
//! (`pool::PooledConnection::drive`): a runtime worker, but also a C or
//! Python thread blocking on its call. Writing to a connection the server
//! has reset raises `SIGPIPE` in the writing thread, and a C host keeps the
//! default action, which ends the process. The runtime's own threads block
//! the signal (`runtime::block_sigpipe`); a host's thread must be left as
//! the host set it, so the write itself asks for no signal
//! (`MSG_NOSIGNAL`) and fails with `EPIPE` instead. hyper writes with
//! vectored writes, hence `sendmsg` rather than `send`.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::net::TcpStream;

/// A connected client socket (see the module documentation).
pub(crate) enum ClientSocket {
    Runtime(TcpStream),
    /// Waited on by the thread polling it (`runtime::wait`).
    #[cfg(target_os = "linux")]
    Host(HostSocket),
}

/// A non-blocking socket and what it last said would block: it is not
/// tried again (a wasted system call each time the call is polled for
/// another reason) before the waiting thread's `poll(2)` says it is ready.
#[cfg(target_os = "linux")]
pub(crate) struct HostSocket {
    stream: std::net::TcpStream,
    read_blocked: bool,
    write_blocked: bool,
}

impl ClientSocket {
    pub(crate) fn new(stream: TcpStream) -> ClientSocket {
        // Requests are small and answered one by one: no Nagle delay.
        let _ = stream.set_nodelay(true);
        #[cfg(target_vendor = "apple")]
        if let Err(e) = no_sigpipe(&stream) {
            tracing::debug!(error = %e, "SO_NOSIGPIPE refused; a reset may raise SIGPIPE");
        }
        ClientSocket::Runtime(stream)
    }

    /// The socket, when host threads wait on it (`runtime::block_here`, a
    /// `runtime::HostReactor`), not the runtime's reactor.
    pub(crate) fn host_fd(&self) -> Option<i32> {
        match self {
            ClientSocket::Runtime(_) => None,
            #[cfg(target_os = "linux")]
            ClientSocket::Host(host) => Some(std::os::fd::AsRawFd::as_raw_fd(&host.stream)),
        }
    }

    fn poll_send(&mut self, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
        match self {
            ClientSocket::Runtime(stream) => loop {
                ready!(stream.poll_write_ready(cx))?;
                // `try_io` clears the write readiness on `WouldBlock`, so the
                // next `poll_write_ready` waits for the socket to drain.
                match stream.try_io(Interest::WRITABLE, || send_no_signal(stream, bufs)) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                    done => return Poll::Ready(done),
                }
            },
            #[cfg(target_os = "linux")]
            ClientSocket::Host(host) => {
                let stream = &host.stream;
                host_io(stream, &mut host.write_blocked, libc::POLLOUT, || {
                    send_no_signal(stream, bufs)
                })
            }
        }
    }
}

/// One non-blocking operation on a host socket; on `WouldBlock` the thread
/// polling it is asked to wait for `events` on it.
#[cfg(target_os = "linux")]
fn host_io<T>(
    stream: &std::net::TcpStream,
    blocked: &mut bool,
    events: libc::c_short,
    mut op: impl FnMut() -> io::Result<T>,
) -> Poll<io::Result<T>> {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    let wait = || {
        if crate::runtime::wait::wait_for(fd, events) {
            Poll::Pending
        } else {
            // Nobody would wake the poll: a bug, reported rather than left
            // hanging.
            Poll::Ready(Err(io::Error::other(
                "a host-polled connection was polled outside runtime::block_here or a HostReactor",
            )))
        }
    };
    if *blocked && !crate::runtime::wait::reported_ready(fd, events) {
        return wait();
    }
    loop {
        match op() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                *blocked = true;
                return wait();
            }
            done => {
                *blocked = false;
                return Poll::Ready(done);
            }
        }
    }
}

/// Connects a socket for calls polled by `runtime::block_here` or a
/// `runtime::HostReactor`: connected from the polling thread, which waits
/// for the connection to complete itself.
#[cfg(target_os = "linux")]
pub(crate) async fn connect_here(host: &str, port: u16) -> io::Result<ClientSocket> {
    // Looked up on the runtime's blocking pool (an address literal needs no
    // lookup): the polling thread may be a host's event loop, which must
    // not block.
    let mut last = None;
    for address in tokio::net::lookup_host((host, port)).await? {
        match connect_one(address).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(ClientSocket::Host(HostSocket {
                    stream,
                    read_blocked: false,
                    write_blocked: false,
                }));
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address found")))
}

#[cfg(target_os = "linux")]
async fn connect_one(address: std::net::SocketAddr) -> io::Result<std::net::TcpStream> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(
        Domain::for_address(address),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    socket.set_nonblocking(true)?;
    match socket.connect(&address.into()) {
        Ok(()) => return Ok(socket.into()),
        Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
        Err(e) => return Err(e),
    }
    let stream: std::net::TcpStream = socket.into();
    // Connected once writable; `peer_addr` tells a finished connection
    // from one still in progress (a wake-up for another reason).
    std::future::poll_fn(|_| {
        if let Some(e) = stream.take_error()? {
            return Poll::Ready(Err(e));
        }
        match stream.peer_addr() {
            Ok(_) => Poll::Ready(Ok(())),
            Err(e) if e.kind() == io::ErrorKind::NotConnected => {
                let mut blocked = false;
                host_io(&stream, &mut blocked, libc::POLLOUT, || {
                    Err::<(), _>(io::ErrorKind::WouldBlock.into())
                })
            }
            Err(e) => Poll::Ready(Err(e)),
        }
    })
    .await?;
    Ok(stream)
}

/// One `sendmsg(MSG_NOSIGNAL)`, for either kind of socket.
#[cfg(target_os = "linux")]
fn send_no_signal(stream: &impl std::os::fd::AsFd, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    socket2::SockRef::from(stream).send_vectored_with_flags(bufs, libc::MSG_NOSIGNAL)
}

/// Elsewhere the plain write: Windows has no SIGPIPE, and macOS's sockets
/// were told not to raise it when made (`no_sigpipe`).
#[cfg(not(target_os = "linux"))]
fn send_no_signal(stream: &TcpStream, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    send_plain(stream, bufs)
}

/// One plain vectored write: the send of every platform but Linux, built
/// on Linux for the tests too, so that it is run there.
#[cfg(any(test, not(target_os = "linux")))]
fn send_plain(stream: &TcpStream, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    stream.try_write_vectored(bufs)
}

/// macOS has no `MSG_NOSIGNAL`; the socket itself is told, once, to fail
/// its writes with `EPIPE` rather than raise SIGPIPE, which a C host's
/// thread polling the call would die of (see the module documentation).
#[cfg(target_vendor = "apple")]
fn no_sigpipe(stream: &TcpStream) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let on: libc::c_int = 1;
    // SAFETY: the option value points at a live c_int of the size given;
    // the descriptor is open, owned by `stream`.
    let rc = unsafe {
        libc::setsockopt(
            stream.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_NOSIGPIPE,
            (&raw const on).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

impl AsyncRead for ClientSocket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match &mut *self {
            ClientSocket::Runtime(stream) => Pin::new(stream).poll_read(cx, buf),
            #[cfg(target_os = "linux")]
            ClientSocket::Host(host) => {
                let stream = &host.stream;
                // Read into the buffer's uninitialised part: `recv` only
                // writes what it returns, so nothing needs zeroing first.
                let unfilled = buf.remaining();
                let read = ready!(host_io(
                    stream,
                    &mut host.read_blocked,
                    libc::POLLIN,
                    // SAFETY: `recv` never de-initialises the bytes it is given.
                    || socket2::SockRef::from(stream).recv(unsafe { buf.unfilled_mut() })
                ))?;
                // SAFETY: `recv` initialised the first `read` bytes.
                unsafe { buf.assume_init(read) };
                buf.advance(read);
                // A short read emptied the socket's receive queue (as tokio
                // assumes for its own sockets): the next read waits for
                // `poll(2)` instead of costing a system call that would
                // only say `EAGAIN`. `poll(2)` is level-triggered, so a byte
                // that arrived in between is reported at once.
                if read > 0 && read < unfilled {
                    host.read_blocked = true;
                    crate::runtime::wait::forget_ready(
                        std::os::fd::AsRawFd::as_raw_fd(stream),
                        libc::POLLIN,
                    );
                }
                Poll::Ready(Ok(()))
            }
        }
    }
}

impl AsyncWrite for ClientSocket {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_send(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.poll_send(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Nothing is buffered here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut *self {
            ClientSocket::Runtime(stream) => Pin::new(stream).poll_shutdown(cx),
            #[cfg(target_os = "linux")]
            ClientSocket::Host(host) => {
                Poll::Ready(match host.stream.shutdown(std::net::Shutdown::Write) {
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => Ok(()),
                    done => done,
                })
            }
        }
    }
}

#[cfg(test)]
mod portable_tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// The send of other platforms than Linux writes every buffer, and
    /// fails (rather than succeeding silently) once the peer is gone.
    #[tokio::test]
    async fn the_portable_send_writes_vectored_and_fails_once_the_peer_is_gone() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let stream = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let (mut accepted, _) = listener.accept().await.unwrap();
        let bufs = [IoSlice::new(b"hello "), IoSlice::new(b"world")];
        stream.writable().await.unwrap();
        assert_eq!(send_plain(&stream, &bufs).unwrap(), 11);
        let mut read = [0u8; 11];
        accepted.read_exact(&mut read).await.unwrap();
        assert_eq!(&read, b"hello world");
        drop(accepted);
        // The first write after the close draws a reset, the next ones fail.
        let failed = tokio::time::timeout(std::time::Duration::from_secs(10), async {
            loop {
                stream.writable().await.unwrap();
                match send_plain(&stream, &bufs) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return e,
                    Ok(_) => tokio::time::sleep(std::time::Duration::from_millis(10)).await,
                }
            }
        })
        .await
        .expect("a write fails once the peer is gone");
        assert!(
            matches!(
                failed.kind(),
                io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
            ),
            "{failed}"
        );
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    const CHILD: &str = "FERROMCP_SIGPIPE_TEST_CHILD";

    /// With SIGPIPE at its default action (as in a C host), writing to a
    /// connection the peer reset fails with an error instead of ending the
    /// process. The default action is process-wide, so the writing runs in
    /// a child process: this test binary again, running only this test.
    #[test]
    fn writing_to_a_reset_connection_fails_without_sigpipe() {
        if std::env::var_os(CHILD).is_some() {
            return write_to_a_reset_connection();
        }
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "net::socket::tests::writing_to_a_reset_connection_fails_without_sigpipe",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .status()
            .unwrap();
        assert!(status.success(), "the writing process ended with {status}");
    }

    fn write_to_a_reset_connection() {
        // SAFETY: the default action, in this child process only.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            let mut socket = ClientSocket::new(TcpStream::connect(address).await.unwrap());
            let (accepted, _) = listener.accept().await.unwrap();
            // Closing with a zero linger resets the connection.
            socket2::SockRef::from(&accepted)
                .set_linger(Some(std::time::Duration::ZERO))
                .unwrap();
            drop(accepted);
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            // The first write after the reset fails with ECONNRESET; the
            // ones after it with EPIPE, which is where SIGPIPE comes from.
            let mut failures = 0;
            for _ in 0..100 {
                if socket.write_all(&[b'x'; 4096]).await.is_err() {
                    failures += 1;
                }
            }
            assert!(failures >= 2, "only {failures} writes failed");
        });
    }
}
