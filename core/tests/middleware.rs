//! The server's middleware chain (`core/src/server/middleware.rs`): links
//! run in order around every request, over stdio (in memory) and HTTP, in
//! both eras; they can change params and results, short-circuit, and a
//! panicking link fails only its request. The ready-made links: a rate
//! limit that refuses past its budget, error masking.

use ferromcp::McpError;
use ferromcp::client::{Client, ClientOptions, EraPreference};
use ferromcp::protocol::Tool;
use ferromcp::server::middleware::builtin::{MaskErrors, RateLimit};
use ferromcp::server::middleware::{MiddlewareRequest, Next};
use ferromcp::server::{HandlerError, Server, ToolOutput};
use ferromcp_testkit::Http;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

fn server() -> Server {
    let server = Server::new("mw", "1.0.0");
    server
        .add_tool(
            Tool::new(
                "echo",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            ),
            |_ctx, args: Value| async move {
                Ok(ToolOutput::text(
                    args["text"].as_str().unwrap_or("").to_owned(),
                ))
            },
        )
        .unwrap();
    server
        .add_tool(
            Tool::new("broken", json!({"type": "object"})),
            |_ctx, _args: Value| async {
                Err::<ToolOutput, _>(HandlerError::Protocol(McpError::internal(
                    "db password is hunter2",
                )))
            },
        )
        .unwrap();
    server
}

