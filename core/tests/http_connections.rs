//! Connections that hold the server without using it (issue #25 item 1).
//!
//! A client that connects and never sends a byte is closed one header
//! timeout after it was accepted (not after the idle timeout); at the
//! connection cap the listener closes the connection that matters least to
//! admit a new one (never-used, then idle, then still reading a head, oldest
//! first within each; never a busy one); an address may be limited to a
//! number of connections; and with 2,000 silent connections held a good
//! client is still answered within 2 s.
//!
//! Its own test binary: it raises the process's descriptor limit. Linux
//! only: it reads that limit through libc and connects from 127.0.0.2.

#![cfg(target_os = "linux")]

use ferromcp_testkit as common;

use common::{Http, QUIET, TIMEOUT, headers_for, read_response, request};
use ferromcp::protocol::Tool;
use ferromcp::server::{RequestContext, Server, ToolOutput};
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use tokio::sync::Notify;
use tokio::time::Instant;

/// What issue #25 requires: a good client is answered this soon, whatever
/// silent connections are held.
const ANSWERED_WITHIN: Duration = Duration::from_secs(2);

/// Lets the server take in what a client just did (accept a connection,
/// read its bytes, drop a finished response) before the next step, so the
/// order of the steps is the order the server sees.
const SETTLE: Duration = Duration::from_millis(50);

/// A server with `echo`, and `stream`, which reports progress (turning its
/// answer into an SSE stream) and waits for `release`.
fn server(release: Arc<Notify>) -> Server {
    let server = Server::new("http-connections", "1.0.0");
    server
        .add_tool(
            Tool::new("echo", json!({"type": "object"})),
            |_ctx: RequestContext, args: Value| async move {
                Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default()))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("stream", json!({"type": "object"})),
            move |ctx: RequestContext, _args: Value| {
                let release = release.clone();
                async move {
                    ctx.progress(0.0, None, Some("started"));
                    release.notified().await;
                    Ok(ToolOutput::text("done"))
                }
            },
        )
        .unwrap();
    server
}

fn echo_call(id: u64) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    )
}

/// Raw bytes of a request, kept alive (`close` false) or not.
fn raw_request(port: u16, body: &Value, close: bool) -> String {
    let text = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n",
        text.len()
    );
    if close {
        head.push_str("Connection: close\r\n");
    }
    for (name, value) in headers_for(body) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    format!("{head}\r\n{text}")
}

/// Connects to the server from `source` (any address of 127/8 is loopback).
async fn connect_from(source: IpAddr, port: u16) -> TcpStream {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(source, 0)).unwrap();
    socket
        .connect(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port))
        .await
        .unwrap()
}

const HERE: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
const ELSEWHERE: IpAddr = IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2));

/// A good `tools/call` from `source` on a new connection; fails unless it
/// is answered within [`ANSWERED_WITHIN`].
async fn good_call(port: u16, source: IpAddr) {
    let started = Instant::now();
    let answered = tokio::time::timeout(ANSWERED_WITHIN, async {
        let mut conn = connect_from(source, port).await;
        conn.write_all(raw_request(port, &echo_call(7), true).as_bytes())
            .await
            .unwrap();
        read_response(&mut conn).await
    })
    .await;
    let (status, body) = answered
        .unwrap_or_else(|_| panic!("a good call was not answered within {ANSWERED_WITHIN:?}"));
    assert_eq!(status, 200, "{body}");
    let response: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(response["result"]["content"][0]["text"], "hi", "{response}");
    eprintln!("good call answered in {:?}", started.elapsed());
}

/// Whether the server closes `stream` within `wait` (reading and
/// discarding whatever it sends first).
async fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let deadline = Instant::now() + wait;
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

/// Opens a `stream` call: a connection busy until `release` fires.
async fn busy(http: &Http) -> common::HttpStream {
    let mut call = request(2, "tools/call", json!({"name": "stream", "arguments": {}}));
    call["params"]["_meta"]["progressToken"] = json!("p");
    let mut stream = http.open(&call).await;
    let progress = stream.next_message().await.expect("the progress event");
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    stream
}

/// The end of a `stream` call, still delivered.
async fn finishes(mut stream: common::HttpStream) {
    let result = stream.next_message().await.expect("the result, still sent");
    assert_eq!(result["result"]["content"][0]["text"], "done", "{result}");
}

#[tokio::test]
async fn a_connection_that_never_sends_a_byte_is_closed_at_the_header_timeout() {
    let http = Http::start_with(server(Arc::default()), |o| {
        o.header_read_timeout = Duration::from_millis(300);
        // the idle rule must not be what closes it
        o.idle_timeout = Duration::from_secs(3600);
    })
    .await;
    let mut silent = TcpStream::connect(("127.0.0.1", http.port)).await.unwrap();
    assert!(
        closed_within(&mut silent, TIMEOUT).await,
        "a connection that never sent a byte was kept"
    );
}

