//! Every schema definition has a Rust type, and every example of the
//! specification survives a round trip through the type of its folder:
//! JSON -> Rust -> JSON gives back the same JSON value.
//!
//! Fixtures: `tests/fixtures/spec/2026-07-28/` at the workspace root (see
//! `tests/fixtures/spec/SOURCE.md`).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use ferromcp::protocol as p;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Declares the table of schema definitions and their Rust types: the list
/// of names, and the `match` from a name to a round trip through its type.
macro_rules! schema_types {
    ($($name:literal => $ty:ty,)*) => {
        /// Every `$defs` name of the 2026-07-28 schema.
        const SCHEMA_DEFS: &[&str] = &[$($name),*];

        /// Round-trips `value` through the Rust type of definition `name`;
        /// `None` if the name has no type.
        fn roundtrip_as(name: &str, value: &Value) -> Option<Result<(), String>> {
            match name {
                $($name => Some(roundtrip::<$ty>(value)),)*
                _ => None,
            }
        }
    };
}

schema_types! {
    "Annotations" => p::Annotations,
    "AudioContent" => p::AudioContent,
    "BaseMetadata" => p::BaseMetadata,
    "BlobResourceContents" => p::BlobResourceContents,
    "BooleanSchema" => p::BooleanSchema,
    "CacheableResult" => p::CacheableResult,
    "CallToolRequest" => p::CallToolRequest,
    "CallToolRequestParams" => p::CallToolRequestParams,
    "CallToolResult" => p::CallToolResult,
    "CallToolResultResponse" => p::CallToolResultResponse,
    "CancelledNotification" => p::CancelledNotification,
    "CancelledNotificationParams" => p::CancelledNotificationParams,
    "ClientCapabilities" => p::ClientCapabilities,
    "ClientNotification" => p::ClientNotification,
    "ClientRequest" => p::ClientRequest,
    "ClientResult" => p::ClientResult,
    "CompleteRequest" => p::CompleteRequest,
    "CompleteRequestParams" => p::CompleteRequestParams,
    "CompleteResult" => p::CompleteResult,
    "CompleteResultResponse" => p::CompleteResultResponse,
    "ContentBlock" => p::ContentBlock,
    "CreateMessageRequest" => p::CreateMessageRequest,
    "CreateMessageRequestParams" => p::CreateMessageRequestParams,
    "CreateMessageResult" => p::CreateMessageResult,
    "Cursor" => p::Cursor,
    "DiscoverRequest" => p::DiscoverRequest,
    "DiscoverResult" => p::DiscoverResult,
    "DiscoverResultResponse" => p::DiscoverResultResponse,
    "ElicitRequest" => p::ElicitRequest,
    "ElicitRequestFormParams" => p::ElicitRequestFormParams,
    "ElicitRequestParams" => p::ElicitRequestParams,
    "ElicitRequestURLParams" => p::ElicitRequestUrlParams,
    "ElicitResult" => p::ElicitResult,
    "EmbeddedResource" => p::EmbeddedResource,
    "EmptyResult" => p::EmptyResult,
    "EnumSchema" => p::EnumSchema,
    "Error" => p::ErrorObject,
    "GetPromptRequest" => p::GetPromptRequest,
    "GetPromptRequestParams" => p::GetPromptRequestParams,
    "GetPromptResult" => p::GetPromptResult,
    "GetPromptResultResponse" => p::GetPromptResultResponse,
    "HeaderMismatchError" => p::HeaderMismatchError,
    "Icon" => p::Icon,
    "Icons" => p::Icons,
    "ImageContent" => p::ImageContent,
    "Implementation" => p::Implementation,
    "InputRequest" => p::InputRequest,
    "InputRequests" => p::InputRequests,
    "InputRequiredResult" => p::InputRequiredResult,
    "InputResponse" => p::InputResponse,
    "InputResponseRequestParams" => p::InputResponseRequestParams,
    "InputResponses" => p::InputResponses,
    "InternalError" => p::InternalError,
    "InvalidParamsError" => p::InvalidParamsError,
    "InvalidRequestError" => p::InvalidRequestError,
    "JSONArray" => p::JsonArray,
    "JSONObject" => p::JsonObject,
    "JSONRPCErrorResponse" => p::JsonRpcErrorResponse,
    "JSONRPCMessage" => p::JsonRpcMessage,
    "JSONRPCNotification" => p::JsonRpcNotification,
    "JSONRPCRequest" => p::JsonRpcRequest,
    "JSONRPCResponse" => p::JsonRpcResponse,
    "JSONRPCResultResponse" => p::JsonRpcResultResponse,
    "JSONValue" => p::JsonValue,
    "LegacyTitledEnumSchema" => p::LegacyTitledEnumSchema,
    "ListPromptsRequest" => p::ListPromptsRequest,
    "ListPromptsResult" => p::ListPromptsResult,
    "ListPromptsResultResponse" => p::ListPromptsResultResponse,
    "ListResourceTemplatesRequest" => p::ListResourceTemplatesRequest,
    "ListResourceTemplatesResult" => p::ListResourceTemplatesResult,
    "ListResourceTemplatesResultResponse" => p::ListResourceTemplatesResultResponse,
    "ListResourcesRequest" => p::ListResourcesRequest,
    "ListResourcesResult" => p::ListResourcesResult,
    "ListResourcesResultResponse" => p::ListResourcesResultResponse,
    "ListRootsRequest" => p::ListRootsRequest,
    "ListRootsResult" => p::ListRootsResult,
    "ListToolsRequest" => p::ListToolsRequest,
    "ListToolsResult" => p::ListToolsResult,
    "ListToolsResultResponse" => p::ListToolsResultResponse,
    "LoggingLevel" => p::LoggingLevel,
    "LoggingMessageNotification" => p::LoggingMessageNotification,
    "LoggingMessageNotificationParams" => p::LoggingMessageNotificationParams,
    "MetaObject" => p::MetaObject,
    "MethodNotFoundError" => p::MethodNotFoundError,
    "MissingRequiredClientCapabilityError" => p::MissingRequiredClientCapabilityError,
    "ModelHint" => p::ModelHint,
    "ModelPreferences" => p::ModelPreferences,
    "MultiSelectEnumSchema" => p::MultiSelectEnumSchema,
    "Notification" => p::BaseNotification,
    "NotificationMetaObject" => p::NotificationMetaObject,
    "NotificationParams" => p::NotificationParams,
    "NumberSchema" => p::NumberSchema,
    "PaginatedRequest" => p::PaginatedRequest,
    "PaginatedRequestParams" => p::PaginatedRequestParams,
    "PaginatedResult" => p::PaginatedResult,
    "ParseError" => p::ParseError,
    "PrimitiveSchemaDefinition" => p::PrimitiveSchemaDefinition,
    "ProgressNotification" => p::ProgressNotification,
    "ProgressNotificationParams" => p::ProgressNotificationParams,
    "ProgressToken" => p::ProgressToken,
    "Prompt" => p::Prompt,
    "PromptArgument" => p::PromptArgument,
    "PromptListChangedNotification" => p::PromptListChangedNotification,
    "PromptMessage" => p::PromptMessage,
    "PromptReference" => p::PromptReference,
    "ReadResourceRequest" => p::ReadResourceRequest,
    "ReadResourceRequestParams" => p::ReadResourceRequestParams,
    "ReadResourceResult" => p::ReadResourceResult,
    "ReadResourceResultResponse" => p::ReadResourceResultResponse,
    "Request" => p::BaseRequest,
    "RequestId" => p::RequestId,
    "RequestMetaObject" => p::RequestMetaObject,
    "RequestParams" => p::RequestParams,
    "Resource" => p::Resource,
    "ResourceContents" => p::ResourceContents,
    "ResourceLink" => p::ResourceLink,
    "ResourceListChangedNotification" => p::ResourceListChangedNotification,
    "ResourceRequestParams" => p::ResourceRequestParams,
    "ResourceTemplate" => p::ResourceTemplate,
    "ResourceTemplateReference" => p::ResourceTemplateReference,
    "ResourceUpdatedNotification" => p::ResourceUpdatedNotification,
    "ResourceUpdatedNotificationParams" => p::ResourceUpdatedNotificationParams,
    "Result" => p::BaseResult,
    "ResultMetaObject" => p::ResultMetaObject,
    "ResultType" => p::ResultType,
    "Role" => p::Role,
    "Root" => p::Root,
    "SamplingMessage" => p::SamplingMessage,
    "SamplingMessageContentBlock" => p::SamplingMessageContentBlock,
    "ServerCapabilities" => p::ServerCapabilities,
    "ServerNotification" => p::ServerNotification,
    "ServerResult" => p::ServerResult,
    "SingleSelectEnumSchema" => p::SingleSelectEnumSchema,
    "StringSchema" => p::StringSchema,
    "SubscriptionFilter" => p::SubscriptionFilter,
    "SubscriptionsAcknowledgedNotification" => p::SubscriptionsAcknowledgedNotification,
    "SubscriptionsAcknowledgedNotificationParams" => p::SubscriptionsAcknowledgedNotificationParams,
    "SubscriptionsListenRequest" => p::SubscriptionsListenRequest,
    "SubscriptionsListenRequestParams" => p::SubscriptionsListenRequestParams,
    "SubscriptionsListenResult" => p::SubscriptionsListenResult,
    "SubscriptionsListenResultMetaObject" => p::SubscriptionsListenResultMetaObject,
    "SubscriptionsListenResultResponse" => p::SubscriptionsListenResultResponse,
    "TextContent" => p::TextContent,
    "TextResourceContents" => p::TextResourceContents,
    "TitledMultiSelectEnumSchema" => p::TitledMultiSelectEnumSchema,
    "TitledSingleSelectEnumSchema" => p::TitledSingleSelectEnumSchema,
    "Tool" => p::Tool,
    "ToolAnnotations" => p::ToolAnnotations,
    "ToolChoice" => p::ToolChoice,
    "ToolListChangedNotification" => p::ToolListChangedNotification,
    "ToolResultContent" => p::ToolResultContent,
    "ToolUseContent" => p::ToolUseContent,
    "UnsupportedProtocolVersionError" => p::UnsupportedProtocolVersionError,
    "UntitledMultiSelectEnumSchema" => p::UntitledMultiSelectEnumSchema,
    "UntitledSingleSelectEnumSchema" => p::UntitledSingleSelectEnumSchema,
}

