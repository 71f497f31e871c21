//! The client's OAuth flow end to end against a small in-process protected
//! server and authorization server (one hyper listener, routed by path):
//! a 401 leads to discovery, registration, PKCE and a code exchange, and
//! the token is then sent on every request; a refused token is refreshed;
//! 403 `insufficient_scope` re-authorizes with the larger scope, at most
//! `max_authorizations` times; a failing user callback is an auth error.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use ferromcp::ErrorKind;
use ferromcp::client::auth::{OAuthOptions, headless_authorize};
use ferromcp::client::{Client, ClientOptions, EraPreference, TlsOptions};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How the mock behaves and what it saw.
#[derive(Default)]
struct Mock {
    base: String,
    /// Scope `tools/call` needs (403 `insufficient_scope` without it).
    call_scope: Option<String>,
    /// Never accept any token for `tools/call` (the step-up never works).
    always_forbidden: bool,
    /// `expires_in` of issued tokens (3600 when 0).
    expires_in: u64,
    /// Tokens the server refuses from now on (expired).
    revoked: Vec<String>,
    /// token -> scopes.
    tokens: HashMap<String, Vec<String>>,
    issued: usize,
    challenge: Option<String>,
    authorize_scopes: Vec<String>,
    grants: Vec<String>,
    resources: Vec<String>,
    bearer_seen: Vec<Option<String>>,
}

type Shared = Arc<Mutex<Mock>>;

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
        "/register" => json_response(
            StatusCode::CREATED,
            json!({"client_id": "registered", "client_secret": "s3cret"}),
        ),
        "/authorize" => {
            let q = form(query.as_bytes());
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

async fn serve(configure: impl FnOnce(&mut Mock)) -> (Shared, String) {
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

fn options(oauth: OAuthOptions) -> ClientOptions {
    ClientOptions {
        oauth: Some(oauth),
        era: EraPreference::Modern,
        timeout: Some(Duration::from_secs(10)),
        ..ClientOptions::default()
    }
}

fn headless() -> OAuthOptions {
    OAuthOptions::new("http://127.0.0.1:1/callback", |url: String| async move {
        headless_authorize(&url, &TlsOptions::default()).await
    })
}

#[tokio::test]
async fn a_401_logs_in_once_and_the_token_goes_on_every_request() {
    let (mock, url) = serve(|_| {}).await;
    let client = Client::connect_http_with(&url, options(headless()))
        .await
        .unwrap();
    client.list_all_tools().await.unwrap();
    client.call_tool("echo", json!({})).await.unwrap();
    let m = mock.lock().unwrap();
    assert_eq!(m.grants, ["authorization_code"]);
    // The metadata's scopes_supported, exactly the published resource.
    assert_eq!(m.authorize_scopes, ["read"]);
    assert_eq!(m.resources, [url.as_str()]);
    assert_eq!(
        m.bearer_seen,
        [None, Some("token-1".into()), Some("token-1".into())]
    );
}

#[tokio::test]
async fn a_refused_token_is_refreshed_without_asking_the_user_again() {
    let (mock, url) = serve(|_| {}).await;
    let client = Client::connect_http_with(&url, options(headless()))
        .await
        .unwrap();
    client.list_all_tools().await.unwrap();
    mock.lock().unwrap().revoked.push("token-1".into());
    client.call_tool("echo", json!({})).await.unwrap();
    let m = mock.lock().unwrap();
    assert_eq!(m.grants, ["authorization_code", "refresh_token"]);
    assert_eq!(m.authorize_scopes.len(), 1);
    assert_eq!(m.bearer_seen.last(), Some(&Some("token-2".into())));
}

#[tokio::test]
async fn a_token_about_to_expire_is_refreshed_before_it_is_sent() {
    // 10 s is inside the client's 30 s margin: every token counts as expiring.
    let (mock, url) = serve(|m| m.expires_in = 10).await;
    let client = Client::connect_http_with(&url, options(headless()))
        .await
        .unwrap();
    client.list_all_tools().await.unwrap();
    client.call_tool("echo", json!({})).await.unwrap();
    let m = mock.lock().unwrap();
    assert_eq!(
        m.grants,
        ["authorization_code", "refresh_token", "refresh_token"]
    );
    assert_eq!(
        m.bearer_seen,
        [None, Some("token-2".into()), Some("token-3".into())]
    );
}

#[tokio::test]
async fn insufficient_scope_steps_up_keeping_earlier_scopes() {
    let (mock, url) = serve(|m| m.call_scope = Some("write".into())).await;
    let client = Client::connect_http_with(&url, options(headless()))
        .await
        .unwrap();
    client.list_all_tools().await.unwrap();
    client.call_tool("echo", json!({})).await.unwrap();
    let m = mock.lock().unwrap();
    assert_eq!(m.authorize_scopes, ["read", "read write"]);
}

#[tokio::test]
async fn a_server_that_keeps_refusing_ends_in_an_auth_error_after_the_limit() {
    let (mock, url) = serve(|m| {
        m.call_scope = Some("write".into());
        m.always_forbidden = true;
    })
    .await;
    let client = Client::connect_http_with(&url, options(headless()))
        .await
        .unwrap();
    client.list_all_tools().await.unwrap();
    let err = client.call_tool("echo", json!({})).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err}");
    // One login for tools/list; then the limit is per request: tools/call
    // re-authorized three times and gave up.
    assert_eq!(mock.lock().unwrap().authorize_scopes.len(), 1 + 3);
}

#[tokio::test]
async fn a_failing_user_callback_is_an_auth_error() {
    let (_mock, url) = serve(|_| {}).await;
    let oauth = OAuthOptions::new("http://127.0.0.1:1/callback", |_url: String| async move {
        Err(ferromcp::Error::Cancelled)
    });
    let client = Client::connect_http_with(&url, options(oauth))
        .await
        .unwrap();
    let err = client.list_all_tools().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err}");
    assert!(err.to_string().contains("callback"), "{err}");
}

