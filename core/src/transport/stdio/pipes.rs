//! stdin and stdout as non-blocking pipes (or sockets) polled by the
//! runtime itself, when they are pipes: the usual case, a client that
//! spawned the server.
//!
//! Through the reader and writer threads of `stdin.rs` every message
//! crossed two extra threads, about one context switch per call, which
//! made a stdio server several times slower than the bytes allow. Polled
//! here, a burst of requests is read with one `read(2)` by the serving
//! task and its answers leave with one `write(2)` by the writer task.
//!
//! Only pipes and sockets: a terminal or a file keeps the threads (epoll
//! refuses files, and `O_NONBLOCK` on a terminal would reach the shell that
//! shares it). `O_NONBLOCK` is set on the open file description, which the
//! client's end of the pipe does not share; the previous flags come back
//! when the reader or writer is dropped, for a host that uses the
//! descriptor after serving. Nothing here blocks, so, as with the threads,
//! a stopped server never waits for a client that neither writes nor reads.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};
use tokio::sync::oneshot;

/// A duplicate of fd 0 or 1, non-blocking while this lives.
struct NonBlocking {
    fd: AsyncFd<OwnedFd>,
    /// The description's flags before, restored on drop.
    flags: libc::c_int,
}

impl NonBlocking {
    /// `None` when `fd` is not a pipe or socket, or cannot be polled.
    fn open(fd: RawFd, interest: Interest) -> Option<NonBlocking> {
        // SAFETY: fstat writes into a zeroed, properly sized struct.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        if unsafe { libc::fstat(fd, &mut stat) } != 0 {
            return None;
        }
        let kind = stat.st_mode & libc::S_IFMT;
        if kind != libc::S_IFIFO && kind != libc::S_IFSOCK {
            return None;
        }
        // A duplicate, so dropping it never closes the process's fd 0/1.
        // SAFETY: plain syscalls on a descriptor this process has open;
        // results are checked before use.
        let duplicate = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if duplicate < 0 {
            return None;
        }
        // SAFETY: `duplicate` was just created and is owned by nothing else.
        let owned = unsafe { OwnedFd::from_raw_fd(duplicate) };
        let flags = unsafe { libc::fcntl(duplicate, libc::F_GETFL) };
        if flags < 0
            || unsafe { libc::fcntl(duplicate, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0
        {
            return None;
        }
        // SAFETY: an OwnedFd keeps its descriptor open and unchanged for as
        // long as it lives, which is as long as the AsyncFd owning it.
        match unsafe { AsyncFd::register_with_interest(owned, interest) }.map_err(io::Error::from) {
            Ok(fd) => Some(NonBlocking { fd, flags }),
            Err(e) => {
                tracing::debug!(error = %e, fd, "cannot poll a standard stream; using a thread");
                // SAFETY: as above; `duplicate` is closed by now, so use `fd`
                // (the same open file description).
                unsafe { libc::fcntl(fd, libc::F_SETFL, flags) };
                None
            }
        }
    }
}

impl Drop for NonBlocking {
    fn drop(&mut self) {
        // SAFETY: the descriptor is open while `self.fd` lives.
        unsafe { libc::fcntl(self.fd.as_raw_fd(), libc::F_SETFL, self.flags) };
    }
}

fn result(n: isize) -> io::Result<usize> {
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// This process's stdin, read by the runtime.
pub(crate) struct PipeReader {
    inner: NonBlocking,
}

/// Fd 0 as a [`PipeReader`] when it is a pipe or a socket.
pub(crate) fn stdin() -> Option<PipeReader> {
    NonBlocking::open(libc::STDIN_FILENO, Interest::READABLE).map(|inner| PipeReader { inner })
}

impl AsyncRead for PipeReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.inner.fd.poll_read_ready(cx))?;
            let unfilled = buf.initialize_unfilled();
            let wanted = unfilled.len();
            let read = guard.try_io(|fd| {
                // SAFETY: `unfilled` is valid for writes of its length.
                result(unsafe {
                    libc::read(fd.as_raw_fd(), unfilled.as_mut_ptr().cast(), unfilled.len())
                })
            });
            match read {
                Ok(Ok(n)) => {
                    // Less than asked for: the pipe is empty now, and the
                    // next read would only fail with EAGAIN (one wasted
                    // syscall per request at one request at a time). Not
                    // lost: bytes written after this come as a new edge
                    // (tokio's own streams do the same).
                    if 0 < n && n < wanted {
                        guard.clear_ready();
                    }
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                // Not ready after all: the guard cleared the readiness.
                Err(_would_block) => continue,
            }
        }
    }
}

