//! The MCP 2026-07-28 wire model: serde types for the schema's definitions,
//! the JSON-RPC envelope, error codes, the reserved `_meta` keys, the method
//! table, the `Mcp-*` header rules and the supported revisions.
//!
//! Nothing here performs I/O; transports and the server build on it.

pub mod codes;
pub mod jsonrpc;
mod mcp_error;
pub mod mcp_headers;
pub mod meta;
mod meta_members;
pub mod methods;
pub mod skills;
pub mod tasks;
mod types;
pub mod versions;

pub use mcp_error::McpError;
pub use methods::{InputKind, Method};
pub use types::*;
pub use versions::{LATEST_PROTOCOL_VERSION, LEGACY_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS};
