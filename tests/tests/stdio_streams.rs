//! A stdio server serves whatever its standard streams are: pipes (polled
//! by the runtime, the usual case), pipes through the reader and writer
//! threads (`FERROMCP_STDIO_THREADS=1`), and regular files (epoll refuses
//! them, so the threads serve them): the same answers every way.

use ferromcp_tests::manifest::{Manifest, Transport, repo_root};
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};

const CALLS: usize = 300;

fn requests() -> String {
    (0..CALLS)
        .map(|id| {
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                "name": "echo", "arguments": {"text": format!("call {id}")},
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientCapabilities": {}
                }
            }})
            .to_string()
                + "\n"
        })
        .collect()
}

/// Every call answered once, with its own text.
fn check(output: &[u8], how: &str) {
    let text = String::from_utf8_lossy(output);
    let mut seen = vec![false; CALLS];
    for line in text.lines() {
        let answer: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{how}: {e}: {line}"));
        let id = answer["id"]
            .as_u64()
            .unwrap_or_else(|| panic!("{how}: {line}")) as usize;
        assert_eq!(
            answer["result"]["content"][0]["text"],
            format!("call {id}"),
            "{how}"
        );
        assert!(!seen[id], "{how}: {id} answered twice");
        seen[id] = true;
    }
    assert!(
        seen.iter().all(|s| *s),
        "{how}: {} answers",
        text.lines().count()
    );
}

/// The echo server, logging at debug level which way it serves stdin and
/// stdout (the answers are the same either way, so only the log tells).
fn echo_server() -> Command {
    let manifest = Manifest::load().unwrap();
    let argv = manifest
        .command("echo-server", "rust", Transport::Stdio, None)
        .unwrap();
    let mut command = Command::new(repo_root().join(&argv[0]));
    command
        .args(&argv[1..])
        .current_dir(repo_root())
        .env("RUST_LOG", "ferromcp::transport=debug")
        .env_remove("FERROMCP_STDIO_THREADS");
    command
}

/// Asserts the server said it served both streams `way` ("polled" by the
/// runtime, or through "threads").
fn served(stderr: &[u8], way: &str, how: &str) {
    let log = String::from_utf8_lossy(stderr);
    let (input, output) = match way {
        "polled" => (
            "stdin: polled by the runtime",
            "stdout: polled by the runtime",
        ),
        _ => ("stdin: read by a thread", "stdout: written by a thread"),
    };
    assert!(
        log.contains(input) && log.contains(output),
        "{how}: expected {input:?} and {output:?} in the server's log:\n{log}"
    );
}

/// Runs `command` with piped streams; returns what it logged.
fn over_pipes(mut command: Command, how: &str) -> Vec<u8> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run `make build` first");
    let mut stdin = child.stdin.take().unwrap();
    let input = requests();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(output.status.success(), "{how}: {:?}", output.status);
    check(&output.stdout, how);
    output.stderr
}

#[test]
fn pipes_polled_by_the_runtime() {
    let log = over_pipes(echo_server(), "pipes");
    served(&log, "polled", "pipes");
}

#[test]
fn pipes_through_the_threads() {
    let mut command = echo_server();
    command.env("FERROMCP_STDIO_THREADS", "1");
    let log = over_pipes(command, "threads");
    served(&log, "threads", "threads");
}

#[test]
fn regular_files() {
    let dir = std::env::temp_dir().join(format!("ferromcp-stdio-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("in.jsonl");
    let output = dir.join("out.jsonl");
    std::fs::write(&input, requests()).unwrap();
    let run = echo_server()
        .stdin(std::fs::File::open(&input).unwrap())
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(run.status.success(), "{:?}", run.status);
    check(&std::fs::read(&output).unwrap(), "files");
    served(&run.stderr, "threads", "files");
    std::fs::remove_dir_all(&dir).unwrap();
}
