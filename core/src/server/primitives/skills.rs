//! The skills extension's methods (SEP-2640): `skills/list` (a page of
//! entries, each whole), `skills/get` (one entry by its `SKILL.md` URI) and
//! `resources/directory/read` (the direct children of a skill's directory).
//! Skill files themselves are ordinary resources (`resources/read`).

use serde_json::{Map, Value, json};

use super::insert_cache_hint;
use crate::McpError;
use crate::protocol::methods::{RESOURCES_DIRECTORY_READ, SKILLS_GET, SKILLS_LIST};
use crate::protocol::skills::DIRECTORY_MIME_TYPE;
use crate::server::Server;
use crate::server::skills::children;

/// The three methods of the extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SkillMethod {
    List,
    Get,
    DirectoryRead,
}

fn uri_param<'a>(params: &'a Map<String, Value>, method: &str) -> Result<&'a str, McpError> {
    params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| McpError::invalid_params(format!("{method} requires a string \"uri\"")))
}

impl Server {
    /// Answers `skills/list`, `skills/get` or `resources/directory/read`.
    pub(in crate::server) fn skill_request(
        &self,
        method: SkillMethod,
        params: &Map<String, Value>,
    ) -> Result<Map<String, Value>, McpError> {
        match method {
            SkillMethod::List => self.list_skills(params),
            SkillMethod::Get => self.get_skill(params),
            SkillMethod::DirectoryRead => self.read_directory(params),
        }
    }

    fn list_skills(&self, params: &Map<String, Value>) -> Result<Map<String, Value>, McpError> {
        let offset = self.read_cursor(SKILLS_LIST, params)?;
        let page_size = self.shared.options.page_size.max(1);
        let registry = self.registry_read();
        // An entry is atomic: a page holds whole entries.
        let skills: Vec<Value> = registry
            .skills
            .values()
            .skip(offset)
            .take(page_size)
            .map(|skill| skill.listing.clone())
            .collect();
        let more = offset + skills.len() < registry.skills.len();
        drop(registry);
        let mut result = Map::new();
        let next = offset + skills.len();
        result.insert("skills".into(), Value::Array(skills));
        if more {
            result.insert(
                "nextCursor".into(),
                Value::from(self.make_cursor(SKILLS_LIST, next)),
            );
        }
        insert_cache_hint(&mut result, self.shared.options.caching.resources);
        Ok(result)
    }

    fn get_skill(&self, params: &Map<String, Value>) -> Result<Map<String, Value>, McpError> {
        let uri = uri_param(params, SKILLS_GET)?;
        let skill = self.registry_read().skills.get(uri).cloned();
        let Some(skill) = skill else {
            return Err(
                McpError::invalid_params(format!("No skill is served at {uri}"))
                    .with_data(json!({ "uri": uri })),
            );
        };
        let mut result = Map::new();
        result.insert("skill".into(), skill.listing.clone());
        insert_cache_hint(&mut result, self.shared.options.caching.resource_read);
        Ok(result)
    }

    fn read_directory(&self, params: &Map<String, Value>) -> Result<Map<String, Value>, McpError> {
        let uri = uri_param(params, RESOURCES_DIRECTORY_READ)?;
        let not_a_directory = || {
            McpError::invalid_params(format!("{uri} is not a directory resource"))
                .with_data(json!({ "uri": uri }))
        };
        let registry = self.registry_read();
        // The skill whose root is `uri` or holds it; the longest root wins
        // (a nested skill's root lies inside its enclosing skill's).
        let found = registry
            .skills
            .values()
            .filter_map(|skill| {
                let rel = if uri == skill.root {
                    ""
                } else {
                    uri.strip_prefix(skill.root.as_str())?.strip_prefix('/')?
                };
                Some((skill.root.len(), rel, skill.clone()))
            })
            .max_by_key(|(len, _, _)| *len);
        let Some((_, rel, skill)) = found else {
            return Err(not_a_directory());
        };
        let rel = rel.trim_end_matches('/').to_owned();
        drop(registry);
        let children = children(&skill.files, &rel).ok_or_else(not_a_directory)?;
        let base = if rel.is_empty() {
            skill.root.clone()
        } else {
            format!("{}/{rel}", skill.root)
        };
        let purpose = format!("{RESOURCES_DIRECTORY_READ}:{base}");
        let offset = self.read_cursor(&purpose, params)?;
        let page_size = self.shared.options.page_size.max(1);
        let registry = self.registry_read();
        let page: Vec<Value> = children
            .iter()
            .skip(offset)
            .take(page_size)
            .map(|(name, is_file)| {
                let child = format!("{base}/{name}");
                if *is_file {
                    // The file's resource metadata, as resources/list has it.
                    match registry.resources.get(&child) {
                        Some(entry) => entry.listing.clone(),
                        None => json!({"uri": child, "name": name}),
                    }
                } else {
                    json!({"uri": child, "name": name, "mimeType": DIRECTORY_MIME_TYPE})
                }
            })
            .collect();
        drop(registry);
        let next = offset + page.len();
        let mut result = Map::new();
        result.insert("resources".into(), Value::Array(page));
        if next < children.len() {
            result.insert(
                "nextCursor".into(),
                Value::from(self.make_cursor(&purpose, next)),
            );
        }
        Ok(result)
    }
}
