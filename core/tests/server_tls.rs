//! TLS on ferromcp's own HTTP server (`HttpOptions::tls`): PEM files made at
//! test time (a test CA, a server and a client certificate), the Rust
//! client on the other side.
//!
//! - `https://` served, plain HTTP to the same port gets nowhere;
//! - mutual TLS: required (no certificate, no service) and optional;
//! - a renewed certificate is served to new connections without a restart,
//!   and one caught half-written keeps the previous certificate;
//! - files that cannot be read or parsed stop the server from starting,
//!   with an error naming the file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ferromcp::client::{Client, ClientCertificate, ClientOptions, TlsOptions, TlsRoots};
use ferromcp::protocol::Tool;
use ferromcp::server::{Server, ToolOutput};
use ferromcp::transport::http::{HttpOptions, HttpServer, ServerTls};
use ferromcp_testkit as common;
use ferromcp_testkit::tls::{self, Pki};
use serde_json::{Value, json};

fn server() -> Server {
    let server = Server::new("tls-server", "1.0.0");
    server
        .add_tool(
            Tool::new("echo", json!({"type": "object"})),
            |_ctx, args: Value| async move {
                Ok(ToolOutput::text(
                    args["text"].as_str().unwrap_or("").to_owned(),
                ))
            },
        )
        .unwrap();
    server
}

/// A directory of its own under the system's temporary one, removed on
/// drop.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("ferromcp-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn files(dir: &Dir, pki: &Pki) -> ServerTls {
    ServerTls::new(
        dir.write("cert.pem", &pki.server_cert_pem),
        dir.write("key.pem", &pki.server_key_pem),
    )
}

/// Serves on a loopback port; the `https://localhost:PORT/mcp` URL and
/// what stops it.
async fn serve(tls: ServerTls) -> (String, tokio_util::sync::DropGuard) {
    let http = HttpOptions {
        tls: Some(tls),
        ..HttpOptions::localhost(0)
    };
    let stop = http.shutdown.clone();
    let bound = HttpServer::bind(server(), http).await.unwrap();
    let port = bound.local_addr().unwrap().port();
    tokio::spawn(bound.run());
    (format!("https://localhost:{port}/mcp"), stop.drop_guard())
}

fn trusting(pki: &Pki) -> TlsOptions {
    TlsOptions {
        roots: TlsRoots::None,
        ca_certs: vec![pki.ca_pem.clone()],
        ..TlsOptions::default()
    }
}

fn with_client_cert(pki: &Pki) -> TlsOptions {
    TlsOptions {
        client_cert: Some(ClientCertificate {
            cert_chain_pem: pki.client_cert_pem.clone(),
            key_pem: pki.client_key_pem.clone(),
        }),
        ..trusting(pki)
    }
}

