//! A misbehaving MCP server, to test what ferromcp's clients (Rust, Python,
//! Node, C and the CLI, all through core) do against it. Written once here
//! and started by each binding's tests; it speaks just enough of the
//! protocol by hand (no ferromcp server underneath) to get a client to the
//! misbehaviour.
//!
//! ```text
//! hostile-server MODE [--http PORT] [--count N] [--seconds S]
//! ```
//!
//! Over HTTP (`--http PORT`, 0 picks one; the port is printed on stdout as
//! `listening on PORT`), every `tools/call` gets the misbehaviour:
//!
//! - `endless-sse`: an SSE response of `data:` lines that never ends its event;
//! - `endless-line`: an SSE response whose one line never ends;
//! - `wrong-id`: a JSON response carrying another request's id;
//! - `progress-flood`: `--count` progress notifications (default 100,000)
//!   as fast as the client reads them, then the result `"done"`;
//! - `ping-flood`: a 2025-11-25 server: after `initialize`, its GET stream
//!   carries `--count` `ping` requests (default 10,000) at once. The tool
//!   `stats` answers `{"answered": N, "maxConnections": M}`: the answers
//!   received so far and the most connections the client had open at once.
//!   Every 50th answer's connection is closed after its `202`, as a server
//!   may close a kept-alive connection at any time.
//!
//! Over stdio (no `--http`):
//!
//! - `progress-flood`: as above, on stdout;
//! - `stderr-flood`: stderr written without a newline, without end, while
//!   `tools/call` answers normally (`"ok"`).
//!
//! Other methods get plain answers: `server/discover`, `tools/list` (tools
//! `flood` and, in `ping-flood`, `stats`), `ping`.

use serde_json::{Value, json};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    EndlessSse,
    EndlessLine,
    WrongId,
    ProgressFlood,
    PingFlood,
    StderrFlood,
}

#[derive(Clone, Copy)]
struct Settings {
    mode: Mode,
    count: usize,
}

fn usage() -> ! {
    eprintln!(
        "usage: hostile-server (endless-sse|endless-line|wrong-id|progress-flood|ping-flood|stderr-flood) [--http PORT] [--count N]"
    );
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = match args.next().as_deref() {
        Some("endless-sse") => Mode::EndlessSse,
        Some("endless-line") => Mode::EndlessLine,
        Some("wrong-id") => Mode::WrongId,
        Some("progress-flood") => Mode::ProgressFlood,
        Some("ping-flood") => Mode::PingFlood,
        Some("stderr-flood") => Mode::StderrFlood,
        _ => usage(),
    };
    let mut port = None;
    let mut count = None;
    while let Some(flag) = args.next() {
        let value = args.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--http" => port = value.parse::<u16>().ok().or_else(|| usage()),
            "--count" => count = value.parse::<usize>().ok().or_else(|| usage()),
            _ => usage(),
        }
    }
    let default_count = if mode == Mode::PingFlood {
        10_000
    } else {
        100_000
    };
    let settings = Settings {
        mode,
        count: count.unwrap_or(default_count),
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("hostile-server: {e}");
            std::process::exit(1)
        }
    };
    let outcome = match port {
        Some(port) => runtime.block_on(serve_http(settings, port)),
        None => runtime.block_on(serve_stdio(settings)),
    };
    if let Err(e) = outcome {
        eprintln!("hostile-server: {e}");
        std::process::exit(1);
    }
}

fn tools(settings: Settings) -> Value {
    let mut tools = vec![json!({"name": "flood", "inputSchema": {"type": "object"}})];
    if settings.mode == Mode::PingFlood {
        tools.push(json!({"name": "stats", "inputSchema": {"type": "object"}}));
    }
    json!({"tools": tools})
}

fn discover() -> Value {
    json!({
        "supportedVersions": ["2026-07-28"],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "hostile-server", "version": "0"}
    })
}

fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

fn text(s: &str) -> Value {
    json!({"content": [{"type": "text", "text": s}]})
}

fn progress(token: &Value, n: usize, total: usize) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/progress",
           "params": {"progressToken": token, "progress": n, "total": total}})
}

fn progress_token(message: &Value) -> Value {
    message["params"]["_meta"]["progressToken"].clone()
}

