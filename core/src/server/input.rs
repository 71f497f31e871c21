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
    method: String,
    answers: Map<String, Value>,
    asked: Mutex<Vec<(String, Value)>>,
    next_auto_key: AtomicUsize,
    notify: Notify,
    client_capabilities: Map<String, Value>,
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
        method: &str,
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
            method: method.to_owned(),
            answers,
            asked: Mutex::new(Vec::new()),
            next_auto_key: AtomicUsize::new(0),
            notify: Notify::new(),
            client_capabilities: client_capabilities.clone(),
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

    /// Resolves an ask from the answers at hand, or records it.
    pub(crate) fn ask(
        &self,
        key: &str,
        kind: InputKind,
        params: Value,
    ) -> Result<AskOutcome, HandlerError> {
        if !supports_input(&self.method) {
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
        if let Some(answer) = self.answers.get(key)
            && answer_fits(kind, &params, answer)
        {
            return Ok(AskOutcome::Answered(answer.clone()));
        }
        let mut asked = lock_unpoisoned(&self.asked);
        if !asked.iter().any(|(k, _)| k == key) {
            asked.push((
                key.to_owned(),
                json!({"method": kind.method(), "params": params}),
            ));
        }
        drop(asked);
        self.notify.notify_one();
        Ok(AskOutcome::Pending)
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
            m: self.method.clone(),
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

/// Whether a client's response has the shape of a result for the request
/// it answers; a response that does not fit is asked for again.
fn answer_fits(kind: InputKind, params: &Value, answer: &Value) -> bool {
    let Value::Object(answer) = answer else {
        return false;
    };
    match kind {
        InputKind::Elicitation => {
            let action = answer.get("action").and_then(Value::as_str);
            match action {
                Some("decline") | Some("cancel") => true,
                Some("accept") => {
                    let content = answer.get("content").cloned().unwrap_or(json!({}));
                    if !content.is_object() {
                        return false;
                    }
                    match params.get("requestedSchema") {
                        Some(Value::Object(schema)) => CompiledSchema::compile(schema)
                            .map(|s| s.check(&content).is_ok())
                            .unwrap_or(true),
                        _ => true,
                    }
                }
                _ => false,
            }
        }
        InputKind::Sampling => {
            answer.get("role").is_some_and(Value::is_string)
                && answer
                    .get("content")
                    .is_some_and(|c| c.is_object() || c.is_array())
                && answer.get("model").is_some_and(Value::is_string)
        }
        InputKind::Roots => answer
            .get("roots")
            .and_then(Value::as_array)
            .is_some_and(|roots| {
                roots
                    .iter()
                    .all(|r| r.get("uri").is_some_and(Value::is_string))
            }),
    }
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

        // a response that does not fit the requested schema is asked again
        retry.insert(
            "inputResponses".into(),
            json!({"who": {"action": "accept", "content": {"name": 5}}}),
        );
        let round2b = InputRound::from_request("tools/call", &retry, &caps(), &key).unwrap();
        assert_eq!(
            round2b.ask("who", InputKind::Elicitation, schema).unwrap(),
            AskOutcome::Pending
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
