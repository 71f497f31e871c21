//! The `Mcp-*` request headers, written once for client and server (spec:
//! basic/transports/streamable-http.mdx, "Standard Headers" and "Custom
//! Headers from Tool Parameters"): the `x-mcp-header` grammar of a tool's
//! input schema, the value encoding (plain visible ASCII or
//! `=?base64?…?=`), and how a decoded header is compared with the body
//! value it mirrors.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};
use std::borrow::Cow;

use super::methods::Method;

/// `MCP-Protocol-Version`, as HTTP header names are compared: lower case.
pub const PROTOCOL_VERSION_HEADER: &str = "mcp-protocol-version";
/// `Mcp-Method`: the JSON-RPC method of the body.
pub const METHOD_HEADER: &str = "mcp-method";
/// `Mcp-Name`: the body param named by the method table (`Method::name_param`).
pub const NAME_HEADER: &str = "mcp-name";
/// `Mcp-Session-Id`: the 2025-11-25 session a request belongs to.
pub const SESSION_ID_HEADER: &str = "mcp-session-id";
/// The prefix of the `Mcp-Param-{Name}` headers mirroring tool arguments.
pub const PARAM_HEADER_PREFIX: &str = "mcp-param-";

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// Whether a value can travel as a plain header value: visible ASCII and
/// inner spaces/tabs only, no surrounding whitespace, and not mistakable for
/// the base64 sentinel.
fn is_plain_safe(value: &str) -> bool {
    let looks_encoded = value.starts_with(PREFIX) && value.ends_with(SUFFIX);
    !value.is_empty()
        && value
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) || b == b' ' || b == b'\t')
        && !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t'])
        && !looks_encoded
}

/// Encodes a value for an `Mcp-Name` or `Mcp-Param-*` header.
pub fn encode_header_value(value: &str) -> String {
    if is_plain_safe(value) || value.is_empty() {
        value.to_owned()
    } else {
        format!("{PREFIX}{}{SUFFIX}", STANDARD.encode(value.as_bytes()))
    }
}

/// `value` without the optional white space (spaces and tabs) around it.
/// By bytes: `trim_matches([' ', '\t'])` goes through the generic
/// character searcher, about 100 instructions per header per request.
pub(crate) fn trim_ows(value: &str) -> &str {
    let ows = |b: &u8| *b == b' ' || *b == b'\t';
    let bytes = value.as_bytes();
    let start = bytes.iter().position(|b| !ows(b)).unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !ows(b))
        .map_or(start, |last| last + 1);
    // Both ends are next to ASCII bytes, so on character boundaries.
    &value[start..end]
}

/// Decodes a received header value: the sentinel form is base64-decoded
/// (strictly: bad padding or characters are an error), anything else is
/// taken literally (borrowed, not copied). Surrounding whitespace is not
/// part of the value.
pub fn decode_header_value(raw: &str) -> Result<Cow<'_, str>, String> {
    let raw = trim_ows(raw);
    match raw
        .strip_prefix(PREFIX)
        .and_then(|r| r.strip_suffix(SUFFIX))
    {
        Some(encoded) => {
            let bytes = STANDARD
                .decode(encoded)
                .map_err(|e| format!("invalid base64 in header value: {e}"))?;
            String::from_utf8(bytes)
                .map(Cow::Owned)
                .map_err(|_| "base64 header value is not UTF-8".to_owned())
        }
        None => Ok(Cow::Borrowed(raw)),
    }
}

/// One tool parameter mirrored into an `Mcp-Param-{name}` header.
#[derive(Debug, Clone, PartialEq)]
pub struct HeaderParam {
    /// The `{name}` part of the header.
    pub name: String,
    /// Property path from the arguments object to the value.
    pub path: Vec<String>,
}

impl HeaderParam {
    /// The argument this parameter mirrors, if present and not null.
    pub fn argument<'a>(&self, arguments: Option<&'a Value>) -> Option<&'a Value> {
        self.path
            .iter()
            .try_fold(arguments, |v, key| Some(v?.get(key)))
            .flatten()
            .filter(|v| !v.is_null())
    }
}

