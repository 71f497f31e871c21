//! JSON-RPC error codes used by MCP 2026-07-28.

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
