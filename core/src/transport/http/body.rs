//! Bodies in both directions: reading a request body (JSON only, within the
//! size limit) and the response body type, a complete buffer or an SSE
//! stream (its events framed by `net::sse`), with the constructors every
//! response goes through.

use bytes::Bytes;
use http::header::{self, HeaderMap, HeaderValue};
use http::{Response, StatusCode};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Limited};
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::DropGuard;

use crate::McpError;
use crate::protocol::codes;
use crate::protocol::jsonrpc::{RequestId, error_value};
use crate::server::Rejection;

/// Whether the request declares a JSON body (parameters such as `charset`
/// are allowed).
pub(super) fn is_json_content_type(headers: &HeaderMap) -> bool {
    const JSON: &[u8] = b"application/json";
    // A value that is not visible ASCII is refused whatever it says.
    let Some(Ok(value)) = headers.get(header::CONTENT_TYPE).map(HeaderValue::to_str) else {
        return false;
    };
    // By bytes: the media type before any parameters, without the white
    // space around it (the `str` split and trim cost about 300
    // instructions per request).
    let bytes = value.as_bytes();
    let media_type = bytes.split(|b| *b == b';').next().unwrap_or(bytes);
    media_type.trim_ascii().eq_ignore_ascii_case(JSON)
}

/// Reads a whole request body, refusing with 413 once it grows past
/// `limit` bytes: the cap holds however the body is framed, so one client
/// cannot make the server buffer without bound. A body not complete within
/// `deadline` is answered 408 (hyper then closes the connection, as the
/// body was not read to its end), so a trickling client cannot hold it.
pub(super) async fn read_limited<B>(
    body: B,
    limit: usize,
    deadline: Duration,
) -> Result<Bytes, Response<McpBody>>
where
    B: Body,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    // A small body usually arrived with the head: one poll reads it, and
    // only a body still on its way arms the deadline's timer (registering
    // and cancelling a timer costs about 400 instructions per request).
    let mut collect = std::pin::pin!(Limited::new(body, limit).collect());
    let first = std::future::poll_fn(|cx| Poll::Ready(collect.as_mut().poll(cx))).await;
    let read = match first {
        Poll::Ready(read) => Ok(read),
        Poll::Pending => tokio::time::timeout(deadline, collect).await,
    };
    let Ok(read) = read else {
        return Err(jsonrpc_error(
            StatusCode::REQUEST_TIMEOUT,
            None,
            McpError::new(
                codes::INVALID_REQUEST,
                format!(
                    "the request body did not arrive within {} ms",
                    deadline.as_millis()
                ),
            ),
        ));
    };
    match read {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) => {
            if e.downcast_ref::<http_body_util::LengthLimitError>()
                .is_some()
            {
                return Err(jsonrpc_error(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    None,
                    McpError::new(
                        codes::INVALID_REQUEST,
                        format!("request body exceeds the {limit}-byte limit"),
                    ),
                ));
            }
            Err(plain(
                StatusCode::BAD_REQUEST,
                "could not read the request body",
            ))
        }
    }
}

/// The body of a response from an [`HttpEndpoint`](super::HttpEndpoint):
/// a complete buffer, or an SSE stream whose events arrive as the request
/// runs. Pull it with [`McpBody::next_chunk`] (or as an
/// [`http_body::Body`]) and write each chunk out as it comes: an SSE event
/// is one chunk, so a host flushing per chunk flushes per event. Dropping
/// it cancels the request still feeding it (2026-07-28); a legacy session's
/// stream stays resumable.
///
/// ```
/// use ferromcp::server::Server;
/// use ferromcp::transport::http::{EndpointOptions, HttpEndpoint};
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let endpoint = HttpEndpoint::new(Server::new("demo", "1.0.0"), EndpointOptions::default());
/// let request = http::Request::get("/elsewhere")
///     .body(http_body_util::Empty::<bytes::Bytes>::new())
///     .unwrap();
/// let mut body = endpoint.handle(request).await.into_body();
/// assert!(!body.is_stream());
/// assert_eq!(body.next_chunk().await.unwrap(), "not found");
/// assert!(body.next_chunk().await.is_none());
/// # }
/// ```
pub struct McpBody(Inner);

enum Inner {
    Full(Option<Bytes>),
    /// Frames from a bounded queue: a feeder waits while the client does
    /// not read, so nothing piles up here.
    Stream {
        frames: mpsc::Receiver<Bytes>,
        _cancel_on_drop: DropGuard,
    },
}

