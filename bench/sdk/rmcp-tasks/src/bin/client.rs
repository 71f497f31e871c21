//! An rmcp 3.11 client driving the task tools of ferromcp's everything-server
//! (examples/rust/src/bin/everything-server.rs) through the tasks extension
//! (SEP-2663), for `make test-rmcp-tasks`.
//!
//!     rmcp-tasks-client http://127.0.0.1:PORT/mcp
//!
//! Prints one line per check and exits with 1 if any failed. rmcp's
//! high-level `call_tool` does not follow tasks (it answers a task with
//! `ServiceError::UnexpectedResponse`, service/client.rs), so every check
//! uses what the SDK offers for them: `call_tool_once`, then `get_task`,
//! `update_task` and `cancel_task` on the peer.
//!
//! The checks speak protocol 2026-07-28 (`server/discover`, capabilities in
//! every request's `_meta`), where the extension lives: one client declares
//! `io.modelcontextprotocol/tasks` and elicitation, one declares nothing and
//! must never be handed a task. A third client opens a 2025-11-25 session
//! (`initialize`) declaring the extension: a legacy result has no
//! `resultType`, so the server must answer it at once, never with a task.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ClientCapabilities,
    ClientConfig, CreateTaskResult, ElicitationCapability, GetTaskParams, Implementation,
    InputRequests, InputResponses, JsonObject, ProtocolVersion, TaskPayload, TaskStatus,
    UpdateTaskParams,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService, ServiceError,
};
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

/// How long one check may take; the slowest (`failing_job`) takes about 1 s.
const CHECK_TIMEOUT: Duration = Duration::from_secs(20);

type Check = Result<(), String>;
/// A check to run, borrowing the clients.
type Pending<'a> = std::pin::Pin<Box<dyn Future<Output = Check> + 'a>>;

fn args(value: Value) -> JsonObject {
    match value {
        Value::Object(map) => map,
        _ => JsonObject::new(),
    }
}

fn call(name: &'static str, arguments: Value) -> CallToolRequestParams {
    CallToolRequestParams::new(name).with_arguments(args(arguments))
}

fn first_text(result: &CallToolResult) -> String {
    result
        .content
        .first()
        .and_then(|block| block.as_text())
        .map(|text| text.text.clone())
        .unwrap_or_default()
}

fn expect_task(response: CallToolResponse) -> Result<CreateTaskResult, String> {
    match response {
        CallToolResponse::Task(created) => Ok(created),
        other => Err(format!("expected a task, got {other:?}")),
    }
}

async fn call_once(
    peer: &Peer<RoleClient>,
    params: CallToolRequestParams,
) -> Result<CallToolResponse, String> {
    peer.call_tool_once(params)
        .await
        .map_err(|e| format!("tools/call: {e}"))
}

/// Polls `tasks/get` (at the task's suggested interval) until `until` holds.
async fn poll(
    peer: &Peer<RoleClient>,
    created: &CreateTaskResult,
    until: impl Fn(TaskStatus) -> bool,
) -> Result<TaskPayload, String> {
    let interval = Duration::from_millis(created.task.poll_interval_ms.unwrap_or(100))
        .clamp(Duration::from_millis(10), Duration::from_secs(1));
    let task_id = created.task.task_id.clone();
    loop {
        let state = peer
            .get_task(GetTaskParams::new(task_id.clone()))
            .await
            .map_err(|e| format!("tasks/get {task_id}: {e}"))?;
        if state.task.task.task_id != task_id {
            return Err(format!(
                "tasks/get {task_id} answered for {}",
                state.task.task.task_id
            ));
        }
        if until(state.task.status()) {
            return Ok(state.task.payload);
        }
        if state.task.status().is_terminal() {
            return Err(format!("task ended early: {:?}", state.task.payload));
        }
        tokio::time::sleep(interval).await;
    }
}

