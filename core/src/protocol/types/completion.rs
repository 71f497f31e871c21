//! Argument completion: `completion/complete` and its references.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::markers::{PromptRefType, ResourceRefType};
use super::meta_objects::{RequestMetaObject, ResultMetaObject};
use super::results::ResultType;
use super::serde_util::union_by_tag;

/// Refers to a prompt by name (schema: `PromptReference`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptReference {
    /// Always `"ref/prompt"`.
    #[serde(rename = "type")]
    pub kind: PromptRefType,
    /// Name of the prompt.
    pub name: String,
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Refers to a resource template by its URI template (schema: `ResourceTemplateReference`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceTemplateReference {
    /// Always `"ref/resource"`.
    #[serde(rename = "type")]
    pub kind: ResourceRefType,
    /// The URI template.
    pub uri: String,
}

/// What is being completed (schema: `PromptReference | ResourceTemplateReference`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum CompletionReference {
    /// `type: "ref/prompt"`.
    Prompt(PromptReference),
    /// `type: "ref/resource"`.
    ResourceTemplate(ResourceTemplateReference),
}

union_by_tag!(CompletionReference, "type", {
    PromptRefType => Prompt,
    ResourceRefType => ResourceTemplate,
});

/// The argument being completed (schema: `CompleteRequestParams.argument`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionArgument {
    /// Name of the argument.
    pub name: String,
    /// What the user typed so far.
    pub value: String,
}

/// Context for a completion (schema: `CompleteRequestParams.context`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompletionContext {
    /// Values of arguments already resolved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// Parameters of `completion/complete` (schema: `CompleteRequestParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteRequestParams {
    /// Request metadata (protocol version, client capabilities...).
    #[serde(rename = "_meta")]
    pub meta: RequestMetaObject,
    /// The prompt or resource template whose argument is completed.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument and its partial value.
    pub argument: CompletionArgument,
    /// Already resolved arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
}

/// The completion values (schema: `CompleteResult.completion`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// Completion values, at most 100.
    pub values: Vec<String>,
    /// Total number of options, which may exceed the values sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more options than the values sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// The result of `completion/complete` (schema: `CompleteResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// How to read the result.
    #[serde(default)]
    pub result_type: ResultType,
    /// The completion values.
    pub completion: Completion,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMetaObject>,
}

impl CompleteResult {
    /// A complete result with the given values.
    pub fn new(values: Vec<String>) -> Self {
        CompleteResult {
            result_type: ResultType::Complete,
            completion: Completion {
                values,
                total: None,
                has_more: None,
            },
            meta: None,
        }
    }
}
