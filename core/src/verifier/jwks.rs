//! The issuer's signing keys (a JWK Set, RFC 7517): parsed into keys ring
//! can verify with, fetched from the `jwks_uri` (found in the issuer's
//! RFC 8414 / OpenID metadata unless given), cached, and fetched again when
//! a token names a key id the cache does not know (the issuer rotated its
//! keys), at most once per `min_refresh` so a stream of forged key ids
//! cannot make the server hammer the issuer.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{self, RsaPublicKeyComponents, UnparsedPublicKey};
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::time::Instant;

use crate::net::TlsOptions;
use crate::net::fetch::Fetcher;
use crate::net::urls;
use crate::server::auth::TokenError;

/// A signature algorithm this verifier accepts (JWS `alg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Alg {
    Rs256,
    Ps256,
    Es256,
    EdDsa,
}

impl Alg {
    pub(crate) fn parse(name: &str) -> Option<Alg> {
        Some(match name {
            "RS256" => Alg::Rs256,
            "PS256" => Alg::Ps256,
            "ES256" => Alg::Es256,
            "EdDSA" => Alg::EdDsa,
            _ => return None,
        })
    }
}

/// One public key of the set.
#[derive(Debug, Clone)]
pub(crate) struct Jwk {
    pub(crate) kid: Option<String>,
    /// The key's own `alg`, when it pins one.
    alg: Option<String>,
    material: Material,
}

#[derive(Debug, Clone)]
enum Material {
    Rsa {
        n: Vec<u8>,
        e: Vec<u8>,
    },
    /// Uncompressed SEC1 point (0x04 ‖ x ‖ y).
    P256(Vec<u8>),
    Ed25519(Vec<u8>),
}

fn b64(map: &Map<String, Value>, key: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD
        .decode(map.get(key)?.as_str()?.trim_end_matches('='))
        .ok()
}

impl Jwk {
    /// A key from its JWK object; `None` for keys this verifier cannot use
    /// (other types or curves, encryption keys), which are skipped.
    fn parse(map: &Map<String, Value>) -> Option<Jwk> {
        if map
            .get("use")
            .and_then(Value::as_str)
            .is_some_and(|u| u != "sig")
        {
            return None;
        }
        let material = match map.get("kty")?.as_str()? {
            "RSA" => Material::Rsa {
                n: b64(map, "n")?,
                e: b64(map, "e")?,
            },
            "EC" if map.get("crv")?.as_str()? == "P-256" => {
                let (x, y) = (b64(map, "x")?, b64(map, "y")?);
                if x.len() != 32 || y.len() != 32 {
                    return None;
                }
                let mut point = Vec::with_capacity(65);
                point.push(4);
                point.extend_from_slice(&x);
                point.extend_from_slice(&y);
                Material::P256(point)
            }
            "OKP" if map.get("crv")?.as_str()? == "Ed25519" => Material::Ed25519(b64(map, "x")?),
            _ => return None,
        };
        Some(Jwk {
            kid: map.get("kid").and_then(Value::as_str).map(str::to_owned),
            alg: map.get("alg").and_then(Value::as_str).map(str::to_owned),
            material,
        })
    }

    /// Whether this key can check a signature made with `alg` (named
    /// `alg_name` in the token header).
    pub(crate) fn suits(&self, alg: Alg, alg_name: &str) -> bool {
        if self.alg.as_deref().is_some_and(|a| a != alg_name) {
            return false;
        }
        matches!(
            (alg, &self.material),
            (Alg::Rs256 | Alg::Ps256, Material::Rsa { .. })
                | (Alg::Es256, Material::P256(_))
                | (Alg::EdDsa, Material::Ed25519(_))
        )
    }

    /// Checks `signature` over `message`.
    pub(crate) fn verify(&self, alg: Alg, message: &[u8], signature: &[u8]) -> bool {
        match (&self.material, alg) {
            (Material::Rsa { n, e }, Alg::Rs256 | Alg::Ps256) => {
                let params = if alg == Alg::Rs256 {
                    &signature::RSA_PKCS1_2048_8192_SHA256
                } else {
                    &signature::RSA_PSS_2048_8192_SHA256
                };
                RsaPublicKeyComponents { n, e }
                    .verify(params, message, signature)
                    .is_ok()
            }
            (Material::P256(point), Alg::Es256) => {
                UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                    .verify(message, signature)
                    .is_ok()
            }
            (Material::Ed25519(x), Alg::EdDsa) => UnparsedPublicKey::new(&signature::ED25519, x)
                .verify(message, signature)
                .is_ok(),
            _ => false,
        }
    }
}

/// The usable keys of a JWK Set document.
pub(crate) fn parse_set(doc: &Value) -> Result<Vec<Jwk>, String> {
    let keys = doc
        .get("keys")
        .and_then(Value::as_array)
        .ok_or("the JWK Set has no \"keys\" array")?;
    Ok(keys
        .iter()
        .filter_map(Value::as_object)
        .filter_map(Jwk::parse)
        .collect())
}

