//! The `*/list` requests (tools, resources, resource templates, prompts):
//! pages of the registry's listings in registration order, with sealed
//! cursors and caching hints.

use serde_json::{Map, Value};

use super::insert_cache_hint;
use crate::McpError;
use crate::protocol::methods::{
    PROMPTS_LIST, RESOURCES_LIST, RESOURCES_TEMPLATES_LIST, TOOLS_LIST,
};
use crate::server::registry::ListKind;
use crate::server::{RequestMeta, Server};

impl Server {
    /// One page of a `*/list` result, from the sealed cursor in `params`.
    pub(in crate::server) fn list(
        &self,
        kind: ListKind,
        params: &Map<String, Value>,
        caller: &RequestMeta,
    ) -> Result<Map<String, Value>, McpError> {
        let options = &self.shared.options;
        let (field, purpose, hint) = match kind {
            ListKind::Tools => ("tools", TOOLS_LIST, options.caching.tools),
            ListKind::Resources => ("resources", RESOURCES_LIST, options.caching.resources),
            ListKind::Templates => (
                "resourceTemplates",
                RESOURCES_TEMPLATES_LIST,
                options.caching.resource_templates,
            ),
            ListKind::Prompts => ("prompts", PROMPTS_LIST, options.caching.prompts),
        };
        let offset = self.read_cursor(purpose, params)?;
        let page_size = options.page_size.max(1);
        let registry = self.registry_read();
        let (items, more) = registry.page(kind, offset, page_size, caller);
        // A list filtered per caller is that caller's: no shared cache may
        // hand it to another.
        let mut hint = hint;
        if registry.visibility.is_some() {
            hint.scope = crate::protocol::CacheScope::Private;
        }
        drop(registry);
        let next = offset + items.len();
        let mut result = Map::new();
        result.insert(field.into(), Value::Array(items));
        if more {
            result.insert(
                "nextCursor".into(),
                Value::from(self.make_cursor(purpose, next)),
            );
        }
        insert_cache_hint(&mut result, hint);
        Ok(result)
    }

    /// Cursors are sealed offsets bound to the list they page through, so a
    /// client cannot forge one or reuse one across lists.
    pub(super) fn make_cursor(&self, list: &str, offset: usize) -> String {
        self.shared
            .options
            .seal_key
            .seal(&format!("cursor:{list}"), offset.to_string().as_bytes())
    }

    pub(super) fn read_cursor(
        &self,
        list: &str,
        params: &Map<String, Value>,
    ) -> Result<usize, McpError> {
        let cursor = match params.get("cursor") {
            None | Some(Value::Null) => return Ok(0),
            Some(Value::String(c)) => c,
            Some(_) => return Err(McpError::invalid_params("cursor must be a string")),
        };
        self.shared
            .options
            .seal_key
            .open(&format!("cursor:{list}"), cursor)
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .and_then(|s| s.parse::<usize>().ok())
            .ok_or_else(|| McpError::invalid_params("Invalid cursor"))
    }
}
