//! The conformance fixture server: every tool, resource, prompt and
//! completion the official MCP conformance suite calls, implemented for real
//! on the ferromcp Rust API.
//!
//! Usage: `everything-server PORT` serves Streamable HTTP at
//! `http://127.0.0.1:PORT/mcp`; `everything-server --stdio` serves stdio.

use ferromcp::McpError;
use ferromcp::protocol::{
    Implementation, Prompt, PromptArgument, Resource, ResourceTemplate, Tool,
};
use ferromcp::server::{
    CompletionOutput, HandlerError, InputKind, LoggingLevel, PromptOutput, RequestContext,
    ResourceOutput, ResourceRequest, Server, ServerOptions, TaskStart, TaskSupport, ToolOutput,
    ToolTaskOptions,
};
use ferromcp::transport::http::HttpOptions;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A 1x1 transparent PNG.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
/// A silent, empty 44.1 kHz mono WAV.
const WAV_BASE64: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

fn string_args(names: &[&str]) -> Value {
    let mut properties = Map::new();
    for name in names {
        properties.insert((*name).into(), json!({"type": "string"}));
    }
    json!({"type": "object", "properties": properties, "required": names})
}

fn result(content: Value) -> ToolOutput {
    let mut map = Map::new();
    map.insert("content".into(), content);
    ToolOutput::Result(map)
}

fn text_of(answer: &Value) -> String {
    match &answer["content"] {
        Value::Object(c) => c
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        Value::Array(items) => items
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

fn sampling_params(prompt: &str) -> Value {
    json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": 100
    })
}

fn name_schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

fn elicit_params(message: &str, schema: Value) -> Value {
    json!({"mode": "form", "message": message, "requestedSchema": schema})
}

fn add_content_tools(server: &Server) -> Result<(), ferromcp::Error> {
    server.add_tool(
        Tool::new("test_simple_text", no_args()).with_description("Returns a simple text response"),
        |_ctx, _args| async {
            Ok(ToolOutput::text(
                "This is a simple text response for testing.",
            ))
        },
    )?;
    server.add_tool(
        Tool::new("test_image_content", no_args()).with_description("Returns an image"),
        |_ctx, _args| async {
            Ok(result(
                json!([{"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}]),
            ))
        },
    )?;
    server.add_tool(
        Tool::new("test_audio_content", no_args()).with_description("Returns audio"),
        |_ctx, _args| async {
            Ok(result(
                json!([{"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"}]),
            ))
        },
    )?;
    server.add_tool(
        Tool::new("test_embedded_resource", no_args())
            .with_description("Returns an embedded resource"),
        |_ctx, _args| async {
            Ok(result(json!([{"type": "resource", "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content."
            }}])))
        },
    )?;
    server.add_tool(
        Tool::new("test_multiple_content_types", no_args())
            .with_description("Returns text, an image and an embedded resource"),
        |_ctx, _args| async {
            Ok(result(json!([
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"},
                {"type": "resource", "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}"
                }}
            ])))
        },
    )?;
    server.add_tool(
        Tool::new("test_error_handling", no_args())
            .with_description("Always fails as a tool error"),
        |_ctx, _args| async {
            Err::<ToolOutput, _>(HandlerError::tool(
                "This tool intentionally returns an error for testing",
            ))
        },
    )?;
    server.add_tool(
        Tool::new("test_tool_with_progress", no_args()).with_description("Reports progress"),
        |ctx: RequestContext, _args| async move {
            for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.progress(step, Some(100.0), Some(&format!("step {}", i + 1)));
            }
            Ok(ToolOutput::text("Progress test completed"))
        },
    )?;
    server.add_tool(
        Tool::new("test_tool_with_logging", no_args()).with_description("Logs while it runs"),
        |ctx: RequestContext, _args| async move {
            for (i, message) in [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ]
            .into_iter()
            .enumerate()
            {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                ctx.log(
                    LoggingLevel::Info,
                    json!(message),
                    Some("everything-server"),
                );
            }
            Ok(ToolOutput::text("Logging test completed"))
        },
    )?;
    server.add_tool(
        Tool::new("test_logging_tool", no_args())
            .with_description("Logs only when the request asks for a log level"),
        |ctx: RequestContext, _args| async move {
            let sent = ctx.log(LoggingLevel::Info, json!("test_logging_tool ran"), None);
            Ok(ToolOutput::text(if sent {
                "logged"
            } else {
                "no log level requested"
            }))
        },
    )?;
    server.add_tool(
        Tool::new("json_schema_2020_12_tool", json_schema_2020_12())
            .with_description("Carries a JSON Schema 2020-12 inputSchema"),
        |_ctx, _args| async { Ok(ToolOutput::text("ok")) },
    )?;
    server.add_tool(
        Tool::new(
            "test_custom_header",
            json!({"type": "object", "properties": {
                "value": {"type": "string", "x-mcp-header": "Value"}
            }, "required": ["value"]}),
        )
        .with_description("Mirrors its argument into the Mcp-Param-Value header"),
        |_ctx, args: Value| async move {
            Ok(ToolOutput::text(format!(
                "value: {}",
                args["value"].as_str().unwrap_or("")
            )))
        },
    )?;
    Ok(())
}

fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}
        }}},
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

fn add_client_input_tools(server: &Server) -> Result<(), ferromcp::Error> {
    server.add_tool(
        Tool::new("test_sampling", string_args(&["prompt"]))
            .with_description("Asks the client's model"),
        |ctx: RequestContext, args: Value| async move {
            let prompt = args["prompt"].as_str().unwrap_or_default();
            let answer = ctx.sample(sampling_params(prompt)).await?;
            Ok(ToolOutput::text(format!(
                "LLM response: {}",
                text_of(&answer)
            )))
        },
    )?;
    server.add_tool(
        Tool::new("test_elicitation", string_args(&["message"])).with_description("Asks the user"),
        |ctx: RequestContext, args: Value| async move {
            let message = args["message"].as_str().unwrap_or_default();
            let schema = json!({"type": "object", "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"}
            }, "required": ["username", "email"]});
            let answer = ctx.elicit(message, schema).await?;
            Ok(ToolOutput::text(format!(
                "User response: action={}, content={}",
                answer["action"].as_str().unwrap_or(""),
                answer.get("content").cloned().unwrap_or(json!({}))
            )))
        },
    )?;
    server.add_tool(
        Tool::new("test_elicitation_sep1034_defaults", no_args())
            .with_description("Asks the user with a schema whose fields have defaults"),
        |ctx: RequestContext, _args| async move {
            let schema = json!({"type": "object", "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": true}
            }});
            let answer = ctx.elicit("Please review your profile", schema).await?;
            Ok(ToolOutput::text(format!("Elicitation result: {answer}")))
        },
    )?;
    server.add_tool(
        Tool::new("test_elicitation_sep1330_enums", no_args())
            .with_description("Asks the user with every enum shape"),
        |ctx: RequestContext, _args| async move {
            let schema = json!({"type": "object", "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [
                    {"const": "value1", "title": "First Option"},
                    {"const": "value2", "title": "Second Option"},
                    {"const": "value3", "title": "Third Option"}
                ]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}
                ]}}
            }});
            let answer = ctx.elicit("Choose your options", schema).await?;
            Ok(ToolOutput::text(format!("Elicitation result: {answer}")))
        },
    )?;
    server.add_tool(
        Tool::new("test_reconnection", no_args()).with_description(
            "Closes its SSE connection mid-call; the result arrives on the resumed stream",
        ),
        |ctx: RequestContext, _args| async move {
            // Only the legacy HTTP wire has resumable streams; elsewhere this
            // is a no-op and the call simply completes.
            ctx.close_sse_stream();
            tokio::time::sleep(Duration::from_millis(100)).await;
            Ok(ToolOutput::text("Reconnection test completed"))
        },
    )?;
    server.add_tool(
        Tool::new("test_missing_capability", no_args())
            .with_description("Needs the client's sampling capability"),
        |ctx: RequestContext, _args| async move {
            // Without `sampling` the ask fails with -32021 naming it.
            let answer = ctx.sample(sampling_params("Say hello")).await?;
            Ok(ToolOutput::text(format!("Sampled: {}", text_of(&answer))))
        },
    )?;
    server.add_tool(
        Tool::new("test_streaming_elicitation", no_args())
            .with_description("Streams a log line, then asks the user through an input request"),
        |ctx: RequestContext, _args| async move {
            ctx.log(
                LoggingLevel::Info,
                json!("about to ask for confirmation"),
                None,
            );
            let answer = ctx
                .ask(
                    Some("confirmation"),
                    InputKind::Elicitation,
                    elicit_params(
                        "Continue?",
                        json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
                    ),
                )
                .await?;
            Ok(ToolOutput::text(format!("answer: {answer}")))
        },
    )?;
    Ok(())
}

