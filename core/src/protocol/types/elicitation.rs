//! Elicitation: the `elicitation/create` input request (form or URL mode),
//! the restricted JSON Schema of its form fields, and the user's answer.

use std::collections::BTreeMap;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::markers::{ArrayType, BooleanType, FormMode, ObjectType, StringType, UrlMode};
use super::serde_util::{self, opt_number};

/// Parameters of `elicitation/create`, by `mode` (schema: `ElicitRequestParams`).
///
/// `mode` may be omitted in form mode, so a missing `mode` reads as a form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// `mode: "form"` or no mode.
    Form(ElicitRequestFormParams),
    /// `mode: "url"`.
    Url(ElicitRequestUrlParams),
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match value.get("mode") {
            None => serde_util::variant(value).map(ElicitRequestParams::Form),
            Some(mode) if mode == FormMode::VALUE => {
                serde_util::variant(value).map(ElicitRequestParams::Form)
            }
            Some(mode) if mode == UrlMode::VALUE => {
                serde_util::variant(value).map(ElicitRequestParams::Url)
            }
            Some(mode) => Err(serde_util::unknown_variant(
                "ElicitRequestParams",
                "mode",
                Some(mode.as_str().unwrap_or("(not a string)")),
                &[FormMode::VALUE, UrlMode::VALUE],
            )),
        }
    }
}

/// Form-mode elicitation: ask the user to fill in fields (schema: `ElicitRequestFormParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// `"form"`, or absent (form is the default mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What is being asked, for the user.
    pub message: String,
    /// The fields to fill in.
    pub requested_schema: ElicitRequestedSchema,
}

impl ElicitRequestFormParams {
    /// A form with an explicit `mode: "form"`.
    pub fn new(message: impl Into<String>, requested_schema: ElicitRequestedSchema) -> Self {
        ElicitRequestFormParams {
            mode: Some(FormMode),
            message: message.into(),
            requested_schema,
        }
    }
}

/// The flat object schema of an elicitation form (schema: `ElicitRequestFormParams.requestedSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestedSchema {
    /// The JSON Schema dialect, if given.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    #[serde(rename = "type")]
    pub kind: ObjectType,
    /// The fields, by name.
    pub properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    /// Names of the fields that must be filled in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

impl ElicitRequestedSchema {
    /// A form with the given fields, none of them required.
    pub fn new(properties: BTreeMap<String, PrimitiveSchemaDefinition>) -> Self {
        ElicitRequestedSchema {
            schema: None,
            kind: ObjectType,
            properties,
            required: None,
        }
    }
}

/// URL-mode elicitation: send the user to a URL (schema: `ElicitRequestURLParams`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestUrlParams {
    /// Always `"url"`.
    pub mode: UrlMode,
    /// What the user is asked to do, and why.
    pub message: String,
    /// The URL to open.
    pub url: String,
}

/// One field of an elicitation form (schema: `PrimitiveSchemaDefinition`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PrimitiveSchemaDefinition {
    /// `type: "string"` without `enum`/`oneOf`.
    String(StringSchema),
    /// `type: "number"` or `"integer"`.
    Number(NumberSchema),
    /// `type: "boolean"`.
    Boolean(BooleanSchema),
    /// `type: "string"` with `enum`.
    UntitledSingleSelectEnum(UntitledSingleSelectEnumSchema),
    /// `type: "string"` with `oneOf`.
    TitledSingleSelectEnum(TitledSingleSelectEnumSchema),
    /// `type: "array"` with `items.enum`.
    UntitledMultiSelectEnum(UntitledMultiSelectEnumSchema),
    /// `type: "array"` with `items.anyOf`.
    TitledMultiSelectEnum(TitledMultiSelectEnumSchema),
    /// `type: "string"` with `enum` and `enumNames` (deprecated).
    LegacyTitledEnum(LegacyTitledEnumSchema),
}

/// The shape of a field schema, read from its `type` and the members that
/// tell the enum flavours apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldShape {
    String,
    Number,
    Boolean,
    UntitledSingle,
    TitledSingle,
    UntitledMulti,
    TitledMulti,
    Legacy,
}