async fn echo(url: &str, tls: TlsOptions) -> Result<String, ferromcp::Error> {
    let options = ClientOptions {
        tls,
        timeout: Some(common::TIMEOUT),
        ..ClientOptions::default()
    };
    let client = Client::connect_http_with(url, options).await?;
    let result = client
        .call_tool("echo", json!({"text": "over tls"}))
        .await?;
    let value = serde_json::to_value(&result)?;
    Ok(value["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

#[tokio::test]
async fn serves_https_and_nothing_in_plain_text() {
    let (dir, pki) = (Dir::new("tls-plain"), tls::pki());
    let (url, _stop) = serve(files(&dir, &pki)).await;
    assert_eq!(echo(&url, trusting(&pki)).await.unwrap(), "over tls");
    let by_ip = url.replace("localhost", "127.0.0.1");
    assert_eq!(echo(&by_ip, trusting(&pki)).await.unwrap(), "over tls");
    // A client that does not trust the CA is refused, with a TLS error.
    let error = echo(
        &url,
        TlsOptions {
            roots: TlsRoots::WebPki,
            ..TlsOptions::default()
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(error, ferromcp::Error::Tls { .. }), "{error}");
    // Plain HTTP to the TLS port: no MCP answer.
    let plain = url.replace("https://", "http://");
    assert!(echo(&plain, TlsOptions::default()).await.is_err());
}

#[tokio::test]
async fn mutual_tls_required_and_optional() {
    let (dir, pki) = (Dir::new("tls-mutual"), tls::pki());
    let ca = dir.write("ca.pem", &pki.ca_pem);
    let (url, _stop) = serve(files(&dir, &pki).with_client_ca(&ca)).await;
    assert_eq!(
        echo(&url, with_client_cert(&pki)).await.unwrap(),
        "over tls"
    );
    let refused = echo(&url, trusting(&pki)).await.unwrap_err();
    assert!(matches!(refused, ferromcp::Error::Tls { .. }), "{refused}");
    // A certificate from another CA is refused too.
    let stranger = tls::pki();
    let foreign = TlsOptions {
        client_cert: with_client_cert(&stranger).client_cert,
        ..trusting(&pki)
    };
    assert!(echo(&url, foreign).await.is_err());

    let optional = ServerTls {
        client_auth_optional: true,
        ..files(&dir, &pki).with_client_ca(&ca)
    };
    let (url, _stop) = serve(optional).await;
    assert_eq!(echo(&url, trusting(&pki)).await.unwrap(), "over tls");
    assert_eq!(
        echo(&url, with_client_cert(&pki)).await.unwrap(),
        "over tls"
    );
}

#[tokio::test]
async fn a_renewed_certificate_is_served_without_a_restart() {
    let (dir, old) = (Dir::new("tls-reload"), tls::pki());
    let (url, _stop) = serve(files(&dir, &old)).await;
    assert_eq!(echo(&url, trusting(&old)).await.unwrap(), "over tls");

    // Half-written: the previous certificate stays.
    std::fs::write(dir.0.join("cert.pem"), "-----BEGIN CERTIFICATE-----\nMIIB").unwrap();
    tokio::time::sleep(Duration::from_millis(1100)).await;
    assert_eq!(echo(&url, trusting(&old)).await.unwrap(), "over tls");

    // Renewed (from another CA, so the test can tell): new connections
    // get the new certificate.
    let new = tls::pki();
    let _ = files(&dir, &new);
    let deadline = std::time::Instant::now() + common::TIMEOUT;
    loop {
        tokio::time::sleep(Duration::from_millis(300)).await;
        if echo(&url, trusting(&new)).await.is_ok() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "never reloaded");
    }
    assert!(
        echo(&url, trusting(&old)).await.is_err(),
        "the old CA no longer fits"
    );
}

#[tokio::test]
async fn bad_files_stop_the_server_from_starting() {
    let (dir, pki) = (Dir::new("tls-bad"), tls::pki());
    let good = files(&dir, &pki);
    let missing = Path::new("/nonexistent/cert.pem");
    let garbage = dir.write("garbage.pem", "not a certificate");
    let other = tls::pki();
    let cases = [
        (
            ServerTls {
                cert_file: missing.into(),
                ..good.clone()
            },
            "cannot read /nonexistent/cert.pem",
        ),
        (
            ServerTls {
                cert_file: garbage.clone(),
                ..good.clone()
            },
            "no CERTIFICATE block",
        ),
        (
            ServerTls {
                key_file: garbage,
                ..good.clone()
            },
            "invalid private key",
        ),
        (
            ServerTls {
                key_file: dir.write("other.key", &other.server_key_pem),
                ..good.clone()
            },
            "cert.pem and",
        ),
        (
            good.clone().with_client_ca(missing),
            "cannot read /nonexistent/cert.pem",
        ),
    ];
    for (tls, expected) in cases {
        let http = HttpOptions {
            tls: Some(tls),
            ..HttpOptions::localhost(0)
        };
        let error = match HttpServer::bind(server(), http).await {
            Ok(_) => panic!("started with bad TLS files ({expected})"),
            Err(error) => error,
        };
        assert!(
            error.to_string().contains(expected),
            "{error} (expected {expected:?})"
        );
    }
}
