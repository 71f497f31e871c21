//! `server/discover` and the capabilities it (and a legacy `initialize`)
//! declares: a kind of primitive is declared once the server offers it.

use serde_json::{Map, Value, json};

use super::insert_cache_hint;
use crate::protocol::MODERN_PROTOCOL_VERSIONS;
use crate::server::Server;

impl Server {
    /// The server's capabilities, from what it offers.
    pub(crate) fn capabilities(&self) -> Value {
        let registry = self.registry_read();
        let offered = registry.offered;
        let mut caps = Map::new();
        if offered.tools {
            caps.insert("tools".into(), json!({"listChanged": true}));
        }
        if offered.resources {
            caps.insert(
                "resources".into(),
                json!({"subscribe": true, "listChanged": true}),
            );
        }
        if offered.prompts {
            caps.insert("prompts".into(), json!({"listChanged": true}));
        }
        if registry.completion.is_some() || offered.completions {
            caps.insert("completions".into(), json!({}));
        }
        caps.insert("logging".into(), json!({}));
        let mut extensions = Map::new();
        if offered.tasks {
            extensions.insert(crate::protocol::tasks::TASKS_EXTENSION.into(), json!({}));
        }
        if offered.skills {
            // Settings inline under the identifier (SEP-2133).
            extensions.insert(
                crate::protocol::skills::SKILLS_EXTENSION.into(),
                json!({"directoryRead": true}),
            );
        }
        if !extensions.is_empty() {
            caps.insert("extensions".into(), Value::Object(extensions));
        }
        Value::Object(caps)
    }

    /// The `server/discover` result: versions, capabilities, instructions.
    pub(in crate::server) fn discover(&self) -> Map<String, Value> {
        let options = &self.shared.options;
        let mut result = Map::new();
        result.insert("supportedVersions".into(), json!(MODERN_PROTOCOL_VERSIONS));
        result.insert("capabilities".into(), self.capabilities());
        if let Some(instructions) = &options.instructions {
            result.insert("instructions".into(), Value::from(instructions.clone()));
        }
        insert_cache_hint(&mut result, options.caching.discover);
        result
    }
}
