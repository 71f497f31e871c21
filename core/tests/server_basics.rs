//! Behaviour of the 2026-07-28 server core over stdio and Streamable HTTP.
//! Each test names the spec section (docs/…) whose rule it checks.

use ferromcp_testkit as common;

use common::{Http, Stdio, VERSION, mcp_headers, raw_http, request};
use ferromcp::protocol::Tool;
use ferromcp::server::{HandlerError, Server, ServerOptions, ToolOutput};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

fn test_server_with(options: ServerOptions) -> Server {
    let server = Server::with_options(
        ferromcp::protocol::Implementation::new("test-server", "9.9.9"),
        options,
    );
    server
        .add_tool(
            Tool::new(
                "echo",
                json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
            )
            .with_description("Returns the text unchanged."),
            |_ctx, args: Value| async move { Ok(ToolOutput::Value(args["text"].clone())) },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new(
                "add",
                json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]}),
            )
            .with_output_schema(json!({"type": "object", "properties": {"result": {"type": "integer"}}, "required": ["result"]})),
            |_ctx, args: Value| async move {
                Ok(ToolOutput::Value(json!(args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0))))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("fail", json!({"type": "object"})),
            |_ctx, _args: Value| async move { Err::<ToolOutput, _>(HandlerError::tool("it broke")) },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("panic", json!({"type": "object"})),
            |_ctx, _args: Value| async move {
                if true {
                    panic!("handler exploded");
                }
                Ok(ToolOutput::Value(Value::Null))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("slow", json!({"type": "object"})),
            |ctx: ferromcp::server::RequestContext, _args: Value| async move {
                ctx.progress(0.0, Some(2.0), Some("starting"));
                tokio::time::sleep(Duration::from_millis(20)).await;
                ctx.progress(1.0, Some(2.0), None);
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok(ToolOutput::text("done"))
            },
        )
        .unwrap();
    server
}

fn test_server() -> Server {
    test_server_with(ServerOptions::default())
}

#[tokio::test]
async fn basic_index_meta_is_required_on_every_request() {
    let mut io = Stdio::start(test_server());
    for (params, why) in [
        (json!({}), "no _meta"),
        (
            json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
            "no version",
        ),
        (
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}}),
            "no capabilities",
        ),
    ] {
        let reply = io
            .call(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}))
            .await;
        assert_eq!(reply["error"]["code"], -32602, "{why}: {reply}");
        assert_eq!(reply["id"], 1);
    }
    // clientInfo is optional
    let reply = io
        .call(
            json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": VERSION,
                "io.modelcontextprotocol/clientCapabilities": {}
            }}}),
        )
        .await;
    assert!(reply["result"].is_object(), "{reply}");
}

#[tokio::test]
async fn versioning_unsupported_version_lists_supported_ones() {
    let mut io = Stdio::start(test_server());
    let mut req = request(5, "server/discover", json!({}));
    req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let reply = io.call(req).await;
    assert_eq!(reply["error"]["code"], -32022);
    assert_eq!(reply["error"]["data"]["requested"], "1900-01-01");
    assert_eq!(reply["error"]["data"]["supported"], json!([VERSION]));
}

#[tokio::test]
async fn discover_reports_versions_capabilities_identity_and_cache_hints() {
    let mut io = Stdio::start(test_server());
    let reply = io.call(request(1, "server/discover", json!({}))).await;
    let result = &reply["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["supportedVersions"], json!([VERSION]));
    assert!(result["capabilities"]["tools"].is_object());
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"],
        json!({"name": "test-server", "version": "9.9.9"})
    );
    assert!(result["ttlMs"].is_u64());
    assert!(result["cacheScope"] == "public" || result["cacheScope"] == "private");
}

