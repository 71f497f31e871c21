//! Sampling: the `sampling/createMessage` input request and its result.

use serde::de::Deserializer;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::common::{JsonObject, MetaObject, Role};
use super::content::SamplingMessageContentBlock;
use super::serde_util::{self, opt_number};
use super::tools::Tool;

/// One content block or several (schema: `SamplingMessage.content`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// A single block.
    Single(SamplingMessageContentBlock),
    /// An array of blocks.
    Multiple(Vec<SamplingMessageContentBlock>),
}

impl<'de> Deserialize<'de> for SamplingContent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.is_array() {
            serde_util::variant(value).map(SamplingContent::Multiple)
        } else {
            serde_util::variant(value).map(SamplingContent::Single)
        }
    }
}

impl SamplingContent {
    /// The blocks, whether one or several.
    pub fn blocks(&self) -> &[SamplingMessageContentBlock] {
        match self {
            SamplingContent::Single(block) => std::slice::from_ref(block),
            SamplingContent::Multiple(blocks) => blocks,
        }
    }
}

impl From<SamplingMessageContentBlock> for SamplingContent {
    fn from(block: SamplingMessageContentBlock) -> Self {
        SamplingContent::Single(block)
    }
}

/// A message sent to or received from an LLM (schema: `SamplingMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SamplingMessage {
    /// Who speaks.
    pub role: Role,
    /// What is said.
    pub content: SamplingContent,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}

impl SamplingMessage {
    /// A text message from `role`.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        SamplingMessage {
            role,
            content: SamplingMessageContentBlock::text(text).into(),
            meta: None,
        }
    }
}

/// A hint for model selection (schema: `ModelHint`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelHint {
    /// A full or partial model name, e.g. `"claude-3-5-sonnet"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The server's preferences for model selection (schema: `ModelPreferences`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// How much cost matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_number")]
    pub cost_priority: Option<f64>,
    /// How much speed matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_number")]
    pub speed_priority: Option<f64>,
    /// How much capability matters, 0 to 1.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_number")]
    pub intelligence_priority: Option<f64>,
}

/// How the model may use tools (schema: `ToolChoice.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolChoiceMode {
    /// `"auto"`: the model decides.
    Auto,
    /// `"required"`: the model must use a tool.
    Required,
    /// `"none"`: the model must not use tools.
    None,
}

/// Tool selection for sampling (schema: `ToolChoice`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChoice {
    /// How the model may use tools; `auto` if absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// Which MCP context to include in sampling (schema: `CreateMessageRequestParams.includeContext`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// `"none"`.
    None,
    /// `"thisServer"`.
    ThisServer,
    /// `"allServers"`.
    AllServers,
}

/// Parameters of `sampling/createMessage` (schema: `CreateMessageRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// Model selection preferences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt the client may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which MCP context to include (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_number")]
    pub temperature: Option<f64>,
    /// Maximum number of tokens to sample.
    pub max_tokens: u64,
    /// Sequences that stop sampling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use the tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
}

impl CreateMessageRequestParams {
    /// Parameters with just the messages and a token limit.
    pub fn new(messages: Vec<SamplingMessage>, max_tokens: u64) -> Self {
        CreateMessageRequestParams {
            messages,
            model_preferences: None,
            system_prompt: None,
            include_context: None,
            temperature: None,
            max_tokens,
            stop_sequences: None,
            metadata: None,
            tools: None,
            tool_choice: None,
        }
    }
}

/// The client's answer to `sampling/createMessage` (schema: `CreateMessageResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who speaks (normally the assistant).
    pub role: Role,
    /// The sampled content.
    pub content: SamplingContent,
    /// Name of the model that generated the message.
    pub model: String,
    /// Why sampling stopped: `endTurn`, `stopSequence`, `maxTokens`, `toolUse` or another value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Extra metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<MetaObject>,
}
