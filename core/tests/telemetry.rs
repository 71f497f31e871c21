//! OpenTelemetry (`core/src/telemetry`): a client span and the server span
//! it causes share one trace as parent and child, over HTTP in both eras
//! and in memory, with the W3C context carried in `_meta` (SEP-414); the
//! handler runs under the server span; names, attributes and error types
//! follow the MCP semantic conventions; the duration metrics reach the
//! collector. The collector is a small OTLP/HTTP receiver started here.
//!
//! The exporter is process-wide, so this file's checks run in one test.

use ferromcp::McpError;
use ferromcp::client::{CallOptions, Client, ClientOptions, EraPreference};
use ferromcp::protocol::Tool;
use ferromcp::server::{HandlerError, Server, ToolOutput};
use ferromcp::telemetry::{self, OtlpConfig, OtlpExporter, OtlpProtocol, TraceContext};
use ferromcp_testkit::Http;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

/// What the receiver was sent: (path, content type, body).
type Received = Arc<Mutex<Vec<(String, String, Vec<u8>)>>>;

/// An OTLP/HTTP receiver: answers 200 to every POST and keeps the bodies.
async fn receiver() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let received: Received = Arc::default();
    let kept = received.clone();
    tokio::spawn(async move {
        loop {
            let Ok((socket, _)) = listener.accept().await else {
                return;
            };
            let kept = kept.clone();
            tokio::spawn(async move {
                let (read, mut write) = socket.into_split();
                let mut reader = BufReader::new(read);
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).await.unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line.split(' ').nth(1).unwrap_or("").to_owned();
                    let (mut length, mut content_type) = (0, String::new());
                    loop {
                        let mut header = String::new();
                        reader.read_line(&mut header).await.unwrap();
                        let header = header.trim_end();
                        if header.is_empty() {
                            break;
                        }
                        let (name, value) = header.split_once(':').unwrap();
                        match name.to_ascii_lowercase().as_str() {
                            "content-length" => length = value.trim().parse().unwrap(),
                            "content-type" => content_type = value.trim().to_owned(),
                            _ => {}
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).await.unwrap();
                    kept.lock().unwrap().push((path, content_type, body));
                    write
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n")
                        .await
                        .unwrap();
                }
            });
        }
    });
    (url, received)
}

/// Every span the receiver got, as OTLP/JSON span objects.
fn spans(received: &Received) -> Vec<Value> {
    let mut out = Vec::new();
    for (path, _, body) in received.lock().unwrap().iter() {
        if path != "/v1/traces" {
            continue;
        }
        let doc: Value = serde_json::from_slice(body).unwrap();
        for rs in doc["resourceSpans"].as_array().unwrap() {
            for ss in rs["scopeSpans"].as_array().unwrap() {
                out.extend(ss["spans"].as_array().unwrap().iter().cloned());
            }
        }
    }
    out
}

fn attribute<'a>(span: &'a Value, key: &str) -> Option<&'a Value> {
    span["attributes"]
        .as_array()?
        .iter()
        .find(|a| a["key"] == key)
        .map(|a| &a["value"])
}

fn string_attribute(span: &Value, key: &str) -> Option<String> {
    attribute(span, key)?["stringValue"]
        .as_str()
        .map(str::to_owned)
}

