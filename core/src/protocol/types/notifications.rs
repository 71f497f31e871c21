//! Notifications as complete JSON-RPC messages, their parameters, and the
//! unions of client and server notifications.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::common::{LoggingLevel, ProgressToken};
use super::markers::{
    CancelledMethod, JsonRpcVersion, LoggingMessageMethod, ProgressMethod, PromptListChangedMethod,
    ResourceListChangedMethod, ResourceUpdatedMethod, SubscriptionsAcknowledgedMethod,
    ToolListChangedMethod,
};
use super::meta_objects::NotificationMetaObject;
use super::serde_util::{number, opt_number, union_by_tag};
use super::subscriptions::SubscriptionsAcknowledgedNotificationParams;
use crate::protocol::jsonrpc::RequestId;

/// Any notification: a method and optional params (schema: `Notification`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseNotification {
    /// The method name.
    pub method: String,
    /// The params object, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

/// Parameters with nothing but the notification `_meta` (schema: `NotificationParams`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Notification metadata (subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
}

impl NotificationParams {
    /// Params naming the `subscriptions/listen` request a notification belongs to.
    pub fn for_subscription(subscription_id: RequestId) -> Self {
        NotificationParams {
            meta: Some(NotificationMetaObject {
                subscription_id: Some(subscription_id),
                extra: Map::new(),
            }),
        }
    }
}

/// Parameters of `notifications/cancelled` (schema: `CancelledNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The id of the request to cancel.
    pub request_id: RequestId,
    /// Why, for logs or display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
}

/// Parameters of `notifications/progress` (schema: `ProgressNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with each notification.
    #[serde(with = "number")]
    pub progress: f64,
    /// Total amount of work, if known.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_number")]
    pub total: Option<f64>,
    /// Human-readable description of the current progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
}

/// Parameters of `notifications/message` (schema: `LoggingMessageNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggingMessageNotificationParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Name of the logger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: any JSON value.
    pub data: Value,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
}

/// Parameters of `notifications/resources/updated` (schema: `ResourceUpdatedNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceUpdatedNotificationParams {
    /// URI of the resource that changed.
    pub uri: String,
    /// Notification metadata (subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
}

/// Declares a notification message with a constant method.
macro_rules! notification {
    ($(#[$doc:meta])* $name:ident, $method:ident, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct $name {
            /// Always `"2.0"`.
            pub jsonrpc: JsonRpcVersion,
            /// The method (a constant).
            pub method: $method,
            /// The parameters.
            pub params: $params,
        }

        impl $name {
            /// The method name.
            pub const METHOD: &'static str = $method::VALUE;

            /// A notification with the given parameters.
            pub fn new(params: $params) -> Self {
                $name {
                    jsonrpc: JsonRpcVersion,
                    method: $method,
                    params,
                }
            }
        }
    };
    ($(#[$doc:meta])* $name:ident, $method:ident, optional $params:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct $name {
            /// Always `"2.0"`.
            pub jsonrpc: JsonRpcVersion,
            /// The method (a constant).
            pub method: $method,
            /// The parameters, if any.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub params: Option<$params>,
        }

        impl $name {
            /// The method name.
            pub const METHOD: &'static str = $method::VALUE;

            /// A notification with the given parameters, if any.
            pub fn new(params: Option<$params>) -> Self {
                $name {
                    jsonrpc: JsonRpcVersion,
                    method: $method,
                    params,
                }
            }
        }
    };
}

notification!(
    /// `notifications/cancelled`: a request should be abandoned (schema: `CancelledNotification`).
    CancelledNotification, CancelledMethod, CancelledNotificationParams
);
notification!(
    /// `notifications/progress` (schema: `ProgressNotification`).
    ProgressNotification, ProgressMethod, ProgressNotificationParams
);
notification!(
    /// `notifications/message`: a log message (schema: `LoggingMessageNotification`).
    LoggingMessageNotification, LoggingMessageMethod, LoggingMessageNotificationParams
);
notification!(
    /// `notifications/resources/updated` (schema: `ResourceUpdatedNotification`).
    ResourceUpdatedNotification, ResourceUpdatedMethod, ResourceUpdatedNotificationParams
);
notification!(
    /// `notifications/subscriptions/acknowledged` (schema: `SubscriptionsAcknowledgedNotification`).
    SubscriptionsAcknowledgedNotification,
    SubscriptionsAcknowledgedMethod,
    SubscriptionsAcknowledgedNotificationParams
);
notification!(
    /// `notifications/resources/list_changed` (schema: `ResourceListChangedNotification`).
    ResourceListChangedNotification, ResourceListChangedMethod, optional NotificationParams
);
notification!(
    /// `notifications/prompts/list_changed` (schema: `PromptListChangedNotification`).
    PromptListChangedNotification, PromptListChangedMethod, optional NotificationParams
);
notification!(
    /// `notifications/tools/list_changed` (schema: `ToolListChangedNotification`).
    ToolListChangedNotification, ToolListChangedMethod, optional NotificationParams
);

/// Any notification a client sends (schema: `ClientNotification`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ClientNotification {
    /// `notifications/cancelled`.
    Cancelled(CancelledNotification),
}

union_by_tag!(ClientNotification, "method", {
    CancelledMethod => Cancelled,
});

/// Any notification a server sends, by `method` (schema: `ServerNotification`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ServerNotification {
    /// `notifications/cancelled`.
    Cancelled(CancelledNotification),
    /// `notifications/progress`.
    Progress(ProgressNotification),
    /// `notifications/resources/list_changed`.
    ResourceListChanged(ResourceListChangedNotification),
    /// `notifications/subscriptions/acknowledged`.
    SubscriptionsAcknowledged(SubscriptionsAcknowledgedNotification),
    /// `notifications/resources/updated`.
    ResourceUpdated(ResourceUpdatedNotification),
    /// `notifications/prompts/list_changed`.
    PromptListChanged(PromptListChangedNotification),
    /// `notifications/tools/list_changed`.
    ToolListChanged(ToolListChangedNotification),
    /// `notifications/message`.
    LoggingMessage(LoggingMessageNotification),
}

union_by_tag!(ServerNotification, "method", {
    CancelledMethod => Cancelled,
    ProgressMethod => Progress,
    ResourceListChangedMethod => ResourceListChanged,
    SubscriptionsAcknowledgedMethod => SubscriptionsAcknowledged,
    ResourceUpdatedMethod => ResourceUpdated,
    PromptListChangedMethod => PromptListChanged,
    ToolListChangedMethod => ToolListChanged,
    LoggingMessageMethod => LoggingMessage,
});
