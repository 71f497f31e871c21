//! stdio back-pressure (issue 11, item 3): a client that stops reading the
//! server's output must stop the server reading (and running) its input,
//! rather than make it queue answers without bound; once the client reads
//! again, every answer arrives.

use ferromcp_testkit as common;

use common::{TIMEOUT, request, server_with};
use ferromcp::protocol::Tool;
use ferromcp::server::{RequestContext, ServerOptions, ToolOutput};
use ferromcp::transport::stdio::{StdioOptions, serve_with};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Requests written while nobody reads the output. Without back-pressure
/// the server reads and runs every one of them.
const REQUESTS: usize = 20_000;

/// Serves `server` over in-memory pipes: the client's end of its input, the
/// client's end of its output (a pipe of `output_bytes`: small, so a client
/// that does not read fills it soon), and the serving task.
fn start(
    server: ferromcp::server::Server,
    options: StdioOptions,
    output_bytes: usize,
) -> (
    tokio::io::DuplexStream,
    tokio::io::DuplexStream,
    tokio::task::JoinHandle<Result<(), ferromcp::Error>>,
) {
    let (to_server, server_in) = tokio::io::duplex(64 * 1024);
    let (server_out, from_server) = tokio::io::duplex(output_bytes);
    let serving = tokio::spawn(serve_with(
        server,
        server_in,
        server_out,
        options,
        CancellationToken::new(),
    ));
    (to_server, from_server, serving)
}

