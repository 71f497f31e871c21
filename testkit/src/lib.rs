//! Helpers shared by the server behaviour tests: building requests, an
//! in-memory stdio session, and a raw HTTP/1.1 client whose headers are
//! fully controlled (whole responses, or an SSE stream read event by event).
//!
//! One crate the test suites of the workspace depend on (the core's, the
//! CLI's, `ferromcp-tests`): a test names it `common` (`use
//! ferromcp_testkit as common;`). Its other modules: [`tls`] (a TLS server
//! with a test CA), [`oauth_mock`] (an authorization server), [`protected`]
//! (a protected server's tools).

pub mod oauth_mock;
pub mod protected;
pub mod tls;

use ferromcp::server::{Server, ServerOptions};
use ferromcp::transport::http::{HttpOptions, HttpServer};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

/// The protocol revision under test.
pub const VERSION: &str = "2026-07-28";

/// How long any single await on the server may take before the test fails.
/// Generous: a loaded 2-core CI box must not make tests flaky.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// How long to watch for a message that must NOT arrive. Only used after
/// the server had every chance to send it (see each use).
pub const QUIET: Duration = Duration::from_millis(150);

/// The required per-request `_meta`, with no client capabilities.
pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"}
    })
}

/// `_meta` declaring every client capability an input request may need.
pub fn meta_all_caps() -> Value {
    meta_with(json!({
        "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}, "sampling": {}, "roots": {"listChanged": true}
        }
    }))
}

/// The required `_meta` with `extra` keys added or replaced.
pub fn meta_with(extra: Value) -> Value {
    let mut m = meta();
    if let (Some(m), Value::Object(extra)) = (m.as_object_mut(), extra) {
        m.extend(extra);
    }
    m
}

/// A request with the default `_meta`.
pub fn request(id: impl Into<Value>, method: &str, params: Value) -> Value {
    request_with_meta(id, method, params, meta())
}

/// A request with an explicit `_meta`.
pub fn request_with_meta(
    id: impl Into<Value>,
    method: &str,
    mut params: Value,
    meta: Value,
) -> Value {
    params["_meta"] = meta;
    json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params})
}

/// A `notifications/cancelled` for request `id` (stdio only).
pub fn cancelled(id: impl Into<Value>) -> Value {
    json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id.into(), "reason": "test"}})
}

/// An empty server with a fixed identity and the given options.
pub fn server_with(options: ServerOptions) -> Server {
    Server::with_options(
        ferromcp::protocol::Implementation::new("test-server", "9.9.9"),
        options,
    )
}

/// Whether a message is the response (result or error) to request `id`.
pub fn is_response_to(message: &Value, id: &Value) -> bool {
    message.get("id") == Some(id)
        && (message.get("result").is_some() || message.get("error").is_some())
}

/// Set when dropped: shows a handler's future was dropped (cancelled).
#[derive(Clone, Default)]
pub struct Flag(Arc<AtomicBool>);

impl Flag {
    pub fn set(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }

    /// A guard that sets this flag when it is dropped.
    pub fn on_drop(&self) -> SetOnDrop {
        SetOnDrop(self.clone())
    }

    /// Waits (up to [`TIMEOUT`]) for the flag; panics with `what` if it
    /// never comes.
    pub async fn wait(&self, what: &str) {
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        while !self.is_set() {
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for: {what}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

pub struct SetOnDrop(Flag);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.set();
    }
}

// ---- stdio ----

/// A stdio session over an in-memory pipe.
pub struct Stdio {
    pub to_server: tokio::io::DuplexStream,
    pub from_server: BufReader<tokio::io::DuplexStream>,
    pub task: tokio::task::JoinHandle<Result<(), ferromcp::Error>>,
}

impl Stdio {
    pub fn start(server: Server) -> Stdio {
        let (to_server, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, from_server) = tokio::io::duplex(1 << 20);
        let task = tokio::spawn(ferromcp::transport::stdio::serve(
            server, server_in, server_out,
        ));
        Stdio {
            to_server,
            from_server: BufReader::new(from_server),
            task,
        }
    }