/// HTTP token characters allowed in an `x-mcp-header` name.
fn is_header_token(name: &str) -> bool {
    !name.is_empty()
        && name.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'!' | b'#'
                        | b'$'
                        | b'%'
                        | b'&'
                        | b'\''
                        | b'*'
                        | b'+'
                        | b'-'
                        | b'.'
                        | b'^'
                        | b'_'
                        | b'`'
                        | b'|'
                        | b'~'
                )
        })
}

/// Finds `x-mcp-header` annotations in an input schema and checks them
/// (spec: server/tools.mdx, "x-mcp-header"): only on string, integer or
/// boolean properties reachable through `properties`, with header-safe,
/// case-insensitively unique names.
pub fn header_params(schema: &Map<String, Value>) -> Result<Vec<HeaderParam>, String> {
    reject_unreachable_annotations(schema, true, true)?;
    let mut found = Vec::new();
    collect_header_params(schema, &mut Vec::new(), &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for p in &found {
        let lower = p.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!("duplicate x-mcp-header name {:?}", p.name));
        }
        seen.push(lower);
    }
    Ok(found)
}

/// Keywords whose value is one subschema.
const SUBSCHEMA_KEYWORDS: &[&str] = &[
    "items",
    "additionalItems",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "additionalProperties",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
];
/// Keywords whose value maps names to subschemas.
const SUBSCHEMA_MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
/// Keywords whose value is an array of subschemas.
const SUBSCHEMA_ARRAY_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems", "items"];

/// An `x-mcp-header` anywhere but on a property reached from the root
/// through `properties` alone (not `items`, composition, conditionals, `$ref`
/// targets in `$defs`, nor the root itself) makes the tool invalid.
fn reject_unreachable_annotations(
    schema: &Map<String, Value>,
    reachable: bool,
    root: bool,
) -> Result<(), String> {
    if let Some(header) = schema.get("x-mcp-header")
        && (root || !reachable)
    {
        return Err(format!(
            "x-mcp-header {header} must be on a property reached from the schema root through \"properties\" only (not items, composition or conditional keywords, $ref or $defs)"
        ));
    }
    for (keyword, value) in schema {
        let keyword = keyword.as_str();
        let subschemas: Vec<(&Map<String, Value>, bool)> = match value {
            Value::Object(map) if SUBSCHEMA_MAP_KEYWORDS.contains(&keyword) => map
                .values()
                .filter_map(Value::as_object)
                .map(|sub| (sub, reachable && keyword == "properties"))
                .collect(),
            Value::Object(sub) if SUBSCHEMA_KEYWORDS.contains(&keyword) => vec![(sub, false)],
            Value::Array(items) if SUBSCHEMA_ARRAY_KEYWORDS.contains(&keyword) => items
                .iter()
                .filter_map(Value::as_object)
                .map(|sub| (sub, false))
                .collect(),
            _ => Vec::new(),
        };
        for (sub, sub_reachable) in subschemas {
            reject_unreachable_annotations(sub, sub_reachable, false)?;
        }
    }
    Ok(())
}

fn collect_header_params(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    found: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Ok(());
    };
    for (prop, sub) in properties {
        let Value::Object(sub) = sub else { continue };
        path.push(prop.clone());
        if let Some(header) = sub.get("x-mcp-header") {
            let Value::String(name) = header else {
                return Err(format!("x-mcp-header on {path:?} must be a string"));
            };
            if !is_header_token(name) {
                return Err(format!("x-mcp-header {name:?} is not a valid header name"));
            }
            match sub.get("type").and_then(Value::as_str) {
                Some("string") | Some("integer") | Some("boolean") => {}
                other => {
                    return Err(format!(
                        "x-mcp-header {name:?} is on a property of type {other:?}; only string, integer and boolean can be mirrored"
                    ));
                }
            }
            found.push(HeaderParam {
                name: name.clone(),
                path: path.clone(),
            });
        }
        collect_header_params(sub, path, found)?;
        path.pop();
    }
    Ok(())
}

/// The text a client mirrors into `Mcp-Param-{Name}` for an argument (before
/// encoding): strings as is, booleans and numbers as JSON writes them; null
/// and structured values are not mirrored.
pub fn param_header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Compares a decoded header with the argument it mirrors: strings as is,
/// numbers numerically (`42.0` equals `42`), booleans as `true`/`false`.
pub fn header_matches_value(header: &str, body: &Value) -> bool {
    match body {
        Value::String(s) => s == header,
        Value::Bool(b) => header == if *b { "true" } else { "false" },
        Value::Number(n) => match (header.parse::<f64>(), n.as_f64()) {
            (Ok(h), Some(b)) => h == b,
            _ => false,
        },
        _ => false,
    }
}