fn add_input_required_tools(server: &Server) -> Result<(), ferromcp::Error> {
    server.add_tool(
        Tool::new("test_input_required_result_elicitation", no_args())
            .with_description("Asks for the user's name through an input request"),
        |ctx: RequestContext, _args| async move {
            let answer = ctx
                .ask(
                    Some("user_name"),
                    InputKind::Elicitation,
                    elicit_params("What is your name?", name_schema()),
                )
                .await?;
            let name = answer["content"]["name"].as_str().unwrap_or("stranger");
            Ok(ToolOutput::text(format!("Hello, {name}!")))
        },
    )?;
    server.add_tool(
        Tool::new("test_input_required_result_sampling", no_args())
            .with_description("Asks the client's model through an input request"),
        |ctx: RequestContext, _args| async move {
            let answer = ctx
                .ask(
                    Some("capital_question"),
                    InputKind::Sampling,
                    sampling_params("What is the capital of France?"),
                )
                .await?;
            Ok(ToolOutput::text(format!(
                "The model answered: {}",
                text_of(&answer)
            )))
        },
    )?;
    server.add_tool(
        Tool::new("test_input_required_result_list_roots", no_args())
            .with_description("Asks for the client's roots through an input request"),
        |ctx: RequestContext, _args| async move {
            let answer = ctx
                .ask(Some("client_roots"), InputKind::Roots, json!({}))
                .await?;
            let uris: Vec<&str> = answer["roots"]
                .as_array()
                .map(|r| r.iter().filter_map(|r| r["uri"].as_str()).collect())
                .unwrap_or_default();
            Ok(ToolOutput::text(format!(
                "Client roots: {}",
                uris.join(", ")
            )))
        },
    )?;
    server.add_tool(
        Tool::new("test_input_required_result_request_state", no_args())
            .with_description("Carries sealed request state across rounds"),
        |ctx: RequestContext, _args| async move {
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]});
            let answer = ctx
                .ask(Some("confirm"), InputKind::Elicitation, elicit_params("Confirm?", schema))
                .await?;
            // Reaching here means the requestState verified (integrity,
            // method, params digest and expiry are checked by the server).
            Ok(ToolOutput::text(format!("state-ok: confirmed={}", answer["content"]["ok"])))
        },
    )?;
    server.add_tool(
        Tool::new("test_input_required_result_multiple_inputs", no_args())
            .with_description("Asks for three inputs in one round"),
        |ctx: RequestContext, _args| async move {
            let (name, greeting, roots) = tokio::join!(
                ctx.ask(
                    Some("user_name"),
                    InputKind::Elicitation,
                    elicit_params("What is your name?", name_schema())
                ),
                ctx.ask(
                    Some("greeting"),
                    InputKind::Sampling,
                    sampling_params("Write a short greeting.")
                ),
                ctx.ask(Some("client_roots"), InputKind::Roots, json!({})),
            );
            let (name, greeting, roots) = (name?, greeting?, roots?);
            Ok(ToolOutput::text(format!(
                "name={}, greeting={}, roots={}",
                name["content"]["name"].as_str().unwrap_or(""),
                text_of(&greeting),
                roots["roots"].as_array().map(Vec::len).unwrap_or(0)
            )))
        },
    )?;
    server.add_tool(
        Tool::new("test_input_required_result_multi_round", no_args())
            .with_description("Asks for input over two rounds"),
        |ctx: RequestContext, _args| async move {
            let schema = || json!({"type": "object", "properties": {"value": {"type": "string"}}});
            let first = ctx
                .ask(
                    Some("step1"),
                    InputKind::Elicitation,
                    elicit_params("Step 1: enter a value", schema()),
                )
                .await?;
            let second = ctx
                .ask(
                    Some("step2"),
                    InputKind::Elicitation,
                    elicit_params("Step 2: enter another value", schema()),
                )
                .await?;
            Ok(ToolOutput::text(format!(
                "step1={}, step2={}",
                first.get("content").cloned().unwrap_or(Value::Null),
                second.get("content").cloned().unwrap_or(Value::Null)
            )))
        },
    )?;
    server.add_tool(
        Tool::new("test_input_required_result_tampered_state", no_args())
            .with_description("Rejects tampered request state"),
        |ctx: RequestContext, _args| async move {
            let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
            ctx.ask(
                Some("confirm"),
                InputKind::Elicitation,
                elicit_params("Confirm?", schema),
            )
            .await?;
            Ok(ToolOutput::text("state verified"))
        },
    )?;
    server.add_tool(
        Tool::new("test_input_required_result_capabilities", no_args())
            .with_description("Asks only for input the client declared it can give"),
        |ctx: RequestContext, _args| async move {
            let caps = &ctx.meta().client_capabilities;
            let answer = if caps.contains_key("elicitation") {
                ctx.ask(
                    Some("user_name"),
                    InputKind::Elicitation,
                    elicit_params("What is your name?", name_schema()),
                )
                .await?
            } else {
                ctx.ask(
                    Some("capital_question"),
                    InputKind::Sampling,
                    sampling_params("What is the capital of France?"),
                )
                .await?
            };
            Ok(ToolOutput::text(format!("answer: {answer}")))
        },
    )?;
    Ok(())
}

