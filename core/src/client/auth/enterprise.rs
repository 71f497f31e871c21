//! Enterprise-managed authorization (SEP-990): the token exchange (RFC
//! 8693) at the enterprise identity provider that turns the user's ID token
//! into an identity assertion grant (ID-JAG) for one authorization server
//! and resource.

use serde_json::Value;

use super::{AssertionRequest, AuthError, token};
use crate::Error;
use crate::net::TlsOptions;
use crate::net::fetch::{Body, Fetcher};
use crate::net::urls;

/// The enterprise identity provider and the user's ID token from it.
#[derive(Clone, PartialEq, Eq)]
pub struct EnterpriseIdp {
    /// The IdP's token endpoint (token exchange).
    pub token_endpoint: String,
    /// This client's id at the IdP.
    pub client_id: String,
    /// This client's secret at the IdP, if it has one (sent Basic).
    pub client_secret: Option<String>,
    /// The user's OpenID Connect ID token from the IdP's login.
    pub id_token: String,
}

impl std::fmt::Debug for EnterpriseIdp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The ID token and secret are credentials: never in logs.
        f.debug_struct("EnterpriseIdp")
            .field("token_endpoint", &self.token_endpoint)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

const TOKEN_EXCHANGE: &str = "urn:ietf:params:oauth:grant-type:token-exchange";
const ID_TOKEN: &str = "urn:ietf:params:oauth:token-type:id_token";
const ID_JAG: &str = "urn:ietf:params:oauth:token-type:id-jag";

/// Exchanges the ID token for an ID-JAG whose audience is the
/// authorization server and whose resource is the MCP server.
pub(crate) async fn id_jag(
    idp: &EnterpriseIdp,
    request: &AssertionRequest,
    tls: &TlsOptions,
) -> Result<String, Error> {
    let mut pairs = vec![
        ("grant_type", TOKEN_EXCHANGE),
        ("requested_token_type", ID_JAG),
        ("subject_token", idp.id_token.as_str()),
        ("subject_token_type", ID_TOKEN),
        ("audience", request.issuer.as_str()),
        ("resource", request.resource.as_str()),
    ];
    let header = match &idp.client_secret {
        Some(secret) => Some(token::basic_header(&idp.client_id, secret)),
        None => {
            pairs.push(("client_id", idp.client_id.as_str()));
            None
        }
    };
    let answer = Fetcher::new(tls.clone())
        .post(
            &idp.token_endpoint,
            Body::Form(urls::form(&pairs)),
            header.as_deref(),
            None,
        )
        .await?;
    let doc = answer.json().unwrap_or_default();
    let issued = doc.get("issued_token_type").and_then(Value::as_str);
    match doc.get("access_token").and_then(Value::as_str) {
        Some(jag) if answer.ok() && issued.is_none_or(|t| t == ID_JAG) => Ok(jag.to_owned()),
        _ => Err(AuthError::Token(format!(
            "the identity provider's token exchange answered HTTP {}: {}",
            answer.status,
            doc.get("error")
                .and_then(Value::as_str)
                .unwrap_or("no ID-JAG")
        ))
        .into()),
    }
}
