//! Zero-sized marker types for the schema's `const` members (`"jsonrpc":
//! "2.0"`, each message's `method`, each content block's `type`, each error's
//! `code`...).
//!
//! A marker serialises as its constant and refuses to deserialise from any
//! other value, so a struct holding one only ever reads or writes the right
//! constant. Each marker's value is also available as `Marker::VALUE`.

use serde::de::{self, Deserialize, Deserializer};
use serde::ser::{Serialize, Serializer};

use crate::protocol::codes;

/// Declares string-constant markers.
macro_rules! const_str {
    ($($(#[$doc:meta])* $name:ident = $value:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name;

        impl $name {
            /// The constant this marker stands for.
            pub const VALUE: &'static str = $value;
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(Self::VALUE)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let found = String::deserialize(deserializer)?;
                if found == Self::VALUE {
                    Ok($name)
                } else {
                    Err(de::Error::invalid_value(de::Unexpected::Str(&found), &Self::VALUE))
                }
            }
        }
    )*};
}

/// Declares integer-constant markers.
macro_rules! const_int {
    ($($(#[$doc:meta])* $name:ident = $value:expr;)*) => {$(
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name;

        impl $name {
            /// The constant this marker stands for.
            pub const VALUE: i64 = $value as i64;
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_i64(Self::VALUE)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let found = i64::deserialize(deserializer)?;
                if found == Self::VALUE {
                    Ok($name)
                } else {
                    Err(de::Error::invalid_value(de::Unexpected::Signed(found), &"the error code of this error type"))
                }
            }
        }
    )*};
}

const_str! {
    /// `"jsonrpc": "2.0"`.
    JsonRpcVersion = "2.0";

    /// Method `server/discover`.
    DiscoverMethod = "server/discover";
    /// Method `resources/list`.
    ListResourcesMethod = "resources/list";
    /// Method `resources/templates/list`.
    ListResourceTemplatesMethod = "resources/templates/list";
    /// Method `resources/read`.
    ReadResourceMethod = "resources/read";
    /// Method `subscriptions/listen`.
    SubscriptionsListenMethod = "subscriptions/listen";
    /// Method `prompts/list`.
    ListPromptsMethod = "prompts/list";
    /// Method `prompts/get`.
    GetPromptMethod = "prompts/get";
    /// Method `tools/list`.
    ListToolsMethod = "tools/list";
    /// Method `tools/call`.
    CallToolMethod = "tools/call";
    /// Method `completion/complete`.
    CompleteMethod = "completion/complete";
    /// Input-request method `sampling/createMessage`.
    CreateMessageMethod = "sampling/createMessage";
    /// Input-request method `roots/list`.
    ListRootsMethod = "roots/list";
    /// Input-request method `elicitation/create`.
    ElicitMethod = "elicitation/create";

    /// Notification `notifications/cancelled`.
    CancelledMethod = "notifications/cancelled";
    /// Notification `notifications/progress`.
    ProgressMethod = "notifications/progress";
    /// Notification `notifications/message`.
    LoggingMessageMethod = "notifications/message";
    /// Notification `notifications/resources/list_changed`.
    ResourceListChangedMethod = "notifications/resources/list_changed";
    /// Notification `notifications/resources/updated`.
    ResourceUpdatedMethod = "notifications/resources/updated";
    /// Notification `notifications/prompts/list_changed`.
    PromptListChangedMethod = "notifications/prompts/list_changed";
    /// Notification `notifications/tools/list_changed`.
    ToolListChangedMethod = "notifications/tools/list_changed";
    /// Notification `notifications/subscriptions/acknowledged`.
    SubscriptionsAcknowledgedMethod = "notifications/subscriptions/acknowledged";

    /// Content type `text`.
    TextType = "text";
    /// Content type `image`.
    ImageType = "image";
    /// Content type `audio`.
    AudioType = "audio";
    /// Content type `resource_link`.
    ResourceLinkType = "resource_link";
    /// Content type `resource` (an embedded resource).
    EmbeddedResourceType = "resource";
    /// Content type `tool_use`.
    ToolUseType = "tool_use";
    /// Content type `tool_result`.
    ToolResultType = "tool_result";

    /// Completion reference type `ref/prompt`.
    PromptRefType = "ref/prompt";
    /// Completion reference type `ref/resource`.
    ResourceRefType = "ref/resource";

    /// JSON Schema type `string`.
    StringType = "string";
    /// JSON Schema type `boolean`.
    BooleanType = "boolean";
    /// JSON Schema type `array`.
    ArrayType = "array";
    /// JSON Schema type `object`.
    ObjectType = "object";

    /// Elicitation mode `form`.
    FormMode = "form";
    /// Elicitation mode `url`.
    UrlMode = "url";
}

const_int! {
    /// Error code `-32700` (parse error).
    ParseErrorCode = codes::PARSE_ERROR;
    /// Error code `-32600` (invalid request).
    InvalidRequestCode = codes::INVALID_REQUEST;
    /// Error code `-32601` (method not found).
    MethodNotFoundCode = codes::METHOD_NOT_FOUND;
    /// Error code `-32602` (invalid params).
    InvalidParamsCode = codes::INVALID_PARAMS;
    /// Error code `-32603` (internal error).
    InternalErrorCode = codes::INTERNAL_ERROR;
    /// Error code `-32020` (HTTP headers disagree with the body).
    HeaderMismatchCode = codes::HEADER_MISMATCH;
    /// Error code `-32021` (a required client capability is missing).
    MissingRequiredClientCapabilityCode = codes::MISSING_REQUIRED_CLIENT_CAPABILITY;
    /// Error code `-32022` (unsupported protocol version).
    UnsupportedProtocolVersionCode = codes::UNSUPPORTED_PROTOCOL_VERSION;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn markers_write_and_check_their_constant() {
        assert_eq!(
            serde_json::to_value(CallToolMethod).unwrap(),
            json!("tools/call")
        );
        assert!(serde_json::from_value::<CallToolMethod>(json!("tools/call")).is_ok());
        assert!(serde_json::from_value::<CallToolMethod>(json!("tools/list")).is_err());
        assert_eq!(serde_json::to_value(ParseErrorCode).unwrap(), json!(-32700));
        assert!(serde_json::from_value::<ParseErrorCode>(json!(-32600)).is_err());
    }
}
