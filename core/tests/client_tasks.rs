//! The Rust client following tasks (SEP-2663) of the Rust server, over
//! stdio and Streamable HTTP: `call_tool` gives the tool's result whether the
//! server answered with it or with a task, answers the task's questions with
//! the input handlers, and cancelling the call cancels the task.

use ferromcp::client::{CallOptions, Client, ClientOptions};
use ferromcp::protocol::Tool;
use ferromcp::server::{
    HandlerError, InputKind, RequestContext, Server, TaskStart, TaskSupport, ToolOutput,
    ToolTaskOptions,
};
use ferromcp::transport::http::{HttpOptions, HttpServer};
use ferromcp_testkit::Flag;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn task(support: TaskSupport) -> ToolTaskOptions {
    ToolTaskOptions {
        support,
        start: TaskStart::OnCall,
    }
}

/// `slow` (an optional task sleeping `ms`, flagging when its future is
/// dropped), `ask` (a task that asks the user a question) and `only_task`.
fn server(dropped: Flag) -> Server {
    let server = Server::new("tasks-test", "1.0.0");
    server
        .add_tool_with(
            Tool::new("slow", json!({"type": "object"})),
            task(TaskSupport::Optional),
            move |_ctx: RequestContext, args: Value| {
                let dropped = dropped.clone();
                async move {
                    let _guard = dropped.on_drop();
                    let ms = args["ms"].as_u64().unwrap_or(10);
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Ok::<_, HandlerError>(ToolOutput::text(format!("slept {ms}")))
                }
            },
        )
        .unwrap();
    server
        .add_tool_with(
            Tool::new("ask", json!({"type": "object"})),
            task(TaskSupport::Optional),
            |ctx: RequestContext, _args| async move {
                let answer = ctx
                    .ask(
                        None,
                        InputKind::Elicitation,
                        json!({"mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
                    )
                    .await?;
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok::<_, HandlerError>(ToolOutput::text(format!(
                    "hello {}",
                    answer["content"]["name"].as_str().unwrap_or("?")
                )))
            },
        )
        .unwrap();
    server
        .add_tool_with(
            Tool::new("only_task", json!({"type": "object"})),
            task(TaskSupport::Required),
            |_ctx, _args| async { Ok(ToolOutput::text("as a task")) },
        )
        .unwrap();
    server
}

fn options() -> ClientOptions {
    ClientOptions::default().on_elicitation(|_params| async {
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    })
}

async fn clients(server: &Server, options: ClientOptions) -> Vec<(&'static str, Client)> {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_io);
    tokio::spawn(ferromcp::transport::stdio::serve(
        server.clone(),
        server_read,
        server_write,
    ));
    let (client_read, client_write) = tokio::io::split(client_io);
    let stdio = Client::connect_stream(client_read, client_write, options.clone());
    let bound = HttpServer::bind(server.clone(), HttpOptions::localhost(0))
        .await
        .unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        bound.local_addr().unwrap().port()
    );
    tokio::spawn(bound.run());
    let http = Client::connect_http_with(&url, options).await.unwrap();
    vec![("stdio", stdio), ("http", http)]
}

fn text(result: &ferromcp::protocol::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn call_tool_follows_a_task_to_its_result_and_answers_its_questions() {
    let server = server(Flag::default());
    for (wire, client) in clients(&server, options()).await {
        let result = client.call_tool("slow", json!({"ms": 30})).await.unwrap();
        assert_eq!(text(&result), "slept 30", "{wire}");
        let result = client.call_tool("ask", json!({})).await.unwrap();
        assert_eq!(text(&result), "hello Ada", "{wire}");
        let result = client.call_tool("only_task", json!({})).await.unwrap();
        assert_eq!(text(&result), "as a task", "{wire}");
    }
}

#[tokio::test]
async fn cancelling_the_call_cancels_the_task() {
    let dropped = Flag::default();
    let server = server(dropped.clone());
    let (_, client) = clients(&server, options()).await.remove(1);
    let cancel = CancellationToken::new();
    let call_options = CallOptions {
        cancel: Some(cancel.clone()),
        ..CallOptions::default()
    };
    let call = client.call_tool_with("slow", json!({"ms": 60_000}), &call_options);
    let canceller = async {
        // Long enough for the task to exist and be polled once.
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    };
    let (result, ()) = tokio::join!(call, canceller);
    assert!(
        matches!(result, Err(ferromcp::Error::Cancelled)),
        "{result:?}"
    );
    dropped
        .wait("the server dropped the cancelled task's handler")
        .await;
}

#[tokio::test]
async fn a_client_that_does_not_follow_tasks_gets_plain_results() {
    let server = server(Flag::default());
    let mut plain = options();
    plain.follow_tasks = false;
    for (wire, client) in clients(&server, plain).await {
        let result = client.call_tool("slow", json!({"ms": 1})).await.unwrap();
        assert_eq!(text(&result), "slept 1", "{wire}");
        let refused = client.call_tool("only_task", json!({})).await.unwrap_err();
        match refused {
            ferromcp::Error::Mcp(e) => assert_eq!(e.code, -32021, "{wire}"),
            other => panic!("{wire}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_task_handle_shows_the_status_takes_answers_and_cancels() {
    let server = server(Flag::default());
    // No input handler, but the capability: the caller answers the task's
    // question itself.
    let mut options = ClientOptions::default();
    options
        .extra_capabilities
        .insert("elicitation".into(), json!({}));
    let (_, client) = clients(&server, options).await.remove(1);
    let task = client
        .start_tool_task("ask", json!({}), &CallOptions::default())
        .await
        .unwrap();
    let id = task.id().expect("a task").to_owned();
    let state = loop {
        let state = task.refresh().await.unwrap();
        match state["status"].as_str() {
            Some("input_required") => break state,
            Some("working") => tokio::time::sleep(Duration::from_millis(10)).await,
            _ => panic!("{state}"),
        }
    };
    let key = state["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let mut answers = serde_json::Map::new();
    answers.insert(key, json!({"action": "accept", "content": {"name": "Bo"}}));
    task.respond(answers).await.unwrap();
    // Followed to the end (the answered question is not asked again).
    assert_eq!(text(&task.result().await.unwrap()), "hello Bo");
    // Resumed by id: the final state.
    let resumed = client.tool_task(&id);
    assert_eq!(resumed.refresh().await.unwrap()["status"], "completed");
    assert_eq!(text(&resumed.result().await.unwrap()), "hello Bo");

    let slow = client
        .start_tool_task("slow", json!({"ms": 60_000}), &CallOptions::default())
        .await
        .unwrap();
    slow.cancel().await.unwrap();
    for _ in 0..1000 {
        if slow.refresh().await.unwrap()["status"] == "cancelled" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(slow.last()["status"], "cancelled");
    assert!(slow.result().await.is_err());
}

#[tokio::test]
async fn a_2025_11_25_session_gets_results_never_tasks() {
    // A legacy result carries no `resultType`, so a task handle there would
    // read as a malformed tool result: the server answers such calls at
    // once, and refuses a task-only tool with the reason.
    let server = server(Flag::default());
    let mut legacy = options();
    legacy.era = ferromcp::client::EraPreference::Legacy;
    for (wire, client) in clients(&server, legacy).await {
        assert_eq!(client.is_legacy(), None, "{wire}");
        let result = client.call_tool("slow", json!({"ms": 5})).await.unwrap();
        assert_eq!(text(&result), "slept 5", "{wire}");
        assert_eq!(client.is_legacy(), Some(true), "{wire}");
        let task = client
            .start_tool_task("slow", json!({"ms": 5}), &CallOptions::default())
            .await
            .unwrap();
        assert!(task.id().is_none(), "{wire}");
        let refused = client.call_tool("only_task", json!({})).await.unwrap_err();
        assert!(
            refused.to_string().contains("needs protocol 2026-07-28"),
            "{wire}: {refused}"
        );
    }
}

#[tokio::test]
async fn on_task_state_sees_each_change_of_a_followed_task() {
    let server = server(Flag::default());
    for (wire, client) in clients(&server, options()).await {
        // (status, statusMessage) of each report.
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(String, Value)>::new()));
        let record = seen.clone();
        let call_options = CallOptions {
            on_task_state: Some(std::sync::Arc::new(move |state: &Value| {
                let status = state["status"].as_str().unwrap_or("?").to_owned();
                record
                    .lock()
                    .unwrap()
                    .push((status, state["statusMessage"].clone()));
            })),
            ..CallOptions::default()
        };
        let task = client
            .start_tool_task("ask", json!({}), &CallOptions::default())
            .await
            .unwrap();
        let result = task.result_with(&call_options).await.unwrap();
        assert_eq!(text(&result), "hello Ada", "{wire}");
        let seen = seen.lock().unwrap().clone();
        let statuses: Vec<&str> = seen.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(statuses.first(), Some(&"working"), "{wire}: {seen:?}");
        assert_eq!(statuses.last(), Some(&"completed"), "{wire}: {seen:?}");
        assert!(statuses.contains(&"input_required"), "{wire}: {seen:?}");
        // Each change once: no (status, statusMessage) reported twice in a
        // row (a new message with the same status is a change).
        assert!(seen.windows(2).all(|w| w[0] != w[1]), "{wire}: {seen:?}");

        // Cancelling the options' token stops following and cancels the task.
        let cancel = CancellationToken::new();
        let slow = client
            .start_tool_task("slow", json!({"ms": 60_000}), &CallOptions::default())
            .await
            .unwrap();
        let following = {
            let slow = slow.clone();
            let options = CallOptions::default().with_cancel(cancel.clone());
            tokio::spawn(async move { slow.result_with(&options).await })
        };
        tokio::time::sleep(Duration::from_millis(30)).await;
        cancel.cancel();
        let outcome = following.await.unwrap();
        assert!(matches!(outcome, Err(ferromcp::Error::Cancelled)), "{wire}");
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let state = slow.refresh().await.unwrap();
            if state["status"] == "cancelled" {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "{wire}: {state}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
