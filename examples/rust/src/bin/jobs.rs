//! The README's tasks and skills server in Rust: a long render reporting
//! progress, a deploy that asks first, and the skills of examples/skills,
//! served over stdio.

use std::time::Duration;

use ferromcp::protocol::Implementation;
use ferromcp::protocol::Tool;
use ferromcp::server::{
    HandlerError, RequestContext, Server, ServerOptions, TaskOptions, TaskStart, TaskSupport,
    ToolOutput, ToolTaskOptions,
};
use serde_json::{Value, json};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = ServerOptions {
        tasks: TaskOptions {
            ttl: Some(Duration::from_secs(600)),
            ..TaskOptions::default()
        },
        ..ServerOptions::default()
    };
    let server = Server::with_options(Implementation::new("jobs", "1.0.0"), options);
    // A client that declares the tasks extension gets a task at once and
    // follows it; others get the result when the handler returns.
    let as_task = ToolTaskOptions {
        support: TaskSupport::Optional,
        start: TaskStart::OnCall,
    };
    let pages = json!({"type": "object", "properties": {"pages": {"type": "integer"}}});
    server.add_tool_with(
        Tool::new("render", pages).with_description("Renders the pages."),
        as_task,
        |ctx: RequestContext, args: Value| async move {
            let pages = args["pages"].as_u64().unwrap_or(1);
            for page in 1..=pages {
                tokio::time::sleep(Duration::from_millis(20)).await;
                // In a task: the task's status message, "Rendering (3/10)".
                ctx.progress(page as f64, Some(pages as f64), Some("Rendering"));
            }
            Ok::<_, HandlerError>(ToolOutput::text(format!("rendered {pages} pages")))
        },
    )?;
    let env = json!({"type": "object", "properties": {"env": {"type": "string"}}});
    server.add_tool_with(
        Tool::new("deploy", env).with_description("Asks before deploying."),
        as_task,
        |ctx: RequestContext, args: Value| async move {
            let env = args["env"].as_str().unwrap_or("staging").to_owned();
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
            // The question waits in the task (`inputRequests["confirm"]`).
            let answer = ctx
                .elicit_as(Some("confirm"), &format!("Deploy to {env}?"), schema)
                .await?;
            let ok = answer["action"] == "accept" && answer["content"]["ok"] == true;
            Ok(ToolOutput::text(if ok {
                format!("deployed to {env}")
            } else {
                "kept".into()
            }))
        },
    )?;
    server.add_skills_dir("examples/skills")?;
    server.run_stdio().await?;
    Ok(())
}
