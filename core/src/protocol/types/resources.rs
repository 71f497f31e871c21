//! Resources: definitions, templates, `resources/list`,
//! `resources/templates/list` and `resources/read`.

use serde::{Deserialize, Serialize};

use super::common::{Annotations, Icon, MetaObject};
use super::content::TextOrBlobResourceContents;
use super::input::InputResponses;
use super::meta_objects::{RequestMetaObject, ResultMetaObject};
use super::results::{CacheScope, ResultType};

/// A resource the server can read (schema: `Resource`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// URI of the resource.
    pub uri: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resource is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Size of the raw content in bytes, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl Resource {
    /// A resource with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Resource {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            size: None,
            icons: None,
            annotations: None,
            meta: None,
        }
    }
}

/// A family of resources described by an RFC 6570 URI template (schema: `ResourceTemplate`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplate {
    /// The URI template.
    pub uri_template: String,
    /// Programmatic name.
    pub name: String,
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the resources are.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// MIME type of every matching resource, if they share one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl ResourceTemplate {
    /// A template with a URI template and a name.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceTemplate {
            uri_template: uri_template.into(),
            name: name.into(),
            title: None,
            description: None,
            mime_type: None,
            icons: None,
            annotations: None,
            meta: None,
        }
    }
}

/// Parameters of a request about one resource (schema: `ResourceRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceRequestParams {
    /// Request metadata (protocol version, client capabilities...).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// URI of the resource.
    pub uri: String,
}

/// Parameters of `resources/read` (schema: `ReadResourceRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceRequestParams {
    /// Request metadata (protocol version, client capabilities...).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// URI of the resource.
    pub uri: String,
    /// Answers to the input requests of an earlier `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// Opaque state echoed from an earlier `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
}

/// The result of `resources/read` (schema: `ReadResourceResult`).
///
/// `ttlMs` and `cacheScope` are required by the schema, but one of the
/// specification's own examples omits them, so they are optional here;
/// [`ReadResourceResult::new`] always sets them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadResourceResult {
    /// How to read the result.
    #[serde(default)]
    pub result_type: ResultType,
    /// The contents: one resource, or several for a directory-like URI.
    pub contents: Vec<TextOrBlobResourceContents>,
    /// How long (ms) the client may cache the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may cache the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
}

impl ReadResourceResult {
    /// A complete result with the given contents and caching hints.
    pub fn new(
        contents: Vec<TextOrBlobResourceContents>,
        ttl_ms: u64,
        cache_scope: CacheScope,
    ) -> Self {
        ReadResourceResult {
            result_type: ResultType::Complete,
            contents,
            ttl_ms: Some(ttl_ms),
            cache_scope: Some(cache_scope),
            meta: None,
        }
    }
}

/// The result of `resources/list` (schema: `ListResourcesResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourcesResult {
    /// How to read the result.
    #[serde(default)]
    pub result_type: ResultType,
    /// The resources on this page.
    pub resources: Vec<Resource>,
    /// Cursor of the next page, if there may be more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long (ms) the client may cache the result.
    /// Absent from earlier revisions\' results: read as 0 (stale at once).
    #[serde(default)]
    pub ttl_ms: u64,
    /// Who may cache the result.
    /// Absent from earlier revisions\' results: read as `private`.
    #[serde(default)]
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
}

impl ListResourcesResult {
    /// One complete page of resources with the given caching hints.
    pub fn new(resources: Vec<Resource>, ttl_ms: u64, cache_scope: CacheScope) -> Self {
        ListResourcesResult {
            result_type: ResultType::Complete,
            resources,
            next_cursor: None,
            ttl_ms,
            cache_scope,
            meta: None,
        }
    }
}

/// The result of `resources/templates/list` (schema: `ListResourceTemplatesResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListResourceTemplatesResult {
    /// How to read the result.
    #[serde(default)]
    pub result_type: ResultType,
    /// The templates on this page.
    pub resource_templates: Vec<ResourceTemplate>,
    /// Cursor of the next page, if there may be more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long (ms) the client may cache the result.
    /// Absent from earlier revisions\' results: read as 0 (stale at once).
    #[serde(default)]
    pub ttl_ms: u64,
    /// Who may cache the result.
    /// Absent from earlier revisions\' results: read as `private`.
    #[serde(default)]
    pub cache_scope: CacheScope,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
}

impl ListResourceTemplatesResult {
    /// One complete page of templates with the given caching hints.
    pub fn new(
        resource_templates: Vec<ResourceTemplate>,
        ttl_ms: u64,
        cache_scope: CacheScope,
    ) -> Self {
        ListResourceTemplatesResult {
            result_type: ResultType::Complete,
            resource_templates,
            next_cursor: None,
            ttl_ms,
            cache_scope,
            meta: None,
        }
    }
}
