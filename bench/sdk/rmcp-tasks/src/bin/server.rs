//! A task server on the official MCP Rust SDK (rmcp 3.11), the peer that
//! ferromcp's client is tested against (core/tests/rmcp_tasks_peer.rs, run
//! by `make test-rmcp-tasks`).
//!
//!     rmcp-tasks-server PORT   # Streamable HTTP at http://127.0.0.1:PORT/mcp
//!
//! rmcp 3.11 implements the tasks extension (SEP-2663,
//! `io.modelcontextprotocol/tasks`) with its `TaskManager`: a `tools/call`
//! may be answered with a `CreateTaskResult`, and the handler serves
//! `tasks/get`, `tasks/update` and `tasks/cancel` from the manager. The SDK
//! does not decide which calls become tasks; `call_tool` below does, the way
//! the SDK's own tests/test_task.rs does. The tools:
//!
//! - `delayed_echo {text, delay_ms?}`: a task completing with `echo: TEXT`;
//! - `tool_error`: a task completing with a tool error (`isError: true`);
//! - `failing_task`: a task failing with a JSON-RPC error (status `failed`);
//! - `slow_task {seconds?}`: a task sleeping (default 60 s) that stops as
//!   `cancelled` on `tasks/cancel`;
//! - `ask_name`: a task asking for a name (an `elicitation/create` in its
//!   `inputRequests`, answered with `tasks/update`), then greeting it;
//! - `instant_echo {text}`: never a task, the plain result at once.
//!
//! The server is stateless (no legacy sessions): every HTTP request gets a
//! fresh handler, so they all share one `TaskManager`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelTaskParams, ContentBlock,
    CreateTaskResult, GetTaskParams, GetTaskResult, InputRequest, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData as McpError, ServerHandler};
use serde_json::{Value, json};

/// Polls this often: the tests wait on tasks lasting a fraction of a second.
const POLL_INTERVAL_MS: u64 = 50;

#[derive(Clone)]
struct TaskServer {
    tasks: TaskManager,
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn text_schema() -> Arc<JsonObject> {
    schema(json!({
        "type": "object",
        "properties": {"text": {"type": "string"}, "delay_ms": {"type": "integer", "minimum": 0}},
        "required": ["text"]
    }))
}

fn tools() -> Vec<Tool> {
    let empty = || schema(json!({"type": "object", "properties": {}}));
    vec![
        Tool::new(
            "delayed_echo",
            "Echoes `text` as a task after `delay_ms` (200 by default)",
            text_schema(),
        ),
        Tool::new(
            "tool_error",
            "A task that completes with isError: true",
            empty(),
        ),
        Tool::new(
            "failing_task",
            "A task that fails with a JSON-RPC error",
            empty(),
        ),
        Tool::new(
            "slow_task",
            "A task sleeping `seconds` (60 by default); stops on tasks/cancel",
            schema(json!({"type": "object", "properties": {"seconds": {"type": "number"}}})),
        ),
        Tool::new(
            "ask_name",
            "A task asking for a name through tasks/update, then greeting it",
            empty(),
        ),
        Tool::new(
            "instant_echo",
            "Echoes `text` at once (never a task)",
            text_schema(),
        ),
    ]
}

fn text(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

impl TaskServer {
    /// Starts `name` as a task; `None` for tools that are not tasks.
    fn start(&self, name: &str, args: &JsonObject) -> Option<CreateTaskResult> {
        let options = TaskOptions::new().with_poll_interval_ms(POLL_INTERVAL_MS);
        let task = match name {
            "delayed_echo" => {
                let echoed = format!("echo: {}", args.get("text").and_then(Value::as_str)?);
                let delay = args.get("delay_ms").and_then(Value::as_u64).unwrap_or(200);
                self.tasks.spawn(options, move |_ctx| {
                    Box::pin(async move {
                        tokio::time::sleep(Duration::from_millis(delay)).await;
                        Ok(text(echoed))
                    })
                })
            }
            "tool_error" => self.tasks.spawn(options, |_ctx| {
                Box::pin(async {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Ok(CallToolResult::error(vec![ContentBlock::text(
                        "the job failed: bad input",
                    )]))
                })
            }),
            "failing_task" => self.tasks.spawn(options, |_ctx| {
                Box::pin(async {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    Err(TaskExit::Error(McpError::internal_error(
                        "the job hit an internal error",
                        None,
                    )))
                })
            }),
            "slow_task" => {
                let seconds = args
                    .get("seconds")
                    .and_then(Value::as_f64)
                    .unwrap_or(60.0)
                    .clamp(0.0, 3600.0);
                self.tasks
                    .spawn(options.with_status_message("sleeping"), move |ctx| {
                        Box::pin(async move {
                            // Cancellation is cooperative in rmcp: the operation
                            // decides to stop and says so with TaskExit::Cancelled.
                            tokio::select! {
                                () = ctx.cancelled() => Err(TaskExit::Cancelled),
                                () = tokio::time::sleep(Duration::from_secs_f64(seconds)) => {
                                    Ok(text(format!("slept {seconds} s")))
                                }
                            }
                        })
                    })
            }
            "ask_name" => self.tasks.spawn(options, |ctx| {
                Box::pin(async move {
                    let request: InputRequest = serde_json::from_value(json!({
                        "method": "elicitation/create",
                        "params": {
                            "mode": "form",
                            "message": "What is your name?",
                            "requestedSchema": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}},
                                "required": ["name"]
                            }
                        }
                    }))
                    .map_err(|e| McpError::internal_error(e.to_string(), None))?;
                    let answer = ctx.request_input("name", request).await?;
                    let name = match answer["action"].as_str() {
                        Some("accept") => answer["content"]["name"].as_str().unwrap_or("?"),
                        _ => "stranger",
                    };
                    Ok(text(format!("hello {name}")))
                })
            }),
            _ => return None,
        };
        Some(CreateTaskResult::new(task))
    }
}

