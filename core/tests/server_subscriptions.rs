//! `subscriptions/listen` (spec: docs/basic/patterns/subscriptions.mdx) and
//! the change notifications it carries (docs/server/{tools,prompts,
//! resources}.mdx "List Changed Notification"), over stdio and HTTP.
//! Each test names the spec section whose rule it checks.

use ferromcp_testkit as common;

use common::{Http, QUIET, SseItem, Stdio, TIMEOUT, cancelled, request, server_with};
use ferromcp::protocol::{Prompt, Resource, ResourceTemplate, Tool};
use ferromcp::server::{
    PromptOutput, ResourceOutput, ResourceRequest, Server, ServerOptions, ToolOutput,
};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn add_tool(server: &Server, name: &str) {
    server
        .add_tool(
            Tool::new(name, json!({"type": "object"})),
            |_ctx, _args: Value| async { Ok(ToolOutput::text("ok")) },
        )
        .unwrap();
}

fn add_prompt(server: &Server, name: &str) {
    server
        .add_prompt(Prompt::new(name), |_ctx, _args| async {
            Ok(PromptOutput::Text("p".into()))
        })
        .unwrap();
}

fn add_resource(server: &Server, uri: &str) {
    server
        .add_resource(
            Resource::new(uri, uri),
            |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text("r".into())) },
        )
        .unwrap();
}

/// A server offering tools, prompts and resources.
fn full_server() -> Server {
    let server = server_with(ServerOptions::default());
    add_tool(&server, "t1");
    add_prompt(&server, "p1");
    add_resource(&server, "test://a");
    add_resource(&server, "test://b");
    server
}

fn tools_only() -> Server {
    let server = server_with(ServerOptions::default());
    add_tool(&server, "t1");
    server
}

fn listen(id: impl Into<Value>, notifications: Value) -> Value {
    request(
        id,
        "subscriptions/listen",
        json!({"notifications": notifications}),
    )
}

fn all_types() -> Value {
    json!({
        "toolsListChanged": true,
        "promptsListChanged": true,
        "resourcesListChanged": true,
        "resourceSubscriptions": ["test://a"]
    })
}

/// Opens a listen stream on stdio and returns its acknowledgement.
async fn open(io: &mut Stdio, id: impl Into<Value>, notifications: Value) -> Value {
    let id = id.into();
    io.send(&listen(id.clone(), notifications)).await;
    let ack = io.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUB_ID], id, "{ack}");
    ack
}

/// `(method, subscription id)` of a notification.
fn kind(message: &Value) -> (String, Value) {
    assert!(message.get("id").is_none(), "a notification: {message}");
    (
        message["method"].as_str().unwrap_or_default().to_owned(),
        message["params"]["_meta"][SUB_ID].clone(),
    )
}

// docs/basic/patterns/subscriptions.mdx "Acknowledgment": first message, carrying the
// subscription id, reflecting the filter the server honours
#[tokio::test]
async fn subscriptions_acknowledgement_comes_first_with_the_honoured_filter() {
    let mut io = Stdio::start(full_server());
    let ack = open(&mut io, 1, all_types()).await;
    assert_eq!(
        ack["params"],
        json!({"_meta": {SUB_ID: 1}, "notifications": all_types()})
    );
    // types asked with false are not subscribed, hence not acknowledged
    let ack = open(
        &mut io,
        2,
        json!({"toolsListChanged": false, "promptsListChanged": true}),
    )
    .await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true})
    );
    // an empty filter is a valid (silent) subscription
    let ack = open(&mut io, 3, json!({})).await;
    assert_eq!(ack["params"]["notifications"], json!({}));
}

// docs/basic/patterns/subscriptions.mdx "Acknowledgment": types the server does not support
// are omitted
#[tokio::test]
async fn subscriptions_acknowledgement_omits_types_the_server_does_not_offer() {
    let mut io = Stdio::start(tools_only());
    let ack = open(&mut io, 1, all_types()).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
}

// docs/basic/patterns/subscriptions.mdx "Receiving Notifications": every notification carries
// the JSON-RPC id of the listen request as io.modelcontextprotocol/subscriptionId
#[tokio::test]
async fn subscriptions_every_notification_carries_the_listen_request_id() {
    let server = full_server();
    let mut io = Stdio::start(server.clone());
    open(&mut io, "sub-α", all_types()).await;
    add_tool(&server, "t2");
    server.notify_resource_updated("test://a");
    let first = io.recv().await;
    assert_eq!(
        first,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {SUB_ID: "sub-α"}}})
    );
    let second = io.recv().await;
    assert_eq!(
        second,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"_meta": {SUB_ID: "sub-α"}, "uri": "test://a"}})
    );
}

