//! TLS for outgoing connections (the client's HTTP transport, OAuth
//! fetches, a token verifier's key fetches): what the application
//! configures ([`TlsOptions`]) and how a connection is wrapped (rustls with
//! the ring provider; no OpenSSL).
//!
//! The default trust store is the platform's, read by rustls-native-certs,
//! which honours `SSL_CERT_FILE` and `SSL_CERT_DIR` the way OpenSSL-based
//! tools (curl, Python's `ssl`, git) do: a user who already pointed those at
//! a corporate CA bundle gets the same behaviour here. rustls-platform-verifier
//! was not chosen because on macOS and Windows it asks the OS verifier, which
//! ignores those variables.

use std::path::Path;

use crate::Error;

/// Where the client's trusted root certificates come from for `https://`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TlsRoots {
    /// The platform's trust store (on Linux the system bundle; `SSL_CERT_FILE`
    /// and `SSL_CERT_DIR` replace it when set, as for OpenSSL).
    #[default]
    Native,
    /// Mozilla's root set compiled into the binary (the `webpki-roots`
    /// crate): the same answer on every machine, whatever it has installed.
    WebPki,
    /// No built-in roots: only [`TlsOptions::ca_certs`] are trusted.
    None,
}

/// A client certificate and its private key for mutual TLS, both PEM.
#[derive(Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    /// The certificate chain, leaf first (PEM, one or more `CERTIFICATE`
    /// blocks).
    pub cert_chain_pem: String,
    /// The private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key_pem: String,
}

impl std::fmt::Debug for ClientCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key is a secret: never in logs.
        f.debug_struct("ClientCertificate")
            .field("cert_chain_pem", &self.cert_chain_pem)
            .finish_non_exhaustive()
    }
}

/// How the client sets up TLS for `https://` URLs (ignored for `http://`
/// and stdio).
///
/// ```
/// use ferromcp::client::{ClientOptions, TlsOptions, TlsRoots};
///
/// let ca = "-----BEGIN CERTIFICATE-----\n...\n-----END CERTIFICATE-----\n";
/// let options = ClientOptions {
///     tls: TlsOptions {
///         roots: TlsRoots::Native,
///         ca_certs: vec![ca.to_owned()],
///         ..TlsOptions::default()
///     },
///     ..ClientOptions::default()
/// };
/// assert_eq!(options.tls.ca_certs.len(), 1);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TlsOptions {
    /// The built-in roots to trust.
    pub roots: TlsRoots,
    /// Extra trusted CA certificates, PEM (each entry may hold several).
    pub ca_certs: Vec<String>,
    /// A client certificate for servers that ask for one (mutual TLS).
    pub client_cert: Option<ClientCertificate>,
}

impl TlsOptions {
    /// Adds the CA certificates of a PEM file to [`TlsOptions::ca_certs`].
    ///
    /// ```no_run
    /// use ferromcp::client::TlsOptions;
    ///
    /// let tls = TlsOptions::default().with_ca_file("corp-ca.pem")?;
    /// # Ok::<(), ferromcp::Error>(())
    /// ```
    pub fn with_ca_file(mut self, path: impl AsRef<Path>) -> Result<Self, Error> {
        self.ca_certs.push(read_pem(path.as_ref())?);
        Ok(self)
    }

    /// Sets the client certificate chain and key from PEM files.
    ///
    /// ```no_run
    /// use ferromcp::client::TlsOptions;
    ///
    /// let tls = TlsOptions::default().with_client_cert_files("me.pem", "me.key")?;
    /// # Ok::<(), ferromcp::Error>(())
    /// ```
    pub fn with_client_cert_files(
        mut self,
        cert_chain: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<Self, Error> {
        self.client_cert = Some(ClientCertificate {
            cert_chain_pem: read_pem(cert_chain.as_ref())?,
            key_pem: read_pem(key.as_ref())?,
        });
        Ok(self)
    }
}

fn read_pem(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| Error::Tls {
        host: String::new(),
        reason: format!("cannot read {}: {e}", path.display()),
    })
}

#[cfg(feature = "tls")]
pub(crate) use imp::{TlsConnect, classify};

#[cfg(not(feature = "tls"))]
pub(crate) use off::{TlsConnect, classify};

#[cfg(feature = "tls")]
mod imp {
    use std::sync::Arc;

    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
    use rustls::{CertificateError, ClientConfig, RootCertStore};
    use tokio_rustls::TlsConnector;
    use tokio_rustls::client::TlsStream;

    use super::super::socket::ClientSocket;
    use super::{TlsOptions, TlsRoots};
    use crate::Error;

    /// What one HTTPS endpoint needs to wrap its connections.
    #[derive(Clone)]
    pub(crate) struct TlsConnect {
        connector: TlsConnector,
        server_name: ServerName<'static>,
        /// `host:port`, for error messages.
        target: String,
    }

    fn config_error(target: &str, reason: String) -> Error {
        Error::Tls {
            host: target.to_owned(),
            reason,
        }
    }

