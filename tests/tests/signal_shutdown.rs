//! SIGTERM stops every language's echo server gracefully (issue 11, item
//! 10), as examples/manifest.json starts it, on stdio and HTTP: an open
//! `subscriptions/listen` stream ends with the spec's completion result
//! (docs/basic/patterns/subscriptions.mdx "Graceful Closure") and the
//! process exits 0. The Rust example does it through `Server::run_stdio` /
//! `run_http`, Python through `Server.run()`, Node through its serve
//! functions, C through a handler calling `ferromcp_server_shutdown`.
//! (Requests still in flight at the signal are covered per language.)

use ferromcp_tests::manifest::{Manifest, Transport, repo_root};
use ferromcp_tests::servers::free_port;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TIMEOUT: Duration = Duration::from_secs(30);

fn listen_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": {
        "notifications": {"toolsListChanged": true},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }})
}

fn spawn(argv: &[String], stdin: Stdio, stdout: Stdio) -> Child {
    Command::new(&argv[0])
        .args(&argv[1..])
        .current_dir(repo_root())
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{argv:?}: {e} (run `make build` first)"))
}

fn sigterm(child: &Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success());
}

/// Waits for the exit; kills the process and fails after [`TIMEOUT`].
fn exit_code(child: &mut Child, what: &str) -> Option<i32> {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what}: still running {TIMEOUT:?} after SIGTERM");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn assert_listen_completed(text: &str, what: &str) {
    let ended = text.lines().any(|line| {
        let line = line.strip_prefix("data:").unwrap_or(line).trim();
        serde_json::from_str::<Value>(line).is_ok_and(|m| {
            m["id"] == 1
                && m["result"]["resultType"] == "complete"
                && m["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 1
        })
    });
    assert!(ended, "{what}: no listen completion result in:\n{text}");
}

#[test]
fn sigterm_ends_listen_streams_and_exits_0_over_stdio() {
    let manifest = Manifest::load().unwrap();
    for language in manifest.languages("echo-server") {
        let argv = manifest
            .command("echo-server", &language, Transport::Stdio, None)
            .unwrap();
        let mut child = spawn(&argv, Stdio::piped(), Stdio::piped());
        let mut stdin = child.stdin.take().unwrap();
        writeln!(stdin, "{}", listen_request()).unwrap();
        stdin.flush().unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut ack = String::new();
        out.read_line(&mut ack).unwrap();
        assert!(ack.contains("acknowledged"), "{language}: {ack}");
        sigterm(&child);
        let mut rest = String::new();
        out.read_to_string(&mut rest).unwrap();
        assert_listen_completed(&rest, &language);
        assert_eq!(exit_code(&mut child, &language), Some(0), "{language}");
        drop(stdin);
    }
}

#[test]
fn sigterm_ends_listen_streams_and_exits_0_over_http() {
    let manifest = Manifest::load().unwrap();
    for language in manifest.languages("echo-server") {
        let port = free_port().unwrap();
        let argv = manifest
            .command("echo-server", &language, Transport::Http, Some(port))
            .unwrap();
        let mut child = spawn(&argv, Stdio::null(), Stdio::null());
        let mut stream = open_listen_stream(&mut child, port, &language);
        sigterm(&child);
        let mut rest = String::new();
        stream.read_to_string(&mut rest).unwrap();
        assert_listen_completed(&rest, &language);
        assert_eq!(exit_code(&mut child, &language), Some(0), "{language}");
    }
}

