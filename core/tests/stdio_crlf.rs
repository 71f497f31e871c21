//! stdio with `\r\n` line endings (issue 26): a Windows program (Python's
//! `print`, a .NET `Console.WriteLine`) may end its lines so, and may leave
//! a blank line between messages. The server and the client read such
//! lines as they read `\n` ones, in both directions.

use ferromcp_testkit as common;

use common::{TIMEOUT, request, server_with};
use ferromcp::client::{Client, ClientOptions, EraPreference};
use ferromcp::protocol::Tool;
use ferromcp::server::{RequestContext, Server, ServerOptions, ToolOutput};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};

fn echo_server() -> Server {
    let server = server_with(ServerOptions::default());
    server
        .add_tool(
            Tool::new("echo", json!({"type": "object"})),
            |_ctx: RequestContext, args: Value| async move {
                Ok(ToolOutput::text(args["text"].as_str().unwrap_or_default()))
            },
        )
        .unwrap();
    server
}

#[tokio::test]
async fn the_server_reads_crlf_requests_and_skips_blank_crlf_lines() {
    let (mut to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, from_server) = tokio::io::duplex(1 << 16);
    let serving = tokio::spawn(ferromcp::transport::stdio::serve(
        echo_server(),
        server_in,
        server_out,
    ));
    let call = |id: u64, text: &str| {
        request(
            id,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": text}}),
        )
        .to_string()
    };
    // Blank CRLF lines before, between and after; the last request ends
    // with `\r\n` too, then the input ends.
    let input = format!(
        "\r\n{}\r\n\r\n\r\n{}\r\n\r\n",
        call(1, "first"),
        call(2, "second")
    );
    to_server.write_all(input.as_bytes()).await.unwrap();
    drop(to_server);

    let mut lines = BufReader::new(from_server).lines();
    let mut answers = Vec::new();
    while let Some(line) = tokio::time::timeout(TIMEOUT, lines.next_line())
        .await
        .expect("answers in time")
        .unwrap()
    {
        answers.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    answers.sort_by_key(|a| a["id"].as_u64());
    assert_eq!(answers.len(), 2, "{answers:?}");
    for (answer, (id, text)) in answers.iter().zip([(1, "first"), (2, "second")]) {
        assert_eq!(answer["id"], id, "{answer}");
        assert_eq!(answer["result"]["content"][0]["text"], text, "{answer}");
    }
    tokio::time::timeout(TIMEOUT, serving)
        .await
        .expect("the server ends at end of input")
        .unwrap()
        .unwrap();
}

/// Copies `from` to `to`, writing each `\n` as `\r\n` followed by a blank
/// `\r\n` line: the most a CRLF writer can do to a line-based reader.
async fn crlf_relay(
    mut from: impl tokio::io::AsyncRead + Unpin,
    mut to: impl tokio::io::AsyncWrite + Unpin,
) {
    let mut buf = vec![0; 4096];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let mut out = Vec::with_capacity(n * 2);
        for &b in &buf[..n] {
            if b == b'\n' {
                out.extend_from_slice(b"\r\n\r\n");
            } else {
                out.push(b);
            }
        }
        if to.write_all(&out).await.is_err() {
            break;
        }
    }
    let _ = to.shutdown().await;
}

#[tokio::test]
async fn the_client_reads_a_server_that_writes_crlf() {
    // client -> relay -> server -> relay -> client, CRLF both ways.
    let (client_out, relay_in) = tokio::io::duplex(1 << 16);
    let (relay_to_server, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, relay_from_server) = tokio::io::duplex(1 << 16);
    let (relay_out, client_in) = tokio::io::duplex(1 << 16);
    tokio::spawn(crlf_relay(relay_in, relay_to_server));
    tokio::spawn(crlf_relay(relay_from_server, relay_out));
    tokio::spawn(ferromcp::transport::stdio::serve(
        echo_server(),
        server_in,
        server_out,
    ));
    let options = ClientOptions {
        era: EraPreference::Modern,
        ..ClientOptions::default()
    };
    let client = Client::connect_stream(client_in, client_out, options);
    let tools = tokio::time::timeout(TIMEOUT, client.list_all_tools())
        .await
        .expect("tools listed in time")
        .unwrap();
    assert_eq!(tools.len(), 1);
    for text in ["one", "two"] {
        let result = tokio::time::timeout(TIMEOUT, client.call_tool("echo", json!({"text": text})))
            .await
            .expect("answered in time")
            .unwrap();
        assert_eq!(
            serde_json::to_value(&result.content).unwrap()[0]["text"],
            text
        );
    }
    client.close().await;
}