/// The plain answer to anything that is not the misbehaviour.
fn plain(settings: Settings, message: &Value) -> Option<Value> {
    let id = message.get("id")?;
    let method = message["method"].as_str().unwrap_or("");
    Some(match method {
        "server/discover" if settings.mode == Mode::PingFlood => {
            error(id, -32601, "method not found")
        }
        "server/discover" => result(id, discover()),
        "initialize" => result(
            id,
            json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                   "serverInfo": {"name": "hostile-server", "version": "0"}}),
        ),
        "tools/list" => result(id, tools(settings)),
        "ping" => result(id, json!({})),
        _ => error(id, -32601, "method not found"),
    })
}

// ---- stdio ----

async fn serve_stdio(settings: Settings) -> std::io::Result<()> {
    if settings.mode == Mode::StderrFlood {
        std::thread::spawn(|| {
            let chunk = [b'x'; 65536];
            let mut stderr = std::io::stderr();
            while stderr.write_all(&chunk).is_ok() {}
        });
    }
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let mut out = tokio::io::stdout();
    while let Some(line) = lines.next_line().await? {
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let Some(id) = message.get("id") else {
            continue;
        };
        if message["method"] != "tools/call" {
            if let Some(answer) = plain(settings, &message) {
                write_line(&mut out, &answer).await?;
            }
            continue;
        }
        match settings.mode {
            Mode::ProgressFlood => {
                let token = progress_token(&message);
                let mut batch = Vec::with_capacity(1 << 16);
                for n in 1..=settings.count {
                    serde_json::to_writer(&mut batch, &progress(&token, n, settings.count))?;
                    batch.push(b'\n');
                    if batch.len() >= 1 << 16 {
                        out.write_all(&batch).await?;
                        batch.clear();
                    }
                }
                out.write_all(&batch).await?;
                write_line(&mut out, &result(id, text("done"))).await?;
            }
            _ => write_line(&mut out, &result(id, text("ok"))).await?,
        }
    }
    Ok(())
}

async fn write_line(out: &mut tokio::io::Stdout, message: &Value) -> std::io::Result<()> {
    let mut bytes = serde_json::to_vec(message)?;
    bytes.push(b'\n');
    out.write_all(&bytes).await?;
    out.flush().await
}

// ---- HTTP ----

/// What the `ping-flood` server counts.
#[derive(Default)]
struct Stats {
    open: AtomicUsize,
    max_open: AtomicUsize,
    answered: AtomicUsize,
}

async fn serve_http(settings: Settings, port: u16) -> std::io::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on {}", listener.local_addr()?.port());
    std::io::stdout().flush()?;
    let stats = Arc::new(Stats::default());
    loop {
        let (stream, _) = listener.accept().await?;
        let stats = stats.clone();
        let open = stats.open.fetch_add(1, Ordering::SeqCst) + 1;
        stats.max_open.fetch_max(open, Ordering::SeqCst);
        tokio::spawn(async move {
            let _ = connection(settings, stream, &stats).await;
            stats.open.fetch_sub(1, Ordering::SeqCst);
        });
    }
}

struct HttpRequest {
    method: String,
    body: Vec<u8>,
}

/// Reads one request (head and `Content-Length` body); `None` at the end.
async fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<HttpRequest>> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).await? == 0 {
        return Ok(None);
    }
    let method = request_line
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_owned();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length.min(1 << 24)];
    reader.read_exact(&mut body).await?;
    Ok(Some(HttpRequest { method, body }))
}

async fn connection(settings: Settings, stream: TcpStream, stats: &Stats) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream);
    while let Some(request) = read_request(&mut reader).await? {
        let out = reader.get_mut();
        match request.method.as_str() {
            "GET" if settings.mode == Mode::PingFlood => {
                return flood_pings(settings, out).await;
            }
            "GET" => respond(out, "405 Method Not Allowed", "", b"").await?,
            "DELETE" => respond(out, "200 OK", "", b"").await?,
            "POST" => {
                let Ok(message) = serde_json::from_slice::<Value>(&request.body) else {
                    respond(out, "400 Bad Request", "", b"").await?;
                    continue;
                };
                if message.get("method").is_none() {
                    // An answer to one of our pings.
                    let answered = stats.answered.fetch_add(1, Ordering::SeqCst) + 1;
                    respond(out, "202 Accepted", "", b"").await?;
                    if answered.is_multiple_of(50) {
                        // Now and then the connection is closed after the
                        // answer, without `Connection: close` (legal: a
                        // server may end a kept-alive connection at any
                        // time). A client must not lose the answer it sends
                        // next on it.
                        return Ok(());
                    }
                    continue;
                }
                let Some(id) = message.get("id").cloned() else {
                    respond(out, "202 Accepted", "", b"").await?;
                    continue;
                };
                if message["method"] == "tools/call" {
                    return misbehave(settings, out, &message, &id, stats).await;
                }
                let answer = plain(settings, &message).unwrap_or(Value::Null);
                let session = if message["method"] == "initialize" {
                    "Mcp-Session-Id: hostile-session\r\n"
                } else {
                    ""
                };
                respond_json(out, session, &answer).await?;
            }
            _ => respond(out, "405 Method Not Allowed", "", b"").await?,
        }
    }
    Ok(())
}

