//! The Rust client against the Rust server, over an in-memory stdio stream
//! and over Streamable HTTP, for every client feature: discovery, version
//! negotiation, pagination, caching, MRTR across rounds, `x-mcp-header`
//! mirroring, progress, cancellation, timeouts and listen streams.

use ferromcp::client::{CacheMode, CallOptions, Client, ClientOptions};
use ferromcp::protocol::{
    Prompt, PromptArgument, Resource, ResourceTemplate, SubscriptionFilter, Tool,
};
use ferromcp::server::{
    CompletionOutput, InputKind, PromptOutput, RequestContext, ResourceOutput, ResourceRequest,
    Server, ServerOptions, ToolOutput,
};
use ferromcp::transport::http::{HttpOptions, HttpServer};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Default)]
struct Counters {
    reads: AtomicUsize,
    slow_cancelled: AtomicBool,
}

/// Marks the slow tool's future as dropped (the server stopped it).
struct DropFlag(Arc<Counters>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.slow_cancelled.store(true, Ordering::SeqCst);
    }
}

fn server(counters: Arc<Counters>) -> Server {
    let mut options = ServerOptions {
        page_size: 2,
        ..ServerOptions::default()
    };
    options.caching.resource_read.ttl_ms = 60_000;
    options.caching.tools.ttl_ms = 60_000;
    let server = Server::with_options(
        ferromcp::protocol::Implementation::new("client-test", "1.0.0"),
        options,
    );
    for name in ["a", "b", "c", "d", "e"] {
        server
            .add_tool(
                Tool::new(name, json!({"type": "object"})),
                |_ctx, _args| async { Ok(ToolOutput::text("ok")) },
            )
            .unwrap();
    }
    server
        .add_tool(
            Tool::new(
                "region",
                json!({"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "n": {"type": "integer", "x-mcp-header": "N"}
                }, "required": ["region"]}),
            ),
            |_ctx, args: Value| async move {
                Ok(ToolOutput::text(
                    args["region"].as_str().unwrap_or("").to_string(),
                ))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("interview", json!({"type": "object"})),
            |ctx: RequestContext, _args| async move {
                let name = ctx
                    .ask(Some("name"), InputKind::Elicitation, json!({"message": "name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}))
                    .await?;
                let (colour, roots) = tokio::join!(
                    ctx.ask(Some("colour"), InputKind::Sampling, json!({"messages": [], "maxTokens": 5})),
                    ctx.ask(Some("roots"), InputKind::Roots, json!({}))
                );
                let (colour, roots) = (colour?, roots?);
                Ok(ToolOutput::text(format!(
                    "{} likes {} in {}",
                    name["content"]["name"].as_str().unwrap_or(""),
                    colour["content"]["text"].as_str().unwrap_or(""),
                    roots["roots"][0]["uri"].as_str().unwrap_or("")
                )))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("caps", json!({"type": "object"})),
            |ctx: RequestContext, _args| async move {
                let mut caps: Vec<String> =
                    ctx.meta().client_capabilities.keys().cloned().collect();
                caps.sort();
                Ok(ToolOutput::text(caps.join(",")))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("progress", json!({"type": "object"})),
            |ctx: RequestContext, _args| async move {
                for i in 1..=3 {
                    ctx.progress(f64::from(i), Some(3.0), Some("working"));
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                Ok(ToolOutput::text("done"))
            },
        )
        .unwrap();
    let slow_counters = counters.clone();
    server
        .add_tool(
            Tool::new("slow", json!({"type": "object"})),
            move |_ctx, _args| {
                let flag = DropFlag(slow_counters.clone());
                async move {
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    drop(flag);
                    Ok(ToolOutput::text("late"))
                }
            },
        )
        .unwrap();
    let read_counters = counters.clone();
    server
        .add_resource(
            Resource::new("mem://counted", "counted"),
            move |_ctx, _req| {
                let n = read_counters.reads.fetch_add(1, Ordering::SeqCst) + 1;
                async move { Ok(ResourceOutput::Text(format!("read {n}"))) }
            },
        )
        .unwrap();
    server
        .add_resource_template(
            ResourceTemplate::new("mem://items/{id}", "item"),
            |_ctx, req: ResourceRequest| async move {
                Ok(ResourceOutput::Text(format!(
                    "item {}",
                    req.variables["id"].as_str().unwrap_or("")
                )))
            },
        )
        .unwrap();
    let mut prompt = Prompt::new("greet");
    prompt.arguments = Some(vec![PromptArgument::new("who", true)]);
    server
        .add_prompt(prompt, |_ctx, args: Map<String, Value>| async move {
            Ok(PromptOutput::Text(format!(
                "hello {}",
                args["who"].as_str().unwrap_or("")
            )))
        })
        .unwrap();
    server.set_completion_handler(|_ctx, params: Value| async move {
        let prefix = params["argument"]["value"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        Ok(CompletionOutput {
            values: ["alice", "alfred", "bob"]
                .iter()
                .filter(|v| v.starts_with(&prefix))
                .map(|v| v.to_string())
                .collect(),
            ..CompletionOutput::default()
        })
    });
    server
}

fn answering_options() -> ClientOptions {
    ClientOptions::default()
        .on_elicitation(|_params| async { Ok(json!({"action": "accept", "content": {"name": "Ada"}})) })
        .on_sampling(|_params| async {
            Ok(json!({"role": "assistant", "content": {"type": "text", "text": "blue"}, "model": "m"}))
        })
        .on_roots(|_params| async { Ok(json!({"roots": [{"uri": "file:///home"}]})) })
}

enum Kind {
    Stdio,
    Http,
}

struct Harness {
    client: Client,
    counters: Arc<Counters>,
    server: Server,
    _shutdown: Option<Shutdown>,
}

struct Shutdown(CancellationToken);
impl Drop for Shutdown {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

async fn harness(kind: Kind, options: ClientOptions) -> Harness {
    let counters = Arc::new(Counters::default());
    let server = server(counters.clone());
    match kind {
        Kind::Stdio => {
            let (client_io, server_io) = tokio::io::duplex(1 << 20);
            let (server_read, server_write) = tokio::io::split(server_io);
            tokio::spawn(ferromcp::transport::stdio::serve(
                server.clone(),
                server_read,
                server_write,
            ));
            let (client_read, client_write) = tokio::io::split(client_io);
            Harness {
                client: Client::connect_stream(client_read, client_write, options),
                counters,
                server,
                _shutdown: None,
            }
        }
        Kind::Http => {
            let mut http = HttpOptions::localhost(0);
            http.keep_alive = Duration::from_millis(50);
            let shutdown = Shutdown(http.shutdown.clone());
            let bound = HttpServer::bind(server.clone(), http).await.unwrap();
            let url = format!(
                "http://127.0.0.1:{}/mcp",
                bound.local_addr().unwrap().port()
            );
            tokio::spawn(bound.run());
            Harness {
                client: Client::connect_http_with(&url, options).await.unwrap(),
                counters,
                server,
                _shutdown: Some(shutdown),
            }
        }
    }
}

async fn both(test: impl AsyncFn(Harness, &'static str)) {
    test(harness(Kind::Stdio, answering_options()).await, "stdio").await;
    test(harness(Kind::Http, answering_options()).await, "http").await;
}

#[tokio::test]
async fn lists_every_page_and_uses_every_primitive() {
    both(async |h: Harness, t| {
        let c = &h.client;
        let discovered = c.discover().await.unwrap();
        assert_eq!(discovered.supported_versions, ["2026-07-28"], "{t}");
        let mut pages = c.tool_pages();
        let mut sizes = Vec::new();
        while let Some(page) = pages.next_page().await {
            sizes.push(page.unwrap().len());
        }
        assert_eq!(sizes, [2, 2, 2, 2, 2], "{t}: pages");
        let first = c.list_tools(None).await.unwrap();
        assert_eq!(first.tools.len(), 2, "{t}: page size");
        assert!(first.next_cursor.is_some());
        let names: Vec<String> = c
            .list_all_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(
            names,
            [
                "a",
                "b",
                "c",
                "d",
                "e",
                "region",
                "interview",
                "caps",
                "progress",
                "slow"
            ],
            "{t}"
        );
        assert_eq!(c.list_all_resources().await.unwrap().len(), 1);
        assert_eq!(c.list_all_resource_templates().await.unwrap().len(), 1);
        let item = c.read_resource("mem://items/42").await.unwrap();
        assert_eq!(
            serde_json::to_value(&item.contents).unwrap()[0]["text"],
            "item 42",
            "{t}"
        );
        let mut args = Map::new();
        args.insert("who".into(), json!("you"));
        let prompt = c.get_prompt("greet", args).await.unwrap();
        assert_eq!(
            serde_json::to_value(&prompt.messages).unwrap()[0]["content"]["text"],
            "hello you"
        );
        let done = c
            .complete(json!({"type": "ref/prompt", "name": "greet"}), "who", "al")
            .await
            .unwrap();
        assert_eq!(done.completion.values, ["alice", "alfred"], "{t}");
        let missing = c.read_resource("mem://nope").await.unwrap_err();
        assert!(
            matches!(missing, ferromcp::Error::Mcp(ref e) if e.code == -32602),
            "{t}: {missing}"
        );
    })
    .await;
}

/// Forwards every connection to `target`, counting them: how a test sees
/// the client's connections from the outside.
async fn counting_forwarder(target: String) -> (String, Arc<AtomicUsize>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let counter = accepted.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            let target = target.clone();
            tokio::spawn(async move {
                if let Ok(mut server) = tokio::net::TcpStream::connect(target).await {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    (format!("http://127.0.0.1:{port}/mcp"), accepted)
}

/// Calls one after the other share a kept-alive connection; one the server
/// closed while it sat in the pool (after the server's 50 ms idle timeout,
/// with no task of the client watching it) is noticed when the next call
/// takes a connection, and that call goes out on a new one.
#[tokio::test]
async fn pooled_connections_are_reused_until_the_server_closes_them() {
    let mut http = HttpOptions::localhost(0);
    http.idle_timeout = Duration::from_millis(50);
    let _shutdown = Shutdown(http.shutdown.clone());
    let bound = HttpServer::bind(server(Arc::default()), http)
        .await
        .unwrap();
    let target = bound.local_addr().unwrap().to_string();
    tokio::spawn(bound.run());
    let (url, connections) = counting_forwarder(target).await;
    let client = Client::connect_http_with(&url, answering_options())
        .await
        .unwrap();
    // Connecting made the connection the calls below take.
    let before = connections.load(Ordering::SeqCst);
    for call in 0..5 {
        let result = client.call_tool("a", json!({})).await;
        assert!(result.is_ok(), "call {call}: {result:?}");
    }
    assert_eq!(
        connections.load(Ordering::SeqCst),
        before.max(1),
        "back-to-back calls"
    );
    for round in 0..3 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let result = client.call_tool("a", json!({})).await;
        assert!(result.is_ok(), "call after idle {round}: {result:?}");
    }
    assert_eq!(
        connections.load(Ordering::SeqCst),
        before.max(1) + 3,
        "one new connection after each idle close"
    );
}

/// The test server over HTTP on the runtime, closing connections idle for
/// 300 ms, behind a forwarder that counts the TCP connections made to it.
fn counted_idle_closing_server() -> (String, Arc<AtomicUsize>, Shutdown) {
    ferromcp::runtime::get().block_on(async {
        let mut http = HttpOptions::localhost(0);
        http.idle_timeout = Duration::from_millis(300);
        let shutdown = Shutdown(http.shutdown.clone());
        let bound = HttpServer::bind(server(Arc::new(Counters::default())), http)
            .await
            .unwrap();
        let target = bound.local_addr().unwrap().to_string();
        tokio::spawn(bound.run());
        let (url, connections) = counting_forwarder(target).await;
        (url, connections, shutdown)
    })
}

/// A call blocked on with `runtime::block_here` (how C and Python's
/// `SyncClient` call) runs on the calling thread with connections of its
/// own kind, reused by later blocking calls from any thread; calls polled
/// by the runtime use the runtime's connections; timeouts and the server
/// closing an idle connection work the same for both.
#[test]
fn blocking_calls_use_connections_the_caller_waits_on() {
    use ferromcp::runtime::{block_here, get};
    let (url, connections, _shutdown) = counted_idle_closing_server();
    let client = block_here(Client::connect_http_with(&url, answering_options())).unwrap();
    let count = || connections.load(Ordering::SeqCst);
    let opened = count();
    for call in 0..5 {
        let result = block_here(client.call_tool("a", json!({})));
        assert!(result.is_ok(), "blocking call {call}: {result:?}");
    }
    assert_eq!(count(), opened.max(1), "blocking calls share a connection");
    // Four threads at once: each may need a connection of its own.
    std::thread::scope(|threads| {
        for _ in 0..4 {
            threads.spawn(|| {
                for _ in 0..20 {
                    block_here(client.call_tool("a", json!({}))).unwrap();
                }
            });
        }
    });
    let after_threads = count();
    assert!(
        after_threads <= opened.max(1) + 3,
        "{after_threads} connections"
    );
    // A call polled by the runtime takes a connection of the runtime's kind.
    get().block_on(client.call_tool("a", json!({}))).unwrap();
    assert_eq!(count(), after_threads + 1, "the runtime's own connection");
    block_here(client.call_tool("a", json!({}))).unwrap();
    get().block_on(client.call_tool("a", json!({}))).unwrap();
    assert_eq!(count(), after_threads + 1, "both kinds reused");
    // A timeout ends a blocking call (and closes its connection).
    let options = CallOptions {
        timeout: Some(Duration::from_millis(200)),
        ..CallOptions::default()
    };
    let started = std::time::Instant::now();
    let timed_out = block_here(client.call_tool_with("slow", json!({}), &options));
    assert!(
        matches!(timed_out, Err(ferromcp::Error::Timeout)),
        "{timed_out:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    // The server closes idle connections after 300 ms: the next blocking
    // call notices and connects anew.
    std::thread::sleep(Duration::from_millis(700));
    let before = count();
    block_here(client.call_tool("a", json!({}))).unwrap();
    assert_eq!(count(), before + 1, "a new connection after the idle close");
}

/// Runs `reactor` as a host's event loop would (wait for its descriptor,
/// then turn it) until `count` futures have finished, within 10 s.
#[cfg(target_os = "linux")]
fn run_host_loop<T>(
    reactor: &mut ferromcp::runtime::HostReactor<T>,
    mut done: Vec<(ferromcp::runtime::TaskId, T)>,
    count: usize,
) -> Vec<(ferromcp::runtime::TaskId, T)> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while done.len() < count {
        assert!(
            std::time::Instant::now() < deadline,
            "{} of {count} finished",
            done.len()
        );
        let mut watch = libc::pollfd {
            fd: reactor.fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut watch, 1, 100) };
        done.extend(reactor.turn());
    }
    done
}

/// Calls started on a `HostReactor` (how an asyncio loop awaits a call)
/// are polled by the host's loop only and use the connections the polling
/// thread waits on itself, the ones blocking calls use too: the answer
/// wakes the loop through the reactor's descriptor. Timeouts (the timer
/// thread's wake-up), cancellation and the server's idle close work there.
#[cfg(target_os = "linux")]
#[test]
fn host_reactor_calls_wait_on_their_own_sockets() {
    use ferromcp::runtime::{Started, block_here, host_reactor};
    let (url, connections, _shutdown) = counted_idle_closing_server();
    let client =
        Arc::new(block_here(Client::connect_http_with(&url, answering_options())).unwrap());
    let count = || connections.load(Ordering::SeqCst);
    let mut reactor = host_reactor::<Result<Value, ferromcp::Error>>().unwrap();
    let start = |reactor: &mut ferromcp::runtime::HostReactor<_>, options: CallOptions| {
        let client = client.clone();
        reactor.start(async move {
            client
                .call_tool_with("a", json!({}), &options)
                .await
                .map(|r| serde_json::to_value(r).unwrap())
        })
    };
    // Eight calls at once, then one at a time.
    let mut done = Vec::new();
    for _ in 0..8 {
        if let Started::Done(output) = start(&mut reactor, CallOptions::default()) {
            panic!("finished before any answer: {output:?}");
        }
    }
    done = run_host_loop(&mut reactor, done, 8);
    for _ in 0..5 {
        let first = start(&mut reactor, CallOptions::default());
        assert!(matches!(first, Started::Running(_)));
        let want = done.len() + 1;
        done = run_host_loop(&mut reactor, done, want);
    }
    assert!(done.iter().all(|(_, result)| result.is_ok()), "{done:?}");
    assert!(reactor.is_empty());
    let after_reactor = count();
    assert!(after_reactor <= 9, "{after_reactor} connections");
    // A blocking call reuses one of them: they are the host's kind.
    block_here(client.call_tool("a", json!({}))).unwrap();
    assert_eq!(
        count(),
        after_reactor,
        "the reactor's connections are the host's"
    );
    // A timeout: the timer thread wakes the task through the eventfd.
    let options = CallOptions {
        timeout: Some(Duration::from_millis(200)),
        ..CallOptions::default()
    };
    let client_for_slow = client.clone();
    let Started::Running(slow) = reactor.start(async move {
        client_for_slow
            .call_tool_with("slow", json!({}), &options)
            .await
            .map(|r| serde_json::to_value(r).unwrap())
    }) else {
        panic!("slow finished at once")
    };
    let timed_out = run_host_loop(&mut reactor, Vec::new(), 1);
    assert_eq!(timed_out[0].0, slow);
    assert!(
        matches!(timed_out[0].1, Err(ferromcp::Error::Timeout)),
        "{:?}",
        timed_out[0].1
    );
    // Cancelled from another thread: the task ends without the answer.
    let mut cancellable = host_reactor::<Option<()>>().unwrap();
    let stop = CancellationToken::new();
    let (client_for_cancel, token) = (client.clone(), stop.clone());
    let Started::Running(_) = cancellable.start(async move {
        tokio::select! {
            _ = token.cancelled() => None,
            _ = client_for_cancel.call_tool("slow", json!({})) => Some(()),
        }
    }) else {
        panic!("slow finished at once")
    };
    std::thread::spawn(move || stop.cancel());
    let cancelled = run_host_loop(&mut cancellable, Vec::new(), 1);
    assert_eq!(cancelled[0].1, None);
    // The server closes idle connections after 300 ms: the next call
    // notices and connects anew.
    std::thread::sleep(Duration::from_millis(700));
    let before = count();
    let Started::Running(_) = start(&mut reactor, CallOptions::default()) else {
        panic!("finished at once")
    };
    let after_close = run_host_loop(&mut reactor, Vec::new(), 1);
    assert!(after_close[0].1.is_ok(), "{after_close:?}");
    assert_eq!(count(), before + 1, "a new connection after the idle close");
}

#[tokio::test]
async fn switches_to_a_version_the_server_names_after_32022() {
    for kind in [Kind::Stdio, Kind::Http] {
        let options = ClientOptions {
            protocol_version: "1999-01-01".into(),
            ..ClientOptions::default()
        };
        let h = harness(kind, options).await;
        let result = h.client.call_tool("a", json!({})).await.unwrap();
        assert_eq!(result.is_error, None);
        assert_eq!(h.client.protocol_version(), "2026-07-28");
    }
}

#[tokio::test]
async fn caches_by_ttl_and_honours_refresh_and_bypass() {
    both(async |h: Harness, t| {
        let c = &h.client;
        let read = async |mode| {
            let mut params = Map::new();
            params.insert("uri".into(), json!("mem://counted"));
            c.send(
                "resources/read",
                params,
                &CallOptions::default().with_cache(mode),
            )
            .await
        };
        assert_eq!(
            read(CacheMode::Use).await.unwrap()["contents"][0]["text"],
            "read 1",
            "{t}"
        );
        assert_eq!(
            read(CacheMode::Use).await.unwrap()["contents"][0]["text"],
            "read 1",
            "{t}: cached"
        );
        assert_eq!(
            read(CacheMode::Bypass).await.unwrap()["contents"][0]["text"],
            "read 2",
            "{t}"
        );
        assert_eq!(
            read(CacheMode::Use).await.unwrap()["contents"][0]["text"],
            "read 1",
            "{t}: bypass did not store"
        );
        assert_eq!(
            read(CacheMode::Refresh).await.unwrap()["contents"][0]["text"],
            "read 3",
            "{t}"
        );
        assert_eq!(
            read(CacheMode::Use).await.unwrap()["contents"][0]["text"],
            "read 3",
            "{t}: refresh stored"
        );
        assert_eq!(h.counters.reads.load(Ordering::SeqCst), 3);
        c.clear_cache();
        assert_eq!(
            read(CacheMode::Use).await.unwrap()["contents"][0]["text"],
            "read 4",
            "{t}"
        );
    })
    .await;
}

#[tokio::test]
async fn answers_input_requests_over_several_rounds() {
    both(async |h: Harness, t| {
        let result = h.client.call_tool("interview", json!({})).await.unwrap();
        let text = serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
        assert_eq!(text, "Ada likes blue in file:///home", "{t}");
    })
    .await;
}

#[tokio::test]
async fn declares_capabilities_only_for_registered_handlers() {
    // Without handlers: only the tasks extension (the client follows tasks).
    let h = harness(Kind::Stdio, ClientOptions::default()).await;
    let none = h.client.call_tool("caps", json!({})).await.unwrap();
    assert_eq!(
        serde_json::to_value(&none.content).unwrap()[0]["text"],
        "extensions"
    );
    let err = h
        .client
        .call_tool("interview", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ferromcp::Error::Mcp(ref e) if e.code == -32021),
        "{err}"
    );
    let h = harness(Kind::Stdio, answering_options()).await;
    let all = h.client.call_tool("caps", json!({})).await.unwrap();
    assert_eq!(
        serde_json::to_value(&all.content).unwrap()[0]["text"],
        "elicitation,extensions,roots,sampling"
    );
    let plain = ClientOptions {
        follow_tasks: false,
        ..ClientOptions::default()
    };
    let h = harness(Kind::Stdio, plain).await;
    let none = h.client.call_tool("caps", json!({})).await.unwrap();
    assert_eq!(serde_json::to_value(&none.content).unwrap()[0]["text"], "");
}

#[tokio::test]
async fn gives_up_after_the_configured_number_of_rounds() {
    let options = ClientOptions {
        max_input_rounds: 1,
        ..answering_options()
    };
    let h = harness(Kind::Http, options).await;
    let err = h
        .client
        .call_tool("interview", json!({}))
        .await
        .unwrap_err();
    assert!(
        matches!(err, ferromcp::Error::Protocol(ref m) if m.contains("rounds")),
        "{err}"
    );
}

#[tokio::test]
async fn mirrors_x_mcp_header_arguments_over_http() {
    let h = harness(Kind::Http, ClientOptions::default()).await;
    // The server rejects a call whose Mcp-Param-* headers do not mirror the
    // annotated arguments, so success proves the client sent them (the
    // client learns the annotations by listing tools on its own).
    for region in ["us-west1", "Hello, 世界", " padded "] {
        let result = h
            .client
            .call_tool("region", json!({"region": region, "n": 7}))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&result.content).unwrap()[0]["text"],
            region
        );
    }
    let absent = h
        .client
        .call_tool("region", json!({"region": "x"}))
        .await
        .unwrap();
    assert_eq!(absent.is_error, None);
}

#[tokio::test]
async fn reports_progress_to_the_call() {
    both(async |h: Harness, t| {
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = seen.clone();
        let options =
            CallOptions::default().with_progress(move |p| sink.lock().unwrap().push(p.progress));
        let result = h
            .client
            .call_tool_with("progress", json!({}), &options)
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&result.content).unwrap()[0]["text"],
            "done"
        );
        // notifications are delivered before the result on both transports
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(*seen.lock().unwrap(), [1.0, 2.0, 3.0], "{t}");
    })
    .await;
}

#[tokio::test]
async fn cancelling_or_timing_out_stops_the_server_handler() {
    both(async |h: Harness, t| {
        let cancel = CancellationToken::new();
        let options = CallOptions::default().with_cancel(cancel.clone());
        let call = h.client.call_tool_with("slow", json!({}), &options);
        let canceller = async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            cancel.cancel();
        };
        let (result, ()) = tokio::join!(call, canceller);
        assert!(matches!(result, Err(ferromcp::Error::Cancelled)), "{t}");
        wait_until(|| h.counters.slow_cancelled.load(Ordering::SeqCst), t).await;

        h.counters.slow_cancelled.store(false, Ordering::SeqCst);
        let options = CallOptions::default().with_timeout(Duration::from_millis(100));
        let result = h.client.call_tool_with("slow", json!({}), &options).await;
        assert!(matches!(result, Err(ferromcp::Error::Timeout)), "{t}");
        wait_until(|| h.counters.slow_cancelled.load(Ordering::SeqCst), t).await;
        // the connection still serves
        assert!(h.client.call_tool("a", json!({})).await.is_ok());
    })
    .await;
}

async fn wait_until(condition: impl Fn() -> bool, what: &str) {
    for _ in 0..200 {
        if condition() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{what}: the server handler was not stopped");
}

#[tokio::test]
async fn listen_streams_deliver_filtered_changes_and_invalidate_the_cache() {
    both(async |h: Harness, t| {
        let c = &h.client;
        let filter = SubscriptionFilter {
            tools_list_changed: Some(true),
            resource_subscriptions: Some(vec!["mem://counted".into()]),
            ..SubscriptionFilter::default()
        };
        let mut sub = c.listen(filter).await.unwrap();
        assert_eq!(sub.acknowledged().tools_list_changed, Some(true), "{t}");
        assert_eq!(c.list_all_tools().await.unwrap().len(), 10);
        h.server
            .add_prompt(Prompt::new("unwatched"), |_ctx, _args| async {
                Ok(PromptOutput::Text(String::new()))
            })
            .unwrap();
        h.server
            .add_tool(
                Tool::new("late", json!({"type": "object"})),
                |_ctx, _args| async { Ok(ToolOutput::text("late")) },
            )
            .unwrap();
        let note = tokio::time::timeout(Duration::from_secs(5), sub.next())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            note.method, "notifications/tools/list_changed",
            "{t}: prompts were not asked for"
        );
        assert!(note.params["_meta"]["io.modelcontextprotocol/subscriptionId"].is_number());
        // the cached tool list (ttl 60 s) was invalidated by the notification
        assert_eq!(c.list_all_tools().await.unwrap().len(), 11, "{t}");
        h.server.notify_resource_updated("mem://other");
        h.server.notify_resource_updated("mem://counted");
        let note = tokio::time::timeout(Duration::from_secs(5), sub.next())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(note.method, "notifications/resources/updated");
        assert_eq!(note.params["uri"], "mem://counted", "{t}");
        h.server.close_subscriptions();
        assert!(
            tokio::time::timeout(Duration::from_secs(5), sub.next())
                .await
                .unwrap()
                .is_none()
        );
        let ended = sub.ended().unwrap().as_ref().unwrap();
        assert!(
            ended["_meta"]["io.modelcontextprotocol/subscriptionId"].is_number(),
            "{t}: {ended}"
        );
    })
    .await;
}
