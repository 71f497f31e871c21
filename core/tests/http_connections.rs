//! Connections that hold the server without using it (issue #25 item 1).
//!
//! A client that connects and never sends a byte is closed one header
//! timeout after it was accepted, not after the idle timeout.
//!
//! Linux only, as the rest of this file will be.

#![cfg(target_os = "linux")]

mod common;

use common::{Http, TIMEOUT, headers_for, read_response, request};
use ferromcp::protocol::Tool;
use ferromcp::server::{RequestContext, Server, ToolOutput};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// A server with `echo`.
fn server() -> Server {
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

#[tokio::test]
async fn a_connection_that_never_sends_a_byte_is_closed_at_the_header_timeout() {
    let http = Http::start_with(server(), |o| {
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
    let http = Http::start_with(server(), |o| {
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