#[tokio::test]
async fn basic_index_unknown_methods_and_bad_json_keep_the_server_serving() {
    let mut io = Stdio::start(test_server());
    io.send_raw("{this is not json").await;
    let reply = io.recv().await;
    assert_eq!(reply["error"]["code"], -32700);
    assert!(reply.get("id").is_none());
    io.send_raw(r#"{"jsonrpc":"2.0","id":3,"method":42}"#).await;
    assert_eq!(io.recv().await["error"]["code"], -32600);
    let reply = io.call(request(4, "initialize", json!({}))).await;
    assert_eq!(reply["error"]["code"], -32601);
    let reply = io.call(request(5, "tools/list", json!({}))).await;
    assert_eq!(reply["result"]["tools"].as_array().map(Vec::len), Some(5));
}

#[tokio::test]
async fn tools_list_is_ordered_cacheable_and_paginated_with_sealed_cursors() {
    let mut io = Stdio::start(test_server_with(ServerOptions {
        page_size: 2,
        ..ServerOptions::default()
    }));
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    let mut pages = 0;
    loop {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let reply = io.call(request(pages + 1, "tools/list", params)).await;
        let result = &reply["result"];
        assert_eq!(result["resultType"], "complete");
        assert!(result["ttlMs"].is_u64() && result["cacheScope"].is_string());
        for t in result["tools"].as_array().unwrap() {
            names.push(t["name"].as_str().unwrap().to_owned());
        }
        pages += 1;
        match result["nextCursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(names, ["echo", "add", "fail", "panic", "slow"]);
    let reply = io
        .call(request(
            9,
            "tools/list",
            json!({"cursor": "eyJvZmZzZXQiOjJ9"}),
        ))
        .await;
    assert_eq!(reply["error"]["code"], -32602, "forged cursor: {reply}");
}

#[tokio::test]
async fn tools_call_validates_arguments_and_reports_tool_errors_as_results() {
    let mut io = Stdio::start(test_server());
    let reply = io
        .call(request(
            1,
            "tools/call",
            json!({"name": "add", "arguments": {"a": "x", "b": 1}}),
        ))
        .await;
    assert_eq!(reply["result"]["isError"], true);
    let text = reply["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("Invalid arguments for tool 'add'") && text.contains("/a"),
        "{text}"
    );

    let reply = io
        .call(request(
            2,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        ))
        .await;
    assert_eq!(reply["result"]["structuredContent"], json!({"result": 5}));
    assert_eq!(
        reply["result"]["content"],
        json!([{"type": "text", "text": "5"}])
    );
    assert_eq!(reply["result"]["resultType"], "complete");

    let reply = io
        .call(request(3, "tools/call", json!({"name": "fail"})))
        .await;
    assert_eq!(reply["result"]["isError"], true);
    assert_eq!(reply["result"]["content"][0]["text"], "it broke");

    let reply = io
        .call(request(4, "tools/call", json!({"name": "panic"})))
        .await;
    assert_eq!(reply["result"]["isError"], true);
    assert!(
        reply["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("handler exploded")
    );

    let reply = io
        .call(request(5, "tools/call", json!({"name": "nope"})))
        .await;
    assert_eq!(reply["error"]["code"], -32602);

    let reply = io
        .call(request(
            6,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "still alive"}}),
        ))
        .await;
    assert_eq!(reply["result"]["content"][0]["text"], "still alive");
}

#[tokio::test]
async fn progress_notifications_precede_the_result_on_stdio() {
    let mut io = Stdio::start(test_server());
    let mut req = request(1, "tools/call", json!({"name": "slow"}));
    req["params"]["_meta"]["progressToken"] = json!("tok");
    io.send(&req).await;
    let first = io.recv().await;
    assert_eq!(first["method"], "notifications/progress");
    assert_eq!(first["params"]["progressToken"], "tok");
    let second = io.recv().await;
    assert_eq!(second["params"]["progress"], 1.0);
    let done = io.recv().await;
    assert_eq!(done["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn stdio_cancellation_suppresses_the_response() {
    let mut io = Stdio::start(test_server());
    io.send(&request(7, "tools/call", json!({"name": "slow"})))
        .await;
    io.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}),
    )
    .await;
    let next = io.call(request(8, "tools/list", json!({}))).await;
    assert_eq!(
        next["id"], 8,
        "the cancelled request must not be answered: {next}"
    );
    tokio::time::sleep(Duration::from_millis(80)).await;
    drop(io.to_server);
    let mut rest = String::new();
    io.from_server.read_to_string(&mut rest).await.unwrap();
    assert!(
        rest.is_empty(),
        "nothing may follow for a cancelled request: {rest}"
    );
}