/// Polls to the end and decodes a completed task's result.
async fn completed(
    peer: &Peer<RoleClient>,
    created: &CreateTaskResult,
) -> Result<CallToolResult, String> {
    match poll(peer, created, |s| s.is_terminal()).await? {
        TaskPayload::Completed { result } => serde_json::from_value(Value::Object(result))
            .map_err(|e| format!("the task's result is not a CallToolResult: {e}")),
        other => Err(format!("expected completed, got {other:?}")),
    }
}

fn expect_text(result: &CallToolResult, want: &str, is_error: bool) -> Check {
    let got = first_text(result);
    if got != want || result.is_error.unwrap_or(false) != is_error {
        return Err(format!(
            "expected {want:?} (isError {is_error}), got {got:?} (isError {:?})",
            result.is_error
        ));
    }
    Ok(())
}

/// An elicitation answer for every request in `requests`: accept with
/// `content`. Checks that each is a form `elicitation/create`.
fn accept_all(requests: &InputRequests, content: &Value) -> Result<InputResponses, String> {
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        let wire = serde_json::to_value(request).map_err(|e| e.to_string())?;
        if wire["method"] != "elicitation/create" {
            return Err(format!("input request {key} is not an elicitation: {wire}"));
        }
        responses.insert(key.clone(), json!({"action": "accept", "content": content}));
    }
    Ok(responses)
}

async fn list_tools(peer: &Peer<RoleClient>) -> Check {
    let tools = peer
        .list_all_tools()
        .await
        .map_err(|e| format!("tools/list: {e}"))?;
    for name in [
        "greet",
        "slow_compute",
        "failing_job",
        "confirm_delete",
        "multi_input",
    ] {
        if !tools.iter().any(|tool| tool.name == name) {
            return Err(format!("no tool {name}"));
        }
    }
    Ok(())
}

/// `greet` never becomes a task: the result comes at once.
async fn plain_result(peer: &Peer<RoleClient>) -> Check {
    match call_once(peer, call("greet", json!({"name": "rmcp"}))).await? {
        CallToolResponse::Complete(result) => expect_text(&result, "Hello, rmcp!", false),
        other => Err(format!("expected a plain result, got {other:?}")),
    }
}

/// A task polled from `working` to `completed` with the tool's result.
async fn task_completes(peer: &Peer<RoleClient>) -> Check {
    let created = expect_task(
        call_once(
            peer,
            call("slow_compute", json!({"seconds": 0.3, "label": "sum"})),
        )
        .await?,
    )?;
    if created.task.status != TaskStatus::Working {
        return Err(format!("seed status {:?}", created.task.status));
    }
    let result = completed(peer, &created).await?;
    expect_text(&result, "Computed sum after 0.3 s", false)
}

/// A tool error inside a task: `completed` with `isError: true`.
async fn task_tool_error(peer: &Peer<RoleClient>) -> Check {
    let created = expect_task(call_once(peer, call("failing_job", json!({}))).await?)?;
    let result = completed(peer, &created).await?;
    expect_text(
        &result,
        "The job failed: the input could not be processed",
        true,
    )
}

/// A JSON-RPC error inside a task: `failed` with the error.
async fn task_failed(peer: &Peer<RoleClient>) -> Check {
    let created = expect_task(call_once(peer, call("protocol_error_job", json!({}))).await?)?;
    match poll(peer, &created, |s| s.is_terminal()).await? {
        TaskPayload::Failed { error } => {
            let message = error.get("message").and_then(Value::as_str).unwrap_or("");
            if message.contains("The job hit an internal error") {
                Ok(())
            } else {
                Err(format!("unexpected error {error:?}"))
            }
        }
        other => Err(format!("expected failed, got {other:?}")),
    }
}

