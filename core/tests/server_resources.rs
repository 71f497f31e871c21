//! Resources (spec: docs/server/resources.mdx) with pagination and caching
//! (docs/server/utilities/{pagination,caching}.mdx), over stdio and HTTP.
//! Each test names the spec section whose rule it checks.

use ferromcp_testkit as common;

use common::{Http, Stdio, mcp_headers, raw_http, request, server_with};
use ferromcp::McpError;
use ferromcp::protocol::{CacheScope, Resource, ResourceTemplate};
use ferromcp::server::{
    CacheHint, Caching, HandlerError, ResourceOutput, ResourceRequest, Server, ServerOptions,
};
use serde_json::{Value, json};

/// Bytes that are not valid UTF-8, so only base64 can carry them.
const BINARY: &[u8] = &[0x00, 0x01, 0xfe, 0xff, 0x80, b'\n', b'x'];

fn resource(uri: &str, name: &str, mime: Option<&str>) -> Resource {
    let mut r = Resource::new(uri, name);
    r.mime_type = mime.map(str::to_owned);
    r.description = Some(format!("the {name} resource"));
    r
}

fn template(uri_template: &str, name: &str) -> ResourceTemplate {
    let mut t = ResourceTemplate::new(uri_template, name);
    t.mime_type = Some("application/json".into());
    t
}

/// Every template handler answers with the URI and variables it was given.
async fn echo_variables(
    _ctx: ferromcp::server::RequestContext,
    req: ResourceRequest,
) -> Result<ResourceOutput, HandlerError> {
    Ok(ResourceOutput::Text(
        json!({"uri": req.uri, "variables": req.variables}).to_string(),
    ))
}

fn resource_server(options: ServerOptions) -> Server {
    let server = server_with(options);
    server
        .add_resource(
            resource("test://text", "text", Some("text/plain")),
            |_ctx, _req: ResourceRequest| async {
                Ok(ResourceOutput::Text("hello, 世界\n".into()))
            },
        )
        .unwrap();
    server
        .add_resource(
            resource("test://binary", "binary", Some("application/octet-stream")),
            |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Blob(BINARY.to_vec())) },
        )
        .unwrap();
    server
        .add_resource(resource("test://dir", "dir", Some("inode/directory")), |_ctx, _req: ResourceRequest| async {
            Ok(ResourceOutput::Contents(vec![
                json!({"uri": "test://dir/a.txt", "mimeType": "text/plain", "text": "A"}),
                json!({"uri": "test://dir/b.bin", "mimeType": "application/octet-stream", "blob": "AAE="}),
            ]))
        })
        .unwrap();
    server
        .add_resource(
            resource("test://no-mime", "no-mime", None),
            |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text("plain".into())) },
        )
        .unwrap();
    server
        .add_resource(
            resource("test://fails", "fails", None),
            |_ctx, _req: ResourceRequest| async {
                Err::<ResourceOutput, _>(HandlerError::tool("disk on fire"))
            },
        )
        .unwrap();
    server
        .add_resource(
            resource("test://forbidden", "forbidden", None),
            |_ctx, _req: ResourceRequest| async {
                Err::<ResourceOutput, _>(HandlerError::Protocol(
                    McpError::new(-32001, "not for you").with_data(json!({"why": "policy"})),
                ))
            },
        )
        .unwrap();
    server
        .add_resource(
            resource("test://panics", "panics", None),
            |_ctx, _req: ResourceRequest| async {
                if true {
                    panic!("resource handler exploded");
                }
                Ok(ResourceOutput::Text(String::new()))
            },
        )
        .unwrap();
    server
        .add_resource_template(
            template("test://users/{id}/profile", "user profile"),
            echo_variables,
        )
        .unwrap();
    server
        .add_resource_template(template("file:///{+path}", "project files"), echo_variables)
        .unwrap();
    server
        .add_resource_template(
            template("search://items{?q,lang}", "search"),
            echo_variables,
        )
        .unwrap();
    server
        .add_resource_template(
            template("repo://{owner}/{name}{/file}", "repo file"),
            echo_variables,
        )
        .unwrap();
    // a template that also matches the fixed resource test://text
    server
        .add_resource_template(
            template("test://{kind}", "any test resource"),
            echo_variables,
        )
        .unwrap();
    server
}

fn default_server() -> Server {
    resource_server(ServerOptions::default())
}

async fn read(io: &mut Stdio, id: i64, uri: &str) -> Value {
    io.call(request(id, "resources/read", json!({"uri": uri})))
        .await
}

