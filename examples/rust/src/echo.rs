//! The walking-skeleton server: `echo` and `add`.

use ferromcp::protocol::Tool;
use ferromcp::server::{HandlerError, Server, ToolOutput};
use serde_json::{Value, json};

/// The echo server: `echo` returns its text, `add` adds two integers
/// (with an output schema).
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), ferromcp::Error> {
/// let server = ferromcp_examples::echo::build_server()?;
/// let client = ferromcp::client::Client::in_memory(&server);
/// let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
/// assert_eq!(serde_json::to_value(&result.content)?[0]["text"], "hi");
/// # Ok(()) }
/// ```
pub fn build_server() -> Result<Server, ferromcp::Error> {
    let server = Server::new("ferromcp-echo", "1.0.0");
    server.add_tool(
        Tool::new(
            "echo",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        )
        .with_description("Returns the text unchanged."),
        |_ctx, args: Value| async move {
            // The input schema was validated by the server, so `text` is a string.
            Ok(ToolOutput::Value(args["text"].clone()))
        },
    )?;
    server.add_tool(
        Tool::new(
            "add",
            json!({
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"]
            }),
        )
        .with_description("Adds two integers.")
        .with_output_schema(json!({
            "type": "object",
            "properties": {"result": {"type": "integer"}},
            "required": ["result"]
        })),
        |_ctx, args: Value| async move {
            let (Some(a), Some(b)) = (args["a"].as_i64(), args["b"].as_i64()) else {
                return Err(HandlerError::tool("a and b must be integers"));
            };
            let sum = a
                .checked_add(b)
                .ok_or_else(|| HandlerError::tool("the sum does not fit in 64 bits"))?;
            Ok(ToolOutput::Value(json!(sum)))
        },
    )?;
    Ok(server)
}
