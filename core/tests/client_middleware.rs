//! The client's middleware chain (`core/src/client/middleware.rs`): links
//! run in order around every request the client sends (calls and lists
//! alike), over memory and HTTP, in both eras; they change params, options
//! and results, and answer without sending.

use ferromcp::Error;
use ferromcp::client::{CallNext, CallRequest, Client, ClientOptions, EraPreference};
use ferromcp::protocol::Tool;
use ferromcp::server::{Server, ToolOutput};
use ferromcp_testkit::Http;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn server() -> Server {
    let server = Server::new("echo", "1.0.0");
    server
        .add_tool(
            Tool::new("echo", json!({"type": "object"})),
            |_ctx, args: Value| async move { Ok(ToolOutput::Value(args)) },
        )
        .unwrap();
    server
}

#[tokio::test]
async fn links_run_in_order_around_every_request_and_may_answer_alone() {
    let server = server();
    let http = Http::start(server.clone()).await;
    let mut clients = vec![("memory", Client::in_memory(&server))];
    for (label, era) in [
        ("http 2026", EraPreference::Modern),
        ("http 2025", EraPreference::Legacy),
    ] {
        let options = ClientOptions {
            era,
            ..ClientOptions::default()
        };
        clients.push((
            label,
            Client::connect_http_with(&http.url(), options)
                .await
                .unwrap(),
        ));
    }
    for (label, client) in clients {
        let log: Arc<Mutex<Vec<String>>> = Arc::default();
        let outer = log.clone();
        client.add_middleware(move |mut call: CallRequest, next: CallNext| {
            let log = outer.clone();
            async move {
                log.lock().unwrap().push(format!("outer {}", call.method));
                if call.name() == Some("echo")
                    && let Some(Value::Object(arguments)) = call.params.get_mut("arguments")
                {
                    arguments.insert("added".into(), json!(true));
                }
                let mut result = next.run(call).await?;
                result["example.com/seen"] = json!(true);
                Ok(result)
            }
        });
        let inner = log.clone();
        client.add_middleware(move |call: CallRequest, next: CallNext| {
            let log = inner.clone();
            async move {
                log.lock().unwrap().push(format!("inner {}", call.method));
                if call.name() == Some("forbidden") {
                    return Err(Error::Protocol("refused on the client".into()));
                }
                next.run(call).await
            }
        });

        let result = client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        let echoed: Value = serde_json::from_str(
            serde_json::to_value(&result.content).unwrap()[0]["text"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(echoed, json!({"text": "hi", "added": true}), "{label}");
        let tools = client.list_tools(None).await.unwrap();
        assert_eq!(tools.tools.len(), 1, "{label}");
        let calls: Vec<String> = log.lock().unwrap().drain(..).collect();
        // In order, each request through both links (over HTTP, the call
        // also reads the tool list it mirrors headers from: a request the
        // client sends, so through the chain too).
        assert_eq!(
            calls[..2],
            ["outer tools/call", "inner tools/call"],
            "{label}"
        );
        assert!(
            calls.ends_with(&["outer tools/list".to_owned(), "inner tools/list".to_owned()]),
            "{label}: {calls:?}"
        );
        for pair in calls.chunks(2) {
            assert_eq!(
                pair[0].replace("outer", "inner"),
                pair[1],
                "{label}: {calls:?}"
            );
        }
        // The result a link changed is what the caller gets.
        let raw = client
            .request(
                "tools/call",
                json!({"name": "echo", "arguments": {}})
                    .as_object()
                    .unwrap()
                    .clone(),
            )
            .await
            .unwrap();
        assert_eq!(raw["example.com/seen"], true, "{label}");
        // Answered by a link: nothing is sent.
        let refused = client.call_tool("forbidden", json!({})).await.unwrap_err();
        assert!(
            refused.to_string().contains("refused on the client"),
            "{label}: {refused}"
        );
    }
}

/// A task handle's own requests (the `tools/call` that starts it, then
/// `tasks/get`, `tasks/cancel`) go through the chain like any other, and a
/// task a link sees comes back to the handle as it came.
#[tokio::test]
async fn a_task_handles_requests_go_through_the_chain() {
    use ferromcp::client::CallOptions;
    use ferromcp::server::{RequestContext, TaskSupport, ToolTaskOptions};
    let server = Server::new("tasks", "1.0.0");
    server
        .add_tool_with(
            Tool::new("slow", json!({"type": "object"})),
            ToolTaskOptions {
                support: TaskSupport::Required,
                ..Default::default()
            },
            |_ctx: RequestContext, _args: Value| async move {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
                Ok(ToolOutput::text("done"))
            },
        )
        .unwrap();
    let client = Client::in_memory(&server);
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    client.add_middleware(move |call: CallRequest, next: CallNext| {
        let log = log.clone();
        async move {
            let result = next.run(call.clone()).await?;
            let task = result.get("taskId").is_some() || result.get("task").is_some();
            log.lock().unwrap().push(format!(
                "{}{}",
                call.method,
                if task { " (task)" } else { "" }
            ));
            Ok(result)
        }
    });
    let task = client
        .start_tool_task("slow", json!({}), &CallOptions::default())
        .await
        .unwrap();
    assert!(task.id().is_some(), "the handle got the task as it came");
    task.refresh().await.unwrap();
    task.cancel().await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen[0], "tools/call (task)", "{seen:?}");
    assert_eq!(seen[1], "tasks/get (task)", "{seen:?}");
    assert_eq!(seen[2], "tasks/cancel", "{seen:?}");
}
