//! Prompts (spec: docs/server/prompts.mdx), completion
//! (docs/server/utilities/completion.mdx), and which methods and
//! capabilities a server offers (docs/server/discover.mdx,
//! docs/basic/transports/streamable-http.mdx "Protocol Version Header").
//! Each test names the spec section whose rule it checks.

use ferromcp_testkit as common;

use common::{Http, Stdio, request, server_with};
use ferromcp::protocol::{CacheScope, Prompt, PromptArgument, Resource, ResourceTemplate, Tool};
use ferromcp::server::{
    CacheHint, Caching, CompletionOutput, HandlerError, PromptOutput, RequestContext,
    ResourceOutput, ResourceRequest, Server, ServerOptions, ToolOutput,
};
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};

fn prompt(name: &str, args: &[(&str, bool)]) -> Prompt {
    let mut p = Prompt::new(name);
    p.description = Some(format!("the {name} prompt"));
    if !args.is_empty() {
        p.arguments = Some(
            args.iter()
                .map(|(n, required)| {
                    let mut a = PromptArgument::new(*n, *required);
                    a.description = Some(format!("argument {n}"));
                    a
                })
                .collect(),
        )
    }
    p
}

fn prompt_server(options: ServerOptions) -> Server {
    let server = server_with(options);
    server
        .add_prompt(
            prompt("greet", &[("name", true), ("style", false)]),
            |_ctx, args: Map<String, Value>| async move {
                let name = args["name"].as_str().unwrap_or_default().to_owned();
                let style = args.get("style").and_then(Value::as_str).unwrap_or("plain");
                Ok(PromptOutput::Text(format!(
                    "Greet {name} in a {style} way."
                )))
            },
        )
        .unwrap();
    server
        .add_prompt(prompt("showcase", &[]), |_ctx, _args| async {
            Ok(PromptOutput::Messages(vec![
                json!({"role": "user", "content": {"type": "text", "text": "Look:"}}),
                json!({"role": "user", "content": {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}}),
                json!({"role": "user", "content": {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}}),
                json!({"role": "user", "content": {"type": "resource_link", "uri": "file:///main.rs", "name": "main.rs", "mimeType": "text/x-rust"}}),
                json!({"role": "user", "content": {"type": "resource", "resource": {"uri": "test://doc", "mimeType": "text/plain", "text": "doc"}}}),
                json!({"role": "assistant", "content": {"type": "text", "text": "Seen."}}),
            ]))
        })
        .unwrap();
    server
        .add_prompt(prompt("described", &[]), |_ctx, _args| async {
            let mut result = Map::new();
            result.insert(
                "description".into(),
                json!("A prompt with its own description"),
            );
            result.insert(
                "messages".into(),
                json!([{"role": "user", "content": {"type": "text", "text": "hi"}}]),
            );
            Ok(PromptOutput::Result(result))
        })
        .unwrap();
    server
        .add_prompt(prompt("broken", &[]), |_ctx, _args| async {
            Err::<PromptOutput, _>(HandlerError::tool("template missing"))
        })
        .unwrap();
    server
}

