//! A small protected MCP server and authorization server in one hyper
//! listener, routed by path, for the OAuth client tests (core's
//! `client_oauth.rs`, the CLI's `cli_login.rs` includes it with `#[path]`):
//! protected resource metadata, RFC 8414 metadata, dynamic registration
//! (a new client id each time), an authorization endpoint that approves at
//! once (redirecting with `code`, `state` and `iss`) when the client id is
//! registered and the redirect URI is one it registered (a real server
//! refuses others, without redirecting), a token endpoint checking PKCE and
//! the redirect URI, and an MCP endpoint answering 401 / 403
//! `insufficient_scope` as configured.

// Each test file uses a different subset.
#![allow(dead_code)]

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// How the mock behaves and what it saw.
#[derive(Default)]
pub struct Mock {
    pub base: String,
    /// Scope `tools/call` needs (403 `insufficient_scope` without it).
    pub call_scope: Option<String>,
    /// Never accept any token for `tools/call` (the step-up never works).
    pub always_forbidden: bool,
    /// `expires_in` of issued tokens (3600 when 0).
    pub expires_in: u64,
    /// Tokens the server refuses from now on (expired).
    pub revoked: Vec<String>,
    /// token -> scopes.
    pub tokens: HashMap<String, Vec<String>>,
    pub issued: usize,
    pub challenge: Option<String>,
    pub authorize_scopes: Vec<String>,
    pub grants: Vec<String>,
    pub resources: Vec<String>,
    pub bearer_seen: Vec<Option<String>>,
    /// `X-Api-Key` of each MCP request (extra headers reach the server).
    pub api_keys_seen: Vec<Option<String>>,
    /// Dynamic registrations in order: client id, redirect URIs asked for.
    pub registrations: Vec<(String, Vec<String>)>,
    /// `redirect_uri` of each authorization request (refused ones too).
    pub authorize_redirects: Vec<String>,
    /// The redirect URI of the last approved authorization request: the
    /// code exchange must repeat it (RFC 6749 §4.1.3).
    pub approved_redirect: Option<String>,
}

pub type Shared = Arc<Mutex<Mock>>;

fn json_response(status: StatusCode, body: Value) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut()
        .insert("content-type", "application/json".parse().unwrap());
    r
}

fn form(body: &[u8]) -> HashMap<String, String> {
    let text = String::from_utf8_lossy(body).replace('+', " ");
    text.split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| {
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(s)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (decode(k), decode(v))
        })
        .collect()
}

fn issue(mock: &mut Mock, scopes: Vec<String>) -> Value {
    mock.issued += 1;
    let token = format!("token-{}", mock.issued);
    mock.tokens.insert(token.clone(), scopes);
    let expires_in = if mock.expires_in == 0 {
        3600
    } else {
        mock.expires_in
    };
    json!({"access_token": token, "token_type": "Bearer", "expires_in": expires_in,
           "refresh_token": format!("refresh-{}", mock.issued)})
}

