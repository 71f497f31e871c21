//! Skills from a server (SEP-2640): listing them reads no file (hosts
//! retrieve a skill's files only when it is loaded), loading one reads its
//! `SKILL.md` and checks it against the entry held (digest, size and
//! frontmatter), and a loaded skill's other files are read only when asked
//! for, each checked, and only if the entry lists them. Content that does not
//! match is an error, never returned.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{CacheMode, CallOptions, Client, Pages};
use crate::Error;
use crate::protocol::skills::{SKILL_MD, digest, frontmatter};
use crate::protocol::{McpError, methods};

/// One file of a skill as its entry lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillResource {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits of the raw bytes.
    pub digest: String,
    /// The raw bytes' length.
    pub size: u64,
}

/// A skill's files: all of them with digests, or `"dynamic"` (generated
/// content, no integrity offered).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SkillResources {
    /// Every file, `SKILL.md` included.
    Files(Vec<SkillResource>),
    /// The literal `"dynamic"`.
    Dynamic(String),
}

/// A skill as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skill {
    /// The `SKILL.md` URI: the skill's identity on this server.
    pub uri: String,
    /// The `SKILL.md` frontmatter, as written (`name`, `description`...).
    pub frontmatter: Map<String, Value>,
    /// Its files.
    pub resources: SkillResources,
}

impl Skill {
    /// The skill's name (`frontmatter.name`).
    pub fn name(&self) -> &str {
        self.frontmatter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// The listed file at `uri`, if the entry lists files.
    fn listed(&self, uri: &str) -> Option<&SkillResource> {
        match &self.resources {
            SkillResources::Files(files) => files.iter().find(|f| f.uri == uri),
            SkillResources::Dynamic(_) => None,
        }
    }

    /// The skill's root (the `SKILL.md` URI without `/SKILL.md`).
    fn root(&self) -> &str {
        self.uri
            .strip_suffix(SKILL_MD)
            .and_then(|r| r.strip_suffix('/'))
            .unwrap_or(&self.uri)
    }
}

/// A `skills/list` page, as [`Client::call`] decodes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// The skills of this page.
    pub skills: Vec<Skill>,
    /// The cursor of the next page, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// A `skills/get` answer, as [`Client::call`] decodes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GetSkillResult {
    /// The skill's entry.
    pub skill: Skill,
}

/// A skill loaded from a server: its entry and its `SKILL.md`, checked.
#[derive(Clone)]
pub struct LoadedSkill {
    client: Client,
    /// The entry the skill was loaded from (and is read under).
    pub skill: Skill,
    /// The `SKILL.md` text, frontmatter included.
    pub skill_md: String,
}

impl std::fmt::Debug for LoadedSkill {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedSkill")
            .field("skill", &self.skill)
            .finish_non_exhaustive()
    }
}

fn mismatch(uri: &str, why: String) -> Error {
    Error::Protocol(format!(
        "skill file {uri} does not match its entry ({why}): refusing it; refresh the entry with skills/get"
    ))
}

/// Checks bytes read against the entry's digest and size.
fn verify(listed: &SkillResource, bytes: &[u8]) -> Result<(), Error> {
    if bytes.len() as u64 != listed.size {
        return Err(mismatch(
            &listed.uri,
            format!("{} bytes, the entry says {}", bytes.len(), listed.size),
        ));
    }
    let actual = digest(bytes);
    if actual != listed.digest {
        return Err(mismatch(
            &listed.uri,
            format!("digest {actual}, the entry says {}", listed.digest),
        ));
    }
    Ok(())
}

impl Client {
    /// Every skill the server lists (`skills/list`, all pages). Reads no
    /// skill file.
    pub async fn list_skills(&self) -> Result<Vec<Skill>, Error> {
        let mut pages = self.skill_pages();
        let mut skills = Vec::new();
        while let Some(page) = pages.next_page().await {
            skills.extend(page?);
        }
        Ok(skills)
    }

