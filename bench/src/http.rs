//! A lean HTTP/1.1 keep-alive client for Streamable HTTP MCP servers.
//!
//! The load generator must cost far less per request than the fastest
//! server it measures, so each connection owns one pre-serialised request
//! (headers and body) that is patched in place, one read buffer reused for
//! every response, and the response head is parsed with `httparse` without
//! allocating. Bodies come back with Content-Length, chunked, or until the
//! connection closes; SSE answers (`text/event-stream`) are split into events.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::stats::LoadResult;
use crate::wire::{self, AnyReply, CallTemplate, Verdict, Wire};

/// Where the MCP endpoint is.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub addr: SocketAddr,
    pub path: String,
}

impl Endpoint {
    pub fn localhost(port: u16) -> Endpoint {
        Endpoint {
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            path: "/mcp".into(),
        }
    }
}

/// How requests to one server are made: the era detected for it and, on
/// the legacy wire, the session the server assigned (if it assigns any).
#[derive(Debug, Clone)]
pub struct Session {
    pub wire: Wire,
    pub session_id: Option<String>,
}

/// The parts of a response the benchmark looks at.
pub struct Response<'a> {
    pub status: u16,
    pub sse: bool,
    pub close: bool,
    pub session_id: Option<String>,
    pub body: &'a [u8],
}

impl Response<'_> {
    /// The JSON-RPC message that answers request `id`: the body itself, or
    /// the matching event of an SSE stream.
    pub fn message_for(&self, id: u64) -> Option<Vec<u8>> {
        if self.sse {
            wire::sse_messages(self.body)
                .into_iter()
                .find(|m| wire::message_id(m) == Some(id))
        } else {
            Some(self.body.to_vec())
        }
    }
}

/// One keep-alive connection.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    decoded: Vec<u8>,
}

const READ_CHUNK: usize = 64 * 1024;

fn eof() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::UnexpectedEof,
        "server closed the connection mid-response",
    )
}

fn bad(what: impl Into<String>) -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::InvalidData, what.into())
}

struct Head {
    status: u16,
    len: usize,
    content_length: Option<usize>,
    chunked: bool,
    sse: bool,
    close: bool,
    session_id: Option<String>,
}

