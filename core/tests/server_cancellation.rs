//! A request's lifetime: the notifications scoped to it — progress
//! (spec: docs/basic/patterns/progress.mdx) and log messages
//! (docs/server/utilities/logging.mdx) — and its cancellation
//! (docs/basic/patterns/cancellation.mdx), over stdio and Streamable HTTP.
//! Each test names the spec section whose rule it checks.

use ferromcp_testkit as common;

use common::{
    Flag, Http, QUIET, Stdio, cancelled, meta_with, request, request_with_meta, server_with,
};
use ferromcp::protocol::Tool;
use ferromcp::server::{LoggingLevel, RequestContext, Server, ServerOptions, ToolOutput};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::AsyncWriteExt;

const LEVELS: [LoggingLevel; 8] = [
    LoggingLevel::Debug,
    LoggingLevel::Info,
    LoggingLevel::Notice,
    LoggingLevel::Warning,
    LoggingLevel::Error,
    LoggingLevel::Critical,
    LoggingLevel::Alert,
    LoggingLevel::Emergency,
];

/// What the long-running tools let a test observe.
#[derive(Clone, Default)]
struct Probe {
    /// The handler started.
    started: Flag,
    /// The handler's future was dropped.
    dropped: Flag,
    /// Work spawned by the handler saw the request's cancellation.
    saw_cancel: Flag,
    /// What notifications attempted after cancellation returned.
    late_sends: Arc<Mutex<Vec<bool>>>,
}

fn server(probe: &Probe) -> Server {
    let server = server_with(ServerOptions::default());
    let no_args = || json!({"type": "object"});
    // reports progress twice and says whether it could
    server
        .add_tool(
            Tool::new("progress", no_args()),
            |ctx: RequestContext, _args: Value| async move {
                let first = ctx.progress(0.5, Some(1.0), Some("half way"));
                tokio::time::sleep(Duration::from_millis(5)).await;
                let second = ctx.progress(1.0, Some(1.0), None);
                Ok(ToolOutput::text(format!("sent={}", first && second)))
            },
        )
        .unwrap();
    // logs once at every level and says how many were sent
    server
        .add_tool(
            Tool::new("log_all", no_args()),
            |ctx: RequestContext, _args: Value| async move {
                let mut sent = 0;
                for level in LEVELS {
                    if ctx.log(level, json!({"level": level.as_str()}), Some("test-logger")) {
                        sent += 1;
                    }
                    tokio::task::yield_now().await;
                }
                Ok(ToolOutput::text(format!("sent={sent}")))
            },
        )
        .unwrap();
    // progress with pauses, so concurrent requests interleave
    server
        .add_tool(
            Tool::new("steps", no_args()),
            |ctx: RequestContext, _args: Value| async move {
                for i in 0..4 {
                    ctx.progress(f64::from(i), None, None);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Ok(ToolOutput::text("stepped"))
            },
        )
        .unwrap();
    // returns at once but leaves work behind that keeps reporting
    server
        .add_tool(
            Tool::new("fire_and_forget", no_args()),
            |ctx: RequestContext, _args: Value| async move {
                let ctx2 = ctx.clone();
                tokio::spawn(async move {
                    for _ in 0..10 {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        ctx2.progress(9.0, None, Some("after the result"));
                        ctx2.log(LoggingLevel::Emergency, json!("after the result"), None);
                    }
                });
                Ok(ToolOutput::text("returned"))
            },
        )
        .unwrap();
    // runs until cancelled, reporting progress
    let p = probe.clone();
    server
        .add_tool(
            Tool::new("forever", no_args()),
            move |ctx: RequestContext, _args: Value| {
                let p = p.clone();
                async move {
                    let _dropped = p.dropped.on_drop();
                    p.started.set();
                    let watcher = ctx.clone();
                    let (saw, late) = (p.saw_cancel.clone(), p.late_sends.clone());
                    tokio::spawn(async move {
                        watcher.cancelled().await;
                        assert!(watcher.is_cancelled());
                        saw.set();
                        // nothing may be sent for a cancelled request
                        let sent = [
                            watcher.progress(99.0, None, Some("too late")),
                            watcher.log(LoggingLevel::Emergency, json!("too late"), None),
                        ];
                        late.lock().unwrap().extend(sent);
                    });
                    let mut step = 0.0;
                    loop {
                        ctx.progress(step, None, None);
                        step += 1.0;
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
            },
        )
        .unwrap();
    // runs until cancelled, silently
    let p = probe.clone();
    server
        .add_tool(
            Tool::new("silent_forever", no_args()),
            move |ctx: RequestContext, _args: Value| {
                let p = p.clone();
                async move {
                    let _dropped = p.dropped.on_drop();
                    p.started.set();
                    let saw = p.saw_cancel.clone();
                    tokio::spawn(async move {
                        ctx.cancelled().await;
                        saw.set();
                    });
                    std::future::pending::<()>().await;
                    Ok(ToolOutput::text("unreachable"))
                }
            },
        )
        .unwrap();
    server
}

fn call_with(id: impl Into<Value>, tool: &str, extra_meta: Value) -> Value {
    request_with_meta(
        id,
        "tools/call",
        json!({"name": tool}),
        meta_with(extra_meta),
    )
}

fn text_of(reply: &Value) -> &str {
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{reply}"))
}

// docs/basic/patterns/progress.mdx "Progress Flow": progress only for a request carrying a
// progressToken, echoing that token (string or integer)
#[tokio::test]
async fn progress_notifications_only_when_the_request_has_a_progress_token() {
    let mut io = Stdio::start(server(&Probe::default()));
    let (before, reply) = io
        .exchange(request(1, "tools/call", json!({"name": "progress"})))
        .await;
    assert!(before.is_empty(), "no token, no progress: {before:?}");
    assert_eq!(text_of(&reply), "sent=false");

    for token in [json!("tok-1"), json!(7)] {
        let (before, reply) = io
            .exchange(call_with(2, "progress", json!({"progressToken": token})))
            .await;
        assert_eq!(text_of(&reply), "sent=true");
        assert_eq!(
            before,
            [
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                    "progressToken": token, "progress": 0.5, "total": 1.0, "message": "half way"}}),
                json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {
                    "progressToken": token, "progress": 1.0, "total": 1.0}}),
            ]
        );
    }
}