#[tokio::test]
async fn a_client_credentials_client_gets_its_token_without_a_user() {
    let (mock, url) = serve(|_| {}).await;
    let oauth = OAuthOptions::client_credentials("service", Some("s3cret".into()));
    let client = Client::connect_http_with(&url, options(oauth))
        .await
        .unwrap();
    client.call_tool("echo", json!({})).await.unwrap();
    let m = mock.lock().unwrap();
    assert_eq!(m.grants, ["client_credentials"]);
    assert!(m.authorize_scopes.is_empty());
    assert_eq!(m.resources, [url.as_str()]);
    assert_eq!(m.bearer_seen.last(), Some(&Some("token-1".into())));
}

/// A login as slow as a person: the callback waits before answering.
fn slow_user(delay: Duration) -> OAuthOptions {
    OAuthOptions::new(
        "http://127.0.0.1:1/callback",
        move |url: String| async move {
            tokio::time::sleep(delay).await;
            headless_authorize(&url, &TlsOptions::default()).await
        },
    )
}

#[tokio::test]
async fn the_users_login_time_does_not_count_against_the_call_timeout() {
    let (_mock, url) = serve(|_| {}).await;
    let options = ClientOptions {
        timeout: Some(Duration::from_millis(400)),
        ..options(slow_user(Duration::from_millis(1200)))
    };
    let client = Client::connect_http_with(&url, options).await.unwrap();
    client.call_tool("echo", json!({})).await.unwrap();
}

#[tokio::test]
async fn the_users_login_time_does_not_count_against_the_era_probe() {
    let (mock, url) = serve(|_| {}).await;
    let options = ClientOptions {
        era: EraPreference::Auto,
        probe_timeout: Duration::from_millis(400),
        ..options(slow_user(Duration::from_millis(1200)))
    };
    let client = Client::connect_http_with(&url, options).await.unwrap();
    client.call_tool("echo", json!({})).await.unwrap();
    // The era probe's 401 led to the login, and its answer came after it:
    // the server is taken for what it is, not for a silent legacy one.
    assert_eq!(client.is_legacy(), Some(false));
    assert_eq!(mock.lock().unwrap().grants, ["authorization_code"]);
}
