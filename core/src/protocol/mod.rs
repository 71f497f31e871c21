//! The MCP 2026-07-28 wire model: serde types for the schema's definitions,
//! the JSON-RPC envelope, error codes and the reserved `_meta` keys.
//!
//! Nothing here performs I/O; transports and the server build on it.

pub mod codes;
pub mod jsonrpc;
pub mod meta;
mod types;

pub use types::*;

/// The protocol revision this crate implements natively.
pub const LATEST_PROTOCOL_VERSION: &str = "2026-07-28";

/// Revisions the server accepts on the stateless (per-request `_meta`) wire.
pub const MODERN_PROTOCOL_VERSIONS: &[&str] = &[LATEST_PROTOCOL_VERSION];
