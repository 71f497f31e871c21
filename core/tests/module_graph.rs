//! The import graph between core's top-level modules (spec of the layering
//! in docs/ARCHITECTURE.md): it has no circles, and the layers point one
//! way: transports and the legacy era depend on the server, never the
//! reverse, and `protocol/` depends on nothing but the crate's error type.
//!
//! The graph is read from the source: every `crate::…` and `super::…` path
//! outside comments, resolved to the top-level module it names. Doc links
//! live in comments, so they do not count.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crate root: `lib.rs`, the error types it re-exports and the private
/// `error` module defining them. Every module may use the root (it holds
/// no protocol rules; `error.rs` reads only the leaf `protocol::codes`), so
/// it is not a node of the graph.
const ROOT: &[&str] = &["self", "Error", "McpError", "error"];

/// Module path of a source file relative to `src/`: `server/mod.rs` is
/// `["server"]`, `server/dispatch.rs` is `["server", "dispatch"]`.
fn module_path(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let file = parts.pop().unwrap_or_default();
    let stem = file.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_owned());
    }
    parts
}

/// The source without `//` comments, string literals (raw ones too) and
/// char literals: they could hold anything that looks like a path or a
/// brace.
fn code_only(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut rest = source;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            rest = &rest[end..];
        } else if let Some(raw) = rest.strip_prefix("r#\"") {
            let end = raw.find("\"#").map_or(raw.len(), |e| e + 2);
            out.push_str("\"\"");
            rest = &raw[end..];
        } else if let Some(string) = rest.strip_prefix('"') {
            let mut escaped = false;
            let mut end = string.len();
            for (at, c) in string.char_indices() {
                match (escaped, c) {
                    (false, '\\') => escaped = true,
                    (false, '"') => {
                        end = at + 1;
                        break;
                    }
                    _ => escaped = false,
                }
            }
            out.push_str("\"\"");
            rest = &string[end..];
        } else if let Some(literal) = rest.strip_prefix('\'') {
            // '\n', '\'' or 'x'; anything else is a lifetime
            let mut inner = literal.chars();
            let len = match (inner.next(), inner.next()) {
                (Some('\\'), _) => literal.get(2..).and_then(|l| l.find('\'')).map(|e| e + 4),
                (Some(ch), Some('\'')) => Some(ch.len_utf8() + 2),
                _ => None,
            };
            match len {
                Some(len) => {
                    out.push_str("' '");
                    rest = &rest[len..];
                }
                None => {
                    out.push(c);
                    rest = literal;
                }
            }
        } else {
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The first path segment of each item of a `{…}` group starting at `at`
/// (just after the `{`).
fn group_heads(code: &str, at: usize) -> Vec<String> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut expecting_head = true;
    let mut current = String::new();
    for c in code[at..].chars() {
        if expecting_head && is_ident(c) {
            current.push(c);
            continue;
        }
        if !current.is_empty() {
            heads.push(std::mem::take(&mut current));
            expecting_head = false;
        }
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => expecting_head = true,
            _ => {}
        }
    }
    heads
}