/// `tasks/cancel` of a long task: it ends `cancelled`.
async fn task_cancelled(peer: &Peer<RoleClient>) -> Check {
    let created =
        expect_task(call_once(peer, call("slow_compute", json!({"seconds": 60}))).await?)?;
    peer.cancel_task(CancelTaskParams::new(created.task.task_id.clone()))
        .await
        .map_err(|e| format!("tasks/cancel: {e}"))?;
    match poll(peer, &created, |s| s.is_terminal()).await? {
        TaskPayload::Cancelled => Ok(()),
        other => Err(format!("expected cancelled, got {other:?}")),
    }
}

/// A question inside a task: `input_required` with an elicitation, answered
/// with `tasks/update`, then the result.
async fn task_input(peer: &Peer<RoleClient>) -> Check {
    let created = expect_task(
        call_once(
            peer,
            call("confirm_delete", json!({"filename": "notes.txt"})),
        )
        .await?,
    )?;
    let TaskPayload::InputRequired { input_requests } =
        poll(peer, &created, |s| s == TaskStatus::InputRequired).await?
    else {
        return Err("no input requests".into());
    };
    let responses = accept_all(&input_requests, &json!({"confirm": true}))?;
    peer.update_task(UpdateTaskParams::new(
        created.task.task_id.clone(),
        responses,
    ))
    .await
    .map_err(|e| format!("tasks/update: {e}"))?;
    expect_text(
        &completed(peer, &created).await?,
        "Deleted notes.txt",
        false,
    )
}

