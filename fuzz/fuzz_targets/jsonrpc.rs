//! JSON-RPC classification: the incoming-message parser every transport
//! runs first. Beyond not panicking: the fast path (straight into the
//! envelope) and the slow path (through a JSON tree) classify alike, and a
//! classified message survives serialising and reading back unchanged.
#![no_main]

use ferromcp::protocol::jsonrpc::{EnvelopeError, Message};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// What must agree between two readings: the message, or the error's code
/// and recovered id (the wording of parse errors may differ).
fn summary(read: &Result<Message, EnvelopeError>) -> Result<&Message, (i32, String)> {
    read.as_ref()
        .map_err(|e| (e.error.code, format!("{:?}", e.id)))
}

fuzz_target!(|data: &[u8]| {
    let read = Message::from_slice(data);
    if let Ok(tree) = serde_json::from_slice::<Value>(data) {
        let slow = Message::from_value(tree);
        assert_eq!(summary(&read), summary(&slow), "fast and slow paths differ");
    }
    if let Ok(message) = &read {
        let again = Message::from_value(message.to_value());
        assert_eq!(
            again.as_ref().ok(),
            Some(message),
            "round trip changed the message"
        );
    }
});
