//! The benchmark's smoke test: one very short `mcp-bench run` against the
//! baseline server (modern and legacy wire) and the ferromcp Rust echo server
//! from examples/manifest.json, checking that every reply was correct and
//! every figure was produced. No timing is asserted: this runs inside
//! `make test` on a busy machine.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("bench/ lives inside the workspace")
        .to_path_buf()
}

fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ferromcp-bench-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a scratch directory");
    dir
}

#[test]
fn short_run_checks_every_reply() {
    let root = workspace_root();
    let echo = root.join("target/bin/echo-server");
    assert!(
        echo.exists(),
        "{} is missing: run `make build` first (the smoke test drives the ferromcp Rust echo server \
         through its examples/manifest.json entry)",
        echo.display()
    );
    let baseline = env!("CARGO_BIN_EXE_baseline-server");
    let dir = scratch_dir("smoke");
    let config = json!({
        "servers": [
            {
                "name": "baseline", "kind": "baseline", "language": "rust",
                "http": [baseline, "--http", "{port}"],
                "stdio": [baseline]
            },
            {
                "name": "baseline-legacy", "kind": "official", "language": "rust",
                "http": [baseline, "--legacy", "--http", "{port}"],
                "stdio": [baseline, "--legacy"]
            },
            {
                "name": "ferromcp-rust", "kind": "ferromcp", "language": "rust",
                "compare_with": "baseline-legacy",
                "manifest": {"fixture": "echo-server", "language": "rust"}
            }
        ],
        "targets": [
            {"description": "CPU per request vs the baseline (evaluated, not asserted)",
             "server": "ferromcp-rust", "metric": "http_c32_cpu_us", "reference": "baseline",
             "op": "<=", "ratio": 1000.0}
        ]
    });
    let config_path = dir.join("servers.json");
    std::fs::write(&config_path, config.to_string()).expect("write the config");

    let output = Command::new(env!("CARGO_BIN_EXE_mcp-bench"))
        .args([
            "run", "--short", "--rounds", "1", "--phase", "0.2", "--no-pin", "--strict",
        ])
        .arg("--config")
        .arg(&config_path)
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
    assert!(stdout.contains("### Ratios"), "no ratios table:\n{stdout}");

    let report: Value = serde_json::from_slice(
        &std::fs::read(dir.join("latest.json")).expect("latest.json was written"),
    )
    .expect("latest.json is JSON");
    let servers = report["servers"].as_array().expect("servers");
    assert_eq!(servers.len(), 3);
    for s in servers {
        let name = s["name"].as_str().unwrap_or("?");
        assert!(
            s["unavailable"].is_null(),
            "{name} unavailable: {}",
            s["unavailable"]
        );
        assert_eq!(s["errors"], 0, "{name}: {}", s["error_messages"]);
        assert!(
            s["checked_replies"].as_u64().unwrap_or(0) > 0,
            "{name} answered nothing"
        );
        let expected_wire = if name == "baseline-legacy" {
            "2025-11-25"
        } else {
            "2026-07-28"
        };
        assert_eq!(s["http_wire"], expected_wire, "{name} HTTP wire");
        assert_eq!(s["stdio_wire"], expected_wire, "{name} stdio wire");
        for metric in [
            "http_c1_rps",
            "http_c32_rps",
            "http_c32_cpu_us",
            "http_c32_p99_us",
            "rss_mib",
            "http_1mib_ms",
            "stdio_seq_rps",
            "stdio_n_rps",
            "stdio_1mib_ms",
            "cold_start_ms",
        ] {
            assert!(
                s["median"][metric].as_f64().is_some_and(|v| v > 0.0),
                "{name}: no {metric} in {}",
                s["median"]
            );
        }
    }
    assert!(
        report["targets"][0]["measured"].as_f64().is_some(),
        "the target was not evaluated: {}",
        report["targets"]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn missing_servers_are_reported_not_run() {
    let root = workspace_root();
    let dir = scratch_dir("missing");
    let config = json!({
        "servers": [
            {"name": "baseline", "kind": "baseline", "language": "rust",
             "stdio": [env!("CARGO_BIN_EXE_baseline-server")]},
            {"name": "not-built", "kind": "ferromcp", "language": "c",
             "stdio": ["target/bin/this-server-does-not-exist"]}
        ]
    });
    let config_path = dir.join("servers.json");
    std::fs::write(&config_path, config.to_string()).expect("write the config");
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-bench"))
        .args(["run", "--rounds", "1", "--phase", "0.1", "--no-pin"])
        .arg("--config")
        .arg(&config_path)
        .arg("--root")
        .arg(&root)
        .arg("--out")
        .arg(&dir)
        .output()
        .expect("run mcp-bench");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout
            .contains("| not-built | unavailable: target/bin/this-server-does-not-exist not found"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The bridges' baseline relays every call of several clients at once to
/// its one stdio child and back, each answer to the call that asked.
#[test]
fn the_relay_baseline_answers_every_call() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port");
    let mut relay = Command::new(env!("CARGO_BIN_EXE_baseline-relay"))
        .args(["--http", &port.to_string(), "--"])
        .arg(env!("CARGO_BIN_EXE_baseline-server"))
        .spawn()
        .expect("start baseline-relay");
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    let output = Command::new(env!("CARGO_BIN_EXE_mcp-bench"))
        .args(["http", &format!("http://127.0.0.1:{port}/mcp")])
        .args(["--concurrency", "8", "--duration", "1"])
        .output()
        .expect("run mcp-bench http");
    let _ = relay.kill();
    let _ = relay.wait();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let summary = format!("{stdout}{stderr}");
    assert!(summary.contains(" 0 errors (0 wrong answers)"), "{summary}");
    assert!(!summary.contains(" 0 ok"), "{summary}");
}
