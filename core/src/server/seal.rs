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

/// The environment variable every language's server reads its keys from
/// when the application sets none: comma-separated base64 secrets, the
/// first seals, all open.
pub const SEAL_KEYS_ENV: &str = "FERROMCP_SEAL_KEYS";

/// The shortest secret a key is derived from (128 bits).
const MIN_SECRET_BYTES: usize = 16;

/// Sealing keys: the first seals, every one opens. Several server replicas
/// that share the keys accept each other's cursors and request state; to
/// rotate, put the new key first and keep the old ones until what they
/// sealed has expired (`request_state_ttl`; cursors live as long as a
/// client walks a list).
#[derive(Clone)]
pub struct SealKey {
    /// Never empty.
    keys: std::sync::Arc<[[u8; 32]]>,
    /// Made up by this process ([`SealKey::random`]): nothing it seals is
    /// valid in another.
    random: bool,
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealKey({} key(s), …)", self.keys.len())
    }
}

impl SealKey {
    fn one(key: [u8; 32], random: bool) -> SealKey {
        SealKey {
            keys: std::sync::Arc::new([key]),
            random,
        }
    }

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
        SealKey::one(key, true)
    }

    /// A key derived from caller-provided secret bytes (any length).
    pub fn from_secret(secret: &[u8]) -> SealKey {
        let mut mac = HmacSha256::new_from_slice(b"ferromcp-seal-key-v1")
            .expect("HMAC takes keys of any length");
        mac.update(secret);
        let mut key = [0u8; 32];
        key.copy_from_slice(&mac.finalize().into_bytes());
        SealKey::one(key, false)
    }

    /// Keys for rotation: the first of `keys` seals, each of them opens
    /// (their own rings included, in order). `None` for no key.
    ///
    /// ```
    /// use ferromcp::server::SealKey;
    /// let (old, new) = (SealKey::from_secret(b"2026-11 secret"), SealKey::from_secret(b"2026-12 secret"));
    /// let sealed_before = old.seal("cursor", b"page 2");
    /// let ring = SealKey::ring([new.clone(), old]).unwrap();
    /// assert!(ring.open("cursor", &sealed_before).is_some()); // still accepted
    /// assert!(new.open("cursor", &ring.seal("cursor", b"page 3")).is_some()); // sealed with the new
    /// ```
    pub fn ring(keys: impl IntoIterator<Item = SealKey>) -> Option<SealKey> {
        let keys: Vec<[u8; 32]> = keys
            .into_iter()
            .flat_map(|k| k.keys.iter().copied().collect::<Vec<_>>())
            .collect();
        (!keys.is_empty()).then(|| SealKey {
            keys: keys.into(),
            random: false,
        })
    }

    /// Keys from base64 secrets (standard or URL-safe alphabet, padded or
    /// not, of at least 16 bytes each), the first sealing: the form of
    /// [`SEAL_KEYS_ENV`] and of every binding's `sealKeys` option. A
    /// mistake names the key by its position, never its value.
    ///
    /// ```
    /// use ferromcp::server::SealKey;
    /// let keys = SealKey::from_base64_list(["c2VjcmV0LW9mLTIwMjYtMTI=", "b2xkLXNlY3JldC0yMDI2LTEx"])?;
    /// assert!(!keys.is_random());
    /// let error = SealKey::from_base64_list(["c2hvcnQ="]).unwrap_err();
    /// assert_eq!(error, "seal key 1 is 5 bytes: a key needs at least 16 (base64 of random bytes, e.g. `openssl rand -base64 32`)");
    /// # Ok::<(), String>(())
    /// ```
    pub fn from_base64_list<'a>(
        keys: impl IntoIterator<Item = &'a str>,
    ) -> Result<SealKey, String> {
        use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE};
        let mut ring = Vec::new();
        for (n, text) in keys.into_iter().enumerate() {
            let text = text.trim();
            let n = n + 1;
            let bytes = [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
                .iter()
                .find_map(|engine| engine.decode(text).ok())
                .ok_or_else(|| format!("seal key {n} is not base64"))?;
            if bytes.len() < MIN_SECRET_BYTES {
                return Err(format!(
                    "seal key {n} is {} bytes: a key needs at least {MIN_SECRET_BYTES} (base64 of random bytes, e.g. `openssl rand -base64 32`)",
                    bytes.len()
                ));
            }
            ring.push(SealKey::from_secret(&bytes));
        }
        SealKey::ring(ring).ok_or_else(|| "no seal key given".to_owned())
    }

    /// The keys of [`SEAL_KEYS_ENV`] (comma-separated), `Ok(None)` when it
    /// is unset or empty.
    pub fn from_env() -> Result<Option<SealKey>, String> {
        match std::env::var(SEAL_KEYS_ENV) {
            Ok(list) if !list.trim().is_empty() => {
                SealKey::from_base64_list(list.split(',').filter(|k| !k.trim().is_empty()))
                    .map(Some)
                    .map_err(|e| format!("{SEAL_KEYS_ENV}: {e}"))
            }
            _ => Ok(None),
        }
    }

    /// The keys a server uses when the application gave none:
    /// [`SEAL_KEYS_ENV`]'s, else a random one. A malformed variable is
    /// logged as an error and a random key used (this process's state then
    /// opens nowhere else).
    pub fn from_env_or_random() -> SealKey {
        match SealKey::from_env() {
            Ok(Some(keys)) => keys,
            Ok(None) => SealKey::random(),
            Err(error) => {
                // Every `ServerOptions::default()` comes here: say it once
                // per process, not once per server.
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    tracing::error!(%error, "ignoring the seal keys: using a random key");
                });
                SealKey::random()
            }
        }
    }

    /// Whether this process made the key up: what it seals opens nowhere
    /// else (another replica, a restart).
    pub fn is_random(&self) -> bool {
        self.random
    }

    fn first(&self) -> &[u8; 32] {
        // `keys` is never empty (every constructor puts one in).
        &self.keys[0]
    }

    fn mac(key: &[u8; 32], purpose: &str, payload: &[u8]) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
        mac.update(purpose.as_bytes());
        mac.update(&[0]);
        mac.update(payload);
        mac
    }

    /// Seals `payload` for `purpose`.
    pub fn seal(&self, purpose: &str, payload: &[u8]) -> String {
        let tag = SealKey::mac(self.first(), purpose, payload)
            .finalize()
            .into_bytes();
        let mut out = URL_SAFE_NO_PAD.encode(payload);
        out.push('.');
        out.push_str(&URL_SAFE_NO_PAD.encode(tag));
        out
    }

    /// Opens a sealed string, returning the payload only when the tag is
    /// valid for one of the keys and this purpose (constant-time
    /// comparison).
    pub fn open(&self, purpose: &str, sealed: &str) -> Option<Vec<u8>> {
        let (payload_b64, tag_b64) = sealed.split_once('.')?;
        let payload = URL_SAFE_NO_PAD.decode(payload_b64).ok()?;
        let tag = URL_SAFE_NO_PAD.decode(tag_b64).ok()?;
        self.keys
            .iter()
            .any(|key| {
                SealKey::mac(key, purpose, &payload)
                    .verify_slice(&tag)
                    .is_ok()
            })
            .then_some(payload)
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
    fn a_ring_seals_with_its_first_key_and_opens_with_each() {
        let (old, new) = (SealKey::from_secret(b"old"), SealKey::from_secret(b"new"));
        let ring = SealKey::ring([new.clone(), old.clone()]).unwrap();
        assert!(ring.open("x", &old.seal("x", b"1")).is_some());
        assert!(ring.open("x", &new.seal("x", b"1")).is_some());
        let sealed = ring.seal("x", b"2");
        assert!(new.open("x", &sealed).is_some());
        assert!(old.open("x", &sealed).is_none(), "the first key seals");
        assert!(SealKey::ring([]).is_none());
        assert!(SealKey::random().is_random() && !ring.is_random());
    }

    #[test]
    fn base64_lists_take_either_alphabet_and_name_mistakes_by_position() {
        let a = SealKey::from_base64_list(["AAECAwQFBgcICQoLDA0ODw=="]).unwrap();
        let b = SealKey::from_base64_list(["AAECAwQFBgcICQoLDA0ODw"]).unwrap();
        assert!(b.open("x", &a.seal("x", b"1")).is_some());
        let err = SealKey::from_base64_list(["AAECAwQFBgcICQoLDA0ODw", "!!"]).unwrap_err();
        assert_eq!(err, "seal key 2 is not base64");
        assert_eq!(
            SealKey::from_base64_list([]).unwrap_err(),
            "no seal key given"
        );
    }

    #[test]
    fn shared_secret_gives_shared_key() {
        let a = SealKey::from_secret(b"replica secret");
        let b = SealKey::from_secret(b"replica secret");
        assert!(b.open("x", &a.seal("x", b"1")).is_some());
    }
}
