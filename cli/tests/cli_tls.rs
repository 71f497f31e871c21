//! `ferromcp` reaches a TLS server by `https://` URL: the test CA given with
//! `--ca-cert` or through `SSL_CERT_FILE`, a clear one-line refusal for a
//! certificate the trust store does not know, and mutual TLS with
//! `--client-cert`/`--client-key`. The server is a ferromcp endpoint behind
//! tokio-rustls with certificates made at test time (core's fixture).

use ferromcp_testkit::tls;

use ferromcp::protocol::Tool;
use ferromcp::server::{Server, ToolOutput};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn server() -> Server {
    let server = Server::new("cli-tls-test", "1.0.0");
    server
        .add_tool(
            Tool::new(
                "shout",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            |_ctx, args: Value| async move {
                Ok(ToolOutput::text(
                    args["text"].as_str().unwrap_or("").to_uppercase(),
                ))
            },
        )
        .expect("tool");
    server
}

/// Runs `ferromcp` off the runtime's threads (the server needs them).
async fn ferromcp(args: Vec<String>, env: Vec<(&'static str, PathBuf)>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_ferromcp"))
            .args(&args)
            .envs(env)
            .env_remove("SSL_CERT_DIR")
            .output()
            .expect("run ferromcp")
    })
    .await
    .expect("join")
}

fn shout(url: &str, extra: &[&Path]) -> Vec<String> {
    let mut args = vec!["call".to_owned(), "--url".to_owned(), url.to_owned()];
    for flag in extra.chunks(2) {
        args.push(flag[0].display().to_string());
        args.push(flag[1].display().to_string());
    }
    args.push("shout".into());
    args.push(r#"{"text":"secure"}"#.into());
    args
}

fn shouted(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let value: Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    value["content"][0]["text"].clone()
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write_pki(pki: &tls::Pki, name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("ferromcp-cli-tls-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    for (file, pem) in [
        ("ca.pem", &pki.ca_pem),
        ("client.pem", &pki.client_cert_pem),
        ("client.key", &pki.client_key_pem),
    ] {
        std::fs::write(dir.join(file), pem).expect("write PEM");
    }
    TempDir(dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_a_tool_over_https() {
    let pki = tls::pki();
    let dir = write_pki(&pki, "plain");
    let ca = dir.0.join("ca.pem");
    let srv = tls::serve_tls(server(), &pki, false).await;

    let flag = Path::new("--ca-cert");
    let out = ferromcp(shout(&srv.url, &[flag, &ca]), vec![]).await;
    assert_eq!(shouted(&out), "SECURE");

    let out = ferromcp(shout(&srv.url, &[]), vec![("SSL_CERT_FILE", ca.clone())]).await;
    assert_eq!(shouted(&out), "SECURE");

    // Neither: the certificate is unknown to the trust store.
    let out = ferromcp(
        {
            let mut args = shout(&srv.url, &[]);
            args.push("--webpki-roots".into());
            args
        },
        vec![],
    )
    .await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let host = srv
        .url
        .trim_start_matches("https://")
        .trim_end_matches("/mcp");
    assert!(stderr.contains(host), "names the host: {stderr}");
    assert!(
        stderr.contains("unknown certificate authority"),
        "says why: {stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_with_a_client_certificate() {
    let pki = tls::pki();
    let dir = write_pki(&pki, "mutual");
    let (ca, cert, key) = (
        dir.0.join("ca.pem"),
        dir.0.join("client.pem"),
        dir.0.join("client.key"),
    );
    let srv = tls::serve_tls(server(), &pki, true).await;
    let (ca_flag, cert_flag, key_flag) = (
        Path::new("--ca-cert"),
        Path::new("--client-cert"),
        Path::new("--client-key"),
    );
    let out = ferromcp(
        shout(&srv.url, &[ca_flag, &ca, cert_flag, &cert, key_flag, &key]),
        vec![],
    )
    .await;
    assert_eq!(shouted(&out), "SECURE");
    let out = ferromcp(shout(&srv.url, &[ca_flag, &ca]), vec![]).await;
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("CertificateRequired"), "{stderr}");
}
