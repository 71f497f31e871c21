//! The server side of the stdio transport: requests read line by line and
//! served concurrently within [`StdioOptions`], answers and notifications
//! written one per line, nothing but MCP on the output stream.

use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::lines::{LineRead, read_line_bounded};
use super::output::Output;
use crate::legacy::{self, Session};
use crate::net::DEFAULT_MAX_MESSAGE_BYTES;
use crate::protocol::jsonrpc::{EnvelopeError, Message, Request, RequestId, error_value};
use crate::protocol::methods::NOTIFICATIONS_CANCELLED;
use crate::protocol::{Method, codes};
use crate::rpc::{DuplicateId, InFlight, duplicate_id_error};
use crate::server::{NotificationSink, Server, Split, polled_notification_channel};
use crate::{Error, McpError};

/// Limits of the stdio transport. A client that stops reading its output
/// must not make the server buffer without bound: once `max_in_flight`
/// requests are running (or waiting for room in the output queue), no more
/// input is read until one of them has queued its answer.
///
/// ```
/// use ferromcp::transport::stdio::StdioOptions;
///
/// let options = StdioOptions { max_in_flight: 16, ..StdioOptions::default() };
/// assert_eq!(options.max_queued, 256);
/// ```
#[derive(Debug, Clone)]
pub struct StdioOptions {
    /// Most requests served at once (open `subscriptions/listen` streams
    /// included); reading stops while this many are running. Default 64.
    /// In a 2025-11-25 session a request waiting for the client's answer
    /// (elicitation, sampling, roots) keeps its slot, so a client should
    /// not leave more than this many such requests waiting.
    pub max_in_flight: usize,
    /// Most answers waiting to be written while the client does not read;
    /// a finished request waits (holding its in-flight slot) for room.
    /// Default 256.
    pub max_queued: usize,
    /// How long requests still running at end of input or shutdown may
    /// finish before they are cancelled, and how long their answers may
    /// take to be written: a client that writes its requests and closes
    /// stdin still gets its answers, and a stuck handler or a client that
    /// never reads cannot keep the process alive. Default 10 s.
    pub drain_grace: Duration,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_in_flight: 64,
            max_queued: 256,
            drain_grace: Duration::from_secs(10),
        }
    }
}

/// How long the last chunk of answers may take to reach a reading client
/// once the server is done.
const FINAL_WRITE: Duration = Duration::from_secs(2);

/// Requests being served: the token that cancels each, and whether it is
/// a `subscriptions/listen`.
type Running = Arc<InFlight<(CancellationToken, bool)>>;

/// Where answers go: a bounded queue, so that a client that stops reading
/// stops the server reading too. Notifications (progress, logs, listen
/// events, a legacy session's requests) use the core's bounded
/// [`NotificationSink`], which drops progress and logs while full and holds
/// listen streams back.
type Answers = mpsc::Sender<Vec<u8>>;

