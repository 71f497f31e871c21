//! Protected servers (issue 15, server side; spec 2026-07-28
//! basic/authorization): protected resource metadata at both well-known
//! paths, 401 challenges for missing and bad tokens, 403
//! `insufficient_scope` per primitive, handlers seeing the verified claims,
//! JWKS rotation, the built-in listener and legacy sessions protected
//! alike, stdio unaffected. Tokens are JWTs signed at test time
//! (`auth_issuer`), their keys served by a local issuer.

mod auth_issuer;
use ferromcp_testkit as common;

use auth_issuer::{Issuer, Signer, now};
use common::{Http, Stdio, headers_for, request};
use ferromcp::protocol::{Prompt, Resource, ResourceTemplate, Tool};
use ferromcp::server::auth::{AuthInfo, ScopeTarget, TokenError, TokenRequest};
use ferromcp::server::{
    CompletionOutput, PromptOutput, RequestContext, ResourceOutput, ResourceRequest, Server,
    ToolOutput,
};
use ferromcp::transport::http::{EndpointOptions, HttpEndpoint, ProtectedResource};
use ferromcp::verifier::JwtVerifier;
use http_body_util::{BodyExt, Full};
use serde_json::{Value, json};
use std::time::Duration;

const RESOURCE: &str = "https://mcp.test/mcp";
const PRM_URL: &str = "https://mcp.test/.well-known/oauth-protected-resource/mcp";

/// A server whose `whoami` tool answers with the claims it sees, whose
/// `delete` tool needs `files:write`, a resource needing `files:read`, a
/// template needing `docs:read` and a prompt needing `prompts`.
fn server() -> Server {
    let server = Server::new("protected", "1.0.0");
    let whoami = |ctx: RequestContext, _args: Value| async move {
        let auth = ctx.auth().map(|a| {
            json!({"sub": a.subject, "client": a.client_id, "scopes": a.scopes,
                "aud": a.audience, "iss": a.claims["iss"]})
        });
        Ok(ToolOutput::text(json!({ "auth": auth }).to_string()))
    };
    server
        .add_tool(Tool::new("whoami", json!({"type": "object"})), whoami)
        .unwrap();
    server
        .add_tool(
            Tool::new("delete", json!({"type": "object"})),
            |_ctx: RequestContext, _args: Value| async { Ok(ToolOutput::text("deleted")) },
        )
        .unwrap();
    server.require_scopes(ScopeTarget::Tool, "delete", ["files:write"]);
    server
        .add_resource(
            Resource::new("file:///secret", "secret"),
            |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text("s3cret".into())) },
        )
        .unwrap();
    server.require_scopes(ScopeTarget::Resource, "file:///secret", ["files:read"]);
    server
        .add_resource_template(
            ResourceTemplate::new("file:///docs/{name}", "docs"),
            |_ctx, _req: ResourceRequest| async { Ok(ResourceOutput::Text("doc".into())) },
        )
        .unwrap();
    server.require_scopes(
        ScopeTarget::ResourceTemplate,
        "file:///docs/{name}",
        ["docs:read"],
    );
    server
        .add_prompt(Prompt::new("p"), |_ctx, _args| async {
            Ok(PromptOutput::Text("hi".into()))
        })
        .unwrap();
    server.require_scopes(ScopeTarget::Prompt, "p", ["prompts"]);
    server.set_completion_handler(|_ctx: RequestContext, _params: Value| async {
        Ok(CompletionOutput {
            values: vec!["a.txt".into()],
            ..CompletionOutput::default()
        })
    });
    server
}

/// `completion/complete` of `argument` in what `reference` names.
fn complete(reference: Value, argument: &str) -> Value {
    request(
        1,
        "completion/complete",
        json!({"ref": reference, "argument": {"name": argument, "value": ""}}),
    )
}

