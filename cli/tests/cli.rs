//! The `ferromcp` command line end to end: against an in-process HTTP server
//! and, over stdio, against the Rust echo server from examples/manifest.json.

use ferromcp::protocol::{Prompt, Resource, Tool};
use ferromcp::server::{PromptOutput, ResourceOutput, Server, ToolOutput};
use ferromcp::transport::http::{HttpOptions, HttpServer};
use ferromcp_tests::manifest::{Manifest, Transport, repo_root};
use serde_json::{Value, json};
use std::process::{Command, Output};

fn ferromcp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ferromcp"))
        .args(args)
        .current_dir(repo_root())
        .output()
        .expect("run ferromcp")
}

fn stdout_json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

async fn http_server() -> (String, Guard) {
    let server = Server::new("cli-test", "1.0.0");
    server
        .add_tool(
            Tool::new("shout", json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}))
                .with_description("Upper-cases text"),
            |_ctx, args: Value| async move {
                Ok(ToolOutput::text(args["text"].as_str().unwrap_or("").to_uppercase()))
            },
        )
        .unwrap();
    server
        .add_resource(Resource::new("mem://note", "note"), |_ctx, _req| async {
            Ok(ResourceOutput::Text("remember".into()))
        })
        .unwrap();
    server
        .add_prompt(Prompt::new("greet"), |_ctx, _args| async {
            Ok(PromptOutput::Text("hello".into()))
        })
        .unwrap();
    let options = HttpOptions::localhost(0);
    let guard = Guard(options.shutdown.clone());
    let bound = HttpServer::bind(server, options).await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        bound.local_addr().unwrap().port()
    );
    tokio::spawn(bound.run());
    (url, guard)
}

/// Stops the in-process server when the test ends.
struct Guard(tokio_util::sync::CancellationToken);

impl Drop for Guard {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_subcommand_over_http() {
    let (url, _guard) = http_server().await;
    let url = url.as_str();
    let out = tokio::task::spawn_blocking({
        let url = url.to_owned();
        move || {
            (
                ferromcp(&["tools", "--url", &url]),
                ferromcp(&["call", "--url", &url, "shout", r#"{"text":"hi"}"#]),
                ferromcp(&["resources", "--url", &url]),
                ferromcp(&["read", "--url", &url, "mem://note"]),
                ferromcp(&["prompts", "--url", &url]),
                ferromcp(&["get-prompt", "--url", &url, "greet"]),
                ferromcp(&["discover", "--url", &url]),
            )
        }
    })
    .await
    .unwrap();
    let (tools, call, resources, read, prompts, prompt, discover) = out;
    assert_eq!(
        String::from_utf8_lossy(&tools.stdout),
        "shout\tUpper-cases text\n"
    );
    assert_eq!(stdout_json(&call)["content"][0]["text"], "HI");
    assert!(String::from_utf8_lossy(&resources.stdout).starts_with("mem://note\tnote"));
    assert_eq!(stdout_json(&read)["contents"][0]["text"], "remember");
    assert_eq!(String::from_utf8_lossy(&prompts.stdout), "greet\n");
    assert_eq!(
        stdout_json(&prompt)["messages"][0]["content"]["text"],
        "hello"
    );
    assert_eq!(
        stdout_json(&discover)["supportedVersions"],
        json!(["2026-07-28"])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_are_one_line_on_stderr_with_a_failing_exit() {
    let (url, _guard) = http_server().await;
    let cases: Vec<Vec<String>> = vec![
        vec![
            "call".into(),
            "--url".into(),
            url.clone(),
            "shout".into(),
            "{not json".into(),
        ],
        vec!["call".into(), "--url".into(), url.clone(), "nope".into()],
        vec![
            "tools".into(),
            "--url".into(),
            "http://127.0.0.1:1/mcp".into(),
        ],
        vec![
            "tools".into(),
            "--stdio".into(),
            "/nonexistent/server".into(),
        ],
    ];
    let outputs = tokio::task::spawn_blocking(move || {
        cases
            .iter()
            .map(|c| ferromcp(&c.iter().map(String::as_str).collect::<Vec<_>>()))
            .collect::<Vec<_>>()
    })
    .await
    .unwrap();
    for out in outputs {
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
        assert!(stderr.starts_with("ferromcp: "), "{stderr}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn calls_a_stdio_server_from_the_manifest() {
    let manifest = Manifest::load().unwrap();
    let argv = manifest
        .command("echo-server", "rust", Transport::Stdio, None)
        .unwrap();
    assert!(
        repo_root().join(&argv[0]).exists(),
        "{} is missing: run `make build` first",
        argv[0]
    );
    let command = argv.join(" ");
    let out = ferromcp(&["call", "--stdio", &command, "add", r#"{"a":20,"b":22}"#]);
    assert_eq!(
        stdout_json(&out)["structuredContent"],
        json!({"result": 42})
    );
    let help = ferromcp(&["call", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("--stdio"));
}

#[test]
fn discover_against_a_legacy_only_server_says_so_and_shows_its_initialize_result() {
    let command = "python3 tests/fixtures/legacy_stdio_server.py";
    let out = ferromcp(&["discover", "--stdio", command]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.trim(),
        "ferromcp: the server speaks only 2025-11-25 (no server/discover); showing its initialize result"
    );
    let result = stdout_json(&out);
    assert_eq!(result["protocolVersion"], "2025-11-25");
    assert_eq!(result["serverInfo"]["name"], "legacy-fixture");
    assert_eq!(result["capabilities"], json!({"tools": {}}));
}

#[test]
fn works_unchanged_against_a_legacy_server() {
    let command = "python3 tests/fixtures/legacy_stdio_server.py";
    let tools = ferromcp(&["tools", "--stdio", command]);
    assert_eq!(
        String::from_utf8_lossy(&tools.stdout),
        "shout\tUpper-cases text\n"
    );
    let call = ferromcp(&["call", "--stdio", command, "shout", r#"{"text":"hi"}"#]);
    let result = stdout_json(&call);
    assert_eq!(result["content"][0]["text"], "HI");
    assert!(
        result.get("resultType").is_none(),
        "a legacy result, passed through"
    );
}