/// Longest a server waits, when its input ends, for its telemetry to be
/// sent.
const FLUSH_AT_EXIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Server {
    /// Serves on this process's stdin/stdout until stdin reaches EOF.
    /// [`Server::run_stdio`] also stops gracefully on SIGTERM/SIGINT.
    pub async fn serve_stdio(&self) -> Result<(), Error> {
        self.serve_stdio_with(StdioOptions::default(), CancellationToken::new())
            .await
    }

    /// Serves on stdin/stdout until stdin reaches EOF or `shutdown` is
    /// cancelled; requests in flight are given time to finish either way,
    /// and on shutdown open `subscriptions/listen` streams end with their
    /// completion result.
    pub async fn serve_stdio_until(&self, shutdown: CancellationToken) -> Result<(), Error> {
        self.serve_stdio_with(StdioOptions::default(), shutdown)
            .await
    }

    /// [`Server::serve_stdio_until`] with explicit limits.
    ///
    /// ```no_run
    /// # async fn run(server: ferromcp::server::Server) -> Result<(), ferromcp::Error> {
    /// use ferromcp::transport::stdio::StdioOptions;
    /// use tokio_util::sync::CancellationToken;
    ///
    /// let options = StdioOptions { max_in_flight: 8, ..StdioOptions::default() };
    /// server.serve_stdio_with(options, CancellationToken::new()).await
    /// # }
    /// ```
    pub async fn serve_stdio_with(
        &self,
        options: StdioOptions,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        let served = self.serve_process_stdio(options, shutdown).await;
        // A stdio server's process ends when its client closes stdin: the
        // last spans go out before it does.
        crate::telemetry::flush_async(FLUSH_AT_EXIT).await;
        served
    }

    async fn serve_process_stdio(
        &self,
        options: StdioOptions,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        // Not `tokio::io::stdin()`/`stdout()`: see `transport::stdin`.
        let stdin = super::stdin::stdin()?;
        let (stdout, mut written) = super::stdin::stdout()?;
        let output_gone = shutdown.child_token();
        // On a runtime worker, not on the caller's thread (the thread of
        // `block_on` in `#[tokio::main]` or a C host): the tasks it spawns
        // per request then start on the same worker, from its local queue,
        // instead of each waking a sleeping worker through the kernel.
        // Aborted if this future is dropped, as the loop was before.
        let serve = tokio_util::task::AbortOnDropHandle::new(tokio::spawn(serve_inner(
            self.clone(),
            stdin,
            stdout,
            options,
            shutdown,
            output_gone.clone(),
        )));
        let serve = async move {
            match serve.await {
                Ok(served) => served,
                // A panic in the loop reaches the caller, as before.
                Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
                Err(e) => Err(Error::Protocol(format!(
                    "the stdio serving task ended: {e}"
                ))),
            }
        };
        tokio::pin!(serve);
        let served = tokio::select! {
            served = &mut serve => served,
            // The thread ended first: stdout failed (the client closed it).
            // The server may not write again for a long time, so tell it.
            ended = &mut written => {
                let failed = ended.unwrap_or(true);
                if failed {
                    output_gone.cancel();
                }
                return match serve.await {
                    Ok(()) if failed => Err(Error::Closed),
                    other => other,
                };
            }
        };
        // The last answers (at most one 64 KiB chunk) may still be on their
        // way to stdout: let them out, unless the client does not read them.
        match tokio::time::timeout(FINAL_WRITE, written).await {
            Ok(Ok(true)) if served.is_ok() => Err(Error::Closed),
            Ok(_) => served,
            Err(_) => {
                tracing::warn!("stdout is not being read; leaving its last bytes unwritten");
                served
            }
        }
    }
}

/// Serves `server` over a byte stream pair until `reader` reaches EOF and
/// in-flight requests have finished.
pub async fn serve<R, W>(server: Server, reader: R, writer: W) -> Result<(), Error>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_until(server, reader, writer, CancellationToken::new()).await
}

/// [`serve`], also stopping when `shutdown` is cancelled: no more input is
/// read, open `subscriptions/listen` streams end with their completion
/// result, and requests in flight get the same grace period as at EOF.
pub async fn serve_until<R, W>(
    server: Server,
    reader: R,
    writer: W,
    shutdown: CancellationToken,
) -> Result<(), Error>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(server, reader, writer, StdioOptions::default(), shutdown).await
}

/// [`serve_until`] with explicit [`StdioOptions`].
///
/// Returns [`Error::Closed`] when the client closes its end of `writer`
/// (a broken pipe): input is then no longer read, even if still open, and
/// requests in flight are cancelled.
pub async fn serve_with<R, W>(
    server: Server,
    reader: R,
    writer: W,
    options: StdioOptions,
    shutdown: CancellationToken,
) -> Result<(), Error>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let output_gone = shutdown.child_token();
    serve_inner(server, reader, writer, options, shutdown, output_gone).await
}

