//! Every message the server core emits validates against the 2026-07-28
//! schema (docs/schema.mdx; `schema.json` in tests/fixtures/spec/):
//! results of every method, JSON-RPC errors of every code, request-scoped
//! and subscription notifications, and `input_required` results — over
//! stdio and Streamable HTTP.

use ferromcp_testkit as common;

use common::{
    Http, Stdio, cancelled, mcp_headers, meta_all_caps, meta_with, raw_http, request,
    request_with_meta, server_with,
};
use ferromcp::McpError;
use ferromcp::protocol::{Prompt, PromptArgument, Resource, ResourceTemplate, Tool};
use ferromcp::server::{
    CompletionOutput, HandlerError, InputKind, LoggingLevel, PromptOutput, RequestContext,
    ResourceOutput, ResourceRequest, Server, ServerOptions, ToolOutput,
};
use ferromcp_tests::schema::SchemaValidator;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// Validates every server message of a session, remembering which method
/// each request id was sent with so results are checked against the right
/// definition.
struct Checker {
    schema: SchemaValidator,
    sent: HashMap<String, String>,
    checked: usize,
    failures: Vec<String>,
}

impl Checker {
    fn new() -> Checker {
        Checker {
            schema: SchemaValidator::load(),
            sent: HashMap::new(),
            checked: 0,
            failures: Vec::new(),
        }
    }

    fn sent(&mut self, request: &Value) {
        if let Some(method) = request["method"].as_str() {
            self.sent
                .insert(request["id"].to_string(), method.to_owned());
        }
    }

    fn check(&mut self, message: &Value) {
        let method = match message.get("id") {
            Some(id) if message.get("result").is_some() => self.sent.get(&id.to_string()).cloned(),
            _ => None,
        };
        self.checked += 1;
        if let Err(e) = self
            .schema
            .validate_server_message(message, method.as_deref())
        {
            self.failures
                .push(format!("{e}\n  message: {message}\n  answers: {method:?}"));
        }
    }

    /// Sends over stdio and checks everything up to and including the
    /// response; returns the response.
    async fn exchange(&mut self, io: &mut Stdio, request: Value) -> Value {
        self.sent(&request);
        let (before, reply) = io.exchange(request).await;
        for m in before.iter().chain([&reply]) {
            self.check(m);
        }
        reply
    }

    /// POSTs and checks every message of the response (JSON or SSE).
    async fn post(&mut self, http: &Http, request: Value) -> common::RawResponse {
        self.sent(&request);
        let r = http.post(&request).await;
        self.check_response(&r);
        r
    }

    fn check_response(&mut self, r: &common::RawResponse) {
        if r.header("content-type") == Some("text/event-stream") {
            for m in r.sse_messages() {
                self.check(&m);
            }
        } else if !r.body.is_empty() {
            self.check(&r.json());
        }
    }

    fn finish(self, at_least: usize) {
        assert!(
            self.failures.is_empty(),
            "{} invalid message(s):\n{}",
            self.failures.len(),
            self.failures.join("\n")
        );
        assert!(
            self.checked >= at_least,
            "only {} messages checked",
            self.checked
        );
    }
}

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

