//! The physical limit of an HTTP-to-stdio bridge: Streamable HTTP in, one
//! shared stdio child out, and nothing else. Each POSTed JSON-RPC message
//! goes to the child's stdin as one line with its `id` replaced by the
//! relay's own (clients may use the same ids), and the child's reply goes
//! back to the request that sent it with the client's id restored.
//!
//!     baseline-relay --http PORT -- COMMAND [ARGS...]
//!
//! No protocol work at all: no era translation, no validation, no listing,
//! no notifications routed (the child's are dropped), no server-to-client
//! requests. A real bridge (`ferromcp proxy --http`) cannot be cheaper, so
//! its ratio to this row shows what the bridge's protocol work costs on top
//! of the hop itself.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::value::RawValue;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, HashMap};
use std::convert::Infallible;
use std::rc::Rc;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{ChildStdin, Command};
use tokio::sync::{Mutex, oneshot};

/// Replies awaited, by the relay's id.
type Pending = Rc<RefCell<HashMap<u64, oneshot::Sender<Vec<u8>>>>>;

struct Relay {
    stdin: Mutex<ChildStdin>,
    pending: Pending,
    next_id: Cell<u64>,
}

/// A message's members, each as the raw JSON it was written as.
type Members<'a> = BTreeMap<&'a str, &'a RawValue>;

/// The message with `id` in place of its own.
fn with_id(members: &Members<'_>, id: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    out.push(b'{');
    let mut first = true;
    let mut put = |out: &mut Vec<u8>, key: &str, value: &str| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
        out.extend_from_slice(value.as_bytes());
    };
    put(&mut out, "id", id);
    for (key, value) in members {
        if *key != "id" {
            put(&mut out, key, value.get());
        }
    }
    out.push(b'}');
    out
}

fn respond(status: StatusCode, body: Vec<u8>) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

async fn handle(
    relay: Rc<Relay>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.method() != hyper::Method::POST {
        return respond(StatusCode::METHOD_NOT_ALLOWED, Vec::new());
    }
    let Ok(body) = req.into_body().collect().await.map(|b| b.to_bytes()) else {
        return respond(StatusCode::BAD_REQUEST, Vec::new());
    };
    let Ok(members) = serde_json::from_slice::<Members<'_>>(&body) else {
        return respond(StatusCode::BAD_REQUEST, Vec::new());
    };
    let Some(client_id) = members.get("id").map(|id| id.get().to_owned()) else {
        // A notification: passed on, nothing awaited.
        let mut line = body.to_vec();
        line.push(b'\n');
        let _ = relay.stdin.lock().await.write_all(&line).await;
        return respond(StatusCode::ACCEPTED, Vec::new());
    };
    let id = relay.next_id.get();
    relay.next_id.set(id + 1);
    let (tx, rx) = oneshot::channel();
    relay.pending.borrow_mut().insert(id, tx);
    let mut line = with_id(&members, &id.to_string());
    line.push(b'\n');
    if relay.stdin.lock().await.write_all(&line).await.is_err() {
        relay.pending.borrow_mut().remove(&id);
        return respond(StatusCode::BAD_GATEWAY, Vec::new());
    }
    let Ok(reply) = rx.await else {
        return respond(StatusCode::BAD_GATEWAY, Vec::new());
    };
    match serde_json::from_slice::<Members<'_>>(&reply) {
        Ok(members) => respond(StatusCode::OK, with_id(&members, &client_id)),
        Err(_) => respond(StatusCode::BAD_GATEWAY, Vec::new()),
    }
}

/// Hands each reply line of the child to the request awaiting its id.
async fn read_replies(stdout: tokio::process::ChildStdout, pending: Pending) {
    let mut lines = BufReader::with_capacity(64 * 1024, stdout);
    let mut line = Vec::with_capacity(64 * 1024);
    loop {
        line.clear();
        match lines.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        #[derive(serde::Deserialize)]
        struct Id {
            id: Option<u64>,
        }
        let Ok(Id { id: Some(id) }) = serde_json::from_slice::<Id>(&line) else {
            continue; // a notification or a request of the child's: dropped
        };
        if let Some(waiting) = pending.borrow_mut().remove(&id) {
            let _ = waiting.send(line.clone());
        }
    }
}

async fn serve(port: u16, command: &[String]) -> std::io::Result<()> {
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err(std::io::Error::other("the child has no pipes"));
    };
    let pending: Pending = Rc::default();
    let relay = Rc::new(Relay {
        stdin: Mutex::new(stdin),
        pending: pending.clone(),
        next_id: Cell::new(1),
    });
    tokio::task::spawn_local(read_replies(stdout, pending));
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let relay = relay.clone();
        tokio::task::spawn_local(async move {
            let _ = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(
                    TokioIo::new(stream),
                    service_fn(move |req| handle(relay.clone(), req)),
                )
                .await;
        });
    }
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (port, command) = match args.as_slice() {
        [flag, port, dashes, command @ ..]
            if flag == "--http" && dashes == "--" && !command.is_empty() =>
        {
            match port.parse::<u16>() {
                Ok(port) => (port, command),
                Err(_) => {
                    eprintln!("baseline-relay: invalid port {port:?}");
                    return std::process::ExitCode::from(2);
                }
            }
        }
        _ => {
            eprintln!("usage: baseline-relay --http PORT -- COMMAND [ARGS...]");
            return std::process::ExitCode::from(2);
        }
    };
    let result = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .and_then(|rt| {
            let local = tokio::task::LocalSet::new();
            local.block_on(&rt, serve(port, command))
        });
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("baseline-relay: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