/// [`serve_with`], also ending as if `writer` had failed when `output_gone`
/// (a child of `shutdown`) is cancelled: the process's stdout is written by
/// a thread, which is the one to see the client go.
async fn serve_inner<R, W>(
    server: Server,
    reader: R,
    writer: W,
    options: StdioOptions,
    shutdown: CancellationToken,
    output_gone: CancellationToken,
) -> Result<(), Error>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (out_tx, out_rx) = polled_notification_channel();
    let (answers, answers_rx) = mpsc::channel::<Vec<u8>>(options.max_queued.max(1));
    let output = Output::new(writer, out_rx, answers_rx);
    let slots = Arc::new(Semaphore::new(options.max_in_flight.max(1)));
    let writer_done = CancellationToken::new();
    let writer_done_rx = writer_done.clone();
    // Cancelled by `shutdown`, or when stdout fails: a client that closed
    // its end of the pipe is gone, and nothing more is worth reading.
    let stop = output_gone;
    let output_failed = stop.clone();
    let mut writer_task = tokio::spawn({
        let output = output.clone();
        async move {
            let written = output.run(writer_done_rx).await;
            if written.is_err() {
                output_failed.cancel();
            }
            written
        }
    });
    let in_flight: Running = Arc::default();
    let mut tasks = Tasks::default();
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::with_capacity(4096);
    // Set when the client opens with a legacy `initialize`: the whole
    // process then speaks 2025-11-25 to it.
    let mut legacy: Option<Arc<Session>> = None;

    'serve: loop {
        line.clear();
        let read = tokio::select! {
            read = read_line_bounded(&mut reader, &mut line, DEFAULT_MAX_MESSAGE_BYTES) => read,
            _ = stop.cancelled() => break,
        };
        let bytes = match read {
            Ok(LineRead::Eof) => break,
            Ok(LineRead::TooLong) => {
                let error = McpError::new(
                    codes::INVALID_REQUEST,
                    format!("message exceeds the {DEFAULT_MAX_MESSAGE_BYTES}-byte limit"),
                );
                Line::Reply(error_value(None, &error))
            }
            Ok(LineRead::Line) => {
                let bytes = line.trim_ascii();
                if bytes.is_empty() {
                    continue;
                }
                match Incoming::read(bytes, legacy.is_some(), server.has_relay()) {
                    Ok(message) => Line::Message(message),
                    Err(e) => Line::Reply(error_value(e.id.as_ref(), &e.error)),
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "reading stdin failed; stopping");
                break;
            }
        };
        tasks.reap();
        let reply = match bytes {
            Line::Reply(reply) => Some(reply),
            Line::Message(message) => {
                // A request takes a slot before it runs; while none is free
                // nothing more is read (back-pressure on the client).
                let slot = match &message {
                    Incoming::Split(..) | Incoming::Whole(Message::Request(_)) => tokio::select! {
                        slot = slots.clone().acquire_owned() => match slot {
                            Ok(slot) => Some(slot),
                            Err(_) => break 'serve,
                        },
                        _ = stop.cancelled() => break 'serve,
                    },
                    _ => None,
                };
                let lane = Lane {
                    server: &server,
                    notes: &out_tx,
                    answers: &answers,
                    output: &output,
                    tasks: &mut tasks,
                };
                match (&legacy, message) {
                    (Some(session), Incoming::Whole(message)) => {
                        lane.legacy(session, message, slot)
                    }
                    // Not made: a legacy session's lines are read whole.
                    (Some(_), Incoming::Split(..)) => None,
                    (None, message) => match message {
                        // The handshake turns the connection legacy; it
                        // runs (behind the middleware chain) before the
                        // next line is read, which belongs to the session.
                        Incoming::Whole(Message::Request(request))
                            if legacy::is_legacy_initialize(&request) =>
                        {
                            let opened = legacy::initialize(
                                &server,
                                &request,
                                "stdio".into(),
                                legacy::FromHttp::default(),
                            )
                            .await;
                            drop(slot);
                            match opened {
                                Ok(init) => {
                                    init.session.set_standalone(Some(out_tx.clone()));
                                    init.session.forward_events(&server);
                                    legacy = Some(init.session);
                                    Some(init.message)
                                }
                                Err(message) => Some(message),
                            }
                        }
                        message => lane.handle_modern(message, &in_flight, slot),
                    },
                }
            }
        };
        if let Some(reply) = reply {
            tokio::select! {
                _ = answers.send(json_bytes(&reply)) => {}
                _ = stop.cancelled() => break,
            }
        }
    }
    if let Some(session) = &legacy {
        session.close();
    }

    if shutdown.is_cancelled() {
        // The server is going away but the client is still there: its
        // subscriptions end with the spec's completion result.
        server.close_subscriptions();
    } else if stop.is_cancelled() {
        // Nobody reads the answers any more: cancel everything now.
        in_flight.cancel_where(|_| true);
    } else {
        // The client is gone: its subscriptions end now, while ordinary
        // requests get a grace period to deliver answers it may still read.
        in_flight.cancel_where(|(_, is_listen)| *is_listen);
    }
    let drained = tokio::time::timeout(options.drain_grace, tasks.join_all()).await;
    if drained.is_err() {
        in_flight.cancel_where(|_| true);
        // A task may be waiting for room in the output queue, which a
        // client that does not read never makes: abort rather than wait.
        tasks.abort_all();
        tasks.join_all().await;
    }
    drop(out_tx);
    drop(answers);
    // A host may still hold a request context (and with it a sender) after
    // its request ended; the writer must not wait for those to go away.
    writer_done.cancel();
    match tokio::time::timeout(options.drain_grace, &mut writer_task).await {
        Ok(joined) => {
            match joined.map_err(|e| Error::Protocol(format!("stdio writer task failed: {e}")))? {
                Ok(()) => {}
                // The client closed its end of our output: the session is
                // over, which hosts report as such rather than as an I/O
                // failure (a binding ends quietly on it).
                Err(Error::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                    tracing::info!("the client closed the server's output; stopping");
                    return Err(Error::Closed);
                }
                Err(e) => return Err(e),
            }
        }
        Err(_) => {
            tracing::warn!("the client did not read its last answers; dropping them");
            writer_task.abort();
        }
    }
    Ok(())
}

