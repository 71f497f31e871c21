//! `SSL_CERT_FILE` is honoured as OpenSSL-based tools honour it: the
//! client trusts the CA in that file by default. Alone in its binary
//! because it sets the process environment before any thread starts.

use ferromcp_testkit as common;
use ferromcp_testkit::tls;

use ferromcp::client::{Client, ClientOptions};
use ferromcp::protocol::Tool;
use ferromcp::server::{Server, ToolOutput};
use serde_json::json;

#[test]
fn ssl_cert_file_is_the_default_trust_store() {
    let pki = tls::pki();
    let dir = std::env::temp_dir().join(format!("ferromcp-tls-env-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let ca = dir.join("ca.pem");
    std::fs::write(&ca, &pki.ca_pem).expect("write CA");
    // SAFETY: the only test in this binary, and no other thread exists yet
    // (the runtime is built below).
    unsafe { std::env::set_var("SSL_CERT_FILE", &ca) };
    unsafe { std::env::remove_var("SSL_CERT_DIR") };

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let server = Server::new("tls-env", "1.0.0");
        server
            .add_tool(
                Tool::new("hi", json!({"type": "object"})),
                |_ctx, _args| async { Ok(ToolOutput::text("hello")) },
            )
            .expect("tool");
        let srv = tls::serve_tls(server, &pki, false).await;
        let options = ClientOptions {
            timeout: Some(common::TIMEOUT),
            ..ClientOptions::default()
        };
        let client = Client::connect_http_with(&srv.url, options)
            .await
            .expect("client");
        let result = client
            .call_tool("hi", json!({}))
            .await
            .expect("trusted via SSL_CERT_FILE");
        let value = serde_json::to_value(&result).expect("json");
        assert_eq!(value["content"][0]["text"], "hello");
    });
    let _ = std::fs::remove_dir_all(&dir);
}