#[tokio::test]
async fn once_a_request_was_served_the_idle_rule_applies() {
    let http = Http::start_with(server(Arc::default()), |o| {
        o.header_read_timeout = Duration::from_millis(100);
        o.idle_timeout = Duration::from_secs(3600);
    })
    .await;
    let mut conn = TcpStream::connect(("127.0.0.1", http.port)).await.unwrap();
    conn.write_all(raw_request(http.port, &echo_call(1), false).as_bytes())
        .await
        .unwrap();
    assert_eq!(read_response(&mut conn).await.0, 200);
    // many header timeouts: a kept-alive connection waits for the idle one
    assert!(
        !closed_within(&mut conn, Duration::from_millis(600)).await,
        "a kept-alive connection was closed at the header timeout"
    );
    conn.write_all(raw_request(http.port, &echo_call(2), false).as_bytes())
        .await
        .unwrap();
    assert_eq!(read_response(&mut conn).await.0, 200);
}

#[tokio::test]
async fn at_the_cap_a_new_client_is_admitted_by_closing_the_oldest_silent_connection() {
    const CAP: usize = 8;
    let http = Http::start_with(server(Arc::default()), |o| o.max_connections = CAP).await;
    let mut silent = Vec::new();
    for _ in 0..CAP {
        silent.push(TcpStream::connect(("127.0.0.1", http.port)).await.unwrap());
    }
    tokio::time::sleep(SETTLE).await;
    good_call(http.port, HERE).await;
    assert!(
        closed_within(&mut silent[0], TIMEOUT).await,
        "the oldest silent connection was kept"
    );
    for conn in &mut silent[1..] {
        assert!(
            !closed_within(conn, QUIET).await,
            "a newer silent connection was closed"
        );
    }
}

/// What a connection is doing when a newcomer arrives at the cap.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// Connected, nothing sent.
    New,
    /// A request answered, kept alive.
    Idle,
    /// Part of a request head sent.
    Reading,
}

async fn open(kind: Kind, port: u16) -> TcpStream {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    match kind {
        Kind::New => {}
        Kind::Idle => {
            conn.write_all(raw_request(port, &echo_call(1), false).as_bytes())
                .await
                .unwrap();
            assert_eq!(read_response(&mut conn).await.0, 200);
        }
        Kind::Reading => conn
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127")
            .await
            .unwrap(),
    }
    tokio::time::sleep(SETTLE).await;
    conn
}

/// At a cap of 3 held by a busy connection and `older` then `newer`, a
/// good client arrives: which of the two was closed (0 older, 1 newer).
/// The busy one must still finish.
async fn shed_between(older: Kind, newer: Kind) -> usize {
    let release = Arc::new(Notify::new());
    let http = Http::start_with(server(release.clone()), |o| o.max_connections = 3).await;
    let stream = busy(&http).await;
    let mut conns = [open(older, http.port).await, open(newer, http.port).await];
    good_call(http.port, HERE).await;
    let mut closed = Vec::new();
    for (i, conn) in conns.iter_mut().enumerate() {
        if closed_within(conn, QUIET).await {
            closed.push(i);
        }
    }
    assert_eq!(
        closed.len(),
        1,
        "{older:?} then {newer:?}: closed {closed:?}"
    );
    release.notify_one();
    finishes(stream).await;
    closed[0]
}

#[tokio::test]
async fn the_never_used_go_first_then_the_idle_then_those_reading_a_head_oldest_first() {
    use Kind::*;
    assert_eq!(shed_between(Idle, New).await, 1, "never used before idle");
    assert_eq!(
        shed_between(Reading, New).await,
        1,
        "never used before reading"
    );
    assert_eq!(shed_between(Reading, Idle).await, 1, "idle before reading");
    assert_eq!(shed_between(New, New).await, 0, "oldest never-used first");
    assert_eq!(shed_between(Idle, Idle).await, 0, "longest idle first");
    assert_eq!(shed_between(Reading, Reading).await, 0, "oldest head first");
}

#[tokio::test]
async fn busy_connections_are_never_shed_and_a_newcomer_waits_for_one_to_end() {
    let release = Arc::new(Notify::new());
    let http = Http::start_with(server(release.clone()), |o| o.max_connections = 2).await;
    let first = busy(&http).await;
    let second = busy(&http).await;
    let mut waiting = TcpStream::connect(("127.0.0.1", http.port)).await.unwrap();
    waiting
        .write_all(raw_request(http.port, &echo_call(3), true).as_bytes())
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(QUIET * 2, waiting.read(&mut byte)).await;
    assert!(early.is_err(), "served beyond the cap: {early:?}");
    // one stream ends (its connection closes): the newcomer gets its slot
    release.notify_one();
    finishes(first).await;
    let (status, body) = read_response(&mut waiting).await;
    assert_eq!(status, 200, "{body}");
    // the other stream was never cut
    release.notify_one();
    finishes(second).await;
}

