//! The client rows' smoke test: a very short `mcp-bench run` of the client
//! mode (bench/src/clients.rs) with the Rust reference client against the
//! ferromcp Rust echo server, beside a client that fails to connect and one
//! that is not installed: the Rust row must be measured with every reply
//! checked, the broken ones must be error rows, and the run must go on. No
//! timing is asserted: this runs inside `make test` on a busy machine.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("bench/ lives inside the workspace")
        .to_path_buf()
}

#[test]
fn client_rows_are_measured_and_failures_are_rows() {
    let root = workspace_root();
    let echo = root.join("target/bin/echo-server");
    assert!(
        echo.exists(),
        "{} is missing: run `make build` first",
        echo.display()
    );
    let dir = std::env::temp_dir().join(format!("ferromcp-bench-clients-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    let servers = dir.join("servers.json");
    std::fs::write(&servers, json!({"servers": []}).to_string()).expect("write servers.json");
    let clients = dir.join("clients.json");
    let config = json!({
        "server": [echo, "--http", "{port}"],
        "clients": [
            {"name": "ferromcp-rust", "kind": "ferromcp", "language": "rust",
             "command": [env!("CARGO_BIN_EXE_ferromcp-bench-client"), "{url}"]},
            {"name": "refuses", "kind": "official", "language": "sh",
             "command": ["sh", "-c", "echo 'error cannot connect to' \"$0\"; exit 1", "{url}"]},
            {"name": "not-installed", "kind": "official", "language": "python",
             "command": [".cache/bench/no-such-venv/bin/python", "client.py", "{url}"]}
        ],
        "targets": [
            {"description": "evaluated, not asserted", "server": "ferromcp-rust",
             "metric": "client_seq_cpu_us", "reference": "ferromcp-rust", "op": "<=", "ratio": 1.0}
        ]
    });
    std::fs::write(&clients, config.to_string()).expect("write clients.json");

    let output = Command::new(env!("CARGO_BIN_EXE_mcp-bench"))
        .args([
            "run", "--short", "--rounds", "1", "--phase", "0.2", "--no-pin",
        ])
        .arg("--config")
        .arg(&servers)
        .arg("--clients")
        .arg(&clients)
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("run mcp-bench");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "mcp-bench run failed\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("### Clients"),
        "no clients table:\n{stdout}"
    );
    assert!(
        stdout.contains("| refuses | error: connect: cannot connect to http://127.0.0.1:"),
        "the failing client is not an error row:\n{stdout}"
    );
    assert!(
        stdout.contains("| not-installed | error: .cache/bench/no-such-venv/bin/python not found"),
        "the missing client is not an error row:\n{stdout}"
    );

    let report: Value = serde_json::from_slice(
        &std::fs::read(dir.join("latest.json")).expect("latest.json was written"),
    )
    .expect("latest.json is JSON");
    let rows = report["clients"].as_array().expect("clients");
    assert_eq!(rows.len(), 3);
    let rust = &rows[0];
    assert!(rust["unavailable"].is_null(), "{}", rust["unavailable"]);
    assert_eq!(rust["errors"], 0, "{}", rust["error_messages"]);
    assert!(rust["checked_replies"].as_u64().unwrap_or(0) > 0);
    assert_eq!(rust["http_wire"], "2026-07-28");
    for metric in [
        "client_seq_rps",
        "client_seq_cpu_us",
        "client_seq_server_cpu_us",
        "client_n_rps",
        "client_n_cpu_us",
        "client_rss_mib",
    ] {
        assert!(
            rust["median"][metric].as_f64().is_some_and(|v| v > 0.0),
            "no {metric} in {}",
            rust["median"]
        );
    }
    assert!(!rows[1]["unavailable"].is_null() && !rows[2]["unavailable"].is_null());
    assert!(
        report["client_targets"][0]["measured"].as_f64().is_some(),
        "the client target was not evaluated: {}",
        report["client_targets"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
