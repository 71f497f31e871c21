//! [`JwtVerifier`]: access tokens that are JWTs signed by the
//! authorization server (RFC 9068 style), checked against its published
//! keys: signature (RS256, PS256, ES256, EdDSA via ring), `iss`, `aud`
//! (the resource, RFC 8707), `exp` / `nbf` / `iat` with a small leeway.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::jwks::{Alg, KeyCache, KeySource};
use crate::BoxFuture;
use crate::net::TlsOptions;
use crate::server::auth::{AuthInfo, TokenError, TokenRequest, TokenVerifier};

/// Verifies JWT access tokens with the issuer's JWK Set, found through the
/// issuer's metadata (RFC 8414, then OpenID Connect discovery) or given as
/// `jwks_uri`. Keys are cached and fetched again when a token names an
/// unknown key id (rotation), at most every `min_refresh` (30 s by
/// default), and at least every `max_age` (1 hour). `https://` issuers use
/// the TLS stack the client uses too ([`TlsOptions`]: the platform trust
/// store, extra CAs).
///
/// A token that verified is remembered for `cache_ttl` (60 s by default,
/// never past its `exp`), so a client sending the same token on every
/// request costs one signature check per minute rather than one per
/// request. The price: a signing key removed from the issuer's key set
/// still admits the tokens verified with it in the last `cache_ttl`.
/// At most [`JwtVerifier::CACHE_CAPACITY`] tokens are remembered; only
/// tokens that verified are, so forged ones cannot fill it.
///
/// ```
/// use ferromcp::verifier::JwtVerifier;
/// use std::time::Duration;
///
/// let verifier = JwtVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp")
///     .with_leeway(Duration::from_secs(30));
/// # let _ = verifier;
/// ```
#[derive(Clone)]
pub struct JwtVerifier {
    inner: Arc<Inner>,
}

struct Inner {
    issuer: String,
    audience: String,
    leeway: Duration,
    keys: KeyCache,
    cache_ttl: Duration,
    verified: Mutex<Verified>,
}

/// Tokens that verified, with their claims and until when (Unix seconds)
/// they may be answered from here.
#[derive(Default)]
struct Verified {
    tokens: HashMap<Box<str>, (AuthInfo, u64)>,
}

impl Verified {
    fn get(&self, token: &str, now: u64) -> Option<AuthInfo> {
        self.tokens
            .get(token)
            .filter(|(_, until)| now < *until)
            .map(|(info, _)| info.clone())
    }

    /// Remembers `token` until `until`; when full, forgets the expired
    /// ones, and everything if none had expired (the bound matters more
    /// than which tokens stay).
    fn insert(&mut self, token: &str, info: AuthInfo, until: u64, now: u64) {
        if self.tokens.len() >= JwtVerifier::CACHE_CAPACITY {
            self.tokens.retain(|_, (_, until)| now < *until);
            if self.tokens.len() >= JwtVerifier::CACHE_CAPACITY {
                self.tokens.clear();
            }
        }
        self.tokens.insert(token.into(), (info, until));
    }
}

struct Settings {
    issuer: String,
    audience: String,
    jwks_uri: Option<String>,
    tls: TlsOptions,
    leeway: Duration,
    min_refresh: Duration,
    max_age: Duration,
    cache_ttl: Duration,
}

impl std::fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("issuer", &self.inner.issuer)
            .field("audience", &self.inner.audience)
            .finish_non_exhaustive()
    }
}

impl JwtVerifier {
    /// Accepts tokens issued by `issuer` (compared exactly with `iss`) for
    /// `audience` (the protected resource's canonical URL, one of `aud`).
    pub fn new(issuer: impl Into<String>, audience: impl Into<String>) -> JwtVerifier {
        Self::build(Settings {
            issuer: issuer.into(),
            audience: audience.into(),
            jwks_uri: None,
            tls: TlsOptions::default(),
            leeway: Duration::from_secs(60),
            min_refresh: Duration::from_secs(30),
            max_age: Duration::from_secs(3600),
            cache_ttl: Duration::from_secs(60),
        })
    }