/// Records the params the completion handler saw; answers from a word
/// list, or with 150 values for argument "many".
fn with_completion(server: &Server) -> Arc<Mutex<Vec<Value>>> {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = seen.clone();
    server.set_completion_handler(move |_ctx: RequestContext, params: Value| {
        record.lock().unwrap().push(params.clone());
        async move {
            let prefix = params["argument"]["value"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            match params["argument"]["name"].as_str() {
                Some("many") => Ok(CompletionOutput {
                    values: (0..150).map(|i| format!("{prefix}{i:03}")).collect(),
                    total: None,
                    has_more: None,
                }),
                Some("many-claims-complete") => Ok(CompletionOutput {
                    values: (0..150).map(|i| format!("v{i}")).collect(),
                    total: Some(150),
                    has_more: Some(false),
                }),
                Some("fails") => Err(HandlerError::tool("completion backend down")),
                _ => {
                    let values: Vec<String> = ["python", "pytorch", "pyside", "rust"]
                        .iter()
                        .filter(|w| w.starts_with(&prefix))
                        .map(|w| (*w).to_owned())
                        .collect();
                    Ok(CompletionOutput {
                        total: Some(10),
                        has_more: Some(true),
                        values,
                    })
                }
            }
        }
    });
    seen
}

fn complete_params(name: &str, value: &str) -> Value {
    json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": name, "value": value}})
}

// docs/server/prompts.mdx "Listing Prompts" + utilities/caching.mdx
#[tokio::test]
async fn prompts_list_returns_prompts_with_arguments_and_cache_hints() {
    let options = ServerOptions {
        caching: Caching {
            prompts: CacheHint {
                ttl_ms: 600_000,
                scope: CacheScope::Public,
            },
            ..Caching::default()
        },
        ..ServerOptions::default()
    };
    let mut io = Stdio::start(prompt_server(options));
    let reply = io.call(request(1, "prompts/list", json!({}))).await;
    let result = &reply["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        (result["ttlMs"].clone(), result["cacheScope"].clone()),
        (json!(600_000), json!("public"))
    );
    let prompts = result["prompts"].as_array().unwrap();
    let names: Vec<&str> = prompts
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["greet", "showcase", "described", "broken"]);
    assert_eq!(
        prompts[0],
        json!({
            "name": "greet",
            "description": "the greet prompt",
            "arguments": [
                {"name": "name", "description": "argument name", "required": true},
                {"name": "style", "description": "argument style", "required": false}
            ]
        })
    );
    assert!(prompts[1].get("arguments").is_none());
}

// docs/server/utilities/pagination.mdx "Pagination Model" on prompts/list
#[tokio::test]
async fn pagination_prompts_list_pages_in_registration_order() {
    let mut io = Stdio::start(prompt_server(ServerOptions {
        page_size: 3,
        ..ServerOptions::default()
    }));
    let first = io.call(request(1, "prompts/list", json!({}))).await;
    assert_eq!(first["result"]["prompts"].as_array().unwrap().len(), 3);
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    let second = io
        .call(request(2, "prompts/list", json!({"cursor": cursor})))
        .await;
    assert_eq!(
        second["result"]["prompts"],
        json!([{"name": "broken", "description": "the broken prompt"}])
    );
    assert!(second["result"].get("nextCursor").is_none());
}

// docs/server/prompts.mdx "Getting a Prompt": arguments customise the messages
#[tokio::test]
async fn prompts_get_with_arguments_returns_messages() {
    let mut io = Stdio::start(prompt_server(ServerOptions::default()));
    let reply = io
        .call(request(
            1,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada", "style": "formal"}}),
        ))
        .await;
    let result = &reply["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Greet Ada in a formal way."}}])
    );
    // optional arguments may be left out
    let reply = io
        .call(request(
            2,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Bo"}}),
        ))
        .await;
    assert_eq!(
        reply["result"]["messages"][0]["content"]["text"],
        "Greet Bo in a plain way."
    );
    // prompts/get is not a cacheable result
    assert!(reply["result"].get("ttlMs").is_none());
}

// docs/server/prompts.mdx "Error Handling": missing required arguments -> -32602
#[tokio::test]
async fn prompts_get_missing_required_argument_is_invalid_params() {
    let mut io = Stdio::start(prompt_server(ServerOptions::default()));
    for params in [
        json!({"name": "greet"}),
        json!({"name": "greet", "arguments": {}}),
        json!({"name": "greet", "arguments": {"style": "loud"}}),
        json!({"name": "greet", "arguments": null}),
    ] {
        let reply = io.call(request(1, "prompts/get", params.clone())).await;
        assert_eq!(reply["error"]["code"], -32602, "{params}: {reply}");
        assert!(
            reply["error"]["message"].as_str().unwrap().contains("name"),
            "{reply}"
        );
    }
}

