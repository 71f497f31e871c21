//! Typed `_meta` objects: the reserved keys each kind of message defines,
//! plus every other key kept as is in `extra`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::capabilities::ClientCapabilities;
use super::common::{Implementation, LoggingLevel, ProgressToken};
use crate::protocol::jsonrpc::RequestId;

/// The `_meta` of every client request (schema: `RequestMetaObject`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestMetaObject {
    /// Protocol version of this request (`io.modelcontextprotocol/protocolVersion`).
    #[serde(rename = "io.modelcontextprotocol/protocolVersion")]
    pub protocol_version: String,
    /// Client capabilities for this request (`io.modelcontextprotocol/clientCapabilities`).
    #[serde(rename = "io.modelcontextprotocol/clientCapabilities")]
    pub client_capabilities: ClientCapabilities,
    /// Client name and version (`io.modelcontextprotocol/clientInfo`).
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// Minimum log level wanted for this request (`io.modelcontextprotocol/logLevel`).
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// Opts in to progress notifications (`progressToken`).
    #[serde(
        rename = "progressToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub progress_token: Option<ProgressToken>,
    /// Every other key, unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl RequestMetaObject {
    /// The required members only.
    pub fn new(
        protocol_version: impl Into<String>,
        client_capabilities: ClientCapabilities,
    ) -> Self {
        RequestMetaObject {
            protocol_version: protocol_version.into(),
            client_capabilities,
            client_info: None,
            log_level: None,
            progress_token: None,
            extra: Map::new(),
        }
    }
}

/// The `_meta` of every result (schema: `ResultMetaObject`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResultMetaObject {
    /// Server name and version (`io.modelcontextprotocol/serverInfo`).
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// Every other key, unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `_meta` of every notification (schema: `NotificationMetaObject`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationMetaObject {
    /// The `subscriptions/listen` request this notification belongs to
    /// (`io.modelcontextprotocol/subscriptionId`).
    #[serde(
        rename = "io.modelcontextprotocol/subscriptionId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub subscription_id: Option<RequestId>,
    /// Every other key, unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The `_meta` of a `subscriptions/listen` result (schema: `SubscriptionsListenResultMetaObject`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenResultMetaObject {
    /// The id of the `subscriptions/listen` request that ended
    /// (`io.modelcontextprotocol/subscriptionId`).
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub subscription_id: RequestId,
    /// Server name and version (`io.modelcontextprotocol/serverInfo`).
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// Every other key, unchanged.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}
