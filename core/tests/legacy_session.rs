//! Requests within a 2025-11-25 session (spec 2025-11-25: basic/index.mdx
//! "Requests", basic/utilities/cancellation.mdx), over stdio: the session
//! tracks its running requests by id, to cancel them and to refuse an id
//! already in flight.

use ferromcp_testkit as common;

use common::{Flag, Stdio, cancelled};
use ferromcp::protocol::Tool;
use ferromcp::server::{RequestContext, Server, ToolOutput};
use serde_json::{Value, json};

/// A server whose `wait` tool runs until cancelled (`started` is set when
/// it runs, `dropped` when its future is dropped) and whose `echo` answers
/// at once.
fn server(started: &Flag, dropped: &Flag) -> Server {
    let server = Server::new("legacy-session", "1.0.0");
    let (started, dropped) = (started.clone(), dropped.clone());
    server
        .add_tool(
            Tool::new("wait", json!({"type": "object"})),
            move |ctx: RequestContext, _args: Value| {
                let guard = dropped.on_drop();
                started.set();
                async move {
                    let _guard = guard;
                    ctx.cancelled().await;
                    Ok(ToolOutput::text("cancelled"))
                }
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("echo", json!({"type": "object"})),
            |_ctx, _args: Value| async { Ok(ToolOutput::text("echo")) },
        )
        .unwrap();
    server
}

fn legacy_request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// Opens a legacy session on `io`.
async fn initialize(io: &mut Stdio) {
    let init = io
        .call(legacy_request(
            1,
            "initialize",
            json!({
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"}
            }),
        ))
        .await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    io.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
}

// 2025-11-25 basic/utilities/cancellation.mdx: the receiver stops processing
// the cancelled request and sends no response for it
#[tokio::test]
async fn legacy_cancellation_cancelled_notification_stops_the_sessions_request() {
    let (started, dropped) = (Flag::default(), Flag::default());
    let mut io = Stdio::start(server(&started, &dropped));
    initialize(&mut io).await;
    io.send(&legacy_request(2, "tools/call", json!({"name": "wait"})))
        .await;
    started.wait("the request runs").await;
    io.send(&cancelled(2)).await;
    dropped.wait("the cancelled handler is dropped").await;
    let (before, pong) = io.exchange(legacy_request(3, "ping", json!({}))).await;
    assert!(
        before.is_empty(),
        "no response to the cancelled request: {before:?}"
    );
    assert_eq!(pong["result"], json!({}));
    let rest = io.finish().await;
    assert!(rest.is_empty(), "{rest}");
}

// 2025-11-25 basic/index.mdx "Requests": the id MUST NOT have been used by
// the requestor within the same session; one still in flight is refused
// (-32600) rather than making the first request impossible to cancel
#[tokio::test]
async fn legacy_request_ids_in_flight_must_be_unique_within_a_session() {
    let (started, dropped) = (Flag::default(), Flag::default());
    let mut io = Stdio::start(server(&started, &dropped));
    initialize(&mut io).await;
    io.send(&legacy_request(2, "tools/call", json!({"name": "wait"})))
        .await;
    // requests of a session run in their own tasks: the first must be
    // tracked before the duplicate arrives
    started.wait("the first request runs").await;
    let duplicate = io
        .call(legacy_request(2, "tools/call", json!({"name": "echo"})))
        .await;
    assert_eq!(duplicate["id"], 2, "{duplicate}");
    assert_eq!(duplicate["error"]["code"], -32600, "{duplicate}");
    // the first request is still the one the id names: cancelling it works
    io.send(&cancelled(2)).await;
    dropped.wait("the first request is cancelled").await;
    // and once it is gone the id is free again
    let mut reused = io
        .call(legacy_request(2, "tools/call", json!({"name": "echo"})))
        .await;
    for _ in 0..50 {
        if reused["result"].is_object() {
            break;
        }
        // the cancelled task may not have released the id yet
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        reused = io
            .call(legacy_request(2, "tools/call", json!({"name": "echo"})))
            .await;
    }
    assert_eq!(reused["result"]["content"][0]["text"], "echo", "{reused}");
}
