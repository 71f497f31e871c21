//! The Rust OAuth client against a protected ferromcp server, end to end
//! over real sockets: the client's first call gets the server's 401, finds
//! the protected resource metadata, gets a token from the (test)
//! authorization server for the server's resource, and calls tools; a
//! tool needing a scope the token lacks gets 403 `insufficient_scope` and
//! the client steps up. Both sides are ferromcp; only the authorization
//! server is a stand-in (`auth_issuer`: signed JWTs, client credentials).

mod auth_issuer;
use ferromcp_testkit::protected;

use auth_issuer::{Issuer, Signer};
use ferromcp::client::auth::OAuthOptions;
use ferromcp::client::{Client, ClientOptions};
use ferromcp::server::Server;
use ferromcp::transport::http::{HttpOptions, HttpServer, ProtectedResource};
use ferromcp::verifier::JwtVerifier;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

fn server() -> Server {
    protected::server("write", "written")
}

fn text(result: &ferromcp::protocol::CallToolResult) -> String {
    serde_json::to_value(result).unwrap()["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test]
async fn the_rust_client_logs_in_calls_and_steps_up() {
    let issuer = Issuer::start_issuing(Arc::new(Signer::es256("k1"))).await;
    // The resource URL names the port, so the socket is bound first.
    let mut options = HttpOptions::localhost(0);
    let probe = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    options.bind = probe.local_addr().unwrap();
    drop(probe);
    let resource = format!("http://127.0.0.1:{}/mcp", options.bind.port());
    let verifier = JwtVerifier::new(&issuer.url, &resource);
    options.auth = Some(
        ProtectedResource::new(&resource, [issuer.url.clone()], verifier)
            .with_scopes_supported(["notes:read"]),
    );
    let shutdown = options.shutdown.clone();
    let bound = HttpServer::bind(server(), options).await.unwrap();
    tokio::spawn(bound.run());

    let oauth = OAuthOptions::client_credentials("service", Some("s3cret".into()));
    let client_options = ClientOptions {
        oauth: Some(oauth),
        timeout: Some(Duration::from_secs(20)),
        ..ClientOptions::default()
    };
    let client = Client::connect_http_with(&resource, client_options)
        .await
        .unwrap();
    let whoami = client.call_tool("whoami", json!({})).await.unwrap();
    assert_eq!(text(&whoami), "service notes:read");
    // The 403 names notes:write; the client gets a token with both.
    let write = client.call_tool("write", json!({})).await.unwrap();
    assert_eq!(text(&write), "written");
    let issued = issuer.issued.lock().unwrap().clone();
    assert_eq!(issued.len(), 2, "{issued:?}");
    assert!(issued.iter().all(|(_, r)| *r == resource), "{issued:?}");
    assert_eq!(issued[0].0, "notes:read");
    let mut stepped: Vec<&str> = issued[1].0.split(' ').collect();
    stepped.sort();
    assert_eq!(stepped, ["notes:read", "notes:write"]);
    shutdown.cancel();
}
