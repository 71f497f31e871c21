//! What the fuzz targets share: one current-thread runtime per target
//! process, a server offering a little of everything (tools that answer at
//! once, notify first, or ask for input; a prompt; a resource template;
//! completions), the real HTTP endpoint serving it on a loopback port, and
//! the readable request format of the HTTP corpora.
//!
//! The HTTP targets go through a socket on purpose: the endpoint's service
//! takes hyper's own request body, which only hyper's connection code can
//! make, and the listener is where a request really enters. All of it runs
//! on the fuzzing thread (the runtime only advances inside `block_on`), so
//! the coverage libFuzzer sees belongs to the input it is running.

use bytes::Bytes;
use ferromcp::legacy::SessionLimits;
use ferromcp::protocol::{Implementation, Prompt, PromptArgument, ResourceTemplate, Tool};
use ferromcp::server::{
    CompletionOutput, PromptOutput, RequestContext, ResourceOutput, ResourceRequest, SealKey,
    Server, ServerOptions, ToolOutput,
};
use ferromcp::transport::http::{HttpOptions, HttpServer};
use http::header::{HeaderName, HeaderValue};
use http::{HeaderMap, Method, Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use serde_json::{Map, Value, json};
use std::net::SocketAddr;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::runtime::Runtime;

/// The secret of [`fuzz_server`]'s seal key, so targets can seal state.
pub const SEAL_SECRET: &[u8] = b"ferromcp-fuzz";

/// How long one request may take before the harness gives up on it (and
/// hangs up, which cancels it): `subscriptions/listen` and legacy asks
/// never end on their own.
pub const REQUEST_WAIT: Duration = Duration::from_millis(100);

/// The runtime every target runs on.
pub fn runtime() -> &'static Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// The seal key of [`fuzz_server`].
pub fn seal_key() -> SealKey {
    SealKey::from_secret(SEAL_SECRET)
}

/// A server with one of each kind of primitive the request paths route to.
pub fn fuzz_server() -> Server {
    let options = ServerOptions {
        seal_key: seal_key(),
        page_size: 2,
        ..ServerOptions::default()
    };
    let server = Server::with_options(Implementation::new("fuzz", "0"), options);
    let text_schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"]
    });
    let tools: [(&str, Value); 4] = [
        ("echo", text_schema),
        ("notify", json!({"type": "object"})),
        ("ask", json!({"type": "object"})),
        ("ask_all", json!({"type": "object"})),
    ];
    for (name, schema) in tools {
        let handler = move |ctx: RequestContext, args: Value| async move {
            match name {
                "notify" => {
                    ctx.progress(1.0, Some(2.0), Some("half"));
                    ctx.log(ferromcp::server::LoggingLevel::Info, json!("hi"), None);
                    Ok(ToolOutput::text("done"))
                }
                "ask" => {
                    let schema = json!({
                        "type": "object",
                        "properties": {"name": {"type": "string", "minLength": 1}},
                        "required": ["name"]
                    });
                    Ok(ToolOutput::Value(ctx.elicit("Name?", schema).await?))
                }
                "ask_all" => {
                    let a = ctx
                        .elicit_as(Some("first"), "First?", json!({"type": "object"}))
                        .await?;
                    let b = ctx.sample(json!({"messages": [], "maxTokens": 1})).await?;
                    let c = ctx.list_roots().await?;
                    Ok(ToolOutput::Value(json!([a, b, c])))
                }
                _ => Ok(ToolOutput::Value(args["text"].clone())),
            }
        };
        // Registration of these fixed tools cannot fail; if it ever does,
        // the target runs with fewer tools rather than not at all.
        let _ = server.add_tool(Tool::new(name, schema), handler);
    }
    let mut prompt = Prompt::new("greet");
    prompt.arguments = Some(vec![PromptArgument::new("name", true)]);
    let _ = server.add_prompt(prompt, |_ctx, args: Map<String, Value>| async move {
        Ok(PromptOutput::Text(format!("hello {}", args.len())))
    });
    let _ = server.add_resource_template(
        ResourceTemplate::new("file:///{+path}{?q,n}", "files"),
        |_ctx, req: ResourceRequest| async move {
            Ok(ResourceOutput::Text(
                Value::Object(req.variables).to_string(),
            ))
        },
    );
    server.set_completion_handler(|_ctx, params: Value| async move {
        Ok(CompletionOutput {
            values: vec![params["argument"]["value"].to_string()],
            ..CompletionOutput::default()
        })
    });
    server
}