async fn handle(mock: Shared, req: Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path().to_owned();
    let query = req.uri().query().unwrap_or("").to_owned();
    let bearer = req
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let api_key = req
        .headers()
        .get("x-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = req
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let mut m = mock.lock().unwrap();
    let base = m.base.clone();
    let prm = format!("{base}/.well-known/oauth-protected-resource/mcp");
    match path.as_str() {
        "/.well-known/oauth-protected-resource/mcp" => json_response(
            StatusCode::OK,
            json!({"resource": format!("{base}/mcp"), "authorization_servers": [base],
                   "scopes_supported": ["read"]}),
        ),
        "/.well-known/oauth-authorization-server" => json_response(
            StatusCode::OK,
            json!({"issuer": base, "authorization_endpoint": format!("{base}/authorize"),
                   "token_endpoint": format!("{base}/token"),
                   "registration_endpoint": format!("{base}/register"),
                   "code_challenge_methods_supported": ["S256"],
                   "token_endpoint_auth_methods_supported": ["client_secret_post"],
                   "authorization_response_iss_parameter_supported": true}),
        ),
        "/register" => {
            let asked: Value = serde_json::from_slice(&body).unwrap_or_default();
            let redirect_uris: Vec<String> = asked["redirect_uris"]
                .as_array()
                .map(|uris| {
                    uris.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            let client_id = format!("registered-{}", m.registrations.len() + 1);
            m.registrations
                .push((client_id.clone(), redirect_uris.clone()));
            // RFC 7591 §3.2.1: the answer repeats the registered metadata.
            json_response(
                StatusCode::CREATED,
                json!({"client_id": client_id, "client_secret": "s3cret",
                       "redirect_uris": redirect_uris}),
            )
        }
        "/authorize" => {
            let q = form(query.as_bytes());
            let redirect_uri = q.get("redirect_uri").cloned().unwrap_or_default();
            m.authorize_redirects.push(redirect_uri.clone());
            let client_id = q.get("client_id").map(String::as_str).unwrap_or("");
            let registered = m
                .registrations
                .iter()
                .find(|(id, _)| id == client_id)
                .is_some_and(|(_, uris)| uris.contains(&redirect_uri));
            if !registered {
                // RFC 6749 §4.1.2.1: never redirect to an unregistered URI.
                return json_response(
                    StatusCode::BAD_REQUEST,
                    json!({"error": "invalid_request",
                           "error_description": "redirect_uri is not registered for client_id"}),
                );
            }
            m.approved_redirect = Some(redirect_uri);
            m.challenge = q.get("code_challenge").cloned();
            m.authorize_scopes
                .push(q.get("scope").cloned().unwrap_or_default());
            let redirect = format!(
                "{}?code=the-code&state={}&iss={}",
                q["redirect_uri"],
                q["state"],
                ferromcp_encode(&base)
            );
            let mut r = Response::new(Full::new(Bytes::new()));
            *r.status_mut() = StatusCode::FOUND;
            r.headers_mut()
                .insert("location", redirect.parse().unwrap());
            r
        }
        "/token" => {
            let f = form(&body);
            m.grants.push(f["grant_type"].clone());
            m.resources
                .push(f.get("resource").cloned().unwrap_or_default());
            if f.get("client_secret").map(String::as_str) != Some("s3cret") {
                return json_response(StatusCode::UNAUTHORIZED, json!({"error": "invalid_client"}));
            }
            if f["grant_type"] == "authorization_code" {
                if f.get("redirect_uri") != m.approved_redirect.as_ref() {
                    return json_response(
                        StatusCode::BAD_REQUEST,
                        json!({"error": "invalid_grant"}),
                    );
                }
                let verifier = f.get("code_verifier").cloned().unwrap_or_default();
                let expected = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
                if m.challenge.as_deref() != Some(expected.as_str()) {
                    return json_response(
                        StatusCode::BAD_REQUEST,
                        json!({"error": "invalid_grant"}),
                    );
                }
            }
            let scopes = m
                .authorize_scopes
                .last()
                .cloned()
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            let answer = issue(&mut m, scopes);
            json_response(StatusCode::OK, answer)
        }
        "/mcp" => {
            m.bearer_seen.push(bearer.clone());
            m.api_keys_seen.push(api_key);
            let unauthorized =
                json_response(StatusCode::UNAUTHORIZED, json!({"error": "invalid_token"}));
            let Some(token) = bearer.filter(|t| !m.revoked.contains(t)) else {
                let mut r = unauthorized;
                r.headers_mut().insert(
                    "www-authenticate",
                    format!(r#"Bearer resource_metadata="{prm}""#)
                        .parse()
                        .unwrap(),
                );
                return r;
            };
            let Some(scopes) = m.tokens.get(&token).cloned() else {
                return unauthorized;
            };
            let message: Value = serde_json::from_slice(&body).unwrap_or_default();
            let method = message["method"].as_str().unwrap_or("");
            if method == "tools/call"
                && let Some(needed) = m.call_scope.clone()
                && (m.always_forbidden || !scopes.contains(&needed))
            {
                let mut r = json_response(
                    StatusCode::FORBIDDEN,
                    json!({"error": "insufficient_scope"}),
                );
                r.headers_mut().insert(
                    "www-authenticate",
                    format!(r#"Bearer error="insufficient_scope", scope="{needed}", resource_metadata="{prm}""#)
                        .parse()
                        .unwrap(),
                );
                return r;
            }
            let result = if method == "tools/list" {
                json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]})
            } else if method == "server/discover" {
                json!({
                    "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "mock", "version": "1"}
                })
            } else {
                json!({"content": [{"type": "text", "text": "ok"}]})
            };
            json_response(
                StatusCode::OK,
                json!({"jsonrpc": "2.0", "id": message["id"], "result": result}),
            )
        }
        _ => json_response(StatusCode::NOT_FOUND, json!({})),
    }
}

fn ferromcp_encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string()
}

pub async fn serve(configure: impl FnOnce(&mut Mock)) -> (Shared, String) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
    let mut mock = Mock {
        base: base.clone(),
        ..Mock::default()
    };
    configure(&mut mock);
    let mock = Arc::new(Mutex::new(mock));
    let shared = mock.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let mock = shared.clone();
            tokio::spawn(async move {
                let service = service_fn(move |req| {
                    let mock = mock.clone();
                    async move { Ok::<_, std::convert::Infallible>(handle(mock, req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    (mock, format!("{base}/mcp"))
}