/// The tasks of a connection's requests, with its subscriptions
/// (`subscriptions/listen`, which wait for events as long as the client
/// keeps them) kept apart: whether a request is alone
/// ([`start_at_once`]) is asked of the other requests only.
#[derive(Default)]
struct Tasks {
    requests: JoinSet<()>,
    listens: JoinSet<()>,
}

impl Tasks {
    /// Frees the tasks that have ended.
    fn reap(&mut self) {
        while self.requests.try_join_next().is_some() {}
        while self.listens.try_join_next().is_some() {}
    }

    /// Waits for every task to end.
    async fn join_all(&mut self) {
        while self.requests.join_next().await.is_some() {}
        while self.listens.join_next().await.is_some() {}
    }

    fn abort_all(&mut self) {
        self.requests.abort_all();
        self.listens.abort_all();
    }
}

/// One line of input: a message to handle, or an error to answer at once.
enum Line {
    Message(Incoming),
    Reply(Value),
}

/// A message read from a line.
enum Incoming {
    /// A 2026-07-28 request read as the HTTP endpoint reads it: its `_meta`
    /// (and a `tools/call`'s `name` and `arguments`) apart from the params,
    /// without building them into the params' tree first.
    Split(Request, Split),
    /// Anything else: a legacy session's messages, an `initialize` (which
    /// reads its `_meta` from the params), notifications and responses.
    Whole(Message),
}

impl Incoming {
    /// `keep_call_params`: a call's params as written are kept too (where a
    /// relay may forward them).
    fn read(bytes: &[u8], legacy: bool, keep_call_params: bool) -> Result<Incoming, EnvelopeError> {
        if !legacy
            && let Ok((Message::Request(request), meta, call, call_params)) =
                Message::from_slice_split(bytes, keep_call_params)
            && Method::from_name(&request.method) != Some(Method::Initialize)
        {
            return Ok(Incoming::Split(request, (meta, call, call_params)));
        }
        // Read again whole: rare (a notification, a response, the
        // handshake), or an error to word.
        Message::from_slice(bytes).map(Incoming::Whole)
    }
}

/// What handling a message needs from the serve loop.
struct Lane<'a> {
    server: &'a Server,
    notes: &'a NotificationSink,
    answers: &'a Answers,
    output: &'a Arc<Output>,
    tasks: &'a mut Tasks,
}

