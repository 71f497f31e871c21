//! The stdio client supervises its server (spec: basic/transports/stdio.mdx,
//! "Shutdown" and "Unexpected Termination"): a server that exited is
//! started again by the next request, its stderr explains a crash, and
//! closing ends the process.

use ferromcp::client::{Client, ClientOptions, EraPreference, StderrMode, StdioCommand};
use ferromcp_tests::manifest::{Manifest, Transport, repo_root};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn echo_server_path() -> String {
    let manifest = Manifest::load().expect("manifest");
    let argv = manifest
        .command("echo-server", "rust", Transport::Stdio, None)
        .expect("rust echo server");
    assert!(
        repo_root().join(&argv[0]).exists(),
        "{} is missing: run `make build` first",
        argv[0]
    );
    argv[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exited_is_restarted_by_the_next_request() {
    // Each process serves exactly one request: `head` passes one line on and
    // then closes the server's stdin, so the server answers and exits.
    let script = format!("head -n 1 | exec {}", echo_server_path());
    let mut command = StdioCommand::new("sh", ["-c", script.as_str()]);
    command.cwd = Some(repo_root());
    // Modern from the start: an era probe would use up the one request.
    let options = ClientOptions {
        era: EraPreference::Modern,
        ..ClientOptions::default()
    };
    let client = Client::connect_stdio_with(command, options).await.unwrap();
    for round in 0..3 {
        let result = client
            .call_tool("echo", json!({"text": format!("round {round}")}))
            .await
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        assert_eq!(
            serde_json::to_value(&result.content).unwrap()[0]["text"],
            format!("round {round}")
        );
        // let the process finish exiting so the next call finds it gone
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_is_explained_by_the_servers_stderr() {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    let options = ClientOptions {
        stderr: StderrMode::Callback(Arc::new(move |line: &str| {
            sink.lock().unwrap().push(line.to_owned())
        })),
        ..ClientOptions::default()
    };
    let command = StdioCommand::new(
        "sh",
        ["-c", "read line; echo 'fatal: out of cheese' >&2; exit 3"],
    );
    let client = Client::connect_stdio_with(command, options).await.unwrap();
    let err = client
        .call_tool("echo", json!({"text": "x"}))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("out of cheese"), "{err}");
    assert_eq!(*lines.lock().unwrap(), ["fatal: out of cheese"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn close_ends_a_server_that_ignores_its_stdin() {
    // `sleep` never reads stdin, so only SIGTERM ends it.
    let command = StdioCommand::new("sh", ["-c", "trap 'exit 0' TERM; sleep 30 & wait"]);
    let client = Client::connect_stdio(command).await.unwrap();
    let started = std::time::Instant::now();
    client.close().await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_path_has_spaces_is_started_and_answers() {
    // As `C:\Program Files\...` on Windows: the program's own path has a
    // space, in a folder and in its name, and it is started without a shell.
    let dir = std::env::temp_dir().join(format!("ferromcp spaced dir {}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let program = dir.join("echo server");
    std::fs::copy(repo_root().join(echo_server_path()), &program).unwrap();
    let command = StdioCommand::new(program.as_os_str(), Vec::<String>::new());
    let client = Client::connect_stdio(command)
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let result = client
        .call_tool("echo", json!({"text": "through a spaced path"}))
        .await
        .unwrap();
    assert_eq!(
        serde_json::to_value(&result.content).unwrap()[0]["text"],
        "through a spaced path"
    );
    client.close().await;
    std::fs::remove_dir_all(&dir).unwrap();
}
