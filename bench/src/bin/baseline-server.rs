//! The physical-limit baseline: the least work that can still answer an MCP
//! client's `tools/list` and `tools/call echo` on the 2026-07-28 wire.
//!
//!     baseline-server              # stdio: one JSON line in, one out
//!     baseline-server --http PORT  # hyper HTTP/1.1 on 127.0.0.1:PORT, any path
//!     baseline-server --legacy [--http PORT]
//!
//! `--legacy` speaks only the 2025-11-25 wire (an `initialize` handshake, a
//! session id on HTTP, no `server/discover`), like an SDK that predates
//! 2026-07-28: the benchmark's own tests use it to exercise the load
//! generator's fallback.
//!
//! No validation beyond what the load generator needs, no schema, no
//! routing, no tracing: what it costs per request is what a socket, HTTP
//! parsing and serde_json cost. A real server cannot be cheaper, so ratios to
//! it show how much a server adds on top.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::convert::Infallible;
use std::io::{BufRead, Write};

#[derive(Deserialize)]
struct RpcRequest<'a> {
    #[serde(default)]
    id: Option<Value>,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(borrow, default)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<Arguments<'a>>,
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<Meta<'a>>,
}

#[derive(Deserialize)]
struct Arguments<'a> {
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Meta<'a> {
    #[serde(borrow, default, rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<Cow<'a, str>>,
}

#[derive(Serialize)]
struct Text<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct CallResult<'a> {
    content: [Text<'a>; 1],
}

#[derive(Serialize)]
struct Reply<'a, R: Serialize> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: R,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: i32,
    message: &'a str,
}

#[derive(Serialize)]
struct ErrorReply<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
    error: ErrorBody<'a>,
}

const VERSION: &str = "2026-07-28";

fn tools_list() -> Value {
    serde_json::json!({"tools": [{
        "name": "echo",
        "description": "Returns the text unchanged.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
    }]})
}

fn discover() -> Value {
    serde_json::json!({
        "supportedVersions": [VERSION],
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "baseline-server", "version": env!("CARGO_PKG_VERSION")}
    })
}

fn error(id: Option<&Value>, code: i32, message: &str) -> Vec<u8> {
    serde_json::to_vec(&ErrorReply {
        jsonrpc: "2.0",
        id,
        error: ErrorBody { code, message },
    })
    .unwrap_or_default()
}

const LEGACY_VERSION: &str = "2025-11-25";
const LEGACY_SESSION: &str = "baseline-legacy-session";

fn initialize_result() -> Value {
    serde_json::json!({
        "protocolVersion": LEGACY_VERSION,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "baseline-server", "version": env!("CARGO_PKG_VERSION")}
    })
}

/// Answers one JSON-RPC message: the reply's bytes and an HTTP status.
/// `None` for a notification, which gets no reply.
fn answer(message: &[u8], legacy: bool) -> Option<(StatusCode, Vec<u8>)> {
    let request: RpcRequest = match serde_json::from_slice(message) {
        Ok(r) => r,
        Err(_) => return Some((StatusCode::BAD_REQUEST, error(None, -32700, "parse error"))),
    };
    let id = request.id.as_ref()?;
    let params = request.params.as_ref();
    let version = params
        .and_then(|p| p.meta.as_ref())
        .and_then(|m| m.protocol_version.as_deref());
    if legacy {
        match request.method.as_ref() {
            "initialize" => {
                return Some((
                    StatusCode::OK,
                    serde_json::to_vec(&Reply {
                        jsonrpc: "2.0",
                        id,
                        result: initialize_result(),
                    })
                    .unwrap_or_default(),
                ));
            }
            // Unknown before 2026-07-28.
            "server/discover" => {
                return Some((StatusCode::OK, error(Some(id), -32601, "method not found")));
            }
            _ => {}
        }
    } else if version != Some(VERSION) {
        return Some((
            StatusCode::BAD_REQUEST,
            error(
                Some(id),
                -32602,
                "_meta io.modelcontextprotocol/protocolVersion must be 2026-07-28",
            ),
        ));
    }
    let ok = |result: Vec<u8>| Some((StatusCode::OK, result));
    match request.method.as_ref() {
        "tools/call" => {
            let name = params.and_then(|p| p.name.as_deref());
            let text = params
                .and_then(|p| p.arguments.as_ref())
                .and_then(|a| a.text.as_deref());
            match (name, text) {
                (Some("echo"), Some(text)) => ok(serde_json::to_vec(&Reply {
                    jsonrpc: "2.0",
                    id,
                    result: CallResult {
                        content: [Text { kind: "text", text }],
                    },
                })
                .unwrap_or_default()),
                _ => Some((
                    StatusCode::OK,
                    error(Some(id), -32602, "only echo(text) is served"),
                )),
            }
        }
        "tools/list" => ok(serde_json::to_vec(&Reply {
            jsonrpc: "2.0",
            id,
            result: tools_list(),
        })
        .unwrap_or_default()),
        "server/discover" => ok(serde_json::to_vec(&Reply {
            jsonrpc: "2.0",
            id,
            result: discover(),
        })
        .unwrap_or_default()),
        _ => Some((
            StatusCode::NOT_FOUND,
            error(Some(id), -32601, "method not found"),
        )),
    }
}

