//! `make demo`: starts the Python, Node, C and Rust echo servers from
//! examples/manifest.json, calls their tools with the Rust client over stdio
//! and HTTP, and prints each result.

use ferromcp_tests::manifest::{Manifest, Transport};
use ferromcp_tests::servers::start;
use serde_json::json;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let manifest = Manifest::load()?;
    for language in manifest.languages("echo-server") {
        for transport in [Transport::Stdio, Transport::Http] {
            println!("== {language} echo server over {} ==", transport.key());
            let running = start(&manifest, "echo-server", &language, transport).await?;
            let tools = running.client.list_all_tools().await?;
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            println!("tools/list -> {names:?}");
            for (tool, args) in [
                ("echo", json!({"text": "hello from the Rust client"})),
                ("add", json!({"a": 2, "b": 3})),
            ] {
                let result = running.client.call_tool(tool, args.clone()).await?;
                println!(
                    "tools/call {tool} {args} -> {}",
                    serde_json::to_string(&result)?
                );
            }
            running.stop().await;
        }
    }
    Ok(())
}
