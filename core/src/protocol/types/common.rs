//! Building blocks shared by many definitions: JSON aliases, roles,
//! annotations, icons, implementation info, log levels and progress tokens.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::serde_util::opt_number;

/// Any JSON value (schema: `JSONValue`).
pub type JsonValue = Value;

/// A JSON object with arbitrary members (schema: `JSONObject`).
pub type JsonObject = Map<String, Value>;

/// A JSON array of arbitrary values (schema: `JSONArray`).
pub type JsonArray = Vec<Value>;

/// The contents of a plain `_meta` member: free-form keys (schema: `MetaObject`).
pub type MetaObject = Map<String, Value>;

/// An opaque pagination position (schema: `Cursor`).
pub type Cursor = String;

/// The sender or recipient of a message in a conversation (schema: `Role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// `"user"`.
    User,
    /// `"assistant"`.
    Assistant,
}

/// Severity of a log message, as in syslog (RFC 5424) (schema: `LoggingLevel`).
///
/// Variants are ordered from least to most severe, so `level >= minimum`
/// tells whether a message passes a requested minimum level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// `"debug"`: detailed debugging information.
    Debug,
    /// `"info"`: informational messages.
    Info,
    /// `"notice"`: normal but significant events.
    Notice,
    /// `"warning"`: warning conditions.
    Warning,
    /// `"error"`: error conditions.
    Error,
    /// `"critical"`: critical conditions.
    Critical,
    /// `"alert"`: action must be taken immediately.
    Alert,
    /// `"emergency"`: the system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }

    /// Parses a wire name.
    pub fn parse(name: &str) -> Option<LoggingLevel> {
        Some(match name {
            "debug" => LoggingLevel::Debug,
            "info" => LoggingLevel::Info,
            "notice" => LoggingLevel::Notice,
            "warning" => LoggingLevel::Warning,
            "error" => LoggingLevel::Error,
            "critical" => LoggingLevel::Critical,
            "alert" => LoggingLevel::Alert,
            "emergency" => LoggingLevel::Emergency,
            _ => return None,
        })
    }
}

/// A token correlating progress notifications with a request (schema: `ProgressToken`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// An integer token.
    Number(i64),
    /// A string token.
    String(String),
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        ProgressToken::Number(n)
    }
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> Self {
        ProgressToken::String(s.to_owned())
    }
}

impl From<String> for ProgressToken {
    fn from(s: String) -> Self {
        ProgressToken::String(s)
    }
}

/// Hints for the client about how to use or display an object (schema: `Annotations`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is intended for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_number")]
    pub priority: Option<f64>,
    /// When the object was last modified (ISO 8601 timestamp).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// Which UI theme an icon is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IconTheme {
    /// `"light"`: for light backgrounds.
    Light,
    /// `"dark"`: for dark backgrounds.
    Dark,
}

/// An icon to display in a user interface (schema: `Icon`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// URI of the icon: `https:` or a `data:` URI.
    pub src: String,
    /// MIME type, if the URI does not make it obvious.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon with just a source URI.
    pub fn new(src: impl Into<String>) -> Self {
        Icon {
            src: src.into(),
            mime_type: None,
            sizes: None,
            theme: None,
        }
    }
}

/// The `icons` member that several definitions share (schema: `Icons`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icons {
    /// Icons, in any order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

/// The `name`/`title` pair that named definitions share (schema: `BaseMetadata`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaseMetadata {
    /// Programmatic name.
    pub name: String,
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

/// Name and version of an implementation (schema: `Implementation`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Website.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
}

impl Implementation {
    /// An implementation with just a name and version.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Implementation {
            name: name.into(),
            version: version.into(),
            title: None,
            description: None,
            website_url: None,
            icons: None,
        }
    }
}
