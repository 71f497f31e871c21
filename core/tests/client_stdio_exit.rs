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
