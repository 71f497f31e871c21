//! The gate: before the server sees a request, its bearer token is read
//! (from the `Authorization` header only), verified, checked against the
//! resource and the clock, and its scopes against what the request needs.
//! A refused request gets its challenge and never reaches a handler.

use http::HeaderMap;
use http::header;
use http::{Method, Response, Uri};
use serde_json::{Map, Value};
use std::sync::Arc;

use super::ProtectedResource;
use super::challenge::{Failure, login_scopes, refuse, unavailable};
use crate::server::Server;
use crate::server::auth::{AuthInfo, TokenError, TokenRequest};
use crate::transport::http::body::McpBody;

fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Whether the query string carries an `access_token` parameter (RFC 6750
/// §2.3, which the MCP spec forbids: URLs end up in logs).
fn token_in_query(uri: &Uri) -> bool {
    uri.query().is_some_and(|q| {
        q.split('&')
            .any(|pair| pair.split('=').next() == Some("access_token"))
    })
}

/// The bearer token of `Authorization`, or why there is none usable.
fn bearer(headers: &HeaderMap) -> Result<Option<&str>, &'static str> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err("send one Authorization header");
    }
    let value = value
        .to_str()
        .map_err(|_| "the Authorization header is not text")?;
    let (scheme, token) = value
        .split_once(' ')
        .ok_or("the Authorization header must be \"Bearer <token>\"")?;
    if !scheme.eq_ignore_ascii_case("bearer") {
        // Another scheme is no credential for this resource: treated as
        // none, so the client gets the plain challenge to start from.
        return Ok(None);
    }
    let token = token.trim();
    if token.is_empty() {
        return Err("the bearer token is empty");
    }
    Ok(Some(token))
}

/// Same URL, ignoring a trailing `/` (the spec recommends the form
/// without it, and providers differ in which they put in `aud`).
fn same_resource(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// Whether `info` covers every scope of `needed`, or which are missing.
fn missing_scopes(
    protection: &ProtectedResource,
    info: &AuthInfo,
    needed: &[String],
) -> Vec<String> {
    needed
        .iter()
        .filter(|scope| match &protection.scope_check {
            Some(check) => !check(info, scope),
            None => !info.has_scope(scope),
        })
        .cloned()
        .collect()
}

/// Reads and verifies the request's token: its claims, or the answer
/// refusing it.
pub(in crate::transport::http) async fn authenticate(
    protection: &ProtectedResource,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> Result<Arc<AuthInfo>, Response<McpBody>> {
    let login = login_scopes(protection);
    if token_in_query(uri) {
        return Err(refuse(
            protection,
            Failure::InvalidRequest,
            login,
            "access tokens are not accepted in the query string; send Authorization: Bearer",
        ));
    }
    let token = match bearer(headers) {
        Ok(Some(token)) => token,
        Ok(None) => {
            return Err(refuse(
                protection,
                Failure::Missing,
                login,
                "authorization required",
            ));
        }
        Err(why) => return Err(refuse(protection, Failure::InvalidRequest, login, why)),
    };
    let request = TokenRequest {
        resource: protection.resource.clone(),
        method: method.as_str().to_owned(),
        path: uri.path().to_owned(),
    };
    let info = match protection.verifier.verify(token.to_owned(), request).await {
        Ok(info) => info,
        Err(TokenError::Invalid(why)) => {
            tracing::debug!(reason = %why, "refused a bearer token");
            return Err(refuse(protection, Failure::InvalidToken, login, &why));
        }
        Err(TokenError::Unavailable(why)) => {
            tracing::warn!(reason = %why, "could not verify a bearer token");
            return Err(unavailable(&why));
        }
    };
    // Whatever the verifier checked, these two are the server's to enforce
    // (spec: tokens MUST be meant for this server; expired ones get 401).
    if !info
        .audience
        .iter()
        .any(|a| same_resource(a, &protection.resource))
    {
        return Err(refuse(
            protection,
            Failure::InvalidToken,
            login,
            "the token was not issued for this resource",
        ));
    }
    if info.expires_at.is_some_and(|exp| exp <= now_secs()) {
        return Err(refuse(
            protection,
            Failure::InvalidToken,
            login,
            "the token has expired",
        ));
    }
    let missing = missing_scopes(protection, &info, &protection.required_scopes);
    if !missing.is_empty() {
        return Err(refuse(
            protection,
            Failure::InsufficientScope,
            &protection.required_scopes,
            "the token lacks scopes this server requires",
        ));
    }
    Ok(Arc::new(info))
}

/// Checks the scopes one request (`method` with `params`) needs against
/// the token: `None` when they are covered, else the 403 naming all of
/// them, server-wide ones included, in one challenge (spec: no incremental
/// challenges).
pub(in crate::transport::http) fn authorize(
    protection: &ProtectedResource,
    server: &Server,
    info: &AuthInfo,
    method: &str,
    params: Option<&Map<String, Value>>,
) -> Option<Response<McpBody>> {
    let needed = server.scopes_for_request(method, params);
    if needed.is_empty() {
        return None;
    }
    let missing = missing_scopes(protection, info, &needed);
    if missing.is_empty() {
        return None;
    }
    let mut scopes = protection.required_scopes.clone();
    for scope in needed {
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    tracing::debug!(method, missing = ?missing, "refused a request for insufficient scope");
    Some(refuse(
        protection,
        Failure::InsufficientScope,
        &scopes,
        &format!("this operation needs scope {}", missing.join(" ")),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_bearer_header_is_a_token() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer(&h), Ok(None));
        h.insert(header::AUTHORIZATION, "Basic abc".parse().unwrap());
        assert_eq!(bearer(&h), Ok(None));
        h.insert(header::AUTHORIZATION, "bearer t0k".parse().unwrap());
        assert_eq!(bearer(&h), Ok(Some("t0k")));
        h.append(header::AUTHORIZATION, "Bearer other".parse().unwrap());
        assert!(bearer(&h).is_err());
        assert!(token_in_query(&"/mcp?a=1&access_token=x".parse().unwrap()));
        assert!(!token_in_query(&"/mcp?not_access_token=x".parse().unwrap()));
    }
}