async fn respond(
    out: &mut TcpStream,
    status: &str,
    headers: &str,
    body: &[u8],
) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\n{headers}Content-Length: {}\r\n\r\n",
        body.len()
    );
    out.write_all(head.as_bytes()).await?;
    out.write_all(body).await
}

async fn respond_json(out: &mut TcpStream, headers: &str, message: &Value) -> std::io::Result<()> {
    let body = serde_json::to_vec(message)?;
    respond(
        out,
        "200 OK",
        &format!("{headers}Content-Type: application/json\r\n"),
        &body,
    )
    .await
}

/// Starts an SSE response that lasts until the connection closes.
async fn start_sse(out: &mut TcpStream) -> std::io::Result<()> {
    out.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
    )
    .await
}

async fn misbehave(
    settings: Settings,
    out: &mut TcpStream,
    message: &Value,
    id: &Value,
    stats: &Stats,
) -> std::io::Result<()> {
    match settings.mode {
        Mode::EndlessSse => {
            start_sse(out).await?;
            let line = format!("data: {}\n", "x".repeat(8186));
            loop {
                out.write_all(line.as_bytes()).await?;
            }
        }
        Mode::EndlessLine => {
            start_sse(out).await?;
            out.write_all(b"data: ").await?;
            let chunk = [b'y'; 65536];
            loop {
                out.write_all(&chunk).await?;
            }
        }
        Mode::WrongId => {
            let other = match id.as_i64() {
                Some(n) => json!(n + 1000),
                None => json!(format!("{id}-other")),
            };
            respond_json(out, "", &result(&other, text("not yours"))).await
        }
        Mode::ProgressFlood => {
            start_sse(out).await?;
            let token = progress_token(message);
            let mut batch = Vec::with_capacity(1 << 16);
            for n in 1..=settings.count {
                batch.extend_from_slice(b"data: ");
                serde_json::to_writer(&mut batch, &progress(&token, n, settings.count))?;
                batch.extend_from_slice(b"\n\n");
                if batch.len() >= 1 << 16 {
                    out.write_all(&batch).await?;
                    batch.clear();
                }
            }
            batch.extend_from_slice(b"data: ");
            serde_json::to_writer(&mut batch, &result(id, text("done")))?;
            batch.extend_from_slice(b"\n\n");
            out.write_all(&batch).await?;
            out.shutdown().await
        }
        Mode::PingFlood => {
            let stats = json!({
                "answered": stats.answered.load(Ordering::SeqCst),
                "maxConnections": stats.max_open.load(Ordering::SeqCst),
            });
            respond_json(out, "", &result(id, text(&stats.to_string()))).await
        }
        Mode::StderrFlood => respond_json(out, "", &result(id, text("ok"))).await,
    }
}

/// The GET stream of a `ping-flood` session: `count` pings at once, then
/// kept open.
async fn flood_pings(settings: Settings, out: &mut TcpStream) -> std::io::Result<()> {
    start_sse(out).await?;
    let mut batch = Vec::with_capacity(1 << 16);
    for n in 0..settings.count {
        let ping = json!({"jsonrpc": "2.0", "id": format!("ping-{n}"), "method": "ping"});
        batch.extend_from_slice(b"data: ");
        serde_json::to_writer(&mut batch, &ping)?;
        batch.extend_from_slice(b"\n\n");
    }
    out.write_all(&batch).await?;
    // Held open until the client goes: a closed stream would be resumed.
    let mut sink = [0u8; 1024];
    while out.read(&mut sink).await? > 0 {}
    Ok(())
}
