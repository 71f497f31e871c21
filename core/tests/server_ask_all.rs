//! `RequestContext::ask_all`: asks a host handler makes together (JS
//! `Promise.all`, Python `asyncio.gather`) reach core as one call, so under
//! 2026-07-28 they land in one round (spec: docs/basic/patterns/mrtr.mdx
//! "InputRequests": a server MAY request several inputs at once).

use ferromcp_testkit as common;

use common::{Stdio, meta_all_caps, request_with_meta, server_with};
use ferromcp::protocol::Tool;
use ferromcp::server::{HandlerError, InputKind, RequestContext, ServerOptions, ToolOutput};
use serde_json::{Value, json};

fn server() -> ferromcp::server::Server {
    let server = server_with(ServerOptions::default());
    server
        .add_tool(
            Tool::new("together", json!({"type": "object"})),
            |ctx: RequestContext, _args: Value| async move {
                let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
                let answers = ctx
                    .ask_all(vec![
                        (
                            Some("user_name".into()),
                            InputKind::Elicitation,
                            json!({"mode": "form", "message": "Name?", "requestedSchema": schema}),
                        ),
                        (Some("client_roots".into()), InputKind::Roots, json!({})),
                    ])
                    .await;
                let mut texts = Vec::new();
                for answer in answers {
                    texts.push(answer?.to_string());
                }
                Ok::<_, HandlerError>(ToolOutput::text(texts.join(" | ")))
            },
        )
        .unwrap();
    server
}

fn call(id: i64, extra: Value) -> Value {
    let mut params = json!({"name": "together"});
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    request_with_meta(id, "tools/call", params, meta_all_caps())
}

// mrtr.mdx "InputRequests": several inputs requested in one round
#[tokio::test]
async fn mrtr_asks_made_together_land_in_one_round_and_answer_in_order() {
    let mut io = Stdio::start(server());
    let round1 = io.call(call(1, json!({}))).await;
    let result = &round1["result"];
    assert_eq!(result["resultType"], "input_required", "{round1}");
    let mut keys: Vec<&String> = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    keys.sort();
    assert_eq!(keys, ["client_roots", "user_name"]);

    let done = io
        .call(call(
            2,
            json!({
                "requestState": result["requestState"],
                "inputResponses": {
                    "user_name": {"action": "accept", "content": {"name": "Ada"}},
                    "client_roots": {"roots": []}
                }
            }),
        ))
        .await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        r#"{"action":"accept","content":{"name":"Ada"}} | {"roots":[]}"#,
        "{done}"
    );
}

// mrtr.mdx "Error Handling": an ask the client cannot answer fails at once
#[tokio::test]
async fn mrtr_ask_all_without_the_capability_fails_that_ask_with_32021() {
    let mut io = Stdio::start(server());
    let meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    });
    let reply = io
        .call(request_with_meta(
            1,
            "tools/call",
            json!({"name": "together"}),
            meta,
        ))
        .await;
    // The elicitation is recorded, the roots ask fails: the round still
    // asks for what the client can give.
    assert_eq!(reply["result"]["resultType"], "input_required", "{reply}");
    assert_eq!(
        reply["result"]["inputRequests"].as_object().unwrap().len(),
        1,
        "{reply}"
    );
}
