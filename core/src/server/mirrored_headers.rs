//! The HTTP headers that must mirror the body of a 2026-07-28 request:
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (spec:
//! basic/transports/streamable-http.mdx, "Server Validation") and the
//! `Mcp-Param-*` headers of a tool's `x-mcp-header` arguments ("Server
//! Behavior for Custom Headers"). The server compares them when it admits a
//! request: the name check needs the method table and the parameter check
//! the tool registry, both of which are the server's.

use http::header::{AsHeaderName, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::Server;
use super::prepared::{Prepared, Rejection};
use crate::McpError;
use crate::protocol::Method;
use crate::protocol::mcp_headers::{
    METHOD_HEADER, NAME_HEADER, PARAM_HEADER_PREFIX, PROTOCOL_VERSION_HEADER, decode_header_value,
    header_matches_value, trim_ows,
};

// The mirrored headers as parsed names: a lookup by `&str` parses and
// validates the name on every request.
static PROTOCOL_VERSION: HeaderName = HeaderName::from_static(PROTOCOL_VERSION_HEADER);
static METHOD: HeaderName = HeaderName::from_static(METHOD_HEADER);
static NAME: HeaderName = HeaderName::from_static(NAME_HEADER);

/// The one value of a mirrored header, or why it has none to compare.
///
/// A header the body mirrors must appear at most once: HTTP lets a
/// repeated field be read as its comma-joined values, which a server
/// comparing only the first line would read differently from one (or an
/// intermediary) that joins them, so two lines are a mismatch (400 +
/// -32020), as the comma-joined form already is.
fn single_header<K: AsHeaderName + Copy + std::fmt::Display>(
    headers: &HeaderMap,
    name: K,
) -> Result<Option<&HeaderValue>, String> {
    let mut values = headers.get_all(name).iter();
    let first = values.next();
    if values.next().is_some() {
        return Err(format!("{name} header is repeated; send it once"));
    }
    Ok(first)
}

/// Compares the mirrored headers with the body (spec: "Server Validation").
pub(super) fn check_headers(headers: &HeaderMap, prepared: &Prepared) -> Result<(), Rejection> {
    // The id is copied only for a refusal (a string id is an allocation).
    let mismatch = |why: String| {
        Rejection::new(
            Some(prepared.request.id.clone()),
            McpError::header_mismatch(why),
            400,
        )
    };
    let header_str = |name: &'static HeaderName| -> Result<Option<&str>, Rejection> {
        match single_header(headers, name).map_err(&mismatch)? {
            None => Ok(None),
            Some(v) => v
                .to_str()
                .map(|s| Some(trim_ows(s)))
                .map_err(|_| mismatch(format!("{name} header contains invalid characters"))),
        }
    };
    match header_str(&PROTOCOL_VERSION)? {
        None => return Err(mismatch("MCP-Protocol-Version header is required".into())),
        Some(v) if v != prepared.meta.protocol_version => {
            return Err(mismatch(format!(
                "MCP-Protocol-Version header value '{v}' does not match body value '{}'",
                prepared.meta.protocol_version
            )));
        }
        Some(_) => {}
    }
    let method = prepared.request.method.as_str();
    match header_str(&METHOD)? {
        None => return Err(mismatch("Mcp-Method header is required".into())),
        Some(v) if v != method => {
            return Err(mismatch(format!(
                "Mcp-Method header value '{v}' does not match body value '{method}'"
            )));
        }
        Some(_) => {}
    }
    if let Some(method) = prepared.method
        && method.name_param().is_some()
    {
        let body_value = method
            .name_param()
            .and_then(|name| prepared.param(name))
            .and_then(Value::as_str);
        match (header_str(&NAME)?, body_value) {
            (None, _) => return Err(mismatch("Mcp-Name header is required".into())),
            (Some(raw), body) => {
                let decoded = decode_header_value(raw).map_err(&mismatch)?;
                if Some(&*decoded) != body {
                    return Err(mismatch(format!(
                        "Mcp-Name header value '{decoded}' does not match body value '{}'",
                        body.unwrap_or("")
                    )));
                }
            }
        }
    }
    Ok(())
}

/// `Mcp-Param-*` headers must mirror the tool's `x-mcp-header` arguments
/// exactly (spec: "Server Behavior for Custom Headers").
pub(super) fn check_param_headers(
    headers: &HeaderMap,
    server: &Server,
    prepared: &mut Prepared,
) -> Result<(), Rejection> {
    if prepared.method != Some(Method::ToolsCall) {
        return Ok(());
    }
    let Some(tool) = prepared.param("name").and_then(Value::as_str) else {
        return Ok(());
    };
    let header_params = server.header_params(tool);
    if header_params.is_empty() {
        return Ok(());
    }
    prepared.read_deferred_arguments();
    let arguments = prepared.param("arguments");
    let id = Some(prepared.request.id.clone());
    let mismatch = |why: String| Rejection::new(id.clone(), McpError::header_mismatch(why), 400);
    for param in header_params {
        let header_name = format!("{PARAM_HEADER_PREFIX}{}", param.name.to_ascii_lowercase());
        let body = param.argument(arguments);
        let header = match single_header(headers, header_name.as_str()).map_err(&mismatch)? {
            None => None,
            Some(raw) => {
                let raw = raw.to_str().map_err(|_| {
                    mismatch(format!(
                        "Mcp-Param-{} contains invalid characters",
                        param.name
                    ))
                })?;
                Some(
                    decode_header_value(raw)
                        .map_err(|e| mismatch(format!("Mcp-Param-{}: {e}", param.name)))?,
                )
            }
        };
        match (body, header) {
            (None, None) => {}
            (Some(_), None) => {
                return Err(mismatch(format!(
                    "Mcp-Param-{} header is required when the argument is present",
                    param.name
                )));
            }
            (None, Some(_)) => {
                return Err(mismatch(format!(
                    "Mcp-Param-{} header was sent but the argument is absent",
                    param.name
                )));
            }
            (Some(body), Some(header)) => {
                if !header_matches_value(&header, body) {
                    return Err(mismatch(format!(
                        "Mcp-Param-{} header value '{header}' does not match body value '{body}'",
                        param.name
                    )));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::protocol::mcp_headers::trim_ows;

    #[test]
    fn optional_white_space_is_trimmed_at_both_ends_only() {
        assert_eq!(trim_ows(" \t2026-07-28\t "), "2026-07-28");
        assert_eq!(trim_ows("tools/call"), "tools/call");
        assert_eq!(trim_ows("a b"), "a b");
        assert_eq!(trim_ows(" \t "), "");
        assert_eq!(trim_ows(""), "");
    }
}
