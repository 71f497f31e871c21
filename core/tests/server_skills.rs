//! The skills extension on the server (SEP-2640, ext-skills
//! specification/stable/skills.mdx), over stdio: skills from code and from a
//! directory, `skills/list` pages, `skills/get`, `resources/directory/read`,
//! the files as resources whose bytes match the entry's digest and size,
//! and the definitions a server refuses.

use ferromcp_testkit as common;

use common::{Stdio, meta, request_with_meta, server_with};
use ferromcp::protocol::skills::digest;
use ferromcp::server::{ServerOptions, SkillFile};
use serde_json::{Value, json};

const SKILLS: &str = "io.modelcontextprotocol/skills";

fn skill_md(name: &str, description: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\nmetadata:\n  version: \"1\"\n---\n# {name}\n"
    )
}

fn server(page_size: usize) -> ferromcp::server::Server {
    let server = server_with(ServerOptions {
        page_size,
        ..ServerOptions::default()
    });
    server
        .add_skill(
            "pdf",
            vec![
                SkillFile::new("SKILL.md", skill_md("pdf", "PDFs")),
                SkillFile::new("templates/a.md", "A"),
                SkillFile::new("templates/eu/b.md", "B"),
                SkillFile::new("logo.bin", vec![0u8, 255, 1]),
            ],
        )
        .unwrap();
    server
        .add_skill(
            "acme/billing/refunds",
            vec![SkillFile::new("SKILL.md", skill_md("refunds", "Refunds"))],
        )
        .unwrap();
    server
}

fn req(id: u64, method: &str, params: Value) -> Value {
    request_with_meta(id, method, params, meta())
}

#[tokio::test]
async fn skills_are_listed_whole_and_their_files_read_as_resources() {
    let mut io = Stdio::start(server(1));
    let discover = io.call(req(1, "server/discover", json!({}))).await;
    assert_eq!(
        discover["result"]["capabilities"]["extensions"][SKILLS],
        json!({"directoryRead": true})
    );
    assert!(discover["result"]["capabilities"]["resources"].is_object());

    // One entry per page (page size 1), each whole.
    let first = io.call(req(2, "skills/list", json!({}))).await["result"].clone();
    let entry = &first["skills"][0];
    assert_eq!(entry["uri"], "skill://pdf/SKILL.md");
    assert_eq!(entry["frontmatter"]["name"], "pdf");
    assert_eq!(entry["frontmatter"]["metadata"]["version"], "1");
    let files: Vec<&str> = entry["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "skill://pdf/SKILL.md",
            "skill://pdf/logo.bin",
            "skill://pdf/templates/a.md",
            "skill://pdf/templates/eu/b.md"
        ]
    );
    assert!(first["ttlMs"].is_number() && first["cacheScope"].is_string());
    let cursor = first["nextCursor"].as_str().unwrap();
    let second = io
        .call(req(3, "skills/list", json!({"cursor": cursor})))
        .await["result"]
        .clone();
    assert_eq!(
        second["skills"][0]["uri"],
        "skill://acme/billing/refunds/SKILL.md"
    );
    assert!(second.get("nextCursor").is_none());

    // Every file's bytes match its digest and size.
    for listed in entry["resources"].as_array().unwrap() {
        let uri = listed["uri"].as_str().unwrap();
        let read = io.call(req(4, "resources/read", json!({"uri": uri}))).await;
        let item = &read["result"]["contents"][0];
        let bytes = match item.get("text") {
            Some(Value::String(text)) => text.as_bytes().to_vec(),
            _ => {
                use base64::Engine;
                base64::engine::general_purpose::STANDARD
                    .decode(item["blob"].as_str().unwrap())
                    .unwrap()
            }
        };
        assert_eq!(digest(&bytes), listed["digest"], "{uri}");
        assert_eq!(bytes.len() as u64, listed["size"], "{uri}");
    }
    let md = io.call(req(5, "resources/list", json!({}))).await;
    assert!(md["result"]["resources"].is_array());

    // skills/get: the same entry; an unknown skill is invalid params.
    let got = io
        .call(req(6, "skills/get", json!({"uri": "skill://pdf/SKILL.md"})))
        .await;
    assert_eq!(got["result"]["skill"], *entry);
    assert!(got["result"].get("nextCursor").is_none());
    let unknown = io
        .call(req(
            7,
            "skills/get",
            json!({"uri": "skill://nope/SKILL.md"}),
        ))
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[tokio::test]
async fn directories_list_their_direct_children_page_by_page() {
    let mut io = Stdio::start(server(2));
    let root = io
        .call(req(
            1,
            "resources/directory/read",
            json!({"uri": "skill://pdf"}),
        ))
        .await["result"]
        .clone();
    assert_eq!(root["resources"][0]["uri"], "skill://pdf/SKILL.md");
    assert_eq!(root["resources"][0]["mimeType"], "text/markdown");
    let cursor = root["nextCursor"].as_str().unwrap();
    let rest = io
        .call(req(
            2,
            "resources/directory/read",
            json!({"uri": "skill://pdf", "cursor": cursor}),
        ))
        .await["result"]
        .clone();
    assert_eq!(
        rest["resources"],
        json!([{"uri": "skill://pdf/templates", "name": "templates", "mimeType": "inode/directory"}])
    );
    let sub = io
        .call(req(
            3,
            "resources/directory/read",
            json!({"uri": "skill://pdf/templates"}),
        ))
        .await["result"]
        .clone();
    let uris: Vec<&str> = sub["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        ["skill://pdf/templates/a.md", "skill://pdf/templates/eu"]
    );
    for not_a_directory in ["skill://pdf/SKILL.md", "skill://pdf/nope", "skill://other"] {
        let refused = io
            .call(req(
                4,
                "resources/directory/read",
                json!({"uri": not_a_directory}),
            ))
            .await;
        assert_eq!(
            refused["error"]["code"], -32602,
            "{not_a_directory}: {refused}"
        );
    }
}

