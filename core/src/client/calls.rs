//! The requests a host's client makes, declared once: each binding's
//! client has one generic path, [`Client::call`], which takes a method
//! from this table, its params as the wire has them and the call's
//! options, and hands back the typed result; a binding's typed methods
//! (`call_tool`, `read_resource`...) are thin wrappers that build the
//! params and read the result.
//!
//! A new request a client sends (a task's `tasks/get`, say) is one row of
//! [`CLIENT_CALLS`] and, when its result is a type of its own, one variant
//! of [`CallResult`]; every binding reaches it at once through its
//! generic path.
//!
//! ```no_run
//! use ferromcp::client::{CallOptions, Client};
//! use serde_json::{Map, json};
//!
//! # async fn run(client: Client) -> Result<(), ferromcp::Error> {
//! let mut params = Map::new();
//! params.insert("name".into(), json!("echo"));
//! params.insert("arguments".into(), json!({"text": "hi"}));
//! let result = client.call("tools/call", params, &CallOptions::default()).await?;
//! println!("{}", serde_json::to_string(&result)?);
//! # Ok(())
//! # }
//! ```

use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use serde_json::{Map, Value, json};

use super::skills::{GetSkillResult, ListSkillsResult};
use super::{CallOptions, Client};
use crate::Error;
use crate::protocol::{
    CallToolResult, CompleteResult, DiscoverResult, GetPromptResult, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, ReadResourceResult, methods,
};

/// A result decoded into its type; a mismatch names the method.
pub(super) fn decode<T: DeserializeOwned>(method: &str, value: Value) -> Result<T, Error> {
    serde_json::from_value(value)
        .map_err(|e| Error::Protocol(format!("malformed {method} result: {e}")))
}

/// How a call's result reads: decoded from the server's answer by the
/// table's rule for the method.
type Decode = fn(&'static str, Value) -> Result<CallResult, Error>;

/// One request a host's client may send through [`Client::call`].
#[derive(Debug, Clone, Copy)]
pub struct ClientCall {
    /// The request method (`"tools/call"`).
    pub method: &'static str,
    decode: Decode,
}

/// Every request a host's client may send by name, in the order of the
/// schema's client requests. `server/discover` answers on a 2025-11-25
/// server too, with what the server said to `initialize`.
pub static CLIENT_CALLS: &[ClientCall] = &[
    row(methods::SERVER_DISCOVER, |m, v| {
        decode(m, v).map(CallResult::Discover)
    }),
    row(methods::TOOLS_LIST, |m, v| {
        decode(m, v).map(CallResult::ListTools)
    }),
    row(methods::RESOURCES_LIST, |m, v| {
        decode(m, v).map(CallResult::ListResources)
    }),
    row(methods::RESOURCES_TEMPLATES_LIST, |m, v| {
        decode(m, v).map(CallResult::ListResourceTemplates)
    }),
    row(methods::PROMPTS_LIST, |m, v| {
        decode(m, v).map(CallResult::ListPrompts)
    }),
    row(methods::TOOLS_CALL, |m, v| {
        decode(m, v).map(CallResult::CallTool)
    }),
    row(methods::RESOURCES_READ, |m, v| {
        decode(m, v).map(CallResult::ReadResource)
    }),
    row(methods::PROMPTS_GET, |m, v| {
        decode(m, v).map(CallResult::GetPrompt)
    }),
    row(methods::COMPLETION_COMPLETE, |m, v| {
        decode(m, v).map(CallResult::Complete)
    }),
    row(methods::SKILLS_LIST, |m, v| {
        decode(m, v).map(CallResult::ListSkills)
    }),
    row(methods::SKILLS_GET, |m, v| {
        decode(m, v).map(CallResult::GetSkill)
    }),
];

const fn row(method: &'static str, decode: Decode) -> ClientCall {
    ClientCall { method, decode }
}

impl ClientCall {
    /// The row of `method`, if a host's client may send it.
    ///
    /// ```
    /// use ferromcp::client::ClientCall;
    /// assert!(ClientCall::find("tools/list").is_some());
    /// assert!(ClientCall::find("tools/delete").is_none());
    /// ```
    pub fn find(method: &str) -> Option<&'static ClientCall> {
        CLIENT_CALLS.iter().find(|call| call.method == method)
    }
}

