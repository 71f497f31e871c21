//! PKCE (RFC 7636) with S256, the only method OAuth 2.1 clients use when
//! they can, and the random `state`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::Error;

/// A code verifier and its S256 challenge.
#[derive(Debug, Clone)]
pub(crate) struct Pkce {
    pub(crate) verifier: String,
    pub(crate) challenge: String,
}

impl Pkce {
    /// A fresh verifier: 32 random bytes, base64url (43 characters, the
    /// RFC 7636 minimum length with 256 bits of entropy).
    pub(crate) fn generate() -> Result<Pkce, Error> {
        let verifier = random_token()?;
        Ok(Pkce {
            challenge: s256(&verifier),
            verifier,
        })
    }
}

/// `BASE64URL(SHA256(ASCII(verifier)))` (RFC 7636 §4.2).
pub(crate) fn s256(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// 32 random bytes, base64url: a PKCE verifier or an unguessable `state`.
pub(crate) fn random_token() -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| Error::Io(std::io::Error::other(format!("no randomness: {e}"))))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn s256_matches_the_rfc_7636_example() {
        // RFC 7636 Appendix B.
        assert_eq!(
            s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }

    #[test]
    fn verifiers_are_long_enough_unreserved_and_fresh() {
        let a = Pkce::generate().unwrap();
        let b = Pkce::generate().unwrap();
        assert_ne!(a.verifier, b.verifier);
        assert!((43..=128).contains(&a.verifier.len()));
        assert!(
            a.verifier
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
        );
        assert_eq!(a.challenge, s256(&a.verifier));
    }
}