// docs/basic/patterns/progress.mdx "Progress Flow": tokens MUST be a string or an integer
#[tokio::test]
async fn progress_token_that_is_not_a_string_or_integer_is_invalid_params() {
    let mut io = Stdio::start(server(&Probe::default()));
    for token in [
        json!(1.5),
        json!(null),
        json!(true),
        json!({"t": 1}),
        json!(["t"]),
    ] {
        let reply = io
            .call(call_with(1, "progress", json!({"progressToken": token})))
            .await;
        assert_eq!(reply["error"]["code"], -32602, "{token}: {reply}");
    }
}

// docs/basic/patterns/progress.mdx "Implementation Notes": progress notifications MUST stop
// after completion — also from work the handler left running
#[tokio::test]
async fn progress_stops_after_the_result() {
    let mut io = Stdio::start(server(&Probe::default()));
    let meta = json!({"progressToken": "late", "io.modelcontextprotocol/logLevel": "debug"});
    let (before, reply) = io.exchange(call_with(1, "fire_and_forget", meta)).await;
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(text_of(&reply), "returned");
    // the left-over task tries for ~100 ms
    let late = io.recv_within(Duration::from_millis(300)).await;
    assert!(late.is_none(), "sent after the response: {late:?}");

    let http = Http::start(server(&Probe::default())).await;
    let r = http
        .post(&call_with(
            1,
            "fire_and_forget",
            json!({"progressToken": "late"}),
        ))
        .await;
    assert_eq!(
        r.header("content-type"),
        Some("application/json"),
        "{}",
        r.body
    );
}

// docs/server/utilities/logging.mdx "Per-request log level": no notifications/message for a
// request without io.modelcontextprotocol/logLevel
#[tokio::test]
async fn logging_no_messages_without_a_log_level() {
    let mut io = Stdio::start(server(&Probe::default()));
    let (before, reply) = io
        .exchange(request(1, "tools/call", json!({"name": "log_all"})))
        .await;
    assert!(before.is_empty(), "{before:?}");
    assert_eq!(text_of(&reply), "sent=0");
}

