//! [`HttpLimits`]: the HTTP listener's limits as one value, read from JSON.
//!
//! Each binding converts its host's options (a Python dict, a JS object, C
//! JSON text) to a JSON value and reads it here, so every language accepts
//! the same names, defaults and values, and refuses bad ones with the same
//! message naming the member.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::time::Duration;

use super::listener::HttpOptions;

/// The limits of the HTTP listener that a server facing untrusted clients
/// tunes, as one value: what Python's `limits=`, Node's `limits` and C's
/// `"limits"` option are read into, then applied onto [`HttpOptions`].
///
/// As JSON it is an object whose members are all optional (a missing one,
/// or `null`, keeps its default: what a JavaScript `undefined` or a Python
/// `None` becomes); names are camelCase, and the snake_case spelling is
/// accepted too. Durations are seconds (a number, fractions allowed).
///
/// | member | default | [`HttpOptions`] field |
/// |---|---|---|
/// | `maxConnections` | 1024 | `max_connections` |
/// | `maxConnectionsPerAddress` | `null` (no limit) | `max_connections_per_address` |
/// | `headerReadTimeout` | 10 | `header_read_timeout` |
/// | `bodyReadTimeout` | 30 | `body_read_timeout` |
/// | `idleTimeout` | 60 | `idle_timeout` |
/// | `maxBodyBytes` | 16777216 | `max_body_bytes` |
/// | `maxSessions` | 10000 | `session_limits.max_sessions` (legacy 2025-11-25 sessions) |
/// | `maxSessionsPerAddress` | 64 | `session_limits.max_sessions_per_peer` (behind a proxy every client has its address: raise it there) |
///
/// Unknown members and bad values are refused with an error naming the
/// member (a misspelt limit must not be silently ignored).
///
/// ```
/// use ferromcp::transport::http::{HttpLimits, HttpOptions};
/// use serde_json::json;
/// use std::time::Duration;
///
/// let limits = HttpLimits::from_json(&json!({
///     "maxConnections": 256,
///     "maxConnectionsPerAddress": 16,
///     "header_read_timeout": 2.5,
/// }))?;
/// let mut options = HttpOptions::localhost(8000);
/// limits.apply(&mut options);
/// assert_eq!(options.max_connections, 256);
/// assert_eq!(options.max_connections_per_address, Some(16));
/// assert_eq!(options.header_read_timeout, Duration::from_millis(2500));
/// assert_eq!(options.idle_timeout, Duration::from_secs(60)); // the default
///
/// let error = HttpLimits::from_json(&json!({"idleTimeout": 0})).unwrap_err();
/// assert_eq!(
///     error.to_string(),
///     "HTTP limit \"idleTimeout\" must be a positive number of seconds, got 0"
/// );
/// # Ok::<(), ferromcp::transport::http::HttpLimitsError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpLimits {
    /// [`HttpOptions::max_connections`].
    pub max_connections: usize,
    /// [`HttpOptions::max_connections_per_address`].
    pub max_connections_per_address: Option<usize>,
    /// [`HttpOptions::header_read_timeout`].
    #[serde(serialize_with = "seconds")]
    pub header_read_timeout: Duration,
    /// [`HttpOptions::body_read_timeout`].
    #[serde(serialize_with = "seconds")]
    pub body_read_timeout: Duration,
    /// [`HttpOptions::idle_timeout`].
    #[serde(serialize_with = "seconds")]
    pub idle_timeout: Duration,
    /// [`HttpOptions::max_body_bytes`].
    pub max_body_bytes: usize,
    /// [`SessionLimits::max_sessions`](crate::legacy::SessionLimits) of
    /// [`HttpOptions::session_limits`].
    pub max_sessions: usize,
    /// `SessionLimits::max_sessions_per_peer` of
    /// [`HttpOptions::session_limits`].
    pub max_sessions_per_address: usize,
}

