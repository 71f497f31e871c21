//! Mounting and proxying (`core/src/gateway/`): upstream servers of either
//! era, over stdio and HTTP, merged under prefixes and reached by clients of
//! either era, with the interactive parts (elicitation) crossing the era
//! boundary both ways and change notifications followed.

use ferromcp::client::{Client, ClientOptions, EraPreference};
use ferromcp::protocol::{Prompt, Resource, SubscriptionFilter, Tool};
use ferromcp::server::{
    CompletionOutput, InputKind, PromptOutput, RequestContext, ResourceOutput, Server, ToolOutput,
};
use ferromcp_testkit::Http;
use serde_json::{Map, Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn upstream(name: &str) -> Server {
    let server = Server::new(name, "1.0.0");
    let who = name.to_owned();
    server
        .add_tool(
            Tool::new(
                "echo",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            move |_ctx, args: Value| {
                let who = who.clone();
                async move {
                    Ok(ToolOutput::text(format!(
                        "{who}: {}",
                        args["text"].as_str().unwrap_or("")
                    )))
                }
            },
        )
        .unwrap();
    server
        .add_tool(Tool::new("ask", json!({"type": "object"})), |ctx: RequestContext, _args| async move {
            ctx.progress(1.0, Some(2.0), Some("asking"));
            let answer = ctx
                .ask(
                    Some("name"),
                    InputKind::Elicitation,
                    json!({"mode": "form", "message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
                )
                .await?;
            Ok(ToolOutput::text(format!("hi {}", answer["content"]["name"].as_str().unwrap_or(""))))
        })
        .unwrap();
    server
        .add_resource(
            Resource::new("mem://r", "r"),
            |_ctx, req: ferromcp::server::ResourceRequest| async move {
                Ok(ResourceOutput::Text(format!("content of {}", req.uri)))
            },
        )
        .unwrap();
    server
        .add_resource_template(
            ferromcp::protocol::ResourceTemplate::new("mem://items/{id}", "item"),
            |_ctx, req: ferromcp::server::ResourceRequest| async move {
                Ok(ResourceOutput::Text(format!(
                    "item {}",
                    req.variables["id"].as_str().unwrap_or("")
                )))
            },
        )
        .unwrap();
    server
        .add_prompt(
            Prompt::new("greet"),
            |_ctx, args: Map<String, Value>| async move {
                Ok(PromptOutput::Text(format!(
                    "hello {}",
                    args.get("who").and_then(Value::as_str).unwrap_or("?")
                )))
            },
        )
        .unwrap();
    server.set_completion_handler(|_ctx, params: Value| async move {
        let name = params["ref"]["name"].as_str().unwrap_or("").to_owned();
        Ok(CompletionOutput {
            values: vec![format!("{name}-1")],
            ..Default::default()
        })
    });
    server
}

/// Serves `server` over HTTP until the returned handle drops.
async fn serve_http(server: Server) -> (String, Http) {
    let served = Http::start(server).await;
    (served.url(), served)
}

fn over_stdio(server: Server, options: ClientOptions) -> Client {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (sr, sw) = tokio::io::split(server_io);
    tokio::spawn(ferromcp::transport::stdio::serve(server, sr, sw));
    let (cr, cw) = tokio::io::split(client_io);
    Client::connect_stream(cr, cw, options)
}

fn era(era: EraPreference) -> ClientOptions {
    ClientOptions {
        era,
        probe_timeout: Duration::from_millis(500),
        ..ClientOptions::default()
    }
}

fn answering(era_preference: EraPreference) -> ClientOptions {
    era(era_preference).on_elicitation(|_params| async {
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    })
}

fn text(result: &ferromcp::protocol::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn two_upstreams_merge_under_prefixes_for_clients_of_either_era() {
    let (alpha_url, _alpha) = serve_http(upstream("alpha")).await;
    let gateway = Server::new("gateway", "1.0.0");
    gateway
        .mount(
            "alpha",
            Client::connect_http_with(&alpha_url, era(EraPreference::Auto))
                .await
                .unwrap(),
        )
        .await
        .unwrap();
    gateway
        .mount(
            "beta",
            over_stdio(upstream("beta"), era(EraPreference::Legacy)),
        )
        .await
        .unwrap();
    let mut names = gateway.tool_names();
    names.sort();
    assert_eq!(names, ["alpha_ask", "alpha_echo", "beta_ask", "beta_echo"]);
    let (url, _gateway) = serve_http(gateway).await;
    for preference in [EraPreference::Modern, EraPreference::Legacy] {
        let client = Client::connect_http_with(&url, answering(preference))
            .await
            .unwrap();
        let label = format!("{preference:?}");
        let echoed = client
            .call_tool("beta_echo", json!({"text": "x"}))
            .await
            .unwrap();
        assert_eq!(text(&echoed), "beta: x", "{label}");
        let echoed = client
            .call_tool("alpha_echo", json!({"text": "y"}))
            .await
            .unwrap();
        assert_eq!(text(&echoed), "alpha: y", "{label}");
        for prefix in ["alpha", "beta"] {
            let read = client
                .read_resource(&format!("{prefix}+mem://r"))
                .await
                .unwrap();
            let contents = serde_json::to_value(&read.contents).unwrap();
            assert_eq!(contents[0]["uri"], format!("{prefix}+mem://r"), "{label}");
            assert_eq!(contents[0]["text"], "content of mem://r", "{label}");
            let item = client
                .read_resource(&format!("{prefix}+mem://items/7"))
                .await
                .unwrap();
            assert_eq!(
                serde_json::to_value(&item.contents).unwrap()[0]["text"],
                "item 7"
            );
            let prompt = client
                .get_prompt(&format!("{prefix}_greet"), {
                    let mut args = Map::new();
                    args.insert("who".into(), json!("Ada"));
                    args
                })
                .await
                .unwrap();
            assert_eq!(
                serde_json::to_value(&prompt.messages).unwrap()[0]["content"]["text"],
                "hello Ada"
            );
            let completed = client
                .complete(
                    json!({"type": "ref/prompt", "name": format!("{prefix}_greet")}),
                    "who",
                    "A",
                )
                .await
                .unwrap();
            assert_eq!(
                completed.completion.values,
                ["greet-1"],
                "{label}: the upstream saw its own name"
            );
        }
        let unknown = client.read_resource("gamma+mem://r").await;
        assert!(unknown.is_err(), "{label}");
    }
}

/// The elicitation an upstream asks for reaches the downstream client
/// across the era boundary, both ways.
#[tokio::test]
async fn elicitation_crosses_the_era_boundary_both_ways() {
    for (carrier, upstream_era) in [
        ("http", EraPreference::Modern),
        ("http", EraPreference::Legacy),
        ("stdio", EraPreference::Modern),
        // Questions come apart from the call: they go to the one call in
        // flight that answers for itself.
        ("stdio", EraPreference::Legacy),
    ] {
        for downstream_era in [EraPreference::Modern, EraPreference::Legacy] {
            let label =
                format!("{carrier} upstream {upstream_era:?}, downstream {downstream_era:?}");
            let options = ferromcp::gateway::upstream_options(era(upstream_era));
            let (upstream_client, _upstream) = if carrier == "http" {
                let (url, served) = serve_http(upstream("alpha")).await;
                (
                    Client::connect_http_with(&url, options).await.unwrap(),
                    Some(served),
                )
            } else {
                (over_stdio(upstream("alpha"), options), None)
            };
            let proxy = Server::proxy(upstream_client).await.unwrap();
            let (url, _proxy) = serve_http(proxy).await;
            let client = Client::connect_http_with(&url, answering(downstream_era))
                .await
                .unwrap();
            let progress = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
            let seen = progress.clone();
            let options = ferromcp::client::CallOptions::default()
                .with_progress(move |update| seen.lock().unwrap().push(update.progress));
            let asked = client
                .call_tool_with("ask", json!({}), &options)
                .await
                .expect(&label);
            assert_eq!(text(&asked), "hi Ada", "{label}");
            assert!(
                !progress.lock().unwrap().is_empty(),
                "{label}: progress crossed"
            );
        }
    }
}

/// A downstream client that cannot answer gets the upstream's question
/// refused, not a hang.
#[tokio::test]
async fn a_client_without_elicitation_gets_an_error_not_a_hang() {
    let (upstream_url, _upstream) = serve_http(upstream("alpha")).await;
    let proxy = Server::proxy(Client::connect_http(&upstream_url).await.unwrap())
        .await
        .unwrap();
    let (url, _proxy) = serve_http(proxy).await;
    for preference in [EraPreference::Modern, EraPreference::Legacy] {
        let client = Client::connect_http_with(&url, era(preference))
            .await
            .unwrap();
        let outcome =
            tokio::time::timeout(Duration::from_secs(10), client.call_tool("ask", json!({}))).await;
        assert!(matches!(outcome, Ok(Err(_))), "{preference:?}: {outcome:?}");
    }
}

/// List changes and resource updates of an upstream reach the gateway's
/// listeners, under the downstream names.
#[tokio::test]
async fn upstream_changes_reach_downstream_listeners() {
    for upstream_era in [EraPreference::Modern, EraPreference::Legacy] {
        let label = format!("{upstream_era:?} upstream");
        let alpha = upstream("alpha");
        let (upstream_url, _upstream) = serve_http(alpha.clone()).await;
        let gateway = Server::new("gateway", "1.0.0");
        gateway
            .mount(
                "alpha",
                Client::connect_http_with(&upstream_url, era(upstream_era))
                    .await
                    .unwrap(),
            )
            .await
            .unwrap();
        let (url, _gateway) = serve_http(gateway.clone()).await;
        let client = Client::connect_http(&url).await.unwrap();
        let mut subscription = client
            .listen(SubscriptionFilter {
                tools_list_changed: Some(true),
                resource_subscriptions: Some(vec!["alpha+mem://r".into()]),
                ..Default::default()
            })
            .await
            .unwrap();
        // The mount listens to its upstream on its own schedule: wait until
        // an update gets through, then change the tools.
        let updated = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                alpha.notify_resource_updated("mem://r");
                tokio::select! {
                    note = subscription.next() => break note,
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                }
            }
        })
        .await
        .expect(&label)
        .expect(&label);
        assert_eq!(updated.method, "notifications/resources/updated", "{label}");
        assert_eq!(updated.params["uri"], "alpha+mem://r", "{label}");
        alpha
            .add_tool(
                Tool::new("late", json!({"type": "object"})),
                |_ctx, _args| async { Ok(ToolOutput::text("late")) },
            )
            .unwrap();
        let changed = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let note = subscription.next().await.expect("listening");
                if note.method == "notifications/tools/list_changed"
                    && gateway.tool_names().contains(&"alpha_late".to_owned())
                {
                    break note;
                }
            }
        })
        .await;
        assert!(changed.is_ok(), "{label}: {:?}", gateway.tool_names());
        let late = client.call_tool("alpha_late", json!({})).await.unwrap();
        assert_eq!(text(&late), "late", "{label}");
        alpha.remove_tool("late");
        tokio::time::timeout(Duration::from_secs(10), async {
            while gateway.tool_names().contains(&"alpha_late".to_owned()) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
        .await
        .expect(&label);
    }
}

/// One upstream gone: its calls fail with an error naming it; the others
/// go on.
#[tokio::test]
async fn a_failing_upstream_does_not_take_the_others_down() {
    let (alpha_url, alpha_guard) = serve_http(upstream("alpha")).await;
    let (beta_url, _beta) = serve_http(upstream("beta")).await;
    let gateway = Server::new("gateway", "1.0.0");
    gateway
        .mount("alpha", Client::connect_http(&alpha_url).await.unwrap())
        .await
        .unwrap();
    gateway
        .mount("beta", Client::connect_http(&beta_url).await.unwrap())
        .await
        .unwrap();
    drop(alpha_guard);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (url, _gateway) = serve_http(gateway).await;
    let client = Client::connect_http(&url).await.unwrap();
    let failed = client.call_tool("alpha_echo", json!({"text": "x"})).await;
    let message = format!("{failed:?}");
    assert!(message.contains("alpha"), "{message}");
    let echoed = client
        .call_tool("beta_echo", json!({"text": "x"}))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "beta: x");
}