// docs/basic/patterns/subscriptions.mdx "Opening a Stream": the server MUST NOT send
// notification types the client has not requested
#[tokio::test]
async fn subscriptions_only_requested_types_are_delivered() {
    let server = full_server();
    let mut io = Stdio::start(server.clone());
    open(&mut io, 1, json!({"promptsListChanged": true})).await;
    add_tool(&server, "t2");
    server.remove_tool("t2");
    add_resource(&server, "test://c");
    server.notify_resource_updated("test://a");
    add_prompt(&server, "p2");
    // events are delivered in order: had any earlier one passed the filter it would come first
    assert_eq!(
        kind(&io.recv().await),
        ("notifications/prompts/list_changed".into(), json!(1))
    );
    assert!(io.recv_within(QUIET).await.is_none());
}

// docs/server/{tools,prompts,resources}.mdx "List Changed Notification": sent when primitives
// are added or removed at run time (and not when nothing changed)
#[tokio::test]
async fn subscriptions_list_changed_follows_primitives_added_and_removed() {
    let server = full_server();
    let mut io = Stdio::start(server.clone());
    open(
        &mut io,
        7,
        json!({"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true}),
    )
    .await;
    add_tool(&server, "t2");
    assert!(server.remove_tool("t2"));
    assert!(!server.remove_tool("never-there"));
    add_prompt(&server, "p2");
    assert!(server.remove_prompt("p2"));
    assert!(!server.remove_prompt("never-there"));
    add_resource(&server, "test://c");
    server
        .add_resource_template(
            ResourceTemplate::new("test://t/{x}", "t"),
            |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text(String::new())) },
        )
        .unwrap();
    assert!(server.remove_resource("test://c"));
    assert!(!server.remove_resource("test://never-there"));
    let mut methods = Vec::new();
    for _ in 0..7 {
        let (method, id) = kind(&io.recv().await);
        assert_eq!(id, 7);
        methods.push(method.trim_start_matches("notifications/").to_owned());
    }
    assert_eq!(
        methods,
        [
            "tools/list_changed",
            "tools/list_changed",
            "prompts/list_changed",
            "prompts/list_changed",
            "resources/list_changed",
            "resources/list_changed",
            "resources/list_changed",
        ]
    );
    assert!(
        io.recv_within(QUIET).await.is_none(),
        "removing nothing changes nothing"
    );
}

// docs/server/resources.mdx "Subscriptions": notifications/resources/updated only for the URIs
// in resourceSubscriptions
#[tokio::test]
async fn subscriptions_resource_updated_only_for_subscribed_uris() {
    let server = full_server();
    let mut io = Stdio::start(server.clone());
    open(
        &mut io,
        1,
        json!({"resourceSubscriptions": ["test://a", "test://t/1"]}),
    )
    .await;
    server.notify_resource_updated("test://b");
    server.notify_resource_updated("test://aa");
    server.notify_resource_updated("test://a");
    server.notify_resource_updated("test://t/1");
    let first = io.recv().await;
    assert_eq!(first["method"], "notifications/resources/updated");
    assert_eq!(first["params"]["uri"], "test://a");
    let second = io.recv().await;
    assert_eq!(
        second["params"]["uri"], "test://t/1",
        "any URI may be watched, not only listed ones"
    );
    // list changes were not asked for
    add_resource(&server, "test://c");
    assert!(io.recv_within(QUIET).await.is_none());
}