// docs/server/utilities/logging.mdx "Per-request log level": messages at or above the requested
// level, before the final response; "Log Message Notifications" shape
#[tokio::test]
async fn logging_messages_at_or_above_the_requested_level_precede_the_result() {
    let mut io = Stdio::start(server(&Probe::default()));
    for (level, expected) in [
        (
            "debug",
            &[
                "debug",
                "info",
                "notice",
                "warning",
                "error",
                "critical",
                "alert",
                "emergency",
            ][..],
        ),
        (
            "warning",
            &["warning", "error", "critical", "alert", "emergency"][..],
        ),
        ("emergency", &["emergency"][..]),
    ] {
        let meta = json!({"io.modelcontextprotocol/logLevel": level});
        let (before, reply) = io.exchange(call_with(1, "log_all", meta)).await;
        let levels: Vec<&str> = before
            .iter()
            .map(|m| {
                assert_eq!(m["method"], "notifications/message");
                assert_eq!(m["params"]["logger"], "test-logger");
                assert_eq!(m["params"]["data"]["level"], m["params"]["level"]);
                m["params"]["level"].as_str().unwrap()
            })
            .collect();
        assert_eq!(levels, expected, "logLevel {level}");
        assert_eq!(text_of(&reply), format!("sent={}", expected.len()));
    }
}

// docs/server/utilities/logging.mdx "Error Handling": an unrecognised level -> -32602
#[tokio::test]
async fn logging_unknown_log_level_is_invalid_params() {
    let mut io = Stdio::start(server(&Probe::default()));
    for level in [json!("verbose"), json!("WARNING"), json!(3), json!(null)] {
        let reply = io
            .call(call_with(
                1,
                "log_all",
                json!({"io.modelcontextprotocol/logLevel": level}),
            ))
            .await;
        assert_eq!(reply["error"]["code"], -32602, "{level}: {reply}");
    }
    let http = Http::start(server(&Probe::default())).await;
    let r = http
        .post(&call_with(
            1,
            "log_all",
            json!({"io.modelcontextprotocol/logLevel": "loud"}),
        ))
        .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32602))
    );
}

// docs/basic/transports/streamable-http.mdx "Receiving Messages": request-related notifications
// go on the request's own SSE stream, before the final response that ends it
#[tokio::test]
async fn streamable_http_notifications_arrive_on_the_requests_own_sse_stream_before_the_result() {
    let http = Http::start(server(&Probe::default())).await;
    let meta = json!({"progressToken": "p", "io.modelcontextprotocol/logLevel": "error"});
    let r = http.post(&call_with(11, "log_all", meta.clone())).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert_eq!(r.header("x-accel-buffering"), Some("no"));
    let messages = r.sse_messages();
    let (result, notes) = messages.split_last().unwrap();
    assert_eq!(result["id"], 11);
    assert_eq!(text_of(result), "sent=4");
    let levels: Vec<&str> = notes
        .iter()
        .map(|m| m["params"]["level"].as_str().unwrap())
        .collect();
    assert_eq!(levels, ["error", "critical", "alert", "emergency"]);

    let r = http.post(&call_with(12, "progress", meta)).await;
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let messages = r.sse_messages();
    assert_eq!(messages.len(), 3, "{}", r.body);
    assert!(
        messages[..2]
            .iter()
            .all(|m| m["method"] == "notifications/progress")
    );
    assert_eq!(text_of(&messages[2]), "sent=true");
}

// docs/basic/transports/streamable-http.mdx "Sending Messages" 6: a single JSON object when the
// server has nothing to send before the result
#[tokio::test]
async fn streamable_http_response_is_plain_json_when_nothing_is_emitted() {
    let http = Http::start(server(&Probe::default())).await;
    for (tool, meta) in [
        ("progress", json!({})),                    // no token
        ("log_all", json!({})),                     // no level
        ("log_all", json!({"progressToken": "p"})), // a token, but no progress
    ] {
        let r = http.post(&call_with(1, tool, meta.clone())).await;
        assert_eq!(r.status, 200);
        assert_eq!(
            r.header("content-type"),
            Some("application/json"),
            "{tool} {meta}: {}",
            r.body
        );
        assert!(r.json()["result"]["content"].is_array());
    }
}

// docs/basic/transports/streamable-http.mdx "Receiving Messages": notifications MUST relate to
// the originating request — concurrent requests never see each other's
#[tokio::test]
async fn streamable_http_concurrent_requests_only_see_their_own_notifications() {
    let http = Http::start(server(&Probe::default())).await;
    let a = call_with(1, "steps", json!({"progressToken": "a"}));
    let b = call_with(2, "steps", json!({"progressToken": "b"}));
    let (ra, rb) = tokio::join!(http.post(&a), http.post(&b));
    for (r, token, id) in [(ra, "a", 1), (rb, "b", 2)] {
        let messages = r.sse_messages();
        assert_eq!(messages.len(), 5, "{}", r.body);
        for note in &messages[..4] {
            assert_eq!(note["params"]["progressToken"], token);
        }
        assert_eq!(messages[4]["id"], id);
    }
}

