//! The answer of a verifier written in a host language (Python, Node, C),
//! in one JSON shape for every binding, so none of them re-implements how
//! claims become an [`AuthInfo`] or what a rejection means.

use serde_json::{Map, Value};

use super::{AuthInfo, TokenError};
use crate::server::{FromHost, OutputError};

/// What a host verifier callback answered: `{"claims": {...}}` (the
/// token's claims, JWT names: `sub`, `scope`, `aud`, `exp`...) or
/// `{"invalid": "why"}` (the token is not accepted: HTTP 401). A binding
/// runs the callback like a handler and reads its answer with
/// [`FromHost`]; a callback that fails otherwise is
/// [`TokenError::Unavailable`] (HTTP 503), not the client's fault.
///
/// ```
/// use ferromcp::server::FromHost;
/// use ferromcp::server::auth::{HostVerdict, TokenError};
/// use serde_json::json;
///
/// let accepted = HostVerdict::from_host(json!({"claims": {"sub": "alice", "scope": "a b"}}))?;
/// let info = accepted.into_result().unwrap();
/// assert_eq!(info.scopes, ["a", "b"]);
/// let refused = HostVerdict::from_host(json!({"invalid": "expired"}))?;
/// assert_eq!(refused.into_result(), Err(TokenError::Invalid("expired".into())));
/// # Ok::<(), ferromcp::server::OutputError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum HostVerdict {
    /// The token's claims.
    Claims(Map<String, Value>),
    /// Why the token is not accepted.
    Invalid(String),
}

impl HostVerdict {
    /// The verifier's result: [`AuthInfo::from_claims`], or
    /// [`TokenError::Invalid`].
    pub fn into_result(self) -> Result<AuthInfo, TokenError> {
        match self {
            HostVerdict::Claims(claims) => Ok(AuthInfo::from_claims(claims)),
            HostVerdict::Invalid(why) => Err(TokenError::Invalid(why)),
        }
    }
}

impl FromHost for HostVerdict {
    const KIND: &'static str = "token verifier";

    fn from_host(value: Value) -> Result<Self, OutputError> {
        let wrong = |reason: &str| OutputError {
            kind: Self::KIND,
            reason: reason.to_owned(),
        };
        let Value::Object(mut answer) = value else {
            return Err(wrong(
                "expected {\"claims\": {...}} or {\"invalid\": reason}",
            ));
        };
        if let Some(why) = answer.remove("invalid") {
            return Ok(HostVerdict::Invalid(match why {
                Value::String(s) => s,
                Value::Null => "invalid token".to_owned(),
                other => other.to_string(),
            }));
        }
        match answer.remove("claims") {
            Some(Value::Object(claims)) => Ok(HostVerdict::Claims(claims)),
            _ => Err(wrong("the claims must be an object")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_that_are_neither_claims_nor_a_rejection_are_refused() {
        assert!(HostVerdict::from_host(json!("alice")).is_err());
        assert!(HostVerdict::from_host(json!({"claims": "alice"})).is_err());
        assert!(HostVerdict::from_host(json!({})).is_err());
        assert_eq!(
            HostVerdict::from_host(json!({"invalid": null})),
            Ok(HostVerdict::Invalid("invalid token".into()))
        );
    }
}
