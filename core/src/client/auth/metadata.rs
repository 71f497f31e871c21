//! Discovery: protected resource metadata (RFC 9728) and authorization
//! server metadata (RFC 8414, OpenID Connect Discovery), each checked
//! before anything in it is trusted.

use serde_json::{Map, Value};

use super::AuthError;
use crate::Error;
use crate::net::fetch::Fetcher;
use crate::net::urls;

/// What the flow uses of a protected resource metadata document.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ResourceMetadata {
    /// Sent as the `resource` parameter exactly as published (RFC 8707).
    pub(crate) resource: String,
    pub(crate) authorization_servers: Vec<String>,
    pub(crate) scopes_supported: Option<Vec<String>>,
}

/// What the flow uses of an authorization server's metadata.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServerMetadata {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    pub(crate) registration_endpoint: Option<String>,
    pub(crate) scopes_supported: Option<Vec<String>>,
    /// RFC 8414 default when absent: `client_secret_basic` only.
    pub(crate) token_endpoint_auth_methods: Vec<String>,
    pub(crate) client_id_metadata_document_supported: bool,
    /// RFC 9207: the server promises `iss` in every authorization response.
    pub(crate) iss_parameter_supported: bool,
    /// `S256` is among `code_challenge_methods_supported`.
    pub(crate) pkce_s256: bool,
}

impl ServerMetadata {
    /// MCP: without advertised S256 support an authorization-code client
    /// must not proceed (the client-credentials grant has no PKCE).
    pub(crate) fn require_pkce(&self) -> Result<(), AuthError> {
        if self.pkce_s256 {
            return Ok(());
        }
        Err(AuthError::ServerMetadata {
            issuer: self.issuer.clone(),
            reason: "PKCE S256 is not advertised (code_challenge_methods_supported)".into(),
        })
    }
}

fn strings(map: &Map<String, Value>, key: &str) -> Option<Vec<String>> {
    map.get(key)?.as_array().map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    })
}

fn string(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key)?.as_str().map(str::to_owned)
}

impl ResourceMetadata {
    /// Checks one document against the server it was fetched for.
    pub(crate) fn from_json(
        doc: &Map<String, Value>,
        server_url: &str,
    ) -> Result<ResourceMetadata, AuthError> {
        let resource = string(doc, "resource")
            .ok_or_else(|| AuthError::ResourceMetadata("no `resource`".into()))?;
        if !urls::resource_covers(&resource, server_url) {
            return Err(AuthError::ResourceMismatch {
                expected: server_url.to_owned(),
                found: resource,
            });
        }
        let authorization_servers = strings(doc, "authorization_servers").unwrap_or_default();
        if authorization_servers.is_empty() {
            return Err(AuthError::ResourceMetadata(
                "no `authorization_servers`".into(),
            ));
        }
        Ok(ResourceMetadata {
            resource,
            authorization_servers,
            scopes_supported: strings(doc, "scopes_supported"),
        })
    }

    /// Fetches the document the challenge named, else the well-known
    /// locations in order.
    pub(crate) async fn discover(
        fetcher: &Fetcher,
        server_url: &str,
        from_challenge: Option<&str>,
    ) -> Result<ResourceMetadata, Error> {
        let candidates = match from_challenge {
            Some(url) => vec![url.to_owned()],
            None => urls::resource_metadata_urls(server_url),
        };
        let mut tried = Vec::new();
        for url in candidates {
            let answer = fetcher.get(&url).await?;
            match answer.json() {
                Some(doc) if answer.ok() => return Ok(Self::from_json(&doc, server_url)?),
                _ => tried.push(format!("{url} (HTTP {})", answer.status)),
            }
        }
        Err(AuthError::ResourceMetadata(format!("none found; tried {}", tried.join(", "))).into())
    }
}

