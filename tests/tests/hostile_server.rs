//! The Rust client against a misbehaving server (`src/bin/hostile-server.rs`,
//! which the Python, Node and C client tests start too): every limit of
//! `ClientLimits` holds, a refusal names its limit, and the client stays
//! usable and its memory bounded.

use ferromcp::client::{Client, ClientLimits, ClientOptions, StderrMode, StdioCommand};
use serde_json::json;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const HOSTILE: &str = env!("CARGO_BIN_EXE_hostile-server");

/// A hostile server over HTTP; killed on drop.
struct HttpHostile {
    child: Child,
    url: String,
}

impl HttpHostile {
    fn start(mode: &str, extra: &[&str]) -> HttpHostile {
        let mut child = Command::new(HOSTILE)
            .args([mode, "--http", "0"])
            .args(extra)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start the hostile server");
        let mut line = String::new();
        let stdout = child.stdout.take().expect("its stdout");
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("its port");
        let port = line.trim().trim_start_matches("listening on ");
        HttpHostile {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpHostile {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn options(limits: ClientLimits) -> ClientOptions {
    ClientOptions {
        limits,
        timeout: Some(Duration::from_secs(60)),
        ..ClientOptions::default()
    }
}

/// The first text block of a tool result.
fn text(result: &ferromcp::protocol::CallToolResult) -> Option<&str> {
    result.content.first().and_then(|block| block.as_text())
}

/// Held by every test of this file for its whole run. The memory checks
/// read this process's resident size, so a test that buffers megabytes in
/// parallel (an endless stream, a flood) would count against another's
/// growth: seen as "grew 114 MiB" in a full `make test`.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// This process's resident memory, in MiB (Linux).
fn rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_sse_event_ends_the_call_with_an_error_naming_the_limit() {
    let _serial = ONE_AT_A_TIME.lock().await;
    for mode in ["endless-sse", "endless-line"] {
        let server = HttpHostile::start(mode, &[]);
        let limits = ClientLimits {
            max_message_bytes: 4 << 20,
            ..ClientLimits::default()
        };
        let client = Client::connect_http_with(&server.url, options(limits))
            .await
            .unwrap();
        let started = Instant::now();
        let refused = client.call_tool("flood", json!({})).await;
        let message = refused.expect_err(mode).to_string();
        assert!(
            message.contains("4194304-byte limit") && message.contains("max_message_bytes"),
            "{mode}: {message}"
        );
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{mode}: refused only after {:?}",
            started.elapsed()
        );
        // The client goes on: the next request works.
        assert_eq!(client.list_all_tools().await.unwrap().len(), 1, "{mode}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_call_timeout_fires_while_an_endless_stream_is_read() {
    let _serial = ONE_AT_A_TIME.lock().await;
    // No size limit to stop it: the reader must still let the timer run.
    let server = HttpHostile::start("endless-sse", &[]);
    let options = ClientOptions {
        timeout: Some(Duration::from_secs(2)),
        limits: ClientLimits {
            max_message_bytes: usize::MAX / 2,
            ..ClientLimits::default()
        },
        ..ClientOptions::default()
    };
    let client = Client::connect_http_with(&server.url, options)
        .await
        .unwrap();
    client.list_all_tools().await.unwrap();
    let started = Instant::now();
    let outcome = client.call_tool("flood", json!({})).await;
    assert!(
        matches!(outcome, Err(ferromcp::Error::Timeout)),
        "{:?}",
        outcome.map(|_| ())
    );
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "timed out only after {:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_json_response_with_another_id_is_a_protocol_error() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let server = HttpHostile::start("wrong-id", &[]);
    let client = Client::connect_http(&server.url).await.unwrap();
    let wrong = client.call_tool("flood", json!({})).await;
    let message = wrong.expect_err("not our answer").to_string();
    assert!(message.contains("not request"), "{message}");
}

/// A progress flood with a slow callback: the answer arrives, the newest
/// progress is delivered before it, the rest is coalesced.
async fn progress_flood(client: &Client, count: u64) {
    let calls = Arc::new(AtomicUsize::new(0));
    let last = Arc::new(AtomicU64::new(0));
    let (seen, newest) = (calls.clone(), last.clone());
    let call = ferromcp::client::CallOptions::default().with_progress(move |update| {
        seen.fetch_add(1, Ordering::SeqCst);
        newest.store(update.progress as u64, Ordering::SeqCst);
        // A callback far slower than the flood.
        std::thread::sleep(Duration::from_micros(200));
    });
    let before = rss_mib();
    let result = client
        .call_tool_with("flood", json!({}), &call)
        .await
        .expect("the answer after the flood");
    assert_eq!(text(&result), Some("done"));
    assert_eq!(last.load(Ordering::SeqCst), count, "the newest progress");
    let delivered = calls.load(Ordering::SeqCst) as u64;
    assert!(
        delivered < count,
        "{delivered} of {count}: nothing coalesced?"
    );
    let grown = rss_mib().saturating_sub(before);
    assert!(grown < 200, "grew {grown} MiB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progress_flood_never_holds_back_the_answer_over_http() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let server = HttpHostile::start("progress-flood", &["--count", "100000"]);
    let client = Client::connect_http(&server.url).await.unwrap();
    progress_flood(&client, 100_000).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_progress_flood_never_holds_back_the_answer_over_stdio() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let command = StdioCommand::new(HOSTILE, ["progress-flood", "--count", "100000"]);
    let client = Client::connect_stdio(command).await.unwrap();
    progress_flood(&client, 100_000).await;
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_without_a_newline_is_read_in_bounded_lines() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let lines = Arc::new(AtomicUsize::new(0));
    let longest = Arc::new(AtomicUsize::new(0));
    let (count, max) = (lines.clone(), longest.clone());
    let options = ClientOptions {
        stderr: StderrMode::Callback(Arc::new(move |line: &str| {
            count.fetch_add(1, Ordering::SeqCst);
            max.fetch_max(line.len(), Ordering::SeqCst);
        })),
        ..ClientOptions::default()
    };
    let client = Client::connect_stdio_with(StdioCommand::new(HOSTILE, ["stderr-flood"]), options)
        .await
        .unwrap();
    let before = rss_mib();
    let until = Instant::now() + Duration::from_secs(2);
    while Instant::now() < until {
        let result = client.call_tool("flood", json!({})).await.unwrap();
        assert_eq!(text(&result), Some("ok"));
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(lines.load(Ordering::SeqCst) > 10, "stderr was read");
    assert_eq!(
        longest.load(Ordering::SeqCst),
        ClientLimits::default().max_stderr_line_bytes
    );
    let grown = rss_mib().saturating_sub(before);
    assert!(grown < 100, "grew {grown} MiB");
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_pings_are_answered_on_a_bounded_number_of_connections() {
    let _serial = ONE_AT_A_TIME.lock().await;
    let server = HttpHostile::start("ping-flood", &["--count", "10000"]);
    let client = Client::connect_http(&server.url).await.unwrap();
    // Detects the era (legacy), which opens the GET stream of pings.
    assert_eq!(client.list_all_tools().await.unwrap().len(), 2);
    assert_eq!(
        client.protocol_version(),
        "2025-11-25",
        "the negotiated version, not the modern default"
    );
    let started = Instant::now();
    let stats = loop {
        let result = client.call_tool("stats", json!({})).await.unwrap();
        let stats: serde_json::Value = serde_json::from_str(text(&result).unwrap_or("{}")).unwrap();
        if stats["answered"] == 10_000 || started.elapsed() > Duration::from_secs(60) {
            break stats;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(stats["answered"], 10_000, "{stats}");
    // The GET stream, the stats call, and at most 4 answering at once.
    let most = stats["maxConnections"].as_u64().unwrap_or(u64::MAX);
    let allowed = 2 + ClientLimits::default().max_concurrent_server_answers as u64 + 1;
    assert!(
        most <= allowed,
        "{most} connections at once (allowed {allowed})"
    );
    client.close().await;
}
