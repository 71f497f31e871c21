//! `requestState` opening (MRTR, sealed with HMAC). Input: a first line of
//! JSON merged into the `tools/call` params (`name`, `arguments`,
//! `inputResponses`...), then the state. A state starting with `!` is used
//! as sent (the fuzzer exercises the integrity check); otherwise the rest
//! is sealed with the server's key, so the fuzzer reaches the payload
//! checks (method, digest, expiry, answers) behind it.
#![no_main]

use ferromcp::protocol::{LATEST_PROTOCOL_VERSION, meta, methods};
use ferromcp::server::Server;
use ferromcp_fuzz::{fuzz_server, runtime, seal_key};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use std::sync::OnceLock;

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(fuzz_server)
}

fuzz_target!(|data: &[u8]| {
    let (first, state) = match data.iter().position(|&b| b == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (&b""[..], data),
    };
    let mut params: Map<String, Value> = serde_json::from_slice(first).unwrap_or_default();
    params.entry("name").or_insert_with(|| json!("ask"));
    let state = match state.strip_prefix(b"!") {
        Some(raw) => String::from_utf8_lossy(raw).into_owned(),
        None => ferromcp::fuzzing::seal_request_state(&seal_key(), state),
    };
    params.insert("requestState".into(), Value::from(state));
    params.insert(
        "_meta".into(),
        json!({
            meta::PROTOCOL_VERSION: LATEST_PROTOCOL_VERSION,
            meta::CLIENT_CAPABILITIES: {"elicitation": {}, "sampling": {}, "roots": {}},
        }),
    );
    let request =
        json!({"jsonrpc": "2.0", "id": 1, "method": methods::TOOLS_CALL, "params": params});
    let bytes = serde_json::to_vec(&request).expect("serialisable");
    let answer = runtime()
        .block_on(ferromcp::fuzzing::answer(server(), &bytes))
        .expect("a request is answered");
    assert_eq!(answer["id"], 1, "answered with another id: {answer}");
    assert!(
        answer.get("result").is_some() != answer.get("error").is_some(),
        "neither or both of result and error: {answer}"
    );
});
