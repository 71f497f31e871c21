//! Generic JSON-RPC messages with typed fields (schema: `JSONRPC*`). The
//! tolerant reader that classifies raw input is [`crate::protocol::jsonrpc`].

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::errors::ErrorObject;
use super::markers::JsonRpcVersion;
use super::results::BaseResult;
use super::serde_util;
use crate::protocol::jsonrpc::RequestId;

/// A request with any method (schema: `JSONRPCRequest`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcRequest {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The request id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The params object, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

/// A notification with any method (schema: `JSONRPCNotification`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcNotification {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The method name.
    pub method: String,
    /// The params object, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

/// A successful response with any result (schema: `JSONRPCResultResponse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcResultResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered.
    pub id: RequestId,
    /// The result.
    pub result: BaseResult,
}

/// An error response (schema: `JSONRPCErrorResponse`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request answered; absent if it could not be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

impl JsonRpcErrorResponse {
    /// An error response for request `id`.
    pub fn new(id: Option<RequestId>, error: impl Into<ErrorObject>) -> Self {
        JsonRpcErrorResponse {
            jsonrpc: JsonRpcVersion,
            id,
            error: error.into(),
        }
    }
}

/// A result or an error response, told apart by an `error` member (schema: `JSONRPCResponse`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum JsonRpcResponse {
    /// Has `result`.
    Result(JsonRpcResultResponse),
    /// Has `error`.
    Error(JsonRpcErrorResponse),
}

impl<'de> Deserialize<'de> for JsonRpcResponse {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.get("error").is_some() {
            serde_util::variant(value).map(JsonRpcResponse::Error)
        } else {
            serde_util::variant(value).map(JsonRpcResponse::Result)
        }
    }
}

/// Any JSON-RPC message (schema: `JSONRPCMessage`): a request has `method`
/// and `id`, a notification `method` only, a response `result` or `error`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum JsonRpcMessage {
    /// Has `method` and `id`.
    Request(JsonRpcRequest),
    /// Has `method` and no `id`.
    Notification(JsonRpcNotification),
    /// Has `result`.
    ResultResponse(JsonRpcResultResponse),
    /// Has `error`.
    ErrorResponse(JsonRpcErrorResponse),
}

impl<'de> Deserialize<'de> for JsonRpcMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        let has = |key: &str| value.get(key).is_some();
        if has("method") {
            if has("id") {
                serde_util::variant(value).map(JsonRpcMessage::Request)
            } else {
                serde_util::variant(value).map(JsonRpcMessage::Notification)
            }
        } else if has("result") {
            serde_util::variant(value).map(JsonRpcMessage::ResultResponse)
        } else if has("error") {
            serde_util::variant(value).map(JsonRpcMessage::ErrorResponse)
        } else {
            Err(de::Error::custom(
                "a JSON-RPC message needs \"method\", \"result\" or \"error\"",
            ))
        }
    }
}
