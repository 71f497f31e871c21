//! Matching concrete URIs against RFC 6570 URI templates, to route
//! `resources/read` to the template that produced a URI.
//!
//! Expansion crates exist, but matching (the inverse) is what a server needs,
//! and it is small: the template is compiled into literal segments and
//! expressions, and a URI is matched left to right. Supported operators:
//! simple `{var}`, reserved `{+var}`, fragment `{#var}`, label `{.var}`,
//! path `{/var}`, path-parameter `{;var}`, and query `{?a,b}` / `{&a}`.
//! Values are percent-decoded; `*` explode and `:n` prefix modifiers are
//! accepted and matched like plain variables.

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Literal(String),
    Expr { op: Option<char>, vars: Vec<String> },
}

/// A compiled URI template.
#[derive(Debug, Clone, PartialEq)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
}

impl UriTemplate {
    /// Compiles a template; fails on unbalanced braces or empty expressions.
    pub fn parse(template: &str) -> Result<UriTemplate, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            match rest.find('{') {
                Some(0) => {
                    let end = rest
                        .find('}')
                        .ok_or_else(|| format!("unclosed '{{' in URI template {template:?}"))?;
                    let body = &rest[1..end];
                    let (op, names) = match body.chars().next() {
                        Some(c @ ('+' | '#' | '.' | '/' | ';' | '?' | '&')) => {
                            (Some(c), &body[1..])
                        }
                        _ => (None, body),
                    };
                    let vars: Vec<String> = names
                        .split(',')
                        .map(|v| {
                            v.trim_end_matches('*')
                                .split(':')
                                .next()
                                .unwrap_or("")
                                .to_owned()
                        })
                        .collect();
                    if vars.iter().any(|v| v.is_empty()) {
                        return Err(format!("empty variable in URI template {template:?}"));
                    }
                    parts.push(Part::Expr { op, vars });
                    rest = &rest[end + 1..];
                }
                Some(start) => {
                    parts.push(Part::Literal(rest[..start].to_owned()));
                    rest = &rest[start..];
                }
                None => {
                    if rest.contains('}') {
                        return Err(format!("stray '}}' in URI template {template:?}"));
                    }
                    parts.push(Part::Literal(rest.to_owned()));
                    rest = "";
                }
            }
        }
        Ok(UriTemplate {
            source: template.to_owned(),
            parts,
        })
    }

    /// The template text.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The variable names, in template order (each once).
    ///
    /// ```
    /// # use ferromcp::server::uri_template::UriTemplate;
    /// let t = UriTemplate::parse("users://{id}/posts{?page,size}").unwrap();
    /// assert_eq!(t.variables(), ["id", "page", "size"]);
    /// ```
    pub fn variables(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for part in &self.parts {
            if let Part::Expr { vars, .. } = part {
                for var in vars {
                    if !names.contains(&var.as_str()) {
                        names.push(var);
                    }
                }
            }
        }
        names
    }

    /// Matches a URI, returning the variables (strings) on success.
    pub fn matches(&self, uri: &str) -> Option<Map<String, Value>> {
        let mut vars = Map::new();
        let mut budget = MATCH_BUDGET;
        if match_parts(&self.parts, uri, &mut vars, &mut budget) {
            Some(vars)
        } else {
            None
        }
    }
}

/// Characters a simple (unreserved-only) expansion can produce.
fn stops_simple(c: char) -> bool {
    matches!(c, '/' | '?' | '#' | '&' | '=' | ',' | '.' | ';')
}

/// How many candidate splits one match may try. Backtracking over adjacent
/// expressions is polynomial in the URI's length (to the power of their
/// number), and the URI comes from the client: past this, the URI does not
/// match. Ordinary templates need one try per expression.
const MATCH_BUDGET: usize = 10_000;

fn match_parts(
    parts: &[Part],
    uri: &str,
    vars: &mut Map<String, Value>,
    budget: &mut usize,
) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return uri.is_empty();
    };
    match first {
        Part::Literal(lit) => match uri.strip_prefix(lit.as_str()) {
            Some(remaining) => match_parts(rest, remaining, vars, budget),
            None => false,
        },
        Part::Expr { op, vars: names } => match op {
            Some('?') | Some('&') => match_query(names, *op, rest, uri, vars, budget),
            _ => match_expansion(*op, names, rest, uri, vars, budget),
        },
    }
}

fn match_expansion(
    op: Option<char>,
    names: &[String],
    rest: &[Part],
    uri: &str,
    vars: &mut Map<String, Value>,
    budget: &mut usize,
) -> bool {
    let (prefix, separator) = match op {
        None | Some('+') => ("", ','),
        Some('#') => ("#", ','),
        Some('.') => (".", '.'),
        Some('/') => ("/", '/'),
        Some(';') => (";", ';'),
        _ => ("", ','),
    };
    let Some(body_and_rest) = uri.strip_prefix(prefix) else {
        return false;
    };
    let reserved = matches!(op, Some('+') | Some('#'));
    // Longest candidate the operator allows, then backtrack to let the
    // following parts match (templates are short, so this stays cheap).
    let max_end = body_and_rest
        .char_indices()
        .find(|&(_, c)| {
            if reserved {
                false
            } else if op == Some('/') {
                matches!(c, '?' | '#')
            } else {
                // several variables are joined by the separator, so it may
                // appear inside the expansion; any other delimiter ends it
                stops_simple(c) && !(names.len() > 1 && c == separator)
            }
        })
        .map(|(i, _)| i)
        .unwrap_or(body_and_rest.len());
    for end in (1..=max_end).rev() {
        if !body_and_rest.is_char_boundary(end) {
            continue;
        }
        // Only ends where what follows can start: the end of the URI when
        // nothing follows, an occurrence of the next literal. Checked before
        // the costly part (copying and decoding).
        let after = &body_and_rest[end..];
        match rest.first() {
            None if !after.is_empty() => continue,
            Some(Part::Literal(lit)) if !after.starts_with(lit.as_str()) => continue,
            _ => {}
        }
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let body = &body_and_rest[..end];
        let mut candidate = vars.clone();
        if !assign(names, body, separator, op == Some(';'), &mut candidate) {
            continue;
        }
        if match_parts(rest, after, &mut candidate, budget) {
            *vars = candidate;
            return true;
        }
    }
    false
}

