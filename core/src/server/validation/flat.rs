//! Native validation of flat object schemas: `type: "object"` with typed
//! scalar properties, `required` and `additionalProperties: false`, the
//! shape of most tool schemas.
//!
//! A schema is recognised only when every keyword in it is understood here
//! (annotations such as `description` are ignored, as JSON Schema does);
//! anything else, including `$schema`, nested objects or arrays with
//! `items`, is left to the full validator, so the results never differ from
//! what JSON Schema 2020-12 says. Messages follow the `jsonschema` crate's
//! wording so a model sees the same text either way.

use serde_json::{Map, Value};

/// JSON Schema's type names, as a property may declare one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Type {
    String,
    Integer,
    Number,
    Boolean,
    Null,
    Object,
    Array,
}

impl Type {
    fn parse(name: &str) -> Option<Type> {
        Some(match name {
            "string" => Type::String,
            "integer" => Type::Integer,
            "number" => Type::Number,
            "boolean" => Type::Boolean,
            "null" => Type::Null,
            "object" => Type::Object,
            "array" => Type::Array,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Type::String => "string",
            Type::Integer => "integer",
            Type::Number => "number",
            Type::Boolean => "boolean",
            Type::Null => "null",
            Type::Object => "object",
            Type::Array => "array",
        }
    }

    fn admits(self, value: &Value) -> bool {
        match (self, value) {
            (Type::String, Value::String(_)) => true,
            // JSON Schema integers are mathematical: 1.0 is one.
            (Type::Integer, Value::Number(n)) => {
                n.is_i64()
                    || n.is_u64()
                    || n.as_f64()
                        .is_some_and(|f| f.is_finite() && f.fract() == 0.0)
            }
            (Type::Number, Value::Number(_)) => true,
            (Type::Boolean, Value::Bool(_)) => true,
            (Type::Null, Value::Null) => true,
            (Type::Object, Value::Object(_)) => true,
            (Type::Array, Value::Array(_)) => true,
            _ => false,
        }
    }
}

/// Keywords that only annotate and never affect validity (2020-12 core,
/// meta-data and format-annotation vocabularies).
fn is_annotation(keyword: &str) -> bool {
    matches!(
        keyword,
        "title"
            | "description"
            | "default"
            | "examples"
            | "$comment"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
            | "format"
    ) || keyword.starts_with("x-")
}

#[derive(Debug)]
struct Property {
    name: String,
    kind: Option<Type>,
    allowed: Option<Vec<Value>>,
}

/// A recognised flat object schema.
#[derive(Debug)]
pub(crate) struct FlatSchema {
    properties: Vec<Property>,
    required: Vec<String>,
    closed: bool,
}

fn property(name: &str, schema: &Value) -> Option<Property> {
    let Value::Object(schema) = schema else {
        return None;
    };
    let mut property = Property {
        name: name.to_owned(),
        kind: None,
        allowed: None,
    };
    for (keyword, value) in schema {
        match keyword.as_str() {
            "type" => property.kind = Some(Type::parse(value.as_str()?)?),
            "enum" => property.allowed = Some(value.as_array()?.clone()),
            k if is_annotation(k) => {}
            _ => return None,
        }
    }
    Some(property)
}

impl FlatSchema {
    /// The flat reading of `schema`, or `None` when it uses anything else.
    pub(crate) fn recognise(schema: &Map<String, Value>) -> Option<FlatSchema> {
        let mut flat = FlatSchema {
            properties: Vec::new(),
            required: Vec::new(),
            closed: false,
        };
        let mut is_object = false;
        for (keyword, value) in schema {
            match keyword.as_str() {
                "type" => is_object = value.as_str()? == "object",
                "properties" => {
                    for (name, sub) in value.as_object()? {
                        flat.properties.push(property(name, sub)?);
                    }
                }
                "required" => {
                    for name in value.as_array()? {
                        flat.required.push(name.as_str()?.to_owned());
                    }
                }
                "additionalProperties" => flat.closed = !value.as_bool()?,
                k if is_annotation(k) => {}
                _ => return None,
            }
        }
        is_object.then_some(flat)
    }

    /// Up to `limit` problems with `instance`, worded as `jsonschema` words them.
    pub(crate) fn problems(&self, instance: &Value, limit: usize) -> Vec<String> {
        let mut problems = Vec::new();
        let Value::Object(fields) = instance else {
            problems.push(format!("(root): {instance} is not of type \"object\""));
            return problems;
        };
        for name in &self.required {
            if !fields.contains_key(name) {
                problems.push(format!(
                    "(root): {} is a required property",
                    Value::from(name.as_str())
                ));
            }
        }
        for (name, value) in fields {
            let Some(property) = self.properties.iter().find(|p| &p.name == name) else {
                if self.closed {
                    problems.push(format!(
                        "(root): Additional properties are not allowed ('{name}' was unexpected)"
                    ));
                }
                continue;
            };
            // Built only for a problem: the valid case allocates nothing.
            let location = || format!("/{}", name.replace('~', "~0").replace('/', "~1"));
            if let Some(kind) = property.kind
                && !kind.admits(value)
            {
                problems.push(format!(
                    "{}: {value} is not of type \"{}\"",
                    location(),
                    kind.name()
                ));
            }
            if let Some(allowed) = &property.allowed
                && !allowed.iter().any(|a| same_value(a, value))
            {
                problems.push(format!(
                    "{}: {value} is not one of {}",
                    location(),
                    Value::from(allowed.clone())
                ));
            }
        }
        problems.truncate(limit);
        problems
    }
}

/// JSON Schema equality: numbers compare by value (1 equals 1.0).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y,
            _ => x == y,
        },
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flat(schema: Value) -> Option<FlatSchema> {
        FlatSchema::recognise(schema.as_object().unwrap())
    }

    #[test]
    fn recognises_only_what_it_fully_understands() {
        assert!(flat(json!({"type": "object"})).is_some());
        assert!(flat(json!({"type": "object", "properties": {"a": {"type": "integer", "description": "x"}}, "required": ["a"], "additionalProperties": false})).is_some());
        for richer in [
            json!({"type": "object", "$schema": "https://json-schema.org/draft/2020-12/schema"}),
            json!({"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}}),
            json!({"type": "object", "properties": {"a": {"type": ["string", "null"]}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
            json!({"type": "object", "allOf": []}),
            json!({"properties": {}}),
        ] {
            assert!(flat(richer.clone()).is_none(), "{richer}");
        }
    }

    #[test]
    fn agrees_with_json_schema_semantics() {
        let schema = flat(json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "s": {"type": "string", "enum": ["a", "b"]}, "x": {"type": "number"}
        }, "required": ["n"], "additionalProperties": false}))
        .unwrap();
        assert!(schema.problems(&json!({"n": 1}), 5).is_empty());
        assert!(
            schema
                .problems(&json!({"n": 1.0, "x": 2, "s": "a"}), 5)
                .is_empty(),
            "1.0 is an integer"
        );
        assert_eq!(
            schema.problems(&json!({"n": "1", "s": "c", "extra": 1}), 5),
            [
                "(root): Additional properties are not allowed ('extra' was unexpected)",
                "/n: \"1\" is not of type \"integer\"",
                "/s: \"c\" is not one of [\"a\",\"b\"]",
            ]
        );
        assert_eq!(
            schema.problems(&json!({}), 5),
            ["(root): \"n\" is a required property"]
        );
        assert_eq!(
            schema.problems(&json!([1]), 5),
            ["(root): [1] is not of type \"object\""]
        );
    }
}
