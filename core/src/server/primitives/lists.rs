//! The `*/list` requests (tools, resources, resource templates, prompts):
//! pages of the registry's listings in registration order, with sealed
//! cursors and caching hints.

use serde_json::{Map, Value};
use std::collections::HashSet;

use super::insert_cache_hint;
use crate::McpError;
use crate::protocol::methods::{
    PROMPTS_LIST, RESOURCES_LIST, RESOURCES_TEMPLATES_LIST, TOOLS_LIST,
};
use crate::server::registry::ListKind;
use crate::server::visibility::judge;
use crate::server::{RequestMeta, Server};

impl Server {
    /// One page of a `*/list` result, from the sealed cursor in `params`.
    pub(in crate::server) async fn list(
        &self,
        kind: ListKind,
        params: &Map<String, Value>,
        caller: &RequestMeta,
    ) -> Result<Map<String, Value>, McpError> {
        let options = &self.shared.options;
        let (field, purpose, mut hint) = match kind {
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
        let (items, more) = match self.visibility_rule() {
            None => self.registry_read().page(kind, offset, page_size, None),
            Some(rule) => {
                // Judged outside the registry's lock, all at once.
                let items = self.registry_read().items(kind);
                let verdicts = judge(rule.as_ref(), caller, items.clone()).await;
                let shown: HashSet<String> = items
                    .into_iter()
                    .zip(verdicts)
                    .filter(|(_, shown)| *shown)
                    .map(|(item, _)| item.key().to_owned())
                    .collect();
                // A list filtered per caller is that caller's: no shared
                // cache may hand it to another.
                hint.scope = crate::protocol::CacheScope::Private;
                self.registry_read()
                    .page(kind, offset, page_size, Some(&shown))
            }
        };
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