/// The top-level modules a file's paths reach, other than its own. Inline
/// modules (`mod tests { use super::*; }`) are followed, so `super` there
/// means the file's module.
fn dependencies(file_module: &[String], code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut module = file_module.to_vec();
    // (depth its body opened at) of each inline module we are inside
    let mut inline: Vec<usize> = Vec::new();
    let mut pending_mod: Option<String> = None;
    let mut depth = 0;
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let boundary = i == 0 || !code[..i].ends_with(is_ident);
        let c = rest.chars().next().unwrap_or(' ');
        if c == '{' {
            depth += 1;
            if let Some(name) = pending_mod.take() {
                module.push(name);
                inline.push(depth);
            }
        } else if c == '}' {
            if inline.last() == Some(&depth) {
                inline.pop();
                module.pop();
            }
            depth -= 1;
        } else if c == ';' {
            pending_mod = None; // `mod name;`: a file of its own
        }
        if boundary && let Some(after) = rest.strip_prefix("mod ") {
            let name: String = after
                .trim_start()
                .chars()
                .take_while(|&c| is_ident(c))
                .collect();
            pending_mod = Some(name);
        }
        let (mut base, skip): (Vec<String>, usize) = if boundary && rest.starts_with("crate::") {
            (Vec::new(), "crate::".len())
        } else if boundary && rest.starts_with("super::") {
            let mut base = module.clone();
            let mut skip = 0;
            while code[i + skip..].starts_with("super::") {
                base.pop();
                skip += "super::".len();
            }
            (base, skip)
        } else {
            i += c.len_utf8();
            continue;
        };
        let after = i + skip;
        let heads: Vec<String> = if code[after..].starts_with('{') {
            group_heads(code, after + 1)
        } else {
            vec![code[after..].chars().take_while(|&c| is_ident(c)).collect()]
        };
        for head in heads {
            let top = if base.is_empty() {
                head
            } else {
                base.truncate(1);
                base[0].clone()
            };
            if !top.is_empty() && Some(&top) != file_module.first() && !ROOT.contains(&top.as_str())
            {
                found.insert(top);
            }
        }
        i = after;
    }
    found
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("src/ is readable")
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Top-level module → the top-level modules it imports from.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src/");
        let module = module_path(rel);
        let Some(top) = module.first().cloned() else {
            continue; // lib.rs: the root re-exports everything
        };
        if ROOT.contains(&top.as_str()) {
            continue;
        }
        let source = std::fs::read_to_string(&file).expect("source is UTF-8");
        let deps = dependencies(&module, &code_only(&source));
        graph.entry(top).or_default().extend(deps);
    }
    graph
}

/// A circle through `start`, if there is one.
fn circle_from(
    graph: &BTreeMap<String, BTreeSet<String>>,
    start: &str,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    let node = path.last().cloned().unwrap_or_else(|| start.to_owned());
    for next in graph.get(&node).into_iter().flatten() {
        if next == start {
            let mut circle = path.clone();
            circle.push(next.clone());
            return Some(circle);
        }
        if !path.contains(next) {
            path.push(next.clone());
            if let Some(circle) = circle_from(graph, start, path) {
                return Some(circle);
            }
            path.pop();
        }
    }
    None
}

#[test]
fn layering_core_modules_have_no_import_circles() {
    let graph = graph();
    // `--nocapture` shows the graph
    println!("{graph:#?}");
    for start in graph.keys() {
        let mut path = vec![start.clone()];
        if let Some(circle) = circle_from(&graph, start, &mut path) {
            panic!(
                "import circle: {}\nfull graph: {graph:#?}",
                circle.join(" -> ")
            );
        }
    }
}

#[test]
fn layering_server_depends_on_no_transport_and_protocol_on_nothing() {
    let graph = graph();
    let forbidden: &[(&str, &[&str])] = &[
        (
            "protocol",
            &["server", "client", "transport", "legacy", "rpc"],
        ),
        ("server", &["transport", "legacy", "client"]),
        ("legacy", &["transport", "client"]),
    ];
    for (module, not_allowed) in forbidden {
        let deps = graph.get(*module).cloned().unwrap_or_default();
        for bad in *not_allowed {
            assert!(
                !deps.contains(*bad),
                "{module} imports {bad}; its imports: {deps:?}"
            );
        }
    }
}

#[test]
fn layering_graph_reader_sees_paths_and_groups() {
    let module = vec!["server".to_owned(), "dispatch".to_owned()];
    let code = code_only(
        "use super::context::X;\n\
         use crate::{Error, transport::http::{A, B}};\n\
         // crate::client in a comment\n\
         let s = \"crate::legacy\";\n\
         let r = r#\"\"crate::client\"\"#;\n\
         super::super::legacy::f();\n\
         mod tests { use super::super::context::Y; let c = '{'; }\n\
         fn f<'a>(x: &'a str) { super::super::client::g(); }\n",
    );
    let deps = dependencies(&module, &code);
    let expected: BTreeSet<String> = ["transport", "legacy", "client"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    assert_eq!(deps, expected);
}
