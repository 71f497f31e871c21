//! Multi round-trip requests (spec: basic/patterns/mrtr.mdx) by replay.
//!
//! A handler asks the client for input with `ctx.elicit`, `ctx.sample` or
//! `ctx.list_roots` and awaits the answer. When the answer is not in the
//! request yet, the ask is recorded and the round ends: the server answers
//! with an `InputRequiredResult` listing every unanswered ask and a sealed
//! `requestState` holding the answers gathered so far. The client retries the
//! same request with `inputResponses`; the handler runs again from the top
//! and each ask now returns its answer (from `inputResponses` or from the
//! state), until the handler completes.
//!
//! `requestState` is HMAC-sealed and binds the method, a digest of the
//! request's salient parameters and an expiry, so it cannot be forged,
//! altered, replayed on another request, or used after it lapses.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::Notify;

use super::error::HandlerError;
use super::seal::SealKey;
use super::validation::CompiledSchema;
use crate::McpError;
use crate::protocol::codes;
use crate::protocol::methods::{InputKind, supports_input};
use crate::rpc::lock_unpoisoned;

const STATE_PURPOSE: &str = "request-state";

/// What an ask resolved to right now.
#[derive(Debug, Clone, PartialEq)]
pub enum AskOutcome {
    /// The client already answered: here is its result.
    Answered(Value),
    /// The question was recorded; the handler must stop so the server can
    /// send it (hosts raise an exception, Rust handlers await forever and
    /// are dropped).
    Pending,
}