/// Tools whose calls change the tool and prompt lists (for list_changed).
fn add_trigger_tools(server: &Server) -> Result<(), ferromcp::Error> {
    let dynamic_tool = Arc::new(AtomicBool::new(false));
    let handle = server.clone();
    server.add_tool(
        Tool::new("test_trigger_tool_change", no_args()).with_description("Adds or removes a tool"),
        move |_ctx, _args| {
            let server = handle.clone();
            let present = dynamic_tool.clone();
            async move {
                if present.fetch_xor(true, Ordering::SeqCst) {
                    server.remove_tool("test_dynamic_tool");
                    Ok(ToolOutput::text("removed test_dynamic_tool"))
                } else {
                    server
                        .add_tool(
                            Tool::new("test_dynamic_tool", no_args())
                                .with_description("Added at run time"),
                            |_ctx, _args| async { Ok(ToolOutput::text("dynamic")) },
                        )
                        .map_err(|e| HandlerError::tool(e.to_string()))?;
                    Ok(ToolOutput::text("added test_dynamic_tool"))
                }
            }
        },
    )?;
    let dynamic_prompt = Arc::new(AtomicBool::new(false));
    let handle = server.clone();
    server.add_tool(
        Tool::new("test_trigger_prompt_change", no_args())
            .with_description("Adds or removes a prompt"),
        move |_ctx, _args| {
            let server = handle.clone();
            let present = dynamic_prompt.clone();
            async move {
                if present.fetch_xor(true, Ordering::SeqCst) {
                    server.remove_prompt("test_dynamic_prompt");
                    Ok(ToolOutput::text("removed test_dynamic_prompt"))
                } else {
                    let mut prompt = Prompt::new("test_dynamic_prompt");
                    prompt.description = Some("Added at run time".into());
                    server
                        .add_prompt(prompt, |_ctx, _args| async {
                            Ok(PromptOutput::Text("dynamic".into()))
                        })
                        .map_err(|e| HandlerError::tool(e.to_string()))?;
                    Ok(ToolOutput::text("added test_dynamic_prompt"))
                }
            }
        },
    )?;
    Ok(())
}