fn server(seen: Arc<Mutex<Vec<Option<TraceContext>>>>) -> Server {
    let server = Server::new("traced", "1.0.0");
    server
        .add_tool(
            Tool::new("echo", json!({"type": "object"})),
            move |ctx: ferromcp::server::RequestContext, _args: Value| {
                // The handler runs under its server span: in the request's
                // meta and as the task's current context.
                seen.lock().unwrap().push(
                    ctx.meta()
                        .trace
                        .clone()
                        .filter(|t| Some(t) == telemetry::current().as_ref()),
                );
                async { Ok(ToolOutput::text("hi")) }
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("sulk", json!({"type": "object"})),
            |_ctx, _args: Value| async { Err::<ToolOutput, _>(HandlerError::Tool("no".into())) },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("stall", json!({"type": "object"})),
            |_ctx, _args: Value| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok(ToolOutput::text("late"))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("broken", json!({"type": "object"})),
            |_ctx, _args: Value| async {
                Err::<ToolOutput, _>(HandlerError::Protocol(McpError::internal("down")))
            },
        )
        .unwrap();
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_and_server_spans_are_one_trace_and_metrics_reach_the_collector() {
    let (url, received) = receiver().await;
    let mut config = OtlpConfig::new(&url, "telemetry-test");
    config.protocol = OtlpProtocol::Json;
    config.schedule_delay = Duration::from_millis(50);
    telemetry::install(Arc::new(OtlpExporter::start(config).unwrap()));

    let seen = Arc::default();
    let server = server(Arc::clone(&seen));
    let http = Http::start(server.clone()).await;
    let mut clients = vec![("memory", Client::in_memory(&server))];
    for (label, era) in [
        ("http 2026", EraPreference::Modern),
        ("http 2025", EraPreference::Legacy),
        ("http auto", EraPreference::Auto),
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

    for (label, client) in &clients {
        received.lock().unwrap().clear();
        seen.lock().unwrap().clear();
        // The application's own span: the client span's parent.
        let root = TraceContext::new_root();
        let result = telemetry::scope(root.clone(), client.call_tool("echo", json!({}))).await;
        assert!(result.is_ok(), "{label}: {result:?}");
        // An explicit parent in the call's options wins over the task's.
        let other_root = TraceContext::new_root();
        let options = CallOptions {
            trace: Some(other_root.clone()),
            ..CallOptions::default()
        };
        client
            .call_tool_with("sulk", json!({}), &options)
            .await
            .unwrap();
        let _ = client.call_tool("broken", json!({})).await;
        let _ = client.call_tool("missing", json!({})).await;
        // A call given up on: its server span ends as cancelled when the
        // request's future is dropped.
        let hasty = CallOptions {
            timeout: Some(Duration::from_millis(300)),
            ..CallOptions::default()
        };
        assert!(
            client
                .call_tool_with("stall", json!({}), &hasty)
                .await
                .is_err()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(telemetry::flush(Duration::from_secs(5)), "{label}: flush");

        let spans = spans(&received);
        let find = |name: &str, kind: u64| -> Value {
            spans
                .iter()
                .find(|s| s["name"] == name && s["kind"] == kind)
                .unwrap_or_else(|| panic!("{label}: no span {name:?} of kind {kind} in {spans:#?}"))
                .clone()
        };
        let (client_span, server_span) = (find("tools/call echo", 3), find("tools/call echo", 2));
        assert_eq!(client_span["traceId"], root.trace_id_hex(), "{label}");
        assert_eq!(client_span["parentSpanId"], root.span_id_hex(), "{label}");
        assert_eq!(server_span["traceId"], root.trace_id_hex(), "{label}");
        assert_eq!(
            server_span["parentSpanId"], client_span["spanId"],
            "{label}"
        );
        // The server span's parent is remote (Span.flags bit 9).
        assert_eq!(
            server_span["flags"].as_u64().unwrap() & 0x300,
            0x300,
            "{label}"
        );
        assert_eq!(
            client_span["flags"].as_u64().unwrap() & 0x300,
            0x100,
            "{label}"
        );
        for span in [&client_span, &server_span] {
            assert_eq!(
                string_attribute(span, "mcp.method.name").as_deref(),
                Some("tools/call")
            );
            assert_eq!(
                string_attribute(span, "gen_ai.tool.name").as_deref(),
                Some("echo")
            );
            assert_eq!(
                string_attribute(span, "gen_ai.operation.name").as_deref(),
                Some("execute_tool")
            );
            assert!(span.get("status").is_none(), "{label}: {span}");
        }
        assert!(string_attribute(&server_span, "jsonrpc.request.id").is_some());
        let transport = if label.starts_with("http") {
            "tcp"
        } else {
            "pipe"
        };
        assert_eq!(
            string_attribute(&server_span, "network.transport").as_deref(),
            Some(transport)
        );
        // The handler saw its server span as current and in its meta.
        let handler_saw = seen.lock().unwrap().clone();
        assert_eq!(handler_saw.len(), 1, "{label}");
        let handler_ctx = handler_saw[0]
            .clone()
            .expect("the handler's task runs under the server span");
        assert_eq!(handler_ctx.span_id_hex(), server_span["spanId"], "{label}");

        if *label == "http auto" {
            // The era probe is a call like the others: its server span is
            // its client span's child.
            let (probe, probed) = (find("server/discover", 3), find("server/discover", 2));
            assert_eq!(probed["parentSpanId"], probe["spanId"], "{label}");
            assert_eq!(probed["traceId"], probe["traceId"], "{label}");
        }
        let sulk_client = find("tools/call sulk", 3);
        assert_eq!(sulk_client["traceId"], other_root.trace_id_hex(), "{label}");
        for span in [sulk_client, find("tools/call sulk", 2)] {
            assert_eq!(
                string_attribute(&span, "error.type").as_deref(),
                Some("tool_error"),
                "{label}"
            );
            assert_eq!(span["status"]["code"], 2, "{label}");
        }
        for span in [find("tools/call broken", 3), find("tools/call broken", 2)] {
            assert_eq!(
                string_attribute(&span, "error.type").as_deref(),
                Some("-32603"),
                "{label}"
            );
            assert_eq!(span["status"]["message"], "down", "{label}");
        }
        let stalled = find("tools/call stall", 2);
        assert_eq!(
            string_attribute(&stalled, "error.type").as_deref(),
            Some("cancelled"),
            "{label}"
        );
        let gave_up = find("tools/call stall", 3);
        assert_eq!(
            string_attribute(&gave_up, "error.type").as_deref(),
            Some("timeout"),
            "{label}"
        );
        let missing = find("tools/call missing", 2);
        assert_eq!(
            string_attribute(&missing, "error.type").as_deref(),
            Some("-32602"),
            "{label}"
        );
        // A call made outside any span starts a trace of its own.
        assert_ne!(find("tools/call broken", 3)["traceId"], root.trace_id_hex());

        // Metrics: the duration histograms of both sides, by tool.
        let metrics: Vec<Value> = received
            .lock()
            .unwrap()
            .iter()
            .filter(|(path, _, _)| path == "/v1/metrics")
            .map(|(_, _, body)| serde_json::from_slice(body).unwrap())
            .collect();
        let last = metrics
            .last()
            .unwrap_or_else(|| panic!("{label}: no metrics"));
        let names: Vec<&str> = last["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["name"].as_str().unwrap())
            .collect();
        for name in [
            "mcp.client.operation.duration",
            "mcp.server.operation.duration",
            "mcp.server.active_requests",
        ] {
            assert!(names.contains(&name), "{label}: {names:?}");
        }
        let resource = &last["resourceMetrics"][0]["resource"]["attributes"];
        assert!(
            resource.to_string().contains("telemetry-test"),
            "{resource}"
        );
    }
    telemetry::uninstall();

    // Protobuf, the default encoding (what collectors take first): the
    // Python tests decode it field by field with the official
    // `opentelemetry-proto` package; here, that it is what is sent.
    received.lock().unwrap().clear();
    let mut config = OtlpConfig::new(&url, "telemetry-test");
    config.schedule_delay = Duration::from_millis(50);
    telemetry::install(Arc::new(OtlpExporter::start(config).unwrap()));
    clients[1].1.call_tool("echo", json!({})).await.unwrap();
    assert!(telemetry::flush(Duration::from_secs(5)));
    telemetry::uninstall();
    {
        let received = received.lock().unwrap();
        let (_, content_type, body) = received
            .iter()
            .find(|(path, _, _)| path == "/v1/traces")
            .expect("spans sent as protobuf");
        assert_eq!(content_type, "application/x-protobuf");
        assert_eq!(body[0], 0x0a, "ExportTraceServiceRequest.resource_spans");
        let needle = b"tools/call echo";
        assert!(body.windows(needle.len()).any(|w| w == needle));
    }

    // Off again: nothing is sent, and no trace context goes out. (The
    // dropped exporter's thread sends its last metrics as it stops.)
    tokio::time::sleep(Duration::from_millis(300)).await;
    received.lock().unwrap().clear();
    seen.lock().unwrap().clear();
    clients[1].1.call_tool("echo", json!({})).await.unwrap();
    assert_eq!(seen.lock().unwrap().clone(), vec![None]);
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(received.lock().unwrap().is_empty());
}
