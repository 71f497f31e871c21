//! The Rust client reading skills (SEP-2640) from the Rust server over
//! HTTP: listing reads no file, loading checks `SKILL.md`, files are read
//! checked and only when the held entry lists them, and a skill changed
//! after its entry was taken is refused until the entry is refreshed.

use ferromcp::client::{Client, ClientOptions, SkillResources};
use ferromcp::server::{Server, SkillFile};
use ferromcp::transport::http::{HttpOptions, HttpServer};

fn skill_md(body: &str) -> String {
    format!("---\nname: pdf\ndescription: PDFs\n---\n{body}\n")
}

async fn serve(server: &Server) -> Client {
    let bound = HttpServer::bind(server.clone(), HttpOptions::localhost(0))
        .await
        .unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        bound.local_addr().unwrap().port()
    );
    tokio::spawn(bound.run());
    Client::connect_http_with(&url, ClientOptions::default())
        .await
        .unwrap()
}

#[tokio::test]
async fn skills_are_listed_loaded_and_read_checked() {
    let server = Server::new("skills", "1.0");
    server
        .add_skill(
            "pdf",
            vec![
                SkillFile::new("SKILL.md", skill_md("# Use forms")),
                SkillFile::new("references/FORMS.md", "Fields."),
                SkillFile::new("logo.bin", vec![0u8, 159, 146, 150]),
            ],
        )
        .unwrap();
    let client = serve(&server).await;
    let skills = client.list_skills().await.unwrap();
    assert_eq!(skills.len(), 1);
    let skill = &skills[0];
    assert_eq!(skill.name(), "pdf");
    assert!(matches!(&skill.resources, SkillResources::Files(f) if f.len() == 3));
    assert_eq!(client.get_skill(&skill.uri).await.unwrap(), *skill);

    let loaded = client.load_skill(skill).await.unwrap();
    assert!(loaded.skill_md.contains("# Use forms"));
    assert_eq!(
        loaded.read("references/FORMS.md").await.unwrap(),
        b"Fields."
    );
    assert_eq!(
        loaded.read("skill://pdf/logo.bin").await.unwrap(),
        [0u8, 159, 146, 150]
    );
    // Not in the entry: refused without being read.
    let unlisted = loaded.read("other.md").await.unwrap_err().to_string();
    assert!(unlisted.contains("does not list it"), "{unlisted}");

    // The server changes the skill: the held entry no longer matches.
    server
        .add_skill(
            "pdf",
            vec![
                SkillFile::new("SKILL.md", skill_md("# Changed")),
                SkillFile::new("references/FORMS.md", "Other fields."),
            ],
        )
        .unwrap();
    let stale = client.load_skill(skill).await.unwrap_err().to_string();
    assert!(stale.contains("does not match its entry"), "{stale}");
    let stale = loaded
        .read("references/FORMS.md")
        .await
        .unwrap_err()
        .to_string();
    assert!(stale.contains("does not match its entry"), "{stale}");
    // A file the skill no longer has is no longer served.
    assert!(client.read_resource("skill://pdf/logo.bin").await.is_err());
    // A fresh entry loads.
    let fresh = client.get_skill(&skill.uri).await.unwrap();
    let loaded = client.load_skill(&fresh).await.unwrap();
    assert!(loaded.skill_md.contains("# Changed"));
}
