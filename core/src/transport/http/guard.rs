//! The check a request passes before anything reads its body: `Host` and
//! `Origin` (DNS-rebinding protection, spec: basic/transports/streamable-http.mdx,
//! "Security Warning"). The headers that mirror the body are the server's
//! to compare, when it admits the request (`server/mirrored_headers.rs`).

use http::header::{self, HeaderMap};

use super::options::EndpointOptions;

const LOOPBACK_HOSTS: &[&str] = &["localhost", "127.0.0.1", "[::1]", "::1"];

/// The host part of a `Host` header or an origin's authority.
fn host_without_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        // IPv6 literal: keep the brackets
        return match rest.find(']') {
            Some(end) => &authority[..end + 2],
            None => authority,
        };
    }
    // By bytes: `split(':')` goes through the generic character searcher.
    match authority.bytes().position(|b| b == b':') {
        Some(colon) => &authority[..colon],
        None => authority,
    }
}

/// Checks `Host` against `options.allowed_hosts` (by default the loopback
/// names when the server listens on loopback) and any `Origin` against
/// `options.allowed_origins` (by default loopback origins only). The error
/// says why the request is forbidden.
pub(super) fn check_host_and_origin(
    headers: &HeaderMap,
    options: &EndpointOptions,
    loopback: bool,
) -> Result<(), String> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(host_without_port);
    let host_ok = match (&options.allowed_hosts, host) {
        (Some(allowed), Some(h)) => allowed.iter().any(|a| a.eq_ignore_ascii_case(h)),
        (Some(_), None) => false,
        (None, Some(h)) if loopback => LOOPBACK_HOSTS.iter().any(|a| a.eq_ignore_ascii_case(h)),
        (None, _) => true,
    };
    if !host_ok {
        return Err(format!("Host {:?} is not allowed", host.unwrap_or("")));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let origin_ok = match &options.allowed_origins {
            Some(allowed) => allowed.iter().any(|a| a == origin),
            None => origin
                .split_once("://")
                .filter(|(scheme, _)| *scheme == "http" || *scheme == "https")
                .map(|(_, authority)| host_without_port(authority))
                .is_some_and(|h| LOOPBACK_HOSTS.iter().any(|a| a.eq_ignore_ascii_case(h))),
        };
        if !origin_ok {
            return Err(format!("Origin {origin:?} is not allowed"));
        }
    }
    Ok(())
}