fn everything() -> Server {
    let server = server_with(ServerOptions {
        page_size: 2,
        instructions: Some("Use the tools.".into()),
        ..ServerOptions::default()
    });
    let object = || json!({"type": "object"});
    server
        .add_tool(
            Tool::new("text", object()).with_description("text"),
            |_ctx, _args: Value| async { Ok(ToolOutput::text("hello")) },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("structured", object()).with_output_schema(
                json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            ),
            |_ctx, _args: Value| async { Ok(ToolOutput::Value(json!({"n": 1}))) },
        )
        .unwrap();
    server
        .add_tool(Tool::new("scalar", object()), |_ctx, _args: Value| async {
            Ok(ToolOutput::Value(json!(42)))
        })
        .unwrap();
    server
        .add_tool(Tool::new("mixed", object()), |_ctx, _args: Value| async {
            let mut r = Map::new();
            r.insert(
                "content".into(),
                json!([
                    {"type": "text", "text": "t"},
                    {"type": "image", "data": PNG, "mimeType": "image/png"},
                    {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
                    {"type": "resource_link", "uri": "test://a", "name": "a"},
                    {"type": "resource", "resource": {"uri": "test://a", "mimeType": "text/plain", "text": "a"}}
                ]),
            );
            Ok(ToolOutput::Result(r))
        })
        .unwrap();
    server
        .add_tool(
            Tool::new("tool_error", object()),
            |_ctx, _args: Value| async { Err::<ToolOutput, _>(HandlerError::tool("failed")) },
        )
        .unwrap();
    server
        .add_tool(Tool::new("panics", object()), |_ctx, _args: Value| async {
            if true {
                panic!("boom");
            }
            Ok(ToolOutput::text(""))
        })
        .unwrap();
    server
        .add_tool(
            Tool::new("internal", object()),
            |_ctx, _args: Value| async {
                Err::<ToolOutput, _>(HandlerError::Protocol(McpError::internal(
                    "database unreachable",
                )))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("typed", json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]})),
            |_ctx, _args: Value| async { Ok(ToolOutput::text("typed")) },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("chatty", object()),
            |ctx: RequestContext, _args: Value| async move {
                ctx.progress(0.0, Some(2.0), Some("start"));
                tokio::task::yield_now().await;
                ctx.log(
                    LoggingLevel::Warning,
                    json!({"detail": "careful"}),
                    Some("chatty"),
                );
                ctx.log(LoggingLevel::Info, json!("info line"), None);
                ctx.progress(2.0, Some(2.0), None);
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
                Ok(ToolOutput::text("done"))
            },
        )
        .unwrap();
    server
        .add_tool(Tool::new("ask_all", object()), |ctx: RequestContext, _args: Value| async move {
            let (name, sample, roots) = tokio::join!(
                ctx.elicit_as(
                    Some("name"),
                    "Name?",
                    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
                ),
                ctx.ask(
                    Some("sample"),
                    InputKind::Sampling,
                    json!({"messages": [{"role": "user", "content": {"type": "text", "text": "Hi"}}], "maxTokens": 10})
                ),
                ctx.ask(Some("roots"), InputKind::Roots, json!({})),
            );
            let (_, _, _) = (name?, sample?, roots?);
            Ok(ToolOutput::text("all answered"))
        })
        .unwrap();
    server
        .add_tool(
            Tool::new("header", json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}})),
            |_ctx, _args: Value| async { Ok(ToolOutput::text("header ok")) },
        )
        .unwrap();
    let mut text = Resource::new("test://text", "text");
    text.mime_type = Some("text/plain".into());
    server
        .add_resource(text, |_ctx, _req: ResourceRequest| async {
            Ok(ResourceOutput::Text("hello".into()))
        })
        .unwrap();
    server
        .add_resource(
            Resource::new("test://blob", "blob"),
            |_ctx, _req: ResourceRequest| async {
                Ok(ResourceOutput::Blob(vec![0, 159, 146, 150]))
            },
        )
        .unwrap();
    server
        .add_resource(
            Resource::new("test://ask", "ask"),
            |ctx: RequestContext, _req: ResourceRequest| async move {
                let roots = ctx.list_roots().await?;
                Ok(ResourceOutput::Text(roots.to_string()))
            },
        )
        .unwrap();
    server
        .add_resource_template(
            ResourceTemplate::new("test://items/{id}", "item"),
            |_ctx, req: ResourceRequest| async move {
                Ok(ResourceOutput::Text(format!("{:?}", req.variables)))
            },
        )
        .unwrap();
    let mut greet = Prompt::new("greet");
    greet.description = Some("greets".into());
    greet.arguments = Some(vec![PromptArgument::new("name", true)]);
    server
        .add_prompt(greet, |_ctx, args: Map<String, Value>| async move {
            Ok(PromptOutput::Text(format!(
                "Hello {}",
                args["name"].as_str().unwrap_or_default()
            )))
        })
        .unwrap();
    server
        .add_prompt(Prompt::new("rich"), |_ctx, _args| async {
            Ok(PromptOutput::Messages(vec![
                json!({"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}}),
                json!({"role": "assistant", "content": {"type": "resource", "resource": {"uri": "test://blob", "blob": "AJ+Slg=="}}}),
            ]))
        })
        .unwrap();
    server
        .add_prompt(
            Prompt::new("ask_prompt"),
            |ctx: RequestContext, _args| async move {
                let answer = ctx.sample(json!({"messages": [], "maxTokens": 5})).await?;
                Ok(PromptOutput::Text(answer.to_string()))
            },
        )
        .unwrap();
    server.set_completion_handler(|_ctx, _params: Value| async {
        Ok(CompletionOutput {
            values: (0..120).map(|i| format!("v{i}")).collect(),
            total: None,
            has_more: None,
        })
    });
    server
}

fn call(id: i64, tool: &str) -> Value {
    request(id, "tools/call", json!({"name": tool}))
}

// docs/schema.mdx: every result of every method, and request-scoped notifications (stdio)
#[tokio::test]
async fn schema_results_and_request_notifications_on_stdio_are_valid() {
    let mut c = Checker::new();
    let mut io = Stdio::start(everything());
    c.exchange(&mut io, request(1, "server/discover", json!({})))
        .await;
    for method in [
        "tools/list",
        "resources/list",
        "resources/templates/list",
        "prompts/list",
    ] {
        let mut cursor = None;
        for page in 0.. {
            assert!(page < 20);
            let params = cursor.map_or(json!({}), |c: String| json!({"cursor": c}));
            let reply = c
                .exchange(&mut io, request(100 + page, method, params))
                .await;
            match reply["result"]["nextCursor"].as_str() {
                Some(next) => cursor = Some(next.to_owned()),
                None => break,
            }
        }
    }
    for (id, tool) in [
        (10, "text"),
        (11, "structured"),
        (12, "scalar"),
        (13, "mixed"),
        (14, "tool_error"),
        (15, "panics"),
    ] {
        c.exchange(&mut io, call(id, tool)).await;
    }
    c.exchange(
        &mut io,
        request(
            16,
            "tools/call",
            json!({"name": "typed", "arguments": {"n": "x"}}),
        ),
    )
    .await;
    let chatty = request_with_meta(
        17,
        "tools/call",
        json!({"name": "chatty"}),
        meta_with(json!({"progressToken": "p", "io.modelcontextprotocol/logLevel": "debug"})),
    );
    let reply = c.exchange(&mut io, chatty).await;
    assert_eq!(reply["result"]["content"][0]["text"], "done");
    for (id, uri) in [
        (20, "test://text"),
        (21, "test://blob"),
        (22, "test://items/7"),
    ] {
        c.exchange(&mut io, request(id, "resources/read", json!({"uri": uri})))
            .await;
    }
    c.exchange(
        &mut io,
        request(
            30,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        ),
    )
    .await;
    c.exchange(&mut io, request(31, "prompts/get", json!({"name": "rich"})))
        .await;
    let reply = c
        .exchange(
            &mut io,
            request(40, "completion/complete", json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": ""}})),
        )
        .await;
    assert_eq!(
        reply["result"]["completion"]["values"]
            .as_array()
            .unwrap()
            .len(),
        100
    );
    c.finish(25);
}

// docs/schema.mdx errors: every JSON-RPC error the server produces over stdio
#[tokio::test]
async fn schema_errors_on_stdio_are_valid() {
    let mut c = Checker::new();
    let mut io = Stdio::start(everything());
    io.send_raw("{not json").await;
    let parse_error = io.recv().await;
    assert_eq!(parse_error["error"]["code"], -32700);
    c.check(&parse_error);
    io.send_raw(r#"{"jsonrpc":"2.0","id":1,"method":7}"#).await;
    let invalid = io.recv().await;
    assert_eq!(invalid["error"]["code"], -32600);
    c.check(&invalid);
    let mut old = request(2, "server/discover", json!({}));
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2024-11-05");
    let cases = [
        (request(3, "initialize", json!({})), -32601),
        (
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}}),
            -32602,
        ),
        (old, -32022),
        (call(5, "nope"), -32602),
        (
            request(6, "resources/read", json!({"uri": "test://missing"})),
            -32602,
        ),
        (
            request(7, "tools/list", json!({"cursor": "forged"})),
            -32602,
        ),
        (request(8, "prompts/get", json!({"name": "greet"})), -32602),
        (
            request(
                9,
                "prompts/get",
                json!({"name": "greet", "arguments": {"name": 1}}),
            ),
            -32602,
        ),
        (call(10, "internal"), -32603),
        (call(11, "ask_all"), -32021),
        (request(12, "subscriptions/listen", json!({})), -32602),
        (
            request(
                13,
                "tools/call",
                json!({"name": "ask_all", "requestState": "tampered"}),
            ),
            -32602,
        ),
    ];
    for (req, code) in cases {
        let reply = c.exchange(&mut io, req.clone()).await;
        assert_eq!(reply["error"]["code"], code, "{req}: {reply}");
    }
    c.finish(14);
}