impl Conn {
    pub async fn connect(addr: SocketAddr) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        // Requests are written in one piece; Nagle would only add delay.
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: Vec::with_capacity(READ_CHUNK),
            decoded: Vec::new(),
        })
    }

    /// Reads more bytes into the buffer; false at end of stream.
    async fn fill(&mut self) -> std::io::Result<bool> {
        if self.buf.capacity() - self.buf.len() < READ_CHUNK / 4 {
            self.buf.reserve(READ_CHUNK);
        }
        Ok(self.stream.read_buf(&mut self.buf).await? > 0)
    }

    fn parse_head(&self) -> std::io::Result<Option<Head>> {
        let mut headers = [httparse::EMPTY_HEADER; 48];
        let mut response = httparse::Response::new(&mut headers);
        let len = match response.parse(&self.buf) {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => return Ok(None),
            Err(e) => return Err(bad(format!("malformed HTTP response: {e}"))),
        };
        let mut head = Head {
            status: response.code.unwrap_or(0),
            len,
            content_length: None,
            chunked: false,
            sse: false,
            close: response.version == Some(0),
            session_id: None,
        };
        for h in response.headers.iter() {
            let value = h.value;
            if h.name.eq_ignore_ascii_case("content-length") {
                let text = std::str::from_utf8(value).map_err(|_| bad("bad Content-Length"))?;
                head.content_length =
                    Some(text.trim().parse().map_err(|_| bad("bad Content-Length"))?);
            } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                head.chunked = wire::find(&value.to_ascii_lowercase(), b"chunked").is_some();
            } else if h.name.eq_ignore_ascii_case("content-type") {
                head.sse = value.to_ascii_lowercase().starts_with(b"text/event-stream");
            } else if h.name.eq_ignore_ascii_case("connection") {
                let v = value.to_ascii_lowercase();
                if v.starts_with(b"close") {
                    head.close = true;
                } else if v.starts_with(b"keep-alive") {
                    head.close = false;
                }
            } else if h.name.eq_ignore_ascii_case("mcp-session-id") {
                head.session_id = std::str::from_utf8(value).ok().map(str::to_owned);
            }
        }
        Ok(Some(head))
    }

    /// Writes one request and reads its whole response.
    pub async fn send(&mut self, request: &[u8]) -> std::io::Result<Response<'_>> {
        self.stream.write_all(request).await?;
        // No pipelining: whatever the buffer held belonged to an earlier,
        // finished response.
        self.buf.clear();
        let head = loop {
            if !self.buf.is_empty()
                && let Some(head) = self.parse_head()?
            {
                break head;
            }
            if !self.fill().await? {
                return Err(eof());
            }
        };
        let no_body = head.status == 204 || head.status == 304 || head.status < 200;
        let mut close = head.close;
        let body_range = if no_body {
            head.len..head.len
        } else if let Some(n) = head.content_length {
            while self.buf.len() < head.len + n {
                if !self.fill().await? {
                    return Err(eof());
                }
            }
            head.len..head.len + n
        } else if head.chunked {
            self.read_chunked(head.len).await?;
            return Ok(Response {
                status: head.status,
                sse: head.sse,
                close,
                session_id: head.session_id,
                body: &self.decoded,
            });
        } else {
            // Delimited by the end of the connection.
            while self.fill().await? {}
            close = true;
            head.len..self.buf.len()
        };
        Ok(Response {
            status: head.status,
            sse: head.sse,
            close,
            session_id: head.session_id,
            body: &self.buf[body_range],
        })
    }

    /// Decodes a chunked body that starts at `pos` into `self.decoded`.
    async fn read_chunked(&mut self, mut pos: usize) -> std::io::Result<()> {
        self.decoded.clear();
        loop {
            // chunk-size [; extensions] CRLF
            let line_end = loop {
                if let Some(i) = wire::find(&self.buf[pos..], b"\r\n") {
                    break pos + i;
                }
                if !self.fill().await? {
                    return Err(eof());
                }
            };
            let line =
                std::str::from_utf8(&self.buf[pos..line_end]).map_err(|_| bad("bad chunk size"))?;
            let size_text = line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_text, 16)
                .map_err(|_| bad(format!("bad chunk size {size_text:?}")))?;
            pos = line_end + 2;
            if size == 0 {
                // Trailer fields end with an empty line.
                loop {
                    let end = loop {
                        if let Some(i) = wire::find(&self.buf[pos..], b"\r\n") {
                            break pos + i;
                        }
                        if !self.fill().await? {
                            return Err(eof());
                        }
                    };
                    let empty = end == pos;
                    pos = end + 2;
                    if empty {
                        return Ok(());
                    }
                }
            }
            while self.buf.len() < pos + size + 2 {
                if !self.fill().await? {
                    return Err(eof());
                }
            }
            self.decoded.extend_from_slice(&self.buf[pos..pos + size]);
            pos += size + 2;
        }
    }
}

/// The request line and headers of one POST (without the body).
pub fn request_head(
    endpoint: &Endpoint,
    session: Option<&Session>,
    method: Option<&str>,
    tool: Option<&str>,
    body_len: usize,
) -> Vec<u8> {
    let mut h = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n",
        endpoint.path, endpoint.addr
    );
    if let Some(session) = session {
        h.push_str(&format!(
            "MCP-Protocol-Version: {}\r\n",
            session.wire.protocol_version()
        ));
        if let Some(id) = &session.session_id {
            h.push_str(&format!("Mcp-Session-Id: {id}\r\n"));
        }
        // The 2025-11-25 wire has no such headers; a legacy server ignores
        // them, so they are sent only where they mean something.
        if session.wire == Wire::Modern {
            if let Some(method) = method {
                h.push_str(&format!("Mcp-Method: {method}\r\n"));
            }
            if let Some(tool) = tool {
                h.push_str(&format!("Mcp-Name: {tool}\r\n"));
            }
        }
    }
    h.push_str(&format!("Content-Length: {body_len}\r\n\r\n"));
    h.into_bytes()
}

fn full_request(head: Vec<u8>, body: &[u8]) -> Vec<u8> {
    let mut r = head;
    r.extend_from_slice(body);
    r
}

/// A status, the answering JSON-RPC message (if one came back), and the
/// session id header.
struct Exchange {
    status: u16,
    message: Option<Vec<u8>>,
    session_id: Option<String>,
    close: bool,
}