// docs/server/prompts.mdx "Implementation Considerations" 1: prompt arguments are strings
#[tokio::test]
async fn prompts_get_non_string_argument_is_invalid_params() {
    let mut io = Stdio::start(prompt_server(ServerOptions::default()));
    for bad in [
        json!(42),
        json!(true),
        json!(null),
        json!(["Ada"]),
        json!({"first": "Ada"}),
    ] {
        let reply = io
            .call(request(
                1,
                "prompts/get",
                json!({"name": "greet", "arguments": {"name": bad}}),
            ))
            .await;
        assert_eq!(reply["error"]["code"], -32602, "{bad}: {reply}");
    }
    // an optional argument must be a string too
    let reply = io
        .call(request(
            2,
            "prompts/get",
            json!({"name": "greet", "arguments": {"name": "Ada", "style": 3}}),
        ))
        .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    // arguments itself must be an object
    let reply = io
        .call(request(
            3,
            "prompts/get",
            json!({"name": "greet", "arguments": ["Ada"]}),
        ))
        .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
}

// docs/server/prompts.mdx "Error Handling": invalid prompt name -> -32602
#[tokio::test]
async fn prompts_get_unknown_prompt_is_invalid_params() {
    let mut io = Stdio::start(prompt_server(ServerOptions::default()));
    let reply = io
        .call(request(1, "prompts/get", json!({"name": "nope"})))
        .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(reply["error"]["data"]["name"], "nope");
    let reply = io.call(request(2, "prompts/get", json!({}))).await;
    assert_eq!(reply["error"]["code"], -32602, "no name: {reply}");
}

// docs/server/prompts.mdx "PromptMessage": text, image, audio, resource links and embedded
// resources, from user or assistant, sent as the handler produced them
#[tokio::test]
async fn prompts_get_messages_carry_every_content_shape() {
    let mut io = Stdio::start(prompt_server(ServerOptions::default()));
    let reply = io
        .call(request(1, "prompts/get", json!({"name": "showcase"})))
        .await;
    let messages = reply["result"]["messages"].as_array().unwrap();
    let types: Vec<&str> = messages
        .iter()
        .map(|m| m["content"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "text",
            "image",
            "audio",
            "resource_link",
            "resource",
            "text"
        ]
    );
    assert_eq!(messages[5]["role"], "assistant");
    assert_eq!(messages[1]["content"]["mimeType"], "image/png");
    assert_eq!(messages[4]["content"]["resource"]["uri"], "test://doc");

    // a complete GetPromptResult keeps its description
    let reply = io
        .call(request(2, "prompts/get", json!({"name": "described"})))
        .await;
    assert_eq!(
        reply["result"]["description"],
        "A prompt with its own description"
    );
    assert_eq!(reply["result"]["resultType"], "complete");
    assert_eq!(reply["result"]["messages"][0]["content"]["text"], "hi");
}

// docs/server/prompts.mdx "Error Handling": internal errors -> -32603
#[tokio::test]
async fn prompts_get_handler_error_is_internal_error() {
    let mut io = Stdio::start(prompt_server(ServerOptions::default()));
    let reply = io
        .call(request(1, "prompts/get", json!({"name": "broken"})))
        .await;
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("template missing")
    );
}

// docs/server/prompts.mdx "Capabilities": the set MAY change over time
#[tokio::test]
async fn prompts_list_reflects_prompts_added_and_removed_at_run_time() {
    let server = prompt_server(ServerOptions::default());
    let mut io = Stdio::start(server.clone());
    assert!(server.remove_prompt("broken"));
    server
        .add_prompt(prompt("late", &[]), |_ctx, _args| async {
            Ok(PromptOutput::Text("late".into()))
        })
        .unwrap();
    let reply = io.call(request(1, "prompts/list", json!({}))).await;
    let names: Vec<&str> = reply["result"]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["greet", "showcase", "described", "late"]);
    let reply = io
        .call(request(2, "prompts/get", json!({"name": "broken"})))
        .await;
    assert_eq!(reply["error"]["code"], -32602);
}