/// The typed result of a [`Client::call`]. It serialises as the result
/// object itself, so a binding turns it into its host's value in one step.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum CallResult {
    /// `server/discover`.
    Discover(DiscoverResult),
    /// What a 2025-11-25 server answered to `initialize`, for `server/discover`.
    Initialized(Map<String, Value>),
    /// `tools/list`.
    ListTools(ListToolsResult),
    /// `resources/list`.
    ListResources(ListResourcesResult),
    /// `resources/templates/list`.
    ListResourceTemplates(ListResourceTemplatesResult),
    /// `prompts/list`.
    ListPrompts(ListPromptsResult),
    /// `tools/call`.
    CallTool(CallToolResult),
    /// `resources/read`.
    ReadResource(ReadResourceResult),
    /// `prompts/get`.
    GetPrompt(GetPromptResult),
    /// `completion/complete`.
    Complete(CompleteResult),
    /// `skills/list` (the skills extension).
    ListSkills(ListSkillsResult),
    /// `skills/get` (the skills extension).
    GetSkill(GetSkillResult),
}

impl Serialize for CallResult {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            CallResult::Discover(r) => r.serialize(serializer),
            CallResult::Initialized(r) => r.serialize(serializer),
            CallResult::ListTools(r) => r.serialize(serializer),
            CallResult::ListResources(r) => r.serialize(serializer),
            CallResult::ListResourceTemplates(r) => r.serialize(serializer),
            CallResult::ListPrompts(r) => r.serialize(serializer),
            CallResult::CallTool(r) => r.serialize(serializer),
            CallResult::ReadResource(r) => r.serialize(serializer),
            CallResult::GetPrompt(r) => r.serialize(serializer),
            CallResult::Complete(r) => r.serialize(serializer),
            CallResult::ListSkills(r) => r.serialize(serializer),
            CallResult::GetSkill(r) => r.serialize(serializer),
        }
    }
}

/// The params of `completion/complete` for `argument` (typed so far:
/// `value`) of `reference`, with the values of the arguments already
/// resolved (no `context` when there are none).
///
/// ```
/// use ferromcp::client::complete_params;
/// use serde_json::{Map, json};
///
/// let params = complete_params(json!({"type": "ref/prompt", "name": "review"}), "language", "r", Map::new());
/// assert_eq!(params["argument"], json!({"name": "language", "value": "r"}));
/// assert!(!params.contains_key("context"));
/// ```
pub fn complete_params(
    reference: Value,
    argument: &str,
    value: &str,
    resolved: Map<String, Value>,
) -> Map<String, Value> {
    let mut params = Map::new();
    params.insert("ref".into(), reference);
    params.insert("argument".into(), json!({"name": argument, "value": value}));
    params.insert("context".into(), json!({ "arguments": resolved }));
    drop_empty_context(&mut params);
    params
}

/// `completion/complete` sends no `context` while no argument is resolved
/// yet: the rule every client's completion follows, whatever its host
/// handed over (`context: {arguments: {}}`, or nothing).
fn drop_empty_context(params: &mut Map<String, Value>) {
    let empty = params.get("context").is_some_and(|context| {
        context.is_null()
            || context
                .get("arguments")
                .is_none_or(|a| a.is_null() || a.as_object().is_some_and(Map::is_empty))
    });
    if empty {
        params.remove("context");
    }
}

