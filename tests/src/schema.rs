//! Validation of JSON values against the specification's `schema.json`
//! (revision 2026-07-28, from `tests/fixtures/spec/`).
//!
//! [`SchemaValidator::validate_def`] checks a value against one `$defs`
//! definition; [`SchemaValidator::validate_server_message`] picks the
//! definition a message a server emitted must satisfy. Each definition is
//! compiled on first use, as the root schema
//! `{"$schema": <dialect>, "$ref": "#/$defs/<Name>", "$defs": <all>}`, with no
//! network or file resolution.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::{Map, Value};

/// The schema text, embedded so tests need no working directory.
const SCHEMA_JSON: &str = include_str!("../fixtures/spec/2026-07-28/schema.json");

/// Result definitions by the method of the request they answer.
const RESULT_RESPONSES: &[(&str, &str)] = &[
    ("server/discover", "DiscoverResultResponse"),
    ("resources/list", "ListResourcesResultResponse"),
    (
        "resources/templates/list",
        "ListResourceTemplatesResultResponse",
    ),
    ("resources/read", "ReadResourceResultResponse"),
    ("subscriptions/listen", "SubscriptionsListenResultResponse"),
    ("prompts/list", "ListPromptsResultResponse"),
    ("prompts/get", "GetPromptResultResponse"),
    ("tools/list", "ListToolsResultResponse"),
    ("tools/call", "CallToolResultResponse"),
    ("completion/complete", "CompleteResultResponse"),
];

/// The complete-result definition of the methods whose response is
/// `InputRequiredResult | <Result>`. `InputRequiredResult` requires nothing
/// but `resultType`, so the union alone would accept a broken complete
/// result; such results are also checked against the complete definition.
const COMPLETE_RESULTS: &[(&str, &str)] = &[
    ("resources/read", "ReadResourceResult"),
    ("prompts/get", "GetPromptResult"),
    ("tools/call", "CallToolResult"),
];

/// Notification definitions by method.
const NOTIFICATIONS: &[(&str, &str)] = &[
    ("notifications/cancelled", "CancelledNotification"),
    ("notifications/progress", "ProgressNotification"),
    ("notifications/message", "LoggingMessageNotification"),
    (
        "notifications/resources/list_changed",
        "ResourceListChangedNotification",
    ),
    (
        "notifications/resources/updated",
        "ResourceUpdatedNotification",
    ),
    (
        "notifications/prompts/list_changed",
        "PromptListChangedNotification",
    ),
    (
        "notifications/tools/list_changed",
        "ToolListChangedNotification",
    ),
    (
        "notifications/subscriptions/acknowledged",
        "SubscriptionsAcknowledgedNotification",
    ),
];

/// Definitions of whole error responses, by error code (their `data` has a
/// fixed shape).
const ERROR_RESPONSES: &[(i64, &str)] = &[
    (-32020, "HeaderMismatchError"),
    (-32021, "MissingRequiredClientCapabilityError"),
    (-32022, "UnsupportedProtocolVersionError"),
];

/// Definitions of error objects, by error code.
const ERROR_OBJECTS: &[(i64, &str)] = &[
    (-32700, "ParseError"),
    (-32600, "InvalidRequestError"),
    (-32601, "MethodNotFoundError"),
    (-32602, "InvalidParamsError"),
    (-32603, "InternalError"),
];

