//! DPoP (RFC 9449): tokens bound to a key the client holds. Every token
//! request and every request carrying the token gets a fresh proof JWT
//! (method, URL, time, a unique id, and for the resource the token's hash),
//! signed with an ES256 key made for this client; a server that wants a
//! nonce says so (`use_dpop_nonce` + `DPoP-Nonce`) and the request is sent
//! again with it.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, KeyPair};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;

use super::AuthError;
use super::pkce::random_token;
use crate::Error;
use crate::rpc::lock_unpoisoned;

/// The key proofs are signed with, and the nonces servers asked for.
pub(crate) struct DpopKey {
    pair: EcdsaKeyPair,
    rng: SystemRandom,
    jwk: Value,
    /// Last `DPoP-Nonce` per origin.
    nonces: Mutex<HashMap<String, String>>,
}

/// `scheme://authority/path`: `htu` carries no query or fragment, and
/// nonces are kept per origin.
fn without_query(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

fn origin(url: &str) -> String {
    crate::net::urls::split(url)
        .map(|(o, _)| o)
        .unwrap_or_default()
}

impl DpopKey {
    /// A fresh P-256 key (per client: proofs are unlinkable across clients).
    pub(crate) fn generate() -> Result<DpopKey, Error> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| AuthError::Token("cannot make a DPoP key".into()))?;
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .map_err(|_| AuthError::Token("cannot load the DPoP key".into()))?;
        // Uncompressed point: 0x04 || x (32) || y (32).
        let point = pair.public_key().as_ref();
        let (x, y) = (&point[1..33], &point[33..65]);
        let jwk = json!({"kty": "EC", "crv": "P-256",
            "x": URL_SAFE_NO_PAD.encode(x), "y": URL_SAFE_NO_PAD.encode(y)});
        Ok(DpopKey {
            pair,
            rng,
            jwk,
            nonces: Mutex::default(),
        })
    }

    /// Remembers the nonce a server at `url` asked for.
    pub(crate) fn remember_nonce(&self, url: &str, nonce: &str) {
        lock_unpoisoned(&self.nonces).insert(origin(url), nonce.to_owned());
    }

    /// A proof for one request; `access_token` for requests carrying one.
    pub(crate) fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<String, Error> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let mut claims = json!({"jti": random_token()?, "htm": method,
            "htu": without_query(url), "iat": now});
        if let Some(token) = access_token {
            claims["ath"] = json!(URL_SAFE_NO_PAD.encode(Sha256::digest(token.as_bytes())));
        }
        if let Some(nonce) = lock_unpoisoned(&self.nonces).get(&origin(url)) {
            claims["nonce"] = json!(nonce);
        }
        let header = json!({"typ": "dpop+jwt", "alg": "ES256", "jwk": self.jwk});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&self.rng, input.as_bytes())
            .map_err(|_| AuthError::Token("signing a DPoP proof failed".into()))?;
        Ok(format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, UnparsedPublicKey};

    fn part(jwt: &str, i: usize) -> Value {
        let p = jwt.split('.').nth(i).unwrap();
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(p).unwrap()).unwrap()
    }

    #[test]
    fn proofs_are_fresh_signed_and_bound_to_request_token_and_nonce() {
        let key = DpopKey::generate().unwrap();
        let a = key
            .proof("POST", "http://rs:1/mcp?x=1#f", Some("tok"))
            .unwrap();
        let b = key.proof("POST", "http://rs:1/mcp", Some("tok")).unwrap();
        let (ha, ca, cb) = (part(&a, 0), part(&a, 1), part(&b, 1));
        assert_eq!(ha["typ"], "dpop+jwt");
        assert!(ha["jwk"].get("d").is_none());
        assert_eq!(ca["htu"], "http://rs:1/mcp");
        assert_eq!(ca["htm"], "POST");
        assert_ne!(ca["jti"], cb["jti"]);
        assert_eq!(
            ca["ath"],
            json!(URL_SAFE_NO_PAD.encode(Sha256::digest(b"tok")))
        );
        assert!(ca.get("nonce").is_none());
        let (input, sig) = a.rsplit_once('.').unwrap();
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key.pair.public_key().as_ref())
            .verify(input.as_bytes(), &URL_SAFE_NO_PAD.decode(sig).unwrap())
            .expect("verifies");
        key.remember_nonce("http://rs:1/other", "n1");
        let c = key.proof("GET", "http://rs:1/mcp", None).unwrap();
        assert_eq!(part(&c, 1)["nonce"], "n1");
        assert!(part(&c, 1).get("ath").is_none());
        let other = key.proof("POST", "http://as:2/token", None).unwrap();
        assert!(part(&other, 1).get("nonce").is_none());
    }
}
