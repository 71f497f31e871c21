//! Server and HTTP options from C, given as JSON objects so options can be
//! added later without new functions (core `ServerOptions`, `HttpOptions`).

use serde_json::{Map, Value};
use std::ffi::c_char;
use std::time::Duration;

use ferromcp_core::protocol::Implementation;
use ferromcp_core::server::{SealKey, Server, ServerOptions};
use ferromcp_core::transport::http::{HttpLimits, HttpOptions};
use tokio_util::sync::CancellationToken;

use crate::args::{check_out, parse_json_object, required_ref, required_str};
use crate::error::{FfiError, ferromcp_status};
use crate::panic::ffi_boundary;
use crate::server::{bind_address, ferromcp_server};

pub(crate) fn bad(name: &str, why: impl std::fmt::Display) -> FfiError {
    FfiError::new(
        ferromcp_status::FERROMCP_INVALID_JSON,
        format!("`{name}`: {why}"),
    )
}

/// Refuses members this version does not know, so a misspelt option is an
/// error rather than silently ignored.
pub(crate) fn only_known(
    map: &Map<String, Value>,
    known: &[&str],
    name: &str,
) -> Result<(), FfiError> {
    match map.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(bad(name, format!("unknown option {key:?}"))),
        None => Ok(()),
    }
}

pub(crate) fn strings(value: &Value, name: &str, member: &str) -> Result<Vec<String>, FfiError> {
    value
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| bad(name, format!("\"{member}\" must be a list of strings")))
}

/// Reads server options JSON into core's [`ServerOptions`].
fn server_options(map: &Map<String, Value>) -> Result<ServerOptions, FfiError> {
    const NAME: &str = "options_json";
    only_known(
        map,
        &[
            "instructions",
            "pageSize",
            "sealKey",
            "requestStateTtlMs",
            "includeServerInfo",
        ],
        NAME,
    )?;
    let mut options = ServerOptions::default();
    if let Some(value) = map.get("instructions") {
        options.instructions = Some(
            value
                .as_str()
                .ok_or_else(|| bad(NAME, "\"instructions\" must be a string"))?
                .to_owned(),
        );
    }
    if let Some(value) = map.get("pageSize") {
        options.page_size = value
            .as_u64()
            .filter(|n| *n > 0)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| bad(NAME, "\"pageSize\" must be a positive integer"))?;
    }
    if let Some(value) = map.get("sealKey") {
        let secret = value
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or_else(|| bad(NAME, "\"sealKey\" must be a non-empty string"))?;
        options.seal_key = SealKey::from_secret(secret.as_bytes());
    }
    if let Some(value) = map.get("requestStateTtlMs") {
        options.request_state_ttl =
            Duration::from_millis(value.as_u64().ok_or_else(|| {
                bad(NAME, "\"requestStateTtlMs\" must be a non-negative integer")
            })?);
    }
    if let Some(value) = map.get("includeServerInfo") {
        options.include_server_info = value
            .as_bool()
            .ok_or_else(|| bad(NAME, "\"includeServerInfo\" must be a boolean"))?;
    }
    Ok(options)
}

/// Creates a server with options (ferromcp_server_new() uses the defaults).
///
/// - `name`, `version`: the server's identity, copied.
/// - `options_json`: NULL (all defaults) or a JSON object, copied, with any of
///   - `"instructions"`: guidance for the model, returned by discovery;
///   - `"pageSize"`: items per page of every list result (default 100);
///   - `"sealKey"`: a secret string protecting cursors and `requestState`;
///     give every replica behind a load balancer the same one (default: a
///     random key per server);
///   - `"requestStateTtlMs"`: how long a `requestState` stays valid
///     (default 600000);
///   - `"includeServerInfo"`: whether results carry serverInfo in `_meta`
///     (default true).
/// - `out_server`: receives the server; free it with ferromcp_server_free().
///
/// Returns FERROMCP_INVALID_JSON for unparsable text, a non-object, an
/// unknown member or a member of the wrong type; FERROMCP_NULL_ARGUMENT,
/// FERROMCP_INVALID_UTF8.
///
/// Threads: any thread.
///
/// ```c
/// ferromcp_server *server = NULL;
/// ferromcp_server_new_with_options("demo", "1.0.0",
///     "{\"instructions\":\"Use the add tool for sums.\",\"pageSize\":50}", &server);
/// ```
///
/// # Safety
/// Each pointer is NULL or valid: strings NUL-terminated, `out_server`
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_new_with_options(
    name: *const c_char,
    version: *const c_char,
    options_json: *const c_char,
    out_server: *mut *mut ferromcp_server,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (all): forwarded contract.
        let name = unsafe { required_str(name, "name") }?;
        let version = unsafe { required_str(version, "version") }?;
        let options = match unsafe { crate::args::optional_str(options_json, "options_json") }? {
            Some(text) => server_options(&parse_json_object(text, "options_json")?)?,
            None => ServerOptions::default(),
        };
        check_out(out_server, "out_server")?;
        let server = ferromcp_server::wrap(Server::with_options(
            Implementation::new(name, version),
            options,
        ))?;
        // SAFETY: checked non-NULL and writable per the contract.
        unsafe { out_server.write(Box::into_raw(server)) };
        Ok(())
    })
}