#[tokio::test]
async fn a_bad_prefix_is_refused_and_unmount_removes_everything() {
    let (url, _upstream) = serve_http(upstream("alpha")).await;
    let gateway = Server::new("gateway", "1.0.0");
    let bad = gateway
        .mount("al pha", Client::connect_http(&url).await.unwrap())
        .await;
    assert!(
        matches!(&bad, Err(ferromcp::Error::InvalidDefinition(why)) if why.contains("invalid mount prefix")),
        "{bad:?}"
    );
    let itself = gateway.mount_server("self", &gateway).await;
    assert!(
        matches!(&itself, Err(ferromcp::Error::InvalidDefinition(why)) if why.contains("mounted in itself")),
        "{itself:?}"
    );
    let mount = gateway
        .mount("alpha", Client::connect_http(&url).await.unwrap())
        .await
        .unwrap();
    assert_eq!(gateway.tool_names().len(), 2);
    mount.unmount();
    assert!(gateway.tool_names().is_empty());
}

/// An upstream that hangs is bounded by the mount's client timeout, and
/// does not hold up another upstream's calls meanwhile.
#[tokio::test]
async fn a_hanging_upstream_times_out_without_stalling_the_others() {
    let slow = Server::new("slow", "1.0.0");
    slow.add_tool(
        Tool::new("hang", json!({"type": "object"})),
        |_ctx, _args| async {
            std::future::pending::<()>().await;
            Ok(ToolOutput::text("never"))
        },
    )
    .unwrap();
    let (slow_url, _slow) = serve_http(slow).await;
    let (beta_url, _beta) = serve_http(upstream("beta")).await;
    let gateway = Server::new("gateway", "1.0.0");
    let bounded = ClientOptions {
        timeout: Some(Duration::from_secs(3)),
        ..ClientOptions::default()
    };
    gateway
        .mount(
            "slow",
            Client::connect_http_with(&slow_url, bounded).await.unwrap(),
        )
        .await
        .unwrap();
    gateway
        .mount("beta", Client::connect_http(&beta_url).await.unwrap())
        .await
        .unwrap();
    let (url, _gateway) = serve_http(gateway).await;
    let client = Client::connect_http(&url).await.unwrap();
    let hanging = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool("slow_hang", json!({})).await })
    };
    for n in 0..10 {
        let echoed = client
            .call_tool("beta_echo", json!({"text": n.to_string()}))
            .await
            .unwrap();
        assert_eq!(text(&echoed), format!("beta: {n}"));
    }
    // Answered while the hanging call still waits: not held up behind it
    // (no clock involved, only the order of events).
    assert!(!hanging.is_finished(), "the other upstream waited");
    let outcome = tokio::time::timeout(Duration::from_secs(10), hanging)
        .await
        .unwrap()
        .unwrap();
    let message = format!("{outcome:?}");
    assert!(
        message.contains("slow") && message.contains("timed out"),
        "{message}"
    );
}