    pub async fn send_raw(&mut self, line: &str) {
        self.to_server.write_all(line.as_bytes()).await.unwrap();
        self.to_server.write_all(b"\n").await.unwrap();
    }

    pub async fn send(&mut self, message: &Value) {
        self.send_raw(&message.to_string()).await;
    }

    /// The next message; panics if none comes within [`TIMEOUT`].
    pub async fn recv(&mut self) -> Value {
        self.recv_within(TIMEOUT)
            .await
            .expect("the server sent a message in time")
    }

    /// The next message, or `None` if nothing arrives within `wait` (or the
    /// stream ended).
    pub async fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        let mut line = String::new();
        match tokio::time::timeout(wait, self.from_server.read_line(&mut line)).await {
            Err(_) | Ok(Ok(0)) => None,
            Ok(read) => {
                read.unwrap();
                Some(
                    serde_json::from_str(&line)
                        .unwrap_or_else(|e| panic!("not JSON ({e}): {line:?}")),
                )
            }
        }
    }

    /// Sends a request and returns the next message.
    pub async fn call(&mut self, message: Value) -> Value {
        self.send(&message).await;
        self.recv().await
    }

    /// Reads until the response to `id`; returns it and every message
    /// received before it, in order.
    pub async fn until_response(&mut self, id: impl Into<Value>) -> (Vec<Value>, Value) {
        let id = id.into();
        let mut before = Vec::new();
        loop {
            let message = self.recv().await;
            if is_response_to(&message, &id) {
                return (before, message);
            }
            before.push(message);
        }
    }

    /// Sends a request and reads until its response (see
    /// [`Stdio::until_response`]).
    pub async fn exchange(&mut self, message: Value) -> (Vec<Value>, Value) {
        let id = message["id"].clone();
        self.send(&message).await;
        self.until_response(id).await
    }

    /// Closes the server's input and returns everything it writes until it
    /// exits.
    pub async fn finish(self) -> String {
        let Stdio {
            to_server,
            mut from_server,
            task,
        } = self;
        drop(to_server);
        let mut rest = String::new();
        tokio::time::timeout(TIMEOUT, from_server.read_to_string(&mut rest))
            .await
            .expect("the server closed its output in time")
            .unwrap();
        tokio::time::timeout(TIMEOUT, task)
            .await
            .expect("the server exited in time")
            .unwrap()
            .unwrap();
        rest
    }
}

// ---- Streamable HTTP ----

/// A running HTTP server on a free loopback port; shut down on drop.
pub struct Http {
    pub port: u16,
    options: HttpOptions,
}

impl Http {
    pub async fn start(server: Server) -> Http {
        Http::start_with(server, |_| {}).await
    }

    pub async fn start_with(server: Server, configure: impl FnOnce(&mut HttpOptions)) -> Http {
        let mut options = HttpOptions::localhost(0);
        configure(&mut options);
        let bound = HttpServer::bind(server, options.clone()).await.unwrap();
        let port = bound.local_addr().unwrap().port();
        tokio::spawn(bound.run());
        Http { port, options }
    }

    /// The MCP endpoint's URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Stops accepting and ends open subscriptions gracefully.
    pub fn shutdown(&self) {
        self.options.shutdown.cancel();
    }

    /// POSTs a request with the standard headers derived from its body.
    pub async fn post(&self, body: &Value) -> RawResponse {
        raw_http(self.port, "POST", &headers_for(body), &body.to_string()).await
    }

    /// POSTs a request with the standard headers plus `extra`.
    pub async fn post_with(&self, body: &Value, extra: &[(&str, String)]) -> RawResponse {
        let mut headers = headers_for(body);
        headers.extend(extra.iter().map(|(n, v)| (*n, v.clone())));
        raw_http(self.port, "POST", &headers, &body.to_string()).await
    }

    /// POSTs a request and returns the response as a stream.
    pub async fn open(&self, body: &Value) -> HttpStream {
        HttpStream::open(self.port, &headers_for(body), &body.to_string()).await
    }
}

impl Drop for Http {
    fn drop(&mut self) {
        self.options.shutdown.cancel();
    }
}

