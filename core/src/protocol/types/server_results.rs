//! The result of `server/discover` and the union of every result a server
//! sends: the top of the result types, above each method's own.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::capabilities::ServerCapabilities;
use super::completion::CompleteResult;
use super::input::InputRequiredResult;
use super::meta_objects::ResultMetaObject;
use super::prompts::{GetPromptResult, ListPromptsResult};
use super::resources::{ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult};
use super::results::{BaseResult, CacheScope, ResultType};
use super::serde_util;
use super::subscriptions::SubscriptionsListenResult;
use super::tool_calls::CallToolResult;
use super::tools::ListToolsResult;

/// The result of `server/discover` (schema: `DiscoverResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// How to read the result.
    #[serde(default)]
    pub result_type: ResultType,
    /// Protocol revisions the server supports.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// How to use the server, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long (ms) the client may cache the result.
    /// Absent from earlier revisions\' results: read as 0 (stale at once).
    #[serde(default)]
    pub ttl_ms: u64,
    /// Who may cache the result.
    /// Absent from earlier revisions\' results: read as `private`.
    #[serde(default)]
    pub cache_scope: CacheScope,
    /// Result metadata (server info).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
}

/// Any result a server sends (schema: `ServerResult`).
///
/// Without the request's method a result cannot always be classified; this
/// picks the variant from the members present (`tools`, `contents`,
/// `completion`...), falling back to [`ServerResult::Other`]. Prefer the
/// specific result type when the method is known.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ServerResult {
    /// `resultType: "input_required"`.
    InputRequired(InputRequiredResult),
    /// Has `supportedVersions`.
    Discover(DiscoverResult),
    /// Has `resources`.
    ListResources(ListResourcesResult),
    /// Has `resourceTemplates`.
    ListResourceTemplates(ListResourceTemplatesResult),
    /// Has `contents`.
    ReadResource(ReadResourceResult),
    /// Has `prompts`.
    ListPrompts(ListPromptsResult),
    /// Has `messages`.
    GetPrompt(GetPromptResult),
    /// Has `tools`.
    ListTools(ListToolsResult),
    /// Has `content`.
    CallTool(CallToolResult),
    /// Has `completion`.
    Complete(CompleteResult),
    /// Has only `_meta` with a subscription id.
    SubscriptionsListen(SubscriptionsListenResult),
    /// Anything else (an empty result, for one).
    Other(BaseResult),
}

impl<'de> Deserialize<'de> for ServerResult {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let Some(obj) = value.as_object() else {
            return Err(de::Error::custom("a result must be a JSON object"));
        };
        let has = |key: &str| obj.contains_key(key);
        if serde_util::str_member(&value, "resultType") == Some("input_required") {
            return serde_util::variant(value).map(ServerResult::InputRequired);
        }
        let listen_closed = obj
            .get("_meta")
            .is_some_and(|m| m.get("io.modelcontextprotocol/subscriptionId").is_some())
            && obj.keys().all(|k| k == "_meta" || k == "resultType");
        if has("supportedVersions") {
            serde_util::variant(value).map(ServerResult::Discover)
        } else if has("resources") {
            serde_util::variant(value).map(ServerResult::ListResources)
        } else if has("resourceTemplates") {
            serde_util::variant(value).map(ServerResult::ListResourceTemplates)
        } else if has("contents") {
            serde_util::variant(value).map(ServerResult::ReadResource)
        } else if has("prompts") {
            serde_util::variant(value).map(ServerResult::ListPrompts)
        } else if has("messages") {
            serde_util::variant(value).map(ServerResult::GetPrompt)
        } else if has("tools") {
            serde_util::variant(value).map(ServerResult::ListTools)
        } else if has("content") {
            serde_util::variant(value).map(ServerResult::CallTool)
        } else if has("completion") {
            serde_util::variant(value).map(ServerResult::Complete)
        } else if listen_closed {
            serde_util::variant(value).map(ServerResult::SubscriptionsListen)
        } else {
            serde_util::variant(value).map(ServerResult::Other)
        }
    }
}
