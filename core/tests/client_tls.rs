//! The client over `https://` against a real TLS server (a ferromcp
//! endpoint behind tokio-rustls, certificates made at test time): trusted
//! through an extra CA, refused with a clear error without it, and mutual
//! TLS accepted with a client certificate and refused without.
//! `SSL_CERT_FILE` is tested in `client_tls_env.rs` (it sets the process
//! environment, so it runs alone in its own binary).

use ferromcp_testkit as common;
use ferromcp_testkit::tls;

use ferromcp::ErrorKind;
use ferromcp::client::{Client, ClientCertificate, ClientOptions, TlsOptions, TlsRoots};
use ferromcp::protocol::Tool;
use ferromcp::server::{Server, ToolOutput};
use serde_json::{Value, json};

fn server() -> Server {
    let server = Server::new("tls-test", "1.0.0");
    server
        .add_tool(
            Tool::new(
                "echo",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            |_ctx, args: Value| async move {
                Ok(ToolOutput::text(
                    args["text"].as_str().unwrap_or_default().to_owned(),
                ))
            },
        )
        .expect("tool");
    server
}

fn options(tls: TlsOptions) -> ClientOptions {
    ClientOptions {
        tls,
        timeout: Some(common::TIMEOUT),
        ..ClientOptions::default()
    }
}

async fn echo(url: &str, tls: TlsOptions) -> Result<String, ferromcp::Error> {
    let client = Client::connect_http_with(url, options(tls)).await?;
    let result = client
        .call_tool("echo", json!({"text": "over tls"}))
        .await?;
    let value = serde_json::to_value(&result)?;
    Ok(value["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}

fn trusting(pki: &tls::Pki) -> TlsOptions {
    TlsOptions {
        ca_certs: vec![pki.ca_pem.clone()],
        ..TlsOptions::default()
    }
}

#[tokio::test]
async fn reaches_a_tls_server_with_the_ca_given_as_an_option() {
    let pki = tls::pki();
    let srv = tls::serve_tls(server(), &pki, false).await;
    assert_eq!(echo(&srv.url, trusting(&pki)).await.unwrap(), "over tls");
    // Only the given CA, no built-in roots: still enough.
    let only = TlsOptions {
        roots: TlsRoots::None,
        ..trusting(&pki)
    };
    assert_eq!(echo(&srv.url, only).await.unwrap(), "over tls");
    // By IP address: the certificate names 127.0.0.1 too.
    let by_ip = srv.url.replace("localhost", "127.0.0.1");
    assert_eq!(echo(&by_ip, trusting(&pki)).await.unwrap(), "over tls");
}

#[tokio::test]
async fn an_unknown_ca_is_refused_with_a_clear_error() {
    let pki = tls::pki();
    let srv = tls::serve_tls(server(), &pki, false).await;
    let host = srv
        .url
        .trim_start_matches("https://")
        .trim_end_matches("/mcp");
    for roots in [TlsRoots::WebPki, TlsRoots::Native] {
        let tls = TlsOptions {
            roots,
            ..TlsOptions::default()
        };
        let err = echo(&srv.url, tls).await.unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Http, "{err}");
        let text = err.to_string();
        assert!(text.contains(host), "names the host: {text}");
        match roots {
            TlsRoots::WebPki => assert!(
                matches!(&err, ferromcp::Error::Tls { reason, .. }
                    if reason.contains("unknown certificate authority")),
                "says why: {text}"
            ),
            // A machine without a system store says that instead.
            _ => assert!(matches!(err, ferromcp::Error::Tls { .. }), "{text}"),
        }
    }
    // Another CA of the same name is no better than none: its signature
    // does not match.
    let other = tls::pki();
    let err = echo(&srv.url, trusting(&other)).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("the server's certificate was refused: its signature"),
        "{err}"
    );
}

#[tokio::test]
async fn mutual_tls_needs_the_client_certificate() {
    let pki = tls::pki();
    let srv = tls::serve_tls(server(), &pki, true).await;
    let with_cert = TlsOptions {
        client_cert: Some(ClientCertificate {
            cert_chain_pem: pki.client_cert_pem.clone(),
            key_pem: pki.client_key_pem.clone(),
        }),
        ..trusting(&pki)
    };
    assert_eq!(echo(&srv.url, with_cert).await.unwrap(), "over tls");
    let err = echo(&srv.url, trusting(&pki)).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Http, "{err}");
    assert!(matches!(err, ferromcp::Error::Tls { .. }), "{err}");
    assert!(err.to_string().contains("CertificateRequired"), "{err}");
}

#[tokio::test]
async fn bad_pem_is_refused_when_the_client_is_made() {
    let tls = TlsOptions {
        ca_certs: vec!["not a certificate".into()],
        ..TlsOptions::default()
    };
    let Err(err) = Client::connect_http_with("https://localhost:1/mcp", options(tls)).await else {
        panic!("bad PEM accepted");
    };
    assert!(err.to_string().contains("no CERTIFICATE block"), "{err}");
    // http:// ignores TLS settings entirely.
    let tls = TlsOptions {
        ca_certs: vec!["not a certificate".into()],
        ..TlsOptions::default()
    };
    assert!(
        Client::connect_http_with("http://localhost:1/mcp", options(tls))
            .await
            .is_ok()
    );
}
