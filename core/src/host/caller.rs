//! Who sent a request, as one JSON object every binding hands its host
//! where there is no request context (a middleware link, a visibility
//! rule): so the members and their spelling are the same in each language.

use serde_json::{Map, Value, json};

use crate::server::RequestMeta;
use crate::server::auth::AuthInfo;

/// Headers that carry credentials, left out of [`caller_value`].
const CREDENTIALS: [&str; 3] = ["authorization", "cookie", "proxy-authorization"];

/// `{"protocolVersion", "clientInfo", "clientCapabilities", "auth",
/// "headers"}`: `clientInfo` and `auth` are null when the request has
/// none; `headers` (the HTTP request's, a repeated header's values joined
/// with ", ", without `Authorization`, `Cookie` and `Proxy-Authorization`)
/// is empty over stdio.
///
/// ```
/// let caller = ferromcp::host::caller::caller_value(&ferromcp::server::RequestMeta::default());
/// assert_eq!(caller["auth"], serde_json::Value::Null);
/// assert!(caller["headers"].as_object().is_some_and(|h| h.is_empty()));
///
/// let mut headers = http::HeaderMap::new();
/// headers.insert("authorization", "Bearer secret".parse().unwrap());
/// headers.insert("x-tenant", "acme".parse().unwrap());
/// let meta = ferromcp::server::RequestMeta { http_headers: Some(std::sync::Arc::new(headers)), ..Default::default() };
/// let caller = ferromcp::host::caller::caller_value(&meta);
/// assert_eq!(caller["headers"], serde_json::json!({"x-tenant": "acme"}));
/// ```
pub fn caller_value(meta: &RequestMeta) -> Map<String, Value> {
    let mut headers = Map::new();
    if let Some(map) = meta.http_headers.as_deref() {
        for (name, value) in super::headers::joined(map) {
            // Credentials stay out: links and rules log what they get, and
            // the verified claims are in `auth`.
            if !CREDENTIALS.contains(&name.as_str()) {
                headers.insert(name, Value::from(value));
            }
        }
    }
    let mut caller = Map::new();
    caller.insert(
        "protocolVersion".into(),
        Value::from(meta.protocol_version.as_str()),
    );
    caller.insert(
        "clientInfo".into(),
        meta.client_info
            .as_ref()
            .map_or(Value::Null, |info| info.to_value()),
    );
    caller.insert(
        "clientCapabilities".into(),
        Value::Object(meta.client_capabilities.clone()),
    );
    caller.insert(
        "auth".into(),
        meta.auth.as_deref().map_or(Value::Null, auth_value),
    );
    caller.insert("headers".into(), Value::Object(headers));
    caller
}

/// The verified claims of a request on a protected server:
/// `{"subject", "clientId", "scopes", "audience", "expiresAt", "claims"}`,
/// absent members null.
pub fn auth_value(info: &AuthInfo) -> Value {
    json!({
        "subject": info.subject,
        "clientId": info.client_id,
        "scopes": info.scopes,
        "audience": info.audience,
        "expiresAt": info.expires_at,
        "claims": info.claims,
    })
}
