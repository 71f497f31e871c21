//! A test authorization server, as far as a protected MCP server sees one:
//! RFC 8414 metadata naming a `jwks_uri`, and a JWK Set that a test can
//! rotate, on a loopback port; plus signers minting JWT access tokens
//! with keys made at test time (ES256 and EdDSA by ring; the RSA key of
//! RS256/PS256 is a fixture, `fixtures/rsa-test-key.pem`, made with
//! `openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048`, as ring
//! cannot generate RSA keys).

#![allow(dead_code)]

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaKeyPair};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

enum Key {
    Es(EcdsaKeyPair),
    Ed(Ed25519KeyPair),
    Rsa(RsaKeyPair, bool),
}

/// A signing key with its key id.
pub struct Signer {
    pub kid: String,
    key: Key,
}

fn b64(bytes: &[u8]) -> String {
    URL_SAFE_NO_PAD.encode(bytes)
}

impl Signer {
    pub fn es256(kid: &str) -> Signer {
        let rng = SystemRandom::new();
        let alg = &signature::ECDSA_P256_SHA256_FIXED_SIGNING;
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(alg, &rng).unwrap();
        let key = EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).unwrap();
        Signer {
            kid: kid.into(),
            key: Key::Es(key),
        }
    }

    pub fn eddsa(kid: &str) -> Signer {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        Signer {
            kid: kid.into(),
            key: Key::Ed(Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).unwrap()),
        }
    }

    /// RS256 (`pss: false`) or PS256 with the fixture RSA key.
    pub fn rsa(kid: &str, pss: bool) -> Signer {
        let pem = include_str!("../fixtures/rsa-test-key.pem");
        let der: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        let der = STANDARD.decode(der).unwrap();
        Signer {
            kid: kid.into(),
            key: Key::Rsa(RsaKeyPair::from_pkcs8(&der).unwrap(), pss),
        }
    }

    pub fn alg(&self) -> &'static str {
        match &self.key {
            Key::Es(_) => "ES256",
            Key::Ed(_) => "EdDSA",
            Key::Rsa(_, false) => "RS256",
            Key::Rsa(_, true) => "PS256",
        }
    }

    /// The public key as a JWK.
    pub fn jwk(&self) -> Value {
        match &self.key {
            Key::Es(k) => {
                let point = k.public_key().as_ref();
                json!({"kty": "EC", "crv": "P-256", "kid": self.kid, "use": "sig", "alg": "ES256",
                    "x": b64(&point[1..33]), "y": b64(&point[33..65])})
            }
            Key::Ed(k) => {
                json!({"kty": "OKP", "crv": "Ed25519", "kid": self.kid, "x": b64(k.public_key().as_ref())})
            }
            Key::Rsa(k, _) => {
                let parts: signature::RsaPublicKeyComponents<Vec<u8>> = k.public().into();
                json!({"kty": "RSA", "kid": self.kid, "n": b64(&parts.n), "e": b64(&parts.e)})
            }
        }
    }

    /// A signed JWT with these claims.
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_with_header(claims, &json!({}))
    }

    /// A signed JWT with these claims and these header parameters added
    /// to the usual ones (a forged token that is well signed).
    pub fn sign_with_header(&self, claims: &Value, extra: &Value) -> String {
        let mut header = json!({"alg": self.alg(), "typ": "at+jwt", "kid": self.kid});
        if let (Some(header), Some(extra)) = (header.as_object_mut(), extra.as_object()) {
            header.extend(extra.clone());
        }
        let input = format!(
            "{}.{}",
            b64(header.to_string().as_bytes()),
            b64(claims.to_string().as_bytes())
        );
        let rng = SystemRandom::new();
        let sig = match &self.key {
            Key::Es(k) => k.sign(&rng, input.as_bytes()).unwrap().as_ref().to_vec(),
            Key::Ed(k) => k.sign(input.as_bytes()).as_ref().to_vec(),
            Key::Rsa(k, pss) => {
                let mut out = vec![0; k.public().modulus_len()];
                let padding: &dyn signature::RsaEncoding = if *pss {
                    &signature::RSA_PSS_SHA256
                } else {
                    &signature::RSA_PKCS1_SHA256
                };
                k.sign(padding, &rng, input.as_bytes(), &mut out).unwrap();
                out
            }
        };
        format!("{input}.{}", b64(&sig))
    }
}