/// Where the keys come from and how often they may be fetched.
pub(crate) struct KeySource {
    pub(crate) issuer: String,
    /// Given, or found in the issuer's metadata on first use.
    pub(crate) jwks_uri: Option<String>,
    pub(crate) tls: TlsOptions,
    pub(crate) min_refresh: Duration,
    pub(crate) max_age: Duration,
}

struct Cached {
    keys: Arc<Vec<Jwk>>,
    jwks_uri: Option<String>,
    fetched: Option<Instant>,
}

/// The cached key set. One lock held across a fetch: concurrent requests
/// with a new key id wait for one fetch instead of each starting one.
pub(crate) struct KeyCache {
    source: KeySource,
    fetcher: Fetcher,
    cached: Mutex<Cached>,
}

impl KeyCache {
    pub(crate) fn new(source: KeySource) -> KeyCache {
        KeyCache {
            fetcher: Fetcher::new(source.tls.clone()),
            cached: Mutex::new(Cached {
                keys: Arc::new(Vec::new()),
                jwks_uri: source.jwks_uri.clone(),
                fetched: None,
            }),
            source,
        }
    }

    /// The keys to try for a token naming `kid`: the cached set, fetched
    /// first when there is none yet, it is older than `max_age`, or it
    /// lacks `kid` and the last fetch is older than `min_refresh`.
    pub(crate) async fn keys_for(&self, kid: Option<&str>) -> Result<Arc<Vec<Jwk>>, TokenError> {
        let mut cached = self.cached.lock().await;
        let known = |keys: &[Jwk]| match kid {
            Some(kid) => keys.iter().any(|k| k.kid.as_deref() == Some(kid)),
            None => !keys.is_empty(),
        };
        let stale = match cached.fetched {
            None => true,
            Some(at) => {
                at.elapsed() >= self.source.max_age
                    || (!known(&cached.keys) && at.elapsed() >= self.source.min_refresh)
            }
        };
        if stale {
            // A failed fetch counts as one too: retrying on every request
            // would hammer an issuer that is down.
            cached.fetched = Some(Instant::now());
            match self.fetch(&mut cached).await {
                Ok(keys) => {
                    tracing::debug!(issuer = %self.source.issuer, keys = keys.len(), "fetched the issuer's JWKS");
                    cached.keys = Arc::new(keys);
                }
                Err(why) => {
                    tracing::warn!(issuer = %self.source.issuer, error = %why, "could not fetch the issuer's JWKS");
                    if cached.keys.is_empty() {
                        return Err(TokenError::Unavailable(why));
                    }
                }
            }
        }
        if cached.keys.is_empty() {
            return Err(TokenError::Unavailable(format!(
                "no signing keys from issuer {} yet",
                self.source.issuer
            )));
        }
        Ok(cached.keys.clone())
    }

    async fn fetch(&self, cached: &mut Cached) -> Result<Vec<Jwk>, String> {
        let jwks_uri = match &cached.jwks_uri {
            Some(uri) => uri.clone(),
            None => {
                let uri = self.discover().await?;
                cached.jwks_uri = Some(uri.clone());
                uri
            }
        };
        let answer = self
            .fetcher
            .get(&jwks_uri)
            .await
            .map_err(|e| format!("{jwks_uri}: {e}"))?;
        if !answer.ok() {
            return Err(format!("{jwks_uri} answered HTTP {}", answer.status));
        }
        let doc: Value =
            serde_json::from_slice(&answer.body).map_err(|e| format!("{jwks_uri}: {e}"))?;
        parse_set(&doc).map_err(|e| format!("{jwks_uri}: {e}"))
    }

    /// The `jwks_uri` of the issuer's metadata (RFC 8414, then OpenID
    /// discovery), whose `issuer` must be the configured one exactly.
    async fn discover(&self) -> Result<String, String> {
        let issuer = &self.source.issuer;
        let mut tried = Vec::new();
        for url in urls::server_metadata_urls(issuer) {
            let answer = match self.fetcher.get(&url).await {
                Ok(answer) => answer,
                Err(e) => {
                    tried.push(format!("{url} ({e})"));
                    continue;
                }
            };
            let Some(doc) = answer.json().filter(|_| answer.ok()) else {
                tried.push(format!("{url} (HTTP {})", answer.status));
                continue;
            };
            let claimed = doc.get("issuer").and_then(Value::as_str).unwrap_or("");
            if claimed != issuer {
                return Err(format!(
                    "{url} claims issuer {claimed:?}, expected {issuer:?}"
                ));
            }
            return doc
                .get("jwks_uri")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| format!("{url} has no jwks_uri"));
        }
        Err(format!(
            "no metadata for issuer {issuer}; tried {}",
            tried.join(", ")
        ))
    }
}

impl KeyCache {
    pub(crate) fn source(&self) -> &KeySource {
        &self.source
    }
}