/// The address of [`fuzz_server`] served over HTTP, started on first use.
pub fn endpoint() -> SocketAddr {
    static ADDR: OnceLock<SocketAddr> = OnceLock::new();
    *ADDR.get_or_init(|| {
        let options = HttpOptions {
            // Small, so the fuzzer also meets the limits.
            max_body_bytes: 64 * 1024,
            keep_alive: Duration::from_millis(20),
            session_limits: SessionLimits {
                max_sessions: 32,
                ..SessionLimits::default()
            },
            ..HttpOptions::localhost(0)
        };
        let rt = runtime();
        let bound = rt
            .block_on(HttpServer::bind(fuzz_server(), options))
            .expect("binding a loopback port");
        let addr = bound.local_addr().expect("a bound address");
        rt.spawn(bound.run());
        addr
    })
}

/// One request as the HTTP corpora write it: a `METHOD /path` line, header
/// lines `Name: value`, an empty line, then the body. Lines that do not
/// parse are skipped, so every input makes some request.
pub struct RawRequest {
    pub method: Method,
    pub uri: Uri,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl RawRequest {
    pub fn parse(data: &[u8]) -> RawRequest {
        let (head, body) = match find(data, b"\n\n") {
            Some(at) => (&data[..at], &data[at + 2..]),
            None => (data, &b""[..]),
        };
        let mut lines = head.split(|&b| b == b'\n');
        let mut method = Method::POST;
        let mut uri = Uri::from_static("/mcp");
        if let Some(first) = lines.next() {
            let first = String::from_utf8_lossy(first);
            let mut parts = first.split(' ');
            if let Some(m) = parts
                .next()
                .and_then(|m| Method::from_bytes(m.as_bytes()).ok())
            {
                method = m;
            }
            if let Some(u) = parts.next().and_then(|u| Uri::try_from(u).ok())
                && u.scheme().is_none()
                && u.path().starts_with('/')
            {
                uri = u;
            }
        }
        let mut headers = HeaderMap::new();
        for line in lines {
            let Some(colon) = line.iter().position(|&b| b == b':') else {
                continue;
            };
            let value = line[colon + 1..]
                .strip_prefix(b" ")
                .unwrap_or(&line[colon + 1..]);
            if let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(&line[..colon]),
                HeaderValue::from_bytes(value),
            ) {
                // append: repeated headers are part of what is fuzzed.
                headers.append(name, value);
            }
        }
        RawRequest {
            method,
            uri,
            headers,
            body: Bytes::copy_from_slice(body),
        }
    }

    /// The hyper request (hyper sets `Content-Length` from the body; a
    /// fuzzed `Content-Length` or `Transfer-Encoding` would only desync the
    /// connection, which is hyper's business, not ours).
    pub fn into_request(self) -> Request<Full<Bytes>> {
        let mut req = Request::new(Full::new(self.body));
        *req.method_mut() = self.method;
        *req.uri_mut() = self.uri;
        let mut headers = self.headers;
        headers.remove(http::header::CONTENT_LENGTH);
        headers.remove(http::header::TRANSFER_ENCODING);
        headers.remove(http::header::CONNECTION);
        *req.headers_mut() = headers;
        req
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A response as far as it arrived within [`REQUEST_WAIT`].
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// Sends `req` to `addr` on a fresh connection; `None` if no response head
/// came in time. The connection is dropped afterwards (cancelling whatever
/// still runs, as a Streamable HTTP client's hang-up does).
pub async fn send(addr: SocketAddr, req: Request<Full<Bytes>>) -> Option<Answer> {
    let stream = TcpStream::connect(addr).await.ok()?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .ok()?;
    let driver = tokio::spawn(conn);
    let answer = tokio::time::timeout(REQUEST_WAIT, async {
        let response = sender.send_request(req).await.ok()?;
        let (parts, body) = response.into_parts();
        let mut collected = Vec::new();
        let mut body = body;
        // A stream that stays open yields what came before the deadline.
        while let Ok(Some(Ok(frame))) = tokio::time::timeout(REQUEST_WAIT, body.frame()).await {
            if let Ok(data) = frame.into_data() {
                collected.extend_from_slice(&data);
            }
        }
        Some(Answer {
            status: parts.status,
            headers: parts.headers,
            body: Bytes::from(collected),
        })
    })
    .await
    .ok()
    .flatten();
    driver.abort();
    answer
}

/// Checks what every answer of the endpoint must satisfy: a JSON error
/// status carries a JSON-RPC error body, and the only server-side status is
/// 503 for a full session table (the harness caps it at 32 sessions).
pub fn check_answer(answer: &Answer) {
    let json = answer
        .headers
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let error_status = answer.status.is_client_error() || answer.status.is_server_error();
    if json && error_status {
        let value: Value = serde_json::from_slice(&answer.body)
            .unwrap_or_else(|e| panic!("a {} answer that is not JSON: {e}", answer.status));
        assert!(
            value["error"]["code"].is_i64(),
            "a {} answer without a JSON-RPC error: {value}",
            answer.status
        );
    }
    assert!(
        !answer.status.is_server_error()
            || (json && answer.status == StatusCode::SERVICE_UNAVAILABLE),
        "the endpoint answered {}",
        answer.status
    );
}
