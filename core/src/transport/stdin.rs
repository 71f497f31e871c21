//! This process's stdin, read on a dedicated thread.
//!
//! `tokio::io::stdin` reads on the runtime's blocking pool, and a read
//! blocked there holds up the runtime's shutdown until the client writes or
//! closes its end: a server told to stop (SIGTERM) while its client keeps
//! stdin open would never exit. A plain thread of our own is not waited
//! for. The channel holds one chunk, so a server that stops reading stops
//! this thread reading too (back-pressure reaches the client).

use std::io::{self, Read};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// Bytes read by one `read(2)` on stdin at most.
const CHUNK: usize = 64 * 1024;

/// An [`AsyncRead`] over this process's stdin, fed by a reader thread.
pub(crate) struct ThreadStdin {
    chunks: mpsc::Receiver<io::Result<Vec<u8>>>,
    pending: Vec<u8>,
    consumed: usize,
    ended: bool,
}

/// Starts the reader thread.
pub(crate) fn stdin() -> io::Result<ThreadStdin> {
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
