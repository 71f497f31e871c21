//! Tool parameters mirrored into `Mcp-Param-*` headers (spec:
//! docs/basic/transports/streamable-http.mdx "Custom Headers from Tool
//! Parameters", "Server Validation"; docs/server/tools.mdx "x-mcp-header").
//! Each test names the spec section whose rule it checks.

use ferromcp_testkit as common;

use common::{Http, mcp_headers, raw_http, request, server_with};
use ferromcp::protocol::Tool;
use ferromcp::server::{Server, ServerOptions, ToolOutput};
use serde_json::{Value, json};

fn sql_tool() -> Tool {
    Tool::new(
        "execute_sql",
        json!({
            "type": "object",
            "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "count": {"type": "integer", "x-mcp-header": "Count"},
                "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
                "opts": {"type": "object", "properties": {
                    "tenant": {"type": "string", "x-mcp-header": "Tenant"}
                }},
                "query": {"type": "string"}
            }
        }),
    )
}

fn header_server() -> Server {
    let server = server_with(ServerOptions::default());
    server
        .add_tool(sql_tool(), |_ctx, args: Value| async move {
            Ok(ToolOutput::text(args.to_string()))
        })
        .unwrap();
    server
        .add_tool(
            Tool::new(
                "plain",
                json!({"type": "object", "properties": {"region": {"type": "string"}}}),
            ),
            |_ctx, _args: Value| async { Ok(ToolOutput::text("plain")) },
        )
        .unwrap();
    server
}

/// Calls `execute_sql` with `arguments` and extra headers.
async fn call(http: &Http, arguments: Value, params: &[(&str, &str)]) -> common::RawResponse {
    let body = request(
        1,
        "tools/call",
        json!({"name": "execute_sql", "arguments": arguments}),
    );
    let extra: Vec<(&str, String)> = params.iter().map(|(n, v)| (*n, (*v).to_owned())).collect();
    http.post_with(&body, &extra).await
}

/// The arguments `execute_sql` received.
fn echoed(r: &common::RawResponse) -> Value {
    let text = r.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    serde_json::from_str(&text).unwrap()
}

#[track_caller]
fn assert_accepted(r: &common::RawResponse, why: &str) {
    assert_eq!(r.status, 200, "{why}: {}", r.body);
    assert!(r.json()["result"].is_object(), "{why}: {}", r.body);
}

#[track_caller]
fn assert_mismatch(r: &common::RawResponse, why: &str) {
    assert_eq!(r.status, 400, "{why}: {}", r.body);
    let body = r.json();
    assert_eq!(body["error"]["code"], -32020, "{why}: {body}");
    assert_eq!(body["id"], 1, "{why}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("Header mismatch"),
        "{why}: {body}"
    );
}

// docs/basic/transports/streamable-http.mdx "Server Behavior for Custom Headers": a header
// matching the body value is accepted (header names are case-insensitive)
#[tokio::test]
async fn streamable_http_mcp_param_headers_matching_the_body_are_accepted() {
    let http = Http::start(header_server()).await;
    let r = call(
        &http,
        json!({"region": "us-west1", "count": 42, "dry": true, "opts": {"tenant": "acme"}, "query": "SELECT 1"}),
        &[("Mcp-Param-Region", "us-west1"), ("mcp-param-count", "42"), ("MCP-PARAM-DRY-RUN", "true"), ("Mcp-Param-Tenant", "acme")],
    )
    .await;
    assert_accepted(&r, "all four");
    assert_eq!(echoed(&r)["opts"]["tenant"], "acme");
    // parameters not mirrored need no header; other tools need none at all
    assert_accepted(
        &call(&http, json!({"query": "SELECT 1"}), &[]).await,
        "no annotated params",
    );
    let plain = request(
        2,
        "tools/call",
        json!({"name": "plain", "arguments": {"region": "x"}}),
    );
    assert_eq!(http.post(&plain).await.status, 200);
}

