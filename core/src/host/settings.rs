//! A client's settings as every binding receives them from its host: one
//! reading of the identity, era, timeouts, `stderr`, TLS and limits for
//! Python, Node and C, with one message per mistake.
//!
//! Each binding hands over a JSON object built from its host value (a
//! Python binding its keyword arguments, Node its options object, C its
//! options JSON). Members are camelCase; the snake_case spelling a Python
//! host uses is read too, and an error names the member as the host
//! spelled it. Connect arguments that are no setting of the client
//! (a stdio server's `env` and `cwd`, HTTP `headers`) stay with the
//! binding's connect call.

use std::time::Duration;

use serde_json::Value;

use crate::client::{
    ClientCertificate, ClientLimits, ClientOptions, EraPreference, StderrMode, TlsOptions, TlsRoots,
};
use crate::protocol::Implementation;

use super::given::Given;

/// The members, camelCase first and the snake_case alias second.
const MEMBERS: [(&str, &str); 14] = [
    ("name", "name"),
    ("version", "version"),
    ("protocolVersion", "protocol_version"),
    ("era", "era"),
    ("timeoutMs", "timeout_ms"),
    ("probeTimeoutMs", "probe_timeout_ms"),
    ("stderr", "stderr"),
    ("tlsRoots", "tls_roots"),
    ("caCerts", "ca_certs"),
    ("clientCert", "client_cert"),
    ("clientKey", "client_key"),
    ("limits", "limits"),
    ("capabilities", "capabilities"),
    ("followTasks", "follow_tasks"),
];

/// Reads client settings into core's [`ClientOptions`]; what is absent
/// keeps its default.
///
/// - `name`, `version`: the client's identity (`clientInfo`);
/// - `protocolVersion`: the revision requests declare first;
/// - `era`: `"auto"` (default), `"modern"` or `"legacy"`;
/// - `timeoutMs`: the default timeout of every request in milliseconds;
///   `0` or `null` waits indefinitely;
/// - `probeTimeoutMs`: how long era detection waits;
/// - `stderr`: a stdio server's stderr, `"capture"` (default), `"inherit"`
///   or `"null"`;
/// - `tlsRoots`: `"native"` (default), `"webpki"` or `"none"`; `caCerts`:
///   extra CA certificates (PEM texts); `clientCert` with `clientKey`: a
///   client certificate and its key (PEM texts);
/// - `limits`: [`ClientLimits`] (read by [`ClientLimits::from_json`]);
/// - `capabilities`: further capabilities to declare, an object beside the
///   ones the input handlers declare (a client that answers a task's input
///   requests itself declares `elicitation` here);
/// - `followTasks`: whether `tools/call` follows a task to its result
///   (default `true`; declares the tasks extension).
///
/// A member that is `null` is absent, except `timeoutMs`. An unknown
/// member or a value of the wrong type is an error naming the member.
///
/// ```
/// use ferromcp::client::{EraPreference, TlsRoots};
/// use ferromcp::host::settings::client_options;
/// use serde_json::json;
///
/// let options = client_options(&json!({
///     "name": "agent", "era": "legacy", "timeout_ms": 2500, "tlsRoots": "webpki"
/// }))?;
/// assert_eq!(options.info.name, "agent");
/// assert_eq!(options.era, EraPreference::Legacy);
/// assert_eq!(options.timeout, Some(std::time::Duration::from_millis(2500)));
/// assert_eq!(options.tls.roots, TlsRoots::WebPki);
///
/// let error = client_options(&json!({"era": "new"})).unwrap_err();
/// assert_eq!(error, r#""era" must be "auto", "modern" or "legacy", not "new""#);
/// # Ok::<(), String>(())
/// ```
pub fn client_options(settings: &Value) -> Result<ClientOptions, String> {
    let map = match settings {
        Value::Null => return Ok(ClientOptions::default()),
        Value::Object(map) => map,
        other => return Err(format!("client settings must be an object, got {other}")),
    };
    let given = Given::read(map, &MEMBERS, "client setting")?;
    let mut options = ClientOptions::default();
    let name = given.string("name")?;
    let version = given.string("version")?;
    if name.is_some() || version.is_some() {
        options.info = Implementation::new(
            name.unwrap_or(&options.info.name).to_owned(),
            version.unwrap_or(&options.info.version).to_owned(),
        );
    }
    if let Some(version) = given.string("protocolVersion")? {
        options.protocol_version = version.to_owned();
    }
    if let Some(era) = given.one_of("era", &["auto", "modern", "legacy"])? {
        options.era = match era {
            "modern" => EraPreference::Modern,
            "legacy" => EraPreference::Legacy,
            _ => EraPreference::Auto,
        };
    }
    if let Some((key, value)) = given.get("timeoutMs") {
        // 0 and null wait indefinitely, as a call's own timeout does.
        options.timeout = match value {
            Value::Null => None,
            value => Some(millis(key, value)?).filter(|d| !d.is_zero()),
        };
    }
    if let Some((key, value)) = given.present("probeTimeoutMs") {
        options.probe_timeout = millis(key, value)?;
    }
    if let Some(stderr) = given.one_of("stderr", &["capture", "inherit", "null"])? {
        options.stderr = match stderr {
            "inherit" => StderrMode::Inherit,
            "null" => StderrMode::Null,
            _ => StderrMode::Capture,
        };
    }
    options.tls = tls_options(&given)?;
    if let Some((_, limits)) = given.present("limits") {
        options.limits = ClientLimits::from_json(limits)?;
    }
    if let Some((key, value)) = given.present("capabilities") {
        options.extra_capabilities = value
            .as_object()
            .cloned()
            .ok_or_else(|| format!("{key:?} must be an object, not {value}"))?;
    }
    if let Some((key, value)) = given.present("followTasks") {
        options.follow_tasks = value
            .as_bool()
            .ok_or_else(|| format!("{key:?} must be true or false, not {value}"))?;
    }
    Ok(options)
}

