//! Getting a client id at an authorization server, in the MCP order:
//! pre-registered credentials, a saved registration, a client ID metadata
//! document (the URL is the id), dynamic client registration (RFC 7591).

use serde_json::{Value, json};

use super::fetch::{Body, Fetcher};
use super::metadata::ServerMetadata;
use super::store::ClientCredentials;
use super::{AuthError, OAuthOptions};
use crate::Error;

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

/// The client's credentials at `server`.
pub(crate) async fn client_for(
    fetcher: &Fetcher,
    options: &OAuthOptions,
    server: &ServerMetadata,
) -> Result<ClientCredentials, Error> {
    if let Some(pre) = options
        .pre_registered
        .iter()
        .find(|p| p.issuer.as_deref().is_none_or(|i| i == server.issuer))
    {
        return Ok(pre.credentials.clone());
    }
    if let Some(saved) = options.store.load_client(&server.issuer) {
        return Ok(saved);
    }
    if server.client_id_metadata_document_supported
        && let Some(url) = &options.client_metadata_url
    {
        return Ok(ClientCredentials {
            client_id: url.clone(),
            client_secret: None,
            token_endpoint_auth_method: Some("none".into()),
            private_key_pem: None,
        });
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
    };
    options.store.save_client(&server.issuer, &credentials);
    Ok(credentials)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_and_custom_schemes_are_native() {
        assert_eq!(application_type("http://localhost:3000/callback"), "native");
        assert_eq!(application_type("http://127.0.0.1:9/cb"), "native");
        assert_eq!(application_type("com.example.app:/cb"), "native");
        assert_eq!(application_type("https://app.example.com/cb"), "web");
    }
}
