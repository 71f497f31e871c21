//! Successful responses to client requests as complete JSON-RPC messages.

use serde::{Deserialize, Serialize};

use super::completion::CompleteResult;
use super::input::InputRequiredOr;
use super::markers::JsonRpcVersion;
use super::prompts::{GetPromptResult, ListPromptsResult};
use super::resources::{ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult};
use super::server_results::DiscoverResult;
use super::subscriptions::SubscriptionsListenResult;
use super::tool_calls::CallToolResult;
use super::tools::ListToolsResult;
use crate::protocol::jsonrpc::RequestId;

/// Declares a result response message with a given result type.
macro_rules! result_response {
    ($(#[$doc:meta])* $name:ident, $result:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct $name {
            /// Always `"2.0"`.
            pub jsonrpc: JsonRpcVersion,
            /// The id of the request answered.
            pub id: RequestId,
            /// The result.
            pub result: $result,
        }

        impl $name {
            /// A response to request `id`.
            pub fn new(id: RequestId, result: impl Into<$result>) -> Self {
                $name {
                    jsonrpc: JsonRpcVersion,
                    id,
                    result: result.into(),
                }
            }
        }
    };
}

result_response!(
    /// Response to `server/discover` (schema: `DiscoverResultResponse`).
    DiscoverResultResponse, DiscoverResult
);
result_response!(
    /// Response to `resources/list` (schema: `ListResourcesResultResponse`).
    ListResourcesResultResponse, ListResourcesResult
);
result_response!(
    /// Response to `resources/templates/list` (schema: `ListResourceTemplatesResultResponse`).
    ListResourceTemplatesResultResponse, ListResourceTemplatesResult
);
result_response!(
    /// Response to `resources/read`; may ask for input (schema: `ReadResourceResultResponse`).
    ReadResourceResultResponse, InputRequiredOr<ReadResourceResult>
);
result_response!(
    /// Response to `subscriptions/listen`, sent when it ends (schema: `SubscriptionsListenResultResponse`).
    SubscriptionsListenResultResponse, SubscriptionsListenResult
);
result_response!(
    /// Response to `prompts/list` (schema: `ListPromptsResultResponse`).
    ListPromptsResultResponse, ListPromptsResult
);
result_response!(
    /// Response to `prompts/get`; may ask for input (schema: `GetPromptResultResponse`).
    GetPromptResultResponse, InputRequiredOr<GetPromptResult>
);
result_response!(
    /// Response to `tools/list` (schema: `ListToolsResultResponse`).
    ListToolsResultResponse, ListToolsResult
);
result_response!(
    /// Response to `tools/call`; may ask for input (schema: `CallToolResultResponse`).
    CallToolResultResponse, InputRequiredOr<CallToolResult>
);
result_response!(
    /// Response to `completion/complete` (schema: `CompleteResultResponse`).
    CompleteResultResponse, CompleteResult
);

impl From<ReadResourceResult> for InputRequiredOr<ReadResourceResult> {
    fn from(r: ReadResourceResult) -> Self {
        InputRequiredOr::Complete(r)
    }
}

impl From<GetPromptResult> for InputRequiredOr<GetPromptResult> {
    fn from(r: GetPromptResult) -> Self {
        InputRequiredOr::Complete(r)
    }
}

impl From<CallToolResult> for InputRequiredOr<CallToolResult> {
    fn from(r: CallToolResult) -> Self {
        InputRequiredOr::Complete(r)
    }
}