// docs/basic/transports/streamable-http.mdx "Server Validation": a header value that differs
// from the body -> 400 + -32020
#[tokio::test]
async fn streamable_http_mcp_param_mismatch_is_header_mismatch() {
    let http = Http::start(header_server()).await;
    for (args, headers, why) in [
        (
            json!({"region": "us-west1"}),
            vec![("Mcp-Param-Region", "us-east1")],
            "other value",
        ),
        (
            json!({"region": "us-west1"}),
            vec![("Mcp-Param-Region", "US-WEST1")],
            "values are case-sensitive",
        ),
        (
            json!({"opts": {"tenant": "acme"}}),
            vec![("Mcp-Param-Tenant", "evil")],
            "nested value",
        ),
    ] {
        assert_mismatch(&call(&http, args, &headers).await, why);
    }
}

// docs/basic/transports/streamable-http.mdx "Server Behavior for Custom Headers" table: the
// client omits a header while the value is in the body -> the server MUST reject
#[tokio::test]
async fn streamable_http_mcp_param_missing_header_while_body_has_value_is_rejected() {
    let http = Http::start(header_server()).await;
    for (args, why) in [
        (json!({"region": "us-west1"}), "string"),
        (json!({"count": 0}), "integer zero is a value"),
        (json!({"dry": false}), "false is a value"),
        (json!({"region": ""}), "empty string is a value"),
        (json!({"opts": {"tenant": "acme"}}), "nested"),
    ] {
        assert_mismatch(&call(&http, args, &[]).await, why);
    }
    // one of two present is still a missing one
    assert_mismatch(
        &call(
            &http,
            json!({"region": "r", "count": 1}),
            &[("Mcp-Param-Region", "r")],
        )
        .await,
        "count header missing",
    );
}

// docs/basic/transports/streamable-http.mdx "Server Validation": a header whose body value is
// absent (or null: "Server MUST NOT expect the header") does not match the body
#[tokio::test]
async fn streamable_http_mcp_param_header_without_a_body_value_is_rejected() {
    let http = Http::start(header_server()).await;
    assert_mismatch(
        &call(&http, json!({}), &[("Mcp-Param-Region", "us-west1")]).await,
        "absent",
    );
    assert_mismatch(
        &call(
            &http,
            json!({"region": null}),
            &[("Mcp-Param-Region", "null")],
        )
        .await,
        "null value",
    );
    // null and absent values need no header (argument validation then decides)
    let r = call(&http, json!({"region": null}), &[]).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(r.json().get("error").is_none(), "{}", r.body);
    // headers for parameters the tool does not annotate are ignored
    assert_accepted(
        &call(
            &http,
            json!({}),
            &[("Mcp-Param-Query", "x"), ("Mcp-Param-Other", "y")],
        )
        .await,
        "unrecognised",
    );
}

// docs/basic/transports/streamable-http.mdx "Value Encoding": =?base64?…?= values are decoded
// before comparing; bad padding or characters are rejected
#[tokio::test]
async fn streamable_http_mcp_param_base64_sentinel_values_are_decoded_strictly() {
    let http = Http::start(header_server()).await;
    for (value, header) in [
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ("us-west1", "=?base64?dXMtd2VzdDE=?="), // plain values may be encoded too
    ] {
        let r = call(
            &http,
            json!({"region": value}),
            &[("Mcp-Param-Region", header)],
        )
        .await;
        assert_accepted(&r, header);
        assert_eq!(echoed(&r)["region"], value);
    }
    for (value, header, why) in [
        ("Hello", "=?base64?SGVsbG8?=", "missing padding"),
        ("Hello", "=?base64?SGVsbG8===?=", "too much padding"),
        ("Hello", "=?base64?SGV$bG8=?=", "invalid character"),
        ("Hello", "=?base64?SGVs bG8=?=", "inner space"),
        (
            "Hello",
            "=?BASE64?SGVsbG8=?=",
            "markers are case-sensitive: taken literally",
        ),
        ("\u{fffd}", "=?base64?/w==?=", "decodes to invalid UTF-8"),
        (
            " padded ",
            " padded ",
            "surrounding whitespace is not part of a plain value",
        ),
        (
            "=?base64?literal?=",
            "=?base64?literal?=",
            "sentinel-looking values must be encoded",
        ),
    ] {
        assert_mismatch(
            &call(
                &http,
                json!({"region": value}),
                &[("Mcp-Param-Region", header)],
            )
            .await,
            why,
        );
    }
}

