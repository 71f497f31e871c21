//! Test support shared by the cross-language tests: reading
//! `examples/manifest.json`, starting servers, validating emitted messages
//! against the specification's schema.

pub mod schema;
