//! Replicas of one server sharing an event bus and a task store, in one
//! process: two `Server`s on the in-process `LocalBus` and one
//! `MemoryTaskStore`, each behind its own HTTP listener, with a client on
//! each. What tests/scale proves with Redis and nginx, at unit-test speed:
//! a change made on one replica reaches a listen stream on the other, a
//! task started on one is answered and cancelled through the other, a gap
//! on the bus makes listeners re-read, and a replica's shutdown drains.

use std::sync::Arc;
use std::time::Duration;

use ferromcp::client::{CallOptions, Client, ClientOptions};
use ferromcp::protocol::{Implementation, Resource, SubscriptionFilter, Tool};
use ferromcp::server::{
    BusDelivery, BusInbox, EventBus, HandlerError, InputKind, LocalBus, MemoryTaskLimits,
    MemoryTaskStore, RequestContext, ResourceOutput, SealKey, Server, ServerOptions, TaskOptions,
    TaskStart, TaskSupport, ToolOutput, ToolTaskOptions,
};
use ferromcp::transport::http::{HttpOptions, HttpServer};
use ferromcp_testkit::Flag;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(10);

/// One replica: its server, its URL, and what stops it.
struct Replica {
    server: Server,
    url: String,
    stop: CancellationToken,
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// Replicas share their seal key: a task id (or cursor) one made, the
/// other opens.
fn options(bus: Arc<dyn EventBus>, store: Arc<MemoryTaskStore>) -> ServerOptions {
    ServerOptions {
        seal_key: SealKey::from_secret(b"replicas-test-seal-key"),
        event_bus: Some(bus),
        tasks: TaskOptions {
            store,
            ..TaskOptions::default()
        },
        ..ServerOptions::default()
    }
}

/// `wait` (a task that runs until cancelled, flagging when it stops) and
/// `ask` (a task that asks a question).
fn server(name: &str, options: ServerOptions, cancelled: Flag) -> Server {
    let server = Server::with_options(Implementation::new(name, "1.0.0"), options);
    let task = ToolTaskOptions {
        support: TaskSupport::Optional,
        start: TaskStart::OnCall,
    };
    // Resources are offered, so resource subscriptions are honoured.
    server
        .add_resource(
            Resource::new("mem://watched", "watched"),
            |_ctx, _req| async { Ok(ResourceOutput::Text("watched".into())) },
        )
        .unwrap();
    server
        .add_tool_with(
            Tool::new("wait", json!({"type": "object"})),
            task,
            move |ctx: RequestContext, _args: Value| {
                let cancelled = cancelled.clone();
                async move {
                    // A cancelled task's handler is dropped (or sees its
                    // token cancelled first): either way the flag is set.
                    let _cancelled = cancelled.on_drop();
                    ctx.cancellation_token().cancelled().await;
                    Ok::<_, HandlerError>(ToolOutput::text("cancelled"))
                }
            },
        )
        .unwrap();
    server
        .add_tool_with(
            Tool::new("ask", json!({"type": "object"})),
            task,
            |ctx: RequestContext, _args| async move {
                let answer = ctx
                    .ask(
                        Some("name"),
                        InputKind::Elicitation,
                        json!({"mode": "form", "message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}),
                    )
                    .await?;
                Ok::<_, HandlerError>(ToolOutput::text(format!(
                    "hello {}",
                    answer["content"]["name"].as_str().unwrap_or("?")
                )))
            },
        )
        .unwrap();
    server
}

async fn serve(server: Server, http: HttpOptions) -> Replica {
    let stop = http.shutdown.clone();
    let bound = HttpServer::bind(server.clone(), http).await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        bound.local_addr().unwrap().port()
    );
    tokio::spawn(bound.run());
    Replica { server, url, stop }
}

async fn replicas(bus: Arc<dyn EventBus>) -> (Replica, Replica, Flag) {
    let store = Arc::new(MemoryTaskStore::new(MemoryTaskLimits::default()));
    let cancelled = Flag::default();
    let a = server("a", options(bus.clone(), store.clone()), cancelled.clone());
    let b = server("b", options(bus, store), cancelled.clone());
    (
        serve(a, HttpOptions::localhost(0)).await,
        serve(b, HttpOptions::localhost(0)).await,
        cancelled,
    )
}

/// A client that declares elicitation (the `ask` task's question).
async fn client(url: &str) -> Client {
    let options = ClientOptions::default()
        .on_elicitation(|_params| async { Ok(json!({"action": "decline"})) });
    Client::connect_http_with(url, options).await.unwrap()
}

#[tokio::test]
async fn a_change_on_one_replica_reaches_a_listen_stream_on_the_other() {
    let (a, b, _) = replicas(Arc::new(LocalBus::default())).await;
    let on_b = client(&b.url).await;
    let mut sub = on_b
        .listen(SubscriptionFilter {
            resource_subscriptions: Some(vec!["mem://watched".into()]),
            ..SubscriptionFilter::default()
        })
        .await
        .unwrap();
    a.server.notify_resource_updated("mem://other");
    a.server.notify_resource_updated("mem://watched");
    let note = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(note.method, "notifications/resources/updated");
    assert_eq!(note.params["uri"], "mem://watched");
    // Published once: B heard it from the bus, not also from itself.
    b.server.notify_resource_updated("mem://watched");
    let note = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(note.params["uri"], "mem://watched");
    assert!(
        tokio::time::timeout(Duration::from_millis(300), sub.next())
            .await
            .is_err(),
        "one update each, no echo"
    );
}

#[tokio::test]
async fn a_task_started_on_one_replica_is_read_answered_and_cancelled_through_the_other() {
    let (a, b, cancelled) = replicas(Arc::new(LocalBus::default())).await;
    let (on_a, on_b) = (client(&a.url).await, client(&b.url).await);

    // Answered through B: the answer crosses the bus to A's runner.
    let started = on_a
        .start_tool_task("ask", json!({}), &CallOptions::default())
        .await
        .unwrap();
    let id = started.id().unwrap().to_owned();
    let through_b = on_b.tool_task(&id);
    let mut state = Value::Null;
    for _ in 0..200 {
        state = through_b.refresh().await.unwrap();
        if state["status"] == "input_required" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(state["status"], "input_required", "{state}");
    let key = state["inputRequests"]
        .as_object()
        .and_then(|r| r.keys().next().cloned())
        .unwrap();
    let mut answers = Map::new();
    answers.insert(key, json!({"action": "accept", "content": {"name": "Ada"}}));
    through_b.respond(answers).await.unwrap();
    let result = tokio::time::timeout(WAIT, through_b.result())
        .await
        .unwrap()
        .unwrap();
    let text = serde_json::to_value(&result.content[0]).unwrap();
    assert_eq!(text["text"], "hello Ada");

    // Cancelled through B: A's handler sees its cancellation.
    let started = on_a
        .start_tool_task("wait", json!({}), &CallOptions::default())
        .await
        .unwrap();
    let through_b = on_b.tool_task(started.id().unwrap());
    assert_eq!(through_b.refresh().await.unwrap()["status"], "working");
    through_b.cancel().await.unwrap();
    cancelled
        .wait("the handler on A to see the cancel from B")
        .await;
    let mut status = Value::Null;
    for _ in 0..200 {
        status = through_b.refresh().await.unwrap()["status"].clone();
        if status == "cancelled" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, "cancelled");
}

/// A bus that delivers nothing but gaps, on demand.
#[derive(Default)]
struct GappyBus {
    inboxes: std::sync::Mutex<Vec<BusInbox>>,
}

impl std::fmt::Debug for GappyBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("GappyBus")
    }
}

impl GappyBus {
    fn gap(&self) {
        for inbox in self.inboxes.lock().unwrap().iter() {
            inbox(BusDelivery::Gap);
        }
    }
}

impl EventBus for GappyBus {
    fn publish(&self, _payload: Vec<u8>) {}
    fn attach(&self, inbox: BusInbox) {
        self.inboxes.lock().unwrap().push(inbox);
    }
}

#[tokio::test]
async fn after_a_gap_on_the_bus_a_listener_is_told_everything_it_watches_may_have_changed() {
    let bus = Arc::new(GappyBus::default());
    let (a, _b, _) = replicas(bus.clone()).await;
    let on_a = client(&a.url).await;
    let mut sub = on_a
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            resource_subscriptions: Some(vec!["mem://one".into(), "mem://two".into()]),
            ..SubscriptionFilter::default()
        })
        .await
        .unwrap();
    bus.gap();
    let mut heard = Vec::new();
    for _ in 0..3 {
        let note = tokio::time::timeout(WAIT, sub.next())
            .await
            .unwrap()
            .unwrap();
        heard.push(format!(
            "{} {}",
            note.method,
            note.params["uri"].as_str().unwrap_or("")
        ));
    }
    heard.sort();
    assert_eq!(
        heard,
        [
            "notifications/resources/updated mem://one",
            "notifications/resources/updated mem://two",
            "notifications/tools/list_changed ",
        ]
    );
}

