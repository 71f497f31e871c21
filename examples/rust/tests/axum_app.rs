//! `examples/rust/src/bin/axum-app.rs`: MCP on an axum route beside the
//! application's own, both under the application's middleware.

use ferromcp::client::Client;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, Command, Stdio};

struct App(Child);

impl Drop for App {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start() -> (App, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_axum-app"))
        .arg("0")
        .stdout(Stdio::piped())
        .spawn()
        .expect("start axum-app");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("listening on ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    (App(child), port)
}

/// A plain GET, as the application's own clients make them.
fn get(port: u16, path: &str) -> String {
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        conn,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    conn.read_to_string(&mut response).unwrap();
    response
}

#[tokio::test]
async fn mcp_is_served_on_an_axum_route_beside_the_apps_own() {
    let (_app, port) = start();
    let health = get(port, "/health");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(
        health
            .to_ascii_lowercase()
            .contains("x-served-by: axum-app"),
        "{health}"
    );
    assert!(health.ends_with("ok"), "{health}");

    let client = Client::connect_http(&format!("http://127.0.0.1:{port}/mcp"))
        .await
        .unwrap();
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(tools[0].name, "echo");
    let echoed = client
        .call_tool("echo", serde_json::json!({"text": "through axum"}))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&echoed.content).unwrap()[0]["text"],
        "through axum"
    );
    // The endpoint's own rules hold on the route: a GET without a legacy
    // session is refused, under the app's middleware.
    let refused = get(port, "/mcp");
    assert!(refused.starts_with("HTTP/1.1 405"), "{refused}");
    assert!(
        refused
            .to_ascii_lowercase()
            .contains("x-served-by: axum-app"),
        "{refused}"
    );
}