fn assign(
    names: &[String],
    body: &str,
    separator: char,
    named: bool,
    vars: &mut Map<String, Value>,
) -> bool {
    let values: Vec<&str> = if names.len() == 1 && !named {
        vec![body]
    } else {
        body.split(separator).collect()
    };
    if values.len() != names.len() {
        return false;
    }
    for (name, raw) in names.iter().zip(values) {
        let raw = if named {
            match raw.split_once('=') {
                Some((n, v)) if n == name => v,
                None if raw == name => "",
                _ => return false,
            }
        } else {
            raw
        };
        if raw.is_empty() && !named {
            return false;
        }
        vars.insert(name.clone(), Value::String(percent_decode(raw)));
    }
    true
}

fn match_query(
    names: &[String],
    op: Option<char>,
    rest: &[Part],
    uri: &str,
    vars: &mut Map<String, Value>,
    budget: &mut usize,
) -> bool {
    let lead = if op == Some('?') { '?' } else { '&' };
    let Some(after) = uri.strip_prefix(lead) else {
        // every query variable may be undefined
        return match_parts(rest, uri, vars, budget);
    };
    let end = after.find('#').unwrap_or(after.len());
    let mut candidate = vars.clone();
    for pair in after[..end].split('&') {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if names.iter().any(|n| n == k) {
            candidate.insert(k.to_owned(), Value::String(percent_decode(v)));
        }
    }
    if match_parts(rest, &after[end..], &mut candidate, budget) {
        *vars = candidate;
        true
    } else {
        false
    }
}

fn percent_decode(input: &str) -> String {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push(h * 16 + l);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

fn hex(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn m(t: &str, uri: &str) -> Option<Value> {
        UriTemplate::parse(t)
            .unwrap()
            .matches(uri)
            .map(Value::Object)
    }

    #[test]
    fn simple_variables() {
        assert_eq!(
            m("test://template/{id}/data", "test://template/123/data"),
            Some(json!({"id": "123"}))
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template//data"),
            None
        );
        assert_eq!(
            m("test://template/{id}/data", "test://template/1/2/data"),
            None
        );
        assert_eq!(
            m("file:///{name}.txt", "file:///notes.txt"),
            Some(json!({"name": "notes"}))
        );
        assert_eq!(
            m("users://{user}", "users://a%20b"),
            Some(json!({"user": "a b"}))
        );
    }

    #[test]
    fn reserved_and_path_operators() {
        assert_eq!(
            m("file://{+path}", "file:///etc/hosts"),
            Some(json!({"path": "/etc/hosts"}))
        );
        assert_eq!(
            m("repo://x{/owner,name}", "repo://x/octo/cat"),
            Some(json!({"owner": "octo", "name": "cat"}))
        );
        assert_eq!(
            m("doc://a{#frag}", "doc://a#top"),
            Some(json!({"frag": "top"}))
        );
    }

    #[test]
    fn query_variables_are_optional() {
        assert_eq!(
            m("search://q{?term,limit}", "search://q?term=x&limit=5"),
            Some(json!({"term": "x", "limit": "5"}))
        );
        assert_eq!(m("search://q{?term,limit}", "search://q"), Some(json!({})));
    }

    #[test]
    fn literal_templates_and_errors() {
        assert_eq!(m("a://fixed", "a://fixed"), Some(json!({})));
        assert_eq!(m("a://fixed", "a://fixed2"), None);
        assert!(UriTemplate::parse("a://{x").is_err());
        assert!(UriTemplate::parse("a://{}").is_err());
    }

    /// Found by `make fuzz` (uri_template): matching backtracked over every
    /// split of the URI, cloning and decoding at each, so a long URI from a
    /// client against adjacent expressions or an expression before a
    /// literal took polynomial (in the number of expressions) time: this
    /// test did not finish before the fix.
    #[test]
    fn long_uris_that_do_not_match_end_quickly() {
        let long = "a".repeat(4000);
        assert_eq!(m("x://{a}{b}{c}{d}/end", &format!("x://{long}/nope")), None);
        assert_eq!(
            m(
                "file:///{+path}.md",
                &format!("file:///{}x", ".md".repeat(2000))
            ),
            None
        );
        assert_eq!(m("x://{+a}{+b}{+c}z", &format!("x://{long}")), None);
        // what still matches after the fix
        let t = UriTemplate::parse("file:///{+path}.md").unwrap();
        assert_eq!(t.matches("file:///a.md/b.md").unwrap()["path"], "a.md/b");
        let t = UriTemplate::parse("x://{a}{b}/end").unwrap();
        let vars = t.matches("x://abc/end").unwrap();
        assert_eq!(
            (vars["a"].as_str(), vars["b"].as_str()),
            (Some("ab"), Some("c"))
        );
    }
}
