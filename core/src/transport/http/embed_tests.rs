//! [`HttpEndpoint`] driven the way an embedding host drives it: requests
//! built in memory, bodies fed in chunks, responses pulled chunk by chunk.

use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Empty, Full};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use super::{EndpointOptions, ExchangeInfo, HttpEndpoint, McpBody, RequestBody};
use crate::protocol::Tool;
use crate::protocol::methods::{
    INITIALIZE, NOTIFICATIONS_INITIALIZED, NOTIFICATIONS_PROGRESS, TOOLS_CALL,
};
use crate::server::{RequestContext, Server, ToolOutput};

const WAIT: Duration = Duration::from_secs(10);

/// Records that a handler stopped, whether it saw its cancellation and
/// returned or was dropped mid-await (both end the work).
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// A server with `echo`, `steps` (two progress notifications, then a
/// result) and `hang` (waits for cancellation; records that it stopped).
fn server(hang_cancelled: Arc<AtomicBool>) -> Server {
    let server = Server::new("embed-test", "1.0.0");
    server
        .add_tool(
            Tool::new(
                "echo",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            |_ctx, args: Value| async move { Ok(ToolOutput::Value(args["text"].clone())) },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("steps", json!({"type": "object"})),
            |ctx: RequestContext, _args: Value| async move {
                ctx.progress(1.0, Some(2.0), Some("one"));
                tokio::time::sleep(Duration::from_millis(20)).await;
                ctx.progress(2.0, Some(2.0), Some("two"));
                Ok(ToolOutput::text("done"))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("hang", json!({"type": "object"})),
            move |ctx: RequestContext, _args: Value| {
                let hang_cancelled = hang_cancelled.clone();
                async move {
                    let _stopped = SetOnDrop(hang_cancelled);
                    ctx.progress(0.0, None, Some("started"));
                    ctx.cancelled().await;
                    Ok(ToolOutput::text("cancelled"))
                }
            },
        )
        .unwrap();
    server
}

fn endpoint() -> (HttpEndpoint, Arc<AtomicBool>) {
    let cancelled = Arc::new(AtomicBool::new(false));
    let endpoint = HttpEndpoint::new(server(cancelled.clone()), EndpointOptions::default());
    (endpoint, cancelled)
}

fn call_body(id: u64, tool: &str, arguments: Value, progress: bool) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    if progress {
        meta["progressToken"] = json!(format!("p{id}"));
    }
    json!({"jsonrpc": "2.0", "id": id, "method": TOOLS_CALL,
           "params": {"name": tool, "arguments": arguments, "_meta": meta}})
}

fn call_request(tool: &str, body: &Value) -> http::request::Builder {
    Request::post("/mcp")
        .header("host", "localhost:8000")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", TOOLS_CALL)
        .header("mcp-name", tool)
        .header("content-length", body.to_string().len())
}

async fn json_of(response: Response<McpBody>) -> Value {
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

/// The JSON-RPC message of one SSE event chunk.
fn event_message(chunk: &Bytes) -> Value {
    let text = std::str::from_utf8(chunk).unwrap();
    let data = text
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap_or_else(|| panic!("no data line in {text:?}"));
    serde_json::from_str(data).unwrap()
}

#[tokio::test]
async fn answers_a_call_with_json() {
    let (endpoint, _) = endpoint();
    let body = call_body(1, "echo", json!({"text": "hi"}), false);
    let request = call_request("echo", &body)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = endpoint.handle(request).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "application/json");
    let reply = json_of(response).await;
    assert_eq!(reply["id"], 1);
    assert_eq!(reply["result"]["content"][0]["text"], "hi");
}

#[tokio::test]
async fn reads_a_body_fed_in_chunks() {
    let (endpoint, _) = endpoint();
    let text = call_body(7, "echo", json!({"text": "chunked"}), false).to_string();
    let (sender, body) = RequestBody::channel();
    let request = call_request("echo", &serde_json::from_str(&text).unwrap())
        .body(body)
        .unwrap();
    let handled = tokio::spawn({
        let endpoint = endpoint.clone();
        async move { endpoint.handle(request).await }
    });
    // Fed after the exchange started, a few bytes at a time.
    for piece in text.as_bytes().chunks(5) {
        assert!(sender.send(Bytes::copy_from_slice(piece)));
        tokio::task::yield_now().await;
    }
    drop(sender);
    let response = tokio::time::timeout(WAIT, handled).await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        json_of(response).await["result"]["content"][0]["text"],
        "chunked"
    );
}