/// Two questions at once inside a task, both answered in one `tasks/update`
/// (or in two, if the server shows them one after the other).
async fn task_multi_input(peer: &Peer<RoleClient>) -> Check {
    let created = expect_task(call_once(peer, call("multi_input", json!({}))).await?)?;
    let mut answered = 0;
    let payload = loop {
        let payload = poll(peer, &created, |s| {
            s == TaskStatus::InputRequired || s.is_terminal()
        })
        .await?;
        let TaskPayload::InputRequired { input_requests } = payload else {
            break payload;
        };
        let responses = accept_all(&input_requests, &json!({"value": "v"}))?;
        answered += responses.len();
        peer.update_task(UpdateTaskParams::new(
            created.task.task_id.clone(),
            responses,
        ))
        .await
        .map_err(|e| format!("tasks/update: {e}"))?;
        // The server takes the answers in before it stops showing them.
        tokio::time::sleep(Duration::from_millis(50)).await;
        if answered > 8 {
            return Err("the questions keep coming".into());
        }
    };
    match payload {
        TaskPayload::Completed { result } => {
            let result: CallToolResult =
                serde_json::from_value(Value::Object(result)).map_err(|e| e.to_string())?;
            expect_text(&result, r#"Got {"value":"v"} and {"value":"v"}"#, false)
        }
        other => Err(format!("expected completed, got {other:?}")),
    }
}

/// `test_tool_with_task` first asks through a multi round-trip
/// (`input_required` result, SEP-2322), then becomes a task on the retry.
async fn mrtr_then_task(peer: &Peer<RoleClient>) -> Check {
    let params = call("test_tool_with_task", json!({}));
    let asked = match call_once(peer, params.clone()).await? {
        CallToolResponse::InputRequired(asked) => asked,
        other => return Err(format!("expected input_required, got {other:?}")),
    };
    let requests = asked.input_requests.unwrap_or_default();
    let mut retry = params.with_input_responses(accept_all(&requests, &json!({"name": "Rmcp"}))?);
    retry.request_state = asked.request_state;
    let created = expect_task(call_once(peer, retry).await?)?;
    expect_text(
        &completed(peer, &created).await?,
        "Hello, Rmcp! (finished as a task)",
        false,
    )
}

/// Without the extension declared, an optional task runs as a plain call
/// and a required one is refused with -32021 (missing client capability).
async fn undeclared(peer: &Peer<RoleClient>) -> Check {
    match call_once(
        peer,
        call("slow_compute", json!({"seconds": 0.1, "label": "p"})),
    )
    .await?
    {
        CallToolResponse::Complete(result) => {
            expect_text(&result, "Computed p after 0.1 s", false)?;
        }
        other => return Err(format!("expected a plain result, got {other:?}")),
    }
    match peer.call_tool_once(call("failing_job", json!({}))).await {
        Err(ServiceError::McpError(error)) if error.code.0 == -32021 => Ok(()),
        other => Err(format!("expected a -32021 error, got {other:?}")),
    }
}

async fn connect(
    url: &str,
    capabilities: ClientCapabilities,
    lifecycle: ClientLifecycleMode,
) -> Result<RunningService<RoleClient, ClientConfig>, String> {
    let config = ClientConfig::new(
        capabilities,
        Implementation::new("rmcp-tasks-client", env!("CARGO_PKG_VERSION")),
    );
    let transport = StreamableHttpClientTransport::from_uri(url.to_owned());
    config
        .serve_with_lifecycle(transport, lifecycle)
        .await
        .map_err(|e| format!("connecting to {url}: {e}"))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url] = args.as_slice() else {
        eprintln!("usage: rmcp-tasks-client URL");
        return ExitCode::from(2);
    };
    let mut with_tasks = ClientCapabilities::builder().enable_tasks().build();
    with_tasks.elicitation = Some(ElicitationCapability::default());
    let modern = || ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let connected = async {
        Ok::<_, String>((
            connect(url, with_tasks.clone(), modern()).await?,
            connect(url, ClientCapabilities::default(), modern()).await?,
            connect(url, with_tasks, ClientLifecycleMode::Initialize).await?,
        ))
    };
    let (tasks_client, plain_client, legacy_client) = match connected.await {
        Ok(clients) => clients,
        Err(why) => {
            println!("FAIL connect: {why}");
            return ExitCode::FAILURE;
        }
    };
    let (tasks_peer, plain_peer, legacy_peer) = (
        tasks_client.peer(),
        plain_client.peer(),
        legacy_client.peer(),
    );
    let started = Instant::now();
    let checks: Vec<(&str, Pending)> = vec![
        (
            "tools/list has the task tools",
            Box::pin(list_tools(tasks_peer)),
        ),
        (
            "greet answers at once (no task)",
            Box::pin(plain_result(tasks_peer)),
        ),
        (
            "slow_compute: task working -> completed",
            Box::pin(task_completes(tasks_peer)),
        ),
        (
            "failing_job: task completed with isError",
            Box::pin(task_tool_error(tasks_peer)),
        ),
        (
            "protocol_error_job: task failed with the error",
            Box::pin(task_failed(tasks_peer)),
        ),
        (
            "slow_compute + tasks/cancel: task cancelled",
            Box::pin(task_cancelled(tasks_peer)),
        ),
        (
            "confirm_delete: input_required, tasks/update, completed",
            Box::pin(task_input(tasks_peer)),
        ),
        (
            "multi_input: two questions answered by tasks/update",
            Box::pin(task_multi_input(tasks_peer)),
        ),
        (
            "test_tool_with_task: input_required round, then a task",
            Box::pin(mrtr_then_task(tasks_peer)),
        ),
        (
            "without the extension: no task (plain result, -32021)",
            Box::pin(undeclared(plain_peer)),
        ),
        (
            "2025-11-25 session with the extension: no task (plain result, -32021)",
            Box::pin(undeclared(legacy_peer)),
        ),
    ];
    let mut failed = 0;
    for (name, check) in checks {
        let outcome = match tokio::time::timeout(CHECK_TIMEOUT, check).await {
            Ok(outcome) => outcome,
            Err(_) => Err(format!("no end within {CHECK_TIMEOUT:?}")),
        };
        match outcome {
            Ok(()) => println!("ok   {name}"),
            Err(why) => {
                failed += 1;
                println!("FAIL {name}: {why}");
            }
        }
    }
    println!(
        "rmcp-tasks-client: {failed} failed, in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
