//! Rules about where things live in core, checked on the source (see the
//! layering in docs/ARCHITECTURE.md):
//! - the import graph between top-level modules has no circles, and the
//!   layers point one way: transports depend on the server, the legacy era
//!   and the client, never the reverse; `protocol/` depends on no higher
//!   layer;
//!   `net/` (sockets, TLS, pools, fetches, SSE) knows no role, and the
//!   token verifier reaches the network through it, not through the client;
//! - protocol facts are named once: outside `protocol/` (and unit tests),
//!   no string literal is a method name from the method table.
//!
//! The source is read as text: `crate::…`/`super::…` paths and string
//! literals outside comments, with inline modules (`mod tests { … }`)
//! followed. Doc links live in comments, so they do not count.

use ferromcp::protocol::Method;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The crate root: `lib.rs`, the items it defines or re-exports
/// (`crate::Error`, `crate::BoxFuture`: capitalised, unlike modules) and the
/// private `error` module defining the error types. Every module may use the
/// root (it holds no protocol rules; `error.rs` reads only the leaf
/// `protocol::codes`), so it is not a node of the graph.
const ROOT: &[&str] = &["self", "error"];

fn is_root(name: &str) -> bool {
    ROOT.contains(&name) || name.starts_with(|c: char| c.is_ascii_uppercase())
}

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

/// A source file with comments dropped and every string literal (raw ones
/// too) replaced by `""`, and char literals by `' '`: they could hold
/// anything that looks like a path or a brace. The literals are kept with
/// the offset of their `""` in the code.
struct Lexed {
    code: String,
    strings: Vec<(usize, String)>,
}

fn lex(source: &str) -> Lexed {
    let mut code = String::with_capacity(source.len());
    let mut strings = Vec::new();
    let mut rest = source;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            rest = &rest[end..];
        } else if let Some(raw) = rest.strip_prefix("r#\"") {
            let end = raw.find("\"#").unwrap_or(raw.len());
            strings.push((code.len(), raw[..end].to_owned()));
            code.push_str("\"\"");
            rest = &raw[(end + 2).min(raw.len())..];
        } else if let Some(string) = rest.strip_prefix('"') {
            let mut escaped = false;
            let mut end = string.len();
            let mut text = String::new();
            for (at, c) in string.char_indices() {
                match (escaped, c) {
                    (false, '\\') => escaped = true,
                    (false, '"') => {
                        end = at;
                        break;
                    }
                    _ => {
                        escaped = false;
                        text.push(c);
                    }
                }
            }
            strings.push((code.len(), text));
            code.push_str("\"\"");
            rest = &string[(end + 1).min(string.len())..];
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
                    code.push_str("' '");
                    rest = &rest[len..];
                }
                None => {
                    code.push(c);
                    rest = literal;
                }
            }
        } else {
            code.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    Lexed { code, strings }
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

/// What one file shows.
#[derive(Default)]
struct Scan {
    /// The top-level modules its paths reach, other than its own.
    deps: BTreeSet<String>,
    /// Its string literals, each with the module it sits in.
    literals: Vec<(Vec<String>, String)>,
}

/// Reads one file. Inline modules (`mod tests { use super::*; }`) are
/// followed, so `super` there means the file's module.
fn scan(file_module: &[String], lexed: &Lexed) -> Scan {
    let code = lexed.code.as_str();
    let mut strings = lexed.strings.iter().peekable();
    let mut found = Scan::default();
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
        if let Some((_, text)) = strings.next_if(|(at, _)| *at == i) {
            found.literals.push((module.clone(), text.clone()));
            i += "\"\"".len();
            continue;
        }
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
            if !top.is_empty() && Some(&top) != file_module.first() && !is_root(&top) {
                found.deps.insert(top);
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

/// Every file of `src/` but the crate root's, with its module path.
fn scan_sources() -> Vec<(Vec<String>, Scan)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut scans = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&src).expect("under src/");
        let module = module_path(rel);
        match module.first() {
            None => continue, // lib.rs: the root re-exports everything
            Some(top) if is_root(top) => continue,
            Some(_) => {}
        }
        let source = std::fs::read_to_string(&file).expect("source is UTF-8");
        let found = scan(&module, &lex(&source));
        scans.push((module, found));
    }
    scans
}

/// Top-level module → the top-level modules it imports from.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, found) in scan_sources() {
        graph
            .entry(module[0].clone())
            .or_default()
            .extend(found.deps);
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
fn layering_each_layer_imports_only_what_is_below_it() {
    let graph = graph();
    let forbidden: &[(&str, &[&str])] = &[
        (
            "protocol",
            &["server", "client", "transport", "legacy", "rpc"],
        ),
        ("rpc", &["server", "client", "transport", "legacy"]),
        (
            "net",
            &["server", "client", "transport", "legacy", "verifier"],
        ),
        ("verifier", &["client", "transport", "legacy"]),
        ("server", &["transport", "legacy", "client", "gateway"]),
        ("legacy", &["transport", "client", "gateway"]),
        ("client", &["server", "legacy", "transport", "gateway"]),
        // The gateway composes a server of clients; the roles and their
        // carriers know nothing of it.
        ("transport", &["gateway"]),
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
fn protocol_facts_no_method_name_literals_outside_protocol() {
    let mut found = Vec::new();
    for (module, scan) in scan_sources() {
        if module[0] == "protocol" {
            continue;
        }
        for (at, literal) in scan.literals {
            // unit tests may spell out the wire
            if at.iter().any(|m| m == "tests") {
                continue;
            }
            if Method::from_name(&literal).is_some() {
                found.push(format!("{}: {literal:?}", at.join("::")));
            }
        }
    }
    assert!(
        found.is_empty(),
        "method names belong in protocol/methods.rs; use its constants or Method:\n{}",
        found.join("\n")
    );
}

#[test]
fn reader_sees_paths_groups_and_literals() {
    let module = vec!["server".to_owned(), "dispatch".to_owned()];
    let lexed = lex("use super::context::X;\n\
         use crate::{Error, transport::http::{A, B}};\n\
         // crate::client in a comment\n\
         let s = \"crate::legacy\";\n\
         let r = r#\"\"crate::client\"\"#;\n\
         super::super::legacy::f();\n\
         mod tests { use super::super::context::Y; let c = '{'; let m = \"tools/call\"; }\n\
         fn f<'a>(x: &'a str) { super::super::client::g(\"ping\"); }\n");
    let found = scan(&module, &lexed);
    let expected: BTreeSet<String> = ["transport", "legacy", "client"]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
    assert_eq!(found.deps, expected);
    let literals: Vec<(String, &str)> = found
        .literals
        .iter()
        .map(|(m, l)| (m.join("::"), l.as_str()))
        .collect();
    assert_eq!(
        literals,
        [
            ("server::dispatch".to_owned(), "crate::legacy"),
            ("server::dispatch".to_owned(), "\"crate::client\""),
            ("server::dispatch::tests".to_owned(), "tools/call"),
            ("server::dispatch".to_owned(), "ping"),
        ]
    );
}