impl Client {
    /// Sends one request of [`CLIENT_CALLS`] with `params` as the wire has
    /// them (without `_meta`, which the client adds; `options.meta` joins
    /// it) and decodes the result by the method's rule: the one path every
    /// binding's client methods take. A method not in the table is refused
    /// before anything is sent.
    pub async fn call(
        &self,
        method: &str,
        params: Map<String, Value>,
        options: &CallOptions,
    ) -> Result<CallResult, Error> {
        let Some(call) = ClientCall::find(method) else {
            return Err(Error::Protocol(format!(
                "{method:?} is not a request a client sends (see client::CLIENT_CALLS)"
            )));
        };
        let mut params = params;
        if call.method == methods::COMPLETION_COMPLETE {
            drop_empty_context(&mut params);
        }
        let answer = self.send(call.method, params, options).await;
        if call.method == methods::SERVER_DISCOVER
            && let Err(error) = &answer
            && self.is_legacy() == Some(true)
            && let Some(initialized) = self.legacy_initialize_result()
        {
            tracing::debug!(%error, "a legacy server: discover reads its initialize result");
            return Ok(CallResult::Initialized(initialized));
        }
        (call.decode)(call.method, answer?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::testing::{Scripted, modern};
    use serde_json::json;

    #[test]
    fn every_row_is_a_request_a_client_sends() {
        for call in CLIENT_CALLS {
            let method = methods::Method::from_name(call.method).expect(call.method);
            assert!(
                matches!(method.sender(), methods::Sender::Client),
                "{}",
                call.method
            );
        }
    }

    #[tokio::test]
    async fn a_call_decodes_by_its_method_and_serialises_as_the_result() {
        let transport = Scripted::new([Ok(json!({"content": [{"type": "text", "text": "hi"}]}))]);
        let client = transport.client(modern());
        let mut params = Map::new();
        params.insert("name".into(), json!("echo"));
        let result = client
            .call("tools/call", params, &CallOptions::default())
            .await
            .unwrap();
        assert!(matches!(result, CallResult::CallTool(_)));
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({"resultType": "complete", "content": [{"type": "text", "text": "hi"}]})
        );
        assert_eq!(transport.sent()[0].method, "tools/call");
    }

    #[tokio::test]
    async fn a_completion_without_resolved_arguments_sends_no_context() {
        let answer = || Ok(json!({"completion": {"values": []}}));
        let transport = Scripted::new([answer(), answer()]);
        let client = transport.client(modern());
        let reference = json!({"type": "ref/prompt", "name": "p"});
        let empty = complete_params(reference.clone(), "a", "", Map::new());
        let mut given = empty.clone();
        given.insert("context".into(), json!({"arguments": {}}));
        let mut resolved = Map::new();
        resolved.insert("b".into(), json!("x"));
        let kept = complete_params(reference, "a", "", resolved);
        let options = CallOptions::default();
        client
            .call("completion/complete", given, &options)
            .await
            .unwrap();
        client
            .call("completion/complete", kept, &options)
            .await
            .unwrap();
        let sent = transport.sent();
        assert!(!empty.contains_key("context"));
        assert_eq!(sent[0].params.get("context"), None);
        assert_eq!(sent[1].params["context"], json!({"arguments": {"b": "x"}}));
    }

    #[tokio::test]
    async fn a_method_outside_the_table_is_refused_before_sending() {
        let transport = Scripted::new([]);
        let client = transport.client(modern());
        let refused = client
            .call("tools/delete", Map::new(), &CallOptions::default())
            .await;
        assert!(matches!(refused, Err(Error::Protocol(_))));
        assert!(transport.sent().is_empty());
    }

    #[tokio::test]
    async fn a_malformed_result_names_the_method() {
        let transport = Scripted::new([Ok(json!({"tools": "none"}))]);
        let client = transport.client(modern());
        let error = client
            .call("tools/list", Map::new(), &CallOptions::default())
            .await
            .unwrap_err();
        assert!(
            error.to_string().contains("malformed tools/list result"),
            "{error}"
        );
    }
}