fn call(id: usize, tool: &str) -> Vec<u8> {
    let mut line = request(id, "tools/call", json!({"name": tool, "arguments": {}})).to_string();
    line.push('\n');
    line.into_bytes()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_stops_the_server_reading_and_loses_nothing() {
    let calls = Arc::new(AtomicUsize::new(0));
    let server = server_with(ServerOptions::default());
    let counter = calls.clone();
    server
        .add_tool(
            Tool::new("count", json!({"type": "object"})),
            move |_ctx: RequestContext, _args: Value| {
                let counter = counter.clone();
                async move {
                    counter.fetch_add(1, Ordering::SeqCst);
                    Ok(ToolOutput::text("counted"))
                }
            },
        )
        .unwrap();
    let (mut to_server, from_server, serving) = start(
        server,
        StdioOptions {
            max_in_flight: 8,
            max_queued: 16,
            ..StdioOptions::default()
        },
        4 * 1024,
    );

    let mut writing = tokio::spawn(async move {
        for id in 0..REQUESTS {
            to_server.write_all(&call(id, "count")).await.unwrap();
        }
        to_server
    });
    // Nobody reads the output, so the server must stop reading its input
    // and this writer must block. (Without back-pressure all 20,000 lines
    // are read in well under a second.)
    let blocked = tokio::time::timeout(Duration::from_secs(3), &mut writing).await;
    assert!(
        blocked.is_err(),
        "the server read all {REQUESTS} requests while nobody read its output ({} ran)",
        calls.load(Ordering::SeqCst)
    );
    // What ran is bounded by the slots, the queue and the writer's buffers
    // (64 KiB + the 4 KiB pipe, about 100 bytes an answer), not by the input.
    let ran = calls.load(Ordering::SeqCst);
    assert!(
        ran < 2_000,
        "{ran} requests ran while nobody read the output"
    );

    // The client reads again: every request gets its answer, once.
    let mut lines = BufReader::new(from_server).lines();
    let mut answered = HashSet::new();
    while answered.len() < REQUESTS {
        let line = tokio::time::timeout(TIMEOUT, lines.next_line())
            .await
            .expect("answers keep coming once the client reads")
            .unwrap()
            .expect("the server keeps its output open");
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            message["result"]["content"][0]["text"], "counted",
            "{message}"
        );
        let id = message["id"].as_u64().unwrap() as usize;
        assert!(answered.insert(id), "answer {id} arrived twice");
    }
    let to_server = tokio::time::timeout(TIMEOUT, writing)
        .await
        .expect("the writer finishes once the client reads")
        .unwrap();
    drop(to_server);
    tokio::time::timeout(TIMEOUT, serving)
        .await
        .expect("the server exits at end of input")
        .unwrap()
        .unwrap();
    assert_eq!(calls.load(Ordering::SeqCst), REQUESTS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_more_than_max_in_flight_requests_run_at_once() {
    let started = Arc::new(AtomicUsize::new(0));
    // Closed handlers wait here until the test lets them finish.
    let gate = Arc::new(Semaphore::new(0));
    let server = server_with(ServerOptions::default());
    let (count, wait) = (started.clone(), gate.clone());
    server
        .add_tool(
            Tool::new("slow", json!({"type": "object"})),
            move |_ctx: RequestContext, _args: Value| {
                let (count, wait) = (count.clone(), wait.clone());
                async move {
                    count.fetch_add(1, Ordering::SeqCst);
                    let _pass = wait.acquire().await;
                    Ok(ToolOutput::text("done"))
                }
            },
        )
        .unwrap();
    let (mut to_server, from_server, serving) = start(
        server,
        StdioOptions {
            max_in_flight: 4,
            ..StdioOptions::default()
        },
        64 * 1024,
    );
    for id in 0..10 {
        to_server.write_all(&call(id, "slow")).await.unwrap();
    }
    let deadline = tokio::time::Instant::now() + TIMEOUT;
    while started.load(Ordering::SeqCst) < 4 {
        assert!(tokio::time::Instant::now() < deadline, "4 requests start");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // The server had every chance to start more; it must not have.
    tokio::time::sleep(common::QUIET).await;
    assert_eq!(started.load(Ordering::SeqCst), 4);

    gate.add_permits(10);
    let mut lines = BufReader::new(from_server).lines();
    for _ in 0..10 {
        let line = tokio::time::timeout(TIMEOUT, lines.next_line())
            .await
            .expect("every request is answered")
            .unwrap()
            .unwrap();
        assert!(line.contains("\"done\""), "{line}");
    }
    drop(to_server);
    tokio::time::timeout(TIMEOUT, serving)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_client_that_closes_the_output_ends_the_session_as_closed() {
    let server = server_with(ServerOptions::default());
    server
        .add_tool(
            Tool::new("count", json!({"type": "object"})),
            |_ctx: RequestContext, _args: Value| async move { Ok(ToolOutput::text("counted")) },
        )
        .unwrap();
    let (mut to_server, from_server, serving) = start(server, StdioOptions::default(), 64 * 1024);
    drop(from_server);
    to_server.write_all(&call(1, "count")).await.unwrap();
    // stdin stays open: the server stops because nobody reads its answers.
    let ended = tokio::time::timeout(TIMEOUT, serving)
        .await
        .expect("the server stops once its output is gone")
        .unwrap();
    assert!(matches!(ended, Err(ferromcp::Error::Closed)), "{ended:?}");
    drop(to_server);
}

/// Progress notifications emitted while the client does not read.
const PROGRESS_REPORTS: usize = 100_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notifications_for_a_client_that_stops_reading_are_bounded_and_the_answer_still_arrives() {
    let finished = Arc::new(tokio::sync::Notify::new());
    let server = server_with(ServerOptions::default());
    let done = finished.clone();
    server
        .add_tool(
            Tool::new("chatty", json!({"type": "object"})),
            move |ctx: RequestContext, _args: Value| {
                let done = done.clone();
                async move {
                    let mut sent = 0;
                    for i in 0..PROGRESS_REPORTS {
                        if ctx.progress(i as f64, Some(PROGRESS_REPORTS as f64), None) {
                            sent += 1;
                        }
                    }
                    done.notify_one();
                    Ok(ToolOutput::text(format!("sent {sent}")))
                }
            },
        )
        .unwrap();
    let (mut to_server, from_server, serving) = start(server, StdioOptions::default(), 4 * 1024);
    let mut call = request(1, "tools/call", json!({"name": "chatty", "arguments": {}}));
    call["params"]["_meta"]["progressToken"] = json!("p");
    let mut line = call.to_string();
    line.push('\n');
    to_server.write_all(line.as_bytes()).await.unwrap();
    // The handler reports 100,000 times while nobody reads the output.
    tokio::time::timeout(TIMEOUT, finished.notified())
        .await
        .expect("the handler is not held up by a client that does not read");

    // Reading now: what waited is bounded by the notification queue and the
    // writer's buffers (about 64 KiB + 4 KiB of ~120-byte lines), not by what
    // the handler emitted, and the answer still comes.
    let mut lines = BufReader::new(from_server).lines();
    let mut progress = 0;
    let answer = loop {
        let line = tokio::time::timeout(TIMEOUT, lines.next_line())
            .await
            .expect("the output keeps coming once the client reads")
            .unwrap()
            .expect("the server keeps its output open");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["method"] == "notifications/progress" {
            progress += 1;
        } else {
            break message;
        }
    };
    assert!(
        progress < 3_000,
        "{progress} progress notifications were queued for a client that was not reading"
    );
    assert_eq!(
        answer["result"]["content"][0]["text"],
        format!("sent {progress}"),
        "the handler is told which reports were sent: {answer}"
    );
    drop(to_server);
    tokio::time::timeout(TIMEOUT, serving)
        .await
        .expect("the server exits at end of input")
        .unwrap()
        .unwrap();
}
