//! JSON-RPC error objects: the generic one, one type per standard code, and
//! the MCP-specific error responses whose `data` has a fixed shape.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::capabilities::ClientCapabilities;
use super::markers::{
    HeaderMismatchCode, InternalErrorCode, InvalidParamsCode, InvalidRequestCode, JsonRpcVersion,
    MethodNotFoundCode, MissingRequiredClientCapabilityCode, ParseErrorCode,
    UnsupportedProtocolVersionCode,
};
use super::serde_util;
use crate::protocol::codes;
use crate::protocol::jsonrpc::RequestId;
use crate::protocol::mcp_error::McpError;

/// A JSON-RPC error object with any code (schema: `Error`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code.
    pub code: i64,
    /// A short description.
    pub message: String,
    /// Extra information, as the sender defines it.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::present"
    )]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with a code and message and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }
}

impl From<McpError> for ErrorObject {
    fn from(e: McpError) -> Self {
        ErrorObject {
            code: e.code.into(),
            message: e.message,
            data: e.data,
        }
    }
}

impl From<ErrorObject> for McpError {
    /// A code outside the `i32` range (which no JSON-RPC or MCP code is)
    /// becomes `-32603 Internal error`.
    fn from(e: ErrorObject) -> Self {
        McpError {
            code: i32::try_from(e.code).unwrap_or(codes::INTERNAL_ERROR),
            message: e.message,
            data: e.data,
        }
    }
}

/// Declares an error object type with a constant code.
macro_rules! coded_error {
    ($(#[$doc:meta])* $name:ident, $code:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        pub struct $name {
            /// The error code (a constant).
            pub code: $code,
            /// A short description.
            pub message: String,
            /// Extra information, as the sender defines it.
            #[serde(
                default,
                skip_serializing_if = "Option::is_none",
                deserialize_with = "serde_util::present"
            )]
            pub data: Option<Value>,
        }

        impl $name {
            /// The error code.
            pub const CODE: i64 = $code::VALUE;

            /// An error with a message and no data.
            pub fn new(message: impl Into<String>) -> Self {
                $name {
                    code: $code,
                    message: message.into(),
                    data: None,
                }
            }
        }

        impl From<$name> for ErrorObject {
            fn from(e: $name) -> Self {
                ErrorObject {
                    code: $code::VALUE,
                    message: e.message,
                    data: e.data,
                }
            }
        }
    };
}

coded_error!(
    /// `-32700`: the message was not valid JSON (schema: `ParseError`).
    ParseError, ParseErrorCode
);
coded_error!(
    /// `-32600`: the message was not a valid request (schema: `InvalidRequestError`).
    InvalidRequestError, InvalidRequestCode
);
coded_error!(
    /// `-32601`: the method does not exist or is not offered (schema: `MethodNotFoundError`).
    MethodNotFoundError, MethodNotFoundCode
);
coded_error!(
    /// `-32602`: the params are invalid (schema: `InvalidParamsError`).
    InvalidParamsError, InvalidParamsCode
);
coded_error!(
    /// `-32603`: the receiver failed internally (schema: `InternalError`).
    InternalError, InternalErrorCode
);
coded_error!(
    /// The error object of a [`HeaderMismatchError`] (code `-32020`).
    HeaderMismatchErrorObject, HeaderMismatchCode
);

/// HTTP headers disagree with the body, or a required one is missing (schema: `HeaderMismatchError`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HeaderMismatchError {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request, if it could be read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error.
    pub error: HeaderMismatchErrorObject,
}

impl HeaderMismatchError {
    /// The error response for request `id`.
    pub fn new(id: Option<RequestId>, message: impl Into<String>) -> Self {
        HeaderMismatchError {
            jsonrpc: JsonRpcVersion,
            id,
            error: HeaderMismatchErrorObject::new(message),
        }
    }
}

/// The `data` of a [`MissingRequiredClientCapabilityError`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the request needs.
    pub required_capabilities: ClientCapabilities,
}

/// The error object of a [`MissingRequiredClientCapabilityError`] (code `-32021`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingRequiredClientCapabilityErrorObject {
    /// Always `-32021`.
    pub code: MissingRequiredClientCapabilityCode,
    /// A short description.
    pub message: String,
    /// The capabilities that were missing.
    pub data: MissingRequiredClientCapabilityData,
}

/// The request needs a client capability the client did not declare
/// (schema: `MissingRequiredClientCapabilityError`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MissingRequiredClientCapabilityError {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error.
    pub error: MissingRequiredClientCapabilityErrorObject,
}

impl MissingRequiredClientCapabilityError {
    /// The error response for request `id`.
    pub fn new(
        id: Option<RequestId>,
        message: impl Into<String>,
        required_capabilities: ClientCapabilities,
    ) -> Self {
        MissingRequiredClientCapabilityError {
            jsonrpc: JsonRpcVersion,
            id,
            error: MissingRequiredClientCapabilityErrorObject {
                code: MissingRequiredClientCapabilityCode,
                message: message.into(),
                data: MissingRequiredClientCapabilityData {
                    required_capabilities,
                },
            },
        }
    }
}

/// The `data` of an [`UnsupportedProtocolVersionError`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnsupportedProtocolVersionData {
    /// The versions the server supports.
    pub supported: Vec<String>,
    /// The version the client asked for.
    pub requested: String,
}

/// The error object of an [`UnsupportedProtocolVersionError`] (code `-32022`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionErrorObject {
    /// Always `-32022`.
    pub code: UnsupportedProtocolVersionCode,
    /// A short description.
    pub message: String,
    /// Requested and supported versions.
    pub data: UnsupportedProtocolVersionData,
}

/// The server does not support the requested protocol version
/// (schema: `UnsupportedProtocolVersionError`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionError {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<RequestId>,
    /// The error.
    pub error: UnsupportedProtocolVersionErrorObject,
}

impl UnsupportedProtocolVersionError {
    /// The error response for request `id`.
    pub fn new(
        id: Option<RequestId>,
        requested: impl Into<String>,
        supported: Vec<String>,
    ) -> Self {
        UnsupportedProtocolVersionError {
            jsonrpc: JsonRpcVersion,
            id,
            error: UnsupportedProtocolVersionErrorObject {
                code: UnsupportedProtocolVersionCode,
                message: "Unsupported protocol version".to_owned(),
                data: UnsupportedProtocolVersionData {
                    supported,
                    requested: requested.into(),
                },
            },
        }
    }
}
