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