#[tokio::test]
async fn a_newcomer_waiting_on_busy_connections_is_admitted_once_one_goes_idle() {
    let release = Arc::new(Notify::new());
    let http = Http::start_with(server(release.clone()), |o| o.max_connections = 1).await;
    // a keep-alive connection busy with a stream, idle once it ends
    let mut conn = TcpStream::connect(("127.0.0.1", http.port)).await.unwrap();
    let mut call = request(2, "tools/call", json!({"name": "stream", "arguments": {}}));
    call["params"]["_meta"]["progressToken"] = json!("p");
    conn.write_all(raw_request(http.port, &call, false).as_bytes())
        .await
        .unwrap();
    // the response has begun (its head and the progress event): busy
    let mut begun = [0u8; 1];
    let n = tokio::time::timeout(TIMEOUT, conn.read(&mut begun)).await;
    assert!(matches!(n, Ok(Ok(1))), "{n:?}");
    let mut waiting = TcpStream::connect(("127.0.0.1", http.port)).await.unwrap();
    waiting
        .write_all(raw_request(http.port, &echo_call(3), true).as_bytes())
        .await
        .unwrap();
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(QUIET * 2, waiting.read(&mut byte)).await;
    assert!(early.is_err(), "served beyond the cap: {early:?}");
    release.notify_one();
    // the stream ends, its connection stays open but idle: it is shed
    let (status, body) = read_response(&mut waiting).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        closed_within(&mut conn, TIMEOUT).await,
        "the idle one was kept"
    );
}

#[tokio::test]
async fn an_address_at_its_limit_sheds_its_own_oldest_connection() {
    let http = Http::start_with(server(Arc::default()), |o| {
        o.max_connections_per_address = Some(2);
    })
    .await;
    let mut first = connect_from(HERE, http.port).await;
    tokio::time::sleep(SETTLE).await;
    let mut second = connect_from(HERE, http.port).await;
    // another address's connection is not a candidate, even if older
    let mut other = connect_from(ELSEWHERE, http.port).await;
    tokio::time::sleep(SETTLE).await;
    good_call(http.port, HERE).await;
    assert!(
        closed_within(&mut first, TIMEOUT).await,
        "the address's oldest connection was kept"
    );
    assert!(!closed_within(&mut second, QUIET).await);
    assert!(!closed_within(&mut other, QUIET).await);
}

#[tokio::test]
async fn an_address_at_its_limit_with_only_busy_connections_is_refused_429_naming_the_limit() {
    let release = Arc::new(Notify::new());
    let http = Http::start_with(server(release.clone()), |o| {
        o.max_connections_per_address = Some(2);
    })
    .await;
    let first = busy(&http).await;
    let second = busy(&http).await;
    let mut refused = connect_from(HERE, http.port).await;
    refused
        .write_all(raw_request(http.port, &echo_call(4), false).as_bytes())
        .await
        .unwrap();
    let mut answer = Vec::new();
    tokio::time::timeout(TIMEOUT, refused.read_to_end(&mut answer))
        .await
        .expect("the refusal, then the close")
        .unwrap();
    let answer = String::from_utf8(answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").expect("a whole response");
    assert!(head.starts_with("HTTP/1.1 429 "), "{answer}");
    assert!(
        head.to_ascii_lowercase().contains("connection: close"),
        "{answer}"
    );
    let error: Value = serde_json::from_str(body).unwrap();
    assert_eq!(error["error"]["code"], -32603, "{error}");
    assert_eq!(
        error["error"]["message"],
        "too many connections from this address (max_connections_per_address = 2)"
    );
    // other addresses are served; the busy ones finish
    good_call(http.port, ELSEWHERE).await;
    release.notify_one();
    finishes(first).await;
    release.notify_one();
    finishes(second).await;
}

/// Raises the soft descriptor limit to the hard one: the test holds
/// thousands of sockets, and the server (in this process) two descriptors
/// per connection it serves.
fn raise_descriptor_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit to fill in and then to set.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = limit.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
    limit.rlim_cur
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_2000_silent_connections_held_a_good_call_is_answered_within_2_s() {
    const SILENT: usize = 2000;
    const CAP: usize = 1024;
    let limit = raise_descriptor_limit();
    // the silent sockets, the server's (two per connection) and some spare
    let needed = (SILENT + 2 * CAP + 200) as u64;
    assert!(
        limit >= needed,
        "this test needs a hard RLIMIT_NOFILE of at least {needed} (it is {limit})"
    );
    let http = Http::start_with(server(Arc::default()), |o| o.max_connections = CAP).await;
    let started = Instant::now();
    let mut silent = Vec::with_capacity(SILENT);
    for _ in 0..SILENT {
        silent.push(TcpStream::connect(("127.0.0.1", http.port)).await.unwrap());
    }
    eprintln!(
        "{SILENT} silent connections open in {:?}",
        started.elapsed()
    );
    good_call(http.port, HERE).await;
    good_call(http.port, HERE).await;
    drop(silent);
}
