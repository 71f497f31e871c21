//! `Client::in_memory`: a client of a server of the same process, over an
//! in-memory pipe, speaking the whole protocol (the way to test a server
//! without a socket): calls, multi round-trip questions, listen streams,
//! tasks.

use ferromcp::client::{CallOptions, Client, ClientOptions, EraPreference};
use ferromcp::protocol::{SubscriptionFilter, Tool};
use ferromcp::server::{
    InputKind, RequestContext, Server, TaskSupport, ToolOutput, ToolTaskOptions,
};
use serde_json::{Value, json};
use std::time::Duration;

fn server() -> Server {
    let server = Server::new("memory", "1.0.0");
    server
        .add_tool(Tool::new("ask", json!({"type": "object"})), |ctx: RequestContext, _args| async move {
            let answer = ctx
                .ask(
                    Some("name"),
                    InputKind::Elicitation,
                    json!({"mode": "form", "message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
                )
                .await?;
            Ok(ToolOutput::text(format!("hi {}", answer["content"]["name"].as_str().unwrap_or(""))))
        })
        .unwrap();
    server
        .add_tool_with(
            Tool::new("slow", json!({"type": "object"})),
            ToolTaskOptions {
                support: TaskSupport::Required,
                ..Default::default()
            },
            |_ctx: RequestContext, _args: Value| async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                Ok(ToolOutput::text("done"))
            },
        )
        .unwrap();
    server
}

fn answering(era: EraPreference) -> ClientOptions {
    ClientOptions {
        era,
        ..ClientOptions::default()
    }
    .on_elicitation(|_params| async { Ok(json!({"action": "accept", "content": {"name": "Ada"}})) })
}

fn text(result: &ferromcp::protocol::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn an_in_memory_client_speaks_the_whole_protocol_in_either_era() {
    let server = server();
    for era in [EraPreference::Auto, EraPreference::Legacy] {
        let client = Client::in_memory_with(&server, answering(era));
        let asked = client.call_tool("ask", json!({})).await.unwrap();
        assert_eq!(text(&asked), "hi Ada", "{era:?}");
    }

    let client = Client::in_memory_with(&server, answering(EraPreference::Auto));
    // Tasks: the call becomes a task, followed to its end.
    let task = client
        .start_tool_task("slow", json!({}), &CallOptions::default())
        .await
        .unwrap();
    assert!(task.id().is_some());
    assert_eq!(text(&task.result().await.unwrap()), "done");

    // A listen stream hears a change made after it was acknowledged.
    let mut listening = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .unwrap();
    server
        .add_tool(
            Tool::new("later", json!({"type": "object"})),
            |_ctx, _args: Value| async { Ok(ToolOutput::text("later")) },
        )
        .unwrap();
    let note = tokio::time::timeout(Duration::from_secs(5), listening.next())
        .await
        .expect("the change is heard")
        .expect("a notification");
    assert_eq!(note.method, "notifications/tools/list_changed");
}
