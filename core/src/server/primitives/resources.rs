//! `resources/read` (spec: server/resources.mdx): the URI resolves to a
//! fixed resource or the first matching template, and the handler's output
//! becomes the `contents` of a cacheable result.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde_json::{Map, Value, json};

use super::{insert_cache_hint, run_handler};
use crate::McpError;
use crate::protocol::methods::RESOURCES_READ;
use crate::server::Server;
use crate::server::context::RequestContext;
use crate::server::handler::{ResourceOutput, ResourceRequest};
use crate::server::input::InputRound;
use crate::server::registry::ResolvedResource;
use crate::server::visibility::VisibleItem;

impl Server {
    /// Answers `resources/read`, or ends the round with `InputRequiredResult`.
    pub(in crate::server) async fn read_resource(
        &self,
        ctx: RequestContext,
        params: &Map<String, Value>,
        input: Option<&InputRound>,
    ) -> Result<Map<String, Value>, McpError> {
        let Some(Value::String(uri)) = params.get("uri") else {
            return Err(McpError::invalid_params(format!(
                "{RESOURCES_READ} requires a string \"uri\""
            )));
        };
        // Hidden from this caller: as unknown as a URI nothing serves.
        let resolved = self
            .find_shown(
                ctx.meta(),
                |registry| registry.resolve_resource(uri),
                |resolved| match &resolved.template {
                    Some(template) => VisibleItem::ResourceTemplate(template.clone()),
                    None => VisibleItem::Resource(uri.clone()),
                },
            )
            .await;
        let Some(ResolvedResource {
            handler,
            mime_type,
            variables,
            cache,
            ..
        }) = resolved
        else {
            return Err(
                McpError::invalid_params(format!("Resource not found: {uri}"))
                    .with_data(json!({ "uri": uri })),
            );
        };
        let request = ResourceRequest {
            uri: uri.clone(),
            variables,
        };
        let ran = run_handler(input, move || handler.call(ctx, request)).await;
        let output = match self.non_tool_outcome(ran, input, params, &format!("Reading {uri}"))? {
            Ok(output) => output,
            Err(input_required) => return Ok(input_required),
        };
        let mut result = Map::new();
        result.insert(
            "contents".into(),
            Value::Array(contents(output, uri, mime_type.as_deref())),
        );
        insert_cache_hint(
            &mut result,
            cache.unwrap_or(self.shared.options.caching.resource_read),
        );
        Ok(result)
    }
}

/// The `contents` items of a handler's output: text and bytes become one
/// item for the requested URI with the registered MIME type.
fn contents(output: ResourceOutput, uri: &str, mime_type: Option<&str>) -> Vec<Value> {
    match output {
        ResourceOutput::Text(text) => {
            vec![contents_item(uri, mime_type, "text", Value::from(text))]
        }
        ResourceOutput::Blob(bytes) => vec![contents_item(
            uri,
            mime_type,
            "blob",
            Value::from(BASE64.encode(bytes)),
        )],
        ResourceOutput::Contents(items) => items,
    }
}

fn contents_item(uri: &str, mime_type: Option<&str>, field: &str, value: Value) -> Value {
    let mut item = Map::new();
    item.insert("uri".into(), Value::from(uri));
    if let Some(mime) = mime_type {
        item.insert("mimeType".into(), Value::from(mime));
    }
    item.insert(field.into(), value);
    Value::Object(item)
}
