//! The HTTP request path through the real endpoint: headers (Host, Origin,
//! Content-Type, Accept, the mirrored Mcp-* headers, Mcp-Session-Id) and
//! body, written as `METHOD /path`, header lines, an empty line and the
//! body (see `RawRequest`). Every answer must be well formed, and the
//! server must keep serving.
#![no_main]

use ferromcp_fuzz::{RawRequest, check_answer, endpoint, runtime, send};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let addr = endpoint();
    let request = RawRequest::parse(data).into_request();
    runtime().block_on(async {
        if let Some(answer) = send(addr, request).await {
            check_answer(&answer);
        }
    });
});
