//! Subscriptions: `subscriptions/listen`, its filter, acknowledgement and
//! closing result.

use serde::{Deserialize, Serialize};

use super::meta_objects::{
    NotificationMetaObject, RequestMetaObject, SubscriptionsListenResultMetaObject,
};
use super::results::ResultType;

/// Which notifications a listener wants (schema: `SubscriptionFilter`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// URIs whose `notifications/resources/updated` are wanted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
}

/// Parameters of `subscriptions/listen` (schema: `SubscriptionsListenRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenRequestParams {
    /// Request metadata (protocol version, client capabilities...).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The notifications wanted.
    pub notifications: SubscriptionFilter,
}

/// Sent when the server ends a subscription gracefully (schema: `SubscriptionsListenResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// How to read the result.
    #[serde(default)]
    pub result_type: ResultType,
    /// Names the subscription that ended.
    #[serde(rename = "_meta")]
    pub meta: SubscriptionsListenResultMetaObject,
}

/// Parameters of `notifications/subscriptions/acknowledged`
/// (schema: `SubscriptionsAcknowledgedNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// The notifications the server will actually send.
    pub notifications: SubscriptionFilter,
    /// Notification metadata (subscription id).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMetaObject>,
}