// docs/basic/patterns/subscriptions.mdx "Multiple Concurrent Subscriptions": each stream is
// identified by its listen request id and gets only what it asked for
#[tokio::test]
async fn subscriptions_concurrent_streams_are_demultiplexed_by_subscription_id() {
    let server = full_server();
    let mut io = Stdio::start(server.clone());
    open(&mut io, 1, json!({"toolsListChanged": true})).await;
    open(&mut io, "two", json!({"promptsListChanged": true})).await;
    open(
        &mut io,
        3,
        json!({"toolsListChanged": true, "promptsListChanged": true}),
    )
    .await;
    add_tool(&server, "t2");
    let got: BTreeSet<String> = [io.recv().await, io.recv().await]
        .iter()
        .map(|m| format!("{:?}", kind(m)))
        .collect();
    let want: BTreeSet<String> = [
        ("notifications/tools/list_changed".to_owned(), json!(1)),
        ("notifications/tools/list_changed".to_owned(), json!(3)),
    ]
    .iter()
    .map(|k| format!("{k:?}"))
    .collect();
    assert_eq!(got, want);
    add_prompt(&server, "p2");
    let got: BTreeSet<String> = [io.recv().await, io.recv().await]
        .iter()
        .map(|m| format!("{:?}", kind(m)))
        .collect();
    let want: BTreeSet<String> = [
        (
            "notifications/prompts/list_changed".to_owned(),
            json!("two"),
        ),
        ("notifications/prompts/list_changed".to_owned(), json!(3)),
    ]
    .iter()
    .map(|k| format!("{k:?}"))
    .collect();
    assert_eq!(got, want);
    assert!(io.recv_within(QUIET).await.is_none());
}

// docs/basic/patterns/subscriptions.mdx "Graceful Closure": a server-initiated end is a
// successful listen response carrying the subscription id
#[tokio::test]
async fn subscriptions_close_subscriptions_ends_streams_with_a_graceful_result() {
    let server = full_server();
    let mut io = Stdio::start(server.clone());
    open(&mut io, 1, all_types()).await;
    open(&mut io, "b", json!({"toolsListChanged": true})).await;
    server.close_subscriptions();
    let mut ended = Vec::new();
    for _ in 0..2 {
        let reply = io.recv().await;
        let result = &reply["result"];
        assert_eq!(result["resultType"], "complete", "{reply}");
        assert_eq!(result["_meta"][SUB_ID], reply["id"], "{reply}");
        assert_eq!(
            result.as_object().unwrap().len(),
            2,
            "nothing method-specific: {reply}"
        );
        ended.push(reply["id"].to_string());
    }
    ended.sort();
    assert_eq!(ended, ["\"b\"", "1"]);
    // nothing follows on a closed subscription
    add_tool(&server, "t2");
    assert!(io.recv_within(QUIET).await.is_none());
    // a listen opened after closing is acknowledged and ends at once
    let ack = open(&mut io, 9, json!({"toolsListChanged": true})).await;
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    let reply = io.recv().await;
    assert_eq!(reply["id"], 9);
    assert_eq!(reply["result"]["_meta"][SUB_ID], 9);
}

// docs/basic/patterns/subscriptions.mdx "Cancellation": on stdio, notifications/cancelled ends
// the stream; docs/basic/patterns/cancellation.mdx: no response for a cancelled request
#[tokio::test]
async fn subscriptions_stdio_cancelled_notification_ends_the_stream_with_nothing_more() {
    let server = full_server();
    let mut io = Stdio::start(server.clone());
    open(&mut io, 5, all_types()).await;
    open(&mut io, 6, json!({"toolsListChanged": true})).await;
    io.send(&cancelled(5)).await;
    // lines are handled in order: once this answer arrives, the cancellation was applied
    let (before, _) = io.exchange(request(100, "tools/list", json!({}))).await;
    assert!(before.is_empty(), "{before:?}");
    add_tool(&server, "t2");
    server.notify_resource_updated("test://a");
    // only the other subscription hears about it
    assert_eq!(
        kind(&io.recv().await),
        ("notifications/tools/list_changed".into(), json!(6))
    );
    let (before, _) = io.exchange(request(101, "tools/list", json!({}))).await;
    assert!(
        before.is_empty(),
        "nothing for the cancelled stream: {before:?}"
    );
    // no graceful result for a client-cancelled stream, not even at shutdown
    server.close_subscriptions();
    let reply = io.recv().await;
    assert_eq!(reply["id"], 6, "{reply}");
    let rest = io.finish().await;
    assert!(rest.is_empty(), "nothing more may be sent: {rest}");
}

