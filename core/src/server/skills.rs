//! Skills a server publishes (SEP-2640): each skill's files become
//! `skill://<skill-path>/<file>` resources (read with `resources/read`), and
//! its entry (`SKILL.md` URI, frontmatter, every file with its digest and
//! size) is what `skills/list` and `skills/get` answer. Skills come from
//! code ([`Server::add_skill`]) or from a directory ([`Server::add_skills_dir`]);
//! their bytes are read once, at registration.

use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use super::Server;
use super::handler::{ResourceOutput, ResourceRequest};
use super::registry::{Entry, ListKind, ResourceEntry, SkillEntry};
use crate::Error;
use crate::protocol::Resource;
use crate::protocol::skills::{
    MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, SKILL_MD, digest, frontmatter, is_valid_skill_name,
    skill_uri,
};

/// One file of a skill: its path inside the skill (`/`-separated, e.g.
/// `references/FORMS.md`) and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFile {
    /// The path relative to the skill's root.
    pub path: String,
    /// The raw content.
    pub content: Vec<u8>,
}

impl SkillFile {
    /// A file from its path and content.
    pub fn new(path: impl Into<String>, content: impl Into<Vec<u8>>) -> Self {
        SkillFile {
            path: path.into(),
            content: content.into(),
        }
    }
}

fn invalid(why: String) -> Error {
    Error::InvalidDefinition(why)
}

/// Checks a `/`-separated relative path: no empty, `.` or `..` segments.
fn check_relative(path: &str, what: &str) -> Result<(), Error> {
    if path.is_empty()
        || path
            .split('/')
            .any(|segment| segment.is_empty() || segment == "." || segment == "..")
    {
        return Err(invalid(format!(
            "{what} {path:?} must be a relative path without empty, \".\" or \"..\" segments"
        )));
    }
    Ok(())
}

/// The `mimeType` of a skill file, by its extension and content.
fn mime_type(path: &str, content: &[u8]) -> &'static str {
    let extension = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ if std::str::from_utf8(content).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

impl Server {
    /// Publishes a skill (SEP-2640) at `skill_path` (`/`-separated; its last
    /// segment is the skill's name, e.g. `acme/billing/refunds`) from its
    /// files, which must include `SKILL.md` with YAML frontmatter naming it.
    /// Every file becomes a `skill://` resource; the server declares the
    /// skills extension. Replaces a skill at the same path.
    ///
    /// Refused with [`Error::InvalidDefinition`] naming the problem: a bad
    /// path or name, no `SKILL.md`, frontmatter without `name` and
    /// `description` or naming another skill, more than 512 files or 16 MiB
    /// (the limits every host accepts).
    ///
    /// ```
    /// use ferromcp::server::{Server, SkillFile};
    /// let server = Server::new("demo", "1.0");
    /// server.add_skill("git-workflow", vec![
    ///     SkillFile::new("SKILL.md", "---\nname: git-workflow\ndescription: Our Git conventions\n---\n# Branches\n"),
    ///     SkillFile::new("references/commits.md", "Write the why."),
    /// ]).unwrap();
    /// ```
    pub fn add_skill(&self, skill_path: &str, files: Vec<SkillFile>) -> Result<(), Error> {
        check_relative(skill_path, "skill path")?;
        let name = skill_path.rsplit('/').next().unwrap_or(skill_path);
        if !is_valid_skill_name(name) {
            return Err(invalid(format!(
                "skill name {name:?} (the last segment of {skill_path:?}) must be 1-64 lowercase letters, digits and single hyphens"
            )));
        }
        if files.len() > MAX_FILES_PER_SKILL {
            return Err(invalid(format!(
                "skill {skill_path:?} has {} files; hosts only have to accept {MAX_FILES_PER_SKILL}",
                files.len()
            )));
        }
        let total: u64 = files.iter().map(|f| f.content.len() as u64).sum();
        if total > MAX_BYTES_PER_SKILL {
            return Err(invalid(format!(
                "skill {skill_path:?} has {total} bytes; hosts only have to accept {MAX_BYTES_PER_SKILL}"
            )));
        }
        let mut paths = BTreeSet::new();
        for file in &files {
            check_relative(&file.path, "skill file")?;
            if !paths.insert(file.path.clone()) {
                return Err(invalid(format!(
                    "skill {skill_path:?} lists {:?} twice",
                    file.path
                )));
            }
        }
        let skill_md = files
            .iter()
            .find(|f| f.path == SKILL_MD)
            .ok_or_else(|| invalid(format!("skill {skill_path:?} has no {SKILL_MD}")))?;
        let text = std::str::from_utf8(&skill_md.content)
            .map_err(|_| invalid(format!("{skill_path}/{SKILL_MD} is not UTF-8")))?;
        let frontmatter =
            frontmatter(text).map_err(|why| invalid(format!("{skill_path}/{SKILL_MD}: {why}")))?;
        if frontmatter.get("name").and_then(Value::as_str) != Some(name) {
            return Err(invalid(format!(
                "{skill_path}/{SKILL_MD} names the skill {}, but its path ends in {name:?}",
                frontmatter["name"]
            )));
        }
        let description = frontmatter
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();

        // SKILL.md first, then the others in path order.
        let mut ordered: Vec<SkillFile> = files;
        ordered.sort_by(|a, b| (a.path != SKILL_MD, &a.path).cmp(&(b.path != SKILL_MD, &b.path)));
        let mut manifest = Vec::with_capacity(ordered.len());
        let mut entries = Vec::with_capacity(ordered.len());
        for file in ordered {
            let uri = skill_uri(skill_path, &file.path);
            let mime = mime_type(&file.path, &file.content);
            manifest.push(json!({
                "uri": uri,
                "digest": digest(&file.content),
                "size": file.content.len(),
            }));
            let mut resource = Resource::new(
                uri.clone(),
                if file.path == SKILL_MD {
                    name.to_owned()
                } else {
                    file.path
                        .rsplit('/')
                        .next()
                        .unwrap_or(&file.path)
                        .to_owned()
                },
            );
            if file.path == SKILL_MD {
                resource.description = Some(description.clone());
            }
            resource.mime_type = Some(mime.to_owned());
            resource.size = Some(file.content.len() as u64);
            let content: Arc<[u8]> = file.content.into();
            let handler = move |_ctx, _request: ResourceRequest| {
                let content = content.clone();
                async move {
                    Ok(match std::str::from_utf8(&content) {
                        Ok(text) => ResourceOutput::Text(text.to_owned()),
                        Err(_) => ResourceOutput::Blob(content.to_vec()),
                    })
                }
            };
            entries.push(ResourceEntry::new(resource, Arc::new(handler))?);
        }
        let uri = skill_uri(skill_path, SKILL_MD);
        let listing = json!({
            "uri": uri,
            "frontmatter": Value::Object(frontmatter),
            "resources": manifest,
        });
        let skill = SkillEntry {
            root: format!("{}{skill_path}", crate::protocol::skills::SKILL_SCHEME),
            listing,
            files: paths,
        };
        self.install_skill(uri, skill, entries);
        Ok(())
    }