/// Why a JSON value is not valid [`HttpLimits`]; the message names the
/// member at fault.
///
/// ```
/// use ferromcp::transport::http::{HttpLimits, HttpLimitsError};
/// use serde_json::json;
///
/// let error = HttpLimits::from_json(&json!({"maxConections": 5})).unwrap_err();
/// assert!(matches!(&error, HttpLimitsError::Unknown { key } if key == "maxConections"));
/// assert!(error.to_string().starts_with("unknown HTTP limit \"maxConections\""));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpLimitsError {
    /// The value is not a JSON object.
    #[error("HTTP limits must be an object, got {0}")]
    NotAnObject(String),
    /// A member this version does not know.
    #[error("unknown HTTP limit {key:?} (known: {known})", known = known_names())]
    Unknown {
        /// The member as given.
        key: String,
    },
    /// A member given under both of its spellings.
    #[error("HTTP limit {key:?} is given twice (as {key:?} and {alias:?})")]
    Twice {
        /// The camelCase name.
        key: &'static str,
        /// The snake_case name.
        alias: &'static str,
    },
    /// A member whose value is out of range or of the wrong type.
    #[error("HTTP limit {key:?} must be {expected}, got {got}")]
    Invalid {
        /// The member as given.
        key: String,
        /// What it must be.
        expected: &'static str,
        /// The value given, as (at most 40 characters of) JSON.
        got: String,
    },
}

/// The members: camelCase name, snake_case alias.
const NAMES: [(&str, &str); 8] = [
    ("maxConnections", "max_connections"),
    ("maxConnectionsPerAddress", "max_connections_per_address"),
    ("headerReadTimeout", "header_read_timeout"),
    ("bodyReadTimeout", "body_read_timeout"),
    ("idleTimeout", "idle_timeout"),
    ("maxBodyBytes", "max_body_bytes"),
    ("maxSessions", "max_sessions"),
    ("maxSessionsPerAddress", "max_sessions_per_address"),
];

fn known_names() -> String {
    NAMES.map(|(name, _)| name).join(", ")
}

impl Default for HttpLimits {
    /// The defaults of [`HttpOptions`].
    fn default() -> Self {
        HttpLimits::from(&HttpOptions::default())
    }
}

impl From<&HttpOptions> for HttpLimits {
    /// The limits `options` sets.
    fn from(options: &HttpOptions) -> Self {
        HttpLimits {
            max_connections: options.max_connections,
            max_connections_per_address: options.max_connections_per_address,
            header_read_timeout: options.header_read_timeout,
            body_read_timeout: options.body_read_timeout,
            idle_timeout: options.idle_timeout,
            max_body_bytes: options.max_body_bytes,
            max_sessions: options.session_limits.max_sessions,
            max_sessions_per_address: options.session_limits.max_sessions_per_peer,
        }
    }
}

impl HttpLimits {
    /// Reads limits from a JSON object (see the table on [`HttpLimits`]);
    /// members not given, or `null`, keep their defaults. `null` for the
    /// whole value means all defaults.
    pub fn from_json(value: &Value) -> Result<HttpLimits, HttpLimitsError> {
        match value {
            Value::Null => Ok(HttpLimits::default()),
            Value::Object(map) => HttpLimits::from_map(map),
            other => Err(HttpLimitsError::NotAnObject(shown(other))),
        }
    }

