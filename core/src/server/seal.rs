//! Integrity protection for values the server hands to clients and gets
//! back later (pagination cursors, and MRTR `requestState`): the client can
//! carry them but not forge or alter them.
//!
//! Format: `base64url(payload) "." base64url(HMAC-SHA256(key, purpose || payload))`.
//! The purpose string keeps a cursor from being replayed as request state.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// A sealing key. Several server replicas that share a key accept each
/// other's cursors and request state.
#[derive(Clone)]
pub struct SealKey([u8; 32]);

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(…)")
    }
}

impl SealKey {
    /// A fresh random key (from the operating system's CSPRNG).
    pub fn random() -> SealKey {
        let mut key = [0u8; 32];
        // getrandom only fails when the OS has no entropy source at all;
        // fall back to a per-process value rather than refusing to start.
        if getrandom::fill(&mut key).is_err() {
            let fallback = format!("{:?}{}", std::time::SystemTime::now(), std::process::id());
            let mut mac = HmacSha256::new_from_slice(fallback.as_bytes()).unwrap_or_else(|_| {
                HmacSha256::new_from_slice(b"ferromcp").expect("HMAC takes keys of any length")
            });
            mac.update(b"ferromcp-fallback-key");
            key.copy_from_slice(&mac.finalize().into_bytes());
        }
        SealKey(key)
    }

    /// A key derived from caller-provided secret bytes (any length).
    pub fn from_secret(secret: &[u8]) -> SealKey {
        let mut mac = HmacSha256::new_from_slice(b"ferromcp-seal-key-v1")
            .expect("HMAC takes keys of any length");
        mac.update(secret);
        let mut key = [0u8; 32];
        key.copy_from_slice(&mac.finalize().into_bytes());
        SealKey(key)
    }

    fn mac(&self, purpose: &str, payload: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(purpose.as_bytes());
        mac.update(&[0]);
        mac.update(payload);
        mac
    }

    /// Seals `payload` for `purpose`.
    pub fn seal(&self, purpose: &str, payload: &[u8]) -> String {
        let tag = self.mac(purpose, payload).finalize().into_bytes();
        let mut out = URL_SAFE_NO_PAD.encode(payload);
        out.push('.');
        out.push_str(&URL_SAFE_NO_PAD.encode(tag));
        out
    }

    /// Opens a sealed string, returning the payload only when the tag is
    /// valid for this key and purpose (constant-time comparison).
    pub fn open(&self, purpose: &str, sealed: &str) -> Option<Vec<u8>> {
        let (payload_b64, tag_b64) = sealed.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload_b64).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag_b64).ok()?;
        self.mac(purpose, &payload).verify_slice(&tag).ok()?;
        Some(payload)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_tampering() {
        let key = SealKey::random();
        let sealed = key.seal("cursor", b"offset=10");
        assert_eq!(
            key.open("cursor", &sealed).as_deref(),
            Some(&b"offset=10"[..])
        );
        assert_eq!(key.open("state", &sealed), None, "purpose is bound");
        assert_eq!(key.open("cursor", &format!("{sealed}-TAMPERED")), None);
        assert_eq!(
            SealKey::random().open("cursor", &sealed),
            None,
            "key is bound"
        );
        assert_eq!(key.open("cursor", "garbage"), None);
    }

    #[test]
    fn shared_secret_gives_shared_key() {
        let a = SealKey::from_secret(b"replica secret");
        let b = SealKey::from_secret(b"replica secret");
        assert!(b.open("x", &a.seal("x", b"1")).is_some());
    }
}
