//! Client requests as complete JSON-RPC messages, their shared parameter
//! types, and the union of every client request.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::completion::CompleteRequestParams;
use super::markers::{
    CallToolMethod, CompleteMethod, DiscoverMethod, GetPromptMethod, JsonRpcVersion,
    ListPromptsMethod, ListResourceTemplatesMethod, ListResourcesMethod, ListToolsMethod,
    ReadResourceMethod, SubscriptionsListenMethod,
};
use super::meta_objects::RequestMetaObject;
use super::prompts::GetPromptRequestParams;
use super::resources::ReadResourceRequestParams;
use super::serde_util::union_by_tag;
use super::subscriptions::SubscriptionsListenRequestParams;
use super::tool_calls::CallToolRequestParams;
use crate::protocol::jsonrpc::RequestId;

/// Any request: a method and optional params (schema: `Request`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BaseRequest {
    /// The method name.
    pub method: String,
    /// The params object, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

/// Parameters with nothing but the request `_meta` (schema: `RequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestParams {
    /// Request metadata (protocol version, client capabilities...).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
}

/// Parameters of a paginated list request (schema: `PaginatedRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// Request metadata (protocol version, client capabilities...).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// Where to continue, from a previous result's `nextCursor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

impl PaginatedRequestParams {
    /// The first page.
    pub fn new(meta: RequestMetaObject) -> Self {
        PaginatedRequestParams { meta, cursor: None }
    }
}

/// A paginated list request with any method (schema: `PaginatedRequest`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaginatedRequest {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The request id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The parameters.
    pub params: PaginatedRequestParams,
}

/// Declares a client request message with a constant method.
macro_rules! request {
    ($(#[$doc:meta])* $name:ident, $method:ident, $params:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct $name {
            /// Always `"2.0"`.
            pub jsonrpc: JsonRpcVersion,
            /// The request id.
            pub id: RequestId,
            /// The method (a constant).
            pub method: $method,
            /// The parameters.
            pub params: $params,
        }

        impl $name {
            /// The method name.
            pub const METHOD: &'static str = $method::VALUE;

            /// A request with the given id and parameters.
            pub fn new(id: impl Into<RequestId>, params: $params) -> Self {
                $name {
                    jsonrpc: JsonRpcVersion,
                    id: id.into(),
                    method: $method,
                    params,
                }
            }
        }
    };
}

request!(
    /// `server/discover`: asks for the server's versions and capabilities (schema: `DiscoverRequest`).
    DiscoverRequest, DiscoverMethod, RequestParams
);
request!(
    /// `resources/list` (schema: `ListResourcesRequest`).
    ListResourcesRequest, ListResourcesMethod, PaginatedRequestParams
);
request!(
    /// `resources/templates/list` (schema: `ListResourceTemplatesRequest`).
    ListResourceTemplatesRequest, ListResourceTemplatesMethod, PaginatedRequestParams
);
request!(
    /// `resources/read` (schema: `ReadResourceRequest`).
    ReadResourceRequest, ReadResourceMethod, ReadResourceRequestParams
);
request!(
    /// `subscriptions/listen`: opens a notification stream (schema: `SubscriptionsListenRequest`).
    SubscriptionsListenRequest, SubscriptionsListenMethod, SubscriptionsListenRequestParams
);
request!(
    /// `prompts/list` (schema: `ListPromptsRequest`).
    ListPromptsRequest, ListPromptsMethod, PaginatedRequestParams
);
request!(
    /// `prompts/get` (schema: `GetPromptRequest`).
    GetPromptRequest, GetPromptMethod, GetPromptRequestParams
);
request!(
    /// `tools/list` (schema: `ListToolsRequest`).
    ListToolsRequest, ListToolsMethod, PaginatedRequestParams
);
request!(
    /// `tools/call` (schema: `CallToolRequest`).
    CallToolRequest, CallToolMethod, CallToolRequestParams
);
request!(
    /// `completion/complete` (schema: `CompleteRequest`).
    CompleteRequest, CompleteMethod, CompleteRequestParams
);