// docs/server/utilities/completion.mdx "Requesting Completions": values, total, hasMore
#[tokio::test]
async fn completion_complete_returns_values_total_and_has_more() {
    let server = prompt_server(ServerOptions::default());
    with_completion(&server);
    let mut io = Stdio::start(server);
    let reply = io
        .call(request(
            1,
            "completion/complete",
            complete_params("language", "py"),
        ))
        .await;
    assert_eq!(
        reply["result"],
        json!({
            "resultType": "complete",
            "completion": {"values": ["python", "pytorch", "pyside"], "total": 10, "hasMore": true},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "test-server", "version": "9.9.9"}}
        })
    );
    // no match is an empty list, not an error
    let reply = io
        .call(request(
            2,
            "completion/complete",
            complete_params("language", "zz"),
        ))
        .await;
    assert_eq!(reply["result"]["completion"]["values"], json!([]));
}

// docs/server/utilities/completion.mdx "Completion Results": maximum 100 items per response
#[tokio::test]
async fn completion_complete_caps_values_at_100() {
    let server = prompt_server(ServerOptions::default());
    with_completion(&server);
    let mut io = Stdio::start(server);
    let reply = io
        .call(request(
            1,
            "completion/complete",
            complete_params("many", "x"),
        ))
        .await;
    let completion = &reply["result"]["completion"];
    let values = completion["values"].as_array().unwrap();
    assert_eq!(values.len(), 100);
    assert_eq!(values[0], "x000");
    assert_eq!(values[99], "x099", "the first (most relevant) 100 are kept");
    assert_eq!(completion["total"], 150);
    assert_eq!(completion["hasMore"], true);
}

// docs/server/utilities/completion.mdx "CompleteResult": hasMore flags additional results, so
// values dropped by the 100-item cap always count as more, whatever the handler claimed
#[tokio::test]
async fn completion_complete_truncated_values_are_reported_as_has_more() {
    let server = prompt_server(ServerOptions::default());
    with_completion(&server);
    let mut io = Stdio::start(server);
    let reply = io
        .call(request(
            1,
            "completion/complete",
            complete_params("many-claims-complete", ""),
        ))
        .await;
    let completion = &reply["result"]["completion"];
    assert_eq!(completion["values"].as_array().unwrap().len(), 100);
    assert_eq!(completion["total"], 150);
    assert_eq!(completion["hasMore"], true, "{completion}");
}

// docs/server/utilities/completion.mdx "Requesting Completions": ref, argument and context
// reach the completion provider
#[tokio::test]
async fn completion_complete_passes_ref_argument_and_context_to_the_handler() {
    let server = prompt_server(ServerOptions::default());
    add_file_template(&server);
    let seen = with_completion(&server);
    let mut io = Stdio::start(server);
    let params = json!({
        "ref": {"type": "ref/resource", "uri": "file:///{path}"},
        "argument": {"name": "framework", "value": "fla"},
        "context": {"arguments": {"language": "python"}}
    });
    let reply = io.call(request(1, "completion/complete", params)).await;
    assert!(reply["result"]["completion"].is_object(), "{reply}");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0]["ref"],
        json!({"type": "ref/resource", "uri": "file:///{path}"})
    );
    assert_eq!(
        seen[0]["argument"],
        json!({"name": "framework", "value": "fla"})
    );
    assert_eq!(
        seen[0]["context"],
        json!({"arguments": {"language": "python"}})
    );
}

/// The `file:///{path}` template the `ref/resource` completions refer to.
fn add_file_template(server: &Server) {
    server
        .add_resource_template(
            ResourceTemplate::new("file:///{path}", "files"),
            |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text(String::new())) },
        )
        .unwrap();
}