/// The standard headers for a request body: version, method, and `Mcp-Name`
/// for `tools/call`, `prompts/get` (name) and `resources/read` (uri). Plain
/// values only; tests of the base64 form set the header themselves.
pub fn headers_for(body: &Value) -> Vec<(&'static str, String)> {
    let method = body["method"].as_str().unwrap_or_default();
    let name = match method {
        "tools/call" | "prompts/get" => body["params"]["name"].as_str(),
        "resources/read" => body["params"]["uri"].as_str(),
        _ => None,
    };
    mcp_headers(method, name)
}

pub fn mcp_headers(method: &str, name: Option<&str>) -> Vec<(&'static str, String)> {
    let mut h = vec![
        ("Content-Type", "application/json".to_owned()),
        ("Accept", "application/json, text/event-stream".to_owned()),
        ("MCP-Protocol-Version", VERSION.to_owned()),
        ("Mcp-Method", method.to_owned()),
    ];
    if let Some(name) = name {
        h.push(("Mcp-Name", name.to_owned()));
    }
    h
}

pub struct RawResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawResponse {
    pub fn header(&self, name: &str) -> Option<&str> {
        header_of(&self.headers, name)
    }

    /// The body as one JSON value (a plain JSON response).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// The JSON-RPC messages of an SSE body, in order.
    pub fn sse_messages(&self) -> Vec<Value> {
        sse_items(&self.body)
            .into_iter()
            .filter_map(|item| match item {
                SseItem::Message(m) => Some(m),
                SseItem::Comment => None,
            })
            .collect()
    }

    /// The response message whichever way it came: the JSON body, or the
    /// last message of an SSE body.
    pub fn response(&self) -> Value {
        if self.header("content-type") == Some("text/event-stream") {
            self.sse_messages()
                .pop()
                .expect("an SSE body with a response")
        } else {
            self.json()
        }
    }
}

