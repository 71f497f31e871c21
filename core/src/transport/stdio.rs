//! stdio transport (spec: basic/transports/stdio.mdx): one JSON-RPC message
//! per line, nothing but MCP on the output stream.

use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::DEFAULT_MAX_MESSAGE_BYTES;
use crate::legacy::{self, Session};
use crate::protocol::codes;
use crate::protocol::jsonrpc::{Message, RequestId, error_value};
use crate::protocol::methods::NOTIFICATIONS_CANCELLED;
use crate::rpc::{DuplicateId, InFlight, duplicate_id_error};
use crate::server::Server;
use crate::{Error, McpError};

/// How long requests still running at end of input may finish before they
/// are cancelled: a client that writes its requests and closes stdin still
/// gets its answers, and a stuck handler cannot keep the process alive.
const DRAIN_GRACE: Duration = Duration::from_secs(10);

/// Requests being served: the token that cancels each, and whether it is
/// a `subscriptions/listen`.
type Running = Arc<InFlight<(CancellationToken, bool)>>;

impl Server {
    /// Serves on this process's stdin/stdout until stdin reaches EOF.
    pub async fn serve_stdio(&self) -> Result<(), Error> {
        serve(self.clone(), tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves on stdin/stdout until stdin reaches EOF or `shutdown` is
    /// cancelled; requests in flight are given time to finish either way.
    pub async fn serve_stdio_until(&self, shutdown: CancellationToken) -> Result<(), Error> {
        serve_until(
            self.clone(),
            tokio::io::stdin(),
            tokio::io::stdout(),
            shutdown,
        )
        .await
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
/// read, and requests in flight get the same grace period as at EOF.
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
    let (out_tx, out_rx) = mpsc::unbounded_channel::<Value>();
    let writer_done = CancellationToken::new();
    let writer_task = tokio::spawn(write_messages(writer, out_rx, writer_done.clone()));
    let in_flight: Running = Arc::default();
    let mut tasks = JoinSet::new();
    let mut reader = BufReader::with_capacity(64 * 1024, reader);
    let mut line = Vec::with_capacity(4096);
    // Set when the client opens with a legacy `initialize`: the whole
    // process then speaks 2025-11-25 to it.
    let mut legacy: Option<Arc<Session>> = None;

    loop {
        line.clear();
        let read = tokio::select! {
            read = read_line_bounded(&mut reader, &mut line, DEFAULT_MAX_MESSAGE_BYTES) => read,
            _ = shutdown.cancelled() => break,
        };
        match read {
            Ok(LineRead::Eof) => break,
            Ok(LineRead::TooLong) => {
                let error = McpError::new(
                    codes::INVALID_REQUEST,
                    format!("message exceeds the {DEFAULT_MAX_MESSAGE_BYTES}-byte limit"),
                );
                let _ = out_tx.send(error_value(None, &error));
                continue;
            }
            Ok(LineRead::Line) => {}
            Err(e) => {
                tracing::warn!(error = %e, "reading stdin failed; stopping");
                break;
            }
        }
        let bytes = line.trim_ascii();
        if bytes.is_empty() {
            continue;
        }
        while tasks.try_join_next().is_some() {}
        match &legacy {
            Some(session) => handle_legacy_line(&server, session, bytes, &out_tx, &mut tasks),
            None => {
                legacy = handle_line(&server, bytes, &out_tx, &in_flight, &mut tasks);
            }
        }
    }
    if let Some(session) = &legacy {
        session.close();
    }

    // The client is gone: its subscriptions end now, while ordinary requests
    // get a grace period to deliver answers it may still read.
    in_flight.cancel_where(|(_, is_listen)| *is_listen);
    let drained = tokio::time::timeout(DRAIN_GRACE, async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        in_flight.cancel_where(|_| true);
        while tasks.join_next().await.is_some() {}
    }
    drop(out_tx);
    // A host may still hold a request context (and with it a sender) after
    // its request ended; the writer must not wait for those to go away.
    writer_done.cancel();
    writer_task
        .await
        .map_err(|e| Error::Protocol(format!("stdio writer task failed: {e}")))??;
    Ok(())
}

/// Handles one line of a 2026-07-28 connection; returns the session when
/// the line was a legacy `initialize` that turned the connection legacy.
fn handle_line(
    server: &Server,
    bytes: &[u8],
    out: &mpsc::UnboundedSender<Value>,
    in_flight: &Running,
    tasks: &mut JoinSet<()>,
) -> Option<Arc<Session>> {
    let message = match Message::from_slice(bytes) {
        Ok(m) => m,
        Err(e) => {
            let _ = out.send(error_value(e.id.as_ref(), &e.error));
            return None;
        }
    };
    if let Message::Request(request) = &message
        && legacy::is_legacy_initialize(request)
    {
        return match legacy::initialize(server, request, "stdio".into()) {
            Ok(init) => {
                init.session.set_standalone(Some(out.clone()));
                init.session.forward_events(server);
                let _ = out.send(init.message);
                Some(init.session)
            }
            Err(message) => {
                let _ = out.send(message);
                None
            }
        };
    }
    handle_modern(server, message, out, in_flight, tasks);
    None
}

fn handle_legacy_line(
    server: &Server,
    session: &Arc<Session>,
    bytes: &[u8],
    out: &mpsc::UnboundedSender<Value>,
    tasks: &mut JoinSet<()>,
) {
    let message = match Message::from_slice(bytes) {
        Ok(m) => m,
        Err(e) => {
            let _ = out.send(error_value(e.id.as_ref(), &e.error));
            return;
        }
    };
    match message {
        Message::Request(request) => {
            let server = server.clone();
            let session = session.clone();
            let out = out.clone();
            tasks.spawn(async move {
                let cancel = CancellationToken::new();
                let run = legacy::handle_request(
                    &server,
                    &session,
                    request,
                    cancel.clone(),
                    Some(out.clone()),
                    None,
                );
                tokio::select! {
                    reply = run => {
                        if !cancel.is_cancelled() {
                            let _ = out.send(reply);
                        }
                    }
                    _ = cancel.cancelled() => {}
                }
            });
        }
        Message::Notification(note) => {
            legacy::handle_notification(session, &note.method, note.params.as_ref());
        }
        Message::Response(response) => {
            if let Some(id) = response.id {
                session.deliver_response(&id, response.outcome);
            }
        }
    }
}

fn handle_modern(
    server: &Server,
    message: Message,
    out: &mpsc::UnboundedSender<Value>,
    in_flight: &Running,
    tasks: &mut JoinSet<()>,
) {
    match message {
        Message::Request(request) => {
            let prepared = match server.prepare(request) {
                Ok(p) => p,
                Err(rejection) => {
                    let _ = out.send(rejection.to_message());
                    return;
                }
            };
            if let Err(rejection) = server.admit(&prepared) {
                let _ = out.send(rejection.to_message());
                return;
            }
            let id = prepared.request.id.clone();
            let cancel = CancellationToken::new();
            let mut tracked =
                match in_flight.track(id.clone(), (cancel.clone(), prepared.is_listen())) {
                    Ok(tracked) => tracked,
                    Err(DuplicateId(_)) => {
                        let _ = out.send(error_value(Some(&id), &duplicate_id_error(&id)));
                        return;
                    }
                };
            let server = server.clone();
            let out = out.clone();
            tasks.spawn(async move {
                let run = server.execute(prepared, cancel.clone(), Some(out.clone()));
                tokio::select! {
                    reply = run => {
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
                            let _ = out.send(reply.message.into_value());
                        }
                    }
                    _ = cancel.cancelled() => {}
                }
                // `tracked` drops here, freeing the id of a cancelled request.
            });
        }
        Message::Notification(notification) => {
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
        }
        Message::Response(_) => {
            // The 2026-07-28 server sends no requests, so a response cannot
            // answer anything; ignoring it keeps the stream usable.
            tracing::debug!("ignoring a JSON-RPC response sent to the server");
        }
    }
}

pub(crate) enum LineRead {
    Line,
    TooLong,
    Eof,
}

/// Reads one `\n`-terminated line into `buf` without ever holding more than
/// `limit` bytes; an over-long line is consumed and reported as `TooLong`.
pub(crate) async fn read_line_bounded<R: AsyncBufReadExt + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    limit: usize,
) -> std::io::Result<LineRead> {
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                LineRead::TooLong
            } else if buf.is_empty() {
                LineRead::Eof
            } else {
                LineRead::Line
            });
        }
        let (chunk, found) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..=i], true),
            None => (available, false),
        };
        let used = chunk.len();
        if !too_long {
            if buf.len() + used > limit {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if found {
            return Ok(if too_long {
                LineRead::TooLong
            } else {
                LineRead::Line
            });
        }
    }
}

/// Writes queued messages, one per line, flushing whenever the queue runs dry
/// so a burst costs one flush rather than one per message.
async fn write_messages<W: AsyncWrite + Unpin>(
    writer: W,
    mut rx: mpsc::UnboundedReceiver<Value>,
    done: CancellationToken,
) -> Result<(), Error> {
    let mut writer = BufWriter::with_capacity(64 * 1024, writer);
    let mut buf = Vec::with_capacity(4096);
    loop {
        let message = tokio::select! {
            biased;
            message = rx.recv() => match message {
                Some(m) => m,
                None => break,
            },
            // Everything queued so far is still written below.
            _ = done.cancelled() => match rx.try_recv() {
                Ok(m) => m,
                Err(_) => break,
            },
        };
        buf.clear();
        serde_json::to_writer(&mut buf, &message)?;
        buf.push(b'\n');
        writer.write_all(&buf).await?;
        if rx.is_empty() {
            writer.flush().await?;
        }
    }
    writer.flush().await?;
    Ok(())
}
