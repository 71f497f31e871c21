//! The client side of the stdio transport: spawns and supervises the
//! server process and speaks newline-delimited JSON-RPC over its
//! stdin/stdout, or over any byte stream the application hands in.
//! `Client::connect_stdio` and `Client::connect_stream` are here.
//!
//! Supervision: stderr is captured line by line (its tail explains a crash),
//! shutdown closes stdin, then sends SIGTERM, then SIGKILL, and a server that
//! exited is started again by the next request (the protocol is stateless,
//! so nothing is lost but the requests in flight at the crash).
//!
//! Start-up: whether a process has finished starting is not observable, but
//! whether it is serving is: it has read from its stdin (on Linux the pipe
//! tells how many written bytes are still unread) or written to its stdout.
//! [`ClientTransport::serving`] resolves then, so the era probe's timeout
//! measures the server's answer and not its start-up (issue 11 item 6).

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::{oneshot, watch};

use super::lines::{LineRead, read_line_bounded};
use super::outgoing::{Outgoing, Watching};
use crate::client::OutOfCall;
use crate::client::answers::{Answerer, Refused};
use crate::client::notes::NoteSender;
use crate::client::{
    Client, ClientLimits, ClientOptions, ClientTransport, NotificationCallback, OutgoingRequest,
    RawRequest, ServerRequestHandler, StderrMode, StdioCommand,
};
use crate::protocol::jsonrpc::{Message, Notification, RequestId, RequestOut, notification_value};
use crate::protocol::{meta, methods};
use crate::rpc::{InFlight, Reply, lock_unpoisoned};
use crate::{BoxFuture, Error};

impl Client {
    /// Spawns `command` and talks to it over its stdin/stdout.
    pub async fn connect_stdio(command: StdioCommand) -> Result<Client, Error> {
        Self::connect_stdio_with(command, ClientOptions::default()).await
    }

    /// [`Client::connect_stdio`] with explicit options.
    pub async fn connect_stdio_with(
        command: StdioCommand,
        options: ClientOptions,
    ) -> Result<Client, Error> {
        let out_of_call = OutOfCall::new();
        let transport = StdioTransport::spawn(
            command,
            options.stderr.clone(),
            Some(out_of_call.notifications(&options)),
            Some(out_of_call.requests(&options)),
            options.limits,
        )?;
        Ok(Self::from_transport(
            Arc::new(transport),
            options,
            out_of_call,
        ))
    }

    /// Speaks newline-delimited JSON-RPC over any byte stream (a Unix
    /// socket, a TCP connection, an in-memory pipe), as the stdio binding
    /// defines it for custom transports.
    pub fn connect_stream<R, W>(reader: R, writer: W, options: ClientOptions) -> Client
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        Self::connect_stream_served_by(reader, writer, options, None)
    }

    /// [`Client::connect_stream`] to a peer served by `peer`, a task of this
    /// process (an in-memory server): `close` waits for it to end, so what
    /// it holds is freed when `close` returns (a C program may exit right
    /// after).
    pub(crate) fn connect_stream_served_by<R, W>(
        reader: R,
        writer: W,
        options: ClientOptions,
        peer: Option<tokio::task::JoinHandle<()>>,
    ) -> Client
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let out_of_call = OutOfCall::new();
        let transport = StdioTransport::over_stream(
            reader,
            writer,
            Some(out_of_call.notifications(&options)),
            Some(out_of_call.requests(&options)),
            options.limits,
            peer,
        );
        Self::from_transport(Arc::new(transport), options, out_of_call)
    }
}

/// Lines of stderr kept to explain a crash.
const STDERR_TAIL_LINES: usize = 20;

struct Pending {
    reply: ReplyTo,
    notifications: Option<NoteSender>,
    /// The progress token this request asked for, if any.
    progress_token: Option<Value>,
}

/// Who waits for a result, and in which form.
enum ReplyTo {
    /// A call of this client: the result as a tree.
    Value(oneshot::Sender<Result<Value, Error>>),
    /// A relayed call (`send_raw`): the result as the server wrote it.
    Raw(oneshot::Sender<Result<Box<RawValue>, Error>>),
}

/// A result as the reader found it: whole, or (while a relayed call
/// waits) as written.
enum Answer {
    Value(Value),
    Raw(Box<RawValue>),
}

impl Reply for Pending {
    type Outcome = Result<Answer, Error>;
    fn reply(self, outcome: Self::Outcome) -> bool {
        match self.reply {
            ReplyTo::Value(tx) => tx
                .send(outcome.and_then(|answer| match answer {
                    Answer::Value(value) => Ok(value),
                    Answer::Raw(raw) => serde_json::from_str(raw.get()).map_err(Error::Json),
                }))
                .is_ok(),
            ReplyTo::Raw(tx) => tx
                .send(outcome.and_then(|answer| match answer {
                    Answer::Raw(raw) => Ok(raw),
                    Answer::Value(value) => {
                        serde_json::value::to_raw_value(&value).map_err(Error::Json)
                    }
                }))
                .is_ok(),
        }
    }
}