/// The body value `Mcp-Name` mirrors for a request (`name` of `tools/call`
/// and `prompts/get`, `uri` of `resources/read`), not yet encoded: `None`
/// when the method has no `Mcp-Name` or the param is not a string.
pub fn mcp_name_value(method: Method, params: &Map<String, Value>) -> Option<&str> {
    params.get(method.name_param()?).and_then(Value::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_examples() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn decoding_round_trips_and_is_strict() {
        for v in [
            "us-west1",
            "Hello, 世界",
            " padded ",
            "line1\nline2",
            "=?base64?literal?=",
        ] {
            assert_eq!(
                decode_header_value(&encode_header_value(v)).as_deref(),
                Ok(v)
            );
        }
        assert!(
            decode_header_value("=?base64?SGVsbG8?=").is_err(),
            "missing padding"
        );
        assert!(
            decode_header_value("=?base64?SGV$bG8=?=").is_err(),
            "bad character"
        );
        assert_eq!(decode_header_value("  plain  ").as_deref(), Ok("plain"));
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn finds_nested_header_params() {
        let schema = obj(json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "opts": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
            "plain": {"type": "string"}
        }}));
        let found = header_params(&schema).unwrap();
        assert_eq!(found.len(), 2);
        let nested = found.iter().find(|p| p.name == "N").unwrap();
        assert_eq!(nested.path, ["opts", "n"]);
    }

    #[test]
    fn rejects_invalid_header_annotations() {
        for bad in [
            json!({"a": {"type": "string", "x-mcp-header": ""}}),
            json!({"a": {"type": "string", "x-mcp-header": "has space"}}),
            json!({"a": {"type": "object", "x-mcp-header": "A"}}),
            json!({"a": {"type": "number", "x-mcp-header": "A"}}),
            json!({"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}),
            json!({"a": {"type": "string", "x-mcp-header": "Ü"}}),
        ] {
            let schema = obj(json!({"type": "object", "properties": bad}));
            assert!(header_params(&schema).is_err(), "{schema:?}");
        }
    }

    #[test]
    fn param_text_and_comparison() {
        assert_eq!(param_header_text(&json!("a b")).as_deref(), Some("a b"));
        assert_eq!(param_header_text(&json!(false)).as_deref(), Some("false"));
        assert_eq!(param_header_text(&json!(42)).as_deref(), Some("42"));
        assert_eq!(param_header_text(&json!(null)), None);
        assert_eq!(param_header_text(&json!({"a": 1})), None);
        assert!(header_matches_value("42.0", &json!(42)));
        assert!(!header_matches_value("43", &json!(42)));
        assert!(header_matches_value("true", &json!(true)));
        assert!(!header_matches_value("True", &json!(true)));
        assert!(header_matches_value("x", &json!("x")));
        assert!(!header_matches_value("x", &json!(null)));
    }

    #[test]
    fn argument_lookup_skips_null_and_missing() {
        let p = HeaderParam {
            name: "N".into(),
            path: vec!["opts".into(), "n".into()],
        };
        assert_eq!(
            p.argument(Some(&json!({"opts": {"n": 3}}))),
            Some(&json!(3))
        );
        assert_eq!(p.argument(Some(&json!({"opts": {"n": null}}))), None);
        assert_eq!(p.argument(Some(&json!({"opts": 1}))), None);
        assert_eq!(p.argument(None), None);
    }

    #[test]
    fn mcp_name_follows_the_method_table() {
        let params = obj(json!({"name": "echo", "uri": "file:///a"}));
        assert_eq!(mcp_name_value(Method::ToolsCall, &params), Some("echo"));
        assert_eq!(mcp_name_value(Method::PromptsGet, &params), Some("echo"));
        assert_eq!(
            mcp_name_value(Method::ResourcesRead, &params),
            Some("file:///a")
        );
        assert_eq!(mcp_name_value(Method::ToolsList, &params), None);
        assert_eq!(mcp_name_value(Method::ToolsCall, &Map::new()), None);
    }
}
