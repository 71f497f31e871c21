//! Content blocks (text, image, audio, resource links, embedded resources,
//! tool use and tool results) and resource contents.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{Annotations, Icon, JsonObject, MetaObject};
use super::markers::{
    AudioType, EmbeddedResourceType, ImageType, ResourceLinkType, TextType, ToolResultType,
    ToolUseType,
};
use super::serde_util::{self, union_by_tag};

/// Text content (schema: `TextContent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    /// Always `"text"`.
    #[serde(rename = "type")]
    pub kind: TextType,
    /// The text.
    pub text: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl TextContent {
    /// Plain text without annotations.
    pub fn new(text: impl Into<String>) -> Self {
        TextContent {
            kind: TextType,
            text: text.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// An image, base64-encoded (schema: `ImageContent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Always `"image"`.
    #[serde(rename = "type")]
    pub kind: ImageType,
    /// Base64-encoded image data.
    pub data: String,
    /// MIME type of the image, e.g. `image/png`.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl ImageContent {
    /// An image from base64 data and a MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ImageContent {
            kind: ImageType,
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// Audio, base64-encoded (schema: `AudioContent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AudioContent {
    /// Always `"audio"`.
    #[serde(rename = "type")]
    pub kind: AudioType,
    /// Base64-encoded audio data.
    pub data: String,
    /// MIME type of the audio, e.g. `audio/wav`.
    pub mime_type: String,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl AudioContent {
    /// Audio from base64 data and a MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        AudioContent {
            kind: AudioType,
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// A link to a resource the server can read (schema: `ResourceLink`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceLink {
    /// Always `"resource_link"`.
    #[serde(rename = "type")]
    pub kind: ResourceLinkType,
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

impl ResourceLink {
    /// A link with a URI and a name.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ResourceLink {
            kind: ResourceLinkType,
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

/// A resource's contents embedded in a message (schema: `EmbeddedResource`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// Always `"resource"`.
    #[serde(rename = "type")]
    pub kind: EmbeddedResourceType,
    /// The contents, text or binary.
    pub resource: TextOrBlobResourceContents,
    /// Display hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl EmbeddedResource {
    /// Embeds the given contents.
    pub fn new(resource: impl Into<TextOrBlobResourceContents>) -> Self {
        EmbeddedResource {
            kind: EmbeddedResourceType,
            resource: resource.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// A model's request to call a tool, in sampling (schema: `ToolUseContent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUseContent {
    /// Always `"tool_use"`.
    #[serde(rename = "type")]
    pub kind: ToolUseType,
    /// Identifier the matching tool result refers to.
    pub id: String,
    /// Name of the tool to call.
    pub name: String,
    /// Arguments, matching the tool's input schema.
    pub input: JsonObject,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

/// The result of a tool use, in sampling (schema: `ToolResultContent`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// Always `"tool_result"`.
    #[serde(rename = "type")]
    pub kind: ToolResultType,
    /// The `id` of the tool use this answers.
    pub tool_use_id: String,
    /// Unstructured result content.
    pub content: Vec<ContentBlock>,
    /// Structured result, if the tool defined an output schema.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "serde_util::present"
    )]
    pub structured_content: Option<Value>,
    /// Whether the tool use failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

/// Content of prompts, tool results and embedded resources (schema: `ContentBlock`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ContentBlock {
    /// `type: "text"`.
    Text(TextContent),
    /// `type: "image"`.
    Image(ImageContent),
    /// `type: "audio"`.
    Audio(AudioContent),
    /// `type: "resource_link"`.
    ResourceLink(ResourceLink),
    /// `type: "resource"`.
    Resource(EmbeddedResource),
}

union_by_tag!(ContentBlock, "type", {
    TextType => Text,
    ImageType => Image,
    AudioType => Audio,
    ResourceLinkType => ResourceLink,
    EmbeddedResourceType => Resource,
});

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent::new(text))
    }

    /// An image block from base64 data and a MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent::new(data, mime_type))
    }

    /// An audio block from base64 data and a MIME type.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(AudioContent::new(data, mime_type))
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Self {
        ContentBlock::ResourceLink(ResourceLink::new(uri, name))
    }

    /// An embedded resource.
    pub fn resource(resource: impl Into<TextOrBlobResourceContents>) -> Self {
        ContentBlock::Resource(EmbeddedResource::new(resource))
    }

    /// The text, if this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

impl From<TextContent> for ContentBlock {
    fn from(c: TextContent) -> Self {
        ContentBlock::Text(c)
    }
}

impl From<ImageContent> for ContentBlock {
    fn from(c: ImageContent) -> Self {
        ContentBlock::Image(c)
    }
}

impl From<AudioContent> for ContentBlock {
    fn from(c: AudioContent) -> Self {
        ContentBlock::Audio(c)
    }
}

impl From<ResourceLink> for ContentBlock {
    fn from(c: ResourceLink) -> Self {
        ContentBlock::ResourceLink(c)
    }
}

impl From<EmbeddedResource> for ContentBlock {
    fn from(c: EmbeddedResource) -> Self {
        ContentBlock::Resource(c)
    }
}

/// Content of sampling messages (schema: `SamplingMessageContentBlock`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SamplingMessageContentBlock {
    /// `type: "text"`.
    Text(TextContent),
    /// `type: "image"`.
    Image(ImageContent),
    /// `type: "audio"`.
    Audio(AudioContent),
    /// `type: "tool_use"`.
    ToolUse(ToolUseContent),
    /// `type: "tool_result"`.
    ToolResult(ToolResultContent),
}