// docs/basic/patterns/mrtr.mdx "InputRequiredResult": interim results of tools/call,
// prompts/get and resources/read, and the results that complete them
#[tokio::test]
async fn schema_input_required_results_are_valid() {
    let mut c = Checker::new();
    let mut io = Stdio::start(everything());
    let first = request_with_meta(1, "tools/call", json!({"name": "ask_all"}), meta_all_caps());
    let reply = c.exchange(&mut io, first.clone()).await;
    assert_eq!(reply["result"]["resultType"], "input_required");
    let mut retry = first.clone();
    retry["id"] = json!(2);
    retry["params"]["requestState"] = reply["result"]["requestState"].clone();
    // answer one of three: asked again for the rest
    retry["params"]["inputResponses"] = json!({"roots": {"roots": [{"uri": "file:///tmp"}]}});
    let reply = c.exchange(&mut io, retry.clone()).await;
    assert_eq!(
        reply["result"]["inputRequests"].as_object().unwrap().len(),
        2
    );
    retry["id"] = json!(3);
    retry["params"]["requestState"] = reply["result"]["requestState"].clone();
    retry["params"]["inputResponses"] = json!({
        "name": {"action": "accept", "content": {"name": "Ada"}},
        "sample": {"role": "assistant", "content": {"type": "text", "text": "Hi"}, "model": "m"}
    });
    let reply = c.exchange(&mut io, retry).await;
    assert_eq!(reply["result"]["content"][0]["text"], "all answered");

    for (id, method, params) in [
        (4, "prompts/get", json!({"name": "ask_prompt"})),
        (5, "resources/read", json!({"uri": "test://ask"})),
    ] {
        let reply = c
            .exchange(
                &mut io,
                request_with_meta(id, method, params, meta_all_caps()),
            )
            .await;
        assert_eq!(reply["result"]["resultType"], "input_required", "{method}");
    }
    c.finish(5);
}