// docs/basic/transports/streamable-http.mdx "Server Behavior for Custom Headers": a recognised
// header with invalid characters is rejected (non-ASCII must travel base64-encoded)
#[tokio::test]
async fn streamable_http_mcp_param_with_invalid_characters_is_rejected() {
    let http = Http::start(header_server()).await;
    let r = call(
        &http,
        json!({"region": "Jürgen"}),
        &[("Mcp-Param-Region", "Jürgen")],
    )
    .await;
    assert_mismatch(&r, "raw UTF-8 bytes in a header value");
}

// docs/basic/transports/streamable-http.mdx "Server Validation" note: integers compare
// numerically ("42.0" equals 42)
#[tokio::test]
async fn streamable_http_mcp_param_integers_compare_numerically() {
    let http = Http::start(header_server()).await;
    for (body, header) in [
        (json!(42), "42"),
        (json!(42), "42.0"),
        (json!(42), "4.2e1"),
        (json!(-7), "-7"),
        (json!(0), "0"),
    ] {
        assert_accepted(
            &call(
                &http,
                json!({"count": body}),
                &[("Mcp-Param-Count", header)],
            )
            .await,
            header,
        );
    }
    for (body, header) in [
        (json!(42), "43"),
        (json!(42), "forty-two"),
        (json!(42), ""),
        (json!(-7), "7"),
        (json!(42), "42abc"),
    ] {
        assert_mismatch(
            &call(
                &http,
                json!({"count": body}),
                &[("Mcp-Param-Count", header)],
            )
            .await,
            header,
        );
    }
}

// docs/basic/transports/streamable-http.mdx "Value Encoding": booleans are lowercase
// "true"/"false"
#[tokio::test]
async fn streamable_http_mcp_param_booleans_are_lowercase_true_or_false() {
    let http = Http::start(header_server()).await;
    assert_accepted(
        &call(
            &http,
            json!({"dry": true}),
            &[("Mcp-Param-Dry-Run", "true")],
        )
        .await,
        "true",
    );
    assert_accepted(
        &call(
            &http,
            json!({"dry": false}),
            &[("Mcp-Param-Dry-Run", "false")],
        )
        .await,
        "false",
    );
    for header in ["True", "TRUE", "1", "yes", "false"] {
        assert_mismatch(
            &call(
                &http,
                json!({"dry": true}),
                &[("Mcp-Param-Dry-Run", header)],
            )
            .await,
            header,
        );
    }
}