#[tokio::test]
async fn stdio_exits_on_eof_after_answering_what_was_sent() {
    let Stdio {
        mut to_server,
        mut from_server,
        task,
    } = Stdio::start(test_server());
    to_server
        .write_all(format!("{}\n", request(1, "tools/call", json!({"name": "slow"}))).as_bytes())
        .await
        .unwrap();
    drop(to_server);
    let mut out = String::new();
    from_server.read_to_string(&mut out).await.unwrap();
    assert!(out.contains("\"done\""), "{out}");
    tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .expect("server exits after EOF")
        .unwrap()
        .unwrap();
}

// ---- Streamable HTTP ----

#[tokio::test]
async fn streamable_http_answers_with_json_and_checks_headers() {
    let http = Http::start(test_server()).await;
    let body = request(
        1,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "hi"}}),
    )
    .to_string();
    let ok = raw_http(
        http.port,
        "POST",
        &mcp_headers("tools/call", Some("echo")),
        &body,
    )
    .await;
    assert_eq!(ok.status, 200);
    assert_eq!(ok.header("content-type"), Some("application/json"));
    assert_eq!(ok.json()["result"]["content"][0]["text"], "hi");

    // header names are case-insensitive and surrounding whitespace is accepted
    let mut relaxed = mcp_headers("tools/call", Some("  echo "));
    relaxed[3].0 = "mcp-METHOD";
    assert_eq!(
        raw_http(http.port, "POST", &relaxed, &body).await.status,
        200
    );

    for (headers, why) in [
        (mcp_headers("tools/call", Some("add")), "Mcp-Name mismatch"),
        (
            mcp_headers("tools/list", Some("echo")),
            "Mcp-Method mismatch",
        ),
        (mcp_headers("tools/call", None), "Mcp-Name missing"),
        (
            mcp_headers("Tools/Call", Some("echo")),
            "method values are case-sensitive",
        ),
        (
            mcp_headers("tools/call", Some("echo"))
                .into_iter()
                .filter(|(n, _)| *n != "MCP-Protocol-Version")
                .collect(),
            "version header missing",
        ),
    ] {
        let r = raw_http(http.port, "POST", &headers, &body).await;
        assert_eq!(r.status, 400, "{why}");
        assert_eq!(r.json()["error"]["code"], -32020, "{why}");
        assert_eq!(r.json()["id"], 1, "{why}");
    }

    // base64 sentinel form of Mcp-Name is decoded before comparing
    let encoded = raw_http(
        http.port,
        "POST",
        &mcp_headers("tools/call", Some("=?base64?ZWNobw==?=")),
        &body,
    )
    .await;
    assert_eq!(encoded.status, 200);
}

#[tokio::test]
async fn streamable_http_version_rules() {
    let http = Http::start(test_server()).await;
    let mut req = request(3, "server/discover", json!({}));
    req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let body = req.to_string();
    let mut headers = mcp_headers("server/discover", None);
    headers[2].1 = "v999.0.0".into();
    let both = raw_http(http.port, "POST", &headers, &body).await;
    assert_eq!(both.status, 400);
    assert_eq!(both.json()["error"]["code"], -32022);
    assert_eq!(both.json()["error"]["data"]["requested"], "v999.0.0");
    let mismatch = raw_http(
        http.port,
        "POST",
        &mcp_headers("server/discover", None),
        &body,
    )
    .await;
    assert_eq!(mismatch.status, 400);
    assert_eq!(mismatch.json()["error"]["code"], -32020);

    let no_meta =
        json!({"jsonrpc": "2.0", "id": 4, "method": "server/discover", "params": {}}).to_string();
    let r = raw_http(
        http.port,
        "POST",
        &mcp_headers("server/discover", None),
        &no_meta,
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32602))
    );

    let removed = request(5, "ping", json!({})).to_string();
    let r = raw_http(http.port, "POST", &mcp_headers("ping", None), &removed).await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (404, json!(-32601))
    );
}