impl McpBody {
    /// The next chunk, `None` at the end of the body.
    pub async fn next_chunk(&mut self) -> Option<Bytes> {
        match &mut self.0 {
            Inner::Full(data) => data.take(),
            Inner::Stream { frames, .. } => frames.recv().await,
        }
    }

    /// Whether this is an SSE stream (its chunks come over time) rather
    /// than a complete buffer.
    pub fn is_stream(&self) -> bool {
        matches!(self.0, Inner::Stream { .. })
    }
}

impl std::fmt::Debug for McpBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.is_stream() {
            "McpBody::Stream"
        } else {
            "McpBody::Full"
        })
    }
}

impl Body for McpBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        match &mut self.get_mut().0 {
            Inner::Full(data) => Poll::Ready(data.take().map(|d| Ok(Frame::data(d)))),
            Inner::Stream { frames, .. } => frames
                .poll_recv(cx)
                .map(|frame| frame.map(|d| Ok(Frame::data(d)))),
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.0, Inner::Full(None))
    }

    fn size_hint(&self) -> SizeHint {
        match &self.0 {
            Inner::Full(Some(d)) => SizeHint::with_exact(d.len() as u64),
            Inner::Full(None) => SizeHint::with_exact(0),
            Inner::Stream { .. } => SizeHint::default(),
        }
    }
}

/// A short plain-text response, for answers outside JSON-RPC.
pub(super) fn plain(status: StatusCode, text: &'static str) -> Response<McpBody> {
    let mut response = Response::new(McpBody(Inner::Full(Some(Bytes::from_static(
        text.as_bytes(),
    )))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// A health probe's answer: `{"status": "..."}`, never cached.
pub(super) fn health_answer(status: StatusCode, state: &'static str) -> Response<McpBody> {
    let body = match state {
        "ok" => &br#"{"status":"ok"}"#[..],
        "ready" => br#"{"status":"ready"}"#,
        _ => br#"{"status":"draining"}"#,
    };
    let mut response = Response::new(McpBody(Inner::Full(Some(Bytes::from_static(body)))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// A response without a body.
pub(super) fn empty(status: StatusCode) -> Response<McpBody> {
    let mut response = Response::new(McpBody(Inner::Full(None)));
    *response.status_mut() = status;
    response
}

/// A JSON response carrying one message.
pub(super) fn json_response(
    status: StatusCode,
    message: &(impl serde::Serialize + ?Sized),
) -> Response<McpBody> {
    json_bytes_response(status, serde_json::to_vec(message).unwrap_or_default())
}

/// A JSON response whose message is already serialised (a reply written by
/// `ReplyMessage::to_json_bytes`, which sizes its buffer once).
pub(super) fn json_bytes_response(status: StatusCode, body: Vec<u8>) -> Response<McpBody> {
    let mut response = Response::new(McpBody(Inner::Full(Some(Bytes::from(body)))));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A JSON-RPC error response with the given HTTP status.
pub(super) fn jsonrpc_error(
    status: StatusCode,
    id: Option<RequestId>,
    error: McpError,
) -> Response<McpBody> {
    json_response(status, &error_value(id.as_ref(), &error))
}

/// The response to a request refused before it ran.
pub(super) fn rejection_response(rejection: Rejection) -> Response<McpBody> {
    let status = StatusCode::from_u16(rejection.http_status).unwrap_or(StatusCode::BAD_REQUEST);
    json_response(status, &rejection.to_message())
}

/// An SSE response fed from `frames`; dropping the body drops `guard`.
pub(super) fn sse_response(frames: mpsc::Receiver<Bytes>, guard: DropGuard) -> Response<McpBody> {
    let mut response = Response::new(McpBody(Inner::Stream {
        frames,
        _cancel_on_drop: guard,
    }));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_content_type(value: &[u8]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_bytes(value).unwrap(),
        );
        headers
    }

    #[test]
    fn json_content_type_allows_parameters_case_and_white_space() {
        for accepted in [
            &b"application/json"[..],
            b"Application/JSON",
            b"application/json; charset=utf-8",
            b"application/json\t;charset=utf-8",
        ] {
            assert!(is_json_content_type(&with_content_type(accepted)));
        }
        for refused in [
            &b"text/plain"[..],
            b"application/jsonx",
            b"application/json-seq",
            b"; application/json",
            // Not visible ASCII: refused whatever follows the `;`.
            b"application/json; x=\xc3\xa9",
        ] {
            assert!(!is_json_content_type(&with_content_type(refused)));
        }
        assert!(!is_json_content_type(&HeaderMap::new()));
    }
}