/// A response's members, borrowed from its line: enough to hand a result
/// on as written.
#[derive(serde::Deserialize)]
struct RawResponse<'a> {
    id: Option<RequestId>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

/// `{"id":…,"jsonrpc":"2.0","method":…,"params":…}` with params as written
/// (members in the order `RequestOut` writes them).
struct RawRequestOut<'a> {
    id: &'a RequestId,
    method: &'a str,
    params: &'a RawValue,
}

impl RawRequestOut<'_> {
    /// The request as a line, written into a buffer sized once (the
    /// params are most of it).
    fn line(&self) -> Vec<u8> {
        // The members around the params, with room for the id and method.
        const ENVELOPE: usize = 96;
        let mut line = Vec::with_capacity(self.params.get().len() + ENVELOPE);
        if serde_json::to_writer(&mut line, self).is_err() {
            line.clear();
        }
        line.push(b'\n');
        line
    }
}

impl serde::Serialize for RawRequestOut<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("id", self.id)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("method", self.method)?;
        map.serialize_entry("params", self.params)?;
        map.end()
    }
}

/// The requests this client sent and still waits on.
type PendingMap = Arc<InFlight<Pending>>;

/// One live byte-stream connection (a server process's stdio, or a stream
/// handed in by the application).
struct Connection {
    outgoing: Arc<Outgoing>,
    pending: PendingMap,
    /// Becomes true once the server shows it is serving (see the module
    /// doc); always true for a stream handed in by the application.
    serving: watch::Receiver<bool>,
    /// The server process, when this transport started one.
    child: Option<Arc<tokio::sync::Mutex<Child>>>,
    alive: Arc<AtomicBool>,
    /// The task reading the server's output: a closed stream connection
    /// waits for it, so nothing it holds outlives `close`.
    reader: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// The task serving the other end of a stream, when it is one of this
    /// process: a closed connection waits for it as for `reader`.
    peer: Mutex<Option<tokio::task::JoinHandle<()>>>,
    /// Relayed calls waiting (`send_raw`): while there are, the reader
    /// hands results on as written.
    raw_waiting: Arc<AtomicUsize>,
}

/// What the reader answers: the calls waiting, and how many of them want
/// their result as written.
struct Awaited {
    pending: PendingMap,
    raw_waiting: Arc<AtomicUsize>,
}

/// Counts one relayed call among a connection's `raw_waiting` while it
/// lives.
struct RawWaiting(Arc<AtomicUsize>);

impl RawWaiting {
    fn start(count: &Arc<AtomicUsize>) -> RawWaiting {
        count.fetch_add(1, Ordering::AcqRel);
        RawWaiting(count.clone())
    }
}

impl Drop for RawWaiting {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Where connections come from.
enum Source {
    /// Spawn (and respawn) this command.
    Command(StdioCommand),
    /// A single stream given by the application; it cannot be reopened.
    Stream,
}

pub(crate) struct StdioTransport {
    source: Source,
    stderr: StderrMode,
    on_notification: Option<NotificationCallback>,
    answers: Answerer,
    limits: ClientLimits,
    connection: Mutex<Option<Arc<Connection>>>,
    /// How many server processes (or streams) ended: read by every
    /// 2025-11-25 request, so an atomic the reader bumps, not a lock.
    ends: Arc<std::sync::atomic::AtomicU64>,
    closed: AtomicBool,
}

impl StdioTransport {
    pub(crate) fn spawn(
        command: StdioCommand,
        stderr: StderrMode,
        on_notification: Option<NotificationCallback>,
        server_requests: Option<ServerRequestHandler>,
        limits: ClientLimits,
    ) -> Result<StdioTransport, Error> {
        let transport = StdioTransport {
            source: Source::Command(command),
            stderr,
            on_notification,
            answers: Answerer::new(server_requests, &limits),
            limits,
            connection: Mutex::new(None),
            ends: Arc::default(),
            closed: AtomicBool::new(false),
        };
        // Start now so a bad command fails at connect time.
        transport.connection()?;
        Ok(transport)
    }

    /// A transport over an existing byte stream (newline-delimited
    /// JSON-RPC, as the stdio binding defines it for any reliable stream).
    pub(crate) fn over_stream<R, W>(
        reader: R,
        writer: W,
        on_notification: Option<NotificationCallback>,
        server_requests: Option<ServerRequestHandler>,
        limits: ClientLimits,
        peer: Option<tokio::task::JoinHandle<()>>,
    ) -> StdioTransport
    where
        R: tokio::io::AsyncRead + Unpin + Send + 'static,
        W: tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let answers = Answerer::new(server_requests, &limits);
        let ends = Arc::<std::sync::atomic::AtomicU64>::default();
        let conn = start_connection(
            reader,
            writer,
            None,
            StderrTail::default(),
            Inbound {
                ends: ends.clone(),
                on_notification: on_notification.clone(),
                answerer: answers.clone(),
                max_message_bytes: limits.max_message_bytes,
            },
            None,
        );
        *lock_unpoisoned(&conn.peer) = peer;
        StdioTransport {
            source: Source::Stream,
            stderr: StderrMode::Null,
            on_notification,
            answers,
            limits,
            connection: Mutex::new(Some(Arc::new(conn))),
            ends,
            closed: AtomicBool::new(false),
        }
    }

