//! Header value encoding shared by client and server: plain visible ASCII,
//! or `=?base64?…?=` for anything else (spec: "Value Encoding").

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

const PREFIX: &str = "=?base64?";
const SUFFIX: &str = "?=";

/// Whether a value can travel as a plain header value: visible ASCII and
/// inner spaces/tabs only, no surrounding whitespace, and not mistakable for
/// the base64 sentinel.
fn is_plain_safe(value: &str) -> bool {
    let looks_encoded = value.starts_with(PREFIX) && value.ends_with(SUFFIX);
    !value.is_empty()
        && value
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) || b == b' ' || b == b'\t')
        && !value.starts_with([' ', '\t'])
        && !value.ends_with([' ', '\t'])
        && !looks_encoded
}

/// Encodes a value for an `Mcp-Name` or `Mcp-Param-*` header.
pub fn encode_header_value(value: &str) -> String {
    if is_plain_safe(value) || value.is_empty() {
        value.to_owned()
    } else {
        format!("{PREFIX}{}{SUFFIX}", STANDARD.encode(value.as_bytes()))
    }
}

/// Decodes a received header value: the sentinel form is base64-decoded
/// (strictly: bad padding or characters are an error), anything else is
/// taken literally. Surrounding whitespace is not part of the value.
pub fn decode_header_value(raw: &str) -> Result<String, String> {
    let raw = raw.trim_matches([' ', '\t']);
    match raw
        .strip_prefix(PREFIX)
        .and_then(|r| r.strip_suffix(SUFFIX))
    {
        Some(encoded) => {
            let bytes = STANDARD
                .decode(encoded)
                .map_err(|e| format!("invalid base64 in header value: {e}"))?;
            String::from_utf8(bytes).map_err(|_| "base64 header value is not UTF-8".to_owned())
        }
        None => Ok(raw.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        assert_eq!(encode_header_value("us-west1"), "us-west1");
        assert_eq!(
            encode_header_value("Hello, 世界"),
            "=?base64?SGVsbG8sIOS4lueVjA==?="
        );
        assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(
            encode_header_value("line1\nline2"),
            "=?base64?bGluZTEKbGluZTI=?="
        );
        assert_eq!(
            encode_header_value("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn decoding_round_trips_and_is_strict() {
        for v in [
            "us-west1",
            "Hello, 世界",
            " padded ",
            "line1\nline2",
            "=?base64?literal?=",
        ] {
            assert_eq!(
                decode_header_value(&encode_header_value(v)).as_deref(),
                Ok(v)
            );
        }
        assert!(
            decode_header_value("=?base64?SGVsbG8?=").is_err(),
            "missing padding"
        );
        assert!(
            decode_header_value("=?base64?SGV$bG8=?=").is_err(),
            "bad character"
        );
        assert_eq!(decode_header_value("  plain  ").as_deref(), Ok("plain"));
    }
}