fn add_resources(server: &Server) -> Result<(), ferromcp::Error> {
    let mut text = Resource::new("test://static-text", "Static text resource");
    text.description = Some("A static text resource for testing".into());
    text.mime_type = Some("text/plain".into());
    server.add_resource(text, |_ctx, _req: ResourceRequest| async {
        Ok(ResourceOutput::Text(
            "This is the content of the static text resource.".into(),
        ))
    })?;

    let mut binary = Resource::new("test://static-binary", "Static binary resource");
    binary.description = Some("A static binary resource (a PNG image)".into());
    binary.mime_type = Some("image/png".into());
    server.add_resource(binary, |_ctx, _req: ResourceRequest| async {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(PNG_BASE64)
            .map(ResourceOutput::Blob)
            .map_err(|e| HandlerError::tool(e.to_string()))
    })?;

    let mut watched = Resource::new("test://watched-resource", "Watched resource");
    watched.description = Some("A resource that can be subscribed to".into());
    watched.mime_type = Some("text/plain".into());
    server.add_resource(watched, |_ctx, _req: ResourceRequest| async {
        Ok(ResourceOutput::Text("Watched resource content".into()))
    })?;
    // The benchmark's load generator calls `echo` (tests/scale puts load
    // on replicas of this server).
    server.add_tool(
        Tool::new(
            "echo",
            json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        )
        .with_description("Returns the text unchanged"),
        |_ctx, args: Value| async move { Ok(ToolOutput::Value(args["text"].clone())) },
    )?;
    // Tells subscribers of a URI that it changed: on this replica and,
    // over the event bus, on every other (tests/scale).
    let handle = server.clone();
    server.add_tool(
        Tool::new("test_notify_resource_updated", string_args(&["uri"]))
            .with_description("Announces that a resource changed"),
        move |_ctx, args: Value| {
            let server = handle.clone();
            async move {
                let uri = args["uri"].as_str().unwrap_or_default().to_owned();
                server.notify_resource_updated(&uri);
                Ok(ToolOutput::text(format!("updated {uri}")))
            }
        },
    )?;

    let mut template = ResourceTemplate::new("test://template/{id}/data", "Template resource");
    template.description = Some("A resource template with an id parameter".into());
    template.mime_type = Some("application/json".into());
    server.add_resource_template(template, |_ctx, req: ResourceRequest| async move {
        let id = req
            .variables
            .get("id")
            .and_then(Value::as_str)
            .unwrap_or("");
        Ok(ResourceOutput::Text(
            json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                .to_string(),
        ))
    })?;
    Ok(())
}

fn prompt(name: &str, description: &str, args: &[(&str, &str)]) -> Prompt {
    let mut prompt = Prompt::new(name);
    prompt.description = Some(description.into());
    if !args.is_empty() {
        prompt.arguments = Some(
            args.iter()
                .map(|(n, d)| {
                    let mut a = PromptArgument::new(*n, true);
                    a.description = Some((*d).into());
                    a
                })
                .collect(),
        );
    }
    prompt
}

fn arg(args: &Map<String, Value>, name: &str) -> String {
    args.get(name)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned()
}

