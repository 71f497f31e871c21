//! The client's OAuth flow end to end against a small in-process protected
//! server and authorization server (one hyper listener, routed by path):
//! a 401 leads to discovery, registration, PKCE and a code exchange, and
//! the token is then sent on every request; a refused token is refreshed;
//! 403 `insufficient_scope` re-authorizes with the larger scope, at most
//! `max_authorizations` times; a failing user callback is an auth error; a
//! saved registration is not reused for a redirect URI it does not hold.

use ferromcp_testkit::oauth_mock;

use ferromcp::ErrorKind;
use ferromcp::client::auth::{MemoryTokenStore, OAuthOptions, TokenStore, headless_authorize};
use ferromcp::client::{Client, ClientOptions, EraPreference, TlsOptions};
use oauth_mock::serve;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

fn options(oauth: OAuthOptions) -> ClientOptions {
    ClientOptions {
        oauth: Some(oauth),
        era: EraPreference::Modern,
        timeout: Some(Duration::from_secs(10)),
        ..ClientOptions::default()
    }
}

fn headless() -> OAuthOptions {
    headless_at("http://127.0.0.1:1/callback")
}

/// A user who approves at once, coming back to `redirect_uri` (the
/// approval is the redirect itself: nothing listens there).
fn headless_at(redirect_uri: &str) -> OAuthOptions {
    OAuthOptions::new(redirect_uri, |url: String| async move {
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

const REDIRECT_A: &str = "http://127.0.0.1:33418/callback";
const REDIRECT_B: &str = "http://127.0.0.1:40000/callback";

/// Logs in to `url` with `redirect_uri`, keeping registrations (and
/// tokens) in `store`, and makes one protected request.
async fn log_in(url: &str, redirect_uri: &str, store: &Arc<MemoryTokenStore>) {
    let oauth = headless_at(redirect_uri).with_store(store.clone());
    let client = Client::connect_http_with(url, options(oauth))
        .await
        .unwrap();
    client.list_all_tools().await.unwrap();
    client.close().await;
}

#[tokio::test]
async fn a_login_with_another_redirect_uri_registers_again() {
    let (mock, url) = serve(|_| {}).await;
    let store = Arc::new(MemoryTokenStore::default());
    log_in(&url, REDIRECT_A, &store).await;
    let first = store.load_client(&mock.lock().unwrap().base).unwrap();
    assert_eq!(first.redirect_uris, [REDIRECT_A]);

    // As `ferromcp login` does: a new login, the registration kept.
    store.clear_tokens(&url);
    log_in(&url, REDIRECT_B, &store).await;
    let m = mock.lock().unwrap();
    assert_eq!(
        m.registrations,
        [
            ("registered-1".to_owned(), vec![REDIRECT_A.to_owned()]),
            ("registered-2".to_owned(), vec![REDIRECT_B.to_owned()]),
        ]
    );
    assert_eq!(m.authorize_redirects, [REDIRECT_A, REDIRECT_B]);
    assert_eq!(m.grants, ["authorization_code", "authorization_code"]);
    let saved = store.load_client(&m.base).unwrap();
    assert_eq!(saved.client_id, "registered-2");
    assert_eq!(saved.redirect_uris, [REDIRECT_B]);
}

#[tokio::test]
async fn a_login_with_the_same_redirect_uri_reuses_the_registration() {
    let (mock, url) = serve(|_| {}).await;
    let store = Arc::new(MemoryTokenStore::default());
    log_in(&url, REDIRECT_A, &store).await;
    store.clear_tokens(&url);
    log_in(&url, REDIRECT_A, &store).await;
    let m = mock.lock().unwrap();
    assert_eq!(m.registrations.len(), 1);
    assert_eq!(m.authorize_redirects, [REDIRECT_A, REDIRECT_A]);
}

#[tokio::test]
async fn a_refresh_uses_the_saved_client_whatever_the_redirect_uri() {
    // Tokens from a login on A; a later run configured with B (the CLI's
    // ordinary commands use the default port) refreshes them with the
    // client they were issued to, without registering or asking the user.
    let (mock, url) = serve(|_| {}).await;
    let store = Arc::new(MemoryTokenStore::default());
    log_in(&url, REDIRECT_A, &store).await;
    mock.lock().unwrap().revoked.push("token-1".into());
    log_in(&url, REDIRECT_B, &store).await;
    let m = mock.lock().unwrap();
    assert_eq!(m.registrations.len(), 1);
    assert_eq!(m.grants, ["authorization_code", "refresh_token"]);
    assert_eq!(m.authorize_redirects, [REDIRECT_A]);
    assert_eq!(
        store.load_client(&m.base).unwrap().client_id,
        "registered-1"
    );
}

/// A client that only uses stored logins (`stored_only`, as the CLI's
/// ordinary commands), with a user callback that must never run.
fn stored_only(store: &Arc<MemoryTokenStore>) -> OAuthOptions {
    let mut oauth = OAuthOptions::new(REDIRECT_B, |url: String| async move {
        panic!("a stored-only client asked the user: {url}")
    })
    .with_store(store.clone());
    oauth.stored_only = Some("log in with `app login` first".into());
    oauth
}

#[tokio::test]
async fn a_stored_only_client_without_a_login_registers_nothing_and_says_so() {
    let (mock, url) = serve(|_| {}).await;
    let store = Arc::new(MemoryTokenStore::default());
    let client = Client::connect_http_with(&url, options(stored_only(&store)))
        .await
        .unwrap();
    let err = client.list_all_tools().await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Auth, "{err}");
    assert!(err.to_string().contains("`app login`"), "{err}");
    let m = mock.lock().unwrap();
    assert!(m.registrations.is_empty(), "{:?}", m.registrations);
    assert!(m.grants.is_empty() && m.authorize_redirects.is_empty());
}

#[tokio::test]
async fn a_stored_only_client_uses_and_refreshes_a_login_made_elsewhere() {
    let (mock, url) = serve(|_| {}).await;
    let store = Arc::new(MemoryTokenStore::default());
    log_in(&url, REDIRECT_A, &store).await;
    let client = Client::connect_http_with(&url, options(stored_only(&store)))
        .await
        .unwrap();
    client.list_all_tools().await.unwrap();
    mock.lock().unwrap().revoked.push("token-1".into());
    client.call_tool("echo", json!({})).await.unwrap();
    {
        let m = mock.lock().unwrap();
        assert_eq!(m.grants, ["authorization_code", "refresh_token"]);
        assert_eq!(m.registrations.len(), 1);
    }
    // A step-up is a new authorization: refused the same way.
    mock.lock().unwrap().call_scope = Some("write".into());
    let err = client.call_tool("echo", json!({})).await.unwrap_err();
    assert!(err.to_string().contains("`app login`"), "{err}");
    let m = mock.lock().unwrap();
    assert_eq!(m.registrations.len(), 1);
    assert_eq!(m.authorize_redirects, [REDIRECT_A]);
}