/// The variables a template handler received for `uri`.
async fn variables_for(io: &mut Stdio, uri: &str) -> Value {
    let reply = read(io, 1, uri).await;
    let text = reply["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{uri}: {reply}"));
    let echoed: Value = serde_json::from_str(text).unwrap();
    assert_eq!(echoed["uri"], uri);
    echoed["variables"].clone()
}

/// Pages through a list method, returning every item and every page.
async fn list_all(io: &mut Stdio, method: &str, field: &str) -> (Vec<Value>, Vec<Value>) {
    let mut items = Vec::new();
    let mut pages = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 1.. {
        assert!(id < 50, "pagination does not terminate");
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let reply = io.call(request(id, method, params)).await;
        let result = reply["result"].clone();
        assert!(result.is_object(), "{reply}");
        items.extend(
            result[field]
                .as_array()
                .unwrap_or_else(|| panic!("{reply}"))
                .iter()
                .cloned(),
        );
        cursor = result["nextCursor"].as_str().map(str::to_owned);
        pages.push(result);
        if cursor.is_none() {
            break;
        }
    }
    (items, pages)
}

// docs/server/resources.mdx "Listing Resources" + utilities/caching.mdx "Cacheable Results"
#[tokio::test]
async fn resources_list_returns_every_resource_with_cache_hints() {
    let options = ServerOptions {
        caching: Caching {
            resources: CacheHint {
                ttl_ms: 300_000,
                scope: CacheScope::Public,
            },
            ..Caching::default()
        },
        ..ServerOptions::default()
    };
    let mut io = Stdio::start(resource_server(options));
    let reply = io.call(request(1, "resources/list", json!({}))).await;
    let result = &reply["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(result["ttlMs"], 300_000);
    assert_eq!(result["cacheScope"], "public");
    assert!(
        result.get("nextCursor").is_none(),
        "one page only: {result}"
    );
    let resources = result["resources"].as_array().unwrap();
    let uris: Vec<&str> = resources
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "test://text",
            "test://binary",
            "test://dir",
            "test://no-mime",
            "test://fails",
            "test://forbidden",
            "test://panics"
        ],
        "registration order"
    );
    assert_eq!(
        resources[0],
        json!({"uri": "test://text", "name": "text", "description": "the text resource", "mimeType": "text/plain"})
    );
    assert!(
        resources[3].get("mimeType").is_none(),
        "absent fields are omitted, not null"
    );
}

// docs/server/utilities/caching.mdx "Time-to-Live (TTL) Field": ttlMs >= 0 always present
#[tokio::test]
async fn caching_default_hints_are_present_and_immediately_stale() {
    let mut io = Stdio::start(default_server());
    for (id, method) in [(1, "resources/list"), (2, "resources/templates/list")] {
        let reply = io.call(request(id, method, json!({}))).await;
        assert_eq!(reply["result"]["ttlMs"], 0, "{method}");
        assert_eq!(reply["result"]["cacheScope"], "public", "{method}");
    }
    let reply = read(&mut io, 3, "test://text").await;
    assert_eq!(reply["result"]["ttlMs"], 0);
    assert!(reply["result"]["cacheScope"].is_string());
}

// docs/server/utilities/pagination.mdx "Response Format" + caching.mdx "Interaction with Pagination"
#[tokio::test]
async fn pagination_resources_list_pages_through_everything_with_one_cache_scope() {
    let options = ServerOptions {
        page_size: 2,
        caching: Caching {
            resources: CacheHint {
                ttl_ms: 5_000,
                scope: CacheScope::Private,
            },
            ..Caching::default()
        },
        ..ServerOptions::default()
    };
    let mut io = Stdio::start(resource_server(options));
    let (items, pages) = list_all(&mut io, "resources/list", "resources").await;
    assert_eq!(pages.len(), 4, "7 resources in pages of 2");
    assert!(
        pages[..3]
            .iter()
            .all(|p| p["resources"].as_array().unwrap().len() == 2)
    );
    assert_eq!(items.len(), 7);
    let mut uris: Vec<&str> = items.iter().map(|r| r["uri"].as_str().unwrap()).collect();
    uris.dedup();
    assert_eq!(uris.len(), 7, "no duplicates or gaps");
    for page in &pages {
        assert_eq!(
            page["cacheScope"], "private",
            "every page has the same scope"
        );
        assert_eq!(page["ttlMs"], 5_000, "every page carries its own TTL");
    }
}

