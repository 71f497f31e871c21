//! The HTTP listener's defences against clients that hold connections
//! without using them (issue 11 item 2): a request head must arrive within
//! `header_read_timeout` of its first byte, a body within
//! `body_read_timeout`, an idle keep-alive connection closes after
//! `idle_timeout` (never while a response streams). The connection cap,
//! silent connections and the per-address limit are tested in
//! `http_connections.rs`.

use ferromcp_testkit as common;

use common::{Http, TIMEOUT, headers_for, read_response, request};
use ferromcp::protocol::Tool;
use ferromcp::server::{RequestContext, Server, ToolOutput};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Notify;

/// A tiny deadline for the timeout under test.
const SHORT: Duration = Duration::from_millis(200);

/// A server whose `stream` tool reports progress (which turns its answer
/// into an SSE stream) and then waits for `release`.
fn server(release: Arc<Notify>) -> Server {
    let server = Server::new("http-limits", "1.0.0");
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

/// A keep-alive `tools/list` request, as raw bytes.
fn list_request(port: u16) -> String {
    let body = request(1, "tools/list", json!({})).to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers_for(&request(1, "tools/list", json!({}))) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    format!("{head}\r\n{body}")
}

/// Whether the server closes `stream` within `wait` (reading and
/// discarding whatever it sends first).
async fn closed_within(stream: &mut TcpStream, wait: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + wait;
    let mut buf = [0u8; 1024];
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

async fn connect(http: &Http) -> TcpStream {
    TcpStream::connect(("127.0.0.1", http.port)).await.unwrap()
}

/// The server still answers a well-behaved client.
async fn still_serves(http: &Http) {
    let response = http.post(&request(9, "tools/list", json!({}))).await;
    assert_eq!(response.status, 200, "{}", response.body);
}

#[tokio::test]
async fn a_client_sending_its_headers_a_byte_at_a_time_is_cut_at_the_header_timeout() {
    let http = Http::start_with(server(Arc::default()), |o| o.header_read_timeout = SHORT).await;
    let mut slow = connect(&http).await;
    let head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Filler: ";
    let mut closed = false;
    let started = tokio::time::Instant::now();
    // one byte every 20 ms: each byte is activity, but the head never ends
    for byte in head.iter().chain(std::iter::repeat(&b'a')) {
        if started.elapsed() > TIMEOUT || slow.write_all(&[*byte]).await.is_err() {
            closed = started.elapsed() <= TIMEOUT;
            break;
        }
        if closed_within(&mut slow, Duration::from_millis(20)).await {
            closed = true;
            break;
        }
    }
    assert!(closed, "a trickled request head kept its connection");
    still_serves(&http).await;
}

#[tokio::test]
async fn a_partial_request_head_then_silence_is_cut_at_the_header_timeout() {
    let http = Http::start_with(server(Arc::default()), |o| {
        o.header_read_timeout = SHORT;
        // the idle rule must not be what closes it
        o.idle_timeout = Duration::from_secs(3600);
    })
    .await;
    let mut slow = connect(&http).await;
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127")
        .await
        .unwrap();
    assert!(
        closed_within(&mut slow, TIMEOUT).await,
        "a half-sent request head kept its connection"
    );
    still_serves(&http).await;
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_idle_timeout() {
    let http = Http::start_with(server(Arc::default()), |o| {
        o.idle_timeout = SHORT;
        // longer than the test waits: only the idle rule can close it
        o.header_read_timeout = Duration::from_secs(3600);
    })
    .await;
    let mut conn = connect(&http).await;
    conn.write_all(list_request(http.port).as_bytes())
        .await
        .unwrap();
    let (status, body) = read_response(&mut conn).await;
    assert_eq!(status, 200, "{body}");
    assert!(
        closed_within(&mut conn, TIMEOUT).await,
        "an idle keep-alive connection stayed open"
    );
}

#[tokio::test]
async fn a_streaming_response_is_not_cut_by_the_idle_or_header_timeouts() {
    let release = Arc::new(Notify::new());
    let http = Http::start_with(server(release.clone()), |o| {
        o.idle_timeout = Duration::from_millis(50);
        o.header_read_timeout = Duration::from_millis(50);
        // no keep-alive comments while the test waits: the stream is silent
        o.keep_alive = Duration::from_secs(3600);
    })
    .await;
    let mut call = request(2, "tools/call", json!({"name": "stream", "arguments": {}}));
    call["params"]["_meta"]["progressToken"] = json!("p");
    let mut stream = http.open(&call).await;
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    let progress = stream.next_message().await.expect("the progress event");
    assert_eq!(progress["method"], "notifications/progress", "{progress}");
    // many times both timeouts, with nothing sent either way
    tokio::time::sleep(Duration::from_millis(500)).await;
    release.notify_one();
    let result = stream.next_message().await.expect("the result, still sent");
    assert_eq!(result["result"]["content"][0]["text"], "done", "{result}");
}

#[tokio::test]
async fn a_body_that_does_not_arrive_in_time_is_answered_408() {
    let http = Http::start_with(server(Arc::default()), |o| o.body_read_timeout = SHORT).await;
    let mut conn = connect(&http).await;
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: 100\r\n",
        http.port
    );
    for (name, value) in headers_for(&request(1, "tools/list", json!({}))) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n{\"jsonrpc\":");
    conn.write_all(head.as_bytes()).await.unwrap();
    let (status, body) = read_response(&mut conn).await;
    assert_eq!(status, 408, "{body}");
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["error"]["code"], -32600, "{error}");
    assert!(
        closed_within(&mut conn, TIMEOUT).await,
        "the connection of an unread body stayed open"
    );
}