impl ServerMetadata {
    /// Checks one document against the issuer it was looked up for.
    pub(crate) fn from_json(
        doc: &Map<String, Value>,
        issuer: &str,
    ) -> Result<ServerMetadata, AuthError> {
        let claimed = string(doc, "issuer").unwrap_or_default();
        // RFC 8414 §3.3: identical, no normalisation.
        if claimed != issuer {
            return Err(AuthError::IssuerMismatch {
                expected: issuer.to_owned(),
                found: claimed,
            });
        }
        let missing = |what: &str| AuthError::ServerMetadata {
            issuer: issuer.to_owned(),
            reason: format!("no `{what}`"),
        };
        Ok(ServerMetadata {
            issuer: claimed,
            authorization_endpoint: string(doc, "authorization_endpoint")
                .ok_or_else(|| missing("authorization_endpoint"))?,
            token_endpoint: string(doc, "token_endpoint")
                .ok_or_else(|| missing("token_endpoint"))?,
            registration_endpoint: string(doc, "registration_endpoint"),
            scopes_supported: strings(doc, "scopes_supported"),
            token_endpoint_auth_methods: strings(doc, "token_endpoint_auth_methods_supported")
                .unwrap_or_else(|| vec!["client_secret_basic".to_owned()]),
            client_id_metadata_document_supported: doc
                .get("client_id_metadata_document_supported")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            iss_parameter_supported: doc
                .get("authorization_response_iss_parameter_supported")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            pkce_s256: strings(doc, "code_challenge_methods_supported")
                .is_some_and(|m| m.iter().any(|m| m == "S256")),
        })
    }

    /// Tries the well-known locations in order; the first document found
    /// decides (one whose issuer is wrong is an error, not a reason to look
    /// further: the server is misconfigured or impersonated).
    pub(crate) async fn discover(fetcher: &Fetcher, issuer: &str) -> Result<ServerMetadata, Error> {
        let mut tried = Vec::new();
        for url in urls::server_metadata_urls(issuer) {
            let answer = fetcher.get(&url).await?;
            match answer.json() {
                Some(doc) if answer.ok() => return Ok(Self::from_json(&doc, issuer)?),
                _ => tried.push(format!("{url} (HTTP {})", answer.status)),
            }
        }
        Err(AuthError::ServerMetadata {
            issuer: issuer.to_owned(),
            reason: format!("no metadata; tried {}", tried.join(", ")),
        }
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn resource_metadata_must_name_this_server() {
        let doc = obj(json!({"resource": "http://localhost:3/mcp",
            "authorization_servers": ["http://localhost:4"], "scopes_supported": ["a"]}));
        let prm = ResourceMetadata::from_json(&doc, "http://localhost:3/mcp").unwrap();
        assert_eq!(prm.resource, "http://localhost:3/mcp");
        assert_eq!(prm.scopes_supported, Some(vec!["a".to_owned()]));
        let evil = obj(json!({"resource": "https://evil.example.com/mcp",
            "authorization_servers": ["http://localhost:4"]}));
        assert!(matches!(
            ResourceMetadata::from_json(&evil, "http://localhost:3/mcp"),
            Err(AuthError::ResourceMismatch { .. })
        ));
        let none = obj(json!({"resource": "http://localhost:3/mcp"}));
        assert!(ResourceMetadata::from_json(&none, "http://localhost:3/mcp").is_err());
    }

    #[test]
    fn server_metadata_issuer_is_compared_exactly_and_s256_required() {
        let doc = |issuer: &str| {
            obj(
                json!({"issuer": issuer, "authorization_endpoint": "http://as/authorize",
                "token_endpoint": "http://as/token", "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": true}),
            )
        };
        let ok = ServerMetadata::from_json(&doc("http://as"), "http://as").unwrap();
        assert!(ok.iss_parameter_supported);
        assert_eq!(ok.token_endpoint_auth_methods, ["client_secret_basic"]);
        for wrong in ["http://as/", "HTTP://as", "https://attacker.example.com"] {
            assert!(
                matches!(
                    ServerMetadata::from_json(&doc(wrong), "http://as"),
                    Err(AuthError::IssuerMismatch { .. })
                ),
                "{wrong}"
            );
        }
        assert!(ok.require_pkce().is_ok());
        let mut plain = doc("http://as");
        plain.insert("code_challenge_methods_supported".into(), json!(["plain"]));
        let plain = ServerMetadata::from_json(&plain, "http://as").unwrap();
        assert!(matches!(
            plain.require_pkce(),
            Err(AuthError::ServerMetadata { .. })
        ));
    }
}