/// The fixture folder for revision 2026-07-28.
fn spec_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/spec/2026-07-28")
}

fn read_json(path: &std::path::Path) -> Value {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// JSON -> `T` -> JSON must give back the same value.
fn roundtrip<T: Serialize + DeserializeOwned>(value: &Value) -> Result<(), String> {
    let typed: T =
        serde_json::from_value(value.clone()).map_err(|e| format!("does not deserialise: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| format!("does not serialise: {e}"))?;
    if back == *value {
        Ok(())
    } else {
        let mut out = String::from("round trip changed the value:");
        diff("", value, &back, &mut out);
        Err(out)
    }
}

/// Lists where `after` differs from `before`, one line per JSON pointer.
fn diff(path: &str, before: &Value, after: &Value, out: &mut String) {
    match (before, after) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, av) in a {
                let here = format!("{path}/{key}");
                match b.get(key) {
                    Some(bv) => diff(&here, av, bv, out),
                    None => {
                        let _ = write!(out, "\n  {here}: dropped (was {av})");
                    }
                }
            }
            for (key, bv) in b {
                if !a.contains_key(key) {
                    let _ = write!(out, "\n  {path}/{key}: added {bv}");
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (av, bv)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}/{i}"), av, bv, out);
            }
        }
        _ if before != after => {
            let _ = write!(out, "\n  {path}: {before} became {after}");
        }
        _ => {}
    }
}