/// Connects to a starting HTTP server and opens a `subscriptions/listen`
/// stream, returning it once acknowledged. A connection that fails before
/// any answer (refused while the server starts; once, in CI, reset right
/// after connecting) is retried until [`TIMEOUT`]; if the server exited
/// meanwhile, that is the failure reported, with its status.
fn open_listen_stream(child: &mut Child, port: u16, language: &str) -> BufReader<TcpStream> {
    let deadline = Instant::now() + TIMEOUT;
    let body = listen_request().to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: subscriptions/listen\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut last_error = String::new();
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().expect("try_wait") {
            panic!("{language}: the server exited ({status}) before answering; last: {last_error}");
        }
        match try_open_listen_stream(port, &request) {
            Ok(stream) => return stream,
            Err(e) => {
                if !e.starts_with("connect:") {
                    // Visible in the log: a reset after connecting is worth
                    // knowing about even when the retry succeeds.
                    eprintln!("{language}: retrying the listen request after: {e}");
                }
                last_error = e;
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    let _ = child.kill();
    panic!("{language}: no acknowledged listen stream on port {port}: {last_error}");
}

/// One attempt: connect, send the whole request in one write, read up to
/// the acknowledgement.
fn try_open_listen_stream(port: u16, request: &str) -> Result<BufReader<TcpStream>, String> {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).map_err(|e| format!("connect: {e}"))?;
    conn.write_all(request.as_bytes())
        .map_err(|e| format!("write: {e}"))?;
    conn.set_read_timeout(Some(TIMEOUT))
        .map_err(|e| e.to_string())?;
    let mut stream = BufReader::new(conn);
    let mut seen = String::new();
    while !seen.contains("acknowledged") {
        let mut line = String::new();
        match stream.read_line(&mut line) {
            Ok(0) => return Err(format!("closed before the acknowledgement: {seen}")),
            Ok(_) => seen.push_str(&line),
            Err(e) => return Err(format!("read: {e} after {seen:?}")),
        }
    }
    Ok(stream)
}

/// A client that stops reading must not keep a stopped server alive: after
/// the grace periods (10 s for requests, 10 s for their answers) it exits.
/// Rust only: its runtime is dropped at the end of `main`, which used to
/// wait forever for a write to stdout blocked on tokio's blocking pool.
#[test]
fn sigterm_stops_a_server_whose_client_stopped_reading() {
    let manifest = Manifest::load().unwrap();
    let argv = manifest
        .command("echo-server", "rust", Transport::Stdio, None)
        .unwrap();
    let mut child = spawn(&argv, Stdio::piped(), Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut call = json!({"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {
        "name": "echo", "arguments": {"text": "x".repeat(1000)},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    }});
    // Far more answers than the pipe and every queue hold; the server stops
    // reading long before the end, so write from a thread.
    let writer = std::thread::spawn(move || {
        for id in 0..20_000 {
            call["id"] = json!(id);
            if writeln!(stdin, "{call}").is_err() {
                return;
            }
        }
        // Keep stdin open: the server must stop because of the signal.
        std::thread::sleep(TIMEOUT * 2);
    });
    // Until the server is blocked on its output (pipe full, queues full).
    std::thread::sleep(Duration::from_secs(1));
    sigterm(&child);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(60);
    let code = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("still running 60 s after SIGTERM with a client that does not read");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(code, Some(0), "exited after {:?}", started.elapsed());
    drop(stdout);
    drop(writer);
}

/// Issue 11, item 11: when the client closes the server's stdout, every
/// language's echo server ends on its own, exit status 0, with one line on
/// stderr saying so (no traceback, no uncaught error).
#[test]
fn a_closed_stdout_ends_every_server_quietly() {
    let manifest = Manifest::load().unwrap();
    for language in manifest.languages("echo-server") {
        let argv = manifest
            .command("echo-server", &language, Transport::Stdio, None)
            .unwrap();
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .current_dir(repo_root())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{argv:?}: {e} (run `make build` first)"));
        drop(child.stdout.take()); // like `| head -c 0`
        let mut stdin = child.stdin.take().unwrap();
        let mut list = listen_request();
        list["method"] = json!("tools/list");
        list["params"] = json!({"_meta": list["params"]["_meta"].clone()});
        writeln!(stdin, "{list}").unwrap();
        stdin.flush().unwrap();
        let code = exit_code(&mut child, &language);
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(code, Some(0), "{language}: {stderr}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{language}: {stderr}");
        assert!(
            lines[0].contains("the client closed stdout"),
            "{language}: {stderr}"
        );
        drop(stdin);
    }
}