#[tokio::test]
async fn a_replica_shutting_down_turns_unready_then_stops_accepting() {
    let server = Server::new("health", "1.0.0");
    let http = HttpOptions {
        health: true,
        drain_delay: Duration::from_millis(600),
        ..HttpOptions::localhost(0)
    };
    let replica = serve(server, http).await;
    let base = replica.url.trim_end_matches("/mcp").to_owned();
    let get = |path: &str| {
        let url = format!("{base}{path}");
        async move {
            let (status, body) = raw_get(&url).await?;
            Some((status, body))
        }
    };
    assert_eq!(
        get("/healthz").await.unwrap(),
        (200, r#"{"status":"ok"}"#.to_owned())
    );
    assert_eq!(
        get("/readyz").await.unwrap(),
        (200, r#"{"status":"ready"}"#.to_owned())
    );
    replica.stop.cancel();
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Draining: still serving, but unready.
    assert_eq!(
        get("/readyz").await.unwrap(),
        (503, r#"{"status":"draining"}"#.to_owned())
    );
    assert_eq!(get("/healthz").await.unwrap().0, 200);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert!(
        get("/healthz").await.is_none(),
        "closed after the drain delay"
    );
}

/// A GET over a fresh connection: (status, body), or `None` if refused.
async fn raw_get(url: &str) -> Option<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://")?;
    let (host, path) = rest.split_at(rest.find('/')?);
    let mut stream = tokio::net::TcpStream::connect(host).await.ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await.ok()?;
    let status = response.get(9..12)?.parse().ok()?;
    let body = response.split("\r\n\r\n").nth(1)?.to_owned();
    Some((status, body))
}

/// A replica that goes away and another that takes its address: the
/// client's listen stream is opened again with its filter (and its reader
/// told what may have changed), and an idempotent call made while nobody
/// answers succeeds once someone does.
#[tokio::test]
async fn the_client_listens_again_and_resends_idempotent_calls_when_a_replica_goes_away() {
    let bus: Arc<dyn EventBus> = Arc::new(LocalBus::default());
    let store = Arc::new(MemoryTaskStore::new(MemoryTaskLimits::default()));
    let first = serve(
        server(
            "first",
            options(bus.clone(), store.clone()),
            Flag::default(),
        ),
        HttpOptions::localhost(0),
    )
    .await;
    let port: u16 = first
        .url
        .trim_end_matches("/mcp")
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap();
    let client = client(&first.url).await;
    let mut sub = client
        .listen(SubscriptionFilter {
            resource_subscriptions: Some(vec!["mem://watched".into()]),
            ..SubscriptionFilter::default()
        })
        .await
        .unwrap();
    first.server.notify_resource_updated("mem://watched");
    assert!(
        tokio::time::timeout(WAIT, sub.next())
            .await
            .unwrap()
            .is_some()
    );

    // The replica shuts down: its stream ends gracefully, its port closes.
    drop(first);
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Meanwhile a list call is sent, refused, and sent again.
    let listing = tokio::spawn({
        let client = client.clone();
        async move { client.list_all_resources().await }
    });
    tokio::time::sleep(Duration::from_millis(400)).await;
    // Another replica takes the address.
    let second = serve(
        server("second", options(bus, store), Flag::default()),
        HttpOptions::localhost(port),
    )
    .await;
    let resources = tokio::time::timeout(WAIT, listing)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(resources.len(), 1);
    // Listening again, the reader is told its resource may have changed...
    let note = tokio::time::timeout(WAIT, sub.next()).await.unwrap();
    let note = note.unwrap_or_else(|| panic!("ended: {:?}", sub.ended()));
    assert_eq!(note.method, "notifications/resources/updated");
    assert_eq!(note.params["uri"], "mem://watched");
    // ...and hears later changes, from the new replica.
    tokio::time::sleep(Duration::from_millis(100)).await;
    second.server.notify_resource_updated("mem://watched");
    let note = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(note.params["uri"], "mem://watched");
    assert!(sub.ended().is_none());
}

/// A legacy (2025-11-25) session hears of a gap too: its GET stream gets
/// the list changes of what the server offers.
#[tokio::test]
async fn after_a_gap_a_legacy_session_is_told_its_lists_may_have_changed() {
    let bus = Arc::new(GappyBus::default());
    let (a, _b, _) = replicas(bus.clone()).await;
    let heard = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let record = heard.clone();
    let options = ClientOptions {
        era: ferromcp::client::EraPreference::Legacy,
        on_notification: Some(Arc::new(move |method: &str, _params: &Value| {
            record.lock().unwrap().push(method.to_owned());
        })),
        ..ClientOptions::default()
    };
    let client = Client::connect_http_with(&a.url, options).await.unwrap();
    assert!(client.list_all_tools().await.is_ok());
    let deadline = std::time::Instant::now() + WAIT;
    // The session's GET stream opens in the background: gap until heard.
    loop {
        bus.gap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let heard = heard.lock().unwrap().clone();
        if heard
            .iter()
            .any(|m| m == "notifications/tools/list_changed")
        {
            assert!(
                heard
                    .iter()
                    .any(|m| m == "notifications/resources/list_changed"),
                "{heard:?}"
            );
            // Prompts are not offered by this server: not announced.
            assert!(
                !heard
                    .iter()
                    .any(|m| m == "notifications/prompts/list_changed"),
                "{heard:?}"
            );
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{heard:?}");
    }
}