#[test]
fn every_example_round_trips_through_its_type() {
    let examples = spec_dir().join("examples");
    let mut folders: Vec<PathBuf> = fs::read_dir(&examples)
        .unwrap_or_else(|e| panic!("{}: {e}", examples.display()))
        .map(|entry| entry.expect("readable folder entry").path())
        .filter(|path| path.is_dir())
        .collect();
    folders.sort();
    assert!(
        !folders.is_empty(),
        "no example folders in {}",
        examples.display()
    );

    let mut checked = 0;
    let mut failures = Vec::new();
    for folder in &folders {
        let name = folder
            .file_name()
            .and_then(|n| n.to_str())
            .expect("UTF-8 folder name");
        let mut files: Vec<PathBuf> = fs::read_dir(folder)
            .expect("readable example folder")
            .map(|entry| entry.expect("readable file entry").path())
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        files.sort();
        if files.is_empty() {
            failures.push(format!("{name}/: folder has no .json example"));
        }
        for file in files {
            let value = read_json(&file);
            let shown = format!("{name}/{}", file.file_name().unwrap().to_string_lossy());
            match roundtrip_as(name, &value) {
                None => failures.push(format!("{shown}: no Rust type is mapped to {name:?}")),
                Some(Err(why)) => failures.push(format!("{shown}: {why}")),
                Some(Ok(())) => checked += 1,
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} examples failed:\n{}",
        failures.len(),
        checked + failures.len(),
        failures.join("\n")
    );
    // The fixture set holds 129 examples; fewer means files went missing.
    assert!(checked >= 129, "only {checked} examples were checked");
}

#[test]
fn every_schema_definition_has_a_rust_type() {
    let schema = read_json(&spec_dir().join("schema.json"));
    let defs: BTreeSet<&str> = schema["$defs"]
        .as_object()
        .expect("schema.json has $defs")
        .keys()
        .map(String::as_str)
        .collect();
    let mapped: BTreeSet<&str> = SCHEMA_DEFS.iter().copied().collect();
    assert_eq!(
        SCHEMA_DEFS.len(),
        155,
        "the table should list all 155 definitions"
    );
    assert_eq!(
        mapped.len(),
        SCHEMA_DEFS.len(),
        "the table lists a name twice"
    );
    let missing: Vec<_> = defs.difference(&mapped).collect();
    let unknown: Vec<_> = mapped.difference(&defs).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "definitions without a Rust type: {missing:?}; names not in schema.json: {unknown:?}"
    );
    for name in SCHEMA_DEFS {
        // `Null` is valid for no type here, so this only proves the match arm exists.
        assert!(
            roundtrip_as(name, &Value::Null).is_some(),
            "{name} has no Rust type"
        );
    }
}