#[tokio::test]
async fn an_aborted_body_is_not_parsed() {
    let (endpoint, _) = endpoint();
    let body = call_body(1, "echo", json!({"text": "x"}), false);
    let (sender, request_body) = RequestBody::channel();
    sender.send(Bytes::from_static(b"{\"jsonrpc\":"));
    sender.abort();
    let request = call_request("echo", &body).body(request_body).unwrap();
    assert_eq!(
        endpoint.handle(request).await.status(),
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn streams_progress_as_sse_one_event_per_chunk() {
    let (endpoint, _) = endpoint();
    let body = call_body(3, "steps", json!({}), true);
    let request = call_request("steps", &body)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let response = endpoint.handle(request).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    assert!(body.is_stream());
    let mut messages = Vec::new();
    while let Some(chunk) = tokio::time::timeout(WAIT, body.next_chunk()).await.unwrap() {
        if chunk.starts_with(b":") {
            continue; // keep-alive
        }
        messages.push(event_message(&chunk));
    }
    assert_eq!(messages.len(), 3, "{messages:?}");
    assert_eq!(messages[0]["method"], NOTIFICATIONS_PROGRESS);
    assert_eq!(messages[0]["params"]["message"], "one");
    assert_eq!(messages[1]["params"]["message"], "two");
    assert_eq!(messages[2]["id"], 3);
    assert_eq!(messages[2]["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn dropping_a_stream_cancels_its_request() {
    let (endpoint, cancelled) = endpoint();
    let body = call_body(4, "hang", json!({}), true);
    let request = call_request("hang", &body)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let mut body = endpoint.handle(request).await.into_body();
    let first = tokio::time::timeout(WAIT, body.next_chunk())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(event_message(&first)["params"]["message"], "started");
    assert!(!cancelled.load(Ordering::SeqCst));
    // The host drops the body: its client went away.
    drop(body);
    tokio::time::timeout(WAIT, async {
        while !cancelled.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the handler was stopped");
}

#[tokio::test]
async fn client_gone_cancels_a_request_before_it_answers() {
    let server = Server::new("gone", "1.0.0");
    let cancelled = Arc::new(AtomicBool::new(false));
    let seen = cancelled.clone();
    server
        .add_tool(
            Tool::new("quiet", json!({"type": "object"})),
            move |ctx: RequestContext, _args: Value| {
                let seen = seen.clone();
                async move {
                    let _stopped = SetOnDrop(seen);
                    ctx.cancelled().await;
                    Ok(ToolOutput::text("late"))
                }
            },
        )
        .unwrap();
    let endpoint = HttpEndpoint::new(server, EndpointOptions::default());
    let body = call_body(5, "quiet", json!({}), false);
    let request = call_request("quiet", &body)
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    let gone = CancellationToken::new();
    let info = ExchangeInfo {
        peer: None,
        client_gone: Some(gone.clone()),
    };
    let handled = tokio::spawn(async move { endpoint.handle_with(request, info).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    gone.cancel();
    let response = tokio::time::timeout(WAIT, handled).await.unwrap().unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    tokio::time::timeout(WAIT, async {
        while !cancelled.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the handler was stopped");
}

#[tokio::test]
async fn guards_host_path_headers_and_size() {
    let options = EndpointOptions {
        max_body_bytes: 300,
        ..EndpointOptions::default()
    };
    let endpoint = HttpEndpoint::new(server(Default::default()), options);
    let body = call_body(1, "echo", json!({"text": "hi"}), false);
    let full = || Full::new(Bytes::from(body.to_string()));
    // A rebinding attack: a foreign Host on a loopback-only endpoint.
    let mut foreign = call_request("echo", &body).body(full()).unwrap();
    foreign
        .headers_mut()
        .insert("host", "evil.example".parse().unwrap());
    assert_eq!(
        endpoint.handle(foreign).await.status(),
        StatusCode::FORBIDDEN
    );
    let elsewhere = Request::get("/other")
        .header("host", "localhost")
        .body(Empty::<Bytes>::new())
        .unwrap();
    assert_eq!(
        endpoint.handle(elsewhere).await.status(),
        StatusCode::NOT_FOUND
    );
    // Mirrored header disagreeing with the body.
    let mut mismatch = call_request("echo", &body).body(full()).unwrap();
    mismatch
        .headers_mut()
        .insert("mcp-name", "other".parse().unwrap());
    let response = endpoint.handle(mismatch).await;
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    assert_eq!(json_of(response).await["error"]["code"], -32020);
    // Past the body limit.
    let big = call_body(1, "echo", json!({"text": "x".repeat(400)}), false);
    let request = call_request("echo", &big)
        .body(Full::new(Bytes::from(big.to_string())))
        .unwrap();
    assert_eq!(
        endpoint.handle(request).await.status(),
        StatusCode::PAYLOAD_TOO_LARGE
    );
}

#[tokio::test]
async fn any_path_when_the_host_routes() {
    let options = EndpointOptions {
        path: None,
        allowed_hosts: Some(vec!["api.example".into()]),
        ..EndpointOptions::default()
    };
    let endpoint = HttpEndpoint::new(server(Default::default()), options);
    let body = call_body(1, "echo", json!({"text": "routed"}), false);
    let mut request = call_request("echo", &body)
        .uri("/tenants/42/mcp")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap();
    request
        .headers_mut()
        .insert("host", "api.example".parse().unwrap());
    let response = endpoint.handle(request).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        json_of(response).await["result"]["content"][0]["text"],
        "routed"
    );
}

fn legacy_post(session: Option<&str>, message: &Value) -> Request<Full<Bytes>> {
    let mut builder = Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    if let Some(id) = session {
        builder = builder
            .header("mcp-session-id", id)
            .header("mcp-protocol-version", "2025-11-25");
    }
    builder
        .body(Full::new(Bytes::from(message.to_string())))
        .unwrap()
}

#[tokio::test]
async fn serves_a_legacy_session() {
    let (endpoint, _) = endpoint();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": INITIALIZE, "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}
    }});
    let response = endpoint.handle(legacy_post(None, &initialize)).await;
    assert_eq!(response.status(), StatusCode::OK);
    let session = response.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        json_of(response).await["result"]["protocolVersion"],
        "2025-11-25"
    );
    let initialized = json!({"jsonrpc": "2.0", "method": NOTIFICATIONS_INITIALIZED});
    let response = endpoint
        .handle(legacy_post(Some(&session), &initialized))
        .await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": TOOLS_CALL,
                      "params": {"name": "echo", "arguments": {"text": "old times"}}});
    let response = endpoint.handle(legacy_post(Some(&session), &call)).await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        json_of(response).await["result"]["content"][0]["text"],
        "old times"
    );
    // Progress in a session: a resumable SSE stream with event ids.
    let steps = json!({"jsonrpc": "2.0", "id": 2, "method": TOOLS_CALL,
                       "params": {"name": "steps", "arguments": {}, "_meta": {"progressToken": "s"}}});
    let response = endpoint.handle(legacy_post(Some(&session), &steps)).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut body = response.into_body();
    let mut messages = Vec::new();
    while let Some(chunk) = tokio::time::timeout(WAIT, body.next_chunk()).await.unwrap() {
        let text = std::str::from_utf8(&chunk).unwrap();
        if text.contains("data: {") {
            assert!(text.contains("id: "), "legacy events carry ids: {text:?}");
            messages.push(event_message(&chunk));
        }
    }
    assert_eq!(messages.last().unwrap()["id"], 2);
    assert_eq!(messages[0]["method"], NOTIFICATIONS_PROGRESS);
    let delete = Request::delete("/mcp")
        .header("host", "127.0.0.1")
        .header("mcp-session-id", &session)
        .body(Empty::<Bytes>::new())
        .unwrap();
    assert_eq!(endpoint.handle(delete).await.status(), StatusCode::OK);
    let response = endpoint.handle(legacy_post(Some(&session), &call)).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}