fn add_prompts(server: &Server) -> Result<(), ferromcp::Error> {
    server.add_prompt(
        prompt(
            "test_simple_prompt",
            "A simple prompt without arguments",
            &[],
        ),
        |_ctx, _args| async {
            Ok(PromptOutput::Text(
                "This is a simple prompt for testing.".into(),
            ))
        },
    )?;
    server.add_prompt(
        prompt(
            "test_prompt_with_arguments",
            "A prompt with required arguments",
            &[
                ("arg1", "First test argument"),
                ("arg2", "Second test argument"),
            ],
        ),
        |_ctx, args: Map<String, Value>| async move {
            Ok(PromptOutput::Text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                arg(&args, "arg1"),
                arg(&args, "arg2")
            )))
        },
    )?;
    server.add_prompt(
        prompt(
            "test_prompt_with_embedded_resource",
            "A prompt that embeds a resource",
            &[("resourceUri", "URI of the resource to embed")],
        ),
        |_ctx, args: Map<String, Value>| async move {
            let uri = arg(&args, "resourceUri");
            Ok(PromptOutput::Messages(vec![
                json!({"role": "user", "content": {"type": "resource", "resource": {
                    "uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing."
                }}}),
                json!({"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}}),
            ]))
        },
    )?;
    server.add_prompt(
        prompt("test_prompt_with_image", "A prompt that includes an image", &[]),
        |_ctx, _args| async {
            Ok(PromptOutput::Messages(vec![
                json!({"role": "user", "content": {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}}),
                json!({"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}),
            ]))
        },
    )?;
    server.add_prompt(
        prompt("test_input_required_result_prompt", "A prompt that asks for context first", &[]),
        |ctx: RequestContext, _args| async move {
            let schema = json!({"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]});
            let answer = ctx
                .ask(Some("user_context"), InputKind::Elicitation, elicit_params("What context should the prompt use?", schema))
                .await?;
            Ok(PromptOutput::Text(format!(
                "Prompt with context: {}",
                answer["content"]["context"].as_str().unwrap_or("")
            )))
        },
    )?;
    Ok(())
}

fn add_completion(server: &Server) {
    server.set_completion_handler(|_ctx, params: Value| async move {
        const WORDS: &[&str] = &["paris", "park", "party", "pasta", "hello", "world"];
        let prefix = params["argument"]["value"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        let values: Vec<String> = WORDS
            .iter()
            .filter(|w| w.starts_with(&prefix))
            .map(|w| (*w).to_owned())
            .collect();
        Ok(CompletionOutput {
            total: Some(values.len() as u64),
            has_more: Some(false),
            values,
        })
    });
}

/// The tasks extension's fixtures (SEP-2663; the suite's `tasks-*`
/// scenarios name them).
fn add_task_tools(server: &Server) -> Result<(), ferromcp::Error> {
    let optional = ToolTaskOptions {
        support: TaskSupport::Optional,
        start: TaskStart::OnCall,
    };
    server.add_tool(
        Tool::new("greet", name_schema()).with_description("Says hello (never a task)"),
        |_ctx, args: Value| async move {
            let name = args["name"].as_str().unwrap_or("world");
            Ok(ToolOutput::text(format!("Hello, {name}!")))
        },
    )?;
    server.add_tool_with(
        Tool::new(
            "slow_compute",
            json!({"type": "object", "properties": {
                "seconds": {"type": "number", "minimum": 0},
                "label": {"type": "string"}
            }}),
        )
        .with_description(
            "Sleeps `seconds` seconds, then answers (a task when the client can take one)",
        ),
        optional,
        |_ctx, args: Value| async move {
            let seconds = args["seconds"].as_f64().unwrap_or(1.0).clamp(0.0, 3600.0);
            let label = args["label"].as_str().unwrap_or("job").to_owned();
            tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
            Ok(ToolOutput::text(format!(
                "Computed {label} after {seconds} s"
            )))
        },
    )?;
    server.add_tool_with(
        Tool::new("failing_job", no_args())
            .with_description("Fails as a tool after about a second (only as a task)"),
        ToolTaskOptions {
            support: TaskSupport::Required,
            start: TaskStart::OnCall,
        },
        |_ctx, _args| async {
            tokio::time::sleep(Duration::from_secs(1)).await;
            Err(HandlerError::tool(
                "The job failed: the input could not be processed",
            ))
        },
    )?;
    server.add_tool_with(
        Tool::new("protocol_error_job", no_args())
            .with_description("Ends with a JSON-RPC error (a failed task)"),
        optional,
        |_ctx, _args| async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            Err(HandlerError::Protocol(McpError::internal(
                "The job hit an internal error",
            )))
        },
    )?;
    server.add_tool_with(
        Tool::new("confirm_delete", string_args(&["filename"]))
            .with_description("Asks the user to confirm, then deletes (pretend)"),
        optional,
        |ctx: RequestContext, args: Value| async move {
            let filename = args["filename"].as_str().unwrap_or("").to_owned();
            let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}});
            let answer = ctx.elicit(&format!("Delete {filename}?"), schema).await?;
            let verdict = match answer["action"].as_str() {
                Some("accept") => format!("Deleted {filename}"),
                _ => format!("Kept {filename}"),
            };
            Ok(ToolOutput::text(verdict))
        },
    )?;
    server.add_tool_with(
        Tool::new("multi_input", no_args())
            .with_description("Asks two questions at once, then answers with both"),
        optional,
        |ctx: RequestContext, _args| async move {
            let schema = json!({"type": "object", "properties": {"value": {"type": "string"}}});
            let answers = ctx
                .ask_all(vec![
                    (
                        None,
                        InputKind::Elicitation,
                        elicit_params("First value?", schema.clone()),
                    ),
                    (
                        None,
                        InputKind::Elicitation,
                        elicit_params("Second value?", schema),
                    ),
                ])
                .await;
            let mut texts = Vec::new();
            for answer in answers {
                texts.push(answer?["content"].to_string());
            }
            Ok(ToolOutput::text(format!("Got {}", texts.join(" and "))))
        },
    )?;
    server.add_tool_with(
        Tool::new("test_tool_with_task", no_args())
            .with_description("Asks for a name (multi round-trip), then finishes as a task"),
        ToolTaskOptions {
            support: TaskSupport::Required,
            start: TaskStart::ByHandler,
        },
        |ctx: RequestContext, _args| async move {
            let answer = ctx.elicit("What is your name?", name_schema()).await?;
            let name = answer["content"]["name"]
                .as_str()
                .unwrap_or("stranger")
                .to_owned();
            ctx.start_task().await?;
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok(ToolOutput::text(format!(
                "Hello, {name}! (finished as a task)"
            )))
        },
    )?;
    Ok(())
}

fn build() -> Result<Server, ferromcp::Error> {
    // `EVERYTHING_PAGE_SIZE`: small pages, for tests that page across
    // replicas (tests/scale).
    let mut options = ServerOptions::default();
    if let Some(size) = std::env::var("EVERYTHING_PAGE_SIZE")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        options.page_size = size;
    }
    // `EVERYTHING_MODERN_ONLY=1`: a 2026-07-28-only server (initialize
    // refused), the upstream of the gateway's era tests (tests/proxy).
    options.legacy_sessions = std::env::var_os("EVERYTHING_MODERN_ONLY").is_none_or(|v| v != "1");
    let server = Server::with_options(
        Implementation::new("ferromcp-everything-server", env!("CARGO_PKG_VERSION")),
        options,
    );
    add_content_tools(&server)?;
    add_client_input_tools(&server)?;
    add_input_required_tools(&server)?;
    add_trigger_tools(&server)?;
    add_resources(&server)?;
    add_prompts(&server)?;
    add_completion(&server);
    add_task_tools(&server)?;
    // The skills extension's fixture (SEP-2640): examples/skills.
    server.add_skills_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../skills"))?;
    Ok(server)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .init();
    let server = build()?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [flag] if flag == "--stdio" => server.serve_stdio().await?,
        [port] => {
            let port: u16 = port.parse().map_err(|_| format!("invalid port {port:?}"))?;
            // SIGTERM drains: unready at once (`/readyz`), serving on for
            // `EVERYTHING_DRAIN_DELAY_MS`, then in-flight requests finish.
            let drain_delay = std::env::var("EVERYTHING_DRAIN_DELAY_MS")
                .ok()
                .and_then(|ms| ms.parse().ok())
                .map_or(Duration::ZERO, Duration::from_millis);
            let options = HttpOptions {
                health: true,
                drain_delay,
                shutdown: ferromcp::transport::shutdown_on_signals()?,
                ..HttpOptions::localhost(port)
            };
            server.serve_http(options).await?
        }
        _ => return Err("usage: everything-server PORT | everything-server --stdio".into()),
    }
    Ok(())
}
