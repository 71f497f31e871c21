//! Getting a client id at an authorization server, in the MCP order:
//! pre-registered credentials, a saved registration, a client ID metadata
//! document (the URL is the id), dynamic client registration (RFC 7591).

use serde_json::{Map, Value, json};

use super::metadata::ServerMetadata;
use super::store::ClientCredentials;
use super::{AuthError, OAuthOptions};
use crate::Error;
use crate::net::fetch::{Body, Fetcher};

/// The token endpoint authentication a registration asks for: a public
/// client (`none`) when the server takes it, else a secret in a Basic
/// header, else in the body.
pub(crate) fn requested_auth_method(server: &ServerMetadata) -> &'static str {
    for method in ["none", "client_secret_basic", "client_secret_post"] {
        if server
            .token_endpoint_auth_methods
            .iter()
            .any(|m| m == method)
        {
            return method;
        }
    }
    "none"
}

/// `native` for loopback and custom-scheme redirects (an app on the
/// user's machine), `web` for a redirect to a remote https site (SEP-837).
pub(crate) fn application_type(redirect_uri: &str) -> &'static str {
    let loopback = ["http://localhost", "http://127.0.0.1", "http://[::1]"];
    if redirect_uri.starts_with("https://") && !loopback.iter().any(|l| redirect_uri.starts_with(l))
    {
        "web"
    } else {
        "native"
    }
}

/// What a client id is wanted for: whether the registration must hold
/// the redirect URI of the options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// An authorization request: the server sends the user back to
    /// `options.redirect_uri` only if the client registered it.
    Authorize,
    /// A token request without a redirect (a refresh, client credentials,
    /// jwt-bearer): any registration of the client will do, and a refresh
    /// token only works with the client it was issued to.
    Token,
}

/// Whether a saved registration can be used for `purpose`: one made for
/// other redirect URIs cannot start an authorization (the server refuses
/// the request); one that recorded none (pre-registered, or saved before
/// they were recorded) is used as it is.
fn fits(saved: &ClientCredentials, purpose: Purpose, redirect_uri: &str) -> bool {
    purpose == Purpose::Token
        || saved.redirect_uris.is_empty()
        || saved.redirect_uris.iter().any(|u| u == redirect_uri)
}

/// The client's credentials at `server`, for `purpose`.
pub(crate) async fn client_for(
    fetcher: &Fetcher,
    options: &OAuthOptions,
    server: &ServerMetadata,
    purpose: Purpose,
) -> Result<ClientCredentials, Error> {
    if let Some(pre) = options
        .pre_registered
        .iter()
        .find(|p| p.issuer.as_deref().is_none_or(|i| i == server.issuer))
    {
        return Ok(pre.credentials.clone());
    }
    let stale = match options.store.load_client(&server.issuer) {
        Some(saved) if fits(&saved, purpose, &options.redirect_uri) => return Ok(saved),
        Some(saved) => {
            // A desktop client whose loopback port changed (another
            // --redirect-port, a free port picked per run).
            tracing::info!(
                issuer = %server.issuer,
                client_id = %saved.client_id,
                registered = ?saved.redirect_uris,
                redirect_uri = %options.redirect_uri,
                "the saved client registration is for other redirect URIs; registering again"
            );
            true
        }
        None => false,
    };
    if server.client_id_metadata_document_supported
        && let Some(url) = &options.client_metadata_url
    {
        let credentials = ClientCredentials {
            client_id: url.clone(),
            token_endpoint_auth_method: Some("none".into()),
            ..Default::default()
        };
        // The document lists its own redirect URIs (none recorded here:
        // the id is the same for any); it replaces the stale registration
        // so that the next login does not find that one again.
        if stale {
            options.store.save_client(&server.issuer, &credentials);
        }
        return Ok(credentials);
    }
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(AuthError::Registration(format!(
            "{} offers neither dynamic registration nor client ID metadata documents, \
             and no pre-registered client is configured for it",
            server.issuer
        ))
        .into());
    };
    let method = requested_auth_method(server);
    let request = json!({
        "client_name": options.client_name,
        "redirect_uris": [options.redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": application_type(&options.redirect_uri),
    });
    let answer = fetcher
        .post(endpoint, Body::Json(request), None, None)
        .await?;
    let doc = answer.json().filter(|_| answer.ok()).ok_or_else(|| {
        AuthError::Registration(format!(
            "{endpoint} answered HTTP {}: {}",
            answer.status,
            String::from_utf8_lossy(&answer.body[..answer.body.len().min(200)])
        ))
    })?;
    let client_id = doc
        .get("client_id")
        .and_then(Value::as_str)
        .ok_or_else(|| AuthError::Registration(format!("{endpoint} returned no client_id")))?;
    let credentials = ClientCredentials {
        client_id: client_id.to_owned(),
        client_secret: doc
            .get("client_secret")
            .and_then(Value::as_str)
            .map(str::to_owned),
        token_endpoint_auth_method: Some(
            doc.get("token_endpoint_auth_method")
                .and_then(Value::as_str)
                .unwrap_or(method)
                .to_owned(),
        ),
        private_key_pem: None,
        redirect_uris: registered_redirects(&doc, &options.redirect_uri),
    };
    options.store.save_client(&server.issuer, &credentials);
    Ok(credentials)
}

