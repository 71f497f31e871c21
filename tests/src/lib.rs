//! Test support shared by the cross-language tests and the demo: reading
//! `examples/manifest.json`, starting example servers on either transport,
//! and validating emitted messages against the specification's schema.

pub mod manifest;
pub mod schema;
pub mod servers;
