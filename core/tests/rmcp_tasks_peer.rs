//! The Rust client following tasks (SEP-2663) of another implementation: a
//! task server on the official Rust SDK, rmcp 3.11
//! (bench/sdk/rmcp-tasks/src/bin/server.rs), over Streamable HTTP.
//! `call_tool` gives the final result of a task, a tool error inside a task
//! stays a tool result with `isError`, a failed task is the JSON-RPC error,
//! the task's question is answered with the input handler, and a
//! `ToolTask` handle shows the status, answers questions and cancels.
//!
//! Needs the peer built: `make test-rmcp-tasks` (scripts/test_rmcp_tasks.sh)
//! builds it and runs these tests with `FERROMCP_RMCP_TASKS_BIN` pointing at
//! it, so they are ignored by a plain `cargo test`.

use ferromcp::client::{CallOptions, Client, ClientOptions};
use ferromcp::protocol::CallToolResult;
use serde_json::{Value, json};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The rmcp task server on a free loopback port, killed on drop.
struct RmcpServer {
    child: Child,
    url: String,
}

impl RmcpServer {
    fn start() -> RmcpServer {
        let bin = std::env::var("FERROMCP_RMCP_TASKS_BIN").expect(
            "FERROMCP_RMCP_TASKS_BIN names the rmcp-tasks-server binary (make test-rmcp-tasks)",
        );
        // A port free now; the server binds it a moment later (the tests run
        // on loopback, where nothing else takes it in between).
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free loopback port")
            .port();
        let child = Command::new(&bin)
            .arg(port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {bin}: {e}"));
        let server = RmcpServer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "{bin} did not listen on {port} within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    async fn client(&self, options: ClientOptions) -> Client {
        Client::connect_http_with(&self.url, options)
            .await
            .expect("connecting to the rmcp task server")
    }
}

impl Drop for RmcpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Answers the peer's elicitation with the name Ada.
fn answering() -> ClientOptions {
    ClientOptions::default().on_elicitation(|_params| async {
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    })
}

fn text(result: &CallToolResult) -> String {
    serde_json::to_value(result).expect("a result encodes")["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
#[ignore = "needs the rmcp peer: make test-rmcp-tasks"]
async fn call_tool_gives_the_final_result_of_an_rmcp_task() {
    let server = RmcpServer::start();
    let client = server.client(answering()).await;
    assert_eq!(client.protocol_version(), "2026-07-28");
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|tool| tool.name == "delayed_echo"));

    let result = client
        .call_tool("delayed_echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "echo: hi");
    assert_ne!(result.is_error, Some(true));
    // A tool that is never a task: the result at once, the same way.
    let result = client
        .call_tool("instant_echo", json!({"text": "now"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "echo: now");
    // The task's question (an elicitation in `inputRequests`) is answered by
    // the input handler and sent back with `tasks/update`.
    let result = client.call_tool("ask_name", json!({})).await.unwrap();
    assert_eq!(text(&result), "hello Ada");
}

#[tokio::test]
#[ignore = "needs the rmcp peer: make test-rmcp-tasks"]
async fn failures_inside_an_rmcp_task() {
    let server = RmcpServer::start();
    let client = server.client(answering()).await;
    // A tool error: the task completes, its result has isError.
    let result = client.call_tool("tool_error", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(text(&result), "the job failed: bad input");
    // A JSON-RPC error: the task fails, the call gives the error.
    match client.call_tool("failing_task", json!({})).await {
        Err(ferromcp::Error::Mcp(error)) => {
            assert_eq!(error.code, -32603);
            assert_eq!(error.message, "the job hit an internal error");
        }
        other => panic!("expected the task's error, got {other:?}"),
    }
}

#[tokio::test]
#[ignore = "needs the rmcp peer: make test-rmcp-tasks"]
async fn a_task_handle_on_an_rmcp_task() {
    let server = RmcpServer::start();
    // No input handler, but the capability: the caller answers itself.
    let mut options = ClientOptions::default();
    options
        .extra_capabilities
        .insert("elicitation".into(), json!({}));
    let client = server.client(options).await;

    let echo = client
        .start_tool_task(
            "delayed_echo",
            json!({"text": "later", "delay_ms": 500}),
            &CallOptions::default(),
        )
        .await
        .unwrap();
    let id = echo.id().expect("rmcp answered with a task").to_owned();
    let state = echo.refresh().await.unwrap();
    assert_eq!(state["taskId"], id.as_str());
    assert_eq!(state["status"], "working", "{state}");
    assert_eq!(text(&echo.result().await.unwrap()), "echo: later");
    // Resumed by id: the final state, kept by rmcp's TaskManager.
    let resumed = client.tool_task(&id);
    assert_eq!(resumed.refresh().await.unwrap()["status"], "completed");
    assert_eq!(text(&resumed.result().await.unwrap()), "echo: later");

    let ask = client
        .start_tool_task("ask_name", json!({}), &CallOptions::default())
        .await
        .unwrap();
    let state = wait_for(&ask, "input_required").await;
    let requests = state["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1, "{state}");
    let (key, request) = requests.iter().next().expect("one request");
    assert_eq!(request["method"], "elicitation/create", "{state}");
    let mut answers = serde_json::Map::new();
    answers.insert(
        key.clone(),
        json!({"action": "accept", "content": {"name": "Bo"}}),
    );
    ask.respond(answers).await.unwrap();
    assert_eq!(text(&ask.result().await.unwrap()), "hello Bo");

    let slow = client
        .start_tool_task("slow_task", json!({"seconds": 60}), &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(slow.refresh().await.unwrap()["statusMessage"], "sleeping");
    slow.cancel().await.unwrap();
    wait_for(&slow, "cancelled").await;
    assert!(slow.result().await.is_err());
}

#[tokio::test]
#[ignore = "needs the rmcp peer: make test-rmcp-tasks"]
async fn a_client_that_does_not_follow_tasks_gets_no_task_from_rmcp() {
    let server = RmcpServer::start();
    let mut options = answering();
    options.follow_tasks = false;
    let client = server.client(options).await;
    let result = client
        .call_tool("delayed_echo", json!({"text": "plain"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "echo: plain");
}

/// Refreshes `task` until its status is `status` (10 s at most).
async fn wait_for(task: &ferromcp::client::ToolTask, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let state = task.refresh().await.unwrap();
        if state["status"] == status {
            return state;
        }
        assert!(Instant::now() < deadline, "never {status}: {state}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
