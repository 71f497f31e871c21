//! The README's middleware, visibility and in-memory testing example: a
//! link that refuses a tool call, a rule that shows the admin tool only to
//! admins, clients in the same process checking both, and a client link
//! filling in what a call lacks.

use ferromcp::McpError;
use ferromcp::client::{CallNext, CallRequest, Client, ClientOptions};
use ferromcp::protocol::{Implementation, Tool};
use ferromcp::server::middleware::builtin::MaskErrors;
use ferromcp::server::{MiddlewareRequest, Next, RequestMeta, Server, ToolOutput, Visible};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::new("policies", "1.0.0");
    for name in ["search", "purge"] {
        server.add_tool(
            Tool::new(name, json!({"type": "object"})),
            move |_ctx, _args: Value| async move { Ok(ToolOutput::text(format!("{name}: done"))) },
        )?;
    }
    // Middleware: around every request, in order; this one refuses empty searches.
    server.add_middleware(|request: MiddlewareRequest, next: Next| async move {
        let query = request.params.get("arguments").and_then(|a| a.get("q"));
        if request.name() == Some("search") && query.is_none() {
            return Err(McpError::invalid_params("search needs a query"));
        }
        next.run(request).await
    });
    server.add_middleware(MaskErrors::default());
    // Visibility: `purge` exists only for the client named "admin" (a real
    // server would look at `meta.auth`: the token's subject and scopes).
    server.set_visibility(|meta: &RequestMeta, item: Visible<'_>| {
        let admin = meta
            .client_info
            .as_ref()
            .is_some_and(|info| info.get().contains("\"admin\""));
        admin || item != Visible::Tool("purge")
    });

    // Tests without a socket: clients in this process.
    for who in ["guest", "admin"] {
        let options = ClientOptions {
            info: Implementation::new(who, "1.0.0"),
            ..ClientOptions::default()
        };
        let client = Client::in_memory_with(&server, options);
        let tools: Vec<String> = client
            .list_all_tools()
            .await?
            .into_iter()
            .map(|t| t.name)
            .collect();
        println!("{who} sees {tools:?}");
    }
    let client = Client::in_memory(&server);
    match client.call_tool("search", json!({})).await {
        Err(error) => println!("refused: {error}"),
        Ok(_) => println!("not refused"),
    }
    // Client middleware: around every request this client sends; this one
    // fills in a missing query and reads the answer.
    client.add_middleware(|mut call: CallRequest, next: CallNext| async move {
        if let Some(Value::Object(arguments)) = call.params.get_mut("arguments") {
            arguments.entry("q").or_insert(json!("anything"));
        }
        let method = call.method.clone();
        let result = next.run(call).await?;
        println!("{method} answered {}", result["content"][0]["text"]);
        Ok(result)
    });
    client.call_tool("search", json!({})).await?;
    Ok(())
}
