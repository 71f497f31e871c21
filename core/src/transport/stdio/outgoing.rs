//! The lines a stdio client writes to its server's input (requests,
//! notifications, answers to the server's requests), in the order they
//! were sent.
//!
//! A line is written by the task that sends it when nothing is queued
//! before it and the pipe takes it whole at once, which is nearly always:
//! a call then costs one `write` and no hop to another task (at one call
//! at a time, the hop was a wake-up and a poll of the writer task per
//! call, run with caches the server process had just used). Whatever does
//! not fit (a full pipe, a line behind others) is queued for the writer
//! task, which waits until the pipe takes more; while it has lines, every
//! new one queues behind them. Until the server is serving, every line
//! goes through the writer task, which watches whether the server reads
//! them (see the client module).

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::io::AsyncWrite;
use tokio::sync::{Notify, watch};

use crate::Error;
use crate::rpc::lock_unpoisoned;

type Writer = Pin<Box<dyn AsyncWrite + Send>>;

/// The server's input, shared by the senders and the writer task.
pub(super) struct Outgoing {
    state: Mutex<State>,
    /// Wakes the writer task: lines were queued, or the input closes.
    work: Notify,
    /// Whether the server is serving: until then, lines are the writer
    /// task's to write (it counts them for the start-up probe).
    serving: watch::Receiver<bool>,
}

struct State {
    /// `None` once shut down.
    writer: Option<Writer>,
    queue: VecDeque<Vec<u8>>,
    /// Bytes of `queue`'s first line already written.
    front_written: usize,
    /// Lines were written and not yet flushed (a writer that buffers).
    unflushed: bool,
    /// No more lines: `close` was called, or writing failed.
    closed: bool,
    /// Bytes written so far (the start-up probe compares them with what
    /// the pipe still holds).
    written: usize,
    /// Senders may write (the server is serving, which never ends).
    direct: bool,
}

impl Outgoing {
    pub(super) fn new<W>(writer: W, serving: watch::Receiver<bool>) -> Arc<Outgoing>
    where
        W: AsyncWrite + Send + 'static,
    {
        Arc::new(Outgoing {
            state: Mutex::new(State {
                writer: Some(Box::pin(writer)),
                queue: VecDeque::new(),
                front_written: 0,
                unflushed: false,
                closed: false,
                written: 0,
                direct: false,
            }),
            work: Notify::new(),
            serving,
        })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        lock_unpoisoned(&self.state)
    }

    /// Sends `line` (one message and its newline): written now if the pipe
    /// takes it, else queued. [`Error::Closed`] once the input is closed.
    /// A failed write closes the input (the server is going; the reader
    /// reports it to the calls waiting).
    pub(super) fn send(&self, line: Vec<u8>) -> Result<(), Error> {
        let mut state = self.state();
        if state.closed {
            return Err(Error::Closed);
        }
        if state.queue.is_empty() && !state.unflushed && self.may_write_directly(&mut state) {
            match state.write_now(&line) {
                Written::All => return Ok(()),
                Written::Part(at) => state.front_written = at,
                Written::Unflushed => {
                    drop(state);
                    self.work.notify_one();
                    return Ok(());
                }
                Written::Failed => {
                    state.closed = true;
                    drop(state);
                    self.work.notify_one();
                    return Ok(());
                }
            }
        }
        state.queue.push_back(line);
        drop(state);
        self.work.notify_one();
        Ok(())
    }

    fn may_write_directly(&self, state: &mut State) -> bool {
        if !state.direct && *self.serving.borrow() {
            state.direct = true;
        }
        state.direct
    }

    /// No more lines: the writer task writes what is queued, then shuts the
    /// input down (the server's signal to exit).
    pub(super) fn close(&self) {
        self.state().closed = true;
        self.work.notify_one();
    }

    /// Writes queued lines until the input closes; until the server is
    /// serving, `watch` is called after each write and between them.
    pub(super) async fn run(self: Arc<Self>, mut watch: impl FnMut(usize, bool) -> Watching) {
        loop {
            let (pending, closed, written) = {
                let state = self.state();
                (
                    !state.queue.is_empty() || state.unflushed,
                    state.closed,
                    state.written,
                )
            };
            if !pending {
                if closed {
                    break;
                }
                match watch(written, false) {
                    Watching::Every(period) => {
                        tokio::select! {
                            _ = self.work.notified() => {}
                            _ = tokio::time::sleep(period) => { watch(written, true); }
                        }
                    }
                    Watching::Done => self.work.notified().await,
                }
                continue;
            }
            if std::future::poll_fn(|cx| self.poll_drain(cx))
                .await
                .is_err()
            {
                self.state().closed = true;
                break;
            }
            let written = self.state().written;
            watch(written, true);
        }
        let writer = self.state().writer.take();
        if let Some(mut writer) = writer {
            let _ = std::future::poll_fn(|cx| writer.as_mut().poll_shutdown(cx)).await;
        }
    }

