//! A handler can read the headers of the HTTP request that carried its
//! request (`RequestContext::http_headers`): tenant ids, tracing headers,
//! auth set by a proxy. Over stdio there are none.

use ferromcp_testkit as common;

use common::{Http, Stdio, request};
use ferromcp::protocol::Tool;
use ferromcp::server::{RequestContext, Server, ToolOutput};
use serde_json::{Value, json};

/// `probe` answers with the `X-Probe` header it saw, or "none".
fn server() -> Server {
    let server = Server::new("headers", "1.0.0");
    server
        .add_tool(
            Tool::new("probe", json!({"type": "object"})),
            |ctx: RequestContext, _args: Value| async move {
                let seen = ctx
                    .http_headers()
                    .and_then(|h| h.get("x-probe"))
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("none")
                    .to_owned();
                Ok(ToolOutput::text(seen))
            },
        )
        .unwrap();
    server
}

fn probe() -> Value {
    request(1, "tools/call", json!({"name": "probe", "arguments": {}}))
}

#[tokio::test]
async fn a_handler_sees_the_http_request_headers() {
    let http = Http::start(server()).await;
    let reply = http
        .post_with(&probe(), &[("X-Probe", "tenant-7".into())])
        .await;
    let response = reply.response();
    assert_eq!(
        response["result"]["content"][0]["text"], "tenant-7",
        "{response}"
    );
}

#[tokio::test]
async fn over_stdio_a_handler_sees_no_headers() {
    let mut stdio = Stdio::start(server());
    let response = stdio.call(probe()).await;
    assert_eq!(
        response["result"]["content"][0]["text"], "none",
        "{response}"
    );
}