#[test]
fn unions_pick_the_variant_named_by_their_discriminator() {
    let block: p::ContentBlock = serde_json::from_value(
        serde_json::json!({"type": "resource_link", "uri": "file:///a", "name": "a"}),
    )
    .unwrap();
    assert!(matches!(block, p::ContentBlock::ResourceLink(_)));

    let err =
        serde_json::from_value::<p::ContentBlock>(serde_json::json!({"type": "video", "data": ""}))
            .unwrap_err()
            .to_string();
    assert!(err.contains("video"), "{err}");

    let params: p::ElicitRequestParams = serde_json::from_value(serde_json::json!({
        "message": "Name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
    }))
    .unwrap();
    assert!(
        matches!(params, p::ElicitRequestParams::Form(_)),
        "no mode means form"
    );

    let result: p::CallToolResultResponse = serde_json::from_value(serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required", "requestState": "s"}
    }))
    .unwrap();
    assert!(matches!(
        result.result,
        p::InputRequiredOr::InputRequired(_)
    ));

    let request: p::ClientRequest = serde_json::from_value(read_json(
        &spec_dir().join("examples/CallToolRequest/call-tool-request.json"),
    ))
    .unwrap();
    assert_eq!(request.method(), "tools/call");
    assert_eq!(request.meta().protocol_version, "2026-07-28");
}

#[test]
fn constant_members_are_checked() {
    let wrong_method = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                             "io.modelcontextprotocol/clientCapabilities": {}},
                   "name": "x"}
    });
    assert!(serde_json::from_value::<p::CallToolRequest>(wrong_method).is_err());
    let wrong_version =
        serde_json::json!({"jsonrpc": "1.0", "method": "notifications/tools/list_changed"});
    assert!(serde_json::from_value::<p::ToolListChangedNotification>(wrong_version).is_err());
    let wrong_code = serde_json::json!({"code": -32603, "message": "x"});
    assert!(serde_json::from_value::<p::ParseError>(wrong_code).is_err());
}