/// The issuer's HTTP side: metadata and a rotatable JWK Set.
pub struct Issuer {
    pub url: String,
    keys: Arc<Mutex<Value>>,
    fetches: Arc<AtomicUsize>,
    /// `(scope, resource)` of each token issued by `/token`.
    pub issued: Arc<Mutex<Vec<(String, String)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Issuer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Issuer {
    /// Serves metadata and `keys` on a free loopback port.
    pub async fn start(keys: &[&Signer]) -> Issuer {
        Self::start_with(keys, None).await
    }

    /// Also a token endpoint: the `client_credentials` grant for client
    /// `service` with secret `s3cret` (HTTP Basic), issuing JWTs signed by
    /// `signer` for the requested `resource` and `scope`.
    pub async fn start_issuing(signer: Arc<Signer>) -> Issuer {
        Self::start_with(&[&signer], Some(signer.clone())).await
    }

    async fn start_with(keys: &[&Signer], token_signer: Option<Arc<Signer>>) -> Issuer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://127.0.0.1:{}", listener.local_addr().unwrap().port());
        let jwks = Arc::new(Mutex::new(Value::Null));
        let fetches = Arc::new(AtomicUsize::new(0));
        let issued = Arc::new(Mutex::new(Vec::new()));
        let (task_url, task_keys, task_fetches) = (url.clone(), jwks.clone(), fetches.clone());
        let task_issued = issued.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let (url, keys, fetches) =
                    (task_url.clone(), task_keys.clone(), task_fetches.clone());
                let (signer, issued) = (token_signer.clone(), task_issued.clone());
                tokio::spawn(async move {
                    let mut head = Vec::new();
                    let mut buf = [0u8; 1024];
                    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => head.extend_from_slice(&buf[..n]),
                        }
                    }
                    let end = head.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
                    let mut body = head.split_off(end);
                    let head = String::from_utf8_lossy(&head).into_owned();
                    let length = head
                        .lines()
                        .find_map(|l| {
                            let (name, value) = l.split_once(':')?;
                            name.eq_ignore_ascii_case("content-length")
                                .then(|| value.trim().parse::<usize>().ok())?
                        })
                        .unwrap_or(0);
                    while body.len() < length {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => body.extend_from_slice(&buf[..n]),
                        }
                    }
                    let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
                    let (status, body) = match path.as_str() {
                        "/.well-known/oauth-authorization-server" => (
                            200,
                            json!({"issuer": url, "jwks_uri": format!("{url}/jwks"),
                                "authorization_endpoint": format!("{url}/authorize"),
                                "token_endpoint": format!("{url}/token")}),
                        ),
                        "/jwks" => {
                            fetches.fetch_add(1, Ordering::SeqCst);
                            (200, keys.lock().unwrap().clone())
                        }
                        "/token" if signer.is_some() => {
                            let signer = signer.as_ref().unwrap();
                            token_answer(&url, signer, &head, &body, &issued)
                        }
                        _ => (404, json!({})),
                    };
                    let body = body.to_string();
                    let response = format!(
                        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                    let _ = stream.shutdown().await;
                });
            }
        });
        let issuer = Issuer {
            url,
            keys: jwks,
            fetches,
            issued,
            task,
        };
        issuer.publish(keys);
        issuer
    }

    /// Replaces the published key set.
    pub fn publish(&self, keys: &[&Signer]) {
        let keys: Vec<Value> = keys.iter().map(|k| k.jwk()).collect();
        *self.keys.lock().unwrap() = json!({ "keys": keys });
    }

    /// How many times the JWK Set was fetched.
    pub fn jwks_fetches(&self) -> usize {
        self.fetches.load(Ordering::SeqCst)
    }

    /// Claims of a good token for `audience` with `scope`, valid for an hour.
    pub fn claims(&self, audience: &str, scope: &str) -> Value {
        let now = now();
        json!({"iss": self.url, "sub": "alice", "aud": audience, "client_id": "test-client",
            "scope": scope, "iat": now, "exp": now + 3600})
    }
}

/// Percent-decoded `application/x-www-form-urlencoded` pairs.
fn form(body: &[u8]) -> Vec<(String, String)> {
    let decode = |s: &str| {
        percent_encoding::percent_decode_str(&s.replace('+', " "))
            .decode_utf8_lossy()
            .into_owned()
    };
    String::from_utf8_lossy(body)
        .split('&')
        .filter_map(|p| p.split_once('='))
        .map(|(k, v)| (decode(k), decode(v)))
        .collect()
}

/// The token endpoint: `client_credentials` for `service:s3cret`.
fn token_answer(
    url: &str,
    signer: &Signer,
    head: &str,
    body: &[u8],
    issued: &Mutex<Vec<(String, String)>>,
) -> (u16, Value) {
    let basic = format!("Basic {}", STANDARD.encode("service:s3cret"));
    let authorized = head.lines().any(|l| {
        l.split_once(':')
            .is_some_and(|(n, v)| n.eq_ignore_ascii_case("authorization") && v.trim() == basic)
    });
    if !authorized {
        return (401, json!({"error": "invalid_client"}));
    }
    let form = form(body);
    let get = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    if get("grant_type") != "client_credentials" {
        return (400, json!({"error": "unsupported_grant_type"}));
    }
    let (scope, resource) = (get("scope"), get("resource"));
    issued
        .lock()
        .unwrap()
        .push((scope.clone(), resource.clone()));
    let now = now();
    let token = signer.sign(
        &json!({"iss": url, "sub": "service", "client_id": "service",
        "aud": resource, "scope": scope, "iat": now, "exp": now + 600}),
    );
    (
        200,
        json!({"access_token": token, "token_type": "Bearer", "expires_in": 600, "scope": scope}),
    )
}
