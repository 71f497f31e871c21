//! `private_key_jwt` client authentication (RFC 7523 §2.2, OpenID Connect
//! Core §9): a short-lived ES256 JWT signed with the client's key, sent as
//! `client_assertion` instead of a secret.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
use serde_json::json;

use super::AuthError;
use super::pkce::random_token;
use crate::Error;

/// `client_assertion_type` for a JWT assertion.
pub(crate) const ASSERTION_TYPE: &str = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/// How long an assertion is valid: long enough for one token request.
const LIFETIME_SECS: u64 = 300;

/// The DER inside a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`).
fn pkcs8_der(pem: &str) -> Result<Vec<u8>, AuthError> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .skip_while(|l| *l != "-----BEGIN PRIVATE KEY-----")
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    if body.is_empty() {
        return Err(AuthError::Token(
            "the client key is not a PKCS#8 PEM (BEGIN PRIVATE KEY)".into(),
        ));
    }
    STANDARD
        .decode(body)
        .map_err(|e| AuthError::Token(format!("the client key's PEM is not base64: {e}")))
}

/// A signed assertion: `iss` and `sub` the client id, `aud` the
/// authorization server's issuer.
pub(crate) fn client_assertion(
    client_id: &str,
    audience: &str,
    private_key_pem: &str,
    now: u64,
) -> Result<String, Error> {
    let rng = SystemRandom::new();
    let key = EcdsaKeyPair::from_pkcs8(
        &ECDSA_P256_SHA256_FIXED_SIGNING,
        &pkcs8_der(private_key_pem)?,
        &rng,
    )
    .map_err(|e| AuthError::Token(format!("the client key is not an ES256 (P-256) key: {e}")))?;
    let header = json!({"alg": "ES256", "typ": "JWT"});
    let claims = json!({
        "iss": client_id, "sub": client_id, "aud": audience,
        "iat": now, "exp": now + LIFETIME_SECS, "jti": random_token()?,
    });
    let signing_input = format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(header.to_string()),
        URL_SAFE_NO_PAD.encode(claims.to_string())
    );
    let signature = key
        .sign(&rng, signing_input.as_bytes())
        .map_err(|_| AuthError::Token("signing the client assertion failed".into()))?;
    Ok(format!(
        "{signing_input}.{}",
        URL_SAFE_NO_PAD.encode(signature.as_ref())
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{ECDSA_P256_SHA256_FIXED, KeyPair, UnparsedPublicKey};

    #[test]
    fn the_assertion_verifies_with_the_public_key_and_names_the_client() {
        let rng = SystemRandom::new();
        let der = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).unwrap();
        let pem = format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            STANDARD.encode(der.as_ref())
        );
        let public = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der.as_ref(), &rng)
            .unwrap()
            .public_key()
            .as_ref()
            .to_vec();
        let jwt = client_assertion("svc", "http://as", &pem, 1000).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        let input = format!("{}.{}", parts[0], parts[1]);
        UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, &public)
            .verify(input.as_bytes(), &signature)
            .expect("signature verifies");
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "svc");
        assert_eq!(claims["sub"], "svc");
        assert_eq!(claims["aud"], "http://as");
        assert_eq!(claims["exp"], 1300);
        assert!(client_assertion("svc", "http://as", "not a key", 0).is_err());
    }
}