    /// Puts a skill's entry and its files' resources in the registry,
    /// replacing the skill at the same `SKILL.md` URI (and the files it no
    /// longer has), and announces the change once.
    pub(crate) fn install_skill(
        &self,
        uri: String,
        skill: SkillEntry,
        entries: Vec<ResourceEntry>,
    ) {
        let event = {
            let mut registry = self.registry_write();
            let mut event = None;
            if let Some(old) = registry.skills.get(&uri).cloned() {
                for gone in old.files.difference(&skill.files) {
                    event = event
                        .or(registry.remove(ListKind::Resources, &format!("{}/{gone}", old.root)));
                }
            }
            for entry in entries {
                event = Some(registry.insert(Entry::Resource(Arc::new(entry))));
            }
            registry.offered.skills = true;
            registry.skills.insert(uri, Arc::new(skill));
            event
        };
        if let Some(event) = event {
            self.publish(event);
        }
    }

    /// Withdraws the skill whose `SKILL.md` is at `uri` (as `skills/list`
    /// names it) and its files; returns whether it was published.
    ///
    /// ```
    /// use ferromcp::server::{Server, SkillFile};
    /// let server = Server::new("demo", "1.0");
    /// server.add_skill("notes", vec![SkillFile::new("SKILL.md", "---\nname: notes\ndescription: How we take notes\n---\n")]).unwrap();
    /// assert!(server.remove_skill("skill://notes/SKILL.md"));
    /// assert!(!server.remove_skill("skill://notes/SKILL.md"));
    /// ```
    pub fn remove_skill(&self, uri: &str) -> bool {
        let event = {
            let mut registry = self.registry_write();
            let Some(old) = registry.skills.shift_remove(uri) else {
                return false;
            };
            let mut event = None;
            for file in &old.files {
                event =
                    event.or(registry.remove(ListKind::Resources, &format!("{}/{file}", old.root)));
            }
            event
        };
        if let Some(event) = event {
            self.publish(event);
        }
        true
    }