fn lookup(table: &[(&str, &'static str)], key: &str) -> Option<&'static str> {
    table.iter().find(|(k, _)| *k == key).map(|(_, d)| *d)
}

fn lookup_code(table: &[(i64, &'static str)], code: i64) -> Option<&'static str> {
    table.iter().find(|(c, _)| *c == code).map(|(_, d)| *d)
}

/// Validates JSON values against the definitions of the 2026-07-28 schema.
pub struct SchemaValidator {
    /// `$schema` of the fixture (the JSON Schema dialect).
    dialect: Value,
    /// All `$defs`, shared by every compiled root.
    defs: Map<String, Value>,
    /// One lazily compiled validator per definition.
    compiled: BTreeMap<String, OnceLock<Result<Validator, String>>>,
}

impl SchemaValidator {
    /// Loads tests/fixtures/spec/2026-07-28/schema.json (embedded at compile time).
    pub fn load() -> SchemaValidator {
        let schema: Value =
            serde_json::from_str(SCHEMA_JSON).expect("the schema fixture is valid JSON");
        let dialect = schema
            .get("$schema")
            .cloned()
            .expect("the schema fixture names its dialect");
        let defs = schema
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .expect("the schema fixture has $defs");
        let compiled = defs
            .keys()
            .map(|name| (name.clone(), OnceLock::new()))
            .collect();
        SchemaValidator {
            dialect,
            defs,
            compiled,
        }
    }

    /// The names of all definitions, sorted.
    pub fn definitions(&self) -> impl Iterator<Item = &str> {
        self.compiled.keys().map(String::as_str)
    }

    /// Validates one JSON-RPC message that a SERVER emitted. `answered_method` is the method
    /// of the request it answers (None for notifications and for errors).
    ///
    /// - A result is checked against the `<X>ResultResponse` of `answered_method`
    ///   (or `JSONRPCResultResponse` for another or no method); when the
    ///   response may be `input_required` but the result is complete, the
    ///   result is also checked against the complete result definition.
    /// - A result with `resultType: "input_required"` is checked as a
    ///   `JSONRPCResultResponse` whose result is an `InputRequiredResult`
    ///   carrying `inputRequests` or `requestState`.
    /// - An error is checked as a `JSONRPCErrorResponse`, and against the
    ///   definition of its code where the schema has one.
    /// - A notification is checked against the `*Notification` of its method,
    ///   or `JSONRPCNotification` for an unknown method.
    /// - A request is an error: a 2026-07-28 server sends none.
    pub fn validate_server_message(
        &self,
        message: &Value,
        answered_method: Option<&str>,
    ) -> Result<(), String> {
        let Some(obj) = message.as_object() else {
            return Err(format!(
                "a JSON-RPC message must be an object, got {message}"
            ));
        };
        if obj.contains_key("method") {
            if obj.contains_key("id") {
                return Err(format!(
                    "servers send no requests in revision 2026-07-28, got {message}"
                ));
            }
            let method = obj
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let def = lookup(NOTIFICATIONS, method).unwrap_or("JSONRPCNotification");
            return self.validate_def(def, message);
        }
        if let Some(error) = obj.get("error") {
            self.validate_def("JSONRPCErrorResponse", message)?;
            let code = error
                .get("code")
                .and_then(Value::as_i64)
                .unwrap_or_default();
            if let Some(def) = lookup_code(ERROR_RESPONSES, code) {
                self.validate_def(def, message)?;
            }
            if let Some(def) = lookup_code(ERROR_OBJECTS, code) {
                self.validate_def(def, error)?;
            }
            return Ok(());
        }
        if let Some(result) = obj.get("result") {
            if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
                self.validate_def("JSONRPCResultResponse", message)?;
                self.validate_def("InputRequiredResult", result)?;
                if result.get("inputRequests").is_none() && result.get("requestState").is_none() {
                    return Err(
                        "InputRequiredResult: at least one of inputRequests and requestState \
                         must be present"
                            .to_owned(),
                    );
                }
                return Ok(());
            }
            let Some(method) = answered_method else {
                return self.validate_def("JSONRPCResultResponse", message);
            };
            let def = lookup(RESULT_RESPONSES, method).unwrap_or("JSONRPCResultResponse");
            self.validate_def(def, message)?;
            if let Some(complete) = lookup(COMPLETE_RESULTS, method) {
                self.validate_def(complete, result)?;
            }
            return Ok(());
        }
        Err(format!(
            "a JSON-RPC message needs \"method\", \"result\" or \"error\", got {message}"
        ))
    }

    /// Validates any value against one named $defs definition.
    pub fn validate_def(&self, def: &str, value: &Value) -> Result<(), String> {
        let Some(cell) = self.compiled.get(def) else {
            return Err(format!("schema.json has no definition {def:?}"));
        };
        let validator = cell
            .get_or_init(|| self.compile(def))
            .as_ref()
            .map_err(Clone::clone)?;
        let errors: Vec<String> = validator
            .iter_errors(value)
            .map(|e| {
                let at = e.instance_path().to_string();
                let at = if at.is_empty() { "/".to_owned() } else { at };
                format!("{at}: {e}")
            })
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(format!("not a valid {def}: {}", errors.join("; ")))
        }
    }

    /// Compiles the root schema that refers to definition `def`.
    fn compile(&self, def: &str) -> Result<Validator, String> {
        let mut root = Map::new();
        root.insert("$schema".to_owned(), self.dialect.clone());
        root.insert("$ref".to_owned(), Value::from(format!("#/$defs/{def}")));
        root.insert("$defs".to_owned(), Value::Object(self.defs.clone()));
        jsonschema::validator_for(&Value::Object(root))
            .map_err(|e| format!("cannot compile {def}: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    fn examples_dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/spec/2026-07-28/examples")
    }

    fn example(path: &str) -> Value {
        let path = examples_dir().join(path);
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn every_example_is_valid_for_its_definition() {
        let v = SchemaValidator::load();
        let mut failures = Vec::new();
        let mut checked = 0;
        for folder in std::fs::read_dir(examples_dir()).unwrap() {
            let folder = folder.unwrap().path();
            let def = folder.file_name().unwrap().to_str().unwrap().to_owned();
            for file in std::fs::read_dir(&folder).unwrap() {
                let file = file.unwrap().path();
                let value: Value =
                    serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
                checked += 1;
                if let Err(e) = v.validate_def(&def, &value) {
                    failures.push(format!("{}: {e}", file.display()));
                }
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        assert!(checked >= 129, "only {checked} examples found");
        assert_eq!(v.definitions().count(), 155);
    }

    #[test]
    fn accepts_server_messages_of_each_kind() {
        let v = SchemaValidator::load();
        let ok = |msg: &Value, method: Option<&str>| {
            v.validate_server_message(msg, method)
                .unwrap_or_else(|e| panic!("{e}"))
        };
        ok(
            &example("CallToolResultResponse/call-tool-result-response.json"),
            Some("tools/call"),
        );
        ok(
            &example("ListToolsResultResponse/list-tools-result-response.json"),
            Some("tools/list"),
        );
        ok(
            &example("DiscoverResultResponse/discover-result-response.json"),
            Some("server/discover"),
        );
        ok(&example("ProgressNotification/progress-message.json"), None);
        ok(
            &example("ToolListChangedNotification/tools-list-changed.json"),
            None,
        );
        ok(
            &example("UnsupportedProtocolVersionError/unsupported-version.json"),
            None,
        );
        ok(
            &json!({"jsonrpc": "2.0", "method": "notifications/vendor/thing"}),
            None,
        );
        ok(
            &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "Unknown tool: x"}}),
            None,
        );
        let mut input_required =
            example("InputRequiredResult/input-required-result-with-request-state-only.json");
        input_required = json!({"jsonrpc": "2.0", "id": 3, "result": input_required});
        ok(&input_required, Some("tools/call"));
    }

    #[test]
    fn rejects_broken_messages() {
        let v = SchemaValidator::load();
        let bad = |msg: Value, method: Option<&str>| {
            let outcome = v.validate_server_message(&msg, method);
            assert!(outcome.is_err(), "accepted {msg}");
            outcome.unwrap_err()
        };
        let mut missing_result = example("CallToolResultResponse/call-tool-result-response.json");
        missing_result.as_object_mut().unwrap().remove("result");
        bad(missing_result, Some("tools/call"));
        // A complete result without `content` would pass as an InputRequiredResult alone.
        let why = bad(
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}}),
            Some("tools/call"),
        );
        assert!(why.contains("CallToolResult"), "{why}");
        bad(
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete", "tools": []}}),
            Some("tools/list"),
        );
        bad(
            json!({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "input_required"}}),
            Some("tools/call"),
        );
        bad(
            json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}}),
            None,
        );
        bad(
            json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32022, "message": "Unsupported protocol version"}}),
            None,
        );
        bad(
            json!({"jsonrpc": "2.0", "id": 1, "method": "roots/list"}),
            None,
        );
        bad(json!({"jsonrpc": "2.0", "id": 1}), None);
        assert!(v.validate_def("NoSuchDefinition", &json!({})).is_err());
    }
}