    fn parse_certs(target: &str, pem: &str) -> Result<Vec<CertificateDer<'static>>, Error> {
        let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| config_error(target, format!("invalid PEM certificate: {e}")))?;
        if certs.is_empty() {
            return Err(config_error(
                target,
                "no CERTIFICATE block in the PEM text given".into(),
            ));
        }
        Ok(certs)
    }

    fn root_store(target: &str, options: &TlsOptions) -> Result<RootCertStore, Error> {
        let mut roots = RootCertStore::empty();
        match options.roots {
            TlsRoots::Native => {
                let loaded = rustls_native_certs::load_native_certs();
                for e in &loaded.errors {
                    tracing::debug!(error = %e, "skipping part of the platform trust store");
                }
                // A malformed system certificate must not make every
                // https:// URL unusable: skip it, as OpenSSL does.
                let (added, ignored) = roots.add_parsable_certificates(loaded.certs);
                tracing::debug!(added, ignored, "platform trust store loaded");
            }
            TlsRoots::WebPki => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
            TlsRoots::None => {}
        }
        for pem in &options.ca_certs {
            for cert in parse_certs(target, pem)? {
                roots
                    .add(cert)
                    .map_err(|e| config_error(target, format!("CA certificate refused: {e}")))?;
            }
        }
        if roots.is_empty() {
            return Err(config_error(
                target,
                "no trusted root certificates (the platform store is empty or unreadable: \
                 set SSL_CERT_FILE, give a CA certificate, or use the webpki roots)"
                    .into(),
            ));
        }
        Ok(roots)
    }

    impl TlsConnect {
        /// Builds the configuration once per endpoint: reading the platform
        /// store costs milliseconds, too much per connection.
        pub(crate) fn new(host: &str, port: u16, options: &TlsOptions) -> Result<Self, Error> {
            let target = format!("{host}:{port}");
            let bare = host.trim_start_matches('[').trim_end_matches(']');
            let server_name = ServerName::try_from(bare.to_owned())
                .map_err(|e| config_error(&target, format!("invalid server name: {e}")))?;
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let builder = ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .map_err(|e| config_error(&target, e.to_string()))?
                .with_root_certificates(root_store(&target, options)?);
            let mut config = match &options.client_cert {
                None => builder.with_no_client_auth(),
                Some(client) => {
                    let chain = parse_certs(&target, &client.cert_chain_pem)?;
                    let key =
                        PrivateKeyDer::from_pem_slice(client.key_pem.as_bytes()).map_err(|e| {
                            config_error(&target, format!("invalid client private key: {e}"))
                        })?;
                    builder
                        .with_client_auth_cert(chain, key)
                        .map_err(|e| config_error(&target, format!("client certificate: {e}")))?
                }
            };
            // The transport speaks HTTP/1.1 only.
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Ok(TlsConnect {
                connector: TlsConnector::from(Arc::new(config)),
                server_name,
                target,
            })
        }

        /// Runs the handshake over a connected socket.
        pub(crate) async fn connect(
            &self,
            tcp: ClientSocket,
        ) -> Result<TlsStream<ClientSocket>, Error> {
            self.connector
                .connect(self.server_name.clone(), tcp)
                .await
                .map_err(|e| {
                    classify(&self.target, &e).unwrap_or_else(|| Error::Tls {
                        host: self.target.clone(),
                        reason: format!("handshake failed: {e}"),
                    })
                })
        }
    }

    /// The rustls error somewhere in an error's chain (hyper wraps the
    /// `io::Error` that wraps it; `io::Error::source` skips the payload, so
    /// each `io::Error` is opened by hand).
    fn find_rustls<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
        let mut current = Some(err);
        while let Some(e) = current {
            if let Some(found) = e.downcast_ref::<rustls::Error>() {
                return Some(found);
            }
            if let Some(inner) = e
                .downcast_ref::<std::io::Error>()
                .and_then(|io| io.get_ref())
                .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            {
                return Some(inner);
            }
            current = e.source();
        }
        None
    }

    /// A TLS failure anywhere in `err`'s chain, said in words with a hint,
    /// or `None` when the failure was not TLS.
    pub(crate) fn classify(target: &str, err: &(dyn std::error::Error + 'static)) -> Option<Error> {
        let tls = find_rustls(err)?;
        let reason = match tls {
            rustls::Error::InvalidCertificate(cert) => {
                let why = match cert {
                    CertificateError::UnknownIssuer => {
                        "it is signed by an unknown certificate authority (not in the trust \
                         store: pass the CA with --ca-cert / TlsOptions::ca_certs or \
                         SSL_CERT_FILE)"
                            .to_owned()
                    }
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. } => {
                        format!("it is not valid for this host name ({cert:?})")
                    }
                    CertificateError::BadSignature => {
                        "its signature does not verify against the trusted CA of that name \
                         (a different CA with the same name?)"
                            .to_owned()
                    }
                    CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                        format!("it has expired ({cert:?})")
                    }
                    other => format!("{other:?}"),
                };
                format!("the server's certificate was refused: {why}")
            }
            rustls::Error::AlertReceived(alert) => format!(
                "the server refused the connection (TLS alert {alert:?}; \
                 a server wanting a client certificate sends CertificateRequired)"
            ),
            other => other.to_string(),
        };
        Some(Error::Tls {
            host: target.to_owned(),
            reason,
        })
    }
}

#[cfg(not(feature = "tls"))]
mod off {
    use super::TlsOptions;
    use crate::Error;

    /// Stands in for the TLS connector in a build without the `tls`
    /// feature: every `https://` URL is refused when the client is made.
    #[derive(Clone)]
    pub(crate) enum TlsConnect {}

    impl TlsConnect {
        pub(crate) fn new(host: &str, port: u16, _options: &TlsOptions) -> Result<Self, Error> {
            Err(Error::Tls {
                host: format!("{host}:{port}"),
                reason: "this build of ferromcp has no TLS (the `tls` feature is off)".into(),
            })
        }

        pub(crate) async fn connect(
            &self,
            _tcp: super::super::socket::ClientSocket,
        ) -> Result<super::super::socket::ClientSocket, Error> {
            match *self {}
        }
    }

    pub(crate) fn classify(
        _target: &str,
        _err: &(dyn std::error::Error + 'static),
    ) -> Option<Error> {
        None
    }
}