// docs/server/utilities/pagination.mdx "Error Handling": invalid cursors -> -32602
#[tokio::test]
async fn pagination_invalid_cursor_is_invalid_params() {
    let mut io = Stdio::start(resource_server(ServerOptions {
        page_size: 2,
        ..ServerOptions::default()
    }));
    let first = io.call(request(1, "resources/list", json!({}))).await;
    let cursor = first["result"]["nextCursor"].as_str().unwrap().to_owned();
    // a cursor is bound to the list it came from
    let templates_cursor = io
        .call(request(2, "resources/templates/list", json!({})))
        .await["result"]["nextCursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut altered = cursor.clone();
    altered.insert(0, 'A');
    for (bad, why) in [
        (json!("not-a-cursor"), "garbage"),
        (json!(""), "empty string"),
        (json!(altered), "altered"),
        (json!(templates_cursor), "cursor of another list"),
        (json!(7), "not a string"),
    ] {
        let reply = io
            .call(request(3, "resources/list", json!({"cursor": bad})))
            .await;
        assert_eq!(reply["error"]["code"], -32602, "{why}: {reply}");
        assert_eq!(reply["id"], 3);
    }
    // the genuine cursor still works
    let second = io
        .call(request(4, "resources/list", json!({"cursor": cursor})))
        .await;
    assert_eq!(second["result"]["resources"][0]["uri"], "test://dir");
}

// docs/server/resources.mdx "Reading Resources" / "Text Content" + caching.mdx
#[tokio::test]
async fn resources_read_text_carries_uri_mime_type_text_and_cache_hints() {
    let options = ServerOptions {
        caching: Caching {
            resource_read: CacheHint {
                ttl_ms: 60_000,
                scope: CacheScope::Private,
            },
            ..Caching::default()
        },
        ..ServerOptions::default()
    };
    let mut io = Stdio::start(resource_server(options));
    let reply = read(&mut io, 7, "test://text").await;
    assert_eq!(reply["id"], 7);
    let result = &reply["result"];
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["contents"],
        json!([{"uri": "test://text", "mimeType": "text/plain", "text": "hello, 世界\n"}])
    );
    assert_eq!(result["ttlMs"], 60_000);
    assert_eq!(result["cacheScope"], "private");
    let reply = read(&mut io, 8, "test://no-mime").await;
    assert_eq!(
        reply["result"]["contents"],
        json!([{"uri": "test://no-mime", "text": "plain"}])
    );
}

// docs/server/resources.mdx "Binary Content": blob is base64; "Security Considerations" 3
#[tokio::test]
async fn resources_read_blob_is_base64_encoded() {
    use base64::Engine;
    let mut io = Stdio::start(default_server());
    let reply = read(&mut io, 1, "test://binary").await;
    let item = &reply["result"]["contents"][0];
    assert_eq!(item["uri"], "test://binary");
    assert_eq!(item["mimeType"], "application/octet-stream");
    assert!(
        item.get("text").is_none(),
        "binary content has no text: {item}"
    );
    let blob = item["blob"].as_str().unwrap();
    assert_eq!(
        base64::engine::general_purpose::STANDARD
            .decode(blob)
            .unwrap(),
        BINARY,
        "standard (padded) base64 of the exact bytes"
    );
}

// docs/server/resources.mdx "Reading Resources": servers MAY return multiple contents
#[tokio::test]
async fn resources_read_may_return_multiple_contents() {
    let mut io = Stdio::start(default_server());
    let reply = read(&mut io, 1, "test://dir").await;
    let contents = reply["result"]["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 2);
    assert_eq!(contents[0]["text"], "A");
    assert_eq!(contents[1]["blob"], "AAE=");
}

// docs/server/resources.mdx "Resource Templates" + pagination + caching
#[tokio::test]
async fn resources_templates_list_returns_templates_paginated_with_cache_hints() {
    let options = ServerOptions {
        page_size: 3,
        caching: Caching {
            resource_templates: CacheHint {
                ttl_ms: 1_000,
                scope: CacheScope::Public,
            },
            ..Caching::default()
        },
        ..ServerOptions::default()
    };
    let mut io = Stdio::start(resource_server(options));
    let (items, pages) = list_all(&mut io, "resources/templates/list", "resourceTemplates").await;
    assert_eq!(pages.len(), 2);
    let templates: Vec<&str> = items
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        templates,
        [
            "test://users/{id}/profile",
            "file:///{+path}",
            "search://items{?q,lang}",
            "repo://{owner}/{name}{/file}",
            "test://{kind}"
        ]
    );
    assert_eq!(items[0]["name"], "user profile");
    assert_eq!(items[0]["mimeType"], "application/json");
    for page in &pages {
        assert_eq!(
            (page["ttlMs"].clone(), page["cacheScope"].clone()),
            (json!(1_000), json!("public"))
        );
    }
}