/// Per-request input bookkeeping.
pub(crate) struct InputRound {
    method: &'static str,
    answers: Map<String, Value>,
    asked: Mutex<Vec<(String, Value)>>,
    next_auto_key: AtomicUsize,
    notify: Notify,
    client_capabilities: Map<String, Value>,
    /// Set by the first answer that did not fit (see `invalid_answer`).
    invalid: Mutex<Option<McpError>>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct StatePayload {
    /// method
    m: String,
    /// digest of the salient params
    d: String,
    /// expiry, seconds since the epoch
    e: u64,
    /// answers gathered in earlier rounds
    a: Map<String, Value>,
    /// keys asked in the round that produced this state
    k: Vec<String>,
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Serialises with object keys sorted, so the digest does not depend on the
/// order a client wrote the params in.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Digest of what identifies the request being retried: its params without
/// the protocol and MRTR fields.
fn params_digest(params: &Map<String, Value>) -> String {
    let mut salient = params.clone();
    for key in ["_meta", "inputResponses", "requestState"] {
        salient.remove(key);
    }
    let mut text = String::new();
    canonical(&Value::Object(salient), &mut text);
    let digest = Sha256::digest(text.as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

fn invalid_state(why: &str) -> McpError {
    McpError::invalid_params(format!("Invalid requestState: {why}"))
}

impl InputRound {
    /// Reads `requestState` and `inputResponses` from a request's params.
    pub(crate) fn from_request(
        method: &'static str,
        params: &Map<String, Value>,
        client_capabilities: &Map<String, Value>,
        key: &SealKey,
    ) -> Result<InputRound, McpError> {
        let responses = match params.get("inputResponses") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => return Err(McpError::invalid_params("inputResponses must be an object")),
        };
        let answers = match params.get("requestState") {
            // Without state we cannot know what was asked; every response
            // is a candidate, checked when the handler asks.
            None | Some(Value::Null) => responses,
            Some(Value::String(sealed)) => {
                let payload = key
                    .open(STATE_PURPOSE, sealed)
                    .ok_or_else(|| invalid_state("integrity check failed"))?;
                let state: StatePayload = serde_json::from_slice(&payload)
                    .map_err(|_| invalid_state("unreadable payload"))?;
                if state.m != method {
                    return Err(invalid_state("issued for another method"));
                }
                if state.d != params_digest(params) {
                    return Err(invalid_state("issued for a request with other parameters"));
                }
                if state.e < now_secs() {
                    return Err(invalid_state("expired"));
                }
                let mut answers = state.a;
                // Only answers to what was asked count; extra keys are ignored.
                for k in state.k {
                    if let Some(v) = responses.get(&k) {
                        answers.insert(k, v.clone());
                    }
                }
                answers
            }
            Some(_) => return Err(invalid_state("must be a string")),
        };
        Ok(InputRound {
            method,
            answers,
            asked: Mutex::new(Vec::new()),
            next_auto_key: AtomicUsize::new(0),
            notify: Notify::new(),
            client_capabilities: client_capabilities.clone(),
            invalid: Mutex::new(None),
        })
    }

    /// A key for an ask the handler did not name: the ask's position, which
    /// is the same on every replay of a deterministic handler.
    pub(crate) fn auto_key(&self, kind: InputKind) -> String {
        let n = self.next_auto_key.fetch_add(1, Ordering::Relaxed);
        format!("{}-{n}", kind.capability())
    }

    /// Whether an ask of this round can end it unanswered: only when the
    /// client declared a capability for some kind of input (an ask for one
    /// it did not declare fails at once instead).
    pub(crate) fn can_pend(&self) -> bool {
        InputKind::ALL
            .iter()
            .any(|kind| self.client_capabilities.contains_key(kind.capability()))
    }

    /// Resolves an ask from the answers at hand, or records it and ends
    /// the round.
    pub(crate) fn ask(
        &self,
        key: &str,
        kind: InputKind,
        params: Value,
    ) -> Result<AskOutcome, HandlerError> {
        let outcome = self.ask_quietly(key, kind, params);
        if matches!(outcome, Ok(AskOutcome::Pending)) {
            self.end_round();
        }
        outcome
    }

    /// Ends the round once the handler recorded an unanswered ask.
    pub(crate) fn end_round(&self) {
        self.notify.notify_one();
    }

    /// Resolves an ask from the answers at hand, or records it without
    /// ending the round yet (several asks made together land in one
    /// round; the caller ends it with [`InputRound::end_round`]).
    pub(crate) fn ask_quietly(
        &self,
        key: &str,
        kind: InputKind,
        params: Value,
    ) -> Result<AskOutcome, HandlerError> {
        if !supports_input(self.method) {
            return Err(HandlerError::Protocol(McpError::internal(format!(
                "{} cannot ask the client for input (only tools/call, prompts/get and resources/read can)",
                self.method
            ))));
        }
        let capability = kind.capability();
        if !self.client_capabilities.contains_key(capability) {
            return Err(HandlerError::Protocol(
                McpError::new(
                    codes::MISSING_REQUIRED_CLIENT_CAPABILITY,
                    format!("This request needs the client capability '{capability}'"),
                )
                .with_data(json!({"requiredCapabilities": {capability: {}}})),
            ));
        }
        // A null answer is a missing one: asked again (mrtr.mdx "Error
        // Handling"). An answer that is there but does not fit is a protocol
        // error: asking again with the same question would loop forever
        // without telling the client what was wrong.
        if let Some(answer) = self.answers.get(key).filter(|a| !a.is_null()) {
            return match check_answer(kind, &params, answer) {
                Ok(()) => Ok(AskOutcome::Answered(answer.clone())),
                Err(error) => {
                    let error = error.with_data(json!({ "inputKey": key }));
                    lock_unpoisoned(&self.invalid).get_or_insert_with(|| error.clone());
                    Err(HandlerError::Protocol(error))
                }
            };
        }
        let mut asked = lock_unpoisoned(&self.asked);
        if !asked.iter().any(|(k, _)| k == key) {
            asked.push((
                key.to_owned(),
                json!({"method": kind.method(), "params": params}),
            ));
        }
        drop(asked);
        Ok(AskOutcome::Pending)
    }

    /// The error for the first answer that did not fit its ask, if any:
    /// it ends the request even when the handler caught it or another ask
    /// is still unanswered.
    pub(crate) fn invalid_answer(&self) -> Option<McpError> {
        lock_unpoisoned(&self.invalid).clone()
    }

    pub(crate) fn has_pending(&self) -> bool {
        !lock_unpoisoned(&self.asked).is_empty()
    }

    /// Resolves once the handler recorded an unanswered ask.
    pub(crate) async fn pending(&self) {
        self.notify.notified().await
    }

    /// The `InputRequiredResult` for this round.
    pub(crate) fn input_required(
        &self,
        params: &Map<String, Value>,
        key: &SealKey,
        ttl: Duration,
    ) -> Map<String, Value> {
        let asked = lock_unpoisoned(&self.asked);
        let mut requests = Map::new();
        for (k, request) in asked.iter() {
            requests.insert(k.clone(), request.clone());
        }
        // Carry forward only answers that are still valid for their asks;
        // answers to asks of this round are excluded (they did not fit).
        let mut carried = self.answers.clone();
        for (k, _) in asked.iter() {
            carried.remove(k);
        }
        let payload = StatePayload {
            m: self.method.to_owned(),
            d: params_digest(params),
            e: now_secs() + ttl.as_secs().max(1),
            a: carried,
            k: asked.iter().map(|(k, _)| k.clone()).collect(),
        };
        let sealed = key.seal(
            STATE_PURPOSE,
            &serde_json::to_vec(&payload).unwrap_or_default(),
        );
        let mut result = Map::new();
        result.insert("resultType".into(), Value::from("input_required"));
        result.insert("inputRequests".into(), Value::Object(requests));
        result.insert("requestState".into(), Value::from(sealed));
        result
    }
}

/// Checks a client's answer against the request it answers: the shape of
/// the result type, and for a form elicitation the `requestedSchema`
/// (elicitation.mdx: "Servers SHOULD validate received data matches the
/// requested schema"). Both eras call this, so an answer is judged the same
/// whether it came in `inputResponses` or as a live response; a bad one is
/// `-32602` with a message naming what is wrong.
pub(crate) fn check_answer(
    kind: InputKind,
    params: &Value,
    answer: &Value,
) -> Result<(), McpError> {
    let problem = match kind {
        InputKind::Elicitation => elicitation_problem(params, answer),
        InputKind::Sampling => sampling_problem(answer),
        InputKind::Roots => roots_problem(answer),
    };
    match problem {
        None => Ok(()),
        Some(problem) => Err(McpError::invalid_params(problem)),
    }
}

fn elicitation_problem(params: &Value, answer: &Value) -> Option<String> {
    const WHAT: &str = "elicitation response";
    let Value::Object(answer) = answer else {
        return Some(format!("{WHAT} must be an object, not {answer}"));
    };
    match answer.get("action").and_then(Value::as_str) {
        Some("decline") | Some("cancel") => return None,
        Some("accept") => {}
        _ => {
            return Some(format!(
                "{WHAT}: field \"action\": expected \"accept\", \"decline\" or \"cancel\""
            ));
        }
    }
    let content = answer.get("content").cloned().unwrap_or(json!({}));
    if !content.is_object() {
        return Some(format!("{WHAT}: field \"content\": expected an object"));
    }
    let Some(Value::Object(schema)) = params.get("requestedSchema") else {
        return None;
    };
    // A schema that does not compile was the server's own mistake; the
    // client's answer is not held against it.
    let compiled = CompiledSchema::compile(schema).ok()?;
    let problems = compiled.check(&content).err()?;
    let named: Vec<String> = problems.split("; ").map(name_the_field).collect();
    Some(format!(
        "{WHAT} does not match requestedSchema: {}",
        named.join("; ")
    ))
}

/// Rewords a validator problem (`/age: "x" is not of type "integer"`,
/// `(root): "name" is a required property`) to name the form field:
/// `field "age": expected integer, got "x"`, `field "name": required`.
fn name_the_field(problem: &str) -> String {
    if let Some(rest) = problem.strip_prefix("(root): ") {
        if let Some(quoted) = rest.strip_suffix(" is a required property")
            && let Ok(Value::String(name)) = serde_json::from_str::<Value>(quoted)
        {
            return format!("field {}: required", Value::from(name));
        }
        return rest.to_owned();
    }
    let Some((pointer, message)) = problem.strip_prefix('/').and_then(|p| p.split_once(": "))
    else {
        return problem.to_owned();
    };
    let (field, deeper) = pointer.split_once('/').unwrap_or((pointer, ""));
    let field = field.replace("~1", "/").replace("~0", "~");
    let at = if deeper.is_empty() {
        String::new()
    } else {
        format!(" (at /{deeper})")
    };
    let message = match message.rsplit_once(" is not of type ") {
        Some((value, expected)) => format!("expected {}, got {value}", expected.trim_matches('"')),
        None => message.to_owned(),
    };
    format!("field {}{at}: {message}", Value::from(field))
}

fn sampling_problem(answer: &Value) -> Option<String> {
    const WHAT: &str = "sampling response";
    let Value::Object(answer) = answer else {
        return Some(format!("{WHAT} must be an object, not {answer}"));
    };
    if !answer.get("role").is_some_and(Value::is_string) {
        return Some(format!("{WHAT}: field \"role\": expected a string"));
    }
    if !answer
        .get("content")
        .is_some_and(|c| c.is_object() || c.is_array())
    {
        return Some(format!(
            "{WHAT}: field \"content\": expected a content block or an array of them"
        ));
    }
    if !answer.get("model").is_some_and(Value::is_string) {
        return Some(format!("{WHAT}: field \"model\": expected a string"));
    }
    None
}

fn roots_problem(answer: &Value) -> Option<String> {
    const WHAT: &str = "roots response";
    let Some(roots) = answer.get("roots").and_then(Value::as_array) else {
        return Some(format!("{WHAT}: field \"roots\": expected an array"));
    };
    roots
        .iter()
        .position(|r| !r.get("uri").is_some_and(Value::is_string))
        .map(|i| format!("{WHAT}: field \"roots[{i}].uri\": expected a string"))
}

/// Parses a host-provided method name (bindings pass strings).
pub fn input_kind_for_method(method: &str) -> Option<InputKind> {
    InputKind::from_method(method)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caps() -> Map<String, Value> {
        json!({"elicitation": {}, "sampling": {}, "roots": {}})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    fn params() -> Map<String, Value> {
        json!({"name": "t", "arguments": {"x": 1}})
            .as_object()
            .cloned()
            .unwrap_or_default()
    }

    #[test]
    fn ask_then_answer_through_sealed_state() {
        let key = SealKey::random();
        let round1 = InputRound::from_request("tools/call", &params(), &caps(), &key).unwrap();
        let schema = json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}});
        assert_eq!(
            round1
                .ask("who", InputKind::Elicitation, schema.clone())
                .unwrap(),
            AskOutcome::Pending
        );
        let result = round1.input_required(&params(), &key, Duration::from_secs(60));
        let state = result["requestState"].as_str().unwrap().to_owned();

        let mut retry = params();
        retry.insert("requestState".into(), Value::from(state.clone()));
        retry.insert(
            "inputResponses".into(),
            json!({"who": {"action": "accept", "content": {"name": "Ada"}}, "extra": 1}),
        );
        let round2 = InputRound::from_request("tools/call", &retry, &caps(), &key).unwrap();
        assert!(matches!(
            round2
                .ask("who", InputKind::Elicitation, schema.clone())
                .unwrap(),
            AskOutcome::Answered(_)
        ));

        // a response that does not fit the requested schema is an error
        // naming the field, remembered by the round
        retry.insert(
            "inputResponses".into(),
            json!({"who": {"action": "accept", "content": {"name": 5}}}),
        );
        let round2b = InputRound::from_request("tools/call", &retry, &caps(), &key).unwrap();
        let err = round2b
            .ask("who", InputKind::Elicitation, schema)
            .unwrap_err();
        let HandlerError::Protocol(err) = err else {
            panic!("{err:?}")
        };
        assert_eq!(err.code, codes::INVALID_PARAMS);
        assert_eq!(
            err.message,
            "elicitation response does not match requestedSchema: field \"name\": expected string, got 5"
        );
        assert_eq!(round2b.invalid_answer(), Some(err));
        assert!(!round2b.has_pending());
    }

    #[test]
    fn answers_are_checked_and_the_failing_field_named() {
        let form = json!({"requestedSchema": {"type": "object", "properties": {
            "age": {"type": "integer"}, "name": {"type": "string"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
        }, "required": ["name"]}});
        let accept = |content: Value| json!({"action": "accept", "content": content});
        let message = |kind, params: &Value, answer: Value| {
            check_answer(kind, params, &answer).map_err(|e| (e.code, e.message))
        };
        let e = InputKind::Elicitation;
        assert_eq!(
            message(e, &form, accept(json!({"name": "Ada", "age": 3}))),
            Ok(())
        );
        assert_eq!(message(e, &form, json!({"action": "decline"})), Ok(()));
        for (answer, expected) in [
            (
                accept(json!({"name": "Ada", "age": "x"})),
                "elicitation response does not match requestedSchema: field \"age\": expected integer, got \"x\"",
            ),
            (
                accept(json!({})),
                "elicitation response does not match requestedSchema: field \"name\": required",
            ),
            (
                accept(json!({"name": "Ada", "tags": ["c"]})),
                "elicitation response does not match requestedSchema: field \"tags\" (at /0): \"c\" is not one of \"a\" or \"b\"",
            ),
            (
                json!({"action": "maybe"}),
                "elicitation response: field \"action\": expected \"accept\", \"decline\" or \"cancel\"",
            ),
            (
                accept(json!("Ada")),
                "elicitation response: field \"content\": expected an object",
            ),
            (
                json!("Ada"),
                "elicitation response must be an object, not \"Ada\"",
            ),
        ] {
            assert_eq!(
                message(e, &form, answer),
                Err((codes::INVALID_PARAMS, expected.to_owned()))
            );
        }
        let sampled = json!({"role": "assistant", "content": {"type": "text", "text": "x"}});
        assert_eq!(
            message(InputKind::Sampling, &json!({}), sampled),
            Err((
                codes::INVALID_PARAMS,
                "sampling response: field \"model\": expected a string".to_owned()
            ))
        );
        assert_eq!(
            message(
                InputKind::Roots,
                &json!({}),
                json!({"roots": [{"uri": "file:///a"}, {}]})
            ),
            Err((
                codes::INVALID_PARAMS,
                "roots response: field \"roots[1].uri\": expected a string".to_owned()
            ))
        );
    }

    #[test]
    fn state_is_bound_to_method_params_and_integrity() {
        let key = SealKey::random();
        let round = InputRound::from_request("tools/call", &params(), &caps(), &key).unwrap();
        round.ask("k", InputKind::Roots, json!({})).unwrap();
        let state =
            round.input_required(&params(), &key, Duration::from_secs(60))["requestState"].clone();
        let mut other = json!({"name": "t", "arguments": {"x": 2}})
            .as_object()
            .cloned()
            .unwrap();
        other.insert("requestState".into(), state.clone());
        assert!(InputRound::from_request("tools/call", &other, &caps(), &key).is_err());
        let mut same = params();
        same.insert("requestState".into(), state.clone());
        assert!(InputRound::from_request("prompts/get", &same, &caps(), &key).is_err());
        same.insert(
            "requestState".into(),
            Value::from(format!("{}-TAMPERED", state.as_str().unwrap())),
        );
        assert!(InputRound::from_request("tools/call", &same, &caps(), &key).is_err());
    }

    #[test]
    fn a_quiet_ask_is_recorded_without_ending_the_round() {
        let key = SealKey::random();
        let round = InputRound::from_request("tools/call", &params(), &caps(), &key).unwrap();
        assert_eq!(
            round.ask_quietly("a", InputKind::Roots, json!({})).unwrap(),
            AskOutcome::Pending
        );
        assert!(round.has_pending());
        // no wake-up was stored: pending() would wait for the handler
        assert!(!ready_now(round.pending()));
        round.ask("b", InputKind::Roots, json!({})).unwrap();
        assert!(ready_now(round.pending()));
        let result = round.input_required(&params(), &key, Duration::from_secs(60));
        let asked: Vec<&String> = result["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(asked, ["a", "b"]);
    }

    /// Whether a future is ready at its first poll.
    fn ready_now(future: impl std::future::Future<Output = ()>) -> bool {
        let mut future = std::pin::pin!(future);
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        future.as_mut().poll(&mut cx).is_ready()
    }

    #[test]
    fn missing_capability_is_an_error_not_an_ask() {
        let key = SealKey::random();
        let sampling_only = json!({"sampling": {}}).as_object().cloned().unwrap();
        let round =
            InputRound::from_request("tools/call", &params(), &sampling_only, &key).unwrap();
        let err = round
            .ask("k", InputKind::Elicitation, json!({}))
            .unwrap_err();
        assert!(matches!(err, HandlerError::Protocol(ref e) if e.code == -32021));
        assert!(!round.has_pending());
    }
}
