//! What a stdio server writes: answers and notifications, one per line.
//!
//! A writer task writes what is queued, a request's notifications before
//! its answer (they were queued first), and flushes once the queues run
//! dry, so a burst of answers leaves in one `write(2)`. An answer to a
//! request that started while no other was running is written by the
//! task that produced it, at once, when nothing waits before it: one
//! request at a time then costs no hop to the writer task (its wake-up and
//! poll, with caches the client process has just used).
//!
//! The queues are read and the writer written only under one lock, so the
//! writer task never holds a line it has taken out of a queue while an
//! answer is written past it: order is kept without the answer knowing
//! which notifications were its own.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, TryLockError};
use std::task::{Context, Poll, Waker};

use serde_json::Value;
use tokio::io::{AsyncWrite, BufWriter};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::Error;
use crate::rpc::lock_unpoisoned;

type Writer = BufWriter<Pin<Box<dyn AsyncWrite + Send>>>;

/// The server's output, shared by the writer task and the requests that
/// answer at once.
pub(super) struct Output {
    state: Mutex<State>,
}

struct State {
    writer: Writer,
    notes: mpsc::Receiver<Value>,
    answers: mpsc::Receiver<Vec<u8>>,
    /// A line (newline included) being written, and how much of it is.
    line: Option<(Vec<u8>, usize)>,
    /// Written into the buffer and not yet flushed.
    unflushed: bool,
    /// The writer task, when it waits (for lines, or for the pipe).
    task: Option<Waker>,
    /// A write made by a request failed: the writer task reports it.
    failure: Option<io::Error>,
}

impl Output {
    pub(super) fn new<W>(
        writer: W,
        notes: mpsc::Receiver<Value>,
        answers: mpsc::Receiver<Vec<u8>>,
    ) -> Arc<Output>
    where
        W: AsyncWrite + Send + 'static,
    {
        let writer: Pin<Box<dyn AsyncWrite + Send>> = Box::pin(writer);
        Arc::new(Output {
            state: Mutex::new(State {
                writer: BufWriter::with_capacity(64 * 1024, writer),
                notes,
                answers,
                line: None,
                unflushed: false,
                task: None,
                failure: None,
            }),
        })
    }

    /// Writes `answer` (without its newline) now if nothing waits to be
    /// written before it; otherwise gives it back, for the queue.
    pub(super) fn answer_now(&self, mut answer: Vec<u8>) -> Result<(), Vec<u8>> {
        let mut state = match self.state.try_lock() {
            Ok(state) => state,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            // The writer task is at work: the answer joins the queue.
            Err(TryLockError::WouldBlock) => return Err(answer),
        };
        if state.line.is_some()
            || !state.notes.is_empty()
            || !state.answers.is_empty()
            || state.failure.is_some()
        {
            return Err(answer);
        }
        answer.push(b'\n');
        // Nobody is to be woken: what the writer does not take now is the
        // writer task's, which polls again with its own waker.
        let mut cx = Context::from_waker(Waker::noop());
        let mut at = 0;
        while at < answer.len() {
            match Pin::new(&mut state.writer).poll_write(&mut cx, &answer[at..]) {
                Poll::Ready(Ok(0)) => {
                    state.failure = Some(io::ErrorKind::WriteZero.into());
                    break;
                }
                Poll::Ready(Ok(n)) => at += n,
                Poll::Ready(Err(e)) => {
                    state.failure = Some(e);
                    break;
                }
                Poll::Pending => break,
            }
        }
        if state.failure.is_none() {
            if at < answer.len() {
                state.line = Some((answer, at));
            } else {
                match Pin::new(&mut state.writer).poll_flush(&mut cx) {
                    Poll::Ready(Ok(())) => state.unflushed = false,
                    Poll::Ready(Err(e)) => state.failure = Some(e),
                    Poll::Pending => state.unflushed = true,
                }
            }
        }
        if (state.line.is_some() || state.unflushed || state.failure.is_some())
            && let Some(task) = &state.task
        {
            task.wake_by_ref();
        }
        Ok(())
    }

    /// The writer task: writes until `done`, then what is queued by then.
    /// An error means the output is gone (a client that closed its end).
    pub(super) async fn run(self: Arc<Self>, done: CancellationToken) -> Result<(), Error> {
        tokio::select! {
            written = std::future::poll_fn(|cx| self.poll_write_out(cx, false)) => return written,
            _ = done.cancelled() => {}
        }
        std::future::poll_fn(|cx| self.poll_write_out(cx, true)).await
    }