// docs/server/resources.mdx "Resource Templates": RFC 6570 URI templates route reads, with the
// variables handed to the handler
#[tokio::test]
async fn resources_templates_rfc6570_matches_pass_variables_to_the_handler() {
    let mut io = Stdio::start(default_server());
    assert_eq!(
        variables_for(&mut io, "test://users/42/profile").await,
        json!({"id": "42"})
    );
    // simple expansion values are percent-decoded
    assert_eq!(
        variables_for(&mut io, "test://users/J%C3%BCrgen%20K/profile").await,
        json!({"id": "Jürgen K"})
    );
    // reserved expansion {+path} spans slashes
    assert_eq!(
        variables_for(&mut io, "file:///src/server/mod.rs").await,
        json!({"path": "src/server/mod.rs"})
    );
    // form-style query: variables optional, in any order
    assert_eq!(
        variables_for(&mut io, "search://items?lang=en&q=rust%20mcp").await,
        json!({"q": "rust mcp", "lang": "en"})
    );
    assert_eq!(variables_for(&mut io, "search://items").await, json!({}));
    // path-segment expansion after simple ones
    assert_eq!(
        variables_for(&mut io, "repo://octo/cat/README").await,
        json!({"owner": "octo", "name": "cat", "file": "README"})
    );
}

// docs/server/resources.mdx "Reading Resources": a listed resource is read by its own handler
// even when a template would match its URI too
#[tokio::test]
async fn resources_read_prefers_a_fixed_resource_over_a_matching_template() {
    let mut io = Stdio::start(default_server());
    let reply = read(&mut io, 1, "test://text").await;
    assert_eq!(reply["result"]["contents"][0]["text"], "hello, 世界\n");
    // ... while other URIs of that shape go to the template
    assert_eq!(
        variables_for(&mut io, "test://other").await,
        json!({"kind": "other"})
    );
}

// docs/server/resources.mdx "Error Handling": unknown resource -> -32602 with data.uri, never
// an empty contents array
#[tokio::test]
async fn resources_read_unknown_uri_is_invalid_params_with_uri() {
    let mut io = Stdio::start(default_server());
    for uri in [
        "test://users/42/settings", // no template matches the tail
        "test://users//profile",    // empty variable
        "other://nothing",          // unknown scheme
        "test://text/extra",        // fixed resource + suffix
    ] {
        let reply = read(&mut io, 9, uri).await;
        assert!(reply.get("result").is_none(), "{uri}: {reply}");
        assert_eq!(reply["id"], 9);
        assert_eq!(reply["error"]["code"], -32602, "{uri}: {reply}");
        assert_eq!(reply["error"]["data"]["uri"], uri, "{reply}");
        assert!(reply["error"]["message"].as_str().unwrap().contains(uri));
    }
}

// docs/server/resources.mdx "Reading Resources": `uri` is a required string
#[tokio::test]
async fn resources_read_without_a_string_uri_is_invalid_params() {
    let mut io = Stdio::start(default_server());
    for params in [json!({}), json!({"uri": 5}), json!({"uri": null})] {
        let reply = io.call(request(1, "resources/read", params.clone())).await;
        assert_eq!(reply["error"]["code"], -32602, "{params}: {reply}");
    }
}

// docs/server/resources.mdx "Error Handling": internal errors -> -32603; a handler's own
// JSON-RPC error passes through unchanged; the server keeps serving
#[tokio::test]
async fn resources_read_handler_errors_become_json_rpc_errors() {
    let mut io = Stdio::start(default_server());
    let reply = read(&mut io, 1, "test://fails").await;
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("disk on fire")
    );

    let reply = read(&mut io, 2, "test://forbidden").await;
    assert_eq!(
        reply["error"],
        json!({"code": -32001, "message": "not for you", "data": {"why": "policy"}})
    );

    let reply = read(&mut io, 3, "test://panics").await;
    assert_eq!(reply["error"]["code"], -32603, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exploded")
    );

    let reply = read(&mut io, 4, "test://text").await;
    assert_eq!(
        reply["result"]["contents"][0]["text"], "hello, 世界\n",
        "still serving"
    );
}

