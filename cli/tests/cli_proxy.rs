//! `ferromcp proxy` end to end, as a user runs it: HTTP clients of either
//! era sharing one stdio child (a 2025-11-25-only one and the Rust echo
//! server), a stdio client reaching an HTTP server, and a config of three
//! upstreams, one of them down.

use ferromcp::client::{Client, ClientOptions, EraPreference, StdioCommand};
use ferromcp::protocol::Tool;
use ferromcp::server::{Server, ToolOutput};
use ferromcp_testkit::Http;
use ferromcp_tests::manifest::{Manifest, Transport, repo_root};
use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A proxy process, killed when the test ends.
struct Proxy {
    child: Child,
    url: String,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts `ferromcp proxy --http PORT ARGS...` and waits until it serves.
async fn proxy_http(args: &[&str]) -> Proxy {
    let port = free_port();
    let port_text = port.to_string();
    let mut argv = vec!["proxy", "--http", &port_text];
    argv.extend_from_slice(args);
    let child = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args(&argv)
        .current_dir(repo_root())
        .stdin(Stdio::null())
        .spawn()
        .expect("start ferromcp proxy");
    let proxy = Proxy {
        child,
        url: format!("http://127.0.0.1:{port}/mcp"),
    };
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return proxy;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the proxy did not start serving on port {port}");
}

fn era(era: EraPreference) -> ClientOptions {
    ClientOptions {
        era,
        ..ClientOptions::default()
    }
}

fn text(result: &ferromcp::protocol::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// Twenty HTTP clients, half of each era, call through one shared stdio
/// child at once; each gets its own answers.
async fn twenty_clients_share_one_child(proxy: &Proxy, tool: &str, expect: fn(&str) -> String) {
    let mut calls = Vec::new();
    for n in 0..20 {
        let url = proxy.url.clone();
        let tool = tool.to_owned();
        calls.push(tokio::spawn(async move {
            let preference = if n % 2 == 0 {
                EraPreference::Modern
            } else {
                EraPreference::Legacy
            };
            let client = Client::connect_http_with(&url, era(preference))
                .await
                .unwrap();
            let mut answers = Vec::new();
            for round in 0..5 {
                let sent = format!("c{n}r{round}");
                let result = client
                    .call_tool(&tool, json!({"text": sent}))
                    .await
                    .unwrap();
                answers.push((sent, text(&result)));
            }
            client.close().await;
            answers
        }));
    }
    for call in calls {
        for (sent, answered) in call.await.unwrap() {
            assert_eq!(answered, expect(&sent));
        }
    }
}

#[tokio::test]
async fn http_clients_of_either_era_share_a_legacy_stdio_child() {
    let proxy = proxy_http(&["--", "python3", "tests/fixtures/legacy_stdio_server.py"]).await;
    twenty_clients_share_one_child(&proxy, "shout", |sent| sent.to_uppercase()).await;
}

/// The shared child crashes: the call that crashed it fails, and the next
/// one starts it again (a new 2025-11-25 session with it) and is answered.
#[tokio::test]
async fn a_crashed_child_is_started_again() {
    let proxy = proxy_http(&["--", "python3", "tests/fixtures/legacy_stdio_server.py"]).await;
    let client = Client::connect_http(&proxy.url).await.unwrap();
    let crashed = client.call_tool("shout", json!({"text": "exit"})).await;
    assert!(crashed.is_err(), "{crashed:?}");
    let mut answered = None;
    for _ in 0..50 {
        match client.call_tool("shout", json!({"text": "again"})).await {
            Ok(result) => {
                answered = Some(text(&result));
                break;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
    assert_eq!(answered.as_deref(), Some("AGAIN"));
}

#[tokio::test]
async fn http_clients_share_the_rust_echo_server() {
    let manifest = Manifest::load().unwrap();
    let argv = manifest
        .command("echo-server", "rust", Transport::Stdio, None)
        .unwrap();
    let mut args = vec!["--"];
    args.extend(argv.iter().map(String::as_str));
    let proxy = proxy_http(&args).await;
    twenty_clients_share_one_child(&proxy, "echo", |sent| sent.to_owned()).await;
}

async fn http_upstream(name: &'static str) -> (String, Http) {
    let server = Server::new(name, "1.0.0");
    server
        .add_tool(
            Tool::new("whoami", json!({"type": "object"})),
            move |_ctx, _args: Value| async move { Ok(ToolOutput::text(name)) },
        )
        .unwrap();
    let served = Http::start(server).await;
    (served.url(), served)
}

/// A desktop host's way: the host starts `ferromcp proxy --stdio URL` and
/// speaks stdio to it.
#[tokio::test]
async fn a_stdio_client_reaches_an_http_server() {
    let (url, _upstream) = http_upstream("remote").await;
    for preference in [EraPreference::Modern, EraPreference::Legacy] {
        let command = StdioCommand::new(
            env!("CARGO_BIN_EXE_ferromcp"),
            ["proxy", "--stdio", &url, "--no-login"],
        );
        let client = Client::connect_stdio_with(command, era(preference))
            .await
            .unwrap();
        let tools = client.list_all_tools().await.unwrap();
        assert_eq!(
            tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["whoami"]
        );
        let result = client.call_tool("whoami", json!({})).await.unwrap();
        assert_eq!(text(&result), "remote", "{preference:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn a_config_merges_upstreams_and_mounts_one_that_was_down_once_it_is_up() {
    let (url, _upstream) = http_upstream("remote").await;
    let down = format!("http://127.0.0.1:{}/mcp", free_port());
    let dir = std::env::temp_dir().join(format!("ferromcp-cli-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("servers.json");
    let file = json!({"mcpServers": {
        "legacy": {"command": "python3", "args": ["tests/fixtures/legacy_stdio_server.py"]},
        "remote": {"url": url},
        "gone": {"url": down},
    }});
    std::fs::write(&config, file.to_string()).unwrap();
    let proxy = proxy_http(&["--config", config.to_str().unwrap(), "--no-login"]).await;
    let client = Client::connect_http(&proxy.url).await.unwrap();
    let mut names: Vec<String> = Vec::new();
    for _ in 0..100 {
        names = client
            .list_all_tools()
            .await
            .map(|t| t.into_iter().map(|t| t.name).collect())
            .unwrap_or_default();
        if !names.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    names.sort();
    assert_eq!(names, ["legacy_shout", "remote_whoami"]);
    let shouted = client
        .call_tool("legacy_shout", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(text(&shouted), "HI");
    let remote = client.call_tool("remote_whoami", json!({})).await.unwrap();
    assert_eq!(text(&remote), "remote");
    // The upstream that was down comes up: the proxy mounts it.
    let gone_port: u16 = down
        .trim_start_matches("http://127.0.0.1:")
        .trim_end_matches("/mcp")
        .parse()
        .unwrap();
    let late = Server::new("gone", "1.0.0");
    late.add_tool(
        Tool::new("whoami", json!({"type": "object"})),
        |_ctx, _args: Value| async { Ok(ToolOutput::text("back")) },
    )
    .unwrap();
    let _late = Http::start_with(late, |options| {
        options.bind = std::net::SocketAddr::from(([127, 0, 0, 1], gone_port));
    })
    .await;
    let mut back = None;
    for _ in 0..100 {
        if let Ok(result) = client.call_tool("gone_whoami", json!({})).await {
            back = Some(text(&result));
            break;
        }
        client.clear_cache();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(back.as_deref(), Some("back"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_config_is_refused_with_file_line_and_key() {
    let dir = std::env::temp_dir().join(format!("ferromcp-cli-badconfig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("servers.json");
    std::fs::write(
        &config,
        "{\"mcpServers\": {\n  \"a\": {\"comand\": \"x\"}\n}}",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args(["proxy", "--config", config.to_str().unwrap(), "--stdio"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:2: unknown field `comand`", config.display())),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The hostile server (`tests/src/bin/hostile-server.rs`), as `make
/// cargo-build` leaves it.
fn hostile_server() -> String {
    repo_root()
        .join("target/bin/hostile-server")
        .to_string_lossy()
        .into_owned()
}

/// The proxy's peak resident memory, in MiB.
fn peak_rss_mib(proxy: &Proxy) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", proxy.child.id())).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib / 1024
}

/// Upstreams that flood or never finish an answer are bounded, and the
/// others answer meanwhile: 200,000 progress notifications from a stdio
/// upstream reach the client (the call then completes) in bounded memory;
/// an HTTP upstream whose answer is one endless line fails that call at
/// the client's message limit instead of hanging or growing; a plain
/// upstream answers every call made during both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flooding_and_endless_upstreams_are_bounded_and_the_others_answer() {
    let (url, _upstream) = http_upstream("remote").await;
    let mut endless = Command::new(hostile_server())
        .args(["endless-line", "--http", "0"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the hostile server");
    let endless_port = {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(endless.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        line.trim().trim_start_matches("listening on ").to_owned()
    };
    let dir = std::env::temp_dir().join(format!("ferromcp-cli-proxy-flood-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("servers.json");
    let file = json!({"mcpServers": {
        "flood": {"command": hostile_server(), "args": ["progress-flood", "--count", "200000"]},
        "endless": {"url": format!("http://127.0.0.1:{endless_port}/mcp")},
        "remote": {"url": url},
    }});
    std::fs::write(&config, file.to_string()).unwrap();
    let proxy = proxy_http(&[
        "--config",
        config.to_str().unwrap(),
        "--no-login",
        "--timeout",
        "20",
    ])
    .await;
    let client = Client::connect_http(&proxy.url).await.unwrap();
    for _ in 0..100 {
        let names: Vec<String> = client
            .list_all_tools()
            .await
            .map(|t| t.into_iter().map(|t| t.name).collect())
            .unwrap_or_default();
        if names.len() == 3 {
            break;
        }
        client.clear_cache();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let seen = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = seen.clone();
    let options = ferromcp::client::CallOptions::default().with_progress(move |_| {
        counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    });
    let flood_client = client.clone();
    let flood = tokio::spawn(async move {
        flood_client
            .call_tool_with("flood_flood", json!({}), &options)
            .await
    });
    let endless_client = client.clone();
    let endless_call =
        tokio::spawn(async move { endless_client.call_tool("endless_flood", json!({})).await });
    // Meanwhile the plain upstream answers, each call promptly.
    while !flood.is_finished() || !endless_call.is_finished() {
        let started = std::time::Instant::now();
        let answer = client.call_tool("remote_whoami", json!({})).await.unwrap();
        assert_eq!(text(&answer), "remote");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "a plain call took {:?} beside the floods",
            started.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let flooded = flood.await.unwrap().expect("the flooded call completes");
    assert_eq!(text(&flooded), "done");
    assert!(seen.load(std::sync::atomic::Ordering::Relaxed) > 0);
    let failed = endless_call.await.unwrap();
    assert!(failed.is_err(), "an endless answer is an error: {failed:?}");
    let rss = peak_rss_mib(&proxy);
    assert!(rss < 200, "the proxy peaked at {rss} MiB");
    let _ = endless.kill();
    let _ = endless.wait();
    std::fs::remove_dir_all(&dir).ok();
}

/// `--reload`: an edit under the watched path restarts the stdio server
/// (each start of it writes its pid), and the client's connection to the
/// proxy carries on through the restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_restarts_the_server_and_the_client_stays_connected() {
    let manifest = Manifest::load().unwrap();
    let argv = manifest
        .command("echo-server", "rust", Transport::Stdio, None)
        .unwrap();
    let scratch = std::env::temp_dir().join(format!("ferromcp-reload-{}", std::process::id()));
    let watched = scratch.join("src");
    std::fs::create_dir_all(&watched).unwrap();
    std::fs::write(watched.join("server.txt"), "one").unwrap();
    let pids = scratch.join("pids");
    let server = argv
        .iter()
        .map(|a| format!("'{a}'"))
        .collect::<Vec<_>>()
        .join(" ");
    let start = format!("echo $$ >> '{}'; exec {server}", pids.display());
    let watched_text = watched.display().to_string();
    let mut command = StdioCommand::new(
        env!("CARGO_BIN_EXE_ferromcp"),
        [
            "proxy",
            "--stdio",
            "--reload",
            &watched_text,
            "--",
            "sh",
            "-c",
            &start,
        ],
    );
    command.cwd = Some(repo_root());
    let client = Client::connect_stdio(command).await.unwrap();
    let starts = || {
        std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let result = client
        .call_tool("echo", json!({"text": "before"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "before");
    assert_eq!(starts(), 1);

    std::fs::write(watched.join("server.txt"), "two, longer").unwrap();
    let mut answered = None;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if starts() < 2 {
            continue;
        }
        if let Ok(result) = client.call_tool("echo", json!({"text": "after"})).await {
            answered = Some(text(&result));
            break;
        }
    }
    assert_eq!(starts(), 2, "the server was started again once");
    assert_eq!(answered.as_deref(), Some("after"));
    client.close().await;
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn reload_needs_files_and_a_command() {
    let missing = std::env::temp_dir().join("ferromcp-reload-nothing-here");
    let output = Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args(["proxy", "--stdio", "--reload"])
        .arg(&missing)
        .args(["--", "true"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--reload: no files under"), "{stderr}");
}