    /// Most tokens remembered as verified at once.
    pub const CACHE_CAPACITY: usize = 1024;

    fn build(settings: Settings) -> JwtVerifier {
        let keys = KeyCache::new(KeySource {
            issuer: settings.issuer.clone(),
            jwks_uri: settings.jwks_uri.clone(),
            tls: settings.tls.clone(),
            min_refresh: settings.min_refresh,
            max_age: settings.max_age,
        });
        JwtVerifier {
            inner: Arc::new(Inner {
                issuer: settings.issuer,
                audience: settings.audience,
                leeway: settings.leeway,
                keys,
                cache_ttl: settings.cache_ttl,
                verified: Mutex::default(),
            }),
        }
    }

    fn settings(&self) -> Settings {
        let source = self.inner.keys.source();
        Settings {
            issuer: self.inner.issuer.clone(),
            audience: self.inner.audience.clone(),
            jwks_uri: source.jwks_uri.clone(),
            tls: source.tls.clone(),
            leeway: self.inner.leeway,
            min_refresh: source.min_refresh,
            max_age: source.max_age,
            cache_ttl: self.inner.cache_ttl,
        }
    }

    /// Fetches keys from `jwks_uri` instead of looking it up in the
    /// issuer's metadata.
    pub fn with_jwks_uri(self, jwks_uri: impl Into<String>) -> JwtVerifier {
        Self::build(Settings {
            jwks_uri: Some(jwks_uri.into()),
            ..self.settings()
        })
    }

    /// TLS settings for the metadata and JWKS fetches (extra CAs...).
    pub fn with_tls(self, tls: TlsOptions) -> JwtVerifier {
        Self::build(Settings {
            tls,
            ..self.settings()
        })
    }

    /// Clock skew tolerated on `exp`, `nbf` and `iat` (60 s by default).
    pub fn with_leeway(self, leeway: Duration) -> JwtVerifier {
        Self::build(Settings {
            leeway,
            ..self.settings()
        })
    }

    /// How long a token that verified is answered without checking its
    /// signature again (60 s by default; never past its `exp`);
    /// `Duration::ZERO` checks every time.
    ///
    /// ```
    /// use ferromcp::verifier::JwtVerifier;
    /// use std::time::Duration;
    ///
    /// // Every request checks the signature (keys removed take effect at once).
    /// let verifier = JwtVerifier::new("https://auth.example.com", "https://mcp.example.com/mcp")
    ///     .with_cache_ttl(Duration::ZERO);
    /// # let _ = verifier;
    /// ```
    pub fn with_cache_ttl(self, cache_ttl: Duration) -> JwtVerifier {
        Self::build(Settings {
            cache_ttl,
            ..self.settings()
        })
    }

    /// Least time between two key fetches caused by unknown key ids.
    pub fn with_min_refresh(self, min_refresh: Duration) -> JwtVerifier {
        Self::build(Settings {
            min_refresh,
            ..self.settings()
        })
    }

    /// Verifies `token` and returns its claims.
    pub async fn verify_token(&self, token: &str) -> Result<AuthInfo, TokenError> {
        let now = now_secs();
        if let Some(info) = crate::rpc::lock_unpoisoned(&self.inner.verified).get(token, now) {
            return Ok(info);
        }
        let (info, exp) = self.verify_uncached(token).await?;
        let until = exp.min(now.saturating_add(self.inner.cache_ttl.as_secs()));
        if until > now {
            crate::rpc::lock_unpoisoned(&self.inner.verified).insert(
                token,
                info.clone(),
                until,
                now,
            );
        }
        Ok(info)
    }

