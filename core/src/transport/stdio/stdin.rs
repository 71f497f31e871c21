//! This process's stdin and stdout: polled by the runtime when they are
//! pipes or sockets (`pipes.rs`), else read and written on dedicated
//! threads (a terminal, a file).
//!
//! `tokio::io::stdin`/`stdout` block on the runtime's blocking pool, and a
//! read or write blocked there holds up the runtime's shutdown until the
//! client writes, reads or closes its end: a server told to stop (SIGTERM)
//! while its client keeps stdin open, or stops reading stdout, would never
//! exit. Plain threads of our own are not waited for. Both hand over at
//! most one chunk at a time, so back-pressure still reaches the client.

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncReadExt, DuplexStream, ReadBuf};
use tokio::sync::{mpsc, oneshot};
use tokio_util::either::Either;

/// Bytes read by one `read(2)` on stdin at most.
const CHUNK: usize = 64 * 1024;

/// An [`AsyncRead`] over this process's stdin, fed by a reader thread.
pub(crate) struct ThreadStdin {
    chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
    pending: Vec<u8>,
    consumed: usize,
    ended: bool,
}

/// This process's stdin for the serving loop.
pub(crate) type Stdin = Either<super::pipes::PipeReader, ThreadStdin>;

/// This process's stdout for the writer task.
pub(crate) type Stdout = Either<super::pipes::PipeWriter, DuplexStream>;

/// Stdin polled by the runtime when it is a pipe or socket, else through
/// a reader thread.
pub(crate) fn stdin() -> io::Result<Stdin> {
    #[cfg(unix)]
    if !threads_forced()
        && let Some(pipe) = super::pipes::stdin()
    {
        // Said at debug level so tests (and a puzzled user) can tell the
        // two ways apart: they give the same answers.
        tracing::debug!("stdin: polled by the runtime");
        return Ok(Either::Left(pipe));
    }
    tracing::debug!("stdin: read by a thread");
    thread_stdin().map(Either::Right)
}

/// Stdout written by the runtime when it is a pipe or socket, else through
/// a writer thread; the receiver is as [`thread_stdout`]'s.
pub(crate) fn stdout() -> io::Result<(Stdout, oneshot::Receiver<bool>)> {
    #[cfg(unix)]
    if !threads_forced()
        && let Some((pipe, done)) = super::pipes::stdout()
    {
        tracing::debug!("stdout: polled by the runtime");
        return Ok((Either::Left(pipe), done));
    }
    tracing::debug!("stdout: written by a thread");
    let (stream, done) = thread_stdout()?;
    Ok((Either::Right(stream), done))
}

/// `FERROMCP_STDIO_THREADS=1` keeps the threads for pipes too: a way out
/// should a host or platform mind non-blocking standard streams, and the
/// "before" of benchmarks.
#[cfg(unix)]
fn threads_forced() -> bool {
    std::env::var_os("FERROMCP_STDIO_THREADS").is_some_and(|v| !v.is_empty() && v != "0")
}

/// Starts the reader thread.
fn thread_stdin() -> io::Result<ThreadStdin> {
    let (tx, chunks) = mpsc::channel(1);
    std::thread::Builder::new()
        .name("ferromcp-stdin".into())
        .spawn(move || {
            let mut stdin = io::stdin().lock();
            loop {
                let mut buf = vec![0; CHUNK];
                let chunk = match stdin.read(&mut buf) {
                    Ok(n) => {
                        buf.truncate(n);
                        Ok(buf)
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => Err(e),
                };
                // An empty chunk (EOF) or an error ends the stream; a gone
                // receiver means nobody serves stdin any more.
                let last = chunk.as_ref().map_or(true, Vec::is_empty);
                if tx.blocking_send(chunk).is_err() || last {
                    return;
                }
            }
        })?;
    Ok(ThreadStdin {
        chunks,
        pending: Vec::new(),
        consumed: 0,
        ended: false,
    })
}

impl AsyncRead for ThreadStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        while this.consumed == this.pending.len() {
            if this.ended {
                return Poll::Ready(Ok(()));
            }
            match this.chunks.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(chunk))) if !chunk.is_empty() => {
                    this.pending = chunk;
                    this.consumed = 0;
                }
                Poll::Ready(Some(Err(e))) => {
                    this.ended = true;
                    return Poll::Ready(Err(e));
                }
                // EOF, or the thread is gone.
                Poll::Ready(_) => this.ended = true,
            }
        }
        let n = buf.remaining().min(this.pending.len() - this.consumed);
        buf.put_slice(&this.pending[this.consumed..this.consumed + n]);
        this.consumed += n;
        Poll::Ready(Ok(()))
    }
}

/// The writing end of this process's stdout: bytes written to the returned
/// stream are copied to stdout by a thread, which stops at EOF (the stream
/// dropped) or when stdout fails. Then the stream's writes fail with
/// `BrokenPipe`, and the receiver resolves: `false` once everything
/// written before the EOF is out, `true` if stdout failed.
fn thread_stdout() -> io::Result<(DuplexStream, oneshot::Receiver<bool>)> {
    let (ours, mut theirs) = tokio::io::duplex(CHUNK);
    let (done_tx, done) = oneshot::channel();
    let runtime = tokio::runtime::Handle::current();
    std::thread::Builder::new()
        .name("ferromcp-stdout".into())
        .spawn(move || {
            // A reader-less stdout must give EPIPE, not kill a C host.
            crate::runtime::block_sigpipe();
            let mut buf = vec![0; CHUNK];
            let mut failed = false;
            loop {
                // Not a runtime thread, so it may block on the runtime.
                let n = match runtime.block_on(theirs.read(&mut buf)) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => n,
                };
                // Locked per chunk, not for the session: a stray `println!`
                // must not block forever.
                let mut stdout = io::stdout().lock();
                if let Err(e) = stdout.write_all(&buf[..n]).and_then(|()| stdout.flush()) {
                    tracing::debug!(error = %e, "writing stdout failed");
                    failed = true;
                    break;
                }
            }
            // Dropping `theirs` makes the server's next write fail.
            drop(theirs);
            let _ = done_tx.send(failed);
        })?;
    Ok((ours, done))
}
