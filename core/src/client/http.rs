//! Streamable HTTP client transport: one POST per request; the answer is a
//! JSON object or an SSE stream of notifications ending with the response.

use bytes::{Bytes, BytesMut};
use http::header::{self, HeaderValue};
use http::{Request, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::Value;

use super::pool::Pool;
use super::{ClientTransport, Outgoing};
use crate::protocol::jsonrpc::{Message, RequestId, request_value};
use crate::protocol::meta;
use crate::server::BoxFuture;
use crate::transport::DEFAULT_MAX_MESSAGE_BYTES;
use crate::transport::http::headers::encode_header_value;
use crate::{Error, McpError};

pub(crate) struct HttpTransport {
    uri: Uri,
    pool: Pool,
}

impl HttpTransport {
    pub(crate) fn new(url: &str) -> Result<HttpTransport, Error> {
        let uri: Uri = url
            .parse()
            .map_err(|e| Error::Http(format!("invalid URL {url:?}: {e}")))?;
        match uri.scheme_str() {
            Some("http") => {}
            Some(other) => {
                return Err(Error::Http(format!(
                    "unsupported URL scheme {other:?} (only http:// is supported)"
                )));
            }
            None => return Err(Error::Http(format!("URL {url:?} has no scheme"))),
        }
        let host = uri
            .host()
            .ok_or_else(|| Error::Http(format!("URL {url:?} has no host")))?
            .to_owned();
        let port = uri.port_u16().unwrap_or(80);
        Ok(HttpTransport {
            pool: Pool::new(host, port),
            uri,
        })
    }
}

/// The value of `Mcp-Name` for a request, when its method has one.
fn name_header(method: &str, params: &serde_json::Map<String, Value>) -> Option<String> {
    let field = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    params
        .get(field)
        .and_then(Value::as_str)
        .map(encode_header_value)
}

impl ClientTransport for HttpTransport {
    fn send(&self, request: Outgoing) -> BoxFuture<Result<Value, Error>> {
        let Outgoing {
            id,
            method,
            params,
            headers,
            notifications,
        } = request;
        let version = params
            .get("_meta")
            .and_then(|m| m.get(meta::PROTOCOL_VERSION))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let name = name_header(&method, &params);
        let body = serde_json::to_vec(&request_value(&id, &method, Some(&params)));
        let uri = self.uri.clone();
        let pool = self.pool.clone();
        Box::pin(async move {
            // A bare connection needs origin-form targets and an explicit Host.
            let target = uri
                .path_and_query()
                .map(|p| p.as_str())
                .unwrap_or("/")
                .to_owned();
            let authority = uri.authority().map(|a| a.as_str()).unwrap_or("").to_owned();
            let mut builder = Request::post(target)
                .header(header::HOST, authority)
                .header(header::CONTENT_TYPE, "application/json")
                .header(header::ACCEPT, "application/json, text/event-stream")
                .header("mcp-protocol-version", version)
                .header("mcp-method", method.as_str());
            if let Some(name) = name {
                let value = HeaderValue::from_str(&name)
                    .map_err(|e| Error::Http(format!("Mcp-Name header: {e}")))?;
                builder = builder.header("mcp-name", value);
            }
            for (name, value) in headers {
                let value = HeaderValue::from_str(&value)
                    .map_err(|e| Error::Http(format!("{name} header: {e}")))?;
                builder = builder.header(name.as_str(), value);
            }
            let http_request = builder
                .body(Full::new(Bytes::from(body?)))
                .map_err(|e| Error::Http(e.to_string()))?;
            // The connection belongs to this request until the response is
            // read: abandoning the request closes it.
            let mut conn = pool.get().await?;
            let response = conn
                .sender
                .send_request(http_request)
                .await
                .map_err(|e| Error::Http(format!("request failed: {e}")))?;
            let outcome = read_response(response, &id, notifications).await;
            pool.put(conn);
            outcome
        })
    }

    fn mirrors_headers(&self) -> bool {
        true
    }

    fn close(&self) -> BoxFuture<()> {
        Box::pin(async {})
    }
}

async fn read_response(
    response: http::Response<Incoming>,
    id: &RequestId,
    notifications: Option<tokio::sync::mpsc::UnboundedSender<Value>>,
) -> Result<Value, Error> {
    let status = response.status();
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    let mut body = response.into_body();
    if content_type.starts_with("text/event-stream") {
        let mut parser = SseParser::default();
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| Error::Http(format!("reading SSE stream: {e}")))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            for event in parser.push(&data)? {
                match Message::from_slice(event.as_bytes()) {
                    Ok(Message::Response(r)) if r.id.as_ref() == Some(id) => {
                        return r.outcome.map_err(Error::Mcp);
                    }
                    Ok(Message::Notification(n)) => {
                        if let Some(tx) = &notifications {
                            let _ = tx.send(crate::protocol::jsonrpc::notification_value(
                                &n.method,
                                n.params.as_ref(),
                            ));
                        }
                    }
                    Ok(_) => tracing::debug!("ignoring unrelated message on SSE stream"),
                    Err(e) => tracing::warn!(error = %e.error, "unreadable SSE event"),
                }
            }
        }
        return Err(Error::Protocol(
            "SSE stream ended before the response arrived".into(),
        ));
    }
    let bytes = http_body_util::Limited::new(body, DEFAULT_MAX_MESSAGE_BYTES)
        .collect()
        .await
        .map_err(|e| Error::Http(format!("reading response: {e}")))?
        .to_bytes();
    if status == StatusCode::ACCEPTED && bytes.is_empty() {
        return Err(Error::Protocol(
            "server accepted the request without answering".into(),
        ));
    }
    match Message::from_slice(&bytes) {
        Ok(Message::Response(r)) => r.outcome.map_err(Error::Mcp),
        _ if !status.is_success() => Err(Error::Http(format!(
            "HTTP {status}: {}",
            String::from_utf8_lossy(&bytes[..bytes.len().min(200)])
        ))),
        Ok(_) => Err(Error::Protocol("expected a JSON-RPC response".into())),
        Err(e) => Err(Error::Mcp(McpError::new(e.error.code, e.error.message))),
    }
}

