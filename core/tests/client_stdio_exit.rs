//! A stdio server that exits while a call waits is a closed connection
//! (`ErrorKind::Closed`, C's FERROMCP_CONNECTION_CLOSED, Python's
//! ConnectionClosedError), not a protocol error, and the error says why
//! (the last lines of its stderr).

#![cfg(unix)]

use ferromcp::ErrorKind;
use ferromcp::client::{Client, StdioCommand};

#[tokio::test]
async fn a_server_that_exits_is_a_closed_connection_with_its_last_words() {
    // Reads the first request, says why it gives up, and exits unanswered.
    let command = StdioCommand::new(
        "sh",
        [
            "-c",
            "read -r request; echo 'fatal: no config file' >&2; exit 3",
        ],
    );
    let client = Client::connect_stdio(command).await.expect("sh starts");
    let err = client.discover().await.expect_err("the server exited");
    assert_eq!(err.kind(), ErrorKind::Closed, "{err}");
    let message = err.to_string();
    assert!(message.starts_with("connection closed"), "{message}");
    assert!(message.contains("fatal: no config file"), "{message}");
}

#[tokio::test]
async fn last_words_written_after_stdout_closed_are_still_reported() {
    // Closes stdout first and writes its reason a moment later, as a
    // slow or loaded process may: the report waits for stderr's end
    // (a fixed 20 ms pause used to lose the line).
    let command = StdioCommand::new(
        "sh",
        [
            "-c",
            "read -r request; exec 1>&-; sleep 0.2; echo 'fatal: late words' >&2; exit 3",
        ],
    );
    let client = Client::connect_stdio(command).await.expect("sh starts");
    let err = client.discover().await.expect_err("the server exited");
    assert_eq!(err.kind(), ErrorKind::Closed, "{err}");
    assert!(err.to_string().contains("fatal: late words"), "{err}");
}

/// A 2025-11-25 server that crashed is started again by the next call, which
/// opens a new session with it (the old one ended with its process) and is
/// answered.
#[tokio::test]
async fn a_legacy_server_started_again_gets_a_new_session() {
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/legacy_stdio_server.py");
    let command = StdioCommand::new("python3", [fixture.as_os_str()]);
    let client = Client::connect_stdio(command).await.unwrap();
    let shout = |text: &'static str| {
        let client = client.clone();
        async move {
            let result = client
                .call_tool("shout", serde_json::json!({"text": text}))
                .await?;
            Ok::<_, ferromcp::Error>(serde_json::to_value(&result.content)?[0]["text"].clone())
        }
    };
    assert_eq!(shout("a").await.unwrap(), "A");
    let crashed = shout("exit").await.unwrap_err();
    assert_eq!(crashed.kind(), ErrorKind::Closed, "{crashed}");
    assert_eq!(shout("again").await.unwrap(), "AGAIN");
    assert_eq!(client.is_legacy(), Some(true));
}
