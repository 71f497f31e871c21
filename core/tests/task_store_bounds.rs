//! One client creating 100,000 tasks (issue 28): the store's limits answer
//! and the process does not grow past them. Its own test binary, so the
//! resident size it reads is this test's alone.

use ferromcp_testkit as common;

use common::{Stdio, meta_with, request_with_meta, server_with};
use ferromcp::protocol::Tool;
use ferromcp::server::{
    HandlerError, MemoryTaskLimits, MemoryTaskStore, RequestContext, ServerOptions, TaskOptions,
    TaskStart, TaskSupport, ToolOutput, ToolTaskOptions,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const TASKS_CREATED: u64 = 100_000;
/// Requests written before their answers are read: enough to keep the
/// server busy, bounded so the test's own buffers stay small.
const IN_FLIGHT: u64 = 256;

fn call(id: u64, tool: &str) -> Value {
    let meta = meta_with(json!({
        "io.modelcontextprotocol/clientCapabilities": {
            "extensions": {"io.modelcontextprotocol/tasks": {}}
        }
    }));
    request_with_meta(
        id,
        "tools/call",
        json!({"name": tool, "arguments": {}}),
        meta,
    )
}

/// This process's resident set in bytes (Linux `/proc/self/statm`).
fn resident_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_tasks_from_one_client_stay_within_the_limits() {
    let limits = MemoryTaskLimits {
        max_tasks: 2_000,
        max_tasks_per_owner: 1_000,
    };
    let store = Arc::new(MemoryTaskStore::new(limits));
    let server = server_with(ServerOptions {
        tasks: TaskOptions {
            store: store.clone(),
            // Finished tasks are kept as long as the limits allow: only
            // the limits bound the store here.
            ttl: None,
            ..TaskOptions::default()
        },
        ..ServerOptions::default()
    });
    let task = ToolTaskOptions {
        support: TaskSupport::Optional,
        start: TaskStart::OnCall,
    };
    server
        .add_tool_with(
            Tool::new("quick", json!({"type": "object"})),
            task,
            |_ctx, _args| async { Ok::<_, HandlerError>(ToolOutput::text("done")) },
        )
        .unwrap();
    server
        .add_tool_with(
            Tool::new("forever", json!({"type": "object"})),
            task,
            |ctx: RequestContext, _args| async move {
                ctx.cancelled().await;
                Ok::<_, HandlerError>(ToolOutput::text("stopped"))
            },
        )
        .unwrap();
    let mut io = Stdio::start(server);

    // Warm up (allocator arenas, the runtime) before the baseline.
    for id in 1..=2_000 {
        io.send(&call(id, "quick")).await;
        io.recv().await;
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let baseline = resident_bytes();

    // 100,000 quick tasks: each finished one makes room for the next, so
    // every creation succeeds and the store never holds more than the
    // client's limit.
    let (mut sent, mut answered, mut refused) = (0u64, 0u64, 0u64);
    while answered < TASKS_CREATED {
        while sent < TASKS_CREATED && sent - answered < IN_FLIGHT {
            sent += 1;
            io.send(&call(10_000 + sent, "quick")).await;
        }
        let answer = io.recv().await;
        answered += 1;
        if answer.get("error").is_some() {
            refused += 1;
        }
        assert!(store.len() <= 1_000, "the store grew to {}", store.len());
    }
    assert_eq!(refused, 0, "finished tasks make room for new ones");
    assert!(store.len() <= 1_000, "{}", store.len());

    // Tasks that never finish: past the client's limit creation fails
    // with a message naming it, and nothing running is dropped.
    let mut running = 0u64;
    let mut limit_error = None;
    for id in 0..1_500u64 {
        let answer = {
            io.send(&call(500_000 + id, "forever")).await;
            io.recv().await
        };
        match answer.get("error") {
            None => running += 1,
            Some(error) => limit_error = Some(error.clone()),
        }
    }
    assert_eq!(running, 1_000);
    let error = limit_error.expect("creation past the limit is refused");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|m| m.contains("limit 1000")),
        "{error}"
    );
    assert_eq!(store.len(), 1_000);

    let grown = resident_bytes().saturating_sub(baseline);
    eprintln!(
        "100,000 tasks created: resident size {} MiB -> {} MiB",
        baseline >> 20,
        (baseline + grown) >> 20
    );
    // A task in the store is a few hundred bytes; 1,000 of them and the
    // running handlers are well under this. 100,000 kept would be far
    // over it.
    assert!(
        grown < 48 << 20,
        "resident size grew by {} MiB",
        grown >> 20
    );
}
