//! The tasks extension on the server (SEP-2663,
//! extensions/tasks/sep-2663-tasks-extension.mdx), over stdio: what the
//! conformance suite checks over HTTP, plus what it cannot see (the
//! handler's future dropped on `tasks/cancel`, the store's limits, expiry,
//! a task started by its handler after multi round-trip questions).

use ferromcp_testkit as common;

use common::{Flag, Stdio, meta, meta_with, request_with_meta, server_with};
use ferromcp::protocol::Tool;
use ferromcp::server::{
    HandlerError, MemoryTaskLimits, MemoryTaskStore, RequestContext, ServerOptions, TaskOptions,
    TaskStart, TaskSupport, ToolOutput, ToolTaskOptions,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// `_meta` declaring the tasks extension and elicitation.
fn tasks_meta() -> Value {
    meta_with(json!({
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "extensions": {TASKS: {}}
        }
    }))
}

fn optional() -> ToolTaskOptions {
    ToolTaskOptions {
        support: TaskSupport::Optional,
        start: TaskStart::OnCall,
    }
}

fn schema() -> Value {
    json!({"type": "object"})
}

fn value_schema() -> Value {
    json!({"type": "object", "properties": {"value": {"type": "string"}}})
}

fn options_with(tasks: TaskOptions) -> ServerOptions {
    ServerOptions {
        tasks,
        ..ServerOptions::default()
    }
}

/// A server with: `sleepy` (a task that sleeps `ms` and sets `dropped`
/// when its future goes), `ask` (asks one question per `count`, in
/// parallel) and `plain` (never a task).
fn server(options: ServerOptions, dropped: Flag) -> ferromcp::server::Server {
    let server = server_with(options);
    server
        .add_tool_with(
            Tool::new("sleepy", schema()),
            optional(),
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
            Tool::new("report", schema()),
            optional(),
            |ctx: RequestContext, _args: Value| async move {
                ctx.progress(1.0, Some(3.0), Some("Rendering"));
                // Until cancelled.
                ctx.cancelled().await;
                Ok::<_, HandlerError>(ToolOutput::text("stopped"))
            },
        )
        .unwrap();
    server
        .add_tool_with(
            Tool::new("ask", schema()),
            optional(),
            |ctx: RequestContext, args: Value| async move {
                let count = args["count"].as_u64().unwrap_or(1);
                let asks = (0..count)
                    .map(|i| {
                        (
                            // The first question named by the handler, the
                            // others named by the task.
                            (i == 0).then(|| "first".to_owned()),
                            ferromcp::server::InputKind::Elicitation,
                            json!({"mode": "form", "message": format!("value {i}?"), "requestedSchema": value_schema()}),
                        )
                    })
                    .collect();
                let mut values = Vec::new();
                for answer in ctx.ask_all(asks).await {
                    values.push(answer?["content"]["value"].as_str().unwrap_or("").to_owned());
                }
                Ok::<_, HandlerError>(ToolOutput::text(values.join(",")))
            },
        )
        .unwrap();
    server
        .add_tool(Tool::new("plain", schema()), |_ctx, _args| async {
            Ok(ToolOutput::text("plain"))
        })
        .unwrap();
    server
}

fn call(id: u64, tool: &str, arguments: Value) -> Value {
    request_with_meta(
        id,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
        tasks_meta(),
    )
}

fn task_request(id: u64, method: &str, task_id: &str, extra: Value) -> Value {
    let mut params = json!({"taskId": task_id});
    if let (Some(p), Value::Object(extra)) = (params.as_object_mut(), extra) {
        p.extend(extra);
    }
    request_with_meta(id, method, params, tasks_meta())
}

