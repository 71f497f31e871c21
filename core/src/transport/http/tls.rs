//! TLS on the HTTP server itself, for deployments without a terminating
//! proxy (a single container, a C or Rust program serving `https://`).
//!
//! rustls with the ring provider and its safe defaults (TLS 1.2 and 1.3),
//! as the client uses; HTTP/1.1 by ALPN. The certificate and key are PEM
//! files, read again when either changes (checked at most once a second,
//! at a handshake), so a renewed certificate is served without a restart;
//! a renewal that does not load (a half-written file, a key that does not
//! match) keeps the previous pair and says why in the log. Client
//! certificates (mutual TLS) are optional: with a CA file, a client must
//! present a certificate it signed (or may, with `client_auth_optional`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;

use crate::Error;
use crate::rpc::lock_unpoisoned;

/// TLS settings of an HTTP server (see [`super::HttpOptions::tls`]).
///
/// ```no_run
/// use ferromcp::transport::http::{HttpOptions, ServerTls};
/// let options = HttpOptions {
///     tls: Some(ServerTls::new("/etc/mcp/cert.pem", "/etc/mcp/key.pem")),
///     ..HttpOptions::localhost(8443)
/// };
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerTls {
    /// The certificate chain, PEM (the server's certificate first).
    pub cert_file: PathBuf,
    /// The private key, PEM (PKCS#8, PKCS#1 or SEC1).
    pub key_file: PathBuf,
    /// CA certificates (PEM) that sign the client certificates accepted:
    /// mutual TLS. `None`: clients are not asked for a certificate.
    pub client_ca_file: Option<PathBuf>,
    /// With `client_ca_file`: whether a client without a certificate is
    /// still served (one with a certificate must present a valid one).
    pub client_auth_optional: bool,
}

impl ServerTls {
    /// TLS with this certificate chain and key, no client certificates.
    pub fn new(cert_file: impl Into<PathBuf>, key_file: impl Into<PathBuf>) -> ServerTls {
        ServerTls {
            cert_file: cert_file.into(),
            key_file: key_file.into(),
            client_ca_file: None,
            client_auth_optional: false,
        }
    }

    /// Requires client certificates signed by the CAs in `ca_file`.
    pub fn with_client_ca(mut self, ca_file: impl Into<PathBuf>) -> ServerTls {
        self.client_ca_file = Some(ca_file.into());
        self
    }

    /// The acceptor the listener wraps its connections with. Fails when a
    /// file cannot be read or parsed, or the key does not fit.
    pub(crate) fn acceptor(&self) -> Result<tokio_rustls::TlsAcceptor, Error> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let resolver = Arc::new(Reloading::new(
            self.cert_file.clone(),
            self.key_file.clone(),
            provider.clone(),
        )?);
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_error(e.to_string()))?;
        let builder = match &self.client_ca_file {
            None => builder.with_no_client_auth(),
            Some(ca_file) => {
                let mut roots = rustls::RootCertStore::empty();
                for cert in read_certs(ca_file)? {
                    roots
                        .add(cert)
                        .map_err(|e| tls_error(format!("client CA {}: {e}", ca_file.display())))?;
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
                let verifier = if self.client_auth_optional {
                    verifier.allow_unauthenticated()
                } else {
                    verifier
                };
                builder.with_client_cert_verifier(
                    verifier.build().map_err(|e| tls_error(e.to_string()))?,
                )
            }
        };
        let mut config = builder.with_cert_resolver(resolver);
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
    }
}

fn tls_error(reason: String) -> Error {
    Error::Tls {
        host: "server".into(),
        reason,
    }
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| tls_error(format!("cannot read {}: {e}", path.display())))
}

fn read_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, Error> {
    let certs = CertificateDer::pem_slice_iter(&read(path)?)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls_error(format!("{}: invalid PEM certificate: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(tls_error(format!(
            "{}: no CERTIFICATE block",
            path.display()
        )));
    }
    Ok(certs)
}

/// How often, at most, the files are looked at again.
const RECHECK: Duration = Duration::from_secs(1);

/// The server's certificate, read again from its files when they change.
struct Reloading {
    cert_file: PathBuf,
    key_file: PathBuf,
    provider: Arc<rustls::crypto::CryptoProvider>,
    state: Mutex<Loaded>,
}

struct Loaded {
    key: Arc<CertifiedKey>,
    /// The files' modification times when `key` was read.
    stamps: (Option<SystemTime>, Option<SystemTime>),
    checked: Instant,
}

impl std::fmt::Debug for Reloading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reloading")
            .field("cert_file", &self.cert_file)
            .field("key_file", &self.key_file)
            .finish_non_exhaustive()
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

impl Reloading {
    fn new(
        cert_file: PathBuf,
        key_file: PathBuf,
        provider: Arc<rustls::crypto::CryptoProvider>,
    ) -> Result<Reloading, Error> {
        let stamps = (modified(&cert_file), modified(&key_file));
        let key = load(&cert_file, &key_file, &provider)?;
        Ok(Reloading {
            cert_file,
            key_file,
            provider,
            state: Mutex::new(Loaded {
                key,
                stamps,
                checked: Instant::now(),
            }),
        })
    }

    fn current(&self) -> Arc<CertifiedKey> {
        let mut loaded = lock_unpoisoned(&self.state);
        if loaded.checked.elapsed() >= RECHECK {
            loaded.checked = Instant::now();
            let stamps = (modified(&self.cert_file), modified(&self.key_file));
            if stamps != loaded.stamps {
                match load(&self.cert_file, &self.key_file, &self.provider) {
                    Ok(key) => {
                        tracing::info!(cert = %self.cert_file.display(), "TLS certificate reloaded");
                        loaded.key = key;
                        loaded.stamps = stamps;
                    }
                    // A renewal caught half-written is tried again at the
                    // next check: its stamps are not taken.
                    Err(error) => {
                        tracing::warn!(%error, "TLS certificate changed but did not load: serving the previous one");
                    }
                }
            }
        }
        loaded.key.clone()
    }
}

fn load(
    cert_file: &Path,
    key_file: &Path,
    provider: &rustls::crypto::CryptoProvider,
) -> Result<Arc<CertifiedKey>, Error> {
    let chain = read_certs(cert_file)?;
    let key = PrivateKeyDer::from_pem_slice(&read(key_file)?)
        .map_err(|e| tls_error(format!("{}: invalid private key: {e}", key_file.display())))?;
    let key = CertifiedKey::from_der(chain, key, provider).map_err(|e| {
        tls_error(format!(
            "{} and {}: {e}",
            cert_file.display(),
            key_file.display()
        ))
    })?;
    Ok(Arc::new(key))
}

impl ResolvesServerCert for Reloading {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}
