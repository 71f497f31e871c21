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

/// A link that stops the second progress update and renames the third.
struct Progress;

impl ferromcp::client::ClientMiddleware for Progress {
    fn handle(
        &self,
        call: CallRequest,
        next: CallNext,
    ) -> ferromcp::BoxFuture<Result<Value, Error>> {
        Box::pin(next.run(call))
    }

    fn notification(&self, notification: &mut ferromcp::client::ClientNotification) -> bool {
        if notification.method != "notifications/progress" {
            return true;
        }
        let progress = notification.params["progress"].as_f64();
        if progress == Some(3.0) {
            notification.params["message"] = json!("THREE");
        }
        progress != Some(2.0)
    }
}

/// Notifications the client receives pass its links before its callbacks:
/// a link stops one progress update and changes another, over memory and
/// HTTP in both eras.
#[tokio::test]
async fn received_notifications_pass_the_links_before_the_callbacks() {
    use ferromcp::client::CallOptions;
    let server = Server::new("progress", "1.0.0");
    server
        .add_tool(
            Tool::new("count", json!({"type": "object"})),
            |ctx: ferromcp::server::RequestContext, _args: Value| async move {
                for (n, word) in [(1.0, "one"), (2.0, "two"), (3.0, "three")] {
                    ctx.progress(n, Some(3.0), Some(word));
                }
                Ok(ToolOutput::text("counted"))
            },
        )
        .unwrap();
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
        client.add_middleware(Progress);
        let got: Arc<Mutex<Vec<(f64, String)>>> = Arc::default();
        let seen = got.clone();
        let options = CallOptions::default().with_progress(move |update| {
            seen.lock()
                .unwrap()
                .push((update.progress, update.message.unwrap_or_default()));
        });
        client
            .call_tool_with("count", json!({}), &options)
            .await
            .unwrap();
        let got = got.lock().unwrap().clone();
        assert_eq!(
            got,
            vec![(1.0, "one".to_owned()), (3.0, "THREE".to_owned())],
            "{label}"
        );
    }
}

/// A link that stops every `tools/list_changed`.
struct NoListChanges(Arc<Mutex<Vec<String>>>);

impl ferromcp::client::ClientMiddleware for NoListChanges {
    fn handle(
        &self,
        call: CallRequest,
        next: CallNext,
    ) -> ferromcp::BoxFuture<Result<Value, Error>> {
        Box::pin(next.run(call))
    }

    fn notification(&self, notification: &mut ferromcp::client::ClientNotification) -> bool {
        self.0.lock().unwrap().push(notification.method.clone());
        notification.method != "notifications/tools/list_changed"
    }
}

/// Notifications outside any call (a 2025-11-25 server's list changes)
/// pass the links before the client's `on_notification` callback.
#[tokio::test]
async fn notifications_outside_calls_pass_the_links_too() {
    let server = server();
    let delivered: Arc<Mutex<Vec<String>>> = Arc::default();
    let callback = delivered.clone();
    let options = ClientOptions {
        era: EraPreference::Legacy,
        on_notification: Some(Arc::new(move |method: &str, _params: &Value| {
            callback.lock().unwrap().push(method.to_owned());
        })),
        ..ClientOptions::default()
    };
    let client = Client::in_memory_with(&server, options);
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    client.add_middleware(NoListChanges(seen.clone()));
    client.list_all_tools().await.unwrap();
    server
        .add_tool(
            Tool::new("later", json!({"type": "object"})),
            |_ctx, _args: Value| async { Ok(ToolOutput::text("later")) },
        )
        .unwrap();
    for _ in 0..200 {
        if !seen.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|m| m == "notifications/tools/list_changed"),
        "the link saw the change: {:?}",
        seen.lock().unwrap()
    );
    assert!(
        !delivered
            .lock()
            .unwrap()
            .iter()
            .any(|m| m == "notifications/tools/list_changed"),
        "the link stopped it before the callback: {:?}",
        delivered.lock().unwrap()
    );
}