/// Tells when the handler holding it stops.
struct Stopped(std::sync::Arc<tokio::sync::Notify>);
impl Drop for Stopped {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// A downstream client that gives up cancels the upstream call.
#[tokio::test]
async fn cancelling_a_call_cancels_it_upstream() {
    for upstream_era in [EraPreference::Modern, EraPreference::Legacy] {
        let cancelled = std::sync::Arc::new(tokio::sync::Notify::new());
        let upstream_server = Server::new("waiting", "1.0.0");
        let seen = cancelled.clone();
        upstream_server
            .add_tool(
                Tool::new("wait", json!({"type": "object"})),
                move |ctx: RequestContext, _args| {
                    // A cancelled handler is dropped (or, where the server
                    // lets it finish, sees its token cancelled): either tells.
                    let stopped = Stopped(seen.clone());
                    async move {
                        ctx.cancelled().await;
                        drop(stopped);
                        Ok(ToolOutput::text("cancelled"))
                    }
                },
            )
            .unwrap();
        let (upstream_url, _upstream) = serve_http(upstream_server).await;
        let upstream_client = Client::connect_http_with(&upstream_url, era(upstream_era))
            .await
            .unwrap();
        let (url, _proxy) = serve_http(Server::proxy(upstream_client).await.unwrap()).await;
        let client = Client::connect_http(&url).await.unwrap();
        let token = CancellationToken::new();
        let options = ferromcp::client::CallOptions::default().with_cancel(token.clone());
        let call = {
            let client = client.clone();
            tokio::spawn(async move { client.call_tool_with("wait", json!({}), &options).await })
        };
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
        tokio::time::timeout(Duration::from_secs(10), cancelled.notified())
            .await
            .unwrap_or_else(|_| panic!("{upstream_era:?}: the upstream handler was not cancelled"));
        let _ = call.await;
    }
}

/// An upstream offering tasks, skills and completions: a tool whose calls
/// are always tasks (asking for input inside the task), a skill, and a
/// completion provider.
fn upstream_with_extensions() -> Server {
    use ferromcp::server::{SkillFile, TaskSupport, ToolTaskOptions};
    let server = upstream("alpha");
    server
        .add_tool_with(
            Tool::new("render", json!({"type": "object"})),
            ToolTaskOptions {
                support: TaskSupport::Required,
                ..Default::default()
            },
            |ctx: RequestContext, _args| async move {
                let answer = ctx
                    .ask(
                        Some("name"),
                        InputKind::Elicitation,
                        json!({"mode": "form", "message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
                    )
                    .await?;
                Ok(ToolOutput::text(format!(
                    "rendered for {}",
                    answer["content"]["name"].as_str().unwrap_or("")
                )))
            },
        )
        .unwrap();
    server
        .add_skill(
            "acme/git",
            vec![
                SkillFile::new(
                    "SKILL.md",
                    "---\nname: git\ndescription: Our Git conventions\n---\n# Branches\n",
                ),
                SkillFile::new("references/commits.md", "Write the why."),
            ],
        )
        .unwrap();
    server
}

/// Tasks, skills and completions of an upstream come through a mount: the
/// task-only tool answers clients of both eras (the mount follows the
/// upstream's task; a client that declared the extension gets a task of
/// the mount's), the skill is published under the prefix with the
/// upstream's digests, and completions reach the upstream even when the
/// gateway sets its own provider after mounting.
#[tokio::test]
async fn tasks_skills_and_completions_come_through_a_mount() {
    let (alpha_url, _alpha) = serve_http(upstream_with_extensions()).await;
    let gateway = Server::new("gateway", "1.0.0");
    let mount = gateway
        .mount(
            "alpha",
            Client::connect_http_with(&alpha_url, era(EraPreference::Modern))
                .await
                .unwrap(),
        )
        .await
        .unwrap();
    gateway
        .add_prompt(Prompt::new("own"), |_ctx, _args| async {
            Ok(PromptOutput::Text("mine".into()))
        })
        .unwrap();
    gateway.set_completion_handler(|_ctx, _params: Value| async {
        Ok(CompletionOutput {
            values: vec!["own-value".into()],
            ..Default::default()
        })
    });
    let (url, _served) = serve_http(gateway.clone()).await;

    for preference in [EraPreference::Modern, EraPreference::Legacy] {
        let label = format!("{preference:?}");
        let client = Client::connect_http_with(&url, answering(preference))
            .await
            .unwrap();
        let rendered = client.call_tool("alpha_render", json!({})).await.unwrap();
        assert_eq!(text(&rendered), "rendered for Ada", "{label}");

        let mounted = client
            .complete(
                json!({"type": "ref/prompt", "name": "alpha_greet"}),
                "who",
                "A",
            )
            .await
            .unwrap();
        assert_eq!(mounted.completion.values, ["greet-1"], "{label}");
        let own = client
            .complete(json!({"type": "ref/prompt", "name": "own"}), "x", "")
            .await
            .unwrap();
        assert_eq!(own.completion.values, ["own-value"], "{label}");

        let resources = client.list_all_resources().await.unwrap();
        let uris: Vec<&str> = resources.iter().map(|r| r.uri.as_str()).collect();
        assert!(
            uris.contains(&"skill://alpha/acme/git/SKILL.md"),
            "{label}: {uris:?}"
        );
        assert!(
            !uris.iter().any(|u| u.starts_with("alpha+skill:")),
            "{label}: skill files are published once, under the skill scheme: {uris:?}"
        );
    }

    // A 2026-07-28 client that declared the extension gets a task of the
    // mount's and follows it to the upstream's answer.
    let client = Client::connect_http_with(&url, answering(EraPreference::Modern))
        .await
        .unwrap();
    let task = client
        .start_tool_task("alpha_render", json!({}), &Default::default())
        .await
        .unwrap();
    assert!(task.id().is_some(), "the mount's call became a task");
    assert_eq!(text(&task.result().await.unwrap()), "rendered for Ada");

    let skills = client.list_skills().await.unwrap();
    assert_eq!(skills.len(), 1);
    assert_eq!(skills[0].uri, "skill://alpha/acme/git/SKILL.md");
    let loaded = client.load_skill(&skills[0]).await.unwrap();
    assert!(loaded.skill_md.contains("# Branches"));
    // Read and checked against the upstream's digest.
    assert_eq!(
        loaded.read("references/commits.md").await.unwrap(),
        b"Write the why."
    );

    mount.unmount();
    assert!(gateway.tool_names().is_empty());
    client.clear_cache();
    assert!(client.list_skills().await.unwrap().is_empty());
}

/// A proxy that is dropped lets its upstream go: nothing it started (the
/// task following the upstream's changes, the forwarding handlers) keeps
/// the upstream's connection open.
#[tokio::test]
async fn a_dropped_proxy_lets_its_upstream_go() {
    let (client_io, server_io) = tokio::io::duplex(1 << 20);
    let (sr, sw) = tokio::io::split(server_io);
    let served = tokio::spawn(ferromcp::transport::stdio::serve(upstream("alpha"), sr, sw));
    let (cr, cw) = tokio::io::split(client_io);
    let proxy = Server::proxy(Client::connect_stream(cr, cw, era(EraPreference::Modern)))
        .await
        .unwrap();
    assert!(proxy.tool_names().contains(&"echo".to_owned()));
    // The follow task is listening by now; the upstream still serves.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(!served.is_finished());
    drop(proxy);
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("the upstream's connection closes once the proxy is dropped")
        .unwrap()
        .unwrap();
}

/// A proxy of one upstream (2026-07-28, stdio) relays a plain `tools/call`
/// as it is: the upstream sees the downstream client's own `_meta` (its
/// clientInfo), multi round-trip input goes through the relay both ways,
/// and cancelling the call cancels it upstream. A call asking for progress
/// takes the full path (its notifications are routed back), and a
/// 2025-11-25 client is translated as before.
#[tokio::test]
async fn a_proxy_relays_plain_calls_as_they_are() {
    let upstream_server = upstream("up");
    upstream_server
        .add_tool(
            Tool::new("who", json!({"type": "object"})),
            |ctx: RequestContext, _args| async move {
                let info: Value = ctx
                    .meta()
                    .client_info
                    .as_ref()
                    .map(|raw| serde_json::from_str(raw.get()).unwrap())
                    .unwrap_or_default();
                Ok(ToolOutput::text(
                    info["name"].as_str().unwrap_or("?").to_owned(),
                ))
            },
        )
        .unwrap();
    let cancelled = std::sync::Arc::new(tokio::sync::Notify::new());
    let seen = cancelled.clone();
    upstream_server
        .add_tool(
            Tool::new("wait", json!({"type": "object"})),
            move |ctx: RequestContext, _args| {
                let stopped = Stopped(seen.clone());
                async move {
                    ctx.cancelled().await;
                    drop(stopped);
                    Ok(ToolOutput::text("cancelled"))
                }
            },
        )
        .unwrap();
    upstream_server
        .add_tool(
            Tool::new("rich", json!({"type": "object"})),
            |_ctx: RequestContext, _args| async move {
                Ok(ToolOutput::Result(
                    json!({
                        "content": [{"type": "text", "text": "r\u{e9}sum\u{e9} \"q\""}],
                        "structuredContent": {"n": 1, "list": [true, null]},
                        "_meta": {"example.com/kept": "v"},
                    })
                    .as_object()
                    .cloned()
                    .unwrap(),
                ))
            },
        )
        .unwrap();
    upstream_server
        .add_tool(
            Tool::new(
                "regional",
                json!({
                    "type": "object",
                    "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
                }),
            ),
            |_ctx: RequestContext, args: Value| async move {
                Ok(ToolOutput::text(format!("in {}", args["region"])))
            },
        )
        .unwrap();
    let upstream_client = over_stdio(upstream_server, era(EraPreference::Modern));
    let proxy = Server::proxy(upstream_client).await.unwrap();
    let (url, _proxy) = serve_http(proxy.clone()).await;
    let downstream = |era_preference| ClientOptions {
        info: ferromcp::protocol::Implementation::new("downstream", "1.0.0"),
        ..answering(era_preference)
    };
    // Over stdio too: the line goes upstream as written.
    let stdio_client = over_stdio(proxy, downstream(EraPreference::Modern));
    assert_eq!(
        text(&stdio_client.call_tool("who", json!({})).await.unwrap()),
        "downstream",
        "relayed over stdio with the client's own _meta"
    );
    assert_eq!(
        text(&stdio_client.call_tool("ask", json!({})).await.unwrap()),
        "hi Ada"
    );
    let client = Client::connect_http_with(&url, downstream(EraPreference::Modern))
        .await
        .unwrap();

    let relayed = client.call_tool("who", json!({})).await.unwrap();
    assert_eq!(
        text(&relayed),
        "downstream",
        "relayed with the client's own _meta"
    );
    let updates = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = updates.clone();
    let with_progress = ferromcp::client::CallOptions::default().with_progress(move |_| {
        counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    });
    let full = client
        .call_tool_with("who", json!({}), &with_progress)
        .await
        .unwrap();
    assert_ne!(
        text(&full),
        "downstream",
        "the full path calls as the gateway"
    );
    let asked = client
        .call_tool_with("ask", json!({}), &with_progress)
        .await
        .unwrap();
    assert_eq!(text(&asked), "hi Ada");
    // A relaying server leaves a call's arguments unread until it knows
    // the call is not relayed: on the full path they are read after all,
    // over HTTP and over stdio.
    let echoed = client
        .call_tool_with("echo", json!({"text": "full"}), &with_progress)
        .await
        .unwrap();
    assert_eq!(text(&echoed), "up: full");
    let echoed = stdio_client
        .call_tool_with("echo", json!({"text": "full"}), &with_progress)
        .await
        .unwrap();
    assert_eq!(text(&echoed), "up: full");
    // An argument mirrored in a header is compared with the body's, which
    // is read for it; the call is then relayed.
    let regional = client
        .call_tool("regional", json!({"region": "eu"}))
        .await
        .unwrap();
    assert_eq!(text(&regional), "in \"eu\"");
    assert!(
        updates.load(std::sync::atomic::Ordering::SeqCst) >= 1,
        "progress routed back"
    );
    // Input rounds through the relay: the upstream's own requestState.
    let asked = client.call_tool("ask", json!({})).await.unwrap();
    assert_eq!(text(&asked), "hi Ada");
    let echoed = client
        .call_tool("echo", json!({"text": "x"}))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "up: x");
    // A result relayed as the upstream wrote it: every member kept, its
    // `_meta` with a server identity.
    let rich = serde_json::to_value(client.call_tool("rich", json!({})).await.unwrap()).unwrap();
    assert_eq!(rich["content"][0]["text"], json!("r\u{e9}sum\u{e9} \"q\""));
    assert_eq!(
        rich["structuredContent"],
        json!({"n": 1, "list": [true, null]})
    );
    assert_eq!(rich["_meta"]["example.com/kept"], json!("v"), "{rich}");
    assert!(
        rich["_meta"]["io.modelcontextprotocol/serverInfo"]["name"].is_string(),
        "{rich}"
    );

    // Cancelling a relayed call cancels it upstream.
    let token = CancellationToken::new();
    let options = ferromcp::client::CallOptions::default().with_cancel(token.clone());
    let call = {
        let client = client.clone();
        tokio::spawn(async move { client.call_tool_with("wait", json!({}), &options).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    // While a relayed call waits for its result as written, the gateway's
    // own calls upstream still get theirs whole.
    let full = client
        .call_tool_with("echo", json!({"text": "z"}), &with_progress)
        .await
        .unwrap();
    assert_eq!(text(&full), "up: z");
    token.cancel();
    tokio::time::timeout(Duration::from_secs(10), cancelled.notified())
        .await
        .expect("the upstream handler was cancelled");
    let _ = call.await;

    // A 2025-11-25 client: translated, never relayed.
    let legacy = Client::connect_http_with(&url, downstream(EraPreference::Legacy))
        .await
        .unwrap();
    assert_eq!(
        text(
            &legacy
                .call_tool("echo", json!({"text": "y"}))
                .await
                .unwrap()
        ),
        "up: y"
    );
    assert_eq!(
        text(&legacy.call_tool("ask", json!({})).await.unwrap()),
        "hi Ada"
    );
    assert_ne!(
        text(&legacy.call_tool("who", json!({})).await.unwrap()),
        "downstream"
    );
}