// docs/basic/patterns/cancellation.mdx "Behavior Requirements" 3 + transports/stdio: a
// notifications/cancelled stops the handler, and nothing more is sent for the request
#[tokio::test]
async fn cancellation_stdio_cancelled_notification_stops_the_handler() {
    let probe = Probe::default();
    let mut io = Stdio::start(server(&probe));
    io.send(&call_with(5, "forever", json!({"progressToken": 5})))
        .await;
    let first = io.recv().await;
    assert_eq!(
        first["method"], "notifications/progress",
        "running: {first}"
    );
    io.send(&cancelled(5)).await;
    probe.dropped.wait("the handler future is dropped").await;
    probe
        .saw_cancel
        .wait("spawned work sees ctx.cancelled()")
        .await;
    // progress already queued may still drain; never a response for id 5
    let (before, _) = io.exchange(request(6, "tools/list", json!({}))).await;
    for m in &before {
        assert_eq!(m["method"], "notifications/progress", "{m}");
    }
    assert!(
        io.recv_within(QUIET).await.is_none(),
        "nothing after the cancellation settled"
    );
    assert_eq!(
        *probe.late_sends.lock().unwrap(),
        [false, false],
        "late notifications refused"
    );
    let rest = io.finish().await;
    assert!(rest.is_empty(), "{rest}");
}

// docs/basic/patterns/cancellation.mdx "Error Handling": unknown, already completed and
// malformed cancellations are ignored (no response, the server keeps serving)
#[tokio::test]
async fn cancellation_invalid_cancellations_are_ignored() {
    let mut io = Stdio::start(server(&Probe::default()));
    let (_, done) = io
        .exchange(request(1, "tools/call", json!({"name": "progress"})))
        .await;
    assert_eq!(text_of(&done), "sent=false");
    // a running request whose id only looks like the cancelled one
    io.send(&call_with(2, "steps", json!({}))).await;
    for bad in [
        cancelled(1),      // already completed
        cancelled(424242), // never issued
        cancelled("2"),    // "2" is not 2
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled"}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": {"id": 2}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"reason": "no id"}}),
    ] {
        io.send(&bad).await;
    }
    let (before, reply) = io.until_response(2).await;
    assert!(
        before.is_empty(),
        "notifications get no response: {before:?}"
    );
    assert_eq!(text_of(&reply), "stepped", "request 2 was not cancelled");
    let (before, _) = io.exchange(request(3, "tools/list", json!({}))).await;
    assert!(before.is_empty(), "{before:?}");
}

// docs/basic/transports/streamable-http.mdx "Cancellation": closing the SSE response stream
// cancels the request; the handler stops
#[tokio::test]
async fn cancellation_http_closing_the_sse_stream_cancels_the_handler() {
    let probe = Probe::default();
    let http = Http::start(server(&probe)).await;
    let mut stream = http
        .open(&call_with(1, "forever", json!({"progressToken": "p"})))
        .await;
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    let note = stream.next_message().await.unwrap();
    assert_eq!(note["method"], "notifications/progress");
    drop(stream);
    probe.dropped.wait("the handler future is dropped").await;
    probe
        .saw_cancel
        .wait("spawned work sees ctx.cancelled()")
        .await;
    assert_eq!(*probe.late_sends.lock().unwrap(), [false, false]);
    // the server is unaffected
    let r = http.post(&request(2, "tools/list", json!({}))).await;
    assert_eq!(r.status, 200);
}

// docs/basic/patterns/cancellation.mdx "Transport-Specific Cancellation": the server MUST treat
// a client disconnect as cancellation — also before any byte of the response was sent
#[tokio::test]
async fn cancellation_http_disconnect_before_any_output_cancels_the_handler() {
    let probe = Probe::default();
    let http = Http::start(server(&probe)).await;
    let body = call_with(1, "silent_forever", json!({})).to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Length: {}\r\n",
        http.port,
        body.len()
    );
    for (name, value) in common::mcp_headers("tools/call", Some("silent_forever")) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut socket = tokio::net::TcpStream::connect(("127.0.0.1", http.port))
        .await
        .unwrap();
    socket.write_all(head.as_bytes()).await.unwrap();
    socket.write_all(body.as_bytes()).await.unwrap();
    probe.started.wait("the handler runs").await;
    drop(socket);
    probe.dropped.wait("the handler future is dropped").await;
    probe
        .saw_cancel
        .wait("spawned work sees ctx.cancelled()")
        .await;
}