/// This process's stdout, written by the runtime. When dropped, its
/// receiver (see [`stdout`]) gets whether a write failed.
pub(crate) struct PipeWriter {
    inner: NonBlocking,
    failed: bool,
    done: Option<oneshot::Sender<bool>>,
}

/// Fd 1 as a [`PipeWriter`] when it is a pipe or a socket, with the
/// receiver that resolves when it is dropped: `true` if stdout failed.
pub(crate) fn stdout() -> Option<(PipeWriter, oneshot::Receiver<bool>)> {
    let inner = NonBlocking::open(libc::STDOUT_FILENO, Interest::WRITABLE)?;
    let (done, receiver) = oneshot::channel();
    Some((
        PipeWriter {
            inner,
            failed: false,
            done: Some(done),
        },
        receiver,
    ))
}

impl AsyncWrite for PipeWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            let mut guard = ready!(self.inner.fd.poll_write_ready(cx))?;
            // SAFETY: `data` is valid for reads of its length. SIGPIPE is
            // ignored (Rust, Python and Node programs) or blocked (the
            // ferromcp runtime's threads, where a C host's writer runs), so
            // a closed pipe is EPIPE here.
            let written = guard.try_io(|fd| {
                result(unsafe { libc::write(fd.as_raw_fd(), data.as_ptr().cast(), data.len()) })
            });
            match written {
                Ok(Ok(n)) => {
                    // Not all of it: the pipe is full, and the next write
                    // would only fail with EAGAIN (as in `poll_read`).
                    if 0 < n && n < data.len() {
                        guard.clear_ready();
                    }
                    return Poll::Ready(Ok(n));
                }
                Ok(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "writing stdout failed");
                    self.failed = true;
                    return Poll::Ready(Err(e));
                }
                Err(_would_block) => continue,
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Written straight to the descriptor: nothing is held here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl Drop for PipeWriter {
    fn drop(&mut self) {
        if let Some(done) = self.done.take() {
            let _ = done.send(self.failed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// A short read clears the readiness (no EAGAIN read after each
    /// request); bytes written later still wake the reader.
    #[tokio::test]
    async fn bytes_written_after_a_short_read_wake_the_reader() {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `pipe` writes two descriptors into the array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both descriptors were just created and are owned here.
        let (read_end, write_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let mut reader = PipeReader {
            inner: NonBlocking::open(read_end.as_raw_fd(), Interest::READABLE).unwrap(),
        };
        fn write(fd: &OwnedFd, bytes: &[u8]) {
            // SAFETY: `bytes` is valid for reads of its length.
            let n = unsafe { libc::write(fd.as_raw_fd(), bytes.as_ptr().cast(), bytes.len()) };
            assert_eq!(n, bytes.len() as isize);
        }
        write(&write_end, b"one\n");
        let mut buf = [0u8; 64];
        assert_eq!(reader.read(&mut buf).await.unwrap(), 4);
        let later = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            write(&write_end, b"two\n");
            drop(write_end);
        });
        let read = tokio::time::timeout(std::time::Duration::from_secs(5), reader.read(&mut buf));
        assert_eq!(
            read.await
                .expect("the second line wakes the reader")
                .unwrap(),
            4
        );
        assert_eq!(&buf[..4], b"two\n");
        later.join().unwrap();
        assert_eq!(
            reader.read(&mut buf).await.unwrap(),
            0,
            "the end after the writer closed"
        );
    }
}
