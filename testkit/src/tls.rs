//! A real TLS server for client tests: a test CA, a server certificate for
//! `localhost`/`127.0.0.1` and a client certificate, all made at test time
//! (rcgen), and a ferromcp [`HttpEndpoint`] served by hyper over
//! tokio-rustls, optionally requiring a client certificate (mutual TLS).
//!
//! Shared by `core/tests/client_tls*.rs` and the CLI's tests (`#[path]`).

#![allow(dead_code)]

use std::convert::Infallible;
use std::sync::Arc;

use ferromcp::server::Server;
use ferromcp::transport::http::{EndpointOptions, HttpEndpoint};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

/// Certificates and keys, PEM.
pub struct Pki {
    /// The test CA's certificate: what a client must trust.
    pub ca_pem: String,
    pub server_cert_pem: String,
    pub server_key_pem: String,
    /// A client certificate signed by the same CA, for mutual TLS.
    pub client_cert_pem: String,
    pub client_key_pem: String,
}

/// A fresh CA, server certificate and client certificate.
pub fn pki() -> Pki {
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "ferromcp test CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca, KeyPair::generate().expect("CA key")).expect("CA");

    let leaf = |names: Vec<String>, usage: ExtendedKeyUsagePurpose, cn: &str| {
        let mut params = CertificateParams::new(names).expect("leaf params");
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().expect("leaf key");
        let cert = params.signed_by(&key, &ca).expect("leaf certificate");
        (cert.pem(), key.serialize_pem())
    };
    let (server_cert_pem, server_key_pem) = leaf(
        vec!["localhost".into(), "127.0.0.1".into()],
        ExtendedKeyUsagePurpose::ServerAuth,
        "localhost",
    );
    let (client_cert_pem, client_key_pem) =
        leaf(vec![], ExtendedKeyUsagePurpose::ClientAuth, "test client");
    Pki {
        ca_pem: ca.pem(),
        server_cert_pem,
        server_key_pem,
        client_cert_pem,
        client_key_pem,
    }
}

/// A running TLS server; dropping it stops accepting.
pub struct TlsServer {
    /// `https://localhost:PORT/mcp`.
    pub url: String,
    accept: JoinHandle<()>,
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

fn certs(pem: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<_, _>>()
        .expect("test PEM")
}

/// Serves `server` over TLS on a loopback port; with `require_client_cert`
/// a client must present a certificate signed by the test CA.
pub async fn serve_tls(server: Server, pki: &Pki, require_client_cert: bool) -> TlsServer {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .expect("protocol versions");
    let builder = if require_client_cert {
        let mut roots = RootCertStore::empty();
        for cert in certs(&pki.ca_pem) {
            roots.add(cert).expect("CA");
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .build()
            .expect("client verifier");
        builder.with_client_cert_verifier(verifier)
    } else {
        builder.with_no_client_auth()
    };
    let key = PrivateKeyDer::from_pem_slice(pki.server_key_pem.as_bytes()).expect("key");
    let mut config = builder
        .with_single_cert(certs(&pki.server_cert_pem), key)
        .expect("server certificate");
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));

    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let endpoint = HttpEndpoint::new(server, EndpointOptions::default());
    let accept = tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let endpoint = endpoint.clone();
            tokio::spawn(async move {
                // A refused handshake is what some tests want: not an error.
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = service_fn(move |request| {
                    let endpoint = endpoint.clone();
                    async move { Ok::<_, Infallible>(endpoint.handle(request).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    TlsServer {
        url: format!("https://localhost:{port}/mcp"),
        accept,
    }
}
