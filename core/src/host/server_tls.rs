//! A server's TLS settings as every binding receives them from its host:
//! one JSON object (camelCase, or the snake_case a Python host uses), read
//! once here into core's [`ServerTls`] with one message per mistake.

use serde_json::Value;

use super::given::Given;
use crate::transport::http::ServerTls;

/// The members, camelCase first and the snake_case alias second.
const MEMBERS: [(&str, &str); 4] = [
    ("certFile", "cert_file"),
    ("keyFile", "key_file"),
    ("clientCaFile", "client_ca_file"),
    ("clientAuthOptional", "client_auth_optional"),
];

/// Reads TLS settings: `certFile` and `keyFile` (PEM paths, required),
/// `clientCaFile` (PEM: require client certificates it signed) and
/// `clientAuthOptional` (a client without a certificate is served too).
/// `null` is no TLS. The files are read when the server binds.
///
/// ```
/// use ferromcp::host::server_tls::server_tls;
/// use serde_json::json;
///
/// let tls = server_tls(&json!({"certFile": "cert.pem", "key_file": "key.pem"}))?.unwrap();
/// assert_eq!(tls.key_file.to_str(), Some("key.pem"));
/// assert_eq!(server_tls(&json!(null))?, None);
/// assert_eq!(
///     server_tls(&json!({"certFile": "cert.pem"})).unwrap_err(),
///     r#"TLS setting "keyFile" is required"#
/// );
/// # Ok::<(), String>(())
/// ```
pub fn server_tls(settings: &Value) -> Result<Option<ServerTls>, String> {
    let map = match settings {
        Value::Null => return Ok(None),
        Value::Object(map) => map,
        other => return Err(format!("TLS settings must be an object, got {other}")),
    };
    let given = Given::read(map, &MEMBERS, "TLS setting")?;
    let required = |camel: &'static str| -> Result<&str, String> {
        given
            .string(camel)?
            .ok_or_else(|| format!("TLS setting {:?} is required", given.spelling(camel)))
    };
    let mut tls = ServerTls::new(required("certFile")?, required("keyFile")?);
    tls.client_ca_file = given.string("clientCaFile")?.map(Into::into);
    if let Some((key, value)) = given.present("clientAuthOptional") {
        tls.client_auth_optional = value
            .as_bool()
            .ok_or_else(|| format!("{key:?} must be a boolean, got {value}"))?;
        if tls.client_ca_file.is_none() {
            return Err(format!(
                "{key:?} needs {:?} (the CAs of the client certificates)",
                given.spelling("clientCaFile")
            ));
        }
    }
    Ok(Some(tls))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mistakes_name_the_member_as_spelled() {
        let cases = [
            (json!({"cert": "c"}), r#"unknown TLS setting "cert""#),
            (
                json!({"cert_file": "c", "key_file": 5}),
                r#""key_file" must be a string, got 5"#,
            ),
            (
                json!({"key_file": "k"}),
                r#"TLS setting "cert_file" is required"#,
            ),
            (
                json!({"certFile": "c", "keyFile": "k", "clientAuthOptional": true}),
                r#""clientAuthOptional" needs "clientCaFile" (the CAs of the client certificates)"#,
            ),
            (
                json!("cert.pem"),
                r#"TLS settings must be an object, got "cert.pem""#,
            ),
        ];
        for (settings, message) in cases {
            assert_eq!(server_tls(&settings).unwrap_err(), message);
        }
    }

    #[test]
    fn mutual_tls_is_read() {
        let tls = server_tls(&json!({
            "certFile": "c", "keyFile": "k", "clientCaFile": "ca", "clientAuthOptional": true
        }))
        .unwrap()
        .unwrap();
        assert_eq!(
            tls.client_ca_file.as_deref(),
            Some(std::path::Path::new("ca"))
        );
        assert!(tls.client_auth_optional);
    }
}
