//! JSON-RPC error codes used by MCP 2026-07-28, and the legacy ones a client may
//! still receive from 2025-11-25 peers.

/// Invalid JSON was received.
pub const PARSE_ERROR: i32 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i32 = -32600;
/// The method does not exist or is not available in this revision.
pub const METHOD_NOT_FOUND: i32 = -32601;
/// Invalid method parameters, including a missing or malformed `_meta`.
pub const INVALID_PARAMS: i32 = -32602;
/// Internal JSON-RPC error.
pub const INTERNAL_ERROR: i32 = -32603;
/// HTTP headers disagree with the body, or a required header is missing.
pub const HEADER_MISMATCH: i32 = -32020;
/// The request needs a client capability the client did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;
/// The requested protocol version is not supported by the server.
pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;
/// `-32002` resource not found, as 2025-11-25 and earlier servers answer a
/// `resources/read` of an unknown URI. Never emitted by this implementation
/// (2026-07-28 uses [`INVALID_PARAMS`]); clients accept it from legacy peers.
pub const RESOURCE_NOT_FOUND_LEGACY: i32 = -32002;
/// `-32042` URL elicitation required (2025-11-25 only): the request cannot
/// proceed until the user completes a URL-mode elicitation. Never emitted
/// under 2026-07-28; clients may receive it from legacy peers.
pub const URL_ELICITATION_REQUIRED_LEGACY: i32 = -32042;

/// Every code above by its constant name, so bindings export one table
/// instead of retyping names and numbers.
pub const ALL: &[(&str, i32)] = &[
    ("PARSE_ERROR", PARSE_ERROR),
    ("INVALID_REQUEST", INVALID_REQUEST),
    ("METHOD_NOT_FOUND", METHOD_NOT_FOUND),
    ("INVALID_PARAMS", INVALID_PARAMS),
    ("INTERNAL_ERROR", INTERNAL_ERROR),
    ("HEADER_MISMATCH", HEADER_MISMATCH),
    (
        "MISSING_REQUIRED_CLIENT_CAPABILITY",
        MISSING_REQUIRED_CLIENT_CAPABILITY,
    ),
    ("UNSUPPORTED_PROTOCOL_VERSION", UNSUPPORTED_PROTOCOL_VERSION),
    ("RESOURCE_NOT_FOUND_LEGACY", RESOURCE_NOT_FOUND_LEGACY),
    (
        "URL_ELICITATION_REQUIRED_LEGACY",
        URL_ELICITATION_REQUIRED_LEGACY,
    ),
];
