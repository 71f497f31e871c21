//! 2025-11-25 sessions over Streamable HTTP under hostile or careless
//! clients (issue 11 items 4 and 9): sessions opened and never used expire
//! soon and make room for real clients, one address cannot hold more than
//! its share, and a cancelled request gets no response at all.

use ferromcp_testkit as common;

use common::{Flag, HttpStream, TIMEOUT, is_response_to};
use ferromcp::legacy::SessionLimits;
use ferromcp::protocol::Tool;
use ferromcp::server::{LoggingLevel, RequestContext, Server, ToolOutput};
use ferromcp::transport::http::{HttpOptions, HttpServer};
use serde_json::{Value, json};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpSocket;

const LEGACY: &str = "2025-11-25";

/// A server whose `wait` tool runs until cancelled (`started` is set when
/// it runs, `dropped` when its future is dropped), after first logging a
/// message when called with `{"log": true}` (which turns the answer into
/// an SSE stream).
fn server(started: &Flag, dropped: &Flag) -> Server {
    let server = Server::new("legacy-http", "1.0.0");
    let (started, dropped) = (started.clone(), dropped.clone());
    server
        .add_tool(
            Tool::new("wait", json!({"type": "object"})),
            move |ctx: RequestContext, args: Value| {
                let guard = dropped.on_drop();
                let started = started.clone();
                async move {
                    let _guard = guard;
                    if args["log"] == true {
                        ctx.log(LoggingLevel::Info, json!("waiting"), None);
                    }
                    started.set();
                    ctx.cancelled().await;
                    Ok(ToolOutput::text("cancelled"))
                }
            },
        )
        .unwrap();
    server
}

/// A served endpoint; shut down on drop.
struct Served {
    port: u16,
    shutdown: tokio_util::sync::CancellationToken,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn serve(server: Server, limits: SessionLimits) -> Served {
    let options = HttpOptions {
        session_limits: limits,
        ..HttpOptions::localhost(0)
    };
    let shutdown = options.shutdown.clone();
    let bound = HttpServer::bind(server, options).await.unwrap();
    let port = bound.local_addr().unwrap().port();
    tokio::spawn(bound.run());
    Served { port, shutdown }
}

fn headers(session: Option<&str>) -> Vec<(&'static str, String)> {
    let mut h = vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
        ("MCP-Protocol-Version", LEGACY.to_owned()),
    ];
    if let Some(session) = session {
        h.push(("Mcp-Session-Id", session.to_owned()));
    }
    h
}

struct Reply {
    status: u16,
    session: Option<String>,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// POSTs `body` from the loopback address `source` (127.0.0.x: each is a
/// different peer to the server) and reads the whole (sized) response.
async fn post_from(port: u16, source: Ipv4Addr, session: Option<&str>, body: &Value) -> Reply {
    let socket = TcpSocket::new_v4().unwrap();
    socket.bind(SocketAddr::new(IpAddr::V4(source), 0)).unwrap();
    let mut stream = socket
        .connect(SocketAddr::from(([127, 0, 0, 1], port)))
        .await
        .unwrap();
    let body = body.to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers(session) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    stream
        .write_all(format!("{head}\r\n{body}").as_bytes())
        .await
        .unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(TIMEOUT, stream.read_to_end(&mut raw))
        .await
        .expect("a response in time")
        .unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").expect("a response head");
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let session = head.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_owned())
    });
    Reply {
        status,
        session,
        body: body.to_owned(),
    }
}

const HOME: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);

fn initialize_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"}
    }})
}

fn initialized() -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
}

fn ping(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "ping"})
}

/// Opens a session from `source` and returns its id, without continuing
/// it (the session stays half-open).
async fn half_open(port: u16, source: Ipv4Addr) -> String {
    let reply = post_from(port, source, None, &initialize_request()).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.session.expect("a session id")
}

/// Opens a session and continues it as a proper client does.
async fn proper(port: u16, source: Ipv4Addr) -> String {
    let session = half_open(port, source).await;
    let note = post_from(port, source, Some(&session), &initialized()).await;
    assert_eq!(note.status, 202, "{}", note.body);
    session
}

async fn pings(port: u16, session: &str) -> u16 {
    post_from(port, HOME, Some(session), &ping(7)).await.status
}

#[tokio::test]
async fn a_table_full_of_half_open_sessions_still_admits_a_proper_client() {
    let served = serve(
        Server::new("legacy-http", "1.0.0"),
        SessionLimits {
            max_sessions: 3,
            max_sessions_per_peer: 100,
            ..SessionLimits::default()
        },
    )
    .await;
    let established = proper(served.port, HOME).await;
    let mut abandoned = Vec::new();
    for _ in 0..2 {
        abandoned.push(half_open(served.port, HOME).await);
    }
    // the table is full: a newcomer takes the oldest half-open one's place
    let newcomer = proper(served.port, HOME).await;
    assert_eq!(pings(served.port, &newcomer).await, 200);
    assert_eq!(pings(served.port, &established).await, 200);
    assert_eq!(pings(served.port, &abandoned[0]).await, 404);
    assert_eq!(pings(served.port, &abandoned[1]).await, 200);
}