impl Lane<'_> {
    fn legacy(
        self,
        session: &Arc<Session>,
        message: Message,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Option<Value> {
        match message {
            Message::Request(request) => {
                let server = self.server.clone();
                let session = session.clone();
                let notes = self.notes.clone();
                let answers = self.answers.clone();
                self.tasks.requests.spawn(async move {
                    // A cancelled request is stopped and answers nothing:
                    // the rule every transport shares.
                    let reply = legacy::answer_request(
                        &server,
                        &session,
                        request,
                        CancellationToken::new(),
                        Some(notes),
                        None,
                        // No headers, and never protected (spec: STDIO
                        // "SHOULD NOT" follow the authorization spec).
                        legacy::FromHttp::default(),
                    )
                    .await;
                    if let Some(reply) = reply {
                        let _ = answers.send(json_bytes(&reply)).await;
                    }
                    // The slot is freed once the answer is queued.
                    drop(slot);
                });
            }
            Message::Notification(note) => {
                if let Some(note) = self.server.pass_notification(note) {
                    legacy::handle_notification(session, &note.method, note.params.as_ref());
                }
            }
            Message::Response(response) => {
                if let Some(id) = response.id {
                    session.deliver_response(&id, response.outcome);
                }
            }
        }
        None
    }

    /// Handles one message of a 2026-07-28 connection (a legacy
    /// `initialize` is the serve loop's); the answer to send at once, if
    /// any.
    fn handle_modern(
        self,
        message: Incoming,
        in_flight: &Running,
        slot: Option<OwnedSemaphorePermit>,
    ) -> Option<Value> {
        let admitted = match message {
            Incoming::Split(request, split) => self.server.admit_split(request, split),
            Incoming::Whole(Message::Request(request)) => self.server.admit_request(request),
            Incoming::Whole(message) => return self.handle_modern_other(message, in_flight),
        };
        let prepared = match admitted {
            Ok(p) => p,
            Err(rejection) => return Some(rejection.to_message()),
        };
        let id = prepared.request.id.clone();
        let is_listen = prepared.is_listen();
        let cancel = CancellationToken::new();
        let mut tracked = match in_flight.track(id.clone(), (cancel.clone(), is_listen)) {
            Ok(tracked) => tracked,
            Err(DuplicateId(_)) => {
                return Some(error_value(Some(&id), &duplicate_id_error(&id)));
            }
        };
        let server = self.server.clone();
        let notes = self.notes.clone();
        let answers = self.answers.clone();
        let tasks = self.tasks;
        // A subscription open meanwhile only waits: a request beside it is
        // still alone.
        let alone = !is_listen && tasks.requests.is_empty();
        // Alone, its answer is written at once if nothing waits before it
        // (`Output::answer_now`); with others, answers are batched.
        let output = alone.then(|| self.output.clone());
        // Boxed once, whole: the request's future is a few KiB, polled here
        // first and moved into a task only if it has to wait.
        let request = Box::pin(async move {
            tokio::select! {
                reply = server.execute(prepared, cancel.clone(), Some(notes)) => {
                    // Nothing may be sent for a cancelled request.
                    let was_cancelled = cancel.is_cancelled();
                    // The request is over: work its handler left running
                    // must not send notifications after the response
                    // (progress MUST stop after completion), as on HTTP
                    // where the finished response drops the token's guard.
                    cancel.cancel();
                    // Free the id before answering: a client may reuse
                    // it as soon as it reads the response.
                    tracked.release();
                    if !was_cancelled {
                        // Written as the HTTP endpoint writes it: a text
                        // result without building its tree.
                        let answer = reply.message.to_json_bytes();
                        let queued = match &output {
                            Some(output) => output.answer_now(answer).err(),
                            None => Some(answer),
                        };
                        if let Some(answer) = queued {
                            let _ = answers.send(answer).await;
                        }
                    }
                }
                _ = cancel.cancelled() => {}
            }
            // The slot is freed once the answer is queued, and
            // `tracked` drops here, freeing the id of a cancelled
            // request.
            drop(slot);
        });
        if is_listen {
            // It waits for events until the client ends it.
            tasks.listens.spawn(request);
        } else if alone {
            start_at_once(&mut tasks.requests, request);
        } else {
            tasks.requests.spawn(request);
        }
        None
    }

    /// A 2026-07-28 connection's notifications and responses.
    fn handle_modern_other(self, message: Message, in_flight: &Running) -> Option<Value> {
        match message {
            // Read split, and handled by `handle_modern`.
            Message::Request(_) => None,
            Message::Notification(notification) => {
                let notification = self.server.pass_notification(notification)?;
                if notification.method == NOTIFICATIONS_CANCELLED {
                    let id = notification
                        .params
                        .as_ref()
                        .and_then(|p| p.get("requestId"))
                        .and_then(|v| serde_json::from_value::<RequestId>(v.clone()).ok());
                    if let Some(id) = id {
                        in_flight.cancel(&id);
                    }
                }
                None
            }
            Message::Response(_) => {
                // The 2026-07-28 server sends no requests, so a response cannot
                // answer anything; ignoring it keeps the stream usable.
                tracing::debug!("ignoring a JSON-RPC response sent to the server");
                None
            }
        }
    }
}

/// Runs a request that arrived while no other was running as far as it
/// goes at once, here on the reading task, and spawns a task for the rest
/// only if it has to wait: most requests (a synchronous tool, a listing)
/// are done at once, and one at a time they then cost no task (its
/// allocation, its scheduling, its wake-up with caches the client process
/// just used). With others running, the request gets its task at once, so
/// requests still run side by side on the runtime's workers.
///
/// Polled without a waker: a request that is not done is spawned, and the
/// runtime polls a new task at once, so nothing it waits for goes unseen.
/// A panic ends the request as it would end its task.
fn start_at_once(tasks: &mut JoinSet<()>, mut request: Pin<Box<dyn Future<Output = ()> + Send>>) {
    let mut cx = Context::from_waker(Waker::noop());
    let polled = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        request.as_mut().poll(&mut cx)
    }));
    match polled {
        Ok(Poll::Ready(())) => {}
        Ok(Poll::Pending) => {
            tasks.spawn(request);
        }
        Err(_) => tracing::error!("a request panicked outside its handler"),
    }
}

/// An answer serialised for the output queue (serialising a `Value`
/// cannot fail).
fn json_bytes(message: &Value) -> Vec<u8> {
    serde_json::to_vec(message).unwrap_or_default()
}
