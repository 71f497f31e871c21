//! Server and HTTP options from C, given as JSON objects so options can be
//! added later without new functions (core `ServerOptions`, `HttpOptions`).
//! The server's functions that take them,
//! ferromcp_server_new_with_options() and ferromcp_server_serve_http_ex(),
//! are in `server.rs`.

use serde_json::{Map, Value};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use ferromcp_core::server::{SealKey, ServerOptions};
use ferromcp_core::transport::http::{HttpLimits, HttpOptions};
use tokio_util::sync::CancellationToken;

use crate::args::{bad, only_known, strings};
use crate::auth::{VerifierSlot, protection};
use crate::error::{FfiError, ferromcp_status};

/// Reads server options JSON into core's [`ServerOptions`].
pub(crate) fn server_options(map: &Map<String, Value>) -> Result<ServerOptions, FfiError> {
    const NAME: &str = "options_json";
    only_known(
        map,
        &[
            "instructions",
            "pageSize",
            "sealKey",
            "sealKeys",
            "requestStateTtlMs",
            "includeServerInfo",
            "tasks",
            "eventBus",
            "replica",
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
    if let Some(value) = map.get("sealKeys") {
        if map.contains_key("sealKey") {
            return Err(bad(NAME, "give \"sealKey\" or \"sealKeys\", not both"));
        }
        let keys = strings(value, NAME, "sealKeys")?;
        options.seal_key = SealKey::from_base64_list(keys.iter().map(String::as_str))
            .map_err(|e| bad(NAME, format!("\"sealKeys\": {e}")))?;
    }
    if let Some(value) = map.get("requestStateTtlMs") {
        options.request_state_ttl =
            Duration::from_millis(value.as_u64().ok_or_else(|| {
                bad(NAME, "\"requestStateTtlMs\" must be a non-negative integer")
            })?);
    }
    if let Some(value) = map.get("tasks") {
        options.tasks = ferromcp_core::host::task_settings::task_options(value)
            .map_err(|e| bad(NAME, format!("\"tasks\": {e}")))?;
    }
    if let Some(value) = map.get("eventBus") {
        let url = value
            .as_str()
            .ok_or_else(|| bad(NAME, "\"eventBus\" must be a redis:// URL string"))?;
        options = options
            .with_event_bus_url(url)
            .map_err(|e| bad(NAME, format!("\"eventBus\": {e}")))?;
    }
    if let Some(value) = map.get("replica") {
        let name = value
            .as_str()
            .ok_or_else(|| bad(NAME, "\"replica\" must be a string"))?;
        options = options
            .with_replica(name)
            .map_err(|e| bad(NAME, format!("\"replica\": {e}")))?;
    }
    if let Some(value) = map.get("includeServerInfo") {
        options.include_server_info = value
            .as_bool()
            .ok_or_else(|| bad(NAME, "\"includeServerInfo\" must be a boolean"))?;
    }
    Ok(options)
}

/// Reads HTTP options JSON (see ferromcp_server_serve_http_ex()) into
/// core's [`HttpOptions`], listening on `host`:`port`; `verifier` serves
/// an `"auth"` member without `"jwt"`.
pub(crate) fn http_options(
    map: &Map<String, Value>,
    host: &str,
    port: u16,
    verifier: &VerifierSlot,
) -> Result<HttpOptions, FfiError> {
    const NAME: &str = "options_json";
    only_known(
        map,
        &[
            "path",
            "allowedHosts",
            "allowedOrigins",
            "auth",
            "limits",
            "health",
            "drainDelayMs",
            "tls",
        ],
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
        options.auth = Some(protection(verifier, auth)?);
    }
    if let Some(health) = map.get("health") {
        options.health = health
            .as_bool()
            .ok_or_else(|| bad(NAME, "\"health\" must be a boolean"))?;
    }
    if let Some(tls) = map.get("tls") {
        options.tls = ferromcp_core::host::server_tls::server_tls(tls)
            .map_err(|e| bad(NAME, format!("\"tls\": {e}")))?;
    }
    if let Some(delay) = map.get("drainDelayMs") {
        options.drain_delay = Duration::from_millis(
            delay
                .as_u64()
                .ok_or_else(|| bad(NAME, "\"drainDelayMs\" must be a non-negative integer"))?,
        );
    }
    Ok(options)
}

/// Resolves `host`:`port` for listening.
pub(crate) fn bind_address(host: &str, port: u16) -> Result<SocketAddr, FfiError> {
    let invalid_host = |why: String| {
        FfiError::new(
            ferromcp_status::FERROMCP_INVALID_ARGUMENT,
            format!("cannot listen on host {host:?}: {why}"),
        )
    };
    (host, port)
        .to_socket_addrs()
        .map_err(|e| invalid_host(e.to_string()))?
        .next()
        .ok_or_else(|| invalid_host("it has no address".to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::parse_json_object;

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

    #[test]
    fn seal_keys_rotate_and_are_checked() {
        let (old, new) = ("b2xkLXNlY3JldC0yMDI2LTEx", "bmV3LXNlY3JldC0yMDI2LTEy");
        let read = |json: String| {
            let map = parse_json_object(&json, "o").expect("object");
            server_options(&map)
        };
        let before = read(format!(r#"{{"sealKeys":["{old}"]}}"#)).expect("valid");
        let rotated = read(format!(r#"{{"sealKeys":["{new}","{old}"]}}"#)).expect("valid");
        let sealed = before.seal_key.seal("state", b"x");
        assert!(rotated.seal_key.open("state", &sealed).is_some());
        assert!(!rotated.seal_key.is_random());
        for (json, why) in [
            (r#"{"sealKeys":["c2hvcnQ="]}"#, "seal key 1 is 5 bytes"),
            (r#"{"sealKeys":[]}"#, "no seal key given"),
            (r#"{"sealKeys":"x"}"#, "sealKeys"),
            (
                r#"{"sealKey":"s","sealKeys":["b2xkLXNlY3JldC0yMDI2LTEx"]}"#,
                "not both",
            ),
        ] {
            let error = read(json.to_owned()).expect_err(json);
            assert_eq!(error.status, ferromcp_status::FERROMCP_INVALID_JSON);
            assert!(error.message.contains(why), "{json}: {}", error.message);
        }
    }
}
