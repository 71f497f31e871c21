//! JSON Schema validation of tool arguments and structured output.
//!
//! Schemas are compiled once, when a tool is registered. Network `$ref`s are
//! never fetched (the spec forbids dereferencing them by default): the
//! validator is built without any remote resolver, so such a schema fails to
//! compile and the tool is rejected at registration.
//!
//! Most tool schemas are flat objects of typed properties. Those are checked
//! by a small native validator ([`flat`]); anything richer goes to the
//! `jsonschema` crate. The split is about footprint, not speed: building the
//! first `jsonschema` validator loads its meta-schema machinery, several MiB
//! of resident memory a typical server never needs.

mod flat;

use serde_json::{Map, Value};

/// A compiled JSON Schema.
pub(crate) enum CompiledSchema {
    /// A flat object schema, checked natively.
    Flat(flat::FlatSchema),
    /// Any other schema.
    Full(Box<jsonschema::Validator>),
}

/// At most this many problems are reported, so a model gets a readable
/// message rather than a wall of text.
const MAX_REPORTED_ERRORS: usize = 5;

impl CompiledSchema {
    /// Compiles a schema (2020-12 unless `$schema` says otherwise).
    pub(crate) fn compile(schema: &Map<String, Value>) -> Result<CompiledSchema, String> {
        if let Some(flat) = flat::FlatSchema::recognise(schema) {
            return Ok(CompiledSchema::Flat(flat));
        }
        let schema = Value::Object(schema.clone());
        let validator = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .build(&schema)
            .map_err(|e| e.to_string())?;
        Ok(CompiledSchema::Full(Box::new(validator)))
    }

    /// Checks an instance, describing every problem (up to a few) with the
    /// JSON pointer of the offending value.
    pub(crate) fn check(&self, instance: &Value) -> Result<(), String> {
        let problems = match self {
            CompiledSchema::Flat(flat) => flat.problems(instance, MAX_REPORTED_ERRORS),
            CompiledSchema::Full(validator) => {
                // The common case allocates nothing; problems are only
                // collected for an instance already known to be invalid.
                if validator.is_valid(instance) {
                    return Ok(());
                }
                validator
                    .iter_errors(instance)
                    .take(MAX_REPORTED_ERRORS)
                    .map(|error| {
                        let path = error.instance_path().to_string();
                        let location = if path.is_empty() {
                            "(root)".to_string()
                        } else {
                            path
                        };
                        format!("{location}: {error}")
                    })
                    .collect()
            }
        };
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}