fn field_shape<E: de::Error>(value: &Value) -> Result<FieldShape, E> {
    let ty = serde_util::str_member(value, "type");
    Ok(match ty {
        Some("string") if value.get("oneOf").is_some() => FieldShape::TitledSingle,
        Some("string") if value.get("enum").is_some() && value.get("enumNames").is_some() => {
            FieldShape::Legacy
        }
        Some("string") if value.get("enum").is_some() => FieldShape::UntitledSingle,
        Some("string") => FieldShape::String,
        Some("number" | "integer") => FieldShape::Number,
        Some("boolean") => FieldShape::Boolean,
        Some("array") if value.pointer("/items/anyOf").is_some() => FieldShape::TitledMulti,
        Some("array") => FieldShape::UntitledMulti,
        other => {
            return Err(serde_util::unknown_variant(
                "PrimitiveSchemaDefinition",
                "type",
                other,
                &["string", "number", "integer", "boolean", "array"],
            ));
        }
    })
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use PrimitiveSchemaDefinition as P;
        let value = Value::deserialize(deserializer)?;
        match field_shape(&value)? {
            FieldShape::String => serde_util::variant(value).map(P::String),
            FieldShape::Number => serde_util::variant(value).map(P::Number),
            FieldShape::Boolean => serde_util::variant(value).map(P::Boolean),
            FieldShape::UntitledSingle => {
                serde_util::variant(value).map(P::UntitledSingleSelectEnum)
            }
            FieldShape::TitledSingle => serde_util::variant(value).map(P::TitledSingleSelectEnum),
            FieldShape::UntitledMulti => serde_util::variant(value).map(P::UntitledMultiSelectEnum),
            FieldShape::TitledMulti => serde_util::variant(value).map(P::TitledMultiSelectEnum),
            FieldShape::Legacy => serde_util::variant(value).map(P::LegacyTitledEnum),
        }
    }
}

impl From<EnumSchema> for PrimitiveSchemaDefinition {
    fn from(e: EnumSchema) -> Self {
        match e {
            EnumSchema::UntitledSingleSelect(s) => {
                PrimitiveSchemaDefinition::UntitledSingleSelectEnum(s)
            }
            EnumSchema::TitledSingleSelect(s) => {
                PrimitiveSchemaDefinition::TitledSingleSelectEnum(s)
            }
            EnumSchema::UntitledMultiSelect(s) => {
                PrimitiveSchemaDefinition::UntitledMultiSelectEnum(s)
            }
            EnumSchema::TitledMultiSelect(s) => PrimitiveSchemaDefinition::TitledMultiSelectEnum(s),
            EnumSchema::LegacyTitled(s) => PrimitiveSchemaDefinition::LegacyTitledEnum(s),
        }
    }
}

/// Format of a string field (schema: `StringSchema.format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// `"email"`.
    Email,
    /// `"uri"`.
    Uri,
    /// `"date"`.
    Date,
    /// `"date-time"`.
    DateTime,
}

/// A free-text field (schema: `StringSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Expected format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

impl Default for StringSchema {
    fn default() -> Self {
        StringSchema {
            kind: StringType,
            title: None,
            description: None,
            min_length: None,
            max_length: None,
            format: None,
            default: None,
        }
    }
}

/// Whether a number field takes any number or integers only (schema: `NumberSchema.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum NumberKind {
    /// `"number"`.
    Number,
    /// `"integer"`.
    Integer,
}

/// A numeric field (schema: `NumberSchema`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    #[serde(rename = "type")]
    pub kind: NumberKind,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum value.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_number")]
    pub minimum: Option<f64>,
    /// Maximum value.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_number")]
    pub maximum: Option<f64>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_number")]
    pub default: Option<f64>,
}

/// A yes/no field (schema: `BooleanSchema`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BooleanSchema {
    /// Always `"boolean"`.
    #[serde(rename = "type")]
    pub kind: BooleanType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// A value with a display label (schema: items of `TitledSingleSelectEnumSchema.oneOf`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// The label shown for it.
    pub title: String,
}

/// Pick one value from a list (schema: `UntitledSingleSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledSingleSelectEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values to choose from.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Pick one value from a list of labelled values (schema: `TitledSingleSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The labelled values to choose from.
    pub one_of: Vec<TitledEnumOption>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// The `items` of an untitled multi-select (schema: `UntitledMultiSelectEnumSchema.items`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledEnumItems {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// The values to choose from.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
}

