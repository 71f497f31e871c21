//! Per-caller visibility (`Server::set_visibility`): lists show each caller
//! only what the rule lets it see, page by page; calls, reads, prompt gets
//! and completions of hidden items fail exactly as for unknown ones; and a
//! filtered list is never marked for shared caches.

use ferromcp::client::{CallOptions, Client, ClientOptions, EraPreference};
use ferromcp::protocol::{CacheScope, Implementation, Prompt, Resource, ResourceTemplate, Tool};
use ferromcp::server::{
    CacheHint, CompletionOutput, PromptOutput, RequestMeta, ResourceOutput, Server, ServerOptions,
    ToolOutput, Visible,
};
use ferromcp_testkit::Http;
use serde_json::{Map, Value, json};

/// The caller's `clientInfo.name`.
fn caller_name(meta: &RequestMeta) -> String {
    meta.client_info
        .as_ref()
        .and_then(|info| serde_json::from_str::<Value>(info.get()).ok())
        .and_then(|info| info["name"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

fn server() -> Server {
    let mut options = ServerOptions {
        page_size: 2,
        ..ServerOptions::default()
    };
    // Public unless filtered: the filter must turn it private.
    options.caching.tools = CacheHint {
        ttl_ms: 60_000,
        scope: CacheScope::Public,
    };
    let server = Server::with_options(Implementation::new("vis", "1.0.0"), options);
    for name in ["a", "b", "admin_x", "c", "admin_y"] {
        server
            .add_tool(
                Tool::new(name, json!({"type": "object"})),
                move |_ctx, _args: Value| async move { Ok(ToolOutput::text(name)) },
            )
            .unwrap();
    }
    server
        .add_prompt(
            Prompt::new("admin_prompt"),
            |_ctx, _args: Map<String, Value>| async { Ok(PromptOutput::Text("secret".into())) },
        )
        .unwrap();
    server
        .add_resource(Resource::new("mem://admin", "admin"), |_ctx, _req| async {
            Ok(ResourceOutput::Text("secret".into()))
        })
        .unwrap();
    server
        .add_resource_template(
            ResourceTemplate::new("mem://admin/{id}", "admin items"),
            |_ctx, _req| async { Ok(ResourceOutput::Text("secret".into())) },
        )
        .unwrap();
    server.set_completion_handler(|_ctx, _params: Value| async {
        Ok(CompletionOutput {
            values: vec!["v".into()],
            ..Default::default()
        })
    });
    server.set_visibility(|meta: &RequestMeta, item: Visible<'_>| {
        let admin = caller_name(meta) == "admin";
        let key = match item {
            Visible::Tool(k)
            | Visible::Prompt(k)
            | Visible::Resource(k)
            | Visible::ResourceTemplate(k) => k,
        };
        admin || !key.contains("admin")
    });
    server
}

fn options(name: &str, era: EraPreference) -> ClientOptions {
    ClientOptions {
        info: Implementation::new(name, "1.0.0"),
        era,
        ..ClientOptions::default()
    }
}

/// The error text of a failed call, for comparing hidden with unknown.
fn error_text(result: Result<impl std::fmt::Debug, ferromcp::Error>) -> String {
    match result {
        Ok(ok) => panic!("expected an error, got {ok:?}"),
        Err(error) => error.to_string(),
    }
}

#[tokio::test]
async fn each_caller_sees_and_uses_only_what_the_rule_allows() {
    let server = server();
    let http = Http::start(server.clone()).await;
    let mut clients = Vec::new();
    for name in ["guest", "admin"] {
        clients.push((
            name,
            "memory",
            Client::in_memory_with(&server, options(name, EraPreference::Auto)),
        ));
        for era in [EraPreference::Modern, EraPreference::Legacy] {
            clients.push((
                name,
                if era == EraPreference::Modern {
                    "http 2026"
                } else {
                    "http 2025"
                },
                Client::connect_http_with(&http.url(), options(name, era))
                    .await
                    .unwrap(),
            ));
        }
    }
    for (name, how, client) in clients {
        let label = format!("{name} over {how}");
        let admin = name == "admin";
        // Pages of 2 walk the caller's own list.
        let tools: Vec<String> = client
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        let expected: &[&str] = if admin {
            &["a", "b", "admin_x", "c", "admin_y"]
        } else {
            &["a", "b", "c"]
        };
        assert_eq!(tools, expected, "{label}");
        let prompts = client.list_all_prompts().await.unwrap();
        assert_eq!(prompts.len(), usize::from(admin), "{label}");
        let resources = client.list_all_resources().await.unwrap();
        assert_eq!(resources.len(), usize::from(admin), "{label}");
        let templates = client.list_all_resource_templates().await.unwrap();
        assert_eq!(templates.len(), usize::from(admin), "{label}");

        let called = client.call_tool("admin_x", json!({})).await;
        let read = client.read_resource("mem://admin").await;
        let item = client.read_resource("mem://admin/7").await;
        let got = client.get_prompt("admin_prompt", Map::new()).await;
        let completed = client
            .complete(
                json!({"type": "ref/prompt", "name": "admin_prompt"}),
                "x",
                "",
            )
            .await;
        if admin {
            assert!(
                called.is_ok() && read.is_ok() && item.is_ok() && got.is_ok() && completed.is_ok(),
                "{label}"
            );
            continue;
        }
        // Hidden is indistinguishable from unknown.
        assert_eq!(
            error_text(called),
            error_text(client.call_tool("admin_nope", json!({})).await)
                .replace("admin_nope", "admin_x"),
            "{label}"
        );
        assert_eq!(
            error_text(read),
            error_text(client.read_resource("mem://admin-nope").await)
                .replace("mem://admin-nope", "mem://admin"),
            "{label}"
        );
        assert!(error_text(item).contains("Resource not found"), "{label}");
        assert_eq!(
            error_text(got),
            error_text(client.get_prompt("admin_nope", Map::new()).await)
                .replace("admin_nope", "admin_prompt"),
            "{label}"
        );
        assert!(
            error_text(completed).contains("Prompt not found"),
            "{label}"
        );
    }
}

#[tokio::test]
async fn a_filtered_list_is_marked_private() {
    let server = server();
    let client = Client::in_memory(&server);
    let page = client
        .send("tools/list", Map::new(), &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(page["cacheScope"], "private", "{page}");
    // Without a rule, the configured public scope stands.
    server.clear_visibility();
    client.clear_cache();
    let page = client
        .send("tools/list", Map::new(), &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(page["cacheScope"], "public", "{page}");
}

/// A rule in its general form: asked once per request with every item at
/// once, and answering later (as a binding's host does, from its own
/// thread); never while the registry is locked, so it may even register
/// items itself.
#[tokio::test]
async fn an_asynchronous_rule_is_asked_once_per_request() {
    use ferromcp::BoxFuture;
    use ferromcp::server::{VisibilityRule, VisibleItem};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Counting {
        asked: Arc<AtomicUsize>,
        items: Arc<AtomicUsize>,
        server: Server,
    }
    impl VisibilityRule for Counting {
        fn judge(&self, _caller: &RequestMeta, items: Vec<VisibleItem>) -> BoxFuture<Vec<bool>> {
            self.asked.fetch_add(1, Ordering::SeqCst);
            self.items.fetch_add(items.len(), Ordering::SeqCst);
            // Reading the registry while judging would deadlock under its lock.
            let registered = self.server.tool_names().len();
            Box::pin(async move {
                tokio::task::yield_now().await;
                assert!(registered > 0);
                items
                    .iter()
                    .map(|item| !item.key().starts_with("admin"))
                    .collect()
            })
        }
    }

    let server = server();
    let asked = Arc::new(AtomicUsize::new(0));
    let judged = Arc::new(AtomicUsize::new(0));
    server.set_visibility(Counting {
        asked: asked.clone(),
        items: judged.clone(),
        server: server.clone(),
    });
    let client = Client::in_memory(&server);
    // One page of 2 out of 5 tools: one question, all 5 items in it.
    let page = client
        .send("tools/list", Map::new(), &CallOptions::default())
        .await
        .unwrap();
    assert_eq!(page["tools"].as_array().map(Vec::len), Some(2));
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    assert_eq!(judged.load(Ordering::SeqCst), 5);
    assert!(client.call_tool("admin_x", json!({})).await.is_err());
    assert_eq!(text(&client.call_tool("a", json!({})).await.unwrap()), "a");
    assert_eq!(asked.load(Ordering::SeqCst), 3);
}

fn text(result: &ferromcp::protocol::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}
