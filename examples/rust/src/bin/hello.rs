//! The README's Rust server: one tool, `echo`, served over stdio.

use ferromcp::protocol::Tool;
use ferromcp::server::{Server, ToolOutput};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::new("ferromcp-echo", "1.0.0");
    let schema = json!({
        "type": "object",
        "properties": {"text": {"type": "string"}},
        "required": ["text"]
    });
    server.add_tool(
        Tool::new("echo", schema).with_description("Returns the text unchanged."),
        // The server validated the arguments against the schema: `text` is a string.
        |_ctx, args: Value| async move { Ok(ToolOutput::Value(args["text"].clone())) },
    )?;
    // Until stdin ends, SIGTERM or Ctrl-C (a graceful shutdown).
    server.run_stdio().await?;
    Ok(())
}
