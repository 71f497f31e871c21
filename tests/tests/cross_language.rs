//! The same tools in Rust, Python, Node and C, over stdio and HTTP, must
//! give byte-identical results: the protocol lives in one core.

use ferromcp::client::{ClientOptions, EraPreference};
use ferromcp_tests::manifest::{Manifest, Transport};
use ferromcp_tests::schema::SchemaValidator;
use ferromcp_tests::servers::start_with;
use serde_json::{Value, json};

/// Calls every language's echo server makes, and the JSON each returned.
async fn transcript(
    manifest: &Manifest,
    language: &str,
    transport: Transport,
    era: EraPreference,
) -> Vec<Value> {
    let options = ClientOptions {
        era,
        ..ClientOptions::default()
    };
    let running = start_with(manifest, "echo-server", language, transport, options)
        .await
        .unwrap_or_else(|e| panic!("{language}/{}: {e}", transport.key()));
    let client = &running.client;
    let mut seen = Vec::new();
    let tools = client.list_tools(None).await.expect("tools/list");
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["echo", "add"], "{language}: tool order");
    seen.push(json!({"method": "tools/list", "names": names}));
    for (tool, args) in [
        ("echo", json!({"text": "hello, 世界 \"quoted\"\n"})),
        ("add", json!({"a": 2, "b": 3})),
        ("add", json!({"a": -40, "b": 2})),
        // fails validation: same tool error text from core in every language
        ("add", json!({"a": "two", "b": 3})),
    ] {
        // the raw result, so the comparison sees exactly what was sent
        let mut params = serde_json::Map::new();
        params.insert("name".into(), json!(tool));
        params.insert("arguments".into(), args.clone());
        let result = client
            .request("tools/call", params)
            .await
            .unwrap_or_else(|e| panic!("{language}: {tool} {args}: {e}"));
        seen.push(json!({"method": "tools/call", "tool": tool, "result": result}));
    }
    if era == EraPreference::Legacy {
        assert_eq!(client.is_legacy(), Some(true), "{language}: legacy session");
    } else {
        let discovered = client
            .request("server/discover", serde_json::Map::new())
            .await
            .expect("discover");
        seen.push(json!({"method": "server/discover", "result": discovered}));
    }
    running.stop().await;
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_servers_agree_across_languages_and_transports() {
    agree(EraPreference::Modern).await;
}

/// The same servers, unchanged, answer a legacy (2025-11-25) client.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_servers_answer_legacy_clients_alike() {
    agree(EraPreference::Legacy).await;
}

async fn agree(era: EraPreference) {
    let manifest = Manifest::load().expect("manifest");
    let mut languages = manifest.languages("echo-server");
    languages.sort();
    assert_eq!(languages, ["c", "node", "python", "rust"]);
    let schema = SchemaValidator::load();

    let mut reference: Option<(String, Vec<Value>)> = None;
    for language in &languages {
        for transport in [Transport::Stdio, Transport::Http] {
            let label = format!("{language}/{}", transport.key());
            let seen = transcript(&manifest, language, transport, era).await;
            for entry in seen.iter().filter(|_| era != EraPreference::Legacy) {
                if let (Some(method), Some(result)) =
                    (entry["method"].as_str(), entry.get("result"))
                {
                    let message = json!({"jsonrpc": "2.0", "id": 1, "result": result});
                    schema
                        .validate_server_message(&message, Some(method))
                        .unwrap_or_else(|e| {
                            panic!("{label}: {method} result violates schema: {e}")
                        });
                }
            }
            match &reference {
                None => reference = Some((label, seen)),
                Some((ref_label, expected)) => {
                    assert_eq!(&seen, expected, "{label} differs from {ref_label}")
                }
            }
        }
    }
    let (_, expected) = reference.expect("at least one language");
    assert_eq!(
        expected[2]["result"]["structuredContent"],
        json!({"result": 5})
    );
    assert_eq!(expected[4]["result"]["isError"], json!(true));
}