/// The `https://` members: `tlsRoots`, `caCerts`, `clientCert` + `clientKey`.
fn tls_options(given: &Given<'_>) -> Result<TlsOptions, String> {
    let roots = match given.one_of("tlsRoots", &["native", "webpki", "none"])? {
        Some("webpki") => TlsRoots::WebPki,
        Some("none") => TlsRoots::None,
        _ => TlsRoots::Native,
    };
    let ca_certs = match given.present("caCerts") {
        None => Vec::new(),
        Some((key, value)) => value
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|item| item.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
            })
            .ok_or_else(|| format!("{key:?} must be a list of PEM texts"))?,
    };
    let client_cert = match (given.string("clientCert")?, given.string("clientKey")?) {
        (Some(cert), Some(key)) => Some(ClientCertificate {
            cert_chain_pem: cert.to_owned(),
            key_pem: key.to_owned(),
        }),
        (None, None) => None,
        _ => {
            let (cert, key) = (given.spelling("clientCert"), given.spelling("clientKey"));
            return Err(format!("{cert:?} and {key:?} go together"));
        }
    };
    Ok(TlsOptions {
        roots,
        ca_certs,
        client_cert,
    })
}

/// A non-negative number of milliseconds.
fn millis(key: &str, value: &Value) -> Result<Duration, String> {
    value
        .as_f64()
        .filter(|ms| *ms >= 0.0)
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
        .ok_or_else(|| {
            format!("{key:?} must be a non-negative number of milliseconds, got {value}")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn absent_settings_are_the_defaults() {
        let options = client_options(&json!({})).unwrap();
        let defaults = ClientOptions::default();
        assert_eq!(options.timeout, defaults.timeout);
        assert_eq!(options.era, defaults.era);
        assert_eq!(options.info, defaults.info);
        assert!(client_options(&Value::Null).is_ok());
    }

    #[test]
    fn every_member_is_read_in_both_spellings() {
        let camel = json!({
            "name": "n", "version": "2", "protocolVersion": "2025-11-25", "era": "modern",
            "timeoutMs": 1500, "probeTimeoutMs": 200, "stderr": "null", "tlsRoots": "none",
            "caCerts": ["PEM"], "clientCert": "CERT", "clientKey": "KEY",
            "limits": {"maxMessageBytes": 1024},
            "capabilities": {"elicitation": {}}, "followTasks": false
        });
        let snake = json!({
            "name": "n", "version": "2", "protocol_version": "2025-11-25", "era": "modern",
            "timeout_ms": 1500, "probe_timeout_ms": 200, "stderr": "null", "tls_roots": "none",
            "ca_certs": ["PEM"], "client_cert": "CERT", "client_key": "KEY",
            "limits": {"max_message_bytes": 1024},
            "capabilities": {"elicitation": {}}, "follow_tasks": false
        });
        for settings in [camel, snake] {
            let o = client_options(&settings).unwrap();
            assert_eq!((o.info.name.as_str(), o.info.version.as_str()), ("n", "2"));
            assert_eq!(o.protocol_version, "2025-11-25");
            assert_eq!(o.era, EraPreference::Modern);
            assert_eq!(o.timeout, Some(Duration::from_millis(1500)));
            assert_eq!(o.probe_timeout, Duration::from_millis(200));
            assert!(matches!(o.stderr, StderrMode::Null));
            assert_eq!(o.tls.roots, TlsRoots::None);
            assert_eq!(o.tls.ca_certs, vec!["PEM".to_owned()]);
            let cert = o.tls.client_cert.unwrap();
            assert_eq!(
                (cert.cert_chain_pem.as_str(), cert.key_pem.as_str()),
                ("CERT", "KEY")
            );
            assert_eq!(o.limits.max_message_bytes, 1024);
            assert_eq!(
                Value::Object(o.extra_capabilities),
                json!({"elicitation": {}})
            );
            assert!(!o.follow_tasks);
        }
    }

    #[test]
    fn a_zero_or_null_timeout_waits_indefinitely() {
        for timeout in [json!(0), Value::Null] {
            let options = client_options(&json!({ "timeoutMs": timeout })).unwrap();
            assert_eq!(options.timeout, None);
        }
    }

    #[test]
    fn mistakes_name_the_member_as_the_host_spelled_it() {
        let cases = [
            (
                json!({"tls_roots": "all"}),
                r#""tls_roots" must be "native", "webpki" or "none", not "all""#,
            ),
            (
                json!({"stderr": "file"}),
                r#""stderr" must be "capture", "inherit" or "null", not "file""#,
            ),
            (
                json!({"timeoutMs": -1}),
                r#""timeoutMs" must be a non-negative number of milliseconds, got -1"#,
            ),
            (json!({"name": 5}), r#""name" must be a string, got 5"#),
            (
                json!({"ca_certs": "PEM"}),
                r#""ca_certs" must be a list of PEM texts"#,
            ),
            (
                json!({"client_cert": "C"}),
                r#""client_cert" and "client_key" go together"#,
            ),
            (
                json!({"clientKey": "K"}),
                r#""clientCert" and "clientKey" go together"#,
            ),
            (
                json!({"headers": []}),
                r#"unknown client setting "headers""#,
            ),
            (
                json!({"era": "auto", "tlsRoots": "x", "tls_roots": "y"}),
                r#"client setting "tlsRoots" is given twice"#,
            ),
            (json!([1]), "client settings must be an object, got [1]"),
        ];
        for (settings, message) in cases {
            assert_eq!(
                client_options(&settings).unwrap_err(),
                message,
                "{settings}"
            );
        }
    }
}
