//! The echo example, tested the way the README says a server is tested: a
//! client of the same process (`Client::in_memory`), no process, no socket.
//! The conformance suite drives the `echo-server` binary as a process.

use ferromcp::client::Client;
use serde_json::{Value, json};

fn text(result: &ferromcp::protocol::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn echo_echoes_and_add_adds_or_says_why_not() {
    let server = ferromcp_examples::echo::build_server().unwrap();
    let client = Client::in_memory(&server);
    let mut names: Vec<String> = client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|tool| tool.name)
        .collect();
    names.sort();
    assert_eq!(names, ["add", "echo"]);
    let echoed = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "hi");
    let sum = client
        .call_tool("add", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    assert_eq!(sum.structured_content, Some(json!({"result": 5})));
    // Tool errors, not protocol errors: the model reads why.
    let overflow = client
        .call_tool("add", json!({"a": i64::MAX, "b": 1}))
        .await
        .unwrap();
    assert_eq!(overflow.is_error, Some(true));
    assert!(
        text(&overflow).contains("does not fit"),
        "{}",
        text(&overflow)
    );
    let wrong = client
        .call_tool("add", json!({"a": "two", "b": 3}))
        .await
        .unwrap();
    assert_eq!(wrong.is_error, Some(true));
    let unknown = client.call_tool("nope", Value::Null).await;
    assert!(unknown.is_err());
}