fn protection(issuer: &Issuer) -> ProtectedResource {
    let verifier = JwtVerifier::new(&issuer.url, RESOURCE).with_min_refresh(Duration::ZERO);
    ProtectedResource::new(RESOURCE, [issuer.url.clone()], verifier)
        .with_scopes_supported(["files:read", "files:write"])
        .with_resource_name("Test files")
}

fn endpoint_with(server: Server, auth: ProtectedResource) -> HttpEndpoint {
    HttpEndpoint::new(
        server,
        EndpointOptions {
            auth: Some(auth),
            ..EndpointOptions::default()
        },
    )
}

struct Answer {
    status: u16,
    headers: http::HeaderMap,
    body: Value,
}

impl Answer {
    fn challenge(&self) -> &str {
        self.headers
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("no WWW-Authenticate on HTTP {}", self.status))
    }

    /// The text of a tool result.
    fn text(&self) -> &str {
        self.body["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("not a tool result: {}", self.body))
    }
}

async fn send(endpoint: &HttpEndpoint, request: http::Request<Full<bytes::Bytes>>) -> Answer {
    let response = endpoint.handle(request).await;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = response.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Answer {
        status,
        headers,
        body,
    }
}

/// POSTs `message` to `uri` with the mirrored headers and, if given, the
/// bearer token.
async fn post_to(
    endpoint: &HttpEndpoint,
    uri: &str,
    token: Option<&str>,
    message: &Value,
) -> Answer {
    let mut builder = http::Request::post(uri).header("host", "localhost");
    for (name, value) in headers_for(message) {
        builder = builder.header(name, value);
    }
    if let Some(token) = token {
        builder = builder.header("authorization", format!("Bearer {token}"));
    }
    let request = builder
        .body(Full::new(bytes::Bytes::from(message.to_string())))
        .unwrap();
    send(endpoint, request).await
}

async fn post(endpoint: &HttpEndpoint, token: Option<&str>, message: &Value) -> Answer {
    post_to(endpoint, "/mcp", token, message).await
}

async fn get(endpoint: &HttpEndpoint, path: &str) -> Answer {
    let request = http::Request::get(path)
        .header("host", "localhost")
        .body(Full::new(bytes::Bytes::new()))
        .unwrap();
    send(endpoint, request).await
}

fn call(tool: &str) -> Value {
    request(1, "tools/call", json!({"name": tool, "arguments": {}}))
}

#[tokio::test]
async fn metadata_is_served_at_the_root_and_path_inserted_well_known_paths() {
    let key = Signer::es256("k1");
    let issuer = Issuer::start(&[&key]).await;
    let endpoint = endpoint_with(server(), protection(&issuer));
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let answer = get(&endpoint, path).await;
        assert_eq!(answer.status, 200, "{path}");
        assert_eq!(
            answer.body,
            json!({
                "resource": RESOURCE,
                "authorization_servers": [issuer.url],
                "scopes_supported": ["files:read", "files:write"],
                "bearer_methods_supported": ["header"],
                "resource_name": "Test files",
            }),
            "{path}"
        );
        assert_eq!(answer.headers["access-control-allow-origin"], "*");
        assert_eq!(answer.headers["content-type"], "application/json");
    }
    // Another server's path-inserted document is not ours.
    assert_eq!(
        get(&endpoint, "/.well-known/oauth-protected-resource/other")
            .await
            .status,
        404
    );
    // Unprotected endpoints serve no metadata.
    let open = HttpEndpoint::new(server(), EndpointOptions::default());
    assert_eq!(
        get(&open, "/.well-known/oauth-protected-resource")
            .await
            .status,
        404
    );
}

#[tokio::test]
async fn a_request_without_a_token_gets_401_and_the_metadata_url() {
    let key = Signer::es256("k1");
    let issuer = Issuer::start(&[&key]).await;
    let endpoint = endpoint_with(server(), protection(&issuer));
    let answer = post(&endpoint, None, &call("whoami")).await;
    assert_eq!(answer.status, 401);
    assert_eq!(
        answer.challenge(),
        format!("Bearer scope=\"files:read files:write\", resource_metadata=\"{PRM_URL}\"")
    );
    // Discovery too: the server reveals nothing to an anonymous client.
    let discover = request(1, "server/discover", json!({}));
    assert_eq!(post(&endpoint, None, &discover).await.status, 401);
}