    /// The live connection, starting (or restarting) the server if needed.
    fn connection(&self) -> Result<Arc<Connection>, Error> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        let mut slot = lock_unpoisoned(&self.connection);
        if let Some(conn) = slot.as_ref()
            && conn.alive.load(Ordering::Acquire)
        {
            return Ok(conn.clone());
        }
        let Source::Command(command) = &self.source else {
            return Err(Error::Closed);
        };
        let conn = Arc::new(self.start(command)?);
        *slot = Some(conn.clone());
        Ok(conn)
    }

    fn start(&self, command: &StdioCommand) -> Result<Connection, Error> {
        let resolved = windows_program(command);
        let mut cmd = match &resolved {
            Some(found) => Command::new(found),
            None => Command::new(&command.program),
        };
        cmd.args(&command.args)
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(match self.stderr {
                StderrMode::Inherit => Stdio::inherit(),
                StderrMode::Null => Stdio::null(),
                _ => Stdio::piped(),
            })
            .kill_on_drop(true);
        if let Some(cwd) = &command.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| super::program::start_error(&command.program, resolved.as_deref(), e))?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| Error::Protocol("child has no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| Error::Protocol("child has no stdout".into()))?;
        let mut tail = StderrTail::default();
        if let Some(stderr) = child.stderr.take() {
            let (ended_tx, ended) = watch::channel(());
            tail.ended = Some(ended);
            tokio::spawn(read_stderr(
                stderr,
                self.stderr.clone(),
                tail.lines.clone(),
                ended_tx,
                self.limits.max_stderr_line_bytes,
            ));
        }
        let unread = unread_probe(&stdin);
        Ok(start_connection(
            stdout,
            stdin,
            Some(child),
            tail,
            Inbound {
                ends: self.ends.clone(),
                on_notification: self.on_notification.clone(),
                answerer: self.answers.clone(),
                max_message_bytes: self.limits.max_message_bytes,
            },
            unread,
        ))
    }
}

/// The file to start for `command` on Windows, where std finds only `.exe`
/// files in `PATH` and `npx` is `npx.cmd` (see `program.rs`); `None`
/// elsewhere, where the name is started as given, as it always was.
fn windows_program(command: &StdioCommand) -> Option<PathBuf> {
    #[cfg(windows)]
    {
        let found = super::program::program_for_windows(
            &command.program,
            &command.env,
            |name| std::env::var_os(name),
            |path| path.is_file(),
        );
        if let Some(found) = &found {
            tracing::debug!(program = ?command.program, found = %found.display(), "resolved the server program");
        }
        found
    }
    #[cfg(not(windows))]
    {
        let _ = command;
        None
    }
}

/// What a connection does with what the server sends besides responses.
struct Inbound {
    /// Bumped when the server's output ends (the transport's generation).
    ends: Arc<std::sync::atomic::AtomicU64>,
    on_notification: Option<NotificationCallback>,
    answerer: Answerer,
    max_message_bytes: usize,
}

/// `unread` tells how many bytes written to the server are still unread
/// (a spawned process on Linux); without it the server counts as serving
/// from the start, as a stream handed in by the application does.
fn start_connection<R, W>(
    reader: R,
    writer: W,
    child: Option<Child>,
    stderr_tail: StderrTail,
    inbound: Inbound,
    unread: Option<UnreadProbe>,
) -> Connection
where
    R: tokio::io::AsyncRead + Unpin + Send + 'static,
    W: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let pending: PendingMap = Arc::default();
    let raw_waiting = Arc::new(AtomicUsize::new(0));
    let alive = Arc::new(AtomicBool::new(true));
    let (serving_tx, serving) = watch::channel(unread.is_none());
    let outgoing = Outgoing::new(writer, serving.clone());
    tokio::spawn(
        outgoing
            .clone()
            .run(start_up_watch(unread, serving_tx.clone())),
    );
    let reader = tokio::spawn(read_replies(
        BufReader::new(reader),
        Awaited {
            pending: pending.clone(),
            raw_waiting: raw_waiting.clone(),
        },
        alive.clone(),
        stderr_tail,
        inbound,
        Arc::downgrade(&outgoing),
        serving_tx,
    ));
    Connection {
        outgoing,
        pending,
        serving,
        child: child.map(|c| Arc::new(tokio::sync::Mutex::new(c))),
        alive,
        reader: Mutex::new(Some(reader)),
        peer: Mutex::new(None),
        raw_waiting,
    }
}

