//! The protocol revisions this crate speaks.

/// The protocol revision this crate implements natively.
pub const LATEST_PROTOCOL_VERSION: &str = "2026-07-28";

/// Revisions the server accepts on the stateless (per-request `_meta`) wire.
pub const MODERN_PROTOCOL_VERSIONS: &[&str] = &[LATEST_PROTOCOL_VERSION];

/// Revisions a legacy (`initialize` handshake) peer may negotiate, newest
/// first: a client offers the first, a server answers an unknown request
/// with it.
pub const LEGACY_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