    /// Writes the queue out, then flushes.
    fn poll_drain(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let mut state = self.state();
        let state = &mut *state;
        let Some(writer) = state.writer.as_mut() else {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        };
        while let Some(line) = state.queue.front() {
            match writer.as_mut().poll_write(cx, &line[state.front_written..]) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Err(io::ErrorKind::WriteZero.into())),
                Poll::Ready(Ok(n)) => {
                    state.written = state.written.saturating_add(n);
                    state.front_written += n;
                    if state.front_written == line.len() {
                        state.queue.pop_front();
                        state.front_written = 0;
                        state.unflushed = true;
                    }
                }
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Pending => return Poll::Pending,
            }
        }
        if state.unflushed {
            std::task::ready!(writer.as_mut().poll_flush(cx))?;
            state.unflushed = false;
        }
        Poll::Ready(Ok(()))
    }
}

/// What the writer task's start-up watch asks for.
pub(super) enum Watching {
    /// Call again after this long without a write.
    Every(std::time::Duration),
    /// Nothing more to watch.
    Done,
}

enum Written {
    All,
    /// Only this many bytes: the rest is the writer task's.
    Part(usize),
    /// All of it, but the flush is the writer task's.
    Unflushed,
    Failed,
}

impl State {
    /// Writes `line` without waiting, as far as the writer takes it.
    fn write_now(&mut self, line: &[u8]) -> Written {
        let Some(writer) = self.writer.as_mut() else {
            return Written::Failed;
        };
        // Nobody is to be woken: if the writer is not ready, the line goes
        // to the writer task, which polls again with its own waker.
        let mut cx = Context::from_waker(Waker::noop());
        let mut at = 0;
        while at < line.len() {
            match writer.as_mut().poll_write(&mut cx, &line[at..]) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => return Written::Failed,
                // Not counted in `written`: only the writer task's writes
                // are, until the server serves, and this runs after.
                Poll::Ready(Ok(n)) => at += n,
                Poll::Pending => return Written::Part(at),
            }
        }
        match writer.as_mut().poll_flush(&mut cx) {
            Poll::Ready(Ok(())) => Written::All,
            Poll::Ready(Err(_)) => Written::Failed,
            Poll::Pending => {
                self.unflushed = true;
                Written::Unflushed
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt;

    /// Lines sent from several tasks into a pipe much smaller than they
    /// are (every write partial, most lines queued behind others) arrive
    /// whole and each sender's in its order; `close` writes what is queued
    /// before the end.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn lines_arrive_whole_and_in_order_through_a_small_pipe() {
        let (writer, mut reader) = tokio::io::duplex(16);
        let (_serving_tx, serving) = watch::channel(true);
        let outgoing = Outgoing::new(writer, serving);
        tokio::spawn(outgoing.clone().run(|_, _| Watching::Done));
        let reading = tokio::spawn(async move {
            let mut all = Vec::new();
            reader.read_to_end(&mut all).await.map(|_| all)
        });
        let senders: Vec<_> = (0..4)
            .map(|sender| {
                let outgoing = outgoing.clone();
                tokio::spawn(async move {
                    for n in 0..50 {
                        let line = format!("{sender}:{n}:{}\n", "x".repeat(40 + n));
                        outgoing.send(line.into_bytes()).unwrap();
                        if n % 7 == 0 {
                            tokio::task::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        for sender in senders {
            sender.await.unwrap();
        }
        outgoing.close();
        assert!(matches!(
            outgoing.send(b"late\n".to_vec()),
            Err(Error::Closed)
        ));
        // Bounded: lines written out of turn would corrupt one another and
        // could leave the reader waiting.
        let read = tokio::time::timeout(std::time::Duration::from_secs(10), reading).await;
        let all = String::from_utf8(
            read.expect("all lines and the end arrive")
                .unwrap()
                .unwrap(),
        )
        .unwrap();
        let mut next = [0usize; 4];
        for line in all.lines() {
            let mut parts = line.split(':');
            let sender: usize = parts.next().unwrap().parse().unwrap();
            let n: usize = parts.next().unwrap().parse().unwrap();
            assert_eq!(parts.next().unwrap(), "x".repeat(40 + n), "{line}");
            assert_eq!(n, next[sender], "sender {sender} out of order");
            next[sender] += 1;
        }
        assert_eq!(next, [50; 4]);
    }

    /// Before the server serves, every line goes through the writer task,
    /// which reports each write to the start-up watch.
    #[tokio::test]
    async fn before_serving_the_writer_task_counts_every_byte() {
        let (writer, mut reader) = tokio::io::duplex(1024);
        let (serving_tx, serving) = watch::channel(false);
        let outgoing = Outgoing::new(writer, serving);
        let seen = Arc::new(Mutex::new(Vec::new()));
        let watched = seen.clone();
        tokio::spawn(outgoing.clone().run(move |written, check| {
            if check {
                lock_unpoisoned(&watched).push(written);
            }
            Watching::Done
        }));
        outgoing.send(b"one\n".to_vec()).unwrap();
        let mut line = [0u8; 4];
        reader.read_exact(&mut line).await.unwrap();
        assert_eq!(lock_unpoisoned(&seen).as_slice(), [4]);
        // Serving: the sender writes it, the task is not involved.
        serving_tx.send_replace(true);
        outgoing.send(b"two\n".to_vec()).unwrap();
        reader.read_exact(&mut line).await.unwrap();
        assert_eq!(&line, b"two\n");
        tokio::task::yield_now().await;
        assert_eq!(lock_unpoisoned(&seen).as_slice(), [4]);
    }
}