impl Drop for Connection {
    /// A connection nobody holds any more closes the server's input (the
    /// signal to exit), as `stop` does.
    fn drop(&mut self) {
        self.outgoing.close();
    }
}

impl Connection {
    /// Sends `line`, request `id`, whose answer `entry` hands to `answer`;
    /// `kept` lives as long as the call waits. Abandoning the returned
    /// future cancels the request.
    fn start<T: Send + 'static>(
        &self,
        id: RequestId,
        entry: Pending,
        line: Vec<u8>,
        answer: oneshot::Receiver<Result<T, Error>>,
        kept: impl Send + 'static,
    ) -> BoxFuture<Result<T, Error>> {
        if self.pending.insert(id.clone(), entry).is_err() {
            // Ids come from the client's counter, so this means a bug, not
            // a peer's doing; refusing keeps the first caller answerable.
            return Box::pin(async move {
                Err(Error::Protocol(format!(
                    "request id {id} is already in use by a request in flight"
                )))
            });
        }
        let written = self.outgoing.send(line);
        let guard = CancelOnDrop {
            id: Some(id.clone()),
            pending: self.pending.clone(),
            outgoing: self.outgoing.clone(),
        };
        Box::pin(async move {
            let _kept = kept;
            let mut guard = guard;
            if let Err(e) = written {
                guard.id = None;
                guard.pending.take(&id);
                return Err(e);
            }
            let outcome = answer.await.unwrap_or(Err(Error::Closed));
            guard.id = None;
            outcome
        })
    }
}

/// Sends `notifications/cancelled` if the caller stops waiting before the
/// answer arrived.
struct CancelOnDrop {
    id: Option<RequestId>,
    pending: PendingMap,
    outgoing: Arc<Outgoing>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        if self.pending.take(&id).is_none() {
            return;
        }
        let mut params = Map::new();
        params.insert(
            "requestId".into(),
            serde_json::to_value(&id).unwrap_or(Value::Null),
        );
        params.insert(
            "reason".into(),
            Value::from("request abandoned by the client"),
        );
        let _ = self.outgoing.send(line_bytes(&notification_value(
            methods::NOTIFICATIONS_CANCELLED,
            Some(&params),
        )));
    }
}

fn line_bytes(value: &impl serde::Serialize) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

impl ClientTransport for StdioTransport {
    fn generation(&self) -> u64 {
        self.ends.load(Ordering::Acquire)
    }
    fn send(&self, request: OutgoingRequest) -> BoxFuture<Result<Value, Error>> {
        let conn = match self.connection() {
            Ok(conn) => conn,
            Err(e) => return Box::pin(async move { Err(e) }),
        };
        let (tx, rx) = oneshot::channel();
        let OutgoingRequest {
            id,
            method,
            params,
            notifications,
            ..
        } = request;
        let progress_token = params
            .get("_meta")
            .and_then(|m| m.get(meta::PROGRESS_TOKEN))
            .cloned();
        let entry = Pending {
            reply: ReplyTo::Value(tx),
            notifications,
            progress_token,
        };
        let line = line_bytes(&RequestOut {
            id: &id,
            method: &method,
            params: Some(&params),
        });
        conn.start(id, entry, line, rx, ())
    }

    fn send_raw(&self, request: RawRequest) -> BoxFuture<Result<Box<RawValue>, Error>> {
        let conn = match self.connection() {
            Ok(conn) => conn,
            Err(e) => return Box::pin(async move { Err(e) }),
        };
        let (tx, rx) = oneshot::channel();
        let RawRequest {
            id, method, params, ..
        } = request;
        // Counted before the request leaves, so the reader knows by the
        // time its answer comes.
        let counted = RawWaiting::start(&conn.raw_waiting);
        let entry = Pending {
            reply: ReplyTo::Raw(tx),
            notifications: None,
            progress_token: None,
        };
        let line = RawRequestOut {
            id: &id,
            method,
            params: &params,
        }
        .line();
        conn.start(id, entry, line, rx, counted)
    }

    fn notify(
        &self,
        method: &str,
        params: Map<String, Value>,
        _version: &str,
    ) -> BoxFuture<Result<(), Error>> {
        let sent = self.connection().and_then(|conn| {
            conn.outgoing
                .send(line_bytes(&notification_value(method, Some(&params))))
        });
        Box::pin(async move { sent })
    }

    fn mirrors_headers(&self) -> bool {
        false
    }

    fn serving(&self) -> BoxFuture<()> {
        let serving = self.connection().ok().map(|conn| conn.serving.clone());
        Box::pin(async move {
            let Some(mut serving) = serving else { return };
            // An error means the connection is gone: nothing to wait for.
            let _ = serving.wait_for(|serving| *serving).await;
        })
    }

