//! The skills extension (SEP-2640, `io.modelcontextprotocol/skills`): wire
//! facts both roles need. Servers publish skills (directories with a
//! `SKILL.md`) as resources and list them with `skills/list`; clients check
//! what they read against the listing's digests, sizes and frontmatter
//! (spec: github.com/modelcontextprotocol/ext-skills,
//! specification/stable/skills.mdx).

use serde_json::{Map, Number, Value};
use sha2::{Digest, Sha256};

/// The extension identifier, declared under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// The URI scheme skills are served under.
pub const SKILL_SCHEME: &str = "skill://";

/// The file every skill has at its root.
pub const SKILL_MD: &str = "SKILL.md";

/// `mimeType` of a directory resource (`resources/directory/read`).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";

/// Files per skill every host must accept (the entry's `resources`).
pub const MAX_FILES_PER_SKILL: usize = 512;

/// Bytes per skill every host must accept (the sum of the files' sizes).
pub const MAX_BYTES_PER_SKILL: u64 = 16 * 1024 * 1024;

/// The digest of a file's raw bytes as an entry carries it:
/// `sha256:` and 64 lowercase hex digits.
///
/// ```
/// assert_eq!(
///     ferromcp::protocol::skills::digest(b""),
///     "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
/// );
/// ```
pub fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash {
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// Whether `name` follows the Agent Skills naming rules: 1-64 characters of
/// lowercase letters, digits and single hyphens, not starting or ending
/// with a hyphen.
pub fn is_valid_skill_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=64).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
        && !name.contains("--")
}

/// The YAML frontmatter at the top of a `SKILL.md`, as the JSON object an
/// entry carries; `name` and `description` must be strings.
///
/// ```
/// use ferromcp::protocol::skills::frontmatter;
/// let fm = frontmatter("---\nname: pdf\ndescription: PDFs\nmetadata:\n  version: 2\n---\n# Body\n").unwrap();
/// assert_eq!(fm["name"], "pdf");
/// assert_eq!(fm["metadata"]["version"], 2);
/// assert!(frontmatter("# no frontmatter").is_err());
/// ```
pub fn frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("SKILL.md must begin with YAML frontmatter (a line \"---\")")?;
    // The closing `---` is a line of its own.
    let mut yaml_end = None;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line
            .trim_end_matches(['\r', '\n'])
            .trim_end_matches([' ', '\t'])
            == "---"
        {
            yaml_end = Some(offset);
            break;
        }
        offset += line.len();
    }
    let yaml = &rest[..yaml_end.ok_or("the SKILL.md frontmatter has no closing \"---\" line")?];
    let docs = yaml_rust2::YamlLoader::load_from_str(yaml)
        .map_err(|e| format!("the SKILL.md frontmatter is not valid YAML: {e}"))?;
    let value = match docs.into_iter().next() {
        Some(doc) => yaml_to_json(doc)?,
        None => Value::Object(Map::new()),
    };
    let Value::Object(map) = value else {
        return Err("the SKILL.md frontmatter must be a YAML mapping".into());
    };
    for field in ["name", "description"] {
        if !map.get(field).is_some_and(Value::is_string) {
            return Err(format!(
                "the SKILL.md frontmatter needs a string \"{field}\""
            ));
        }
    }
    Ok(map)
}

fn yaml_to_json(yaml: yaml_rust2::Yaml) -> Result<Value, String> {
    use yaml_rust2::Yaml;
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::from(i),
        Yaml::Real(text) => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| format!("the number {text} has no JSON form"))?,
        Yaml::String(s) => Value::String(s),
        Yaml::Array(items) => Value::Array(
            items
                .into_iter()
                .map(yaml_to_json)
                .collect::<Result<_, _>>()?,
        ),
        Yaml::Hash(entries) => {
            let mut map = Map::new();
            for (key, value) in entries {
                let key = match key {
                    Yaml::String(s) => s,
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Boolean(b) => b.to_string(),
                    Yaml::Real(r) => r,
                    other => {
                        return Err(format!("a frontmatter key must be a scalar, not {other:?}"));
                    }
                };
                map.insert(key, yaml_to_json(value)?);
            }
            Value::Object(map)
        }
        Yaml::Alias(_) | Yaml::BadValue => {
            return Err(
                "the SKILL.md frontmatter uses an alias or a value YAML cannot read".into(),
            );
        }
    })
}

/// The `skill://` URI of a file of the skill at `skill_path`.
pub fn skill_uri(skill_path: &str, file: &str) -> String {
    format!("{SKILL_SCHEME}{skill_path}/{file}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for good in ["pdf", "pdf-processing", "a1", "x"] {
            assert!(is_valid_skill_name(good), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "PDF", "a_b", &"a".repeat(65)] {
            assert!(!is_valid_skill_name(bad), "{bad}");
        }
    }

    #[test]
    fn frontmatter_is_read_verbatim_and_checked() {
        let fm = frontmatter(
            "\u{feff}---\r\nname: refunds\r\ndescription: \"Refunds: per policy\"\r\nlicense: Apache-2.0\r\nmetadata:\r\n  tags: [a, b]\r\n  ratio: 0.5\r\n---\r\nBody\r\n",
        )
        .unwrap();
        assert_eq!(fm["description"], "Refunds: per policy");
        assert_eq!(fm["license"], "Apache-2.0");
        assert_eq!(fm["metadata"]["tags"], serde_json::json!(["a", "b"]));
        assert_eq!(fm["metadata"]["ratio"], 0.5);
        assert!(
            frontmatter("---\nname: x\n---\n")
                .unwrap_err()
                .contains("description")
        );
        assert!(
            frontmatter("---\nname: x\ndescription: y\n")
                .unwrap_err()
                .contains("closing")
        );
        assert!(
            frontmatter("---\n- a\n---\n")
                .unwrap_err()
                .contains("mapping")
        );
        // A closing line at the very end of the file.
        assert!(frontmatter("---\nname: x\ndescription: y\n---").is_ok());
    }
}