union_by_tag!(SamplingMessageContentBlock, "type", {
    TextType => Text,
    ImageType => Image,
    AudioType => Audio,
    ToolUseType => ToolUse,
    ToolResultType => ToolResult,
});

impl SamplingMessageContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        SamplingMessageContentBlock::Text(TextContent::new(text))
    }
}

/// The members all resource contents share (schema: `ResourceContents`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    /// URI of the resource.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

/// A resource's contents as text (schema: `TextResourceContents`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextResourceContents {
    /// URI of the resource.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// The text.
    pub text: String,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl TextResourceContents {
    /// Text contents of the resource at `uri`.
    pub fn new(uri: impl Into<String>, text: impl Into<String>) -> Self {
        TextResourceContents {
            uri: uri.into(),
            mime_type: None,
            text: text.into(),
            meta: None,
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// A resource's contents as base64 binary data (schema: `BlobResourceContents`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobResourceContents {
    /// URI of the resource.
    pub uri: String,
    /// MIME type, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Base64-encoded data.
    pub blob: String,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl BlobResourceContents {
    /// Binary (base64) contents of the resource at `uri`.
    pub fn new(uri: impl Into<String>, blob: impl Into<String>) -> Self {
        BlobResourceContents {
            uri: uri.into(),
            mime_type: None,
            blob: blob.into(),
            meta: None,
        }
    }

    /// Sets the MIME type.
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.mime_type = Some(mime_type.into());
        self
    }
}

/// Text or binary resource contents, told apart by a `text` or `blob` member
/// (schema: `TextResourceContents | BlobResourceContents`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum TextOrBlobResourceContents {
    /// Has `text`.
    Text(TextResourceContents),
    /// Has `blob`.
    Blob(BlobResourceContents),
}

impl<'de> Deserialize<'de> for TextOrBlobResourceContents {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.get("text").is_some() {
            serde_util::variant(value).map(TextOrBlobResourceContents::Text)
        } else if value.get("blob").is_some() {
            serde_util::variant(value).map(TextOrBlobResourceContents::Blob)
        } else {
            Err(serde::de::Error::custom(
                "resource contents need a \"text\" or a \"blob\" member",
            ))
        }
    }
}

impl TextOrBlobResourceContents {
    /// The URI of the resource.
    pub fn uri(&self) -> &str {
        match self {
            TextOrBlobResourceContents::Text(c) => &c.uri,
            TextOrBlobResourceContents::Blob(c) => &c.uri,
        }
    }
}

impl From<TextResourceContents> for TextOrBlobResourceContents {
    fn from(c: TextResourceContents) -> Self {
        TextOrBlobResourceContents::Text(c)
    }
}

impl From<BlobResourceContents> for TextOrBlobResourceContents {
    fn from(c: BlobResourceContents) -> Self {
        TextOrBlobResourceContents::Blob(c)
    }
}
