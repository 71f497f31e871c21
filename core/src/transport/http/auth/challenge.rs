//! The answers to a request that may not go on: 401 (no token, or a bad
//! one), 403 `insufficient_scope`, 503 (the token could not be checked),
//! each with its `WWW-Authenticate: Bearer` challenge (RFC 6750 §3, RFC
//! 9728 §5.1) naming the metadata URL, so a client can start (or step up)
//! its authorization from the answer alone.

use http::header::{self, HeaderValue};
use http::{Response, StatusCode};
use serde_json::json;

use super::ProtectedResource;
use crate::net::urls::resource_metadata_url;
use crate::transport::http::body::{McpBody, json_response};

/// Why a request was refused, as RFC 6750 names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Failure {
    /// No credentials at all: the challenge carries no error code
    /// (RFC 6750 §3.1).
    Missing,
    /// A token in the query string, or a malformed `Authorization`.
    InvalidRequest,
    /// The token was refused.
    InvalidToken,
    /// The token lacks scopes.
    InsufficientScope,
}

/// `value` as the content of a quoted-string: quotes and backslashes
/// escaped, control characters dropped (a description comes from a
/// verifier and must not break the header).
fn quoted(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if c.is_ascii_graphic() || c == ' ' => out.push(c),
            _ => {}
        }
    }
    out
}

/// The `WWW-Authenticate` value.
pub(super) fn challenge(
    protection: &ProtectedResource,
    failure: Failure,
    scopes: &[String],
    description: Option<&str>,
) -> String {
    let mut params = Vec::new();
    let code = match failure {
        Failure::Missing => None,
        Failure::InvalidRequest => Some("invalid_request"),
        Failure::InvalidToken => Some("invalid_token"),
        Failure::InsufficientScope => Some("insufficient_scope"),
    };
    if let Some(code) = code {
        params.push(format!("error=\"{code}\""));
    }
    if !scopes.is_empty() {
        params.push(format!("scope=\"{}\"", quoted(&scopes.join(" "))));
    }
    params.push(format!(
        "resource_metadata=\"{}\"",
        quoted(&resource_metadata_url(&protection.resource))
    ));
    // RFC 6750 §3.1: a request without credentials gets no error
    // information, only the challenge.
    if let Some(description) = description.filter(|_| failure != Failure::Missing) {
        params.push(format!("error_description=\"{}\"", quoted(description)));
    }
    format!("Bearer {}", params.join(", "))
}

/// The scopes a 401 names: what every request needs, else what the
/// server supports.
pub(super) fn login_scopes(protection: &ProtectedResource) -> &[String] {
    if protection.required_scopes.is_empty() {
        &protection.scopes_supported
    } else {
        &protection.required_scopes
    }
}

/// A refusal: status by failure (401, or 403 for scopes), the challenge,
/// and an OAuth-style JSON body saying the same for humans.
pub(super) fn refuse(
    protection: &ProtectedResource,
    failure: Failure,
    scopes: &[String],
    description: &str,
) -> Response<McpBody> {
    let status = match failure {
        Failure::InsufficientScope => StatusCode::FORBIDDEN,
        _ => StatusCode::UNAUTHORIZED,
    };
    let value = challenge(protection, failure, scopes, Some(description));
    let error = match failure {
        Failure::Missing => "unauthorized",
        Failure::InvalidRequest => "invalid_request",
        Failure::InvalidToken => "invalid_token",
        Failure::InsufficientScope => "insufficient_scope",
    };
    let mut response = json_response(
        status,
        &json!({"error": error, "error_description": description}),
    );
    if let Ok(value) = HeaderValue::from_str(&value) {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, value);
    }
    response
}

/// The token could not be checked now (the issuer's keys are out of
/// reach): 503 with `Retry-After`, not a 401 that would send the user
/// through a new login for the server's own trouble.
pub(super) fn unavailable(description: &str) -> Response<McpBody> {
    let mut response = json_response(
        StatusCode::SERVICE_UNAVAILABLE,
        &json!({"error": "temporarily_unavailable", "error_description": description}),
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::auth::{AuthInfo, TokenError, TokenRequest};

    fn protection() -> ProtectedResource {
        ProtectedResource::new(
            "https://mcp.example/mcp",
            ["https://as.example"],
            |_t: String, _r: TokenRequest| async {
                Err::<AuthInfo, _>(TokenError::Invalid("x".into()))
            },
        )
    }

    #[test]
    fn challenges_carry_error_scope_and_metadata_url() {
        let p = protection();
        assert_eq!(
            challenge(&p, Failure::Missing, &[], None),
            "Bearer resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\""
        );
        assert_eq!(
            challenge(
                &p,
                Failure::InsufficientScope,
                &["a".into(), "b".into()],
                Some("say \"please\"\n")
            ),
            "Bearer error=\"insufficient_scope\", scope=\"a b\", resource_metadata=\"https://mcp.example/.well-known/oauth-protected-resource/mcp\", error_description=\"say \\\"please\\\"\""
        );
    }
}
