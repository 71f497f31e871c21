//! A response body that a host's own HTTP server reads one chunk per call
//! (an ASGI `receive`/`send` loop, a Node stream's `read`), until its end or
//! until the host gives up on the exchange.

use bytes::Bytes;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

use crate::transport::http::McpBody;

/// The next chunk of the body in `slot`; `None` at its end, once `cancel`
/// fired (the client went away) or when there is no body. At `None` the
/// body is dropped, which cancels whatever still fed it (a request still
/// running for an SSE stream).
///
/// ```
/// use ferromcp::host::http_body::next_chunk;
/// use tokio::sync::Mutex;
/// use tokio_util::sync::CancellationToken;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let empty = Mutex::new(None);
/// assert_eq!(next_chunk(&empty, &CancellationToken::new()).await, None);
/// # }
/// ```
pub async fn next_chunk(
    slot: &Mutex<Option<McpBody>>,
    cancel: &CancellationToken,
) -> Option<Bytes> {
    let mut body = slot.lock().await;
    let chunk = match body.as_mut() {
        Some(body) => tokio::select! {
            chunk = body.next_chunk() => chunk,
            _ = cancel.cancelled() => None,
        },
        None => None,
    };
    if chunk.is_none() {
        body.take();
    }
    chunk
}