// docs/server/resources.mdx "Capabilities": the set MAY change over time (and is reflected at once)
#[tokio::test]
async fn resources_list_reflects_resources_added_and_removed_at_run_time() {
    let server = default_server();
    let mut io = Stdio::start(server.clone());
    server
        .add_resource(
            resource("test://late", "late", None),
            |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text("late".into())) },
        )
        .unwrap();
    assert!(server.remove_resource("test://fails"));
    assert!(!server.remove_resource("test://never-registered"));
    let reply = io.call(request(1, "resources/list", json!({}))).await;
    let uris: Vec<&str> = reply["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert!(
        uris.contains(&"test://late") && !uris.contains(&"test://fails"),
        "{uris:?}"
    );
    assert_eq!(
        read(&mut io, 2, "test://late").await["result"]["contents"][0]["text"],
        "late"
    );
    // the removed resource's URI now falls through to the catch-all template
    assert_eq!(
        variables_for(&mut io, "test://fails").await,
        json!({"kind": "fails"})
    );
}

// docs/server/resources.mdx "Common URI Schemes" / registration: an empty URI or a broken
// template is refused when registered, not when read
#[test]
fn resources_registration_rejects_empty_uris_and_malformed_templates() {
    let server = Server::new("s", "1");
    assert!(
        server
            .add_resource(
                resource("", "empty", None),
                |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text(String::new())) }
            )
            .is_err()
    );
    for bad in ["test://{unclosed", "test://{}", "test://stray}"] {
        assert!(
            server
                .add_resource_template(template(bad, "bad"), echo_variables)
                .is_err(),
            "{bad}"
        );
    }
}

// docs/basic/transports/streamable-http.mdx "Standard Request Headers": Mcp-Name carries the
// uri of resources/read (base64 sentinel form when it is not plain ASCII)
#[tokio::test]
async fn streamable_http_resources_read_checks_mcp_name_against_the_uri() {
    let http = Http::start(default_server()).await;
    let body = request(
        1,
        "resources/read",
        json!({"uri": "test://users/Jürgen/profile"}),
    );
    let encoded = format!(
        "=?base64?{}?=",
        base64::Engine::encode(
            &base64::engine::general_purpose::STANDARD,
            "test://users/Jürgen/profile"
        )
    );
    let ok = raw_http(
        http.port,
        "POST",
        &mcp_headers("resources/read", Some(&encoded)),
        &body.to_string(),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(ok.header("content-type"), Some("application/json"));
    let text = ok.json()["result"]["contents"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()["variables"],
        json!({"id": "Jürgen"})
    );

    let wrong = raw_http(
        http.port,
        "POST",
        &mcp_headers("resources/read", Some("test://text")),
        &body.to_string(),
    )
    .await;
    assert_eq!(
        (wrong.status, wrong.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );

    // an unknown resource is a JSON-RPC error in a normal response
    let missing = http
        .post(&request(
            2,
            "resources/read",
            json!({"uri": "test://nope/x"}),
        ))
        .await;
    assert_eq!(missing.json()["error"]["code"], -32602);
    assert_eq!(missing.json()["error"]["data"]["uri"], "test://nope/x");
}

/// caching.mdx: the hint is the server's per result kind unless a resource
/// (or a template) was registered with its own; the others keep the server's.
#[tokio::test]
async fn a_resource_may_carry_its_own_caching_hint() {
    let server = server_with(ServerOptions {
        caching: Caching {
            resource_read: CacheHint {
                ttl_ms: 5,
                scope: CacheScope::Private,
            },
            ..Caching::default()
        },
        ..ServerOptions::default()
    });
    let hour = CacheHint {
        ttl_ms: 3_600_000,
        scope: CacheScope::Public,
    };
    let text = |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text("x".into())) };
    server
        .add_resource_cached(resource("test://hourly", "hourly", None), hour, text)
        .unwrap();
    server
        .add_resource_template_cached(template("test://t/{id}", "t"), hour, text)
        .unwrap();
    server
        .add_resource(resource("test://plain", "plain", None), text)
        .unwrap();
    let mut stdio = Stdio::start(server);
    for (uri, ttl, scope) in [
        ("test://hourly", 3_600_000, "public"),
        ("test://t/7", 3_600_000, "public"),
        ("test://plain", 5, "private"),
    ] {
        let response = stdio
            .call(request(1, "resources/read", json!({"uri": uri})))
            .await;
        assert_eq!(response["result"]["ttlMs"], ttl, "{uri}: {response}");
        assert_eq!(response["result"]["cacheScope"], scope, "{uri}: {response}");
    }
}
