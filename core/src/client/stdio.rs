//! stdio client transport: spawns the server and speaks newline-delimited
//! JSON-RPC over its stdin/stdout.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{mpsc, oneshot};

use super::{ClientTransport, Outgoing};
use crate::Error;
use crate::protocol::jsonrpc::{Message, RequestId, notification_value, request_value};
use crate::server::BoxFuture;
use crate::transport::DEFAULT_MAX_MESSAGE_BYTES;
use crate::transport::stdio::{LineRead, read_line_bounded};

/// How to start a server process.
#[derive(Debug, Clone)]
pub struct StdioCommand {
    /// The program to run.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Extra environment variables.
    pub env: Vec<(OsString, OsString)>,
    /// Working directory, if not the current one.
    pub cwd: Option<PathBuf>,
}

impl StdioCommand {
    /// A command from a program and its arguments.
    pub fn new<I, S>(program: impl Into<OsString>, args: I) -> StdioCommand
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        StdioCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            cwd: None,
        }
    }

    /// Splits a command line on whitespace (no shell quoting).
    pub fn parse(command_line: &str) -> Result<StdioCommand, Error> {
        let mut parts = command_line.split_whitespace();
        let program = parts
            .next()
            .ok_or_else(|| Error::Protocol("empty server command".into()))?;
        Ok(StdioCommand::new(program, parts))
    }
}

struct Pending {
    reply: oneshot::Sender<Result<Value, Error>>,
    notifications: Option<mpsc::UnboundedSender<Value>>,
}

type PendingMap = Arc<Mutex<HashMap<RequestId, Pending>>>;

fn lock(map: &PendingMap) -> std::sync::MutexGuard<'_, HashMap<RequestId, Pending>> {
    // Only channel ends live in the map; a panic elsewhere leaves it usable.
    map.lock().unwrap_or_else(|p| p.into_inner())
}

pub(crate) struct StdioTransport {
    outgoing: Mutex<Option<mpsc::UnboundedSender<Vec<u8>>>>,
    pending: PendingMap,
    child: Arc<tokio::sync::Mutex<Child>>,
}

impl StdioTransport {
    pub(crate) fn spawn(command: StdioCommand) -> Result<StdioTransport, Error> {
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args)
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        if let Some(cwd) = &command.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd.spawn().map_err(|e| {
            Error::Io(std::io::Error::new(
                e.kind(),
                format!("could not start {:?}: {e}", command.program),
            ))
        })?;
        let stdin = child
            .stdin
            .take()
            .ok_or_else(|| Error::Protocol("child has no stdin".into()))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| Error::Protocol("child has no stdout".into()))?;
        let pending: PendingMap = Arc::default();
        let (out_tx, out_rx) = mpsc::unbounded_channel();
        tokio::spawn(write_lines(stdin, out_rx));
        tokio::spawn(read_replies(BufReader::new(stdout), pending.clone()));
        Ok(StdioTransport {
            outgoing: Mutex::new(Some(out_tx)),
            pending,
            child: Arc::new(tokio::sync::Mutex::new(child)),
        })
    }

    fn write(&self, bytes: Vec<u8>) -> Result<(), Error> {
        let guard = self.outgoing.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_ref() {
            Some(tx) => tx.send(bytes).map_err(|_| Error::Closed),
            None => Err(Error::Closed),
        }
    }
}

/// Sends `notifications/cancelled` if the caller stops waiting before the
/// answer arrived.
struct CancelOnDrop {
    id: Option<RequestId>,
    pending: PendingMap,
    outgoing: Option<mpsc::UnboundedSender<Vec<u8>>>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else { return };
        if lock(&self.pending).remove(&id).is_none() {
            return;
        }
        if let Some(out) = &self.outgoing {
            let mut params = Map::new();
            params.insert(
                "requestId".into(),
                serde_json::to_value(&id).unwrap_or(Value::Null),
            );
            params.insert(
                "reason".into(),
                Value::from("request abandoned by the client"),
            );
            let _ = out.send(line_bytes(&notification_value(
                "notifications/cancelled",
                Some(&params),
            )));
        }
    }
}

fn line_bytes(value: &Value) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(value).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