/// Incremental SSE parser: yields the `data` of each complete event and
/// ignores comments (keep-alives), `id`, `retry` and `event` fields.
#[derive(Default)]
pub(crate) struct SseParser {
    buffer: BytesMut,
    data: String,
}

impl SseParser {
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Result<Vec<String>, Error> {
        self.buffer.extend_from_slice(chunk);
        if self.buffer.len() > DEFAULT_MAX_MESSAGE_BYTES {
            return Err(Error::Protocol("SSE event exceeds the size limit".into()));
        }
        let mut events = Vec::new();
        while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
            let mut line = self.buffer.split_to(end + 1);
            line.truncate(end);
            if line.last() == Some(&b'\r') {
                line.truncate(line.len() - 1);
            }
            let line = String::from_utf8_lossy(&line);
            if line.is_empty() {
                if !self.data.is_empty() {
                    events.push(std::mem::take(&mut self.data));
                }
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                None => (line.as_ref(), ""),
            };
            if field == "data" {
                if !self.data.is_empty() {
                    self.data.push('\n');
                }
                self.data.push_str(value);
            }
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::SseParser;

    #[test]
    fn parses_events_across_chunks_and_skips_comments() {
        let mut p = SseParser::default();
        assert!(
            p.push(b": keep-alive\n\nevent: message\nda")
                .unwrap()
                .is_empty()
        );
        let events = p
            .push(b"ta: {\"a\":1}\r\n\r\ndata: x\ndata: y\n\n")
            .unwrap();
        assert_eq!(events, vec!["{\"a\":1}".to_string(), "x\ny".to_string()]);
    }
}
