//! The protected server the OAuth end-to-end tests log in to: `whoami`
//! answers with the token's subject and scopes (so a test sees which
//! identity and grant reached the tool), and one more tool requires the
//! `notes:write` scope (so a test sees a 403 and the client's step-up).
//! Include with `#[path = "common/protected.rs"] mod protected;`.

use ferromcp::protocol::Tool;
use ferromcp::server::auth::ScopeTarget;
use ferromcp::server::{RequestContext, Server, ToolOutput};
use serde_json::{Value, json};

/// The server, with `scoped_tool` (answering `answer`) requiring
/// `notes:write`.
pub fn server(scoped_tool: &str, answer: &'static str) -> Server {
    let server = Server::new("protected", "1.0.0");
    server
        .add_tool(
            Tool::new("whoami", json!({"type": "object"})),
            |ctx: RequestContext, _args: Value| async move {
                let auth = ctx.auth().expect("a protected request has claims");
                Ok(ToolOutput::text(format!(
                    "{} {}",
                    auth.subject.clone().unwrap_or_default(),
                    auth.scopes.join(",")
                )))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new(scoped_tool, json!({"type": "object"})),
            move |_ctx: RequestContext, _args: Value| async move { Ok(ToolOutput::text(answer)) },
        )
        .unwrap();
    server.require_scopes(ScopeTarget::Tool, scoped_tool, ["notes:write"]);
    server
}