fn text(result: &ferromcp::protocol::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// Clients of every transport and era this test drives.
async fn clients(server: &Server) -> (Vec<(String, Client)>, Http) {
    let http = Http::start(server.clone()).await;
    let mut clients = vec![("memory".to_owned(), Client::in_memory(server))];
    for era in [EraPreference::Modern, EraPreference::Legacy] {
        let options = ClientOptions {
            era,
            ..ClientOptions::default()
        };
        clients.push((
            format!("http {era:?}"),
            Client::connect_http_with(&http.url(), options)
                .await
                .unwrap(),
        ));
    }
    (clients, http)
}

#[tokio::test]
async fn links_run_in_order_and_change_params_and_results() {
    let server = server();
    let seen = Arc::new(Mutex::new(Vec::<String>::new()));
    let outer = seen.clone();
    server.add_middleware(move |mut request: MiddlewareRequest, next: Next| {
        let seen = outer.clone();
        async move {
            seen.lock()
                .unwrap()
                .push(format!("outer {}", request.method));
            // Change the params on the way in...
            if request.name() == Some("echo")
                && let Some(arguments) = request.params.get_mut("arguments")
            {
                arguments["text"] = json!("changed on the way in");
            }
            let mut result = next.run(request).await?;
            // ...and the result on the way out.
            result
                .as_map_mut()
                .insert("_meta".into(), json!({"example.com/seen": true}));
            seen.lock().unwrap().push("outer done".into());
            Ok(result)
        }
    });
    let inner = seen.clone();
    server.add_middleware(move |request: MiddlewareRequest, next: Next| {
        let seen = inner.clone();
        async move {
            // The request's `_meta` is in `meta`, not the params, in either era.
            assert!(
                !request.params.contains_key("_meta"),
                "{:?}",
                request.params
            );
            seen.lock()
                .unwrap()
                .push(format!("inner {}", request.method));
            next.run(request).await
        }
    });
    let (clients, _http) = clients(&server).await;
    for (label, client) in clients {
        // The client's first request (its era detection) went through the
        // chain too (a 2025-11-25 session's handshake does not, yet).
        client.discover().await.unwrap();
        if !label.contains("Legacy") {
            assert!(
                seen.lock()
                    .unwrap()
                    .iter()
                    .any(|s| s.ends_with("server/discover")),
                "{label}: {:?}",
                seen.lock().unwrap()
            );
        }
        seen.lock().unwrap().clear();
        let echoed = client
            .call_tool("echo", json!({"text": "hi"}))
            .await
            .unwrap();
        assert_eq!(text(&echoed), "changed on the way in", "{label}");
        assert_eq!(
            serde_json::to_value(&echoed.meta).unwrap()["example.com/seen"],
            true,
            "{label}"
        );
        // (An HTTP client may list the tools first, for their headers.)
        let order = seen.lock().unwrap().clone();
        assert_eq!(
            order[order.len().saturating_sub(3)..],
            ["outer tools/call", "inner tools/call", "outer done"],
            "{label}: {order:?}"
        );
        // A call with a progress token carries `_meta` (in the params on
        // 2025-11-25): links still see none.
        let options = ferromcp::client::CallOptions::default().with_progress(|_| {});
        client
            .call_tool_with("echo", json!({"text": "hi"}), &options)
            .await
            .unwrap();
        // Lists go through the chain too.
        seen.lock().unwrap().clear();
        client.clear_cache();
        client.list_all_tools().await.unwrap();
        assert!(
            seen.lock()
                .unwrap()
                .contains(&"inner tools/list".to_owned()),
            "{label}: {:?}",
            seen.lock().unwrap()
        );
    }
}

#[tokio::test]
async fn a_link_short_circuits_and_a_panicking_link_fails_only_its_request() {
    let server = server();
    server.add_middleware(|request: MiddlewareRequest, next: Next| async move {
        let text = request
            .params
            .get("arguments")
            .and_then(|a| a.get("text"))
            .and_then(Value::as_str);
        match text {
            Some("forbidden") => Err(McpError::invalid_params("refused by policy")),
            Some("panic") => panic!("a bug in a link"),
            _ => next.run(request).await,
        }
    });
    let (clients, _http) = clients(&server).await;
    for (label, client) in clients {
        let refused = client
            .call_tool("echo", json!({"text": "forbidden"}))
            .await
            .unwrap_err();
        assert!(
            refused.to_string().contains("refused by policy"),
            "{label}: {refused}"
        );
        let failed = client
            .call_tool("echo", json!({"text": "panic"}))
            .await
            .unwrap_err();
        assert!(
            failed.to_string().contains("middleware failed"),
            "{label}: {failed}"
        );
        // The connection goes on serving.
        let fine = client
            .call_tool("echo", json!({"text": "fine"}))
            .await
            .unwrap();
        assert_eq!(text(&fine), "fine", "{label}");
    }
}

#[tokio::test]
async fn the_rate_limit_refuses_past_the_budget_and_masking_hides_internals() {
    let server = server();
    server.add_middleware(RateLimit::new(0.001, 6));
    // The original message goes to the server's log, here a sink.
    let masked = Arc::new(Mutex::new(Vec::<String>::new()));
    let kept = masked.clone();
    server.add_middleware(MaskErrors::with_sink(Arc::new(move |record| {
        let error = record
            .error
            .as_ref()
            .map(|e| e.message.clone())
            .unwrap_or_default();
        kept.lock()
            .unwrap()
            .push(format!("{} {}", record.method, error));
    })));
    let client = Client::in_memory(&server);
    let broken = client.call_tool("broken", json!({})).await.unwrap_err();
    assert!(!broken.to_string().contains("hunter2"), "{broken}");
    assert!(broken.to_string().contains("Internal error"), "{broken}");
    assert_eq!(
        *masked.lock().unwrap(),
        ["tools/call db password is hunter2"]
    );
    // The budget of 6 (discovery and listing count too) runs out within
    // ten calls, and then every call is refused, saying when to retry.
    let mut answered = 0;
    let mut refused = 0;
    for i in 0..10 {
        match client
            .call_tool("echo", json!({"text": i.to_string()}))
            .await
        {
            Ok(_) => {
                assert_eq!(refused, 0, "answered after a refusal");
                answered += 1;
            }
            Err(ferromcp::Error::Mcp(error)) => {
                assert_eq!(
                    error.code,
                    ferromcp::server::middleware::builtin::RATE_LIMITED
                );
                assert!(
                    error
                        .data
                        .as_ref()
                        .is_some_and(|d| d["retryAfterMs"].as_u64() > Some(0))
                );
                refused += 1;
            }
            Err(other) => panic!("not a JSON-RPC error: {other}"),
        }
    }
    assert!((1..=5).contains(&answered), "{answered} answered");
    assert_eq!(answered + refused, 10);
    // Another client (another clientInfo) has its own budget.
    let other = Client::in_memory_with(
        &server,
        ClientOptions {
            info: ferromcp::protocol::Implementation::new("another", "1.0.0"),
            ..ClientOptions::default()
        },
    );
    other
        .call_tool("echo", json!({"text": "mine"}))
        .await
        .unwrap();
}

/// A 2025-11-25 session's own requests (`ping`, `logging/setLevel`,
/// subscriptions) go through the chain as well, and a link can refuse them.
#[tokio::test]
async fn a_legacy_sessions_own_requests_go_through_the_chain() {
    let server = server();
    server
        .add_resource(
            ferromcp::protocol::Resource::new("mem://r", "r"),
            |_ctx, _req: ferromcp::server::ResourceRequest| async move {
                Ok(ferromcp::server::ResourceOutput::Text("r".into()))
            },
        )
        .unwrap();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    server.add_middleware(move |request: MiddlewareRequest, next: Next| {
        log.lock().unwrap().push(request.method.clone());
        async move {
            if request.method == "resources/subscribe" {
                return Err(McpError::invalid_params("no subscriptions here"));
            }
            next.run(request).await
        }
    });
    let http = Http::start(server.clone()).await;
    let options = ClientOptions {
        era: EraPreference::Legacy,
        ..ClientOptions::default()
    };
    let client = Client::connect_http_with(&http.url(), options)
        .await
        .unwrap();
    client
        .request("ping", serde_json::Map::new())
        .await
        .unwrap();
    let mut level = serde_json::Map::new();
    level.insert("level".into(), json!("debug"));
    client.request("logging/setLevel", level).await.unwrap();
    let mut uri = serde_json::Map::new();
    uri.insert("uri".into(), json!("mem://r"));
    let refused = client
        .request("resources/subscribe", uri)
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains("no subscriptions here"),
        "{refused}"
    );
    let seen = seen.lock().unwrap().clone();
    for method in ["ping", "logging/setLevel", "resources/subscribe"] {
        assert!(seen.iter().any(|m| m == method), "{method} not in {seen:?}");
    }
}