    fn restart(&self) -> BoxFuture<bool> {
        if !matches!(self.source, Source::Command(_)) || self.closed.load(Ordering::Acquire) {
            return Box::pin(async { false });
        }
        // Out of the slot: the next request starts a new process, while
        // this one is stopped as `close` stops it.
        let conn = lock_unpoisoned(&self.connection).take();
        Box::pin(async move {
            if let Some(conn) = conn {
                // A restart is asked for by someone waiting (a developer who
                // saved a file): a server that does not leave when its input
                // ends gets SIGTERM soon.
                stop(conn, RESTART_EXIT_WAIT).await;
            }
            true
        })
    }

    fn close(&self) -> BoxFuture<()> {
        self.closed.store(true, Ordering::Release);
        let conn = lock_unpoisoned(&self.connection).take();
        Box::pin(async move {
            if let Some(conn) = conn {
                stop(conn, CLOSE_EXIT_WAIT).await;
            }
        })
    }
}

/// Ends a connection: its server's stdin is closed (the signal to exit),
/// then SIGTERM, then SIGKILL for a process that stays; a stream handed in
/// is given time to close its side.
async fn stop(conn: Arc<Connection>, exit_wait: Duration) {
    // The writer task writes what is queued, then closes stdin: the
    // server's signal to exit.
    conn.outgoing.close();
    let Some(child) = &conn.child else {
        // A stream handed in (an in-memory server, say): its peer sees the
        // end and closes its side; wait for that so the reader and what it
        // holds are gone when `close` returns (a C program may exit right
        // after); the same for the task serving the other end when it is
        // ours (an in-memory server). A peer that never closes is cut off.
        let deadline = tokio::time::Instant::now() + STREAM_CLOSE_GRACE;
        let reader = lock_unpoisoned(&conn.reader).take();
        let peer = lock_unpoisoned(&conn.peer).take();
        for mut task in reader.into_iter().chain(peer) {
            if tokio::time::timeout_at(deadline, &mut task).await.is_err() {
                task.abort();
                let _ = task.await;
            }
        }
        return;
    };
    let mut child = child.lock().await;
    if tokio::time::timeout(exit_wait, child.wait()).await.is_err() {
        terminate(&mut child).await;
    }
}

/// How long a server whose stdin was closed may take to exit by itself
/// before it is told to (SIGTERM): on `close`, and on a restart.
const CLOSE_EXIT_WAIT: Duration = Duration::from_secs(2);
const RESTART_EXIT_WAIT: Duration = Duration::from_millis(300);

/// How long a closed stream's peer may take to close its side.
const STREAM_CLOSE_GRACE: Duration = Duration::from_secs(2);

/// How long a server told to stop (SIGTERM) may take before it is killed.
#[cfg(unix)]
const TERM_GRACE: Duration = Duration::from_secs(2);

/// SIGTERM, a grace period, then SIGKILL. Windows has no SIGTERM a process
/// can send a console program: the server is ended at once
/// (`TerminateProcess`), which is also the last step everywhere.
async fn terminate(child: &mut Child) {
    #[cfg(unix)]
    if sigterm(child) && tokio::time::timeout(TERM_GRACE, child.wait()).await.is_ok() {
        return;
    }
    let _ = child.kill().await;
}

/// Sends SIGTERM to `child`; false when it has been reaped already (there
/// is nothing to stop) or the signal could not be sent.
#[cfg(unix)]
fn sigterm(child: &Child) -> bool {
    // `id` is `None` once the child was reaped, and it is only reaped
    // through `child`, borrowed here: the pid is still this child's (a
    // zombie at worst), never a recycled one.
    let Some(pid) = child.id().and_then(|id| libc::pid_t::try_from(id).ok()) else {
        return false;
    };
    // SAFETY: kill(2) takes no pointers; `pid` is a live child (see above).
    let sent = unsafe { libc::kill(pid, libc::SIGTERM) } == 0;
    if !sent {
        tracing::debug!(pid, error = %std::io::Error::last_os_error(), "SIGTERM not sent");
    }
    sent
}

/// How often the writer looks whether the server has read what it was sent,
/// while it has not shown it is serving yet.
const SERVING_POLL: Duration = Duration::from_millis(10);

/// Reports how many bytes written to the server's stdin it has not read
/// yet, or `None` when that cannot be told.
type UnreadProbe = Box<dyn Fn() -> Option<usize> + Send>;

/// The unread-bytes probe of a child's stdin pipe (Linux: `FIONREAD` on the
/// write end counts the bytes in the pipe). Elsewhere there is none, and a
/// spawned server counts as serving from the start.
#[cfg(target_os = "linux")]
fn unread_probe(stdin: &tokio::process::ChildStdin) -> Option<UnreadProbe> {
    use std::os::fd::AsRawFd;
    let fd = stdin.as_raw_fd();
    // The probe only runs inside the writer task, which closes `stdin` only
    // when it ends, so the descriptor stays open (and the same pipe) while
    // it is used.
    Some(Box::new(move || {
        let mut unread: libc::c_int = 0;
        // SAFETY: FIONREAD writes one c_int through the pointer, which
        // points at a live c_int; `fd` is open (see above).
        let rc = unsafe { libc::ioctl(fd, libc::FIONREAD, &mut unread) };
        (rc == 0).then(|| usize::try_from(unread).unwrap_or(0))
    }))
}

