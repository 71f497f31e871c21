//! The client's TCP connection: a tokio `TcpStream` whose writes cannot
//! raise `SIGPIPE`.
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
pub(crate) struct ClientSocket(TcpStream);

impl ClientSocket {
    pub(crate) fn new(stream: TcpStream) -> ClientSocket {
        // Requests are small and answered one by one: no Nagle delay.
        let _ = stream.set_nodelay(true);
        ClientSocket(stream)
    }

    fn poll_send(&self, cx: &mut Context<'_>, bufs: &[IoSlice<'_>]) -> Poll<io::Result<usize>> {
        loop {
            ready!(self.0.poll_write_ready(cx))?;
            // `try_io` clears the write readiness on `WouldBlock`, so the
            // next `poll_write_ready` waits for the socket to drain.
            match self
                .0
                .try_io(Interest::WRITABLE, || send_no_signal(&self.0, bufs))
            {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                done => return Poll::Ready(done),
            }
        }
    }
}

#[cfg(target_os = "linux")]
fn send_no_signal(stream: &TcpStream, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    socket2::SockRef::from(stream).send_vectored_with_flags(bufs, libc::MSG_NOSIGNAL)
}

#[cfg(not(target_os = "linux"))]
fn send_no_signal(stream: &TcpStream, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
    // Elsewhere the plain write (macOS would need SO_NOSIGPIPE).
    stream.try_write_vectored(bufs)
}

impl AsyncRead for ClientSocket {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for ClientSocket {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.poll_send(cx, &[IoSlice::new(buf)])
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
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
        Pin::new(&mut self.0).poll_shutdown(cx)
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
                "client::socket::tests::writing_to_a_reset_connection_fails_without_sigpipe",
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
