//! Result building blocks: `resultType`, caching hints, the generic result,
//! "input required or complete" results, the discover result and the union
//! of every server result.

use serde::de::{self, DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::capabilities::ServerCapabilities;
use super::completion::CompleteResult;
use super::input::InputRequiredResult;
use super::meta_objects::ResultMetaObject;
use super::prompts::{GetPromptResult, ListPromptsResult};
use super::resources::{ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult};
use super::serde_util;
use super::subscriptions::SubscriptionsListenResult;
use super::tools::{CallToolResult, ListToolsResult};

/// How to read a result (schema: `ResultType`, an open string).
///
/// An absent `resultType` (a server of an earlier revision) reads as
/// [`ResultType::Complete`], as the schema requires of clients.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum ResultType {
    /// `"complete"`: the result holds the final content.
    #[default]
    Complete,
    /// `"input_required"`: the result is an [`InputRequiredResult`].
    InputRequired,
    /// Any other value, kept as is.
    Other(String),
}

impl ResultType {
    /// The wire string.
    pub fn as_str(&self) -> &str {
        match self {
            ResultType::Complete => "complete",
            ResultType::InputRequired => "input_required",
            ResultType::Other(s) => s,
        }
    }
}

impl From<String> for ResultType {
    fn from(s: String) -> Self {
        match s.as_str() {
            "complete" => ResultType::Complete,
            "input_required" => ResultType::InputRequired,
            _ => ResultType::Other(s),
        }
    }
}

impl From<ResultType> for String {
    fn from(t: ResultType) -> Self {
        match t {
            ResultType::Other(s) => s,
            known => known.as_str().to_owned(),
        }
    }
}

/// Who may cache a cacheable result (schema: `CacheableResult.cacheScope`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// `"private"`: reuse only within the same authorization context.
    #[default]
    Private,
    /// `"public"`: no user-specific data; any cache may serve it.
    Public,
}

/// Any result: `resultType`, `_meta` and arbitrary other members (schema: `Result`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaseResult {
    /// How to read the result.
    #[serde(default)]
    pub result_type: ResultType,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
    /// Every other member, unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A result with no content of its own (schema: `EmptyResult`).
pub type EmptyResult = BaseResult;

/// A result the client sends (schema: `ClientResult`).
pub type ClientResult = BaseResult;

/// The members of a result that carries caching hints (schema: `CacheableResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheableResult {
    /// How to read the result.
    #[serde(default)]
    pub result_type: ResultType,
    /// How long (ms) the client may cache the result; 0 means stale at once.
    /// Absent from earlier revisions\' results: read as 0 (stale at once).
    #[serde(default)]
    pub ttl_ms: u64,
    /// Who may cache the result.
    /// Absent from earlier revisions\' results: read as `private`.
    #[serde(default)]
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
}

/// The members of a paginated result (schema: `PaginatedResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedResult {
    /// How to read the result.
    #[serde(default)]
    pub result_type: ResultType,
    /// Cursor of the next page, if there may be more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
}

/// A result that is either an [`InputRequiredResult`] or the request's own
/// complete result (schema: `InputRequiredResult | T`), told apart by
/// `resultType`.
// Clippy sizes the generic `T` as zero; every real `T` is a result of
// similar size, so boxing would only add an allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InputRequiredOr<T> {
    /// `resultType: "input_required"`.
    InputRequired(InputRequiredResult),
    /// Any other `resultType`: the complete result.
    Complete(T),
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for InputRequiredOr<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if serde_util::str_member(&value, "resultType") == Some("input_required") {
            serde_util::variant(value).map(InputRequiredOr::InputRequired)
        } else {
            serde_util::variant(value).map(InputRequiredOr::Complete)
        }
    }
}

impl<T> From<InputRequiredResult> for InputRequiredOr<T> {
    fn from(r: InputRequiredResult) -> Self {
        InputRequiredOr::InputRequired(r)
    }
}

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
