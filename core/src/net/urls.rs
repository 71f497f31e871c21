//! URL work both roles need around OAuth: the well-known metadata
//! locations (RFC 9728 and RFC 8414 path insertion, OpenID path appending),
//! which a client looks up, a verifier fetches keys through and a protected
//! server serves at; query strings and form bodies; and the resource
//! comparison. `http::Uri` parses; the rest is string work on its parts
//! (the `url` crate would bring IDNA tables for what these few operations
//! need).

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};

/// Everything but RFC 3986 unreserved characters is encoded.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Where protected resource metadata is published (RFC 9728 §3.1), at the
/// root of an origin or before the resource's path.
pub(crate) const RESOURCE_METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// `scheme://authority` and the path (without query, trailing `/` kept
/// as given) of an absolute URL of any scheme.
fn origin_and_path(url: &str) -> Option<(String, String)> {
    let uri: http::Uri = url.parse().ok()?;
    let scheme = uri.scheme_str()?;
    let authority = uri.authority()?.as_str();
    Some((format!("{scheme}://{authority}"), uri.path().to_owned()))
}

/// `scheme://authority` and the path (without query, trailing `/` kept
/// as given) of an absolute http(s) URL.
pub(crate) fn split(url: &str) -> Option<(String, String)> {
    origin_and_path(url)
        .filter(|(origin, _)| origin.starts_with("http://") || origin.starts_with("https://"))
}

/// The path of a resource URL without its trailing `/` ("" for a root):
/// what path insertion puts after [`RESOURCE_METADATA_PATH`].
pub(crate) fn resource_path(resource: &str) -> String {
    origin_and_path(resource)
        .map(|(_, path)| path.trim_end_matches('/').to_owned())
        .unwrap_or_default()
}

/// Where a protected server's metadata is, as its challenges name it: the
/// path-inserted location of `resource`, so a client finds this server's
/// document even when several servers share a host.
pub(crate) fn resource_metadata_url(resource: &str) -> String {
    match origin_and_path(resource) {
        Some((origin, path)) => format!(
            "{origin}{RESOURCE_METADATA_PATH}{}",
            path.trim_end_matches('/')
        ),
        None => format!("{}{RESOURCE_METADATA_PATH}", resource.trim_end_matches('/')),
    }
}

/// Where to look for protected resource metadata when the server's 401
/// named no `resource_metadata` (RFC 9728 §3.1, MCP "Protected Resource
/// Metadata Discovery"): the path-inserted location first, then the root.
pub(crate) fn resource_metadata_urls(server_url: &str) -> Vec<String> {
    let Some((origin, path)) = split(server_url) else {
        return Vec::new();
    };
    let path = path.trim_end_matches('/');
    let mut urls = Vec::new();
    if !path.is_empty() {
        urls.push(format!("{origin}{RESOURCE_METADATA_PATH}{path}"));
    }
    urls.push(format!("{origin}{RESOURCE_METADATA_PATH}"));
    urls
}