// docs/server/utilities/completion.mdx "Error Handling": invalid prompt name -> -32602. The
// reference is checked by core before the provider runs, so a provider never has to (and no
// binding can forget to); a ref/resource may be a registered template or a URI one matches.
#[tokio::test]
async fn completion_complete_for_an_unknown_prompt_or_template_is_invalid_params_before_the_handler_runs()
 {
    let server = prompt_server(ServerOptions::default());
    add_file_template(&server);
    let seen = with_completion(&server);
    let mut io = Stdio::start(server);
    let argument = json!({"name": "a", "value": ""});
    for (reference, names) in [
        (json!({"type": "ref/prompt", "name": "nope"}), "nope"),
        (
            json!({"type": "ref/resource", "uri": "db://{table}"}),
            "db://{table}",
        ),
        (
            json!({"type": "ref/resource", "uri": "https://example.com/x"}),
            "https://example.com/x",
        ),
        (json!({"type": "ref/prompt"}), "name"),
        (json!({"type": "ref/tool", "name": "greet"}), "ref/tool"),
    ] {
        let params = json!({"ref": reference, "argument": argument});
        let reply = io.call(request(1, "completion/complete", params)).await;
        assert_eq!(reply["error"]["code"], -32602, "{reference}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(names), "{reference}: {message}");
    }
    assert!(seen.lock().unwrap().is_empty(), "the provider never ran");
    for reference in [
        json!({"type": "ref/prompt", "name": "greet"}),
        json!({"type": "ref/resource", "uri": "file:///{path}"}),
        json!({"type": "ref/resource", "uri": "file:///notes"}),
    ] {
        let params = json!({"ref": reference, "argument": argument});
        let reply = io.call(request(2, "completion/complete", params)).await;
        assert!(
            reply["result"]["completion"].is_object(),
            "{reference}: {reply}"
        );
    }
    assert_eq!(seen.lock().unwrap().len(), 3);
}

// docs/server/utilities/completion.mdx "Error Handling": invalid params -> -32602, internal
// errors -> -32603
#[tokio::test]
async fn completion_complete_errors() {
    let server = prompt_server(ServerOptions::default());
    with_completion(&server);
    let mut io = Stdio::start(server);
    for params in [
        json!({}),
        json!({"ref": {"type": "ref/prompt", "name": "greet"}}),
        json!({"argument": {"name": "a", "value": "b"}}),
        json!({"ref": "greet", "argument": {"name": "a", "value": "b"}}),
    ] {
        let reply = io
            .call(request(1, "completion/complete", params.clone()))
            .await;
        assert_eq!(reply["error"]["code"], -32602, "{params}: {reply}");
    }
    let reply = io
        .call(request(
            2,
            "completion/complete",
            complete_params("fails", ""),
        ))
        .await;
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
}

/// A server offering only tools.
fn tools_only() -> Server {
    let server = server_with(ServerOptions::default());
    server
        .add_tool(
            Tool::new("noop", json!({"type": "object"})),
            |_ctx, _args: Value| async { Ok(ToolOutput::text("ok")) },
        )
        .unwrap();
    server
}

const PROMPT_METHODS: &[(&str, &str)] = &[
    ("prompts/list", "{}"),
    ("prompts/get", r#"{"name": "greet"}"#),
];
const RESOURCE_METHODS: &[(&str, &str)] = &[
    ("resources/list", "{}"),
    ("resources/templates/list", "{}"),
    ("resources/read", r#"{"uri": "test://x"}"#),
];
const TOOL_METHODS: &[(&str, &str)] =
    &[("tools/list", "{}"), ("tools/call", r#"{"name": "noop"}"#)];
const COMPLETION_METHODS: &[(&str, &str)] = &[(
    "completion/complete",
    r#"{"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "a", "value": ""}}"#,
)];

// docs/server/utilities/completion.mdx "Error Handling" (-32601 capability not supported) and
// docs/server/discover.mdx: a primitive the server does not offer has no methods
#[tokio::test]
async fn index_methods_of_primitives_not_offered_are_method_not_found() {
    let mut io = Stdio::start(tools_only());
    for (method, params) in PROMPT_METHODS
        .iter()
        .chain(RESOURCE_METHODS)
        .chain(COMPLETION_METHODS)
    {
        let reply = io
            .call(request(1, method, serde_json::from_str(params).unwrap()))
            .await;
        assert_eq!(reply["error"]["code"], -32601, "{method}: {reply}");
        assert_eq!(reply["id"], 1);
    }
    let mut io = Stdio::start(prompt_server(ServerOptions::default()));
    for (method, params) in TOOL_METHODS
        .iter()
        .chain(RESOURCE_METHODS)
        .chain(COMPLETION_METHODS)
    {
        let reply = io
            .call(request(1, method, serde_json::from_str(params).unwrap()))
            .await;
        assert_eq!(reply["error"]["code"], -32601, "{method}: {reply}");
    }
}

// docs/basic/transports/streamable-http.mdx "Protocol Version Header": a method the server
// does not implement -> 404 with a -32601 JSON-RPC error body
#[tokio::test]
async fn streamable_http_methods_of_primitives_not_offered_are_404_method_not_found() {
    let http = Http::start(tools_only()).await;
    for (method, params) in PROMPT_METHODS
        .iter()
        .chain(RESOURCE_METHODS)
        .chain(COMPLETION_METHODS)
    {
        let r = http
            .post(&request(1, method, serde_json::from_str(params).unwrap()))
            .await;
        assert_eq!(r.status, 404, "{method}");
        assert_eq!(
            r.header("content-type"),
            Some("application/json"),
            "{method}"
        );
        assert_eq!(r.json()["error"]["code"], -32601, "{method}");
        assert_eq!(r.json()["id"], 1, "{method}");
    }
    let r = http.post(&request(2, "tools/list", json!({}))).await;
    assert_eq!(r.status, 200);
}

// docs/server/discover.mdx "DiscoverResult": capabilities reflect what the server offers
#[tokio::test]
async fn discover_capabilities_reflect_offered_primitives() {
    let capabilities = |server: Server| async move {
        let mut io = Stdio::start(server);
        io.call(request(1, "server/discover", json!({}))).await["result"]["capabilities"].clone()
    };
    let caps = capabilities(tools_only()).await;
    assert_eq!(caps["tools"], json!({"listChanged": true}));
    for absent in ["prompts", "resources", "completions"] {
        assert!(caps.get(absent).is_none(), "{absent} not offered: {caps}");
    }

    let server = prompt_server(ServerOptions::default());
    let caps = capabilities(server.clone()).await;
    assert_eq!(caps["prompts"], json!({"listChanged": true}));
    assert!(
        caps.get("tools").is_none() && caps.get("completions").is_none(),
        "{caps}"
    );
    with_completion(&server);
    let caps = capabilities(server.clone()).await;
    assert_eq!(caps["completions"], json!({}));

    // resources (with subscriptions) appear once something is registered, even at run time
    server
        .add_resource_template(
            ResourceTemplate::new("test://{x}", "x"),
            |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text(String::new())) },
        )
        .unwrap();
    let caps = capabilities(server.clone()).await;
    assert_eq!(
        caps["resources"],
        json!({"subscribe": true, "listChanged": true})
    );

    // a server offering nothing still answers discover, and no primitive methods
    let empty = server_with(ServerOptions::default());
    let caps = capabilities(empty.clone()).await;
    for absent in ["tools", "prompts", "resources", "completions"] {
        assert!(caps.get(absent).is_none(), "{absent}: {caps}");
    }
    let mut io = Stdio::start(empty);
    let reply = io.call(request(2, "tools/list", json!({}))).await;
    assert_eq!(reply["error"]["code"], -32601);
}

// docs/server/discover.mdx "DiscoverResult": a capability once offered stays offered (and its
// list methods keep working, possibly empty) when its last primitive is removed
#[tokio::test]
async fn discover_capability_stays_when_the_last_primitive_is_removed() {
    let server = server_with(ServerOptions::default());
    server
        .add_resource(
            Resource::new("test://only", "only"),
            |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text(String::new())) },
        )
        .unwrap();
    assert!(server.remove_resource("test://only"));
    let mut io = Stdio::start(server);
    let reply = io.call(request(1, "server/discover", json!({}))).await;
    assert!(
        reply["result"]["capabilities"]["resources"].is_object(),
        "{reply}"
    );
    let reply = io.call(request(2, "resources/list", json!({}))).await;
    assert_eq!(reply["result"]["resources"], json!([]));
}
