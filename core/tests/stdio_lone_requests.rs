//! The stdio server runs a request that arrives while none is running on
//! its reading task first, and gives it a task of its own only if it has
//! to wait. Such a request is still answered when what it waits for comes,
//! and the requests read meanwhile are served beside it. An open
//! subscription does not count as a running request.

use std::sync::Arc;

use ferromcp_testkit as common;

use common::{Stdio, request, server_with};
use ferromcp::protocol::Tool;
use ferromcp::server::{RequestContext, ServerOptions, ToolOutput};
use serde_json::{Value, json};
use tokio::sync::Notify;

fn call(id: u64, tool: &str) -> Value {
    request(id, "tools/call", json!({"name": tool, "arguments": {}}))
}

#[tokio::test]
async fn a_lone_request_that_waits_is_answered_and_does_not_hold_up_others() {
    let server = server_with(ServerOptions::default());
    let go = Arc::new(Notify::new());
    let waited_for = go.clone();
    server
        .add_tool(
            Tool::new("wait", json!({"type": "object"})),
            move |_ctx: RequestContext, _args: Value| {
                let go = waited_for.clone();
                async move {
                    go.notified().await;
                    Ok(ToolOutput::text("waited"))
                }
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("now", json!({"type": "object"})),
            |_ctx: RequestContext, _args: Value| async { Ok(ToolOutput::text("now")) },
        )
        .unwrap();
    let mut stdio = Stdio::start(server);

    // Alone: started on the reading task, where it has to wait.
    stdio.send(&call(1, "wait")).await;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    // Read and answered while the first still waits.
    stdio.send(&call(2, "now")).await;
    let answer = stdio.recv().await;
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "now", "{answer}");
    // What it waited for comes: its task (not the reading task, which
    // polled it first) is woken.
    go.notify_one();
    let answer = stdio.recv().await;
    assert_eq!(answer["id"], 1, "{answer}");
    assert_eq!(answer["result"]["content"][0]["text"], "waited", "{answer}");
    // Alone again, and done at once.
    stdio.send(&call(3, "now")).await;
    assert_eq!(stdio.recv().await["id"], 3);
    // Nothing more is written, and the server ends.
    assert_eq!(stdio.finish().await, "");
}

/// How many tasks the runtime has while `probe` runs, one call alone and
/// one beside an open subscription (`subscriptions/listen`, which waits for
/// events as long as the client keeps it): a subscription only waits, so
/// the request beside it is alone too and runs on the reading task, with
/// no task of its own.
#[tokio::test]
async fn a_request_beside_an_open_subscription_is_still_run_at_once() {
    let server = server_with(ServerOptions::default());
    server
        .add_tool(
            Tool::new("probe", json!({"type": "object"})),
            |_ctx: RequestContext, _args: Value| async {
                let tasks = tokio::runtime::Handle::current()
                    .metrics()
                    .num_alive_tasks();
                Ok(ToolOutput::Value(json!(tasks)))
            },
        )
        .unwrap();
    let mut stdio = Stdio::start(server);
    let tasks_seen = |answer: &Value| {
        answer["result"]["structuredContent"]["result"]
            .as_u64()
            .or_else(|| {
                answer["result"]["content"][0]["text"]
                    .as_str()
                    .and_then(|t| t.parse().ok())
            })
            .unwrap_or_else(|| panic!("a task count in {answer}"))
    };

    stdio.send(&call(1, "probe")).await;
    let alone = tasks_seen(&stdio.recv().await);

    let listen = request(
        2,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    stdio.send(&listen).await;
    let ack = stdio.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    stdio.send(&call(3, "probe")).await;
    let answer = stdio.recv().await;
    assert_eq!(answer["id"], 3, "{answer}");
    // The subscription's own task is the one more.
    assert_eq!(
        tasks_seen(&answer),
        alone + 1,
        "a request beside a subscription got a task of its own"
    );
    // The client is gone: the subscription ends (nothing is written for
    // it), and the server with it.
    assert_eq!(stdio.finish().await, "");
}