/// ferromcp_server_serve_http() with HTTP options.
///
/// - `options_json`: NULL (defaults) or a JSON object with any of
///   - `"path"`: the MCP endpoint's path (default "/mcp");
///   - `"allowedHosts"`: Host header names (without port) accepted, against
///     DNS rebinding (default: the loopback names when listening on
///     loopback, any host otherwise);
///   - `"allowedOrigins"`: Origin values accepted, exactly (default:
///     loopback origins only);
///   - `"limits"`: an object with any of (a missing or null member keeps
///     its default; snake_case names are accepted too)
///     - `"maxConnections"`: connections served at once (default 1024,
///       lowered to fit the descriptor limit). At the cap a new client is
///       admitted by closing a connection doing nothing (never used first,
///       then idle, oldest first); only when all are busy does it wait;
///     - `"maxConnectionsPerAddress"`: connections from one IP address
///       (default: no limit). Over it the address's own oldest idle
///       connection is closed, or the new one refused with 429. Behind a
///       reverse proxy every client has the proxy's address;
///     - `"headerReadTimeout"`: seconds for a request head to arrive after
///       its first byte, and for a new connection to send its first byte
///       (default 10);
///     - `"bodyReadTimeout"`: seconds for a body after its head (default 30);
///     - `"idleTimeout"`: seconds a kept-alive connection may wait for its
///       next request (default 60); a streaming response is never cut;
///     - `"maxBodyBytes"`: largest request body (default 16777216).
///
/// Returns what ferromcp_server_serve_http() returns, and
/// FERROMCP_INVALID_JSON for bad options (unknown members included; the
/// error message, ferromcp_last_error_message(), names the member).
///
/// ```c
/// ferromcp_server_serve_http_ex(server, "127.0.0.1", 8000,
///     "{\"limits\":{\"maxConnectionsPerAddress\":32,\"idleTimeout\":30}}");
/// ```
///
/// Threads: any thread the caller owns. One serve call per server at a time.
///
/// # Safety
/// `server` NULL or live; strings NULL or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_server_serve_http_ex(
    server: *const ferromcp_server,
    host: *const c_char,
    port: u16,
    options_json: *const c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        const NAME: &str = "options_json";
        // SAFETY (all): forwarded contract.
        let server = unsafe { required_ref(server, "server") }?;
        let host = unsafe { required_str(host, "host") }?;
        let map = match unsafe { crate::args::optional_str(options_json, NAME) }? {
            Some(text) => parse_json_object(text, NAME)?,
            None => Map::new(),
        };
        only_known(
            &map,
            &["path", "allowedHosts", "allowedOrigins", "auth", "limits"],
            NAME,
        )?;
        let mut options = HttpOptions {
            bind: bind_address(host, port)?,
            shutdown: CancellationToken::new(),
            ..HttpOptions::default()
        };
        if let Some(path) = map.get("path") {
            let path = path
                .as_str()
                .filter(|p| p.starts_with('/'))
                .ok_or_else(|| bad(NAME, "\"path\" must be a string starting with '/'"))?;
            options.path = path.to_owned();
        }
        if let Some(hosts) = map.get("allowedHosts") {
            options.allowed_hosts = Some(strings(hosts, NAME, "allowedHosts")?);
        }
        if let Some(origins) = map.get("allowedOrigins") {
            options.allowed_origins = Some(strings(origins, NAME, "allowedOrigins")?);
        }
        if let Some(limits) = map.get("limits") {
            HttpLimits::from_json(limits)
                .map_err(|e| bad(NAME, format!("\"limits\": {e}")))?
                .apply(&mut options);
        }
        if let Some(auth) = map.get("auth") {
            options.auth = Some(crate::auth::protection(server, auth)?);
        }
        server.serve_http_with(options)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_read_and_unknown_ones_refused() {
        let map = parse_json_object(
            r#"{"instructions":"hi","pageSize":2,"sealKey":"s","requestStateTtlMs":5}"#,
            "o",
        )
        .expect("object");
        let options = server_options(&map).expect("valid");
        assert_eq!(options.instructions.as_deref(), Some("hi"));
        assert_eq!(options.page_size, 2);
        assert_eq!(options.request_state_ttl, Duration::from_millis(5));
        let map = parse_json_object(r#"{"pagesize":2}"#, "o").expect("object");
        let error = server_options(&map).expect_err("misspelt");
        assert_eq!(error.status, ferromcp_status::FERROMCP_INVALID_JSON);
        let map = parse_json_object(r#"{"pageSize":0}"#, "o").expect("object");
        assert!(server_options(&map).is_err());
    }
}