#[tokio::test]
async fn streamable_http_security_and_method_rules() {
    let http = Http::start_with(test_server(), |o| o.max_body_bytes = 4096).await;
    let body = request(1, "server/discover", json!({})).to_string();
    let mut evil = mcp_headers("server/discover", None);
    evil.push(("Origin", "http://evil.example.com".into()));
    assert_eq!(raw_http(http.port, "POST", &evil, &body).await.status, 403);

    let mut rebind = mcp_headers("server/discover", None);
    rebind.push(("Host", "evil.example.com".into()));
    rebind.push(("Origin", "http://evil.example.com".into()));
    let r = raw_http(http.port, "POST", &rebind, &body).await;
    assert!(
        (400..500).contains(&r.status),
        "DNS rebinding must be refused: {}",
        r.status
    );

    let mut local_origin = mcp_headers("server/discover", None);
    local_origin.push(("Origin", format!("http://localhost:{}", http.port)));
    assert_eq!(
        raw_http(http.port, "POST", &local_origin, &body)
            .await
            .status,
        200
    );

    for method in ["GET", "DELETE"] {
        let r = raw_http(http.port, method, &[], "").await;
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow"), Some("POST"));
    }

    let big = request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "x".repeat(10_000)}}),
    )
    .to_string();
    let r = raw_http(
        http.port,
        "POST",
        &mcp_headers("tools/call", Some("echo")),
        &big,
    )
    .await;
    assert_eq!(r.status, 413);

    let r = raw_http(
        http.port,
        "POST",
        &mcp_headers("server/discover", None),
        "{oops",
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32700))
    );

    // still serving
    assert_eq!(
        raw_http(
            http.port,
            "POST",
            &mcp_headers("server/discover", None),
            &body
        )
        .await
        .status,
        200
    );
}

#[tokio::test]
async fn streamable_http_switches_to_sse_for_progress() {
    let http = Http::start(test_server()).await;
    let mut req = request(1, "tools/call", json!({"name": "slow"}));
    req["params"]["_meta"]["progressToken"] = json!(42);
    let r = raw_http(
        http.port,
        "POST",
        &mcp_headers("tools/call", Some("slow")),
        &req.to_string(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    assert_eq!(r.header("x-accel-buffering"), Some("no"));
    let events: Vec<Value> = r
        .body
        .split("\n\n")
        .filter_map(|e| e.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(events.len(), 3, "{}", r.body);
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_eq!(events[0]["params"]["progressToken"], 42);
    assert_eq!(events[2]["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn rust_client_round_trips_over_http() {
    let http = Http::start(test_server()).await;
    let client =
        ferromcp::client::Client::connect_http(&format!("http://127.0.0.1:{}/mcp", http.port))
            .await
            .unwrap();
    let discovered = client.discover().await.unwrap();
    assert_eq!(discovered.supported_versions, [VERSION]);
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 5);
    let result = client
        .call_tool("add", json!({"a": 40, "b": 2}))
        .await
        .unwrap();
    assert_eq!(result.structured_content, Some(json!({"result": 42})));
    let err = client.call_tool("nope", json!({})).await.unwrap_err();
    assert!(
        matches!(err, ferromcp::Error::Mcp(ref e) if e.code == -32602),
        "{err}"
    );
}

#[test]
fn registration_rejects_bad_definitions() {
    let server = Server::new("s", "1");
    let noop = |_ctx, _args: Value| async move { Ok(ToolOutput::Value(Value::Null)) };
    assert!(
        server
            .add_tool(Tool::new("has space", json!({"type": "object"})), noop)
            .is_err()
    );
    assert!(
        server
            .add_tool(Tool::new("x", json!({"type": "string"})), noop)
            .is_err()
    );
    assert!(
        server
            .add_tool(
                Tool::new("remote", json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/schema.json"}}})),
                noop
            )
            .is_err(),
        "network $ref must not be fetched"
    );
}

#[tokio::test]
async fn basic_index_request_ids_in_flight_must_be_unique() {
    let mut io = Stdio::start(test_server());
    io.send(&request(5, "tools/call", json!({"name": "slow"})))
        .await;
    let duplicate = io.call(request(5, "tools/list", json!({}))).await;
    assert_eq!(duplicate["error"]["code"], -32600, "{duplicate}");
    assert_eq!(duplicate["id"], 5);
    // the first request is still answered, and the id is free again after
    let mut first = io.recv().await;
    while first.get("method").is_some() {
        first = io.recv().await;
    }
    assert_eq!(first["result"]["content"][0]["text"], "done");
    let reused = io.call(request(5, "tools/list", json!({}))).await;
    assert!(reused["result"].is_object(), "{reused}");
}