    /// The skills, a page at a time (`skills/list`), as the other lists.
    pub fn skill_pages(&self) -> Pages<'_, Skill> {
        Pages::new(self, methods::SKILLS_LIST, "skills", CacheMode::Use)
    }

    /// Loads the skill whose `SKILL.md` is at `uri`: its entry from
    /// `skills/get`, then [`Client::load_skill`].
    pub async fn load_skill_at(&self, uri: &str) -> Result<LoadedSkill, Error> {
        let skill = self.get_skill(uri).await?;
        self.load_skill(&skill).await
    }

    /// Loads a skill a host names as JSON: its `SKILL.md` URI (a string:
    /// [`Client::load_skill_at`]) or its entry (an object as `skills/list`
    /// gives it: [`Client::load_skill`], no `skills/get` round trip). The
    /// one way every binding's `load_skill` reads its argument.
    pub async fn load_skill_value(&self, skill: Value) -> Result<LoadedSkill, Error> {
        match skill {
            Value::String(uri) => self.load_skill_at(&uri).await,
            entry => {
                let skill: Skill = serde_json::from_value(entry).map_err(|e| {
                    Error::Mcp(McpError::invalid_params(format!(
                        "a skill is its SKILL.md URI or its skills/list entry: {e}"
                    )))
                })?;
                self.load_skill(&skill).await
            }
        }
    }

    /// One skill's entry by its `SKILL.md` URI (`skills/get`).
    pub async fn get_skill(&self, uri: &str) -> Result<Skill, Error> {
        let mut params = Map::new();
        params.insert("uri".into(), Value::from(uri));
        let result = self
            .send(methods::SKILLS_GET, params, &CallOptions::default())
            .await?;
        serde_json::from_value(result.get("skill").cloned().unwrap_or(Value::Null))
            .map_err(|e| Error::Protocol(format!("skills/get: {e}")))
    }

    /// Loads a skill: reads its `SKILL.md` and checks it against `skill`
    /// (size and digest when the entry lists files, and the frontmatter
    /// field by field). A mismatch is an error and nothing is returned.
    pub async fn load_skill(&self, skill: &Skill) -> Result<LoadedSkill, Error> {
        let bytes = self.read_skill_bytes(&skill.uri).await?;
        match (&skill.resources, skill.listed(&skill.uri)) {
            (SkillResources::Files(_), Some(listed)) => verify(listed, &bytes)?,
            (SkillResources::Files(_), None) => {
                return Err(mismatch(&skill.uri, "the entry does not list it".into()));
            }
            (SkillResources::Dynamic(_), _) => {}
        }
        let text =
            String::from_utf8(bytes).map_err(|_| mismatch(&skill.uri, "not UTF-8".into()))?;
        let read = frontmatter(&text).map_err(|why| mismatch(&skill.uri, why))?;
        if read != skill.frontmatter {
            return Err(mismatch(
                &skill.uri,
                "its frontmatter differs from the entry's".into(),
            ));
        }
        Ok(LoadedSkill {
            client: self.clone(),
            skill: skill.clone(),
            skill_md: text,
        })
    }

    async fn read_skill_bytes(&self, uri: &str) -> Result<Vec<u8>, Error> {
        // The raw result: decoding it to a typed result only to encode it
        // back would copy every file twice.
        let mut params = Map::new();
        params.insert("uri".into(), Value::from(uri));
        let value = self
            .send(methods::RESOURCES_READ, params, &CallOptions::default())
            .await?;
        let item = value["contents"]
            .as_array()
            .and_then(|c| c.first())
            .ok_or_else(|| {
                Error::Protocol(format!("resources/read of {uri} returned no contents"))
            })?;
        if let Some(text) = item.get("text").and_then(Value::as_str) {
            return Ok(text.as_bytes().to_vec());
        }
        let blob = item.get("blob").and_then(Value::as_str).ok_or_else(|| {
            Error::Protocol(format!("resources/read of {uri}: neither text nor blob"))
        })?;
        use base64::Engine;
        base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|e| Error::Protocol(format!("resources/read of {uri}: bad base64: {e}")))
    }
}

impl LoadedSkill {
    /// Reads a file of the skill by its path inside the skill
    /// (`references/FORMS.md`) or its URI, checked against the entry; a
    /// file the entry does not list is refused without being read.
    pub async fn read(&self, file: &str) -> Result<Vec<u8>, Error> {
        let uri = if file.contains("://") {
            file.to_owned()
        } else {
            format!("{}/{file}", self.skill.root())
        };
        match &self.skill.resources {
            SkillResources::Files(_) => {
                let listed = self
                    .skill
                    .listed(&uri)
                    .ok_or_else(|| mismatch(&uri, "the entry held does not list it".into()))?;
                let bytes = self.client.read_skill_bytes(&uri).await?;
                verify(listed, &bytes)?;
                Ok(bytes)
            }
            SkillResources::Dynamic(_) => self.client.read_skill_bytes(&uri).await,
        }
    }
}