impl ServerHandler for TaskServer {
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        let name = request.name.as_ref();
        if !tools().iter().any(|tool| tool.name == name) {
            return Err(McpError::invalid_params(
                format!("unknown tool {name}"),
                None,
            ));
        }
        // SEP-2663: a task only for a request that declared the extension
        // (rmcp refuses a task for the others itself, with -32021).
        let tasks_declared = context
            .client_capabilities()
            .is_some_and(|caps| caps.supports_tasks());
        if name != "instant_echo" && tasks_declared {
            return match self.start(name, &args) {
                Some(created) => Ok(CallToolResponse::Task(created)),
                None => Err(McpError::invalid_params("missing `text`", None)),
            };
        }
        match name {
            "instant_echo" | "delayed_echo" => match args.get("text").and_then(Value::as_str) {
                Some(echoed) => Ok(CallToolResponse::Complete(text(format!("echo: {echoed}")))),
                None => Err(McpError::invalid_params("missing `text`", None)),
            },
            _ => Err(McpError::invalid_params(
                format!("{name} runs only as a task (declare io.modelcontextprotocol/tasks)"),
                None,
            )),
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(tools()))
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        Ok(GetTaskResult::new(self.tasks.get_task(&request.task_id)?))
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks
            .update_task(&request.task_id, request.input_responses)
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        self.tasks.cancel_task(&request.task_id)
    }

    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tasks()
                .build(),
        )
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [port] = args.as_slice() else {
        eprintln!("usage: rmcp-tasks-server PORT");
        std::process::exit(2);
    };
    let port: u16 = port.parse()?;
    let tasks = TaskManager::new();
    let service = StreamableHttpService::new(
        move || {
            Ok(TaskServer {
                tasks: tasks.clone(),
            })
        },
        Arc::new(NeverSessionManager::default()),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("rmcp-tasks-server listening on http://127.0.0.1:{port}/mcp");
    axum::serve(listener, router).await?;
    Ok(())
}
