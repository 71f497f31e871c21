//! The compatibility matrix (spec 2026-07-28: basic/versioning.mdx,
//! "Compatibility Matrix") for the rows ferromcp takes part in, over stdio and
//! Streamable HTTP: dual-era client with modern and legacy servers, legacy
//! client with the dual-era server, modern-only client with a legacy server.

use ferromcp::client::{Client, ClientOptions, EraPreference};
use ferromcp::protocol::{Resource, Tool};
use ferromcp::server::{
    InputKind, LoggingLevel, RequestContext, ResourceOutput, Server, ToolOutput,
};
use ferromcp::transport::http::{HttpOptions, HttpServer};
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_util::sync::CancellationToken;

fn dual_era_server() -> Server {
    let server = Server::new("dual", "1.0.0");
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
            Tool::new("ask", json!({"type": "object"})),
            |ctx: RequestContext, _args| async move {
                ctx.log(LoggingLevel::Info, json!("asking"), None);
                ctx.progress(1.0, Some(2.0), None);
                let answer = ctx
                    .ask(
                        Some("name"),
                        InputKind::Elicitation,
                        json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
                    )
                    .await?;
                Ok(ToolOutput::text(format!("hi {}", answer["content"]["name"].as_str().unwrap_or(""))))
            },
        )
        .unwrap();
    server
        .add_resource(Resource::new("mem://r", "r"), |_ctx, _req| async {
            Ok(ResourceOutput::Text("content".into()))
        })
        .unwrap();
    server
}

fn options(era: EraPreference, notes: Arc<Mutex<Vec<String>>>) -> ClientOptions {
    let mut options = ClientOptions {
        era,
        probe_timeout: Duration::from_millis(500),
        ..ClientOptions::default()
    }
    .on_elicitation(|_params| async {
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    });
    options.on_notification = Some(Arc::new(move |method: &str, _params: &Value| {
        notes.lock().unwrap().push(method.to_owned());
    }));
    options
}

struct Served {
    client: Client,
    _shutdown: Option<Guard>,
}

struct Guard(CancellationToken);
impl Drop for Guard {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

async fn over_stdio(server: Server, options: ClientOptions) -> Served {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (sr, sw) = tokio::io::split(server_io);
    tokio::spawn(ferromcp::transport::stdio::serve(server, sr, sw));
    let (cr, cw) = tokio::io::split(client_io);
    Served {
        client: Client::connect_stream(cr, cw, options),
        _shutdown: None,
    }
}

async fn http_url(server: Server) -> (String, Guard) {
    let options = HttpOptions::localhost(0);
    let guard = Guard(options.shutdown.clone());
    let bound = HttpServer::bind(server, options).await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        bound.local_addr().unwrap().port()
    );
    tokio::spawn(bound.run());
    (url, guard)
}

async fn over_http(server: Server, options: ClientOptions) -> Served {
    let (url, guard) = http_url(server).await;
    Served {
        client: Client::connect_http_with(&url, options).await.unwrap(),
        _shutdown: Some(guard),
    }
}

async fn exercise(client: &Client, label: &str) {
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 2, "{label}");
    let echoed = client
        .call_tool("echo", json!({"text": "x"}))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&echoed.content).unwrap()[0]["text"],
        "x",
        "{label}"
    );
    let asked = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(
        serde_json::to_value(&asked.content).unwrap()[0]["text"],
        "hi Ada",
        "{label}"
    );
    let read = client.read_resource("mem://r").await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.contents).unwrap()[0]["text"],
        "content",
        "{label}"
    );
}

#[tokio::test]
async fn dual_era_client_with_the_server_stays_modern() {
    for transport in ["stdio", "http"] {
        let notes = Arc::default();
        let served = match transport {
            "stdio" => over_stdio(dual_era_server(), options(EraPreference::Auto, notes)).await,
            _ => over_http(dual_era_server(), options(EraPreference::Auto, notes)).await,
        };
        exercise(&served.client, transport).await;
        assert_eq!(served.client.is_legacy(), Some(false), "{transport}");
    }
}