#[cfg(not(target_os = "linux"))]
fn unread_probe(_stdin: &tokio::process::ChildStdin) -> Option<UnreadProbe> {
    None
}

/// The writer task's start-up watch (see `Outgoing::run`): until the
/// server is serving, whether it has read what was written, checked after
/// each write and every [`SERVING_POLL`] while something written is unread.
fn start_up_watch(
    unread: Option<UnreadProbe>,
    serving: watch::Sender<bool>,
) -> impl FnMut(usize, bool) -> Watching {
    move |written, check| {
        let Some(probe) = &unread else {
            return Watching::Done;
        };
        if *serving.borrow() {
            return Watching::Done;
        }
        if check && written > 0 {
            mark_if_read(probe, written, &serving);
        }
        if written > 0 && !*serving.borrow() {
            Watching::Every(SERVING_POLL)
        } else {
            Watching::Done
        }
    }
}

/// Marks the server as serving once fewer bytes than were written wait in
/// its stdin, or when that cannot be told (the probe timeout then runs from
/// here, as it always did).
fn mark_if_read(probe: &UnreadProbe, written: usize, serving: &watch::Sender<bool>) {
    if probe().is_none_or(|unread| unread < written) {
        serving.send_replace(true);
    }
}

/// The last lines of a spawned server's stderr, and how to learn that the
/// reader has seen its end.
#[derive(Default)]
struct StderrTail {
    lines: Arc<Mutex<VecDeque<String>>>,
    /// Closed (its sender dropped) once stderr reached its end; `None` when
    /// nothing reads a stderr.
    ended: Option<watch::Receiver<()>>,
}

/// How long a server that closed its stdout may take to close its stderr
/// before its crash is reported with the lines read so far: the two pipes
/// close together when it exits, but a process it started may hold stderr.
const STDERR_END_WAIT: Duration = Duration::from_millis(500);