/// Where to look for an issuer's metadata, in the MCP order: RFC 8414 with
/// path insertion, OpenID Connect with path insertion, then OpenID Connect
/// appended to the path; for an issuer without a path, the RFC 8414 and
/// OpenID root documents.
pub(crate) fn server_metadata_urls(issuer: &str) -> Vec<String> {
    let Some((origin, path)) = split(issuer) else {
        return Vec::new();
    };
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Whether a protected resource metadata `resource` covers `server_url`:
/// same scheme and authority (host case-insensitively), and its path is the
/// server's path or a parent of it on a segment boundary (a server at
/// `/mcp` may publish its origin as the resource, as the RFC 9728 root
/// document does; `/mc` does not cover `/mcp`).
pub(crate) fn resource_covers(resource: &str, server_url: &str) -> bool {
    let (Some((r_origin, r_path)), Some((s_origin, s_path))) = (split(resource), split(server_url))
    else {
        return false;
    };
    if !r_origin.eq_ignore_ascii_case(&s_origin) {
        return false;
    }
    let r_path = r_path.trim_end_matches('/');
    let s_path = s_path.trim_end_matches('/');
    s_path == r_path
        || (s_path.starts_with(r_path) && s_path.as_bytes().get(r_path.len()) == Some(&b'/'))
}

/// Percent-encodes one query or form component.
pub(crate) fn encode(value: &str) -> String {
    utf8_percent_encode(value, COMPONENT).to_string()
}

/// `k=v&k=v`, each part encoded.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// `base` with `pairs` added to its query (keeping any query it has).
pub(crate) fn with_query(base: &str, pairs: &[(&str, &str)]) -> String {
    let (base, fragment) = match base.split_once('#') {
        Some((b, _)) => (b, ""),
        None => (base, ""),
    };
    let separator = if base.contains('?') { '&' } else { '?' };
    format!("{base}{separator}{}{fragment}", form(pairs))
}

/// The decoded query parameters of a URL (`+` is a space, as in forms), or
/// which part is not UTF-8.
pub(crate) fn query_pairs(url: &str) -> Result<Vec<(String, String)>, String> {
    let query = url
        .split_once('#')
        .map_or(url, |(u, _)| u)
        .split_once('?')
        .map(|(_, q)| q)
        .unwrap_or("");
    let decode = |s: &str| -> Result<String, String> {
        percent_decode_str(&s.replace('+', " "))
            .decode_utf8()
            .map(|c| c.into_owned())
            .map_err(|_| format!("{s:?} is not UTF-8"))
    };
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            Ok((decode(k)?, decode(v)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_metadata_is_looked_up_path_inserted_then_at_the_root() {
        assert_eq!(
            resource_metadata_urls("https://example.com/public/mcp?x=1"),
            [
                "https://example.com/.well-known/oauth-protected-resource/public/mcp",
                "https://example.com/.well-known/oauth-protected-resource",
            ]
        );
        assert_eq!(
            resource_metadata_urls("http://localhost:8080/"),
            ["http://localhost:8080/.well-known/oauth-protected-resource"]
        );
        assert!(resource_metadata_urls("ftp://x/y").is_empty());
    }

    #[test]
    fn a_server_names_the_path_inserted_location_of_its_resource() {
        assert_eq!(
            resource_metadata_url("https://a.example/mcp"),
            "https://a.example/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            resource_metadata_url("https://a.example/"),
            "https://a.example/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            resource_metadata_url("http://127.0.0.1:9/x/mcp/"),
            "http://127.0.0.1:9/.well-known/oauth-protected-resource/x/mcp"
        );
        // What a server names is the first place a client looks.
        for resource in ["https://a.example/mcp", "http://127.0.0.1:9/x/mcp/"] {
            assert_eq!(
                resource_metadata_urls(resource)[0],
                resource_metadata_url(resource)
            );
        }
        assert_eq!(resource_path("https://a.example/x/mcp/"), "/x/mcp");
        assert_eq!(resource_path("https://a.example"), "");
    }

    #[test]
    fn server_metadata_uses_path_insertion_then_openid_appending() {
        assert_eq!(
            server_metadata_urls("https://auth.example.com/tenant1"),
            [
                "https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
                "https://auth.example.com/.well-known/openid-configuration/tenant1",
                "https://auth.example.com/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            server_metadata_urls("http://localhost:9000"),
            [
                "http://localhost:9000/.well-known/oauth-authorization-server",
                "http://localhost:9000/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn a_resource_covers_its_own_path_and_children_only() {
        let server = "http://localhost:3000/mcp";
        assert!(resource_covers("http://localhost:3000/mcp", server));
        assert!(resource_covers("http://LOCALHOST:3000", server));
        assert!(resource_covers("http://localhost:3000/", server));
        assert!(!resource_covers("http://localhost:3000/mc", server));
        assert!(!resource_covers("https://localhost:3000/mcp", server));
        assert!(!resource_covers("https://evil.example.com/mcp", server));
        assert!(!resource_covers("http://localhost:3001/mcp", server));
    }

    #[test]
    fn queries_are_encoded_and_decoded() {
        let url = with_query(
            "https://as.example/authorize?prompt=none",
            &[("scope", "a b"), ("redirect_uri", "http://l/cb?x=1&y")],
        );
        assert_eq!(
            url,
            "https://as.example/authorize?prompt=none&scope=a%20b&redirect_uri=http%3A%2F%2Fl%2Fcb%3Fx%3D1%26y"
        );
        let pairs =
            query_pairs("http://l/cb?code=a%2Bb&state=s+t&iss=https%3A%2F%2Fas#frag").unwrap();
        assert_eq!(
            pairs,
            [
                ("code".into(), "a+b".into()),
                ("state".into(), "s t".into()),
                ("iss".into(), "https://as".into())
            ]
        );
    }
}
