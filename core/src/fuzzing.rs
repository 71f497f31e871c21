//! Entry points for the fuzz targets in `fuzz/` (cargo-fuzz). **Not API**:
//! hidden from the documentation, free to change with any release.
//!
//! The targets go through public API wherever it reaches (the HTTP endpoint
//! over a loopback socket, the client over HTTP, [`crate::server::uri_template`],
//! [`crate::protocol::jsonrpc::Message`]); this module only opens the
//! in-process request path (prepare → admit → execute) that the transports
//! share, so the `requestState` target runs without sockets and fast.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::protocol::jsonrpc::{Message, error_value};
use crate::server::{SealKey, Server};

/// The purpose `requestState` is sealed under (`server/input.rs` seals and
/// opens with the same string; the unit test below fails if they part).
/// Lets a fuzz target seal its own payloads with the server's key, so the
/// fuzzer reaches the payload checks behind the integrity check.
pub const REQUEST_STATE_PURPOSE: &str = "request-state";

/// Seals `payload` as the server with `key` would seal a `requestState`.
///
/// ```
/// let key = ferromcp::server::SealKey::from_secret(b"fuzz");
/// let state = ferromcp::fuzzing::seal_request_state(&key, b"{}");
/// assert!(state.contains('.'));
/// ```
pub fn seal_request_state(key: &SealKey, payload: &[u8]) -> String {
    key.seal(REQUEST_STATE_PURPOSE, payload)
}

/// Answers one 2026-07-28 message in process, the way the HTTP endpoint
/// does after its header checks: the JSON-RPC response for a request or an
/// unreadable message, `None` for a notification or a response.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let server = ferromcp::server::Server::new("fuzz", "0");
/// let answer = ferromcp::fuzzing::answer(&server, b"{").await;
/// assert_eq!(answer.unwrap()["error"]["code"], -32700);
/// # });
/// ```
pub async fn answer(server: &Server, bytes: &[u8]) -> Option<Value> {
    let request = match Message::from_slice(bytes) {
        Ok(Message::Request(request)) => request,
        Ok(_) => return None,
        Err(e) => return Some(error_value(e.id.as_ref(), &e.error)),
    };
    let prepared = match server.admit_request(request) {
        Ok(p) => p,
        Err(rejection) => return Some(rejection.to_message()),
    };
    let reply = server
        .execute(prepared, CancellationToken::new(), None)
        .await;
    Some(reply.message.into_value())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::methods;
    use crate::protocol::{LATEST_PROTOCOL_VERSION, Tool};
    use crate::server::{RequestContext, ServerOptions, ToolOutput};
    use serde_json::json;

    fn asking_server(key: &SealKey) -> Server {
        let options = ServerOptions {
            seal_key: key.clone(),
            ..ServerOptions::default()
        };
        let server =
            Server::with_options(crate::protocol::Implementation::new("fuzz", "0"), options);
        server
            .add_tool(
                Tool::new("ask", json!({"type": "object"})),
                |ctx: RequestContext, _args: Value| async move {
                    let answer = ctx.elicit("Name?", json!({"type": "object"})).await?;
                    Ok(ToolOutput::Value(answer))
                },
            )
            .expect("valid tool");
        server
    }

    /// A state sealed by [`seal_request_state`] passes the integrity check
    /// (the error is about the payload), so the purpose matches the server's.
    #[tokio::test]
    async fn sealed_state_gets_past_the_integrity_check() {
        let key = SealKey::from_secret(b"fuzz");
        let server = asking_server(&key);
        let call = |state: String| {
            json!({
                "jsonrpc": "2.0", "id": 1, "method": methods::TOOLS_CALL,
                "params": {
                    "name": "ask", "arguments": {}, "requestState": state,
                    "_meta": {
                        "io.modelcontextprotocol/protocolVersion": LATEST_PROTOCOL_VERSION,
                        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
                    }
                }
            })
            .to_string()
        };
        let ours = answer(
            &server,
            call(seal_request_state(&key, b"not json")).as_bytes(),
        )
        .await
        .expect("a response");
        let message = ours["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("unreadable payload"), "{ours}");
        let forged = answer(&server, call("e30.AAAA".into()).as_bytes())
            .await
            .expect("a response");
        let message = forged["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("integrity check failed"), "{forged}");
    }
}