// docs/basic/transports/streamable-http.mdx "Standard Request Headers": Mcp-Name uses the same
// base64 sentinel decoding
#[tokio::test]
async fn streamable_http_mcp_name_base64_sentinel_is_decoded_strictly() {
    let http = Http::start(header_server()).await;
    let body = request(1, "tools/call", json!({"name": "plain", "arguments": {}})).to_string();
    let ok = raw_http(
        http.port,
        "POST",
        &mcp_headers("tools/call", Some("=?base64?cGxhaW4=?=")),
        &body,
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    let bad = raw_http(
        http.port,
        "POST",
        &mcp_headers("tools/call", Some("=?base64?cGxhaW4?=")),
        &body,
    )
    .await;
    assert_mismatch(&bad, "Mcp-Name with bad padding");
}

// docs/server/tools.mdx "x-mcp-header" constraints: a tool whose annotation is invalid is
// rejected when it is registered (clients would have to drop it from tools/list)
#[test]
fn tools_invalid_x_mcp_header_annotations_are_rejected_at_registration() {
    let server = Server::new("s", "1");
    let register = |properties: Value| {
        server.add_tool(
            Tool::new("t", json!({"type": "object", "properties": properties})),
            |_ctx, _args: Value| async { Ok(ToolOutput::text("")) },
        )
    };
    for (properties, why) in [
        (
            json!({"a": {"type": "string", "x-mcp-header": ""}}),
            "empty",
        ),
        (
            json!({"a": {"type": "string", "x-mcp-header": "Has Space"}}),
            "space",
        ),
        (
            json!({"a": {"type": "string", "x-mcp-header": "Has:Colon"}}),
            "colon",
        ),
        (
            json!({"a": {"type": "string", "x-mcp-header": "Région"}}),
            "non-ASCII",
        ),
        (
            json!({"a": {"type": "string", "x-mcp-header": "Line\nBreak"}}),
            "control character",
        ),
        (
            json!({"a": {"type": "string", "x-mcp-header": 5}}),
            "not a string",
        ),
        (
            json!({"a": {"type": "number", "x-mcp-header": "A"}}),
            "number type",
        ),
        (
            json!({"a": {"type": "object", "x-mcp-header": "A"}}),
            "object type",
        ),
        (
            json!({"a": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "A"}}),
            "array type",
        ),
        (
            json!({"a": {"type": "null", "x-mcp-header": "A"}}),
            "null type",
        ),
        (json!({"a": {"x-mcp-header": "A"}}), "no type"),
        (
            json!({"a": {"type": "string", "x-mcp-header": "Dup"}, "b": {"type": "string", "x-mcp-header": "dUP"}}),
            "duplicate, case-insensitively",
        ),
        (
            json!({"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}),
            "through items",
        ),
        (
            json!({"a": {"anyOf": [{"type": "string", "x-mcp-header": "A"}, {"type": "integer"}]}}),
            "through anyOf",
        ),
        (
            json!({"a": {"type": "object", "oneOf": [{"properties": {"b": {"type": "string", "x-mcp-header": "B"}}}]}}),
            "through oneOf",
        ),
        (
            json!({"a": {"type": "object", "if": {"properties": {"b": {"type": "string", "x-mcp-header": "B"}}}}}),
            "through if",
        ),
        (
            json!({"a": {"type": "object", "additionalProperties": {"type": "string", "x-mcp-header": "B"}}}),
            "through additionalProperties",
        ),
    ] {
        assert!(register(properties.clone()).is_err(), "{why}: {properties}");
    }
    // through $defs / $ref, and on the root itself
    let via_ref = json!({
        "type": "object",
        "$defs": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "properties": {"region": {"$ref": "#/$defs/region"}}
    });
    assert!(
        server
            .add_tool(Tool::new("t", via_ref), |_ctx, _args: Value| async {
                Ok(ToolOutput::text(""))
            })
            .is_err(),
        "$defs"
    );
    let on_root = json!({"type": "object", "x-mcp-header": "Root", "properties": {}});
    assert!(
        server
            .add_tool(Tool::new("t", on_root), |_ctx, _args: Value| async {
                Ok(ToolOutput::text(""))
            })
            .is_err(),
        "root"
    );
    assert!(server.tool_names().is_empty(), "nothing was registered");

    // valid: every primitive type, nested through properties only, any tchar
    register(json!({
        "a": {"type": "string", "x-mcp-header": "A!#$%&'*+-.^_`|~9"},
        "b": {"type": "integer", "x-mcp-header": "B"},
        "c": {"type": "boolean", "x-mcp-header": "C"},
        "d": {"type": "object", "properties": {"e": {"type": "object", "properties": {"f": {"type": "string", "x-mcp-header": "F"}}}}},
        "x-mcp-header": {"type": "string", "description": "a property that is merely named x-mcp-header"}
    }))
    .unwrap();
}

// docs/basic/transports/streamable-http.mdx "Server Validation": a mirrored header sent twice
// could be read as its first line by one party and as the comma-joined pair by another, so it
// is a mismatch (400 + -32020) like the comma-joined form, never validated by its first line.
#[tokio::test]
async fn streamable_http_repeated_mirrored_headers_are_header_mismatch() {
    let http = Http::start(header_server()).await;
    let body = request(
        1,
        "tools/call",
        json!({"name": "execute_sql", "arguments": {"region": "eu"}}),
    );
    let version = ferromcp::protocol::LATEST_PROTOCOL_VERSION;
    for (header, value) in [
        ("Mcp-Param-Region", "eu"),
        ("Mcp-Name", "execute_sql"),
        ("Mcp-Method", "tools/call"),
        ("MCP-Protocol-Version", version),
    ] {
        // the standard headers are already in the request once; the tool's
        // Mcp-Param-Region is needed once (twice when it is the one repeated)
        let extra = vec![
            (header, value.to_owned()),
            ("Mcp-Param-Region", "eu".to_owned()),
        ];
        let r = http.post_with(&body, &extra).await;
        assert_mismatch(&r, &format!("{header} sent twice"));
        assert!(r.body.contains("repeated"), "{header}: {}", r.body);
    }
    // the same request with each header once is accepted
    let r = http
        .post_with(&body, &[("Mcp-Param-Region", "eu".to_owned())])
        .await;
    assert_accepted(&r, "each header once");
}