// docs/basic/patterns/subscriptions.mdx: acknowledgement, change notifications and the
// graceful completion result of subscriptions/listen (stdio)
#[tokio::test]
async fn schema_subscription_messages_are_valid() {
    let mut c = Checker::new();
    let server = everything();
    let mut io = Stdio::start(server.clone());
    let listen = request(
        "sub",
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true, "resourcesListChanged": true, "resourceSubscriptions": ["test://text"]}}),
    );
    c.sent(&listen);
    io.send(&listen).await;
    let empty = request(2, "subscriptions/listen", json!({"notifications": {}}));
    c.sent(&empty);
    io.send(&empty).await;
    for _ in 0..2 {
        c.check(&io.recv().await);
    }
    server.remove_tool("text");
    server.remove_prompt("rich");
    server.remove_resource("test://blob");
    server.notify_resource_updated("test://text");
    for _ in 0..4 {
        c.check(&io.recv().await);
    }
    server.close_subscriptions();
    for _ in 0..2 {
        let reply = io.recv().await;
        assert!(reply["result"].is_object(), "{reply}");
        c.check(&reply);
    }
    // a cancelled listen sends nothing more, so nothing to validate; the server still answers
    let listen = request(3, "subscriptions/listen", json!({"notifications": {}}));
    c.sent(&listen);
    io.send(&listen).await;
    c.check(&io.recv().await);
    c.check(&io.recv().await); // subscriptions are closed: ends at once
    io.send(&cancelled(3)).await;
    c.exchange(&mut io, request(4, "tools/list", json!({})))
        .await;
    c.finish(11);
}

// docs/basic/transports/streamable-http.mdx: JSON responses, SSE streams and HTTP-level
// JSON-RPC errors (header mismatch, method not found, unsupported version, missing capability)
#[tokio::test]
async fn schema_streamable_http_messages_are_valid() {
    let mut c = Checker::new();
    let server = everything();
    let http = Http::start(server.clone()).await;
    c.post(&http, request(1, "server/discover", json!({})))
        .await;
    c.post(&http, call(2, "text")).await;
    let r = c
        .post(
            &http,
            request_with_meta(
                3,
                "tools/call",
                json!({"name": "chatty"}),
                meta_with(json!({"progressToken": 9, "io.modelcontextprotocol/logLevel": "info"})),
            ),
        )
        .await;
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let r = c.post(&http, call(4, "ask_all")).await;
    assert_eq!(r.status, 400);
    let r = c.post(&http, request(5, "ping", json!({}))).await;
    assert_eq!(r.status, 404);
    let mut old = request(6, "server/discover", json!({}));
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999");
    let mut headers = mcp_headers("server/discover", None);
    headers[2].1 = "v999".into();
    let r = raw_http(http.port, "POST", &headers, &old.to_string()).await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32022))
    );
    c.check_response(&r);
    // header mismatches: Mcp-Name and Mcp-Param-*
    let body = request(
        7,
        "tools/call",
        json!({"name": "header", "arguments": {"region": "eu"}}),
    );
    for headers in [
        mcp_headers("tools/call", Some("text")),
        mcp_headers("tools/call", Some("header")),
    ] {
        let r = raw_http(http.port, "POST", &headers, &body.to_string()).await;
        assert_eq!(
            (r.status, r.json()["error"]["code"].clone()),
            (400, json!(-32020))
        );
        c.check_response(&r);
    }
    let r = c
        .post(
            &http,
            request(8, "resources/read", json!({"uri": "test://nope"})),
        )
        .await;
    assert_eq!(r.json()["error"]["code"], -32602);
    // a listen stream: acknowledgement, a change, then the graceful end at shutdown
    let listen = request(
        9,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    c.sent(&listen);
    let mut stream = http.open(&listen).await;
    c.check(&stream.next_message().await.unwrap());
    server.remove_tool("scalar");
    c.check(&stream.next_message().await.unwrap());
    http.shutdown();
    let end = stream.next_message().await.unwrap();
    assert_eq!(end["id"], 9);
    c.check(&end);
    c.finish(16);
}