impl ClientTransport for StdioTransport {
    fn send(&self, request: Outgoing) -> BoxFuture<Result<Value, Error>> {
        let (tx, rx) = oneshot::channel();
        let Outgoing {
            id,
            method,
            mut params,
            notifications,
        } = request;
        // Progress notifications carry only their token, so use the request
        // id as the token to route them back to this call.
        if notifications.is_some()
            && let Some(Value::Object(meta)) = params.get_mut("_meta")
        {
            meta.entry("progressToken")
                .or_insert_with(|| serde_json::to_value(&id).unwrap_or(Value::Null));
        }
        lock(&self.pending).insert(
            id.clone(),
            Pending {
                reply: tx,
                notifications,
            },
        );
        let written = self.write(line_bytes(&request_value(&id, &method, Some(&params))));
        let guard = CancelOnDrop {
            id: Some(id.clone()),
            pending: self.pending.clone(),
            outgoing: self
                .outgoing
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        };
        Box::pin(async move {
            let mut guard = guard;
            if let Err(e) = written {
                guard.id = None;
                lock(&guard.pending).remove(&id);
                return Err(e);
            }
            let outcome = rx.await.unwrap_or(Err(Error::Closed));
            guard.id = None;
            outcome
        })
    }

    fn close(&self) -> BoxFuture<()> {
        // Dropping the sender ends the writer task, which closes stdin: the
        // server's signal to exit.
        self.outgoing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        let child = self.child.clone();
        Box::pin(async move {
            let mut child = child.lock().await;
            if tokio::time::timeout(Duration::from_secs(2), child.wait())
                .await
                .is_err()
            {
                terminate(&mut child).await;
            }
        })
    }
}

/// SIGTERM, a grace period, then SIGKILL.
async fn terminate(child: &mut Child) {
    #[cfg(unix)]
    if let Some(pid) = child.id() {
        // There is no std API for SIGTERM; `kill` is on every POSIX system.
        let _ = Command::new("kill")
            .arg("-TERM")
            .arg(pid.to_string())
            .status()
            .await;
        if tokio::time::timeout(Duration::from_secs(2), child.wait())
            .await
            .is_ok()
        {
            return;
        }
    }
    let _ = child.kill().await;
}

async fn write_lines(mut stdin: ChildStdin, mut rx: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(bytes) = rx.recv().await {
        if stdin.write_all(&bytes).await.is_err() {
            break;
        }
        if rx.is_empty() && stdin.flush().await.is_err() {
            break;
        }
    }
    let _ = stdin.shutdown().await;
}

async fn read_replies<R: tokio::io::AsyncBufRead + Unpin>(mut reader: R, pending: PendingMap) {
    let mut line = Vec::with_capacity(4096);
    loop {
        line.clear();
        match read_line_bounded(&mut reader, &mut line, DEFAULT_MAX_MESSAGE_BYTES).await {
            Ok(LineRead::Line) => {}
            Ok(LineRead::TooLong) => {
                tracing::warn!("server sent a message over the size limit; skipped");
                continue;
            }
            Ok(LineRead::Eof) | Err(_) => break,
        }
        let bytes = line.trim_ascii();
        if bytes.is_empty() {
            continue;
        }
        match Message::from_slice(bytes) {
            Ok(Message::Response(response)) => {
                let Some(id) = response.id else {
                    tracing::warn!(error = ?response.outcome, "server sent an error without id");
                    continue;
                };
                if let Some(p) = lock(&pending).remove(&id) {
                    let _ = p.reply.send(response.outcome.map_err(Error::Mcp));
                }
            }
            Ok(Message::Notification(note)) => route_notification(&pending, note),
            Ok(Message::Request(request)) => {
                tracing::warn!(method = %request.method, "ignoring a server-to-client request");
            }
            Err(e) => tracing::warn!(error = %e.error, "unreadable message from server"),
        }
    }
    // The server is gone: every waiting call fails instead of hanging.
    for (_, p) in lock(&pending).drain() {
        let _ = p.reply.send(Err(Error::Closed));
    }
}

fn route_notification(pending: &PendingMap, note: crate::protocol::jsonrpc::Notification) {
    let token = note
        .params
        .as_ref()
        .and_then(|p| {
            p.get("progressToken")
                .or_else(|| p.get("_meta")?.get("progressToken"))
        })
        .and_then(|t| serde_json::from_value::<RequestId>(t.clone()).ok());
    let value = notification_value(&note.method, note.params.as_ref());
    if let Some(token) = token
        && let Some(p) = lock(pending).get(&token)
        && let Some(tx) = &p.notifications
    {
        let _ = tx.send(value);
        return;
    }
    tracing::debug!(method = %note.method, "notification not tied to a pending request");
}