    /// Writes the line in hand and the queued ones (notifications first),
    /// then flushes. Pending while waiting for lines; `draining`, ready
    /// once none is left.
    fn poll_write_out(&self, cx: &mut Context<'_>, draining: bool) -> Poll<Result<(), Error>> {
        let mut state = lock_unpoisoned(&self.state);
        let state = &mut *state;
        if let Some(e) = state.failure.take() {
            return Poll::Ready(Err(e.into()));
        }
        loop {
            if let Some((line, at)) = &mut state.line {
                while *at < line.len() {
                    match Pin::new(&mut state.writer).poll_write(cx, &line[*at..]) {
                        Poll::Ready(Ok(0)) => {
                            return Poll::Ready(Err(
                                io::Error::from(io::ErrorKind::WriteZero).into()
                            ));
                        }
                        Poll::Ready(Ok(n)) => *at += n,
                        Poll::Ready(Err(e)) => return Poll::Ready(Err(e.into())),
                        Poll::Pending => return state.wait(cx),
                    }
                }
                state.line = None;
                state.unflushed = true;
            }
            // A request's notifications were queued before its answer.
            let next = match state.notes.poll_recv(cx) {
                Poll::Ready(Some(note)) => Some(note_line(&note)),
                _ => match state.answers.poll_recv(cx) {
                    Poll::Ready(Some(mut answer)) => {
                        answer.push(b'\n');
                        Some(answer)
                    }
                    _ => None,
                },
            };
            if let Some(line) = next {
                state.line = Some((line, 0));
                continue;
            }
            if state.unflushed {
                match Pin::new(&mut state.writer).poll_flush(cx) {
                    Poll::Ready(Ok(())) => state.unflushed = false,
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e.into())),
                    Poll::Pending => return state.wait(cx),
                }
            }
            if draining {
                return Poll::Ready(Ok(()));
            }
            return state.wait(cx);
        }
    }
}

impl State {
    /// Pending, remembering the writer task's waker for a request that
    /// leaves it a line or a flush.
    fn wait<T>(&mut self, cx: &Context<'_>) -> Poll<T> {
        if !self
            .task
            .as_ref()
            .is_some_and(|task| task.will_wake(cx.waker()))
        {
            self.task = Some(cx.waker().clone());
        }
        Poll::Pending
    }
}

/// A notification as a line (serialising a `Value` cannot fail).
fn note_line(note: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(note).unwrap_or_default();
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncBufReadExt, BufReader};

    type Lines = tokio::io::Lines<BufReader<tokio::io::DuplexStream>>;

    /// An output, its two queues, and the lines it writes.
    fn output_to(
        pipe_bytes: usize,
    ) -> (
        Arc<Output>,
        mpsc::Sender<Value>,
        mpsc::Sender<Vec<u8>>,
        Lines,
    ) {
        let (writer, reader) = tokio::io::duplex(pipe_bytes);
        let (notes, notes_rx) = mpsc::channel(16);
        let (answers, answers_rx) = mpsc::channel(16);
        let output = Output::new(writer, notes_rx, answers_rx);
        (output, notes, answers, BufReader::new(reader).lines())
    }

    async fn next_line(lines: &mut Lines) -> String {
        tokio::time::timeout(std::time::Duration::from_secs(5), lines.next_line())
            .await
            .expect("a line in time")
            .unwrap()
            .expect("a line, not the end")
    }

    #[tokio::test]
    async fn an_answer_with_nothing_before_it_is_written_at_once() {
        let (output, _notes, _answers, mut lines) = output_to(1024);
        // No writer task runs: the answer is written by the caller.
        assert!(output.answer_now(b"{\"id\":1}".to_vec()).is_ok());
        assert_eq!(next_line(&mut lines).await, "{\"id\":1}");
    }

    #[tokio::test]
    async fn an_answer_behind_a_queued_notification_waits_for_it() {
        let (output, notes, answers, mut lines) = output_to(1024);
        notes
            .try_send(serde_json::json!({"method": "progress"}))
            .unwrap();
        // The request's notification is queued: its answer must not pass it.
        let answer = output.answer_now(b"{\"id\":1}".to_vec()).unwrap_err();
        answers.try_send(answer).unwrap();
        let done = CancellationToken::new();
        let writing = tokio::spawn(output.clone().run(done.clone()));
        assert_eq!(next_line(&mut lines).await, r#"{"method":"progress"}"#);
        assert_eq!(next_line(&mut lines).await, r#"{"id":1}"#);
        done.cancel();
        writing.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn an_answer_the_pipe_takes_in_part_is_finished_by_the_writer_task() {
        // A pipe of 8 bytes and a line larger than the output's buffer:
        // most of it waits, in hand.
        let (output, _notes, answers, mut lines) = output_to(8);
        let done = CancellationToken::new();
        let writing = tokio::spawn(output.clone().run(done.clone()));
        tokio::task::yield_now().await;
        let long = format!("{{\"text\":\"{}\"}}", "x".repeat(100_000));
        assert!(output.answer_now(long.clone().into_bytes()).is_ok());
        // Behind a line in hand: queued, and written after it.
        let second = output.answer_now(b"{\"id\":2}".to_vec()).unwrap_err();
        answers.try_send(second).unwrap();
        assert_eq!(next_line(&mut lines).await, long);
        assert_eq!(next_line(&mut lines).await, r#"{"id":2}"#);
        done.cancel();
        writing.await.unwrap().unwrap();
    }
}
