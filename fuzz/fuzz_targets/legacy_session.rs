//! The legacy (2025-11-25) session path through the real endpoint. The
//! first line is the `initialize` body; if it opens a session, every later
//! line is a message POSTed with its `Mcp-Session-Id` (a line `GET` opens
//! the standalone stream, `DELETE` ends the session, `OTHER` switches to a
//! made-up session id). The session is deleted at the end, so sessions do
//! not pile up between inputs.
#![no_main]

use bytes::Bytes;
use ferromcp_fuzz::{check_answer, endpoint, runtime, send};
use http::{Method, Request};
use http_body_util::Full;
use libfuzzer_sys::fuzz_target;

fn request(method: Method, session: Option<&str>, body: &[u8]) -> Request<Full<Bytes>> {
    let mut builder = Request::builder()
        .method(method)
        .uri("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25");
    if let Some(id) = session {
        builder = builder.header("mcp-session-id", id);
    }
    builder
        .body(Full::new(Bytes::copy_from_slice(body)))
        .expect("a valid request")
}

fuzz_target!(|data: &[u8]| {
    let addr = endpoint();
    let mut lines = data.split(|&b| b == b'\n');
    let init = lines.next().unwrap_or_default();
    runtime().block_on(async {
        let Some(answer) = send(addr, request(Method::POST, None, init)).await else {
            return;
        };
        check_answer(&answer);
        let Some(session) = answer
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
        else {
            return;
        };
        let mut current = session.clone();
        for line in lines {
            let sent = match line {
                b"GET" => request(Method::GET, Some(&current), b""),
                b"DELETE" => request(Method::DELETE, Some(&current), b""),
                b"OTHER" => {
                    current = "not-a-session".into();
                    continue;
                }
                body => request(Method::POST, Some(&current), body),
            };
            if let Some(answer) = send(addr, sent).await {
                check_answer(&answer);
            }
        }
        let _ = send(addr, request(Method::DELETE, Some(&session), b"")).await;
    });
});
