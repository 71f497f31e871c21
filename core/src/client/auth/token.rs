//! The token endpoint: exchanging a code or a refresh token, with the
//! client authentication the server supports (`none`, `client_secret_basic`,
//! `client_secret_post`).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use std::time::{SystemTime, UNIX_EPOCH};

use super::AuthError;
use super::metadata::ServerMetadata;
use super::store::{ClientCredentials, StoredTokens};
use crate::Error;
use crate::net::fetch::{Body, Fetcher};
use crate::net::urls;

/// How the client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClientAuth {
    None,
    Basic,
    Post,
    PrivateKeyJwt,
}

/// The registration's method when it has one; else, for a client with a
/// secret, Basic or post as the server supports them (Basic first: RFC
/// 6749 §2.3.1 makes it the one servers must support); else none.
pub(crate) fn client_auth(client: &ClientCredentials, server: &ServerMetadata) -> ClientAuth {
    if client.private_key_pem.is_some() {
        return ClientAuth::PrivateKeyJwt;
    }
    if client.client_secret.is_none() {
        return ClientAuth::None;
    }
    match client.token_endpoint_auth_method.as_deref() {
        Some("client_secret_basic") => return ClientAuth::Basic,
        Some("client_secret_post") => return ClientAuth::Post,
        Some("none") => return ClientAuth::None,
        _ => {}
    }
    let supports = |m: &str| server.token_endpoint_auth_methods.iter().any(|s| s == m);
    if supports("client_secret_basic") {
        ClientAuth::Basic
    } else if supports("client_secret_post") {
        ClientAuth::Post
    } else {
        ClientAuth::None
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `Basic base64(urlencode(id):urlencode(secret))` (RFC 6749 §2.3.1).
pub(crate) fn basic_header(client_id: &str, secret: &str) -> String {
    let pair = format!("{}:{}", urls::encode(client_id), urls::encode(secret));
    format!("Basic {}", STANDARD.encode(pair))
}

/// POSTs a grant; returns the tokens (keeping `previous_refresh` when the
/// server does not rotate it).
pub(crate) async fn request(
    fetcher: &Fetcher,
    server: &ServerMetadata,
    client: &ClientCredentials,
    grant: &[(&str, &str)],
    scopes: &[String],
    previous_refresh: Option<&str>,
    dpop: Option<&super::dpop::DpopKey>,
) -> Result<StoredTokens, Error> {
    let auth = client_auth(client, server);
    let mut pairs: Vec<(&str, &str)> = grant.to_vec();
    if auth != ClientAuth::Basic {
        pairs.push(("client_id", &client.client_id));
    }
    let secret = client.client_secret.as_deref().unwrap_or("");
    if auth == ClientAuth::Post {
        pairs.push(("client_secret", secret));
    }
    let assertion = match (&auth, &client.private_key_pem) {
        (ClientAuth::PrivateKeyJwt, Some(pem)) => Some(super::jwt::client_assertion(
            &client.client_id,
            &server.issuer,
            pem,
            now_secs(),
        )?),
        _ => None,
    };
    if let Some(assertion) = &assertion {
        pairs.push(("client_assertion_type", super::jwt::ASSERTION_TYPE));
        pairs.push(("client_assertion", assertion));
    }
    let header = (auth == ClientAuth::Basic).then(|| basic_header(&client.client_id, secret));
    let form = urls::form(&pairs);
    let mut answer = None;
    // At most one retry: a server asking for a DPoP nonce (RFC 9449 §8).
    for _ in 0..2 {
        let proof = match dpop {
            Some(key) => Some(key.proof("POST", &server.token_endpoint, None)?),
            None => None,
        };
        let got = fetcher
            .post(
                &server.token_endpoint,
                Body::Form(form.clone()),
                header.as_deref(),
                proof.as_deref(),
            )
            .await?;
        let wants_nonce = got.status == 400
            && got.json().and_then(|d| d.get("error").cloned())
                == Some(Value::from("use_dpop_nonce"));
        match (dpop, &got.dpop_nonce) {
            (Some(key), Some(nonce)) if wants_nonce && answer.is_none() => {
                key.remember_nonce(&server.token_endpoint, nonce);
                answer = Some(got);
            }
            _ => {
                answer = Some(got);
                break;
            }
        }
    }
    let Some(answer) = answer else {
        return Err(AuthError::Token("no answer".into()).into());
    };
    let doc = answer.json().unwrap_or_default();
    if !answer.ok() {
        let error = doc.get("error").and_then(Value::as_str).unwrap_or("");
        let description = doc
            .get("error_description")
            .and_then(Value::as_str)
            .unwrap_or("");
        return Err(
            AuthError::Token(format!("HTTP {} {error} {description}", answer.status)).into(),
        );
    }
    let access_token = doc
        .get("access_token")
        .and_then(Value::as_str)
        .ok_or_else(|| AuthError::Token("no access_token in the answer".into()))?;
    let token_type = doc.get("token_type").and_then(Value::as_str).unwrap_or("");
    let bound = dpop.is_some() && token_type.eq_ignore_ascii_case("dpop");
    if !token_type.eq_ignore_ascii_case("bearer") && !bound {
        return Err(AuthError::Token(format!("unsupported token_type {token_type:?}")).into());
    }
    let now = now_secs();
    Ok(StoredTokens {
        access_token: access_token.to_owned(),
        refresh_token: doc
            .get("refresh_token")
            .and_then(Value::as_str)
            .or(previous_refresh)
            .map(str::to_owned),
        expires_at: doc
            .get("expires_in")
            .and_then(Value::as_u64)
            .map(|s| now + s),
        scopes: scopes.to_vec(),
        issuer: server.issuer.clone(),
        token_type: bound.then(|| "DPoP".to_owned()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(methods: &[&str]) -> ServerMetadata {
        ServerMetadata {
            issuer: "http://as".into(),
            authorization_endpoint: "http://as/authorize".into(),
            token_endpoint: "http://as/token".into(),
            registration_endpoint: None,
            scopes_supported: None,
            token_endpoint_auth_methods: methods.iter().map(|m| (*m).to_owned()).collect(),
            client_id_metadata_document_supported: false,
            iss_parameter_supported: false,
            pkce_s256: true,
        }
    }

    fn client(secret: Option<&str>, method: Option<&str>) -> ClientCredentials {
        ClientCredentials {
            client_id: "c".into(),
            client_secret: secret.map(str::to_owned),
            token_endpoint_auth_method: method.map(str::to_owned),
            ..Default::default()
        }
    }

    #[test]
    fn the_method_follows_registration_then_server_support() {
        let both = server(&["client_secret_post", "client_secret_basic"]);
        assert_eq!(client_auth(&client(None, None), &both), ClientAuth::None);
        assert_eq!(
            client_auth(&client(Some("s"), None), &both),
            ClientAuth::Basic
        );
        assert_eq!(
            client_auth(&client(Some("s"), None), &server(&["client_secret_post"])),
            ClientAuth::Post
        );
        assert_eq!(
            client_auth(&client(Some("s"), Some("client_secret_post")), &both),
            ClientAuth::Post
        );
        assert_eq!(
            client_auth(&client(Some("s"), None), &server(&["none"])),
            ClientAuth::None
        );
        let keyed = ClientCredentials {
            private_key_pem: Some("pem".into()),
            ..client(None, None)
        };
        assert_eq!(client_auth(&keyed, &both), ClientAuth::PrivateKeyJwt);
    }

    #[test]
    fn basic_credentials_are_form_encoded_first() {
        assert_eq!(
            basic_header("a b", "p:w"),
            format!("Basic {}", STANDARD.encode("a%20b:p%3Aw"))
        );
    }
}
