//! Graceful shutdown of the stdio transport (issue 11, item 10): once
//! told to stop, the server reads no more input, ends open
//! `subscriptions/listen` streams with the spec's completion result
//! (docs/basic/patterns/subscriptions.mdx "Graceful Closure"), lets the
//! requests in flight finish, and returns.

use ferromcp_testkit as common;

use common::{TIMEOUT, request, server_with};
use ferromcp::protocol::Tool;
use ferromcp::server::{RequestContext, Server, ServerOptions, ToolOutput};
use ferromcp::transport::stdio::{StdioOptions, serve_with};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio_util::sync::CancellationToken;

const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// A server with a tool that answers after `slow_ms`.
fn slow_server() -> Server {
    let server = server_with(ServerOptions::default());
    server
        .add_tool(
            Tool::new("slow", json!({"type": "object"})),
            |_ctx: RequestContext, _args: Value| async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                Ok(ToolOutput::text("finished"))
            },
        )
        .unwrap();
    server
}

async fn next(lines: &mut Lines<BufReader<tokio::io::DuplexStream>>) -> Option<Value> {
    let line = tokio::time::timeout(TIMEOUT, lines.next_line())
        .await
        .expect("the server writes or ends its output in time")
        .unwrap()?;
    Some(serde_json::from_str(&line).unwrap())
}

/// Opens a listen stream (id 1), starts the slow tool (id 2), and returns
/// once both are running; then cancels `stop` and checks what follows.
pub async fn shutdown_ends_listen_and_finishes_in_flight(
    stop: CancellationToken,
    trigger: impl FnOnce(),
) {
    let (mut to_server, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, from_server) = tokio::io::duplex(64 * 1024);
    let serving = tokio::spawn(serve_with(
        slow_server(),
        server_in,
        server_out,
        StdioOptions::default(),
        stop,
    ));
    let mut lines = BufReader::new(from_server).lines();
    let listen = request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let slow = request(2, "tools/call", json!({"name": "slow", "arguments": {}}));
    for message in [listen, slow] {
        let mut line = message.to_string();
        line.push('\n');
        to_server.write_all(line.as_bytes()).await.unwrap();
    }
    let ack = next(&mut lines).await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");

    trigger();
    let mut answers = Vec::new();
    while let Some(message) = next(&mut lines).await {
        answers.push(message);
    }
    let listen_end = answers.iter().find(|m| m["id"] == 1);
    let listen_end = listen_end.unwrap_or_else(|| panic!("no listen result in {answers:?}"));
    assert_eq!(
        listen_end["result"]["resultType"], "complete",
        "{listen_end}"
    );
    assert_eq!(listen_end["result"]["_meta"][SUB_ID], 1, "{listen_end}");
    let slow_end = answers.iter().find(|m| m["id"] == 2);
    let slow_end = slow_end.unwrap_or_else(|| panic!("no tool answer in {answers:?}"));
    assert_eq!(slow_end["result"]["content"][0]["text"], "finished");
    tokio::time::timeout(TIMEOUT, serving)
        .await
        .expect("the server returns once drained")
        .unwrap()
        .unwrap();
    // stdin was never closed: the server stopped because it was told to.
    drop(to_server);
}

#[tokio::test]
async fn stdio_shutdown_ends_listen_streams_with_their_result_and_finishes_requests() {
    let stop = CancellationToken::new();
    let trigger = stop.clone();
    shutdown_ends_listen_and_finishes_in_flight(stop, move || trigger.cancel()).await;
}
