//! The protected resource metadata document (RFC 9728 §2) and where it is
//! served: `/.well-known/oauth-protected-resource` and the path-inserted
//! form for the resource's path (RFC 9728 §3.1), which is also the URL the
//! challenges name. Public and static, so it is readable cross-origin
//! (browser clients discover it) and needs no token.

use http::header::{self, HeaderValue};
use http::{Method, Response, StatusCode};
use serde_json::{Map, Value, json};

use super::ProtectedResource;
use crate::net::urls::{RESOURCE_METADATA_PATH, resource_path};
use crate::transport::http::body::{McpBody, empty, json_response};

/// The document.
pub(super) fn document(protection: &ProtectedResource) -> Value {
    let mut doc = Map::new();
    doc.insert("resource".into(), json!(protection.resource));
    doc.insert(
        "authorization_servers".into(),
        json!(protection.authorization_servers),
    );
    if !protection.scopes_supported.is_empty() {
        doc.insert(
            "scopes_supported".into(),
            json!(protection.scopes_supported),
        );
    }
    doc.insert("bearer_methods_supported".into(), json!(["header"]));
    if let Some(name) = &protection.resource_name {
        doc.insert("resource_name".into(), json!(name));
    }
    if let Some(docs) = &protection.resource_documentation {
        doc.insert("resource_documentation".into(), json!(docs));
    }
    Value::Object(doc)
}

/// The answer to a request for the metadata, or `None` when `path` is not
/// one of its locations: the root one, the one inserted before the
/// resource's path, or before the endpoint's own path (they differ behind
/// a proxy that rewrites paths).
pub(in crate::transport::http) fn serve_metadata(
    protection: &ProtectedResource,
    method: &Method,
    path: &str,
    endpoint_path: Option<&str>,
) -> Option<Response<McpBody>> {
    let suffix = path
        .strip_prefix(RESOURCE_METADATA_PATH)?
        .trim_end_matches('/');
    let known = suffix.is_empty()
        || suffix == resource_path(&protection.resource)
        || endpoint_path.is_some_and(|p| suffix == p.trim_end_matches('/'));
    if !known {
        return None;
    }
    let mut response = match *method {
        Method::GET | Method::HEAD => {
            let mut response = json_response(StatusCode::OK, &document(protection));
            response.headers_mut().insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=3600"),
            );
            response
        }
        // CORS preflight.
        Method::OPTIONS => {
            let mut response = empty(StatusCode::NO_CONTENT);
            response.headers_mut().insert(
                header::ACCESS_CONTROL_ALLOW_METHODS,
                HeaderValue::from_static("GET, HEAD, OPTIONS"),
            );
            response.headers_mut().insert(
                header::ACCESS_CONTROL_ALLOW_HEADERS,
                HeaderValue::from_static("*"),
            );
            response
        }
        _ => {
            let mut response = empty(StatusCode::METHOD_NOT_ALLOWED);
            response.headers_mut().insert(
                header::ALLOW,
                HeaderValue::from_static("GET, HEAD, OPTIONS"),
            );
            response
        }
    };
    response.headers_mut().insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    Some(response)
}