#[test]
fn bad_skills_are_refused_with_the_reason() {
    let server = server_with(ServerOptions::default());
    let refused =
        |path: &str, files: Vec<SkillFile>| server.add_skill(path, files).unwrap_err().to_string();
    assert!(refused("pdf", vec![SkillFile::new("a.md", "x")]).contains("no SKILL.md"));
    assert!(
        refused(
            "pdf",
            vec![SkillFile::new("SKILL.md", skill_md("other", "x"))]
        )
        .contains("ends in \"pdf\"")
    );
    assert!(refused("Bad_Name", vec![]).contains("lowercase"));
    assert!(refused("a/../b", vec![]).contains("segments"));
    assert!(
        refused(
            "pdf",
            vec![
                SkillFile::new("SKILL.md", skill_md("pdf", "x")),
                SkillFile::new("../escape", "x")
            ]
        )
        .contains("segments")
    );
    assert!(refused("pdf", vec![SkillFile::new("SKILL.md", "# none")]).contains("frontmatter"));
    let many: Vec<SkillFile> = std::iter::once(SkillFile::new("SKILL.md", skill_md("pdf", "x")))
        .chain((0..512).map(|i| SkillFile::new(format!("f{i}"), "x")))
        .collect();
    assert!(refused("pdf", many).contains("512"));
}

#[test]
fn a_directory_publishes_every_skill_under_it() {
    let dir = std::env::temp_dir().join(format!("ferromcp-skills-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("team/deploy/scripts")).unwrap();
    std::fs::create_dir_all(dir.join("team/deploy/rollback")).unwrap();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(
        dir.join("team/deploy/SKILL.md"),
        skill_md("deploy", "Deploys"),
    )
    .unwrap();
    std::fs::write(dir.join("team/deploy/scripts/run.sh"), "#!/bin/sh\n").unwrap();
    std::fs::write(dir.join("team/deploy/.hidden"), "no").unwrap();
    std::fs::write(
        dir.join("team/deploy/rollback/SKILL.md"),
        skill_md("rollback", "Rolls back"),
    )
    .unwrap();
    std::fs::write(dir.join(".git/SKILL.md"), skill_md("git", "x")).unwrap();
    let server = server_with(ServerOptions::default());
    let published = server.add_skills_dir(&dir).unwrap();
    assert_eq!(
        published,
        [
            "skill://team/deploy/SKILL.md",
            "skill://team/deploy/rollback/SKILL.md"
        ]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn paths_that_escape_a_skill_read_nothing_and_the_server_keeps_serving() {
    let mut io = Stdio::start(server(10));
    let mut id = 100;
    for uri in [
        "skill://../../etc/passwd",
        "skill://pdf/../../etc/passwd",
        "skill://pdf/%2e%2e/%2e%2e/etc/passwd",
        "skill://pdf/templates/../../../etc/passwd",
        "file:///etc/passwd",
    ] {
        id += 1;
        let read = io
            .call(req(id, "resources/read", json!({"uri": uri})))
            .await;
        // Resource not found is -32602 in 2026-07-28 (server/resources.mdx).
        assert_eq!(read["error"]["code"], -32602, "{uri}: {read}");
        assert!(!read.to_string().contains("root:"), "{uri}: {read}");
        id += 1;
        let got = io.call(req(id, "skills/get", json!({"uri": uri}))).await;
        assert_eq!(got["error"]["code"], -32602, "{uri}: {got}");
        id += 1;
        let listed = io
            .call(req(id, "resources/directory/read", json!({"uri": uri})))
            .await;
        assert!(listed["error"].is_object(), "{uri}: {listed}");
        // Still serving: a real file reads.
        id += 1;
        let fine = io
            .call(req(
                id,
                "resources/read",
                json!({"uri": "skill://pdf/templates/a.md"}),
            ))
            .await;
        assert_eq!(fine["result"]["contents"][0]["text"], "A", "{fine}");
    }
}

#[cfg(unix)]
#[tokio::test]
async fn a_directory_never_publishes_what_a_link_points_outside_it() {
    let base = std::env::temp_dir().join(format!("ferromcp-skills-links-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (root, outside) = (base.join("skills"), base.join("outside"));
    std::fs::create_dir_all(root.join("notes")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "secret").unwrap();
    std::fs::write(root.join("notes/SKILL.md"), skill_md("notes", "Notes")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("notes/secret.txt")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("notes/escape")).unwrap();
    let server = server_with(ServerOptions::default());
    server.add_skills_dir(&root).unwrap();
    let mut io = Stdio::start(server);
    let got = io
        .call(req(
            1,
            "skills/get",
            json!({"uri": "skill://notes/SKILL.md"}),
        ))
        .await;
    let files: Vec<&str> = got["result"]["skill"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["skill://notes/SKILL.md"], "{got}");
    for uri in [
        "skill://notes/secret.txt",
        "skill://notes/escape/secret.txt",
    ] {
        let read = io.call(req(2, "resources/read", json!({"uri": uri}))).await;
        assert!(read["error"].is_object(), "{uri}: {read}");
    }
    std::fs::remove_dir_all(&base).unwrap();
}
