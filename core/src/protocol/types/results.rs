//! Result building blocks: `resultType`, caching hints, the generic,
//! cacheable and paginated results. The results of each method are in
//! that method's file; their union is in server_results.rs.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::meta_objects::ResultMetaObject;

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
    /// `"input_required"`: the result is an
    /// [`InputRequiredResult`](super::InputRequiredResult).
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