/// Any request a client sends, by `method` (schema: `ClientRequest`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ClientRequest {
    /// `server/discover`.
    Discover(DiscoverRequest),
    /// `resources/list`.
    ListResources(ListResourcesRequest),
    /// `resources/templates/list`.
    ListResourceTemplates(ListResourceTemplatesRequest),
    /// `resources/read`.
    ReadResource(ReadResourceRequest),
    /// `subscriptions/listen`.
    SubscriptionsListen(SubscriptionsListenRequest),
    /// `prompts/list`.
    ListPrompts(ListPromptsRequest),
    /// `prompts/get`.
    GetPrompt(GetPromptRequest),
    /// `tools/list`.
    ListTools(ListToolsRequest),
    /// `tools/call`.
    CallTool(CallToolRequest),
    /// `completion/complete`.
    Complete(CompleteRequest),
}

union_by_tag!(ClientRequest, "method", {
    DiscoverMethod => Discover,
    ListResourcesMethod => ListResources,
    ListResourceTemplatesMethod => ListResourceTemplates,
    ReadResourceMethod => ReadResource,
    SubscriptionsListenMethod => SubscriptionsListen,
    ListPromptsMethod => ListPrompts,
    GetPromptMethod => GetPrompt,
    ListToolsMethod => ListTools,
    CallToolMethod => CallTool,
    CompleteMethod => Complete,
});

impl ClientRequest {
    /// The request id.
    pub fn id(&self) -> &RequestId {
        match self {
            ClientRequest::Discover(r) => &r.id,
            ClientRequest::ListResources(r) => &r.id,
            ClientRequest::ListResourceTemplates(r) => &r.id,
            ClientRequest::ReadResource(r) => &r.id,
            ClientRequest::SubscriptionsListen(r) => &r.id,
            ClientRequest::ListPrompts(r) => &r.id,
            ClientRequest::GetPrompt(r) => &r.id,
            ClientRequest::ListTools(r) => &r.id,
            ClientRequest::CallTool(r) => &r.id,
            ClientRequest::Complete(r) => &r.id,
        }
    }

    /// The method name.
    pub fn method(&self) -> &'static str {
        match self {
            ClientRequest::Discover(_) => DiscoverRequest::METHOD,
            ClientRequest::ListResources(_) => ListResourcesRequest::METHOD,
            ClientRequest::ListResourceTemplates(_) => ListResourceTemplatesRequest::METHOD,
            ClientRequest::ReadResource(_) => ReadResourceRequest::METHOD,
            ClientRequest::SubscriptionsListen(_) => SubscriptionsListenRequest::METHOD,
            ClientRequest::ListPrompts(_) => ListPromptsRequest::METHOD,
            ClientRequest::GetPrompt(_) => GetPromptRequest::METHOD,
            ClientRequest::ListTools(_) => ListToolsRequest::METHOD,
            ClientRequest::CallTool(_) => CallToolRequest::METHOD,
            ClientRequest::Complete(_) => CompleteRequest::METHOD,
        }
    }

    /// The request's `_meta` (protocol version, client capabilities...).
    pub fn meta(&self) -> &RequestMetaObject {
        match self {
            ClientRequest::Discover(r) => &r.params.meta,
            ClientRequest::ListResources(r) => &r.params.meta,
            ClientRequest::ListResourceTemplates(r) => &r.params.meta,
            ClientRequest::ReadResource(r) => &r.params.meta,
            ClientRequest::SubscriptionsListen(r) => &r.params.meta,
            ClientRequest::ListPrompts(r) => &r.params.meta,
            ClientRequest::GetPrompt(r) => &r.params.meta,
            ClientRequest::ListTools(r) => &r.params.meta,
            ClientRequest::CallTool(r) => &r.params.meta,
            ClientRequest::Complete(r) => &r.params.meta,
        }
    }
}