/// Polls `tasks/get` until the task's status is `status`.
async fn wait_for(io: &mut Stdio, task_id: &str, status: &str) -> Value {
    let deadline = tokio::time::Instant::now() + common::TIMEOUT;
    let mut id = 10_000;
    loop {
        id += 1;
        let got = io
            .call(task_request(id, "tasks/get", task_id, json!({})))
            .await;
        let result = &got["result"];
        assert!(result.is_object(), "{got}");
        if result["status"] == status {
            return result.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task never reached {status}: {result}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn a_call_becomes_a_task_that_completes_with_the_result() {
    let mut io = Stdio::start(server(ServerOptions::default(), Flag::default()));
    let created = io.call(call(1, "sleepy", json!({"ms": 50}))).await;
    let result = &created["result"];
    assert_eq!(result["resultType"], "task", "{created}");
    assert_eq!(result["status"], "working");
    assert_eq!(result["ttlMs"], 3_600_000);
    assert!(result["pollIntervalMs"].as_u64().is_some_and(|ms| ms > 0));
    assert!(result.get("requestState").is_none() && result.get("task").is_none());
    let task_id = result["taskId"].as_str().unwrap().to_owned();
    // 128 random bits and their seal, base64url: payload "." tag.
    let (payload, tag) = task_id.split_once('.').unwrap();
    assert_eq!((payload.len(), tag.len()), (22, 43), "{task_id}");
    // Found at once (durable creation), then finished with the result.
    let done = wait_for(&mut io, &task_id, "completed").await;
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["result"]["content"][0]["text"], "slept 50");
    assert!(done.get("error").is_none());
}

#[tokio::test]
async fn questions_wait_in_the_task_until_tasks_update_answers_them() {
    let mut io = Stdio::start(server(ServerOptions::default(), Flag::default()));
    let created = io.call(call(1, "ask", json!({"count": 2}))).await;
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let waiting = wait_for(&mut io, &task_id, "input_required").await;
    let keys: Vec<String> = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys.len(), 2, "{waiting}");
    assert!(keys.contains(&"first".to_owned()), "{waiting}");
    assert_eq!(
        waiting["inputRequests"][&keys[0]]["method"],
        "elicitation/create"
    );
    // One answer, plus one to a key never asked: acknowledged, the unknown
    // one ignored, and only the other question still shown.
    let answer = |v: &str| json!({"action": "accept", "content": {"value": v}});
    let ack = io
        .call(task_request(
            2,
            "tasks/update",
            &task_id,
            json!({"inputResponses": {keys[0].clone(): answer("a"), "nope-9": answer("x")}}),
        ))
        .await;
    assert_eq!(
        ack["result"],
        json!({"resultType": "complete", "_meta": ack["result"]["_meta"]})
    );
    let deadline = tokio::time::Instant::now() + common::TIMEOUT;
    loop {
        let got = io
            .call(task_request(3, "tasks/get", &task_id, json!({})))
            .await;
        let pending = got["result"]["inputRequests"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        if pending.len() == 1 {
            assert!(pending.contains_key(&keys[1]));
            assert_eq!(got["result"]["status"], "input_required");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{got}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    io.call(task_request(
        4,
        "tasks/update",
        &task_id,
        json!({"inputResponses": {keys[1].clone(): answer("b")}}),
    ))
    .await;
    let done = wait_for(&mut io, &task_id, "completed").await;
    let text = done["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text == "a,b" || text == "b,a", "{text}");
}

#[tokio::test]
async fn tasks_cancel_drops_the_handler_and_is_idempotent() {
    let dropped = Flag::default();
    let mut io = Stdio::start(server(ServerOptions::default(), dropped.clone()));
    let created = io.call(call(1, "sleepy", json!({"ms": 60_000}))).await;
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let ack = io
        .call(task_request(2, "tasks/cancel", &task_id, json!({})))
        .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    assert!(ack["result"].get("status").is_none());
    dropped
        .wait("the cancelled task's handler future is dropped")
        .await;
    wait_for(&mut io, &task_id, "cancelled").await;
    let again = io
        .call(task_request(3, "tasks/cancel", &task_id, json!({})))
        .await;
    assert_eq!(again["result"]["resultType"], "complete", "{again}");
    // Terminal: a second cancel changes nothing.
    let after = io
        .call(task_request(4, "tasks/get", &task_id, json!({})))
        .await;
    assert_eq!(after["result"]["status"], "cancelled", "{after}");
}

#[tokio::test]
async fn without_the_extension_calls_are_plain_and_task_methods_are_refused() {
    let server = server(ServerOptions::default(), Flag::default());
    server
        .add_tool_with(
            Tool::new("only_task", schema()),
            ToolTaskOptions {
                support: TaskSupport::Required,
                start: TaskStart::OnCall,
            },
            |_ctx, _args| async { Ok(ToolOutput::text("never")) },
        )
        .unwrap();
    let mut io = Stdio::start(server);
    let plain = io
        .call(request_with_meta(
            1,
            "tools/call",
            json!({"name": "sleepy", "arguments": {"ms": 1}}),
            meta(),
        ))
        .await;
    assert_eq!(plain["result"]["content"][0]["text"], "slept 1", "{plain}");
    let required = io
        .call(request_with_meta(
            2,
            "tools/call",
            json!({"name": "only_task", "arguments": {}}),
            meta(),
        ))
        .await;
    assert_eq!(required["error"]["code"], -32021, "{required}");
    assert!(
        required["error"]["data"]["requiredCapabilities"]["extensions"]
            .get(TASKS)
            .is_some()
    );
    for (id, method) in [(3, "tasks/get"), (4, "tasks/cancel")] {
        let refused = io
            .call(request_with_meta(
                id,
                method,
                json!({"taskId": "x"}),
                meta(),
            ))
            .await;
        assert_eq!(refused["error"]["code"], -32021, "{method}: {refused}");
    }
    // With the extension: an unknown id is invalid params; a plain tool
    // stays plain.
    let unknown = io
        .call(task_request(5, "tasks/get", "0000", json!({})))
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let plain = io.call(call(6, "plain", json!({}))).await;
    assert_eq!(plain["result"]["content"][0]["text"], "plain", "{plain}");
    // The capability is declared.
    let discover = io
        .call(request_with_meta(7, "server/discover", json!({}), meta()))
        .await;
    assert!(
        discover["result"]["capabilities"]["extensions"]
            .get(TASKS)
            .is_some()
    );
}

#[tokio::test]
async fn past_the_store_limit_creation_fails_clearly_and_running_tasks_stay() {
    let store = Arc::new(MemoryTaskStore::new(MemoryTaskLimits {
        max_tasks: 10,
        max_tasks_per_owner: 2,
    }));
    let options = options_with(TaskOptions {
        store: store.clone(),
        ..TaskOptions::default()
    });
    let mut io = Stdio::start(server(options, Flag::default()));
    let mut ids = Vec::new();
    for id in 1..=2 {
        let created = io.call(call(id, "sleepy", json!({"ms": 60_000}))).await;
        ids.push(created["result"]["taskId"].as_str().unwrap().to_owned());
    }
    let refused = io.call(call(3, "sleepy", json!({"ms": 1}))).await;
    assert_eq!(refused["error"]["code"], -32603, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("limit 2"), "{message}");
    assert_eq!(store.len(), 2);
    // A finished task makes room.
    io.call(task_request(4, "tasks/cancel", &ids[0], json!({})))
        .await;
    wait_for(&mut io, &ids[0], "cancelled").await;
    let created = io.call(call(5, "sleepy", json!({"ms": 1}))).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert_eq!(store.len(), 2);
    // The task still running was not the one evicted.
    let running = io
        .call(task_request(6, "tasks/get", &ids[1], json!({})))
        .await;
    assert_eq!(running["result"]["status"], "working", "{running}");
}

#[tokio::test]
async fn finished_tasks_expire_after_their_ttl() {
    let options = options_with(TaskOptions {
        ttl: Some(Duration::from_millis(50)),
        keep_finished: Duration::from_millis(50),
        ..TaskOptions::default()
    });
    let mut io = Stdio::start(server(options, Flag::default()));
    let created = io.call(call(1, "sleepy", json!({"ms": 1}))).await;
    assert_eq!(created["result"]["ttlMs"], 50);
    // Polling at the suggested pace sees the task before it expires.
    assert_eq!(created["result"]["pollIntervalMs"], 25);
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    wait_for(&mut io, &task_id, "completed").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let gone = io
        .call(task_request(2, "tasks/get", &task_id, json!({})))
        .await;
    assert_eq!(gone["error"]["code"], -32602, "{gone}");
}

#[tokio::test]
async fn a_handler_starts_its_task_after_multi_round_trip_questions() {
    let server = server_with(ServerOptions::default());
    server
        .add_tool_with(
            Tool::new("later", schema()),
            ToolTaskOptions {
                support: TaskSupport::Optional,
                start: TaskStart::ByHandler,
            },
            |ctx: RequestContext, args: Value| async move {
                let answer = ctx
                    .elicit_as(
                        Some("name"),
                        "Name?",
                        json!({"type": "object", "properties": {"name": {"type": "string"}}}),
                    )
                    .await?;
                let name = answer["content"]["name"].as_str().unwrap_or("?").to_owned();
                if args["stay"] == true {
                    return Ok(ToolOutput::text(format!("plain {name}")));
                }
                assert!(ctx.start_task().await?);
                // Outlives the request that started it.
                tokio::time::sleep(Duration::from_millis(30)).await;
                assert!(!ctx.is_cancelled());
                Ok(ToolOutput::text(format!("task {name}")))
            },
        )
        .unwrap();
    let mut io = Stdio::start(server);
    let round1 = io.call(call(1, "later", json!({"stay": false}))).await;
    assert_eq!(round1["result"]["resultType"], "input_required", "{round1}");
    assert!(round1["result"].get("taskId").is_none());
    let state = round1["result"]["requestState"].clone();
    let retry = |id: u64, stay: bool| {
        request_with_meta(
            id,
            "tools/call",
            json!({"name": "later", "arguments": {"stay": stay},
                   "inputResponses": {"name": {"action": "accept", "content": {"name": "Ada"}}},
                   "requestState": state}),
            tasks_meta(),
        )
    };
    let round2 = io.call(retry(2, false)).await;
    assert_eq!(round2["result"]["resultType"], "task", "{round2}");
    assert!(round2["result"].get("requestState").is_none());
    let task_id = round2["result"]["taskId"].as_str().unwrap().to_owned();
    let done = wait_for(&mut io, &task_id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "task Ada");

    // A handler that never starts its task answers plainly.
    let round1 = io.call(call(3, "later", json!({"stay": true}))).await;
    let state = round1["result"]["requestState"].clone();
    let plain = io
        .call(request_with_meta(
            4,
            "tools/call",
            json!({"name": "later", "arguments": {"stay": true},
                   "inputResponses": {"name": {"action": "accept", "content": {"name": "Bo"}}},
                   "requestState": state}),
            tasks_meta(),
        ))
        .await;
    assert_eq!(plain["result"]["content"][0]["text"], "plain Bo", "{plain}");
}

#[tokio::test]
async fn listeners_hear_the_status_of_the_tasks_they_name() {
    let mut io = Stdio::start(server(ServerOptions::default(), Flag::default()));
    let created = io.call(call(1, "sleepy", json!({"ms": 300}))).await;
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    io.send(&request_with_meta(
        2,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": [task_id]}}),
        tasks_meta(),
    ))
    .await;
    let ack = io.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([task_id]));
    let done = loop {
        let note = io.recv().await;
        assert_eq!(note["method"], "notifications/tasks", "{note}");
        assert_eq!(note["params"]["taskId"], task_id.as_str());
        if note["params"]["status"] == "completed" {
            break note;
        }
    };
    assert_eq!(done["params"]["result"]["content"][0]["text"], "slept 300");

    // Naming tasks needs the extension.
    let refused = io
        .call(request_with_meta(
            3,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [task_id]}}),
            meta(),
        ))
        .await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
}

#[tokio::test]
async fn progress_in_a_task_is_its_status_message() {
    let mut io = Stdio::start(server(ServerOptions::default(), Flag::default()));
    let created = io.call(call(1, "report", json!({}))).await;
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let deadline = tokio::time::Instant::now() + common::TIMEOUT;
    let mut id = 100;
    loop {
        id += 1;
        let got = io
            .call(task_request(id, "tasks/get", &task_id, json!({})))
            .await;
        if got["result"]["statusMessage"] == "Rendering (1/3)" {
            assert_eq!(got["result"]["status"], "working");
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{got}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let cancelled = io
        .call(task_request(id + 1, "tasks/cancel", &task_id, json!({})))
        .await;
    assert!(cancelled["result"].is_object(), "{cancelled}");
    wait_for(&mut io, &task_id, "cancelled").await;
}

#[tokio::test]
async fn bad_task_ids_and_late_updates_get_the_spec_answers() {
    let mut io = Stdio::start(server(ServerOptions::default(), Flag::default()));
    let created = io.call(call(1, "ask", json!({"count": 1}))).await;
    let task_id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let waiting = wait_for(&mut io, &task_id, "input_required").await;
    let key = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    let answer = json!({"action": "accept", "content": {"value": "v"}});
    io.call(task_request(
        2,
        "tasks/update",
        &task_id,
        json!({"inputResponses": {key.clone(): answer.clone()}}),
    ))
    .await;
    let done = wait_for(&mut io, &task_id, "completed").await;

    // An unknown id and a tampered one (one character changed): -32602
    // for each method (SEP-2663, "Protocol Errors").
    let mut tampered = task_id.clone().into_bytes();
    tampered[5] = if tampered[5] == b'0' { b'1' } else { b'0' };
    let tampered = String::from_utf8(tampered).unwrap();
    let mut id = 10;
    for bad in ["no-such-task", tampered.as_str(), ""] {
        for (method, extra) in [
            ("tasks/get", json!({})),
            ("tasks/update", json!({"inputResponses": {}})),
            ("tasks/cancel", json!({})),
        ] {
            id += 1;
            let got = io.call(task_request(id, method, bad, extra)).await;
            assert_eq!(got["error"]["code"], -32602, "{method} {bad:?}: {got}");
        }
    }
    // A late answer to a finished task is acknowledged and changes nothing;
    // so is a cancel.
    let late = io
        .call(task_request(
            50,
            "tasks/update",
            &task_id,
            json!({"inputResponses": {key: answer}}),
        ))
        .await;
    assert!(late["result"].is_object(), "{late}");
    let cancel = io
        .call(task_request(51, "tasks/cancel", &task_id, json!({})))
        .await;
    assert!(cancel["result"].is_object(), "{cancel}");
    let after = io
        .call(task_request(52, "tasks/get", &task_id, json!({})))
        .await;
    assert_eq!(after["result"]["status"], "completed", "{after}");
    assert_eq!(after["result"]["result"], done["result"], "{after}");
    // Still serving.
    let plain = io.call(call(53, "plain", json!({}))).await;
    assert_eq!(plain["result"]["content"][0]["text"], "plain", "{plain}");
}