async fn exchange(conn: &mut Conn, request: &[u8], id: Option<u64>) -> Result<Exchange, String> {
    let response = conn
        .send(request)
        .await
        .map_err(|e| format!("HTTP request failed: {e}"))?;
    let message = match id {
        Some(id) => response.message_for(id),
        None => None,
    };
    Ok(Exchange {
        status: response.status,
        message,
        session_id: response.session_id.clone(),
        close: response.close,
    })
}

/// Connects, detects which wire the server speaks, and checks `tools/list`.
///
/// The modern request is tried first; a 4xx without a 2026-07-28 error code
/// in its body means a legacy server, and the 2025-11-25 handshake follows
/// (spec: Streamable HTTP, "Backward Compatibility").
pub async fn open_session(endpoint: &Endpoint) -> Result<Session, String> {
    let mut conn = Conn::connect(endpoint.addr)
        .await
        .map_err(|e| format!("cannot connect to {}: {e}", endpoint.addr))?;
    let modern = Session {
        wire: Wire::Modern,
        session_id: None,
    };
    let body = wire::tools_list(Wire::Modern, 1);
    let head = request_head(
        endpoint,
        Some(&modern),
        Some("tools/list"),
        None,
        body.len(),
    );
    let probe = exchange(&mut conn, &full_request(head, &body), Some(1)).await?;
    if probe.status == 200 {
        let message = probe
            .message
            .ok_or("tools/list: the 200 response carries no answer")?;
        let reply = AnyReply::parse(&message)
            .ok_or_else(|| format!("tools/list: not JSON-RPC: {}", wire::preview(&message)))?;
        wire::check_tools_list(&reply)?;
        return Ok(modern);
    }
    if !(400..500).contains(&probe.status) {
        return Err(format!("tools/list answered HTTP {}", probe.status));
    }
    if let Some(reply) = probe.message.as_deref().and_then(AnyReply::parse)
        && let Some(error) = reply.error
        && wire::MODERN_ERROR_CODES.contains(&error.code)
    {
        return Err(format!(
            "the server speaks 2026-07-28 but rejected the request: error {}: {}",
            error.code, error.message
        ));
    }
    if probe.close {
        conn = Conn::connect(endpoint.addr)
            .await
            .map_err(|e| format!("cannot reconnect: {e}"))?;
    }
    legacy_handshake(endpoint, &mut conn).await
}

async fn legacy_handshake(endpoint: &Endpoint, conn: &mut Conn) -> Result<Session, String> {
    let body = wire::initialize(2);
    let head = request_head(endpoint, None, None, None, body.len());
    let init = exchange(conn, &full_request(head, &body), Some(2)).await?;
    if init.status != 200 {
        return Err(format!("initialize answered HTTP {}", init.status));
    }
    let reply = init
        .message
        .as_deref()
        .and_then(AnyReply::parse)
        .ok_or("initialize: no JSON-RPC answer")?;
    if let Some(e) = reply.error {
        return Err(format!(
            "initialize failed: error {}: {}",
            e.code, e.message
        ));
    }
    let session = Session {
        wire: Wire::Legacy,
        session_id: init.session_id,
    };
    if init.close {
        *conn = Conn::connect(endpoint.addr)
            .await
            .map_err(|e| format!("cannot reconnect: {e}"))?;
    }
    let body = wire::initialized_notification();
    let head = request_head(endpoint, Some(&session), None, None, body.len());
    let note = exchange(conn, &full_request(head, &body), None).await?;
    if !(200..300).contains(&note.status) {
        return Err(format!(
            "notifications/initialized answered HTTP {}",
            note.status
        ));
    }
    if note.close {
        *conn = Conn::connect(endpoint.addr)
            .await
            .map_err(|e| format!("cannot reconnect: {e}"))?;
    }
    let body = wire::tools_list(Wire::Legacy, 3);
    let head = request_head(
        endpoint,
        Some(&session),
        Some("tools/list"),
        None,
        body.len(),
    );
    let list = exchange(conn, &full_request(head, &body), Some(3)).await?;
    let reply = list
        .message
        .as_deref()
        .and_then(AnyReply::parse)
        .ok_or_else(|| {
            format!(
                "tools/list (legacy) answered HTTP {} without JSON-RPC",
                list.status
            )
        })?;
    wire::check_tools_list(&reply)?;
    Ok(session)
}

