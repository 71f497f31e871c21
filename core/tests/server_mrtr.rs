//! Multi round-trip requests (spec: docs/basic/patterns/mrtr.mdx): a
//! handler that asks the client for input ends the round with an
//! `InputRequiredResult`; the client retries with `inputResponses` and the
//! sealed `requestState`. Each test names the spec section it checks.

use ferromcp_testkit as common;

use common::{Http, Stdio, meta_all_caps, meta_with, request_with_meta, server_with};
use ferromcp::protocol::{Prompt, Resource, Tool};
use ferromcp::server::{
    CompletionOutput, HandlerError, InputKind, LoggingLevel, PromptOutput, RequestContext,
    ResourceOutput, ResourceRequest, SealKey, Server, ServerOptions, ToolOutput,
};
use serde_json::{Map, Value, json};
use std::time::Duration;

fn name_schema() -> Value {
    json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]})
}

fn value_schema() -> Value {
    json!({"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]})
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn sampled(text: &str) -> Value {
    json!({"role": "assistant", "content": {"type": "text", "text": text}, "model": "test-model", "stopReason": "endTurn"})
}

fn roots() -> Value {
    json!({"roots": [{"uri": "file:///home/ada/project", "name": "project"}]})
}

fn sampling_params(prompt: &str) -> Value {
    json!({"messages": [{"role": "user", "content": {"type": "text", "text": prompt}}], "maxTokens": 50})
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {result}"))
        .to_owned()
}

/// Asks for the user's name under key `user_name`.
async fn ask_name(ctx: &RequestContext) -> Result<String, HandlerError> {
    let answer = ctx
        .elicit_as(Some("user_name"), "What is your name?", name_schema())
        .await?;
    Ok(match answer["action"].as_str() {
        Some("accept") => format!(
            "Hello, {}!",
            answer["content"]["name"].as_str().unwrap_or("?")
        ),
        other => format!("No name ({})", other.unwrap_or("?")),
    })
}

fn mrtr_server(options: ServerOptions) -> Server {
    let server = server_with(options);
    server
        .add_tool(
            Tool::new("ask_name", json!({"type": "object"})),
            |ctx: RequestContext, _args: Value| async move {
                Ok(ToolOutput::text(ask_name(&ctx).await?))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("two_rounds", json!({"type": "object"})),
            |ctx: RequestContext, _args: Value| async move {
                let first = ctx
                    .elicit_as(Some("step1"), "Step 1", value_schema())
                    .await?;
                let second = ctx
                    .elicit_as(Some("step2"), "Step 2", value_schema())
                    .await?;
                Ok(ToolOutput::text(format!(
                    "step1={}, step2={}",
                    first["content"]["value"].as_str().unwrap_or("?"),
                    second["content"]["value"].as_str().unwrap_or("?")
                )))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("three_at_once", json!({"type": "object"})),
            |ctx: RequestContext, _args: Value| async move {
                let (name, capital, roots) = tokio::join!(
                    ctx.elicit_as(Some("user_name"), "What is your name?", name_schema()),
                    ctx.ask(
                        Some("capital"),
                        InputKind::Sampling,
                        sampling_params("Capital of France?")
                    ),
                    ctx.ask(Some("roots"), InputKind::Roots, json!({})),
                );
                let (name, capital, roots) = (name?, capital?, roots?);
                Ok(ToolOutput::text(format!(
                    "name={}, capital={}, roots={}",
                    name["content"]["name"].as_str().unwrap_or("?"),
                    capital["content"]["text"].as_str().unwrap_or("?"),
                    roots["roots"].as_array().map(Vec::len).unwrap_or(0)
                )))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new(
                "with_args",
                json!({"type": "object", "properties": {"x": {"type": "integer"}, "y": {"type": "string"}}}),
            ),
            |ctx: RequestContext, args: Value| async move {
                let greeting = ask_name(&ctx).await?;
                Ok(ToolOutput::text(format!("{greeting} x={} y={}", args["x"], args["y"])))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("unnamed_asks", json!({"type": "object"})),
            |ctx: RequestContext, _args: Value| async move {
                let answer = ctx.elicit("Your name?", name_schema()).await?;
                let roots = ctx.list_roots().await?;
                let sample = ctx.sample(sampling_params("Hi")).await?;
                Ok(ToolOutput::text(format!(
                    "{} {} {}",
                    answer["content"]["name"].as_str().unwrap_or("?"),
                    roots["roots"][0]["uri"].as_str().unwrap_or("?"),
                    sample["content"]["text"].as_str().unwrap_or("?")
                )))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("log_then_ask", json!({"type": "object"})),
            |ctx: RequestContext, _args: Value| async move {
                ctx.log(LoggingLevel::Info, json!("about to ask"), None);
                Ok(ToolOutput::text(ask_name(&ctx).await?))
            },
        )
        .unwrap();
    // a prompt with the same name and params as the tool, to show the state binds the method
    server
        .add_prompt(
            Prompt::new("ask_name"),
            |ctx: RequestContext, _args: Map<String, Value>| async move {
                Ok(PromptOutput::Text(ask_name(&ctx).await?))
            },
        )
        .unwrap();
    server
        .add_resource(Resource::new("test://secret", "secret"), |ctx: RequestContext, _req: ResourceRequest| async move {
            let pass = ctx
                .elicit_as(
                    Some("passphrase"),
                    "Passphrase?",
                    json!({"type": "object", "properties": {"pass": {"type": "string"}}, "required": ["pass"]}),
                )
                .await?;
            Ok(ResourceOutput::Text(format!("unlocked with {}", pass["content"]["pass"].as_str().unwrap_or("?"))))
        })
        .unwrap();
    server.set_completion_handler(|ctx: RequestContext, _params: Value| async move {
        let answer = ctx.elicit("Which?", name_schema()).await?;
        Ok(CompletionOutput {
            values: vec![answer.to_string()],
            ..CompletionOutput::default()
        })
    });
    server
}

fn default_server() -> Server {
    mrtr_server(ServerOptions::default())
}

/// A request declaring every input capability.
fn req(id: impl Into<Value>, method: &str, params: Value) -> Value {
    request_with_meta(id, method, params, meta_all_caps())
}

fn call(id: impl Into<Value>, tool: &str) -> Value {
    req(id, "tools/call", json!({"name": tool}))
}

/// `first` retried under a new id with `inputResponses` and `requestState`.
fn retry(first: &Value, id: impl Into<Value>, responses: Value, state: &Value) -> Value {
    let mut next = first.clone();
    next["id"] = id.into();
    next["params"]["inputResponses"] = responses;
    next["params"]["requestState"] = state.clone();
    next
}

/// Asserts an `InputRequiredResult` and returns it.
fn input_required(reply: &Value) -> &Value {
    let result = &reply["result"];
    assert_eq!(result["resultType"], "input_required", "{reply}");
    assert!(result["requestState"].is_string(), "{reply}");
    result
}

fn keys(result: &Value) -> Vec<String> {
    let mut keys: Vec<String> = result["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    keys.sort();
    keys
}

// docs/basic/patterns/mrtr.mdx "InputRequiredResult" / "Server Requirements" 2, 3, 6
#[tokio::test]
async fn mrtr_a_handler_that_asks_answers_input_required_with_requests_and_state() {
    let mut io = Stdio::start(default_server());
    let reply = io.call(call(1, "ask_name")).await;
    assert_eq!(reply["id"], 1);
    let result = input_required(&reply);
    assert_eq!(
        result["inputRequests"],
        json!({"user_name": {"method": "elicitation/create", "params": {
            "mode": "form", "message": "What is your name?", "requestedSchema": name_schema()
        }}})
    );
    assert!(!result["requestState"].as_str().unwrap().is_empty());
    assert!(
        result.get("content").is_none(),
        "not a CallToolResult: {result}"
    );
    assert!(result.get("isError").is_none());
}

// docs/basic/patterns/mrtr.mdx "Basic Workflow": the retry (new id, inputResponses + the exact
// requestState) completes
#[tokio::test]
async fn mrtr_retry_with_input_responses_and_request_state_completes() {
    let mut io = Stdio::start(default_server());
    let first = call(1, "ask_name");
    let reply = io.call(first.clone()).await;
    let state = input_required(&reply)["requestState"].clone();
    let done = io
        .call(retry(
            &first,
            "retry-1",
            json!({"user_name": accept(json!({"name": "Ada"}))}),
            &state,
        ))
        .await;
    assert_eq!(done["id"], "retry-1", "the retry is an independent request");
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(text_of(&done["result"]), "Hello, Ada!");
    // the state is not tied to a request id: another retry with it works too
    let again = io
        .call(retry(
            &first,
            99,
            json!({"user_name": accept(json!({"name": "Bo"}))}),
            &state,
        ))
        .await;
    assert_eq!(text_of(&again["result"]), "Hello, Bo!");
}

// docs/client/elicitation.mdx result actions: decline and cancel are answers too
#[tokio::test]
async fn mrtr_decline_and_cancel_are_answers_not_reasons_to_ask_again() {
    let mut io = Stdio::start(default_server());
    let first = call(1, "ask_name");
    let state = input_required(&io.call(first.clone()).await)["requestState"].clone();
    for action in ["decline", "cancel"] {
        let done = io
            .call(retry(
                &first,
                2,
                json!({"user_name": {"action": action}}),
                &state,
            ))
            .await;
        assert_eq!(text_of(&done["result"]), format!("No name ({action})"));
    }
}

// docs/basic/patterns/mrtr.mdx "Server Requirements" 8: the server MAY ask again over several
// rounds; answers of earlier rounds travel in requestState
#[tokio::test]
async fn mrtr_several_rounds_carry_earlier_answers_in_request_state() {
    let mut io = Stdio::start(default_server());
    let first = call(1, "two_rounds");
    let round1 = io.call(first.clone()).await;
    assert_eq!(keys(input_required(&round1)), ["step1"]);
    let state1 = round1["result"]["requestState"].clone();

    let round2 = io
        .call(retry(
            &first,
            2,
            json!({"step1": accept(json!({"value": "a"}))}),
            &state1,
        ))
        .await;
    assert_eq!(
        keys(input_required(&round2)),
        ["step2"],
        "only the new question"
    );
    let state2 = round2["result"]["requestState"].clone();
    assert_ne!(state1, state2);

    // only step2 is sent now; a different step1 in inputResponses is not asked for and ignored
    let done = io
        .call(retry(
            &first,
            3,
            json!({"step2": accept(json!({"value": "b"})), "step1": accept(json!({"value": "forged"}))}),
            &state2,
        ))
        .await;
    assert_eq!(text_of(&done["result"]), "step1=a, step2=b");
}

// docs/basic/patterns/mrtr.mdx "InputRequests": several asks in one round are requested
// together, under unique keys; "Error Handling": missing answers are asked for again
#[tokio::test]
async fn mrtr_several_asks_in_one_round_are_requested_together() {
    let mut io = Stdio::start(default_server());
    let first = call(1, "three_at_once");
    let round1 = io.call(first.clone()).await;
    let result = input_required(&round1);
    assert_eq!(keys(result), ["capital", "roots", "user_name"]);
    assert_eq!(
        result["inputRequests"]["capital"]["method"],
        "sampling/createMessage"
    );
    assert_eq!(
        result["inputRequests"]["capital"]["params"],
        sampling_params("Capital of France?")
    );
    assert_eq!(
        result["inputRequests"]["roots"],
        json!({"method": "roots/list", "params": {}})
    );
    assert_eq!(
        result["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    let state = result["requestState"].clone();

    // two of three answered: only the missing one is asked again
    let round2 = io
        .call(retry(
            &first,
            2,
            json!({"user_name": accept(json!({"name": "Ada"})), "roots": roots()}),
            &state,
        ))
        .await;
    assert_eq!(keys(input_required(&round2)), ["capital"]);
    let state2 = round2["result"]["requestState"].clone();

    let done = io
        .call(retry(
            &first,
            3,
            json!({"capital": sampled("Paris")}),
            &state2,
        ))
        .await;
    assert_eq!(text_of(&done["result"]), "name=Ada, capital=Paris, roots=1");

    // all three at once completes in one retry
    let done = io
        .call(retry(
            &first,
            4,
            json!({"user_name": accept(json!({"name": "Bo"})), "capital": sampled("Lyon?"), "roots": roots()}),
            &state,
        ))
        .await;
    assert_eq!(text_of(&done["result"]), "name=Bo, capital=Lyon?, roots=1");
}

// docs/basic/patterns/mrtr.mdx "InputRequests": keys are server-assigned; asks without a key get
// one that stays the same on every replay
#[tokio::test]
async fn mrtr_unnamed_asks_get_stable_keys_across_rounds() {
    let mut io = Stdio::start(default_server());
    let first = call(1, "unnamed_asks");
    let mut responses = Map::new();
    let mut state = Value::Null;
    let answers = [accept(json!({"name": "Ada"})), roots(), sampled("hey")];
    for (round, answer) in answers.iter().enumerate() {
        let mut next = first.clone();
        next["id"] = json!(round + 10);
        if round > 0 {
            next["params"]["inputResponses"] = Value::Object(responses.clone());
            next["params"]["requestState"] = state.clone();
        }
        let reply = io.call(next).await;
        let result = input_required(&reply);
        let asked = keys(result);
        assert_eq!(asked.len(), 1, "one new question per round: {result}");
        responses = Map::new();
        responses.insert(asked[0].clone(), answer.clone());
        state = result["requestState"].clone();
    }
    let done = io
        .call(retry(&first, 20, Value::Object(responses), &state))
        .await;
    assert_eq!(text_of(&done["result"]), "Ada file:///home/ada/project hey");
}

// docs/basic/patterns/mrtr.mdx "Error Handling" (protocol errors such as an invalid schema get
// a JSON-RPC error) and docs/client/elicitation.mdx "Servers SHOULD validate received data matches
// the requested schema": a response that is there but is not a valid result for its request
// (wrong shape, or not matching the requested schema) is -32602 naming what is wrong. Asking
// again with the identical InputRequiredResult would loop forever with no hint.
#[tokio::test]
async fn mrtr_a_response_that_does_not_fit_is_invalid_params_naming_the_field() {
    let mut io = Stdio::start(default_server());
    let first = call(1, "ask_name");
    let state = input_required(&io.call(first.clone()).await)["requestState"].clone();
    let schema_says = "elicitation response does not match requestedSchema:";
    for (bad, says) in [
        (
            accept(json!({"name": 5})),
            format!("{schema_says} field \"name\": expected string, got 5"),
        ),
        (
            accept(json!({})),
            format!("{schema_says} field \"name\": required"),
        ),
        (
            json!({"action": "accept"}),
            format!("{schema_says} field \"name\": required"),
        ),
        (
            json!({"action": "maybe"}),
            "elicitation response: field \"action\"".to_owned(),
        ),
        (
            json!("Ada"),
            "elicitation response must be an object".to_owned(),
        ),
        (
            json!({"content": {"name": "Ada"}}),
            "elicitation response: field \"action\"".to_owned(),
        ),
    ] {
        let reply = io
            .call(retry(&first, 2, json!({"user_name": bad.clone()}), &state))
            .await;
        assert!(reply.get("result").is_none(), "{bad}: {reply}");
        assert_eq!(reply["error"]["code"], -32602, "{bad}: {reply}");
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        assert!(message.starts_with(&says), "{bad}: {message}");
        assert_eq!(reply["error"]["data"]["inputKey"], "user_name", "{reply}");
    }
    // with several answers, the first that does not fit decides, even though the handler
    // awaits the others too
    let first = call(3, "three_at_once");
    let state = input_required(&io.call(first.clone()).await)["requestState"].clone();
    let reply = io
        .call(retry(
            &first,
            4,
            json!({
                "user_name": accept(json!({"name": "Ada"})),
                "capital": {"role": "assistant", "content": {"type": "text", "text": "Paris"}}, // no model
                "roots": {"roots": [{"name": "no uri"}]}
            }),
            &state,
        ))
        .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert_eq!(
        reply["error"]["message"], "sampling response: field \"model\": expected a string",
        "{reply}"
    );
    // a response that does not fit ends the request even when another ask is still unanswered
    let reply = io
        .call(retry(
            &first,
            5,
            json!({"user_name": accept(json!({"name": 1}))}),
            &state,
        ))
        .await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
}

// docs/basic/patterns/mrtr.mdx "Error Handling": unexpected extra inputResponses are ignored
#[tokio::test]
async fn mrtr_extra_input_response_keys_are_ignored() {
    let mut io = Stdio::start(default_server());
    let first = call(1, "ask_name");
    let state = input_required(&io.call(first.clone()).await)["requestState"].clone();
    let done = io
        .call(retry(
            &first,
            2,
            json!({"user_name": accept(json!({"name": "Ada"})), "unasked": {"anything": true}, "": null}),
            &state,
        ))
        .await;
    assert_eq!(text_of(&done["result"]), "Hello, Ada!");
}

// docs/basic/patterns/mrtr.mdx "Error Handling": a retry without the requested information
// gets a new InputRequiredResult, not an error
#[tokio::test]
async fn mrtr_missing_or_null_input_responses_ask_again() {
    let mut io = Stdio::start(default_server());
    let first = call(1, "ask_name");
    let state = input_required(&io.call(first.clone()).await)["requestState"].clone();
    for responses in [Value::Null, json!({}), json!({"user_name": null})] {
        let reply = io.call(retry(&first, 2, responses.clone(), &state)).await;
        assert_eq!(keys(input_required(&reply)), ["user_name"], "{responses}");
    }
    let mut no_responses = first.clone();
    no_responses["params"]["requestState"] = state;
    assert_eq!(
        keys(input_required(&io.call(no_responses).await)),
        ["user_name"]
    );
}

// docs/basic/patterns/mrtr.mdx "Error Handling": a malformed InputResponses is a protocol error
#[tokio::test]
async fn mrtr_input_responses_that_are_not_an_object_are_invalid_params() {
    let mut io = Stdio::start(default_server());
    let first = call(1, "ask_name");
    let state = input_required(&io.call(first.clone()).await)["requestState"].clone();
    for bad in [json!([]), json!("x"), json!(1)] {
        let reply = io.call(retry(&first, 2, bad.clone(), &state)).await;
        assert_eq!(reply["error"]["code"], -32602, "{bad}: {reply}");
    }
}

// docs/basic/patterns/mrtr.mdx "Server Requirements" 4: state that fails verification is rejected
#[tokio::test]
async fn mrtr_tampered_request_state_is_an_error() {
    let mut io = Stdio::start(default_server());
    let first = call(1, "ask_name");
    let state = input_required(&io.call(first.clone()).await)["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let answer = json!({"user_name": accept(json!({"name": "Ada"}))});
    let flip = |s: &str, at: usize| {
        let mut bytes = s.as_bytes().to_vec();
        bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
        String::from_utf8(bytes).unwrap()
    };
    for (bad, why) in [
        (json!(flip(&state, 3)), "payload altered"),
        (json!(flip(&state, state.len() - 2)), "tag altered"),
        (json!(&state[..state.len() - 4]), "truncated"),
        (json!(format!("{state}x")), "extended"),
        (json!("opaque-but-forged"), "forged"),
        (json!(""), "empty"),
        (json!(12), "not a string"),
        (json!({"state": state}), "not a string"),
    ] {
        let reply = io.call(retry(&first, 2, answer.clone(), &bad)).await;
        assert_eq!(reply["error"]["code"], -32602, "{why}: {reply}");
        assert_eq!(reply["id"], 2);
        assert!(reply.get("result").is_none(), "{why}");
    }
}

// docs/basic/patterns/mrtr.mdx "Server Requirements" 5: a short expiry, rejected after it lapses
#[tokio::test]
async fn mrtr_expired_request_state_is_an_error() {
    let mut io = Stdio::start(mrtr_server(ServerOptions {
        request_state_ttl: Duration::from_secs(1),
        ..ServerOptions::default()
    }));
    let first = call(1, "ask_name");
    let state = input_required(&io.call(first.clone()).await)["requestState"].clone();
    let answer = json!({"user_name": accept(json!({"name": "Ada"}))});
    let fresh = io.call(retry(&first, 2, answer.clone(), &state)).await;
    assert_eq!(
        text_of(&fresh["result"]),
        "Hello, Ada!",
        "valid before it lapses"
    );
    // expiry has one-second resolution: past the TTL for sure after two seconds
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let stale = io.call(retry(&first, 3, answer, &state)).await;
    assert_eq!(stale["error"]["code"], -32602, "{stale}");
    assert!(
        stale["error"]["message"]
            .as_str()
            .unwrap()
            .contains("expired"),
        "{stale}"
    );
}

// docs/basic/patterns/mrtr.mdx "Server Requirements" 5: state bound to the originating method
#[tokio::test]
async fn mrtr_request_state_for_another_method_is_an_error() {
    let mut io = Stdio::start(default_server());
    let first = call(1, "ask_name");
    let state = input_required(&io.call(first.clone()).await)["requestState"].clone();
    let answer = json!({"user_name": accept(json!({"name": "Ada"}))});
    // same params ({"name": "ask_name"}), other method
    let prompt = req(
        2,
        "prompts/get",
        json!({"name": "ask_name", "inputResponses": answer, "requestState": state}),
    );
    let reply = io.call(prompt).await;
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("method"),
        "{reply}"
    );
}

// docs/basic/patterns/mrtr.mdx "Server Requirements" 5: state bound to a digest of the
// request's salient parameters (tool name and arguments)
#[tokio::test]
async fn mrtr_request_state_for_changed_arguments_is_an_error() {
    let mut io = Stdio::start(default_server());
    let first = req(
        1,
        "tools/call",
        json!({"name": "with_args", "arguments": {"x": 1, "y": "a"}}),
    );
    let state = input_required(&io.call(first.clone()).await)["requestState"].clone();
    let answer = json!({"user_name": accept(json!({"name": "Ada"}))});
    for (params, why) in [
        (
            json!({"name": "with_args", "arguments": {"x": 2, "y": "a"}}),
            "argument changed",
        ),
        (
            json!({"name": "with_args", "arguments": {"x": 1}}),
            "argument dropped",
        ),
        (
            json!({"name": "with_args", "arguments": {"x": 1, "y": "a", "z": true}}),
            "argument added",
        ),
        (json!({"name": "with_args"}), "arguments dropped"),
        (
            json!({"name": "ask_name", "arguments": {"x": 1, "y": "a"}}),
            "other tool",
        ),
    ] {
        let mut params = params;
        params["inputResponses"] = answer.clone();
        params["requestState"] = state.clone();
        let reply = io.call(req(2, "tools/call", params)).await;
        assert_eq!(reply["error"]["code"], -32602, "{why}: {reply}");
    }
    // the same arguments written in another key order are the same request
    let state = state.as_str().unwrap();
    let reordered = format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"requestState":"{state}","arguments":{{"y":"a","x":1}},"inputResponses":{},"name":"with_args","_meta":{}}}}}"#,
        answer,
        meta_all_caps()
    );
    io.send_raw(&reordered).await;
    let done = io.recv().await;
    assert_eq!(
        text_of(&done["result"]),
        "Hello, Ada! x=1 y=\"a\"",
        "{done}"
    );
}

// docs/basic/patterns/mrtr.mdx "Basic Workflow": "the server processing the retry does not need
// any information beyond what is directly present in the retry request" — replicas sharing the
// sealing key accept each other's state; a server with another key does not
#[tokio::test]
async fn mrtr_retry_works_on_another_replica_sharing_the_seal_key() {
    let shared = || ServerOptions {
        seal_key: SealKey::from_secret(b"replica secret"),
        ..ServerOptions::default()
    };
    let mut a = Stdio::start(mrtr_server(shared()));
    let mut b = Stdio::start(mrtr_server(shared()));
    let mut c = Stdio::start(default_server());
    let first = call(1, "ask_name");
    let state = input_required(&a.call(first.clone()).await)["requestState"].clone();
    let answer = json!({"user_name": accept(json!({"name": "Ada"}))});
    let done = b.call(retry(&first, 2, answer.clone(), &state)).await;
    assert_eq!(text_of(&done["result"]), "Hello, Ada!");
    let refused = c.call(retry(&first, 2, answer, &state)).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

// Rotating the keys: a replica that seals with a new key and still opens
// with the old one accepts state sealed before the rotation; one that only
// has the old key refuses state sealed with the new.
#[tokio::test]
async fn mrtr_state_survives_a_key_rotation() {
    let (old, new) = ("b2xkLXNlY3JldC0yMDI2LTEx", "bmV3LXNlY3JldC0yMDI2LTEy");
    let with = |keys: &[&str]| ServerOptions {
        seal_key: SealKey::from_base64_list(keys.iter().copied()).unwrap(),
        ..ServerOptions::default()
    };
    let mut before = Stdio::start(mrtr_server(with(&[old])));
    let mut rotated = Stdio::start(mrtr_server(with(&[new, old])));
    let mut after = Stdio::start(mrtr_server(with(&[new])));
    let first = call(1, "ask_name");
    let answer = json!({"user_name": accept(json!({"name": "Ada"}))});
    let sealed_old = input_required(&before.call(first.clone()).await)["requestState"].clone();
    let done = rotated
        .call(retry(&first, 2, answer.clone(), &sealed_old))
        .await;
    assert_eq!(text_of(&done["result"]), "Hello, Ada!", "{done}");
    let sealed_new = input_required(&rotated.call(first.clone()).await)["requestState"].clone();
    let done = after
        .call(retry(&first, 3, answer.clone(), &sealed_new))
        .await;
    assert_eq!(text_of(&done["result"]), "Hello, Ada!", "{done}");
    let refused = before.call(retry(&first, 4, answer, &sealed_new)).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

// docs/basic/patterns/mrtr.mdx "Server Requirements" 7 and docs/basic/index.mdx `_meta`: a
// needed capability the client did not declare -> -32021 with data.requiredCapabilities
#[tokio::test]
async fn mrtr_missing_client_capability_is_error_32021_with_required_capabilities() {
    let mut io = Stdio::start(default_server());
    for (caps, tool, missing) in [
        (json!({}), "ask_name", "elicitation"),
        (
            json!({"elicitation": {}, "roots": {}}),
            "unnamed_asks",
            "sampling",
        ),
        (
            json!({"sampling": {}, "roots": {}}),
            "two_rounds",
            "elicitation",
        ),
    ] {
        let meta = meta_with(json!({"io.modelcontextprotocol/clientCapabilities": caps}));
        let reply = io
            .call(request_with_meta(
                1,
                "tools/call",
                json!({"name": tool}),
                meta.clone(),
            ))
            .await;
        let reply = if reply.get("result").is_some() {
            // unnamed_asks asks for a name and roots first: answer them, then it needs sampling
            let state = reply["result"]["requestState"].clone();
            let mut retry_params = json!({"name": tool, "requestState": state});
            let asked = keys(&reply["result"]);
            retry_params["inputResponses"] =
                json!({asked[0].clone(): accept(json!({"name": "Ada"}))});
            let reply = io
                .call(request_with_meta(
                    2,
                    "tools/call",
                    retry_params,
                    meta.clone(),
                ))
                .await;
            let asked = keys(input_required(&reply));
            let state = reply["result"]["requestState"].clone();
            let retry_params = json!({"name": tool, "requestState": state, "inputResponses": {asked[0].clone(): roots()}});
            io.call(request_with_meta(3, "tools/call", retry_params, meta))
                .await
        } else {
            reply
        };
        assert_eq!(reply["error"]["code"], -32021, "{tool}: {reply}");
        assert_eq!(
            reply["error"]["data"]["requiredCapabilities"],
            json!({missing: {}}),
            "{reply}"
        );
        assert!(reply.get("result").is_none());
    }
}

// docs/basic/index.mdx `_meta`: -32021 is 400 Bad Request on HTTP
#[tokio::test]
async fn streamable_http_missing_client_capability_is_400() {
    let http = Http::start(default_server()).await;
    let r = http
        .post(&request_with_meta(
            1,
            "tools/call",
            json!({"name": "ask_name"}),
            meta_with(json!({})),
        ))
        .await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], -32021);
    assert_eq!(
        r.json()["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}})
    );
}

// docs/basic/transports/streamable-http.mdx "Message Flow" (MRTR): the InputRequiredResult is an
// ordinary response, and the retry is an independent POST
#[tokio::test]
async fn streamable_http_input_required_is_an_ordinary_json_response() {
    let http = Http::start(default_server()).await;
    let first = call(1, "ask_name");
    let r = http.post(&first).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-type"), Some("application/json"));
    let state = input_required(&r.json())["requestState"].clone();
    let r = http
        .post(&retry(
            &first,
            2,
            json!({"user_name": accept(json!({"name": "Ada"}))}),
            &state,
        ))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(text_of(&r.json()["result"]), "Hello, Ada!");
}

// docs/basic/transports/streamable-http.mdx "Receiving Messages": input is asked through an
// InputRequiredResult, never as a request on the stream; notifications may precede it
#[tokio::test]
async fn streamable_http_input_is_never_requested_on_the_sse_stream() {
    let http = Http::start(default_server()).await;
    let meta = meta_with(json!({
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/logLevel": "debug"
    }));
    let r = http
        .post(&request_with_meta(
            1,
            "tools/call",
            json!({"name": "log_then_ask"}),
            meta,
        ))
        .await;
    assert_eq!(r.header("content-type"), Some("text/event-stream"));
    let messages = r.sse_messages();
    assert_eq!(messages.len(), 2, "{}", r.body);
    assert_eq!(messages[0]["method"], "notifications/message");
    assert!(
        messages[0].get("id").is_none(),
        "a notification, not a request"
    );
    assert_eq!(messages[1]["id"], 1);
    input_required(&messages[1]);
}

// docs/basic/patterns/mrtr.mdx "Supported Requests" + docs/server/prompts.mdx "Getting a Prompt"
#[tokio::test]
async fn mrtr_prompts_get_can_ask_for_input() {
    let mut io = Stdio::start(default_server());
    let first = req(1, "prompts/get", json!({"name": "ask_name"}));
    let state = input_required(&io.call(first.clone()).await)["requestState"].clone();
    let done = io
        .call(retry(
            &first,
            2,
            json!({"user_name": accept(json!({"name": "Ada"}))}),
            &state,
        ))
        .await;
    assert_eq!(done["result"]["resultType"], "complete");
    assert_eq!(
        done["result"]["messages"][0]["content"]["text"],
        "Hello, Ada!"
    );
}

// docs/basic/patterns/mrtr.mdx "Supported Requests" + docs/server/resources.mdx "Reading
// Resources"; docs/server/utilities/caching.mdx: input_required carries no caching hints
#[tokio::test]
async fn mrtr_resources_read_can_ask_for_input() {
    let mut io = Stdio::start(default_server());
    let first = req(1, "resources/read", json!({"uri": "test://secret"}));
    let reply = io.call(first.clone()).await;
    let result = input_required(&reply);
    assert_eq!(keys(result), ["passphrase"]);
    assert!(
        result.get("ttlMs").is_none() && result.get("cacheScope").is_none(),
        "{result}"
    );
    assert!(result.get("contents").is_none());
    let state = result["requestState"].clone();
    let done = io
        .call(retry(
            &first,
            2,
            json!({"passphrase": accept(json!({"pass": "open sesame"}))}),
            &state,
        ))
        .await;
    assert_eq!(
        done["result"]["contents"][0]["text"],
        "unlocked with open sesame"
    );
    assert!(
        done["result"]["ttlMs"].is_u64(),
        "the complete result is cacheable again"
    );
}

// docs/basic/patterns/mrtr.mdx "Supported Requests": MUST NOT answer input_required to any
// other request — lists ignore MRTR fields, and a completion handler cannot ask
#[tokio::test]
async fn mrtr_input_required_is_never_the_answer_to_other_methods() {
    let mut io = Stdio::start(default_server());
    let mrtr_fields = json!({"inputResponses": {"x": {}}, "requestState": "not-checked-here"});
    for (method, field) in [
        ("tools/list", "tools"),
        ("prompts/list", "prompts"),
        ("resources/list", "resources"),
        ("resources/templates/list", "resourceTemplates"),
    ] {
        let reply = io.call(req(1, method, mrtr_fields.clone())).await;
        assert_eq!(
            reply["result"]["resultType"], "complete",
            "{method}: {reply}"
        );
        assert!(reply["result"][field].is_array(), "{method}: {reply}");
    }
    let reply = io.call(req(1, "server/discover", json!({}))).await;
    assert_eq!(reply["result"]["resultType"], "complete");
    let reply = io
        .call(req(
            2,
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "ask_name"}, "argument": {"name": "a", "value": ""}}),
        ))
        .await;
    assert!(reply.get("result").is_none(), "{reply}");
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
}