fn header_of<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Sends one HTTP/1.1 request with exactly the given headers (plus `Host`
/// and `Content-Length` unless given) and reads the whole response.
pub async fn raw_http(
    port: u16,
    method: &str,
    headers: &[(&str, String)],
    body: &str,
) -> RawResponse {
    let stream = HttpStream::open_with(port, method, headers, body).await;
    let status = stream.status;
    let headers = stream.headers.clone();
    let body = stream.body_to_end().await;
    RawResponse {
        status,
        headers,
        body,
    }
}

/// One item of an SSE stream.
#[derive(Debug, Clone, PartialEq)]
pub enum SseItem {
    /// A comment-only block (a keep-alive).
    Comment,
    /// An event carrying one JSON-RPC message.
    Message(Value),
}

/// Splits an SSE body into items (complete blocks only).
pub fn sse_items(body: &str) -> Vec<SseItem> {
    let mut rest = body.replace("\r\n", "\n");
    let mut items = Vec::new();
    while let Some((item, remaining)) = take_sse_block(&rest) {
        items.extend(item);
        rest = remaining;
    }
    items
}

/// Takes the first complete block (ended by a blank line) off `text`.
fn take_sse_block(text: &str) -> Option<(Option<SseItem>, String)> {
    let end = text.find("\n\n")?;
    let block = &text[..end];
    let rest = text[end + 2..].to_owned();
    let data: Vec<&str> = block
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(|d| d.strip_prefix(' ').unwrap_or(d))
        .collect();
    let item = if !data.is_empty() {
        let joined = data.join("\n");
        Some(SseItem::Message(
            serde_json::from_str(&joined)
                .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {joined}")),
        ))
    } else if block.lines().all(|l| l.starts_with(':')) && !block.is_empty() {
        Some(SseItem::Comment)
    } else {
        None
    };
    Some((item, rest))
}

/// An HTTP/1.1 response read incrementally (chunked or sized body), for
/// SSE streams that stay open. Dropping it closes the connection.
pub struct HttpStream {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    reader: BufReader<TcpStream>,
    chunked: bool,
    /// Bytes left of a sized body.
    remaining: usize,
    /// Decoded body text not yet consumed as SSE items.
    pending: String,
    ended: bool,
}

impl HttpStream {
    /// POSTs and reads the status line and headers.
    pub async fn open(port: u16, headers: &[(&str, String)], body: &str) -> HttpStream {
        HttpStream::open_with(port, "POST", headers, body).await
    }

    pub async fn open_with(
        port: u16,
        method: &str,
        headers: &[(&str, String)],
        body: &str,
    ) -> HttpStream {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let mut head = format!("{method} /mcp HTTP/1.1\r\nConnection: close\r\n");
        if !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        {
            head.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
            head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).await.unwrap();
        stream.write_all(body.as_bytes()).await.unwrap();
        let mut reader = BufReader::new(stream);
        let mut status_line = String::new();
        read_line(&mut reader, &mut status_line).await;
        let status = status_line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
        let mut headers = Vec::new();
        loop {
            let mut line = String::new();
            read_line(&mut reader, &mut line).await;
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((n, v)) = line.split_once(':') {
                headers.push((n.trim().to_owned(), v.trim().to_owned()));
            }
        }
        let chunked =
            header_of(&headers, "transfer-encoding").is_some_and(|v| v.contains("chunked"));
        let remaining = header_of(&headers, "content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        HttpStream {
            status,
            headers,
            reader,
            chunked,
            remaining,
            pending: String::new(),
            ended: false,
        }
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        header_of(&self.headers, name)
    }

    /// Reads the next piece of the body into `pending`; false at its end.
    async fn fill(&mut self) -> bool {
        if self.ended {
            return false;
        }
        let mut data = Vec::new();
        if self.chunked {
            let mut size_line = String::new();
            read_line(&mut self.reader, &mut size_line).await;
            let size = usize::from_str_radix(size_line.trim(), 16)
                .unwrap_or_else(|_| panic!("bad chunk size line {size_line:?}"));
            if size == 0 {
                self.ended = true;
                return false;
            }
            data.resize(size + 2, 0);
            within(self.reader.read_exact(&mut data)).await.unwrap();
            data.truncate(size);
        } else {
            if self.remaining == 0 {
                self.ended = true;
                return false;
            }
            data.resize(self.remaining, 0);
            within(self.reader.read_exact(&mut data)).await.unwrap();
            self.remaining = 0;
        }
        self.pending
            .push_str(&String::from_utf8(data).expect("UTF-8 body"));
        true
    }

    /// The next SSE item, or `None` once the body ended.
    pub async fn next_item(&mut self) -> Option<SseItem> {
        loop {
            self.pending = self.pending.replace("\r\n", "\n");
            while let Some((item, rest)) = take_sse_block(&self.pending) {
                self.pending = rest;
                if item.is_some() {
                    return item;
                }
            }
            if !self.fill().await {
                return None;
            }
        }
    }

    /// The next JSON-RPC message, skipping keep-alive comments.
    pub async fn next_message(&mut self) -> Option<Value> {
        loop {
            match self.next_item().await? {
                SseItem::Message(m) => return Some(m),
                SseItem::Comment => continue,
            }
        }
    }

    /// Reads the rest of the body.
    pub async fn body_to_end(mut self) -> String {
        while self.fill().await {}
        self.pending
    }
}

async fn read_line(reader: &mut BufReader<TcpStream>, line: &mut String) {
    let n = within(reader.read_line(line)).await.unwrap();
    assert!(n > 0, "the server closed the connection unexpectedly");
}

async fn within<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(TIMEOUT, future)
        .await
        .expect("the server answered in time")
}

/// Reads one whole HTTP/1.1 response (status and `Content-Length` body)
/// from a raw connection.
pub async fn read_response(stream: &mut TcpStream) -> (u16, String) {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().unwrap())
                .unwrap_or(0);
            if data.len() >= end + 4 + length {
                let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
                let body = String::from_utf8_lossy(&data[end + 4..end + 4 + length]).into_owned();
                return (status, body);
            }
        }
        let n = tokio::time::timeout(TIMEOUT, stream.read(&mut buf))
            .await
            .expect("a response in time")
            .unwrap();
        assert!(n > 0, "the connection closed before a whole response");
        data.extend_from_slice(&buf[..n]);
    }
}