    /// [`HttpLimits::from_json`] for an object already taken apart.
    ///
    /// ```
    /// use ferromcp::transport::http::HttpLimits;
    /// use serde_json::json;
    ///
    /// let json = json!({"max_connections_per_address": 8});
    /// let limits = HttpLimits::from_map(json.as_object().unwrap())?;
    /// assert_eq!(limits.max_connections_per_address, Some(8));
    /// # Ok::<(), ferromcp::transport::http::HttpLimitsError>(())
    /// ```
    pub fn from_map(map: &Map<String, Value>) -> Result<HttpLimits, HttpLimitsError> {
        if let Some(key) = map
            .keys()
            .find(|k| !NAMES.iter().any(|(name, alias)| k == name || k == alias))
        {
            return Err(HttpLimitsError::Unknown { key: key.clone() });
        }
        let mut limits = HttpLimits::default();
        for (name, alias) in NAMES {
            // null is "not given": what `undefined` and `None` become.
            let given = |key| map.get(key).filter(|v| !v.is_null());
            let (key, value) = match (given(name), given(alias)) {
                (None, None) => continue,
                (Some(_), Some(_)) => return Err(HttpLimitsError::Twice { key: name, alias }),
                (Some(value), None) => (name, value),
                (None, Some(value)) => (alias, value),
            };
            match name {
                "maxConnections" => limits.max_connections = count(key, value)?,
                "maxConnectionsPerAddress" => {
                    limits.max_connections_per_address = Some(count(key, value)?)
                }
                "headerReadTimeout" => limits.header_read_timeout = seconds_of(key, value)?,
                "bodyReadTimeout" => limits.body_read_timeout = seconds_of(key, value)?,
                "idleTimeout" => limits.idle_timeout = seconds_of(key, value)?,
                "maxBodyBytes" => limits.max_body_bytes = count(key, value)?,
                "maxSessions" => limits.max_sessions = count(key, value)?,
                "maxSessionsPerAddress" => limits.max_sessions_per_address = count(key, value)?,
                _ => unreachable!("every name in NAMES is matched"),
            }
        }
        Ok(limits)
    }

    /// Sets these limits on `options`, leaving its other fields alone.
    ///
    /// ```
    /// use ferromcp::transport::http::{HttpLimits, HttpOptions};
    /// use std::time::Duration;
    ///
    /// let limits = HttpLimits {
    ///     idle_timeout: Duration::from_secs(5),
    ///     ..HttpLimits::default()
    /// };
    /// let mut options = HttpOptions::localhost(0);
    /// limits.apply(&mut options);
    /// assert_eq!(options.idle_timeout, Duration::from_secs(5));
    /// assert_eq!(options.path, "/mcp");
    /// ```
    pub fn apply(&self, options: &mut HttpOptions) {
        options.max_connections = self.max_connections;
        options.max_connections_per_address = self.max_connections_per_address;
        options.header_read_timeout = self.header_read_timeout;
        options.body_read_timeout = self.body_read_timeout;
        options.idle_timeout = self.idle_timeout;
        options.max_body_bytes = self.max_body_bytes;
        options.session_limits.max_sessions = self.max_sessions;
        options.session_limits.max_sessions_per_peer = self.max_sessions_per_address;
    }
}

impl<'de> Deserialize<'de> for HttpLimits {
    /// Through [`HttpLimits::from_map`], so serde reads the same names and
    /// gives the same errors as the bindings.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let map = Map::<String, Value>::deserialize(deserializer)?;
        HttpLimits::from_map(&map).map_err(serde::de::Error::custom)
    }
}

/// A positive integer. JavaScript numbers arrive as doubles, so an integral
/// double counts as an integer.
fn count(key: &str, value: &Value) -> Result<usize, HttpLimitsError> {
    let integer = match value {
        Value::Number(n) => n.as_u64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= u64::MAX as f64)
                .map(|f| f as u64)
        }),
        _ => None,
    };
    integer
        .filter(|n| *n > 0)
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| invalid(key, "a positive integer", value))
}

/// A positive, finite number of seconds.
fn seconds_of(key: &str, value: &Value) -> Result<Duration, HttpLimitsError> {
    value
        .as_f64()
        .filter(|s| *s > 0.0)
        .and_then(|s| Duration::try_from_secs_f64(s).ok())
        .ok_or_else(|| invalid(key, "a positive number of seconds", value))
}

fn invalid(key: &str, expected: &'static str, value: &Value) -> HttpLimitsError {
    HttpLimitsError::Invalid {
        key: key.to_owned(),
        expected,
        got: shown(value),
    }
}

/// A value as JSON, cut to 40 characters: enough to recognise it in an
/// error message, never a whole document.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(40) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text,
    }
}