// docs/basic/patterns/subscriptions.mdx "Cancellation": a subscription ends when the transport
// closes — stdio end of input ends listen streams at once (no grace period, no response)
#[tokio::test]
async fn subscriptions_stdio_end_of_input_ends_listen_streams_promptly() {
    let mut io = Stdio::start(full_server());
    open(&mut io, 1, all_types()).await;
    let started = std::time::Instant::now();
    let rest = io.finish().await;
    assert!(rest.is_empty(), "{rest}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
}

// docs/basic/patterns/subscriptions.mdx "Notification Filter": the filter is an object of
// booleans and a string array
#[tokio::test]
async fn subscriptions_listen_with_a_malformed_filter_is_invalid_params() {
    let mut io = Stdio::start(full_server());
    for params in [
        json!({}),
        json!({"notifications": true}),
        json!({"notifications": {"toolsListChanged": "yes"}}),
        json!({"notifications": {"resourceSubscriptions": "test://a"}}),
        json!({"notifications": {"resourceSubscriptions": [1]}}),
    ] {
        let reply = io
            .call(request(1, "subscriptions/listen", params.clone()))
            .await;
        assert_eq!(reply["error"]["code"], -32602, "{params}: {reply}");
    }
}

// docs/basic/transports/streamable-http.mdx "Receiving Messages": the listen response is an SSE
// stream with X-Accel-Buffering: no and keep-alive comments; server shutdown ends it with the
// graceful result (docs/basic/patterns/subscriptions.mdx "Graceful Closure")
#[tokio::test]
async fn streamable_http_listen_is_an_sse_stream_with_keep_alive_and_graceful_end() {
    let server = full_server();
    let http = Http::start_with(server.clone(), |o| o.keep_alive = Duration::from_millis(30)).await;
    let mut stream = http
        .open(&listen(1, json!({"toolsListChanged": true})))
        .await;
    assert_eq!(stream.status, 200);
    assert_eq!(stream.header("content-type"), Some("text/event-stream"));
    assert_eq!(stream.header("x-accel-buffering"), Some("no"));
    assert_eq!(stream.header("cache-control"), Some("no-cache"));
    let ack = stream.next_message().await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"][SUB_ID], 1);
    // quiet stream: keep-alive comment lines arrive
    for _ in 0..2 {
        assert_eq!(stream.next_item().await, Some(SseItem::Comment));
    }
    add_tool(&server, "t2");
    let note = stream.next_message().await.unwrap();
    assert_eq!(
        kind(&note),
        ("notifications/tools/list_changed".into(), json!(1))
    );
    http.shutdown();
    let done = stream.next_message().await.unwrap();
    assert_eq!(done["id"], 1);
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(done["result"]["_meta"][SUB_ID], 1);
    assert_eq!(
        tokio::time::timeout(TIMEOUT, stream.next_message())
            .await
            .unwrap(),
        None,
        "the stream closes after the result"
    );
}

// docs/basic/patterns/subscriptions.mdx "Acknowledgment": even a stream that ends at once starts
// with the acknowledgement
#[tokio::test]
async fn streamable_http_listen_after_close_still_starts_with_the_acknowledgement() {
    let server = full_server();
    server.close_subscriptions();
    let http = Http::start(server).await;
    let r = http
        .post(&listen(4, json!({"promptsListChanged": true})))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type"),
        Some("text/event-stream"),
        "{}",
        r.body
    );
    let messages = r.sse_messages();
    assert_eq!(messages.len(), 2, "{}", r.body);
    assert_eq!(
        messages[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(messages[1]["result"]["_meta"][SUB_ID], 4);
}

// docs/basic/transports/streamable-http.mdx "Receiving Messages": request-scoped notifications
// (progress, logs) are not delivered on the listen stream
#[tokio::test]
async fn streamable_http_listen_streams_carry_no_request_scoped_notifications() {
    let server = full_server();
    server
        .add_tool(
            Tool::new("chatty", json!({"type": "object"})),
            |ctx: ferromcp::server::RequestContext, _args: Value| async move {
                ctx.log(ferromcp::server::LoggingLevel::Error, json!("noise"), None);
                ctx.progress(1.0, None, None);
                Ok(ToolOutput::text("ok"))
            },
        )
        .unwrap();
    let http = Http::start(server.clone()).await;
    let mut open_listen = listen(1, json!({"toolsListChanged": true}));
    open_listen["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    open_listen["params"]["_meta"]["progressToken"] = json!("p");
    let mut stream = http.open(&open_listen).await;
    stream.next_message().await.unwrap();
    let mut call = request(2, "tools/call", json!({"name": "chatty"}));
    call["params"]["_meta"]["io.modelcontextprotocol/logLevel"] = json!("debug");
    call["params"]["_meta"]["progressToken"] = json!("p");
    let r = http.post(&call).await;
    assert_eq!(
        r.sse_messages().len(),
        3,
        "the call's own stream has them: {}",
        r.body
    );
    add_tool(&server, "t2");
    let next = stream.next_message().await.unwrap();
    assert_eq!(next["method"], "notifications/tools/list_changed", "{next}");
}