/// The verdict on one response to an `echo` call.
fn check_response(response: &Response<'_>, id: u64, text: &str) -> Result<(), String> {
    if response.status != 200 {
        return Err(format!(
            "HTTP {}: {}",
            response.status,
            wire::preview(response.body)
        ));
    }
    if response.sse {
        for message in wire::sse_messages(response.body) {
            match wire::check_call(&message, id, text) {
                Verdict::Ok => return Ok(()),
                Verdict::Bad(why) => return Err(why),
                Verdict::Unrelated => {}
            }
        }
        return Err("the SSE stream ended without the response".into());
    }
    match wire::check_call(response.body, id, text) {
        Verdict::Ok => Ok(()),
        Verdict::Bad(why) => Err(why),
        Verdict::Unrelated => Err(format!(
            "the response answers another request: {}",
            wire::preview(response.body)
        )),
    }
}

/// A connection with its patched request template.
struct Caller {
    endpoint: Endpoint,
    conn: Option<Conn>,
    template: CallTemplate,
}

impl Caller {
    fn new(endpoint: &Endpoint, session: &Session, pad: usize) -> Caller {
        let mut template = CallTemplate::new(session.wire, pad);
        let head = request_head(
            endpoint,
            Some(session),
            Some("tools/call"),
            Some("echo"),
            template.bytes.len(),
        );
        template.shift(&head);
        Caller {
            endpoint: endpoint.clone(),
            conn: None,
            template,
        }
    }

    /// One checked call; the connection is reopened when needed.
    async fn call(&mut self, counter: u64) -> Result<(), String> {
        self.template.patch(counter);
        if self.conn.is_none() {
            self.conn = Some(
                Conn::connect(self.endpoint.addr)
                    .await
                    .map_err(|e| format!("connect: {e}"))?,
            );
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err("no connection".into());
        };
        let (verdict, close) = match conn.send(&self.template.bytes).await {
            Ok(response) => (
                check_response(&response, counter, self.template.expected_text()).map_err(|why| {
                    // Answered (200) but not with the echoed text: wrong,
                    // not just failed.
                    if response.status == 200 {
                        format!("{WRONG}{why}")
                    } else {
                        why
                    }
                }),
                response.close,
            ),
            Err(e) => (Err(format!("I/O: {e}")), true),
        };
        if close {
            self.conn = None;
        }
        verdict
    }
}

/// How an error message starts when the call was answered wrongly (see
/// `LoadResult::wrong`).
pub const WRONG: &str = "wrong answer: ";

/// Closed-loop load: `concurrency` connections each send the next call as
/// soon as the previous one is answered, until `duration` has passed.
pub async fn load(
    endpoint: &Endpoint,
    session: &Session,
    concurrency: usize,
    duration: Duration,
    pad: usize,
) -> LoadResult {
    let counter = Arc::new(AtomicU64::new(wire::COUNTER_START));
    let start = Instant::now();
    let deadline = start + duration;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..concurrency.max(1) {
        let mut caller = Caller::new(endpoint, session, pad);
        let counter = counter.clone();
        tasks.spawn(async move {
            let mut result = LoadResult::default();
            let mut failures_in_a_row = 0u32;
            while Instant::now() < deadline {
                let n = counter.fetch_add(1, Ordering::Relaxed);
                let t0 = Instant::now();
                let outcome = caller.call(n).await;
                let took = t0.elapsed();
                match outcome {
                    Ok(()) => {
                        failures_in_a_row = 0;
                        result.record_ok(took);
                    }
                    Err(why) => {
                        result.record_error(why);
                        failures_in_a_row += 1;
                        // A dead server must not turn this into a busy loop.
                        if failures_in_a_row > 100 {
                            break;
                        }
                        if caller.conn.is_none() {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                    }
                }
            }
            result
        });
    }
    let mut total = LoadResult::default();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(part) => total.merge(part),
            Err(e) => total.record_error(format!("load task failed: {e}")),
        }
    }
    total.elapsed = start.elapsed();
    total
}

/// `reps` sequential round trips of an `echo` call carrying `size` bytes.
pub async fn payload_round_trips(
    endpoint: &Endpoint,
    session: &Session,
    size: usize,
    reps: usize,
) -> LoadResult {
    let mut caller = Caller::new(endpoint, session, size);
    let mut result = LoadResult::default();
    let start = Instant::now();
    for i in 0..reps as u64 {
        let t0 = Instant::now();
        match caller.call(wire::COUNTER_START + i).await {
            Ok(()) => result.record_ok(t0.elapsed()),
            Err(why) => result.record_error(why),
        }
    }
    result.elapsed = start.elapsed();
    result
}