/// Reads stderr into `tail`; drops `ended` at the end of stderr, which is
/// how the reply reader knows the last words are in. Lines are cut at
/// `max_line` bytes: a server writing stderr without a newline must not
/// grow the client's memory (`ClientLimits::max_stderr_line_bytes`).
async fn read_stderr(
    stderr: tokio::process::ChildStderr,
    mode: StderrMode,
    tail: Arc<Mutex<VecDeque<String>>>,
    ended: watch::Sender<()>,
    max_line: usize,
) {
    let mut lines = StderrLines::new(BufReader::new(stderr), max_line);
    while let Some(line) = lines.next().await {
        match &mode {
            StderrMode::Callback(cb) => cb(&line),
            _ => tracing::debug!(target: "ferromcp::stderr", "{line}"),
        }
        let mut tail = lock_unpoisoned(&tail);
        if tail.len() == STDERR_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
    drop(ended);
}

/// Lines of a byte stream, none longer than `max` bytes: a longer line
/// comes out in pieces of `max` bytes. Invalid UTF-8 is replaced.
struct StderrLines<R> {
    reader: R,
    max: usize,
    line: Vec<u8>,
}

impl<R: tokio::io::AsyncBufRead + Unpin> StderrLines<R> {
    fn new(reader: R, max: usize) -> Self {
        StderrLines {
            reader,
            max: max.max(1),
            line: Vec::new(),
        }
    }

    /// The next line (or piece of one); `None` at the end or on an error.
    async fn next(&mut self) -> Option<String> {
        loop {
            let available = match self.reader.fill_buf().await {
                Ok(available) => available,
                Err(_) => &[],
            };
            if available.is_empty() {
                if self.line.is_empty() {
                    return None;
                }
                return Some(self.take());
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let before = newline.unwrap_or(available.len());
            let taken = before.min(self.max - self.line.len());
            self.line.extend_from_slice(&available[..taken]);
            let ends_here = newline == Some(taken);
            self.reader.consume(taken + usize::from(ends_here));
            if ends_here || self.line.len() >= self.max {
                return Some(self.take());
            }
        }
    }

    fn take(&mut self) -> String {
        if self.line.last() == Some(&b'\r') {
            self.line.pop();
        }
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        line
    }
}

/// Where a server's requests are answered: on the same stdin, so a
/// refusal is answered too.
struct ServerRequests {
    answerer: Answerer,
    outgoing: std::sync::Weak<Outgoing>,
}

impl ServerRequests {
    fn answer(&self, request: crate::protocol::jsonrpc::Request) {
        let outgoing = self.outgoing.clone();
        let deliver = move |message: Value| async move {
            if let Some(out) = outgoing.upgrade() {
                let _ = out.send(line_bytes(&message));
            }
        };
        if let Err(Refused(error)) = self.answerer.answer(request, deliver)
            && let Some(out) = self.outgoing.upgrade()
        {
            let _ = out.send(line_bytes(&error));
        }
    }
}

async fn read_replies<R: tokio::io::AsyncBufRead + Unpin>(
    mut reader: R,
    Awaited {
        pending,
        raw_waiting,
    }: Awaited,
    alive: Arc<AtomicBool>,
    stderr_tail: StderrTail,
    inbound: Inbound,
    // Weak: the reader must not keep stdin open once the client closes it.
    outgoing: std::sync::Weak<Outgoing>,
    serving: watch::Sender<bool>,
) {
    let Inbound {
        ends,
        on_notification,
        answerer,
        max_message_bytes,
    } = inbound;
    let server_requests = ServerRequests { answerer, outgoing };
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        let read = read_line_bounded(&mut reader, &mut line, max_message_bytes).await;
        // Any output (even an exit) shows the server is past start-up.
        if !*serving.borrow() {
            serving.send_replace(true);
        }
        match read {
            Ok(LineRead::Line) => {}
            Ok(LineRead::TooLong) => {
                tracing::warn!(
                    max_message_bytes,
                    "server sent a message over the size limit (max_message_bytes); skipped"
                );
                continue;
            }
            Ok(LineRead::Eof) | Err(_) => break,
        }
        let bytes = line.trim_ascii();
        if bytes.is_empty() {
            continue;
        }
        if raw_waiting.load(Ordering::Acquire) > 0
            && let Some((id, result)) = raw_result(bytes)
        {
            pending.resolve(&id, Ok(Answer::Raw(result)));
            continue;
        }
        match Message::from_slice(bytes) {
            Ok(Message::Response(response)) => {
                let Some(id) = response.id else {
                    tracing::warn!(error = ?response.outcome, "server sent an error without id");
                    continue;
                };
                pending.resolve(&id, response.outcome.map(Answer::Value).map_err(Error::Mcp));
            }
            Ok(Message::Notification(note)) => {
                route_notification(&pending, note, on_notification.as_ref())
            }
            Ok(Message::Request(request)) => server_requests.answer(request),
            Err(e) => tracing::warn!(error = %e.error, "unreadable message from server"),
        }
    }
    alive.store(false, Ordering::Release);
    ends.fetch_add(1, Ordering::AcqRel);
    // Let the stderr reader catch the last words before reporting them: a
    // fixed pause lost them on a loaded machine.
    if let Some(mut ended) = stderr_tail.ended {
        // Err once the reader dropped its sender: stderr is at its end.
        let _ = tokio::time::timeout(STDERR_END_WAIT, ended.changed()).await;
    }
    let tail: Vec<String> = lock_unpoisoned(&stderr_tail.lines)
        .iter()
        .cloned()
        .collect();
    let why = if tail.is_empty() {
        "the server process closed its output".to_owned()
    } else {
        format!(
            "the server process closed its output; its stderr ended with:\n{}",
            tail.join("\n")
        )
    };
    // The server is gone: every waiting call fails instead of hanging.
    // A closed connection, not a broken protocol: hosts report it as such
    // (C's FERROMCP_CONNECTION_CLOSED, Python's ConnectionClosedError).
    pending.fail_all(|| Err(Error::ClosedBecause(why.clone())));
}

/// A response's id and result as written, if `line` is a response with a
/// result (anything else is read whole).
fn raw_result(line: &[u8]) -> Option<(RequestId, Box<RawValue>)> {
    let response = serde_json::from_slice::<RawResponse<'_>>(line).ok()?;
    match response {
        RawResponse {
            id: Some(id),
            result: Some(result),
            method: None,
            error: None,
        } => Some((id, result.to_owned())),
        _ => None,
    }
}

/// Delivers a notification to the request it concerns: by subscription id
/// (the listen request's id) or by progress token; anything else goes to
/// the client-wide callback.
fn route_notification(
    pending: &PendingMap,
    note: Notification,
    fallback: Option<&NotificationCallback>,
) {
    let params = note.params.as_ref();
    let subscription = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(meta::SUBSCRIPTION_ID))
        .and_then(|t| serde_json::from_value::<RequestId>(t.clone()).ok());
    let progress = params.and_then(|p| p.get("progressToken"));
    let value = notification_value(&note.method, params);
    let target = match (&subscription, progress) {
        (Some(id), _) => pending.with(id, |p| p.notifications.clone()),
        (None, Some(token)) => pending.find_map(|p| {
            (p.progress_token.as_ref() == Some(token)).then(|| p.notifications.clone())
        }),
        (None, None) => None,
    }
    .flatten();
    if let Some(tx) = target {
        tx.send(value);
        return;
    }
    match fallback {
        Some(cb) => cb(
            &note.method,
            params
                .map(|p| Value::Object(p.clone()))
                .as_ref()
                .unwrap_or(&Value::Null),
        ),
        None => {
            tracing::debug!(method = %note.method, "notification not tied to a pending request")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StderrLines;

    /// SIGTERM first (sent by `libc::kill`, no `kill` program), then, for a
    /// server that ignores it, the kill that is the only step on Windows.
    #[cfg(unix)]
    #[tokio::test]
    async fn terminate_sends_sigterm_and_kills_a_server_that_ignores_it() {
        use super::{TERM_GRACE, sigterm, terminate};
        use std::os::unix::process::ExitStatusExt;
        use std::time::Instant;
        use tokio::io::AsyncBufReadExt;

        let mut child = tokio::process::Command::new("sleep")
            .arg("30")
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let started = Instant::now();
        terminate(&mut child).await;
        let status = child.wait().await.unwrap();
        assert_eq!(status.signal(), Some(libc::SIGTERM), "{status}");
        assert!(started.elapsed() < TERM_GRACE, "{:?}", started.elapsed());
        assert!(!sigterm(&child), "a reaped child is not signalled");

        // Says when SIGTERM is ignored (inherited through exec), so that
        // the signal cannot arrive before.
        let mut child = tokio::process::Command::new("sh")
            .args(["-c", "trap '' TERM; echo ready; exec sleep 30"])
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut ready = String::new();
        let stdout = child.stdout.take().unwrap();
        tokio::io::BufReader::new(stdout)
            .read_line(&mut ready)
            .await
            .unwrap();
        assert_eq!(ready, "ready\n");
        let started = Instant::now();
        terminate(&mut child).await;
        let status = child.wait().await.unwrap();
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status}");
        assert!(started.elapsed() >= TERM_GRACE, "{:?}", started.elapsed());
    }

    async fn lines(input: &[u8], max: usize) -> Vec<String> {
        let mut reader = StderrLines::new(tokio::io::BufReader::with_capacity(7, input), max);
        let mut out = Vec::new();
        while let Some(line) = reader.next().await {
            out.push(line);
        }
        out
    }

    #[tokio::test]
    async fn close_returns_once_the_task_serving_the_other_end_has_ended() {
        use std::sync::atomic::{AtomicBool, Ordering};
        // The peer's task ends a while after its input ends, as an in-memory
        // server's does once its requests have finished: `close` waits for
        // it, so what it holds is freed before a C program exits.
        let (client_side, peer_side) = tokio::io::duplex(1024);
        let ended = std::sync::Arc::new(AtomicBool::new(false));
        let peer = tokio::spawn({
            let ended = ended.clone();
            async move {
                use tokio::io::AsyncReadExt;
                let mut peer_side = peer_side;
                let mut sink = Vec::new();
                let _ = peer_side.read_to_end(&mut sink).await;
                drop(peer_side);
                tokio::time::sleep(std::time::Duration::from_millis(300)).await;
                ended.store(true, Ordering::Release);
            }
        });
        let (reader, writer) = tokio::io::split(client_side);
        let client = crate::client::Client::connect_stream_served_by(
            reader,
            writer,
            crate::client::ClientOptions::default(),
            Some(peer),
        );
        client.close().await;
        assert!(
            ended.load(Ordering::Acquire),
            "close returned before the peer's task ended"
        );
    }

    #[tokio::test]
    async fn stderr_lines_are_cut_at_the_limit_and_kept_whole_below_it() {
        assert_eq!(
            lines(b"one\r\ntwo\n\nlast", 64).await,
            ["one", "two", "", "last"]
        );
        assert_eq!(
            lines(b"abcdefghij\nk", 4).await,
            ["abcd", "efgh", "ij", "k"]
        );
        // A line of exactly the limit is one line, not one and an empty one.
        assert_eq!(lines(b"abcd\nefgh", 4).await, ["abcd", "efgh"]);
    }

    #[tokio::test]
    async fn endless_stderr_without_a_newline_never_holds_more_than_the_limit() {
        // 64 MiB without a newline, read in pieces of 8 KiB.
        let (mut writer, reader) = tokio::io::duplex(1 << 16);
        let writing = tokio::spawn(async move {
            use tokio::io::AsyncWriteExt;
            let chunk = vec![b'x'; 1 << 16];
            for _ in 0..1024 {
                if writer.write_all(&chunk).await.is_err() {
                    break;
                }
            }
        });
        let mut reader = StderrLines::new(tokio::io::BufReader::new(reader), 8192);
        let mut pieces = 0;
        while let Some(line) = reader.next().await {
            assert!(line.len() <= 8192);
            assert!(
                reader.line.capacity() <= 16384,
                "{}",
                reader.line.capacity()
            );
            pieces += 1;
        }
        writing.await.unwrap();
        assert_eq!(pieces, (64 << 20) / 8192);
    }
}