/// The redirect URIs a registration holds: the server's answer is
/// authoritative (RFC 7591 §3.2.1 returns the registered metadata, which
/// the server may have changed); the one asked for when it says none.
fn registered_redirects(answer: &Map<String, Value>, asked: &str) -> Vec<String> {
    let answered: Vec<String> = answer
        .get("redirect_uris")
        .and_then(Value::as_array)
        .map(|uris| {
            uris.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    if answered.is_empty() {
        vec![asked.to_owned()]
    } else {
        answered
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::auth::{MemoryTokenStore, TokenStore};
    use crate::net::TlsOptions;
    use std::sync::Arc;

    const AS: &str = "http://127.0.0.1:9";
    const HERE: &str = "http://127.0.0.1:33418/callback";

    /// A server whose registration endpoint nothing listens on: a test
    /// that reaches it fails there.
    fn server(metadata_documents: bool) -> ServerMetadata {
        ServerMetadata {
            issuer: AS.into(),
            authorization_endpoint: format!("{AS}/authorize"),
            token_endpoint: format!("{AS}/token"),
            registration_endpoint: Some(format!("{AS}/register")),
            scopes_supported: None,
            token_endpoint_auth_methods: vec!["none".into()],
            client_id_metadata_document_supported: metadata_documents,
            iss_parameter_supported: false,
            pkce_s256: true,
        }
    }

    fn saved(redirect_uris: &[&str]) -> (OAuthOptions, Arc<MemoryTokenStore>, ClientCredentials) {
        let store = Arc::new(MemoryTokenStore::default());
        let client = ClientCredentials {
            client_id: "saved".into(),
            redirect_uris: redirect_uris.iter().map(|u| (*u).to_owned()).collect(),
            ..Default::default()
        };
        store.save_client(AS, &client);
        let options =
            OAuthOptions::new(HERE, |url: String| async move { Ok(url) }).with_store(store.clone());
        (options, store, client)
    }

    async fn client(
        options: &OAuthOptions,
        server: &ServerMetadata,
        purpose: Purpose,
    ) -> Result<ClientCredentials, Error> {
        client_for(
            &Fetcher::new(TlsOptions::default()),
            options,
            server,
            purpose,
        )
        .await
    }

    #[tokio::test]
    async fn a_registration_saved_without_redirect_uris_is_reused() {
        let (options, _, saved) = saved(&[]);
        assert_eq!(
            client(&options, &server(false), Purpose::Authorize)
                .await
                .unwrap(),
            saved
        );
    }

    #[tokio::test]
    async fn a_registration_for_this_redirect_uri_is_reused() {
        let (options, _, saved) = saved(&["http://127.0.0.1:1/cb", HERE]);
        assert_eq!(
            client(&options, &server(false), Purpose::Authorize)
                .await
                .unwrap(),
            saved
        );
    }

    #[tokio::test]
    async fn a_registration_for_another_redirect_uri_serves_token_requests() {
        let (options, _, saved) = saved(&["http://127.0.0.1:1/cb"]);
        assert_eq!(
            client(&options, &server(false), Purpose::Token)
                .await
                .unwrap(),
            saved
        );
    }

    #[tokio::test]
    async fn a_registration_for_another_redirect_uri_is_replaced() {
        // Dynamic registration is tried (nothing listens: an error)...
        let (options, store, saved) = saved(&["http://127.0.0.1:1/cb"]);
        let err = client(&options, &server(false), Purpose::Authorize)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("cannot connect"), "{err}");
        assert_eq!(store.load_client(AS), Some(saved));
        // ...or the metadata document, which then replaces the saved one.
        let options = options.with_client_metadata_url("https://app.example/client.json");
        let got = client(&options, &server(true), Purpose::Authorize)
            .await
            .unwrap();
        assert_eq!(got.client_id, "https://app.example/client.json");
        assert_eq!(store.load_client(AS), Some(got));
    }

    #[test]
    fn the_servers_redirect_uris_are_authoritative() {
        let answer = |v: Value| v.as_object().cloned().unwrap();
        assert_eq!(
            registered_redirects(&answer(json!({"redirect_uris": ["http://x/cb"]})), HERE),
            ["http://x/cb"]
        );
        assert_eq!(
            registered_redirects(&answer(json!({"client_id": "c"})), HERE),
            [HERE]
        );
    }

    #[test]
    fn loopback_and_custom_schemes_are_native() {
        assert_eq!(application_type("http://localhost:3000/callback"), "native");
        assert_eq!(application_type("http://127.0.0.1:9/cb"), "native");
        assert_eq!(application_type("com.example.app:/cb"), "native");
        assert_eq!(application_type("https://app.example.com/cb"), "web");
    }
}