fn respond(
    status: StatusCode,
    body: Vec<u8>,
    json: bool,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    if json {
        r.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json"),
        );
    }
    Ok(r)
}

async fn handle(req: Request<Incoming>, legacy: bool) -> Result<Response<Full<Bytes>>, Infallible> {
    if req.method() != hyper::Method::POST {
        return respond(StatusCode::METHOD_NOT_ALLOWED, Vec::new(), false);
    }
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let version = header("mcp-protocol-version");
    let has_session = header("mcp-session-id") == Some(LEGACY_SESSION);
    if legacy {
        // What a 2025-11-25 server says to a 2026-07-28 request: an error
        // that is not one of the modern codes.
        if version == Some(VERSION) {
            return respond(
                StatusCode::BAD_REQUEST,
                error(None, -32000, "Bad Request: Unsupported protocol version"),
                true,
            );
        }
    } else if version.is_none() {
        return respond(
            StatusCode::BAD_REQUEST,
            error(None, -32020, "MCP-Protocol-Version header is required"),
            true,
        );
    }
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => return respond(StatusCode::BAD_REQUEST, Vec::new(), false),
    };
    let is_initialize = legacy && wire_method_is(&body, "initialize");
    if legacy && !is_initialize && !has_session {
        return respond(
            StatusCode::BAD_REQUEST,
            error(None, -32000, "Bad Request: No valid session ID provided"),
            true,
        );
    }
    match answer(&body, legacy) {
        Some((status, reply)) => {
            let mut response = respond(status, reply, true);
            if is_initialize && let Ok(r) = &mut response {
                r.headers_mut().insert(
                    "mcp-session-id",
                    hyper::header::HeaderValue::from_static(LEGACY_SESSION),
                );
            }
            response
        }
        None => respond(StatusCode::ACCEPTED, Vec::new(), false),
    }
}

/// Whether a request body names `method` (only for the legacy handshake).
fn wire_method_is(body: &[u8], method: &str) -> bool {
    serde_json::from_slice::<RpcRequest>(body).is_ok_and(|r| r.method == method)
}

async fn serve_http(port: u16, legacy: bool) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(c) => c,
            Err(_) => continue,
        };
        let _ = stream.set_nodelay(true);
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .keep_alive(true)
                .serve_connection(
                    TokioIo::new(stream),
                    service_fn(move |req| handle(req, legacy)),
                )
                .await;
        });
    }
}

fn serve_stdio(legacy: bool) -> std::io::Result<()> {
    let stdin = std::io::stdin();
    let mut input = std::io::BufReader::with_capacity(64 * 1024, stdin.lock());
    let stdout = std::io::stdout();
    let mut output = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    let mut line = Vec::with_capacity(64 * 1024);
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        let message = line.trim_ascii();
        if message.is_empty() {
            continue;
        }
        if let Some((_, reply)) = answer(message, legacy) {
            output.write_all(&reply)?;
            output.write_all(b"\n")?;
        }
        // Flush only when no further request is already buffered: a burst
        // of requests costs one write.
        if input.buffer().is_empty() {
            output.flush()?;
        }
    }
    output.flush()
}

fn main() -> std::process::ExitCode {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let legacy = args.first().is_some_and(|a| a == "--legacy");
    if legacy {
        args.remove(0);
    }
    let result = match args.as_slice() {
        [] => serve_stdio(legacy),
        [flag] if flag == "--stdio" => serve_stdio(legacy),
        [flag, port] if flag == "--http" => match port.parse::<u16>() {
            Ok(port) => tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .and_then(|rt| rt.block_on(serve_http(port, legacy))),
            Err(_) => {
                eprintln!("baseline-server: invalid port {port:?}");
                return std::process::ExitCode::from(2);
            }
        },
        _ => {
            eprintln!("usage: baseline-server [--legacy] [--stdio | --http PORT]");
            return std::process::ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("baseline-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
