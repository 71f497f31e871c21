//! Multi-round-trip requests: the input requests a server embeds in an
//! `input_required` result (sampling, roots, elicitation), the client's
//! responses, and roots.

use std::collections::BTreeMap;

use serde::de::{self, DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::MetaObject;
use super::elicitation::{ElicitRequestParams, ElicitResult};
use super::markers::{CreateMessageMethod, ElicitMethod, ListRootsMethod};
use super::meta_objects::{RequestMetaObject, ResultMetaObject};
use super::results::ResultType;
use super::sampling::{CreateMessageRequestParams, CreateMessageResult};
use super::serde_util::{self, union_by_tag};
use crate::protocol::jsonrpc::RequestId;

/// Asks the client to sample from an LLM (schema: `CreateMessageRequest`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateMessageRequest {
    /// Always `"sampling/createMessage"`.
    pub method: CreateMessageMethod,
    /// What to sample.
    pub params: CreateMessageRequestParams,
}

impl CreateMessageRequest {
    /// A sampling request with the given parameters.
    pub fn new(params: CreateMessageRequestParams) -> Self {
        CreateMessageRequest {
            method: CreateMessageMethod,
            params,
        }
    }
}

/// Parameters of `roots/list` (schema: `ListRootsRequest.params`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListRootsRequestParams {
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

/// Asks the client for its roots (schema: `ListRootsRequest`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListRootsRequest {
    /// A JSON-RPC id. Not part of an input request in this revision, but the
    /// specification's own example still carries one, so it is kept when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// Always `"roots/list"`.
    pub method: ListRootsMethod,
    /// Parameters, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<ListRootsRequestParams>,
}

impl Default for ListRootsRequest {
    fn default() -> Self {
        ListRootsRequest {
            id: None,
            method: ListRootsMethod,
            params: None,
        }
    }
}

/// Asks the client to collect information from the user (schema: `ElicitRequest`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitRequest {
    /// Always `"elicitation/create"`.
    pub method: ElicitMethod,
    /// The form or URL to present.
    pub params: ElicitRequestParams,
}

impl ElicitRequest {
    /// An elicitation request with the given parameters.
    pub fn new(params: ElicitRequestParams) -> Self {
        ElicitRequest {
            method: ElicitMethod,
            params,
        }
    }
}

/// One request for client input, by `method` (schema: `InputRequest`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InputRequest {
    /// `sampling/createMessage`.
    CreateMessage(CreateMessageRequest),
    /// `roots/list`.
    ListRoots(ListRootsRequest),
    /// `elicitation/create`.
    Elicit(ElicitRequest),
}

union_by_tag!(InputRequest, "method", {
    CreateMessageMethod => CreateMessage,
    ListRootsMethod => ListRoots,
    ElicitMethod => Elicit,
});

impl From<CreateMessageRequest> for InputRequest {
    fn from(r: CreateMessageRequest) -> Self {
        InputRequest::CreateMessage(r)
    }
}

impl From<ListRootsRequest> for InputRequest {
    fn from(r: ListRootsRequest) -> Self {
        InputRequest::ListRoots(r)
    }
}

impl From<ElicitRequest> for InputRequest {
    fn from(r: ElicitRequest) -> Self {
        InputRequest::Elicit(r)
    }
}

/// Input requests by a server-chosen key (schema: `InputRequests`).
pub type InputRequests = BTreeMap<String, InputRequest>;

/// The client's answer to one input request (schema: `InputResponse`).
///
/// Told apart by shape: `action` means elicitation, `roots` means roots,
/// anything else is a sampling result.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InputResponse {
    /// Answer to `sampling/createMessage`.
    CreateMessage(CreateMessageResult),
    /// Answer to `roots/list`.
    ListRoots(ListRootsResult),
    /// Answer to `elicitation/create`.
    Elicit(ElicitResult),
}

impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if !value.is_object() {
            return Err(de::Error::custom("an input response must be a JSON object"));
        }
        if value.get("action").is_some() {
            serde_util::variant(value).map(InputResponse::Elicit)
        } else if value.get("roots").is_some() {
            serde_util::variant(value).map(InputResponse::ListRoots)
        } else {
            serde_util::variant(value).map(InputResponse::CreateMessage)
        }
    }
}

impl From<CreateMessageResult> for InputResponse {
    fn from(r: CreateMessageResult) -> Self {
        InputResponse::CreateMessage(r)
    }
}

impl From<ListRootsResult> for InputResponse {
    fn from(r: ListRootsResult) -> Self {
        InputResponse::ListRoots(r)
    }
}

impl From<ElicitResult> for InputResponse {
    fn from(r: ElicitResult) -> Self {
        InputResponse::Elicit(r)
    }
}

/// Input responses, keyed like the input requests they answer (schema: `InputResponses`).
pub type InputResponses = BTreeMap<String, InputResponse>;

/// A result asking the client for input before the request can complete
/// (schema: `InputRequiredResult`). At least one of `inputRequests` and
/// `requestState` must be present.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Always `input_required` when sent by a server of this revision.
    #[serde(default)]
    pub result_type: ResultType,
    /// What the client must provide, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client echoes when it retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
}

impl InputRequiredResult {
    /// An `input_required` result with the given input requests.
    pub fn new(input_requests: InputRequests) -> Self {
        InputRequiredResult {
            result_type: ResultType::InputRequired,
            input_requests: Some(input_requests),
            request_state: None,
            meta: None,
        }
    }

    /// Sets the opaque request state.
    pub fn with_request_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

/// Parameters a retried request carries (schema: `InputResponseRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResponseRequestParams {
    /// Request metadata (protocol version, client capabilities...).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// Answers to the input requests, by key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state echoed from the `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// A directory or file the server may operate on (schema: `Root`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Root {
    /// URI of the root (`file://` for now).
    pub uri: String,
    /// Human-readable name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

/// The client's answer to `roots/list` (schema: `ListRootsResult`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListRootsResult {
    /// The roots.
    pub roots: Vec<Root>,
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
