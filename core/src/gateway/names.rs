//! How a mount renames what it mounts, and back: a tool or prompt `echo`
//! mounted as `alpha` is `alpha_echo`; a resource `file:///a.txt` is
//! `alpha+file:///a.txt` (a URI scheme may hold `+`, so the result is a URI,
//! and taking the prefix off gives the upstream's URI exactly; a scheme
//! may not hold `_`, so `my_files` is `my-files+` in URIs). Skills keep
//! their scheme, which hosts look for: `skill://git/SKILL.md` is
//! `skill://alpha/git/SKILL.md`, the prefix a directory above the skill
//! (whose name, the last segment, stays). An empty prefix renames nothing
//! (a plain proxy).

use crate::protocol::skills::SKILL_SCHEME;

/// A mount's prefix: as names carry it, and as URIs do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prefix {
    name: String,
    scheme: String,
}

/// Why a prefix is refused.
pub(crate) fn check(prefix: &str) -> Result<(), String> {
    let starts_with_letter = prefix
        .chars()
        .next()
        .is_none_or(|c| c.is_ascii_alphabetic());
    if starts_with_letter
        && prefix
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
    {
        Ok(())
    } else {
        Err(format!(
            "invalid mount prefix {prefix:?}: a letter, then letters, digits, '-', '_' and '.' \
             (it becomes part of tool names and URI schemes)"
        ))
    }
}

impl Prefix {
    pub(crate) fn new(prefix: &str) -> Result<Prefix, String> {
        check(prefix)?;
        Ok(Prefix {
            name: prefix.to_owned(),
            scheme: prefix.replace('_', "-"),
        })
    }

    /// The name a downstream client sees for the upstream's `name`.
    pub(crate) fn name(&self, name: &str) -> String {
        if self.name.is_empty() {
            name.to_owned()
        } else {
            format!("{}_{name}", self.name)
        }
    }

    /// The URI (or URI template) a downstream client sees.
    pub(crate) fn uri(&self, uri: &str) -> String {
        if self.scheme.is_empty() {
            uri.to_owned()
        } else if let Some(rest) = uri.strip_prefix(SKILL_SCHEME) {
            format!("{SKILL_SCHEME}{}/{rest}", self.name)
        } else {
            format!("{}+{uri}", self.scheme)
        }
    }

    /// The upstream's URI for a downstream one, if it is one of this
    /// prefix's.
    pub(crate) fn upstream_uri(&self, uri: &str) -> Option<String> {
        if self.scheme.is_empty() {
            return Some(uri.to_owned());
        }
        if let Some(rest) = uri.strip_prefix(SKILL_SCHEME) {
            let rest = rest.strip_prefix(self.name.as_str())?.strip_prefix('/')?;
            return Some(format!("{SKILL_SCHEME}{rest}"));
        }
        uri.strip_prefix(self.scheme.as_str())?
            .strip_prefix('+')
            .map(str::to_owned)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_uris_round_trip() {
        let alpha = Prefix::new("alpha").unwrap();
        assert_eq!(alpha.name("echo"), "alpha_echo");
        assert_eq!(alpha.uri("file:///a.txt"), "alpha+file:///a.txt");
        assert_eq!(
            alpha.upstream_uri("alpha+file:///a.txt").as_deref(),
            Some("file:///a.txt")
        );
        assert_eq!(alpha.upstream_uri("file:///a.txt"), None);
        assert_eq!(
            alpha.uri("skill://acme/git/SKILL.md"),
            "skill://alpha/acme/git/SKILL.md"
        );
        assert_eq!(
            alpha
                .upstream_uri("skill://alpha/acme/git/SKILL.md")
                .as_deref(),
            Some("skill://acme/git/SKILL.md")
        );
        assert_eq!(alpha.upstream_uri("skill://beta/git/SKILL.md"), None);
        assert_eq!(alpha.upstream_uri("skill://alphabet/SKILL.md"), None);
        let none = Prefix::new("").unwrap();
        assert_eq!(none.name("echo"), "echo");
        assert_eq!(none.upstream_uri("file:///a").as_deref(), Some("file:///a"));
    }

    #[test]
    fn a_prefix_cannot_break_names_or_schemes() {
        assert!(Prefix::new("a b").is_err());
        let underscored = Prefix::new("my_files").unwrap();
        assert_eq!(underscored.name("read"), "my_files_read");
        assert_eq!(underscored.uri("file:///a"), "my-files+file:///a");
        assert_eq!(
            underscored.upstream_uri("my-files+file:///a").as_deref(),
            Some("file:///a")
        );
        assert!(Prefix::new("a/b").is_err());
        assert!(Prefix::new("1a").is_err());
        assert!(Prefix::new("team-1.prod").is_ok());
    }
}