/// The handshake of a 2025-11-25 session (`initialize`) goes through the
/// chain too, over HTTP and stdio (in memory): a link reads who connects,
/// changes the result, or refuses the session.
#[tokio::test]
async fn a_legacy_initialize_goes_through_the_chain() {
    let server = server();
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = seen.clone();
    server.add_middleware(move |request: MiddlewareRequest, next: Next| {
        let log = log.clone();
        async move {
            if request.method != "initialize" {
                return next.run(request).await;
            }
            let who = request.params["clientInfo"]["name"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            log.lock().unwrap().push(format!(
                "initialize {who} {}",
                request.meta.protocol_version
            ));
            if who == "intruder" {
                return Err(McpError::invalid_params("not you"));
            }
            let mut result = next.run(request).await?;
            result
                .as_map_mut()
                .insert("instructions".into(), json!("greeted by a link"));
            Ok(result)
        }
    });
    let http = Http::start(server.clone()).await;
    for transport in ["http", "memory"] {
        for name in ["friend", "intruder"] {
            let options = ClientOptions {
                era: EraPreference::Legacy,
                info: ferromcp::protocol::Implementation::new(name, "1.0.0"),
                ..ClientOptions::default()
            };
            let client = match transport {
                "http" => Client::connect_http_with(&http.url(), options)
                    .await
                    .unwrap(),
                _ => Client::in_memory_with(&server, options),
            };
            let outcome = client.call_tool("echo", json!({"text": "hi"})).await;
            if name == "intruder" {
                let error = outcome.unwrap_err();
                assert!(
                    error.to_string().contains("not you"),
                    "{transport}: {error}"
                );
                continue;
            }
            assert_eq!(text(&outcome.unwrap()), "hi", "{transport}");
            let init = client.legacy_initialize_result().unwrap();
            assert_eq!(init["instructions"], "greeted by a link", "{transport}");
        }
    }
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(seen[0].starts_with("initialize friend 2025-"), "{seen:?}");
}

/// A link that records the notifications the server receives and stops
/// cancellations.
#[derive(Default)]
struct Notes {
    seen: Mutex<Vec<String>>,
}

impl ferromcp::server::Middleware for Notes {
    fn handle(
        &self,
        request: MiddlewareRequest,
        next: Next,
    ) -> ferromcp::BoxFuture<ferromcp::server::MiddlewareResult> {
        Box::pin(next.run(request))
    }

    fn notification(&self, notification: &mut ferromcp::server::MiddlewareNotification) -> bool {
        self.seen.lock().unwrap().push(notification.method.clone());
        notification.method != "notifications/cancelled"
    }
}

/// Notifications a server receives pass through the chain: a link sees a
/// 2025-11-25 client's `notifications/initialized` (HTTP) and a
/// cancellation (in memory), and a link that stops the cancellation keeps
/// the handler running to its end.
#[tokio::test]
async fn notifications_pass_through_the_chain_and_a_link_may_stop_them() {
    let server = server();
    let finished = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = finished.clone();
    server
        .add_tool(
            Tool::new("slow", json!({"type": "object"})),
            move |_ctx, _args: Value| {
                let done = done.clone();
                async move {
                    tokio::time::sleep(std::time::Duration::from_millis(150)).await;
                    done.store(true, std::sync::atomic::Ordering::SeqCst);
                    Ok(ToolOutput::text("done"))
                }
            },
        )
        .unwrap();
    let notes = Arc::new(Notes::default());
    struct Shared(Arc<Notes>);
    impl ferromcp::server::Middleware for Shared {
        fn handle(
            &self,
            request: MiddlewareRequest,
            next: Next,
        ) -> ferromcp::BoxFuture<ferromcp::server::MiddlewareResult> {
            self.0.handle(request, next)
        }
        fn notification(
            &self,
            notification: &mut ferromcp::server::MiddlewareNotification,
        ) -> bool {
            self.0.notification(notification)
        }
    }
    server.add_middleware(Shared(notes.clone()));

    let http = Http::start(server.clone()).await;
    let legacy = Client::connect_http_with(
        &http.url(),
        ClientOptions {
            era: EraPreference::Legacy,
            ..ClientOptions::default()
        },
    )
    .await
    .unwrap();
    legacy
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert!(
        notes
            .seen
            .lock()
            .unwrap()
            .iter()
            .any(|m| m == "notifications/initialized"),
        "{:?}",
        notes.seen.lock().unwrap()
    );

    let client = Client::in_memory(&server);
    let cancel = tokio_util::sync::CancellationToken::new();
    let options = ferromcp::client::CallOptions {
        cancel: Some(cancel.clone()),
        ..Default::default()
    };
    let call = client.call_tool_with("slow", json!({}), &options);
    let stop = async {
        tokio::time::sleep(std::time::Duration::from_millis(30)).await;
        cancel.cancel();
    };
    let (outcome, ()) = tokio::join!(call, stop);
    assert!(outcome.is_err(), "the caller stopped waiting");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        notes
            .seen
            .lock()
            .unwrap()
            .iter()
            .any(|m| m == "notifications/cancelled"),
        "{:?}",
        notes.seen.lock().unwrap()
    );
    assert!(
        finished.load(std::sync::atomic::Ordering::SeqCst),
        "the stopped cancellation never reached the handler"
    );
}