fn seconds<S: Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_f64(duration.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_member_is_read_in_either_spelling_and_applied() {
        let camel = HttpLimits::from_json(&json!({
            "maxConnections": 10,
            "maxConnectionsPerAddress": 3,
            "headerReadTimeout": 0.3,
            "bodyReadTimeout": 4,
            "idleTimeout": 5.5,
            "maxBodyBytes": 1000.0,
            "maxSessions": 50,
            "maxSessionsPerAddress": 1000,
        }))
        .unwrap();
        let snake = HttpLimits::from_json(&json!({
            "max_connections": 10,
            "max_connections_per_address": 3,
            "header_read_timeout": 0.3,
            "body_read_timeout": 4,
            "idle_timeout": 5.5,
            "max_body_bytes": 1000,
            "max_sessions": 50,
            "max_sessions_per_address": 1000,
        }))
        .unwrap();
        assert_eq!(camel, snake);
        let mut options = HttpOptions::default();
        camel.apply(&mut options);
        assert_eq!(HttpLimits::from(&options), camel);
        assert_eq!(options.header_read_timeout, Duration::from_millis(300));
        assert_eq!(options.max_body_bytes, 1000);
        assert_eq!(options.session_limits.max_sessions_per_peer, 1000);
        // serde reads the same, and writes camelCase seconds
        let read: HttpLimits =
            serde_json::from_value(serde_json::to_value(camel).unwrap()).unwrap();
        assert_eq!(read, camel);
        assert_eq!(serde_json::to_value(camel).unwrap()["idleTimeout"], 5.5);
    }

    #[test]
    fn missing_members_and_null_keep_the_defaults() {
        assert_eq!(
            HttpLimits::from_json(&json!({})).unwrap(),
            HttpLimits::default()
        );
        assert_eq!(
            HttpLimits::from_json(&Value::Null).unwrap(),
            HttpLimits::default()
        );
        let limits = HttpLimits::from_json(&json!({
            "maxConnectionsPerAddress": null,
            "idleTimeout": null,
            "idle_timeout": 5,
        }))
        .unwrap();
        assert_eq!(limits.max_connections_per_address, None);
        assert_eq!(limits.idle_timeout, Duration::from_secs(5));
        assert_eq!(HttpLimits::default().max_connections, 1024);
        assert_eq!(HttpLimits::default().max_connections_per_address, None);
    }

    #[test]
    fn bad_values_are_refused_naming_the_member() {
        for (value, message) in [
            (json!([]), "HTTP limits must be an object, got []"),
            (
                json!({"maxConnections": 0}),
                "HTTP limit \"maxConnections\" must be a positive integer, got 0",
            ),
            (
                json!({"max_connections": 1.5}),
                "HTTP limit \"max_connections\" must be a positive integer, got 1.5",
            ),
            (
                json!({"maxBodyBytes": "1mb"}),
                "HTTP limit \"maxBodyBytes\" must be a positive integer, got \"1mb\"",
            ),
            (
                json!({"maxConnectionsPerAddress": -2}),
                "HTTP limit \"maxConnectionsPerAddress\" must be a positive integer, got -2",
            ),
            (
                json!({"idleTimeout": true}),
                "HTTP limit \"idleTimeout\" must be a positive number of seconds, got true",
            ),
            (
                json!({"header_read_timeout": 1e300}),
                "HTTP limit \"header_read_timeout\" must be a positive number of seconds, got 1e+300",
            ),
            (
                json!({"idleTimeout": 1, "idle_timeout": 2}),
                "HTTP limit \"idleTimeout\" is given twice (as \"idleTimeout\" and \"idle_timeout\")",
            ),
            (
                json!({"timeout": 1}),
                "unknown HTTP limit \"timeout\" (known: maxConnections, maxConnectionsPerAddress, \
                 headerReadTimeout, bodyReadTimeout, idleTimeout, maxBodyBytes, maxSessions, maxSessionsPerAddress)",
            ),
        ] {
            let error = HttpLimits::from_json(&value).unwrap_err();
            assert_eq!(error.to_string(), message, "{value}");
        }
        // and through serde
        let error = serde_json::from_value::<HttpLimits>(json!({"idleTimeout": 0})).unwrap_err();
        assert!(error.to_string().contains("\"idleTimeout\""), "{error}");
    }
}