    /// The whole check of `token`: its claims, and its `exp`.
    async fn verify_uncached(&self, token: &str) -> Result<(AuthInfo, u64), TokenError> {
        let invalid = |why: &str| TokenError::Invalid(why.to_owned());
        let mut parts = token.split('.');
        let (Some(header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(invalid("not a JWS compact serialization"));
        };
        let header = decode_object(header).ok_or_else(|| invalid("unreadable JWT header"))?;
        check_critical(&header)?;
        let alg_name = header.get("alg").and_then(Value::as_str).unwrap_or("");
        // The algorithm comes from an allow-list, never `none` or HMAC
        // (an HMAC "signed" with a public key is the classic forgery).
        let alg = Alg::parse(alg_name).ok_or_else(|| {
            TokenError::Invalid(format!("algorithm {alg_name:?} is not accepted"))
        })?;
        let signature = URL_SAFE_NO_PAD
            .decode(signature)
            .map_err(|_| invalid("unreadable JWT signature"))?;
        let kid = header.get("kid").and_then(Value::as_str);
        let keys = self.inner.keys.keys_for(kid).await?;
        let signed = &token.as_bytes()[..header_len(token)];
        let verified = keys
            .iter()
            .filter(|k| kid.is_none() || k.kid.as_deref() == kid)
            .filter(|k| k.suits(alg, alg_name))
            .any(|k| k.verify(alg, signed, &signature));
        if !verified {
            return Err(invalid("bad signature or unknown signing key"));
        }
        let claims = decode_object(payload).ok_or_else(|| invalid("unreadable JWT claims"))?;
        let exp = self.check_claims(&claims)?;
        Ok((auth_info(claims), exp))
    }

    /// Checks the claims; returns `exp`.
    fn check_claims(&self, claims: &Map<String, Value>) -> Result<u64, TokenError> {
        let invalid = |why: String| Err(TokenError::Invalid(why));
        let iss = claims.get("iss").and_then(Value::as_str).unwrap_or("");
        if iss != self.inner.issuer {
            return invalid(format!("issued by {iss:?}, not {:?}", self.inner.issuer));
        }
        let audience = strings(claims.get("aud"));
        // A trailing `/` is not a different resource (the spec recommends
        // the form without it; providers differ in which they put in `aud`).
        let wanted = self.inner.audience.trim_end_matches('/');
        if !audience.iter().any(|a| a.trim_end_matches('/') == wanted) {
            return invalid(format!(
                "issued for {audience:?}, not {:?}",
                self.inner.audience
            ));
        }
        let now = now_secs();
        let leeway = self.inner.leeway.as_secs();
        let time = |name: &str| claims.get(name).and_then(Value::as_f64).map(|t| t as u64);
        let exp = match time("exp") {
            None => return invalid("no exp claim".into()),
            Some(exp) if exp.saturating_add(leeway) <= now => {
                return invalid("the token has expired".into());
            }
            Some(exp) => exp,
        };
        if time("nbf").is_some_and(|nbf| nbf > now.saturating_add(leeway)) {
            return invalid("the token is not valid yet (nbf)".into());
        }
        if time("iat").is_some_and(|iat| iat > now.saturating_add(leeway)) {
            return invalid("the token was issued in the future (iat)".into());
        }
        Ok(exp)
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify(
        &self,
        token: String,
        _request: TokenRequest,
    ) -> BoxFuture<Result<AuthInfo, TokenError>> {
        let this = self.clone();
        Box::pin(async move { this.verify_token(&token).await })
    }
}

/// Refuses a header with `crit` (RFC 7515 §4.1.11): it names extensions
/// the recipient must understand, and this verifier understands none, so
/// a token that lists any (or lists them malformed) is refused, never
/// accepted while ignoring what its issuer said is critical.
fn check_critical(header: &Map<String, Value>) -> Result<(), TokenError> {
    match header.get("crit") {
        None => Ok(()),
        Some(Value::Array(names)) if !names.is_empty() => {
            let names: Vec<&str> = names.iter().map(|n| n.as_str().unwrap_or("?")).collect();
            Err(TokenError::Invalid(format!(
                "the JWT header marks extensions this server does not understand as critical (crit: {names:?})"
            )))
        }
        Some(_) => Err(TokenError::Invalid(
            "malformed crit header parameter (RFC 7515 §4.1.11)".into(),
        )),
    }
}

/// Length of `header.payload`, the signed part.
fn header_len(token: &str) -> usize {
    token.rfind('.').unwrap_or(0)
}

fn decode_object(part: &str) -> Option<Map<String, Value>> {
    let bytes = URL_SAFE_NO_PAD.decode(part).ok()?;
    match serde_json::from_slice(&bytes).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// A string or an array of strings (`aud`, `scp`), as a list.
fn strings(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

pub(crate) fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The claims as [`AuthInfo`]: scopes from `scope` (space-separated,
/// RFC 9068 / RFC 8693) or `scp` (a list, or a space-separated string, as
/// some providers send it).
fn auth_info(claims: Map<String, Value>) -> AuthInfo {
    AuthInfo::from_claims(claims)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scopes_come_from_scope_or_scp_in_either_form() {
        let info = auth_info(
            json!({"scope": "a b", "sub": "u", "azp": "c"})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(info.scopes, ["a", "b"]);
        assert_eq!(info.client_id.as_deref(), Some("c"));
        let info = auth_info(
            json!({"scp": ["x", "y"], "aud": "r"})
                .as_object()
                .unwrap()
                .clone(),
        );
        assert_eq!(info.scopes, ["x", "y"]);
        assert_eq!(info.audience, ["r"]);
        let info = auth_info(json!({"scp": "x y"}).as_object().unwrap().clone());
        assert_eq!(info.scopes, ["x", "y"]);
    }

    #[test]
    fn verified_tokens_are_kept_until_their_time_and_never_past_the_capacity() {
        let info = AuthInfo {
            subject: Some("u".into()),
            ..AuthInfo::default()
        };
        let mut verified = Verified::default();
        verified.insert("t1", info.clone(), 100, 10);
        assert_eq!(verified.get("t1", 99), Some(info.clone()));
        assert_eq!(
            verified.get("t1", 100),
            None,
            "kept until, not at, its time"
        );
        assert_eq!(verified.get("t2", 10), None);
        // Full: the expired ones go first...
        for n in 0..JwtVerifier::CACHE_CAPACITY - 1 {
            verified.insert(&format!("n{n}"), info.clone(), 50, 10);
        }
        assert_eq!(verified.tokens.len(), JwtVerifier::CACHE_CAPACITY);
        verified.insert("late", info.clone(), 200, 60);
        assert_eq!(verified.tokens.len(), 2, "t1 and late; the expired went");
        // ...and with none expired, all of them: the bound holds.
        for n in 0..JwtVerifier::CACHE_CAPACITY {
            verified.insert(&format!("m{n}"), info.clone(), 500, 60);
        }
        assert!(verified.tokens.len() <= JwtVerifier::CACHE_CAPACITY);
    }

    #[test]
    fn a_crit_header_is_refused_whatever_it_names() {
        let header = |v: Value| v.as_object().cloned().unwrap_or_default();
        assert!(check_critical(&header(json!({"alg": "RS256"}))).is_ok());
        for crit in [
            json!(["exp"]),
            json!(["b64"]),
            json!([]),
            json!("exp"),
            json!(null),
        ] {
            let refused = check_critical(&header(json!({"alg": "RS256", "crit": crit})));
            assert!(
                matches!(&refused, Err(TokenError::Invalid(m)) if m.contains("crit")),
                "{crit}: {refused:?}"
            );
        }
    }

    #[test]
    fn the_signed_part_ends_before_the_last_dot() {
        assert_eq!(&"aa.bb.cc"[..header_len("aa.bb.cc")], "aa.bb");
    }
}