    /// Publishes every skill under `dir`: each directory holding a
    /// `SKILL.md` is a skill whose path is its path below `dir` (so
    /// `dir/acme/refunds/SKILL.md` is `skill://acme/refunds/SKILL.md`), with
    /// every file beneath it, nested skills' files included (SEP-2640:
    /// nested content is supporting content). Hidden files and directories
    /// (a name starting with `.`) and symbolic links are skipped. Returns
    /// the `SKILL.md` URIs published, in path order.
    ///
    /// ```
    /// # let dir = std::env::temp_dir().join(format!("ferromcp-doc-skills-{}", std::process::id()));
    /// # std::fs::create_dir_all(dir.join("pdf")).unwrap();
    /// # std::fs::write(dir.join("pdf/SKILL.md"), "---\nname: pdf\ndescription: PDFs\n---\n").unwrap();
    /// let server = ferromcp::server::Server::new("demo", "1.0");
    /// let published = server.add_skills_dir(&dir).unwrap();
    /// assert_eq!(published, ["skill://pdf/SKILL.md"]);
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn add_skills_dir(&self, dir: impl AsRef<Path>) -> Result<Vec<String>, Error> {
        let dir = dir.as_ref();
        let mut skills = Vec::new();
        find_skills(dir, "", &mut skills)?;
        let mut published = Vec::new();
        for skill_path in skills {
            let root = dir.join(&skill_path);
            let mut files = Vec::new();
            read_files(&root, "", &mut files)?;
            self.add_skill(&skill_path, files)?;
            published.push(skill_uri(&skill_path, SKILL_MD));
        }
        Ok(published)
    }
}

fn io_error(path: &Path, e: std::io::Error) -> Error {
    invalid(format!("cannot read {}: {e}", path.display()))
}

/// The visible entries of a directory, sorted by name; symbolic links and
/// names starting with `.` are left out.
fn visible_entries(dir: &Path) -> Result<Vec<(String, std::fs::FileType)>, Error> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| io_error(dir, e))? {
        let entry = entry.map_err(|e| io_error(dir, e))?;
        let kind = entry.file_type().map_err(|e| io_error(&entry.path(), e))?;
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if name.starts_with('.') || kind.is_symlink() {
            continue;
        }
        entries.push((name, kind));
    }
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(entries)
}

/// Every directory under `dir` holding a `SKILL.md`, as `/`-joined paths.
fn find_skills(dir: &Path, prefix: &str, out: &mut Vec<String>) -> Result<(), Error> {
    for (name, kind) in visible_entries(dir)? {
        if kind.is_dir() {
            let path = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            let sub = dir.join(&name);
            if sub.join(SKILL_MD).is_file() {
                out.push(path.clone());
            }
            find_skills(&sub, &path, out)?;
        }
    }
    Ok(())
}

/// Every file under `dir`, with its path relative to the skill's root.
fn read_files(dir: &Path, prefix: &str, out: &mut Vec<SkillFile>) -> Result<(), Error> {
    for (name, kind) in visible_entries(dir)? {
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        let full = dir.join(&name);
        if kind.is_dir() {
            read_files(&full, &path, out)?;
        } else if kind.is_file() {
            if out.len() >= MAX_FILES_PER_SKILL {
                return Err(invalid(format!(
                    "{} holds more than {MAX_FILES_PER_SKILL} files",
                    dir.display()
                )));
            }
            let content = std::fs::read(&full).map_err(|e| io_error(&full, e))?;
            out.push(SkillFile::new(path, content));
        }
    }
    Ok(())
}

/// The direct children of a directory of a skill (`rel`: `""` for the
/// root): files as `(name, true)`, subdirectories as `(name, false)`.
pub(crate) fn children(files: &BTreeSet<String>, rel: &str) -> Option<Vec<(String, bool)>> {
    let prefix = if rel.is_empty() {
        String::new()
    } else {
        format!("{rel}/")
    };
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut any = false;
    for file in files.iter().filter(|f| f.starts_with(&prefix)) {
        any = true;
        let rest = &file[prefix.len()..];
        let child = match rest.split_once('/') {
            Some((dir, _)) => (dir.to_owned(), false),
            None => (rest.to_owned(), true),
        };
        if !out.contains(&child) {
            out.push(child);
        }
    }
    // A directory exists when a file lies beneath it (the root always does).
    any.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Children as names, directories with a trailing `/`.
    fn names(children: &[(String, bool)]) -> Vec<String> {
        children
            .iter()
            .map(|(n, file)| if *file { n.clone() } else { format!("{n}/") })
            .collect()
    }

    #[test]
    fn children_are_direct_and_directories_exist_only_with_files() {
        let files: BTreeSet<String> = ["SKILL.md", "templates/a.md", "templates/eu/b.md", "x.py"]
            .into_iter()
            .map(str::to_owned)
            .collect();
        assert_eq!(
            names(&children(&files, "").unwrap()),
            ["SKILL.md", "templates/", "x.py"]
        );
        assert_eq!(
            names(&children(&files, "templates").unwrap()),
            ["a.md", "eu/"]
        );
        assert!(children(&files, "nope").is_none());
        assert!(children(&files, "SKILL.md").is_none());
    }
}