/// Pick several values from a list (schema: `UntitledMultiSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// Always `"array"`.
    #[serde(rename = "type")]
    pub kind: ArrayType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest values to pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most values to pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The values to choose from.
    pub items: UntitledEnumItems,
    /// Values picked by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// The `items` of a titled multi-select (schema: `TitledMultiSelectEnumSchema.items`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// The labelled values to choose from.
    pub any_of: Vec<TitledEnumOption>,
}

/// Pick several values from a list of labelled values (schema: `TitledMultiSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// Always `"array"`.
    #[serde(rename = "type")]
    pub kind: ArrayType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest values to pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most values to pick.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The labelled values to choose from.
    pub items: TitledEnumItems,
    /// Values picked by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// Pick one value, with labels in `enumNames` (deprecated; schema: `LegacyTitledEnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The values to choose from.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Display names of the values, in the same order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// Any enumeration field (schema: `EnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum EnumSchema {
    /// Single select without labels.
    UntitledSingleSelect(UntitledSingleSelectEnumSchema),
    /// Single select with labels.
    TitledSingleSelect(TitledSingleSelectEnumSchema),
    /// Multi-select without labels.
    UntitledMultiSelect(UntitledMultiSelectEnumSchema),
    /// Multi-select with labels.
    TitledMultiSelect(TitledMultiSelectEnumSchema),
    /// Single select with `enumNames` (deprecated).
    LegacyTitled(LegacyTitledEnumSchema),
}

impl<'de> Deserialize<'de> for EnumSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        match field_shape(&value)? {
            FieldShape::UntitledSingle => {
                serde_util::variant(value).map(EnumSchema::UntitledSingleSelect)
            }
            FieldShape::TitledSingle => {
                serde_util::variant(value).map(EnumSchema::TitledSingleSelect)
            }
            FieldShape::UntitledMulti => {
                serde_util::variant(value).map(EnumSchema::UntitledMultiSelect)
            }
            FieldShape::TitledMulti => {
                serde_util::variant(value).map(EnumSchema::TitledMultiSelect)
            }
            FieldShape::Legacy => serde_util::variant(value).map(EnumSchema::LegacyTitled),
            FieldShape::String | FieldShape::Number | FieldShape::Boolean => Err(
                de::Error::custom("EnumSchema: expected `enum`, `oneOf` or an array of options"),
            ),
        }
    }
}

/// A single-select enumeration field (schema: `SingleSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum SingleSelectEnumSchema {
    /// Without labels (`enum`).
    Untitled(UntitledSingleSelectEnumSchema),
    /// With labels (`oneOf`).
    Titled(TitledSingleSelectEnumSchema),
}

impl<'de> Deserialize<'de> for SingleSelectEnumSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.get("oneOf").is_some() {
            serde_util::variant(value).map(SingleSelectEnumSchema::Titled)
        } else {
            serde_util::variant(value).map(SingleSelectEnumSchema::Untitled)
        }
    }
}

/// A multi-select enumeration field (schema: `MultiSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum MultiSelectEnumSchema {
    /// Without labels (`items.enum`).
    Untitled(UntitledMultiSelectEnumSchema),
    /// With labels (`items.anyOf`).
    Titled(TitledMultiSelectEnumSchema),
}

impl<'de> Deserialize<'de> for MultiSelectEnumSchema {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        if value.pointer("/items/anyOf").is_some() {
            serde_util::variant(value).map(MultiSelectEnumSchema::Titled)
        } else {
            serde_util::variant(value).map(MultiSelectEnumSchema::Untitled)
        }
    }
}

/// What the user did with an elicitation (schema: `ElicitResult.action`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// `"accept"`: submitted the form or confirmed.
    Accept,
    /// `"decline"`: explicitly declined.
    Decline,
    /// `"cancel"`: dismissed without choosing.
    Cancel,
}

/// One submitted form value (schema: `ElicitResult.content` values).
///
/// The normative TypeScript schema says `string | number | boolean |
/// string[]`; `schema.json` renders `number` as `"integer"`, but a form
/// field of `type: "number"` (`NumberSchema`, e.g. a default of `95.5`)
/// must be answerable, so any JSON number is accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ElicitValue {
    /// A string.
    String(String),
    /// A number (integer or not).
    Number(serde_json::Number),
    /// A boolean.
    Boolean(bool),
    /// Several strings (a multi-select).
    StringArray(Vec<String>),
}

/// The client's answer to `elicitation/create` (schema: `ElicitResult`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values, when the user accepted a form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<BTreeMap<String, ElicitValue>>,
}