#[tokio::test]
async fn bad_tokens_get_401_invalid_token() {
    let key = Signer::es256("k1");
    let stranger = Signer::es256("k1");
    let issuer = Issuer::start(&[&key]).await;
    let endpoint = endpoint_with(server(), protection(&issuer));
    let good = issuer.claims(RESOURCE, "");
    let mut expired = good.clone();
    expired["exp"] = json!(now() - 600);
    expired["iat"] = json!(now() - 4000);
    let mut wrong_audience = good.clone();
    wrong_audience["aud"] = json!("https://other.test/mcp");
    let mut wrong_issuer = good.clone();
    wrong_issuer["iss"] = json!("https://evil.test");
    let mut not_yet = good.clone();
    not_yet["nbf"] = json!(now() + 3600);
    let unsigned = {
        let token = key.sign(&good);
        let (header_payload, _) = token.rsplit_once('.').unwrap();
        let (_, payload) = header_payload.split_once('.').unwrap();
        use base64::Engine;
        let none = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(r#"{"alg":"none"}"#);
        format!("{none}.{payload}.")
    };
    let cases = [
        ("garbage", "not-a-jwt".to_owned()),
        ("expired", key.sign(&expired)),
        ("wrong audience", key.sign(&wrong_audience)),
        ("wrong issuer", key.sign(&wrong_issuer)),
        ("not yet valid", key.sign(&not_yet)),
        (
            "signed by another key with the same kid",
            stranger.sign(&good),
        ),
        ("alg none", unsigned),
        (
            "a critical extension the server does not understand",
            key.sign_with_header(
                &good,
                &json!({"crit": ["urn:example:must-check"], "urn:example:must-check": true}),
            ),
        ),
    ];
    for (what, token) in cases {
        let answer = post(&endpoint, Some(&token), &call("whoami")).await;
        assert_eq!(answer.status, 401, "{what}: {}", answer.body);
        let challenge = answer.challenge();
        assert!(
            challenge
                .starts_with("Bearer error=\"invalid_token\", scope=\"files:read files:write\", ")
                && challenge.contains(&format!("resource_metadata=\"{PRM_URL}\"")),
            "{what}: {challenge}"
        );
    }
    // The server is still fine.
    let answer = post(&endpoint, Some(&key.sign(&good)), &call("whoami")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
}

#[tokio::test]
async fn a_token_in_the_query_string_is_refused() {
    let key = Signer::es256("k1");
    let issuer = Issuer::start(&[&key]).await;
    let endpoint = endpoint_with(server(), protection(&issuer));
    let token = key.sign(&issuer.claims(RESOURCE, ""));
    let uri = format!("/mcp?access_token={token}");
    // Not even with a good header besides: the URL has leaked the token.
    for header in [None, Some(token.as_str())] {
        let answer = post_to(&endpoint, &uri, header, &call("whoami")).await;
        assert_eq!(answer.status, 401);
        assert!(
            answer
                .challenge()
                .starts_with("Bearer error=\"invalid_request\""),
            "{}",
            answer.challenge()
        );
    }
}

#[tokio::test]
async fn a_good_token_reaches_the_tool_which_sees_the_claims() {
    let key = Signer::es256("k1");
    let issuer = Issuer::start(&[&key]).await;
    let endpoint = endpoint_with(server(), protection(&issuer));
    let token = key.sign(&issuer.claims(RESOURCE, "files:read extra"));
    let answer = post(&endpoint, Some(&token), &call("whoami")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let seen: Value = serde_json::from_str(answer.text()).unwrap();
    assert_eq!(
        seen["auth"],
        json!({"sub": "alice", "client": "test-client", "scopes": ["files:read", "extra"],
            "aud": [RESOURCE], "iss": issuer.url})
    );
}

#[tokio::test]
async fn a_missing_scope_gets_403_naming_the_scopes_needed() {
    let key = Signer::es256("k1");
    let issuer = Issuer::start(&[&key]).await;
    let endpoint = endpoint_with(server(), protection(&issuer));
    let reader = key.sign(&issuer.claims(RESOURCE, "files:read"));
    let cases = [
        (call("delete"), "files:write"),
        (
            request(1, "resources/read", json!({"uri": "file:///docs/a"})),
            "docs:read",
        ),
        (request(1, "prompts/get", json!({"name": "p"})), "prompts"),
        // Completing an argument reveals what using it would.
        (
            complete(json!({"type": "ref/prompt", "name": "p"}), "x"),
            "prompts",
        ),
        (
            complete(
                json!({"type": "ref/resource", "uri": "file:///docs/{name}"}),
                "name",
            ),
            "docs:read",
        ),
        (
            complete(
                json!({"type": "ref/resource", "uri": "file:///docs/a"}),
                "name",
            ),
            "docs:read",
        ),
    ];
    for (message, needed) in cases {
        let answer = post(&endpoint, Some(&reader), &message).await;
        assert_eq!(answer.status, 403, "{message}: {}", answer.body);
        assert_eq!(
            answer.challenge(),
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"{needed}\", resource_metadata=\"{PRM_URL}\", error_description=\"this operation needs scope {needed}\""
            )
        );
    }
    // What the token does cover runs.
    let read = request(1, "resources/read", json!({"uri": "file:///secret"}));
    let answer = post(&endpoint, Some(&reader), &read).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.body["result"]["contents"][0]["text"], "s3cret");
    let docs = key.sign(&issuer.claims(RESOURCE, "docs:read"));
    let reference = json!({"type": "ref/resource", "uri": "file:///docs/{name}"});
    let answer = post(&endpoint, Some(&docs), &complete(reference, "name")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(
        answer.body["result"]["completion"]["values"],
        json!(["a.txt"])
    );
    // And with the scope, the tool runs.
    let writer = key.sign(&issuer.claims(RESOURCE, "files:write"));
    let answer = post(&endpoint, Some(&writer), &call("delete")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(answer.text(), "deleted");
    // Lists are not filtered: the client learns a tool's scopes on use.
    let list = request(1, "tools/list", json!({}));
    let answer = post(&endpoint, Some(&reader), &list).await;
    assert_eq!(answer.body["result"]["tools"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn server_wide_scopes_and_scope_hierarchies() {
    let key = Signer::es256("k1");
    let issuer = Issuer::start(&[&key]).await;
    // `files` implies every `files:*` scope.
    let check: ferromcp::server::auth::ScopeCheck =
        std::sync::Arc::new(|info: &AuthInfo, needed: &str| {
            info.scopes
                .iter()
                .any(|s| s == needed || needed.starts_with(&format!("{s}:")))
        });
    let auth = protection(&issuer)
        .with_required_scopes(["mcp"])
        .with_scope_check(check);
    let endpoint = endpoint_with(server(), auth);
    let files_only = key.sign(&issuer.claims(RESOURCE, "files"));
    let answer = post(&endpoint, Some(&files_only), &call("whoami")).await;
    assert_eq!(answer.status, 403);
    assert!(
        answer.challenge().contains("scope=\"mcp\""),
        "{}",
        answer.challenge()
    );
    // Without a token the 401 names the server-wide scopes.
    let answer = post(&endpoint, None, &call("whoami")).await;
    assert!(
        answer.challenge().contains("scope=\"mcp\""),
        "{}",
        answer.challenge()
    );
    let both = key.sign(&issuer.claims(RESOURCE, "mcp files"));
    let answer = post(&endpoint, Some(&both), &call("delete")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    // One challenge names everything the operation needs.
    let mcp_only = key.sign(&issuer.claims(RESOURCE, "mcp"));
    let answer = post(&endpoint, Some(&mcp_only), &call("delete")).await;
    assert_eq!(answer.status, 403);
    assert!(
        answer.challenge().contains("scope=\"mcp files:write\""),
        "{}",
        answer.challenge()
    );
}

#[tokio::test]
async fn every_algorithm_verifies() {
    let keys = [
        Signer::es256("es"),
        Signer::eddsa("ed"),
        Signer::rsa("rs", false),
        Signer::rsa("ps", true),
    ];
    let issuer = Issuer::start(&keys.iter().collect::<Vec<_>>()).await;
    let endpoint = endpoint_with(server(), protection(&issuer));
    for key in &keys {
        let token = key.sign(&issuer.claims(RESOURCE, ""));
        let answer = post(&endpoint, Some(&token), &call("whoami")).await;
        assert_eq!(answer.status, 200, "{}: {}", key.alg(), answer.body);
    }
    assert_eq!(issuer.jwks_fetches(), 1);
}

#[tokio::test]
async fn an_unknown_key_id_refetches_the_key_set_at_most_once_per_interval() {
    let old = Signer::es256("old");
    let new = Signer::eddsa("new");
    let issuer = Issuer::start(&[&old]).await;
    let endpoint = endpoint_with(server(), protection(&issuer));
    let claims = issuer.claims(RESOURCE, "");
    assert_eq!(
        post(&endpoint, Some(&old.sign(&claims)), &call("whoami"))
            .await
            .status,
        200
    );
    assert_eq!(issuer.jwks_fetches(), 1);
    // Known key: served from the cache.
    assert_eq!(
        post(&endpoint, Some(&old.sign(&claims)), &call("whoami"))
            .await
            .status,
        200
    );
    assert_eq!(issuer.jwks_fetches(), 1);
    // The issuer rotates: a token with the new kid makes the server refetch.
    issuer.publish(&[&new]);
    let answer = post(&endpoint, Some(&new.sign(&claims)), &call("whoami")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert_eq!(issuer.jwks_fetches(), 2);
    // The old key is gone from the set now.
    assert_eq!(
        post(&endpoint, Some(&old.sign(&claims)), &call("whoami"))
            .await
            .status,
        401
    );

    // With the default interval, forged key ids cannot make it hammer the
    // issuer: one fetch for the first token, none for the next unknown kids.
    let verifier = JwtVerifier::new(&issuer.url, RESOURCE);
    let limited = endpoint_with(
        server(),
        ProtectedResource::new(RESOURCE, [issuer.url.clone()], verifier),
    );
    let before = issuer.jwks_fetches();
    assert_eq!(
        post(&limited, Some(&new.sign(&claims)), &call("whoami"))
            .await
            .status,
        200
    );
    for i in 0..5 {
        let forged = Signer::es256(&format!("forged{i}"));
        assert_eq!(
            post(&limited, Some(&forged.sign(&claims)), &call("whoami"))
                .await
                .status,
            401
        );
    }
    assert_eq!(issuer.jwks_fetches(), before + 1);
}

#[tokio::test]
async fn an_unreachable_issuer_gives_503_not_401() {
    let key = Signer::es256("k1");
    let issuer = Issuer::start(&[&key]).await;
    let claims = issuer.claims(RESOURCE, "");
    let url = issuer.url.clone();
    drop(issuer);
    let verifier = JwtVerifier::new(&url, RESOURCE);
    let endpoint = endpoint_with(
        server(),
        ProtectedResource::new(RESOURCE, [url.clone()], verifier),
    );
    let answer = post(&endpoint, Some(&key.sign(&claims)), &call("whoami")).await;
    assert_eq!(answer.status, 503, "{}", answer.body);
}

#[tokio::test]
async fn a_host_verifier_is_held_to_the_audience_and_the_clock() {
    // A verifier that accepts anything, saying who it is for in the token.
    let verifier = |token: String, _request: TokenRequest| async move {
        let (audience, expires_at) = match token.as_str() {
            "ours" => (RESOURCE, now() + 60),
            "ours-with-slash" => ("https://mcp.test/mcp/", now() + 60),
            "theirs" => ("https://other.test/mcp", now() + 60),
            "stale" => (RESOURCE, now() - 1),
            _ => return Err(TokenError::Invalid("unknown".into())),
        };
        Ok(AuthInfo {
            subject: Some(token),
            audience: vec![audience.into()],
            expires_at: Some(expires_at),
            ..AuthInfo::default()
        })
    };
    let auth = ProtectedResource::new(RESOURCE, ["https://as.test"], verifier);
    let endpoint = endpoint_with(server(), auth);
    for (token, status) in [
        ("ours", 200),
        ("ours-with-slash", 200),
        ("theirs", 401),
        ("stale", 401),
        ("unknown", 401),
    ] {
        let answer = post(&endpoint, Some(token), &call("whoami")).await;
        assert_eq!(answer.status, status, "{token}: {}", answer.body);
    }
}

#[tokio::test]
async fn legacy_sessions_are_protected_alike() {
    let key = Signer::es256("k1");
    let issuer = Issuer::start(&[&key]).await;
    let endpoint = endpoint_with(server(), protection(&issuer));
    let token = key.sign(&issuer.claims(RESOURCE, "files:read"));
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy", "version": "0"}}});
    let legacy_post = |token: Option<String>, session: Option<String>, message: Value| {
        let endpoint = endpoint.clone();
        async move {
            let mut builder = http::Request::post("/mcp")
                .header("host", "localhost")
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2025-11-25");
            if let Some(token) = token {
                builder = builder.header("authorization", format!("Bearer {token}"));
            }
            if let Some(session) = session {
                builder = builder.header("mcp-session-id", session);
            }
            let request = builder
                .body(Full::new(bytes::Bytes::from(message.to_string())))
                .unwrap();
            send(&endpoint, request).await
        }
    };
    assert_eq!(
        legacy_post(None, None, initialize.clone()).await.status,
        401
    );
    let opened = legacy_post(Some(token.clone()), None, initialize).await;
    assert_eq!(opened.status, 200, "{}", opened.body);
    let session = opened.headers["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let call = |name: &str| {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": name, "arguments": {}}})
    };
    // The session id is no credential: each request needs the token.
    let anonymous = legacy_post(None, Some(session.clone()), call("whoami")).await;
    assert_eq!(anonymous.status, 401);
    let denied = legacy_post(Some(token.clone()), Some(session.clone()), call("delete")).await;
    assert_eq!(denied.status, 403);
    // Another user's good token: the session is not theirs.
    let mut bob = issuer.claims(RESOURCE, "files:read");
    bob["sub"] = json!("bob");
    let other = legacy_post(Some(key.sign(&bob)), Some(session.clone()), call("whoami")).await;
    assert_eq!(other.status, 404, "{}", other.body);
    let answer = legacy_post(Some(token), Some(session), call("whoami")).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let seen: Value = serde_json::from_str(answer.text()).unwrap();
    assert_eq!(seen["auth"]["sub"], "alice");
}

#[tokio::test]
async fn the_built_in_listener_applies_the_protection() {
    let key = Signer::es256("k1");
    let issuer = Issuer::start(&[&key]).await;
    let auth = protection(&issuer);
    let http = Http::start_with(server(), |options| options.auth = Some(auth)).await;
    let anonymous = http.post(&call("whoami")).await;
    assert_eq!(anonymous.status, 401);
    assert!(
        anonymous
            .header("www-authenticate")
            .is_some_and(|c| c.contains(PRM_URL))
    );
    let token = key.sign(&issuer.claims(RESOURCE, ""));
    let answer = http
        .post_with(
            &call("whoami"),
            &[("Authorization", format!("Bearer {token}"))],
        )
        .await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    assert!(
        answer.json()["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("alice")
    );
}

#[tokio::test]
async fn stdio_servers_are_unaffected() {
    // The same server, scopes and all, over stdio: no token, no checks,
    // and handlers see no claims.
    let mut stdio = Stdio::start(server());
    let answer = stdio.call(call("delete")).await;
    assert_eq!(
        answer["result"]["content"][0]["text"], "deleted",
        "{answer}"
    );
    let answer = stdio.call(call("whoami")).await;
    let seen: Value =
        serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(seen["auth"], Value::Null);
}

#[tokio::test]
async fn the_jwt_verifier_itself_checks_audience_expiry_and_leeway() {
    // Without the endpoint's own checks in front of it.
    let key = Signer::es256("k1");
    let issuer = Issuer::start(&[&key]).await;
    let verifier = JwtVerifier::new(&issuer.url, RESOURCE).with_leeway(Duration::from_secs(30));
    let good = issuer.claims(RESOURCE, "a b");
    let info = verifier.verify_token(&key.sign(&good)).await.unwrap();
    assert_eq!(info.scopes, ["a", "b"]);
    assert_eq!(info.subject.as_deref(), Some("alice"));
    let mut claims = good.clone();
    claims["aud"] = json!(["https://other.test/mcp"]);
    assert!(verifier.verify_token(&key.sign(&claims)).await.is_err());
    claims["aud"] = json!(["https://other.test/mcp", RESOURCE]);
    assert!(verifier.verify_token(&key.sign(&claims)).await.is_ok());
    let mut claims = good.clone();
    claims["exp"] = json!(now() - 10); // within the leeway
    assert!(verifier.verify_token(&key.sign(&claims)).await.is_ok());
    claims["exp"] = json!(now() - 60);
    assert!(matches!(
        verifier.verify_token(&key.sign(&claims)).await,
        Err(TokenError::Invalid(why)) if why.contains("expired")
    ));
    let mut claims = good.clone();
    claims.as_object_mut().unwrap().remove("exp");
    assert!(verifier.verify_token(&key.sign(&claims)).await.is_err());
    // A token whose payload was changed after signing.
    let token = key.sign(&good);
    let mut parts: Vec<&str> = token.split('.').collect();
    use base64::Engine;
    let forged_claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(issuer.claims(RESOURCE, "admin").to_string());
    parts[1] = &forged_claims;
    assert!(verifier.verify_token(&parts.join(".")).await.is_err());
}

#[tokio::test]
async fn a_verified_token_is_remembered_for_the_cache_ttl_never_past_its_expiry() {
    let old = Signer::es256("old");
    let new = Signer::es256("new");
    let issuer = Issuer::start(&[&old]).await;
    let remembering = JwtVerifier::new(&issuer.url, RESOURCE)
        .with_leeway(Duration::ZERO)
        .with_min_refresh(Duration::ZERO);
    let checking = remembering.clone().with_cache_ttl(Duration::ZERO);
    let token = old.sign(&issuer.claims(RESOURCE, "a"));
    assert!(remembering.verify_token(&token).await.is_ok());
    assert!(checking.verify_token(&token).await.is_ok());
    // The issuer rotates, and both verifiers learn the new set (a token
    // with the new kid makes them refetch it).
    issuer.publish(&[&new]);
    let fresh = new.sign(&issuer.claims(RESOURCE, "a"));
    assert!(remembering.verify_token(&fresh).await.is_ok());
    assert!(checking.verify_token(&fresh).await.is_ok());
    // The token verified before is answered from memory by one, and checked
    // against the new set (without its key) by the other.
    assert_eq!(
        remembering.verify_token(&token).await.unwrap().scopes,
        ["a"]
    );
    assert!(checking.verify_token(&token).await.is_err());

    // Never past `exp`: remembered until then, then checked (and expired).
    let mut claims = issuer.claims(RESOURCE, "a");
    claims["exp"] = json!(now() + 2);
    let short = new.sign(&claims);
    assert!(remembering.verify_token(&short).await.is_ok());
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert!(matches!(
        remembering.verify_token(&short).await,
        Err(TokenError::Invalid(why)) if why.contains("expired")
    ));
}