#[tokio::test]
async fn legacy_client_with_the_dual_era_server_gets_sessions_and_live_requests() {
    for transport in ["stdio", "http"] {
        let notes: Arc<Mutex<Vec<String>>> = Arc::default();
        let server = dual_era_server();
        let served = match transport {
            "stdio" => {
                over_stdio(
                    server.clone(),
                    options(EraPreference::Legacy, notes.clone()),
                )
                .await
            }
            _ => {
                over_http(
                    server.clone(),
                    options(EraPreference::Legacy, notes.clone()),
                )
                .await
            }
        };
        exercise(&served.client, transport).await;
        assert_eq!(served.client.is_legacy(), Some(true), "{transport}");
        // list_changed reaches the session outside any request (stdout, or
        // the session's GET stream)
        server
            .add_tool(
                Tool::new("late", json!({"type": "object"})),
                |_ctx, _args| async { Ok(ToolOutput::text("late")) },
            )
            .unwrap();
        for _ in 0..200 {
            if notes
                .lock()
                .unwrap()
                .iter()
                .any(|m| m == "notifications/tools/list_changed")
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(
            notes
                .lock()
                .unwrap()
                .iter()
                .any(|m| m == "notifications/tools/list_changed"),
            "{transport}: {:?}",
            notes.lock().unwrap()
        );
        let pinged = served.client.request("ping", Map::new()).await.unwrap();
        assert_eq!(pinged, json!({}));
        // results carry none of the 2026-07-28 fields
        let listed = served
            .client
            .request("tools/list", Map::new())
            .await
            .unwrap();
        assert!(
            listed.get("resultType").is_none() && listed.get("ttlMs").is_none(),
            "{listed}"
        );
    }
}

#[tokio::test]
async fn legacy_http_sessions_end_with_delete_and_are_then_unknown() {
    let (url, _guard) = http_url(dual_era_server()).await;
    let port: u16 = url
        .rsplit(':')
        .next()
        .unwrap()
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let post = |session: Option<String>, body: Value| {
        let url = url.clone();
        async move {
            let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            let body = body.to_string();
            let mut head = format!(
                "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
                body.len()
            );
            if let Some(s) = session {
                head.push_str(&format!("Mcp-Session-Id: {s}\r\n"));
            }
            head.push_str("\r\n");
            stream.write_all(head.as_bytes()).await.unwrap();
            stream.write_all(body.as_bytes()).await.unwrap();
            let mut text = String::new();
            tokio::io::AsyncReadExt::read_to_string(&mut stream, &mut text)
                .await
                .unwrap();
            let _ = url;
            text
        }
    };
    let init = post(
        None,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}
        }}),
    )
    .await;
    assert!(init.starts_with("HTTP/1.1 200"), "{init}");
    assert!(
        init.contains("\"protocolVersion\":\"2025-03-26\""),
        "negotiates down: {init}"
    );
    let session = init
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("session id header")
        .trim()
        .to_owned();
    assert!(session.bytes().all(|b| (0x21..=0x7e).contains(&b)));
    let ping = post(
        Some(session.clone()),
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}),
    )
    .await;
    assert!(ping.starts_with("HTTP/1.1 200"), "{ping}");
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream
        .write_all(format!("DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nMcp-Session-Id: {session}\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut deleted = String::new();
    tokio::io::AsyncReadExt::read_to_string(&mut stream, &mut deleted)
        .await
        .unwrap();
    assert!(deleted.starts_with("HTTP/1.1 200"), "{deleted}");
    let after = post(
        Some(session),
        json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}),
    )
    .await;
    assert!(after.starts_with("HTTP/1.1 404"), "{after}");
    let unknown = post(
        Some("nope".into()),
        json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
    )
    .await;
    assert!(unknown.starts_with("HTTP/1.1 404"), "{unknown}");
}

/// A legacy-only stdio server: rejects anything before `initialize` with an
/// implementation-defined error (or stays silent), then answers tools/list.
async fn legacy_only_stdio(
    silent_before_initialize: bool,
) -> (
    tokio::io::ReadHalf<tokio::io::DuplexStream>,
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
) {
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        let (r, mut w) = tokio::io::split(server_io);
        let mut lines = BufReader::new(r).lines();
        let mut initialized = false;
        while let Ok(Some(line)) = lines.next_line().await {
            let msg: Value = serde_json::from_str(&line).unwrap();
            let Some(id) = msg.get("id").cloned() else {
                continue;
            };
            let reply = match msg["method"].as_str().unwrap_or("") {
                "initialize" => {
                    initialized = true;
                    json!({"jsonrpc": "2.0", "id": id, "result": {
                        "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                        "serverInfo": {"name": "legacy", "version": "0"}
                    }})
                }
                _ if !initialized && silent_before_initialize => continue,
                _ if !initialized => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "not initialized"}})
                }
                "tools/list" => {
                    json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [{"name": "old", "inputSchema": {"type": "object"}}]}})
                }
                _ => {
                    json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "nope"}})
                }
            };
            w.write_all(format!("{reply}\n").as_bytes()).await.unwrap();
        }
    });
    tokio::io::split(client_io)
}

#[tokio::test]
async fn dual_era_client_falls_back_to_initialize_with_a_legacy_stdio_server() {
    for silent in [false, true] {
        let (r, w) = legacy_only_stdio(silent).await;
        let client = Client::connect_stream(r, w, options(EraPreference::Auto, Arc::default()));
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(tools[0].name, "old", "silent={silent}");
        assert_eq!(client.is_legacy(), Some(true));
    }
}

#[tokio::test]
async fn modern_only_client_fails_deterministically_with_a_legacy_server() {
    let (r, w) = legacy_only_stdio(false).await;
    let client = Client::connect_stream(r, w, options(EraPreference::Modern, Arc::default()));
    assert!(client.list_all_tools().await.is_err());
}

// client/elicitation.mdx "Servers SHOULD validate received data matches the requested schema",
// basic/patterns/mrtr.mdx "Error Handling": an elicitation answer that does not match the
// requestedSchema gets the same answer in both eras, over both transports: -32602 naming the
// field. Before, 2026-07-28 asked again with the identical InputRequiredResult forever, and
// 2025-11-25 ran the handler with the bad answer.
#[tokio::test]
async fn an_elicitation_answer_that_does_not_match_the_schema_is_invalid_params_in_both_eras() {
    for era in [EraPreference::Modern, EraPreference::Legacy] {
        for transport in ["stdio", "http"] {
            let label = format!("{era:?} over {transport}");
            let mut options = options(era, Arc::default()).on_elicitation(|_params| async {
                Ok(json!({"action": "accept", "content": {"name": 5}}))
            });
            options.max_input_rounds = 3;
            let served = match transport {
                "stdio" => over_stdio(dual_era_server(), options).await,
                _ => over_http(dual_era_server(), options).await,
            };
            let outcome = tokio::time::timeout(
                Duration::from_secs(10),
                served.client.call_tool("ask", json!({})),
            )
            .await
            .unwrap_or_else(|_| panic!("{label}: no answer"));
            let Err(ferromcp::Error::Mcp(error)) = outcome else {
                panic!("{label}: {outcome:?}");
            };
            assert_eq!(error.code, -32602, "{label}: {error:?}");
            assert_eq!(
                error.message,
                "elicitation response does not match requestedSchema: field \"name\": expected string, got 5",
                "{label}"
            );
        }
    }
}