#[tokio::test]
async fn sessions_per_address_are_capped_with_429_and_a_json_rpc_error() {
    let served = serve(
        Server::new("legacy-http", "1.0.0"),
        SessionLimits {
            max_sessions_per_peer: 2,
            ..SessionLimits::default()
        },
    )
    .await;
    let first = proper(served.port, HOME).await;
    proper(served.port, HOME).await;
    let refused = post_from(served.port, HOME, None, &initialize_request()).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert!(refused.session.is_none());
    let error = refused.json();
    assert_eq!(error["id"], 1, "{error}");
    assert_eq!(error["error"]["code"], -32603, "{error}");
    assert!(
        error["error"]["message"]
            .as_str()
            .unwrap()
            .contains("from this address"),
        "{error}"
    );
    // another address is not affected
    proper(served.port, Ipv4Addr::new(127, 0, 0, 2)).await;
    // ending a session frees its address's slot
    let socket_delete = common::raw_http(
        served.port,
        "DELETE",
        &[("Mcp-Session-Id", first.clone())],
        "",
    )
    .await;
    assert_eq!(socket_delete.status, 200);
    proper(served.port, HOME).await;
}

#[tokio::test]
async fn half_open_sessions_expire_after_the_half_open_timeout() {
    let served = serve(
        Server::new("legacy-http", "1.0.0"),
        SessionLimits {
            half_open_timeout: Duration::from_millis(100),
            ..SessionLimits::default()
        },
    )
    .await;
    let abandoned = half_open(served.port, HOME).await;
    let continued = proper(served.port, HOME).await;
    // waiting out the timeout (not a speed assertion)
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(pings(served.port, &abandoned).await, 404);
    assert_eq!(pings(served.port, &continued).await, 200);
}

/// Starts `tools/call wait` (id 2) in `session`, cancels it once it runs,
/// and returns every message its response carried.
async fn cancel_a_running_call(
    port: u16,
    session: &str,
    args: Value,
    started: &Flag,
) -> Vec<Value> {
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "wait", "arguments": args}});
    let headers = headers(Some(session));
    let call_task = tokio::spawn(async move {
        let stream = HttpStream::open_with(port, "POST", &headers, &call.to_string()).await;
        let is_sse = stream.header("content-type") == Some("text/event-stream");
        let status = stream.status;
        (status, is_sse, stream.body_to_end().await)
    });
    started.wait("the call runs").await;
    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 2, "reason": "test"}});
    let accepted = post_from(port, HOME, Some(session), &cancel).await;
    assert_eq!(accepted.status, 202, "{}", accepted.body);
    let (status, is_sse, body) = tokio::time::timeout(TIMEOUT, call_task)
        .await
        .expect("the cancelled call's response ends")
        .unwrap();
    assert_eq!(status, 200, "{body}");
    if is_sse {
        sse_messages(&body)
    } else {
        vec![serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}"))]
    }
}

/// The JSON-RPC messages of a legacy SSE body, skipping the priming event
/// (an id and empty data) and comments.
fn sse_messages(body: &str) -> Vec<Value> {
    body.replace("\r\n", "\n")
        .split("\n\n")
        .filter_map(|event| {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .collect();
            let data = data.join("\n");
            (!data.is_empty())
                .then(|| serde_json::from_str(&data).unwrap_or_else(|e| panic!("{e}: {data}")))
        })
        .collect()
}

// 2025-11-25 basic/utilities/cancellation.mdx: the receiver stops
// processing the cancelled request and sends no response for it
#[tokio::test]
async fn a_cancelled_legacy_http_request_is_stopped_and_gets_no_response() {
    let (started, dropped) = (Flag::default(), Flag::default());
    let served = serve(server(&started, &dropped), SessionLimits::default()).await;
    let session = proper(served.port, HOME).await;
    let messages = cancel_a_running_call(served.port, &session, json!({}), &started).await;
    assert!(
        !messages.iter().any(|m| is_response_to(m, &json!(2))),
        "a response to the cancelled request: {messages:?}"
    );
    dropped.wait("the cancelled handler is stopped").await;
    // the session goes on
    assert_eq!(pings(served.port, &session).await, 200);
}

#[tokio::test]
async fn a_cancelled_legacy_http_request_already_streaming_ends_its_stream_without_a_response() {
    let (started, dropped) = (Flag::default(), Flag::default());
    let served = serve(server(&started, &dropped), SessionLimits::default()).await;
    let session = proper(served.port, HOME).await;
    let messages =
        cancel_a_running_call(served.port, &session, json!({"log": true}), &started).await;
    assert!(
        messages
            .iter()
            .any(|m| m["method"] == "notifications/message"),
        "the stream carried the log message: {messages:?}"
    );
    assert!(
        !messages.iter().any(|m| is_response_to(m, &json!(2))),
        "a response to the cancelled request: {messages:?}"
    );
    dropped.wait("the cancelled handler is stopped").await;
}
