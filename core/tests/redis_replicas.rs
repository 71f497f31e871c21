//! Replicas sharing a real Redis: the `RedisBus` and the `RedisTaskStore`
//! against a `redis-server` this test starts on a free port (Debian's
//! `redis-server`, installed by `make system-tools-scale`). Ignored by
//! default; `make test-scale` runs it:
//!
//!     cargo test -p ferromcp --test redis_replicas -- --ignored
//!
//! - a change on one replica reaches a listen stream on another through
//!   Redis pub/sub, with no echo;
//! - Redis restarted: the bus reconnects, listeners are told everything
//!   they watch may have changed (the gap), and later changes flow again;
//! - a task created on one replica is read and cancelled through another;
//! - a task whose replica died ends as failed, with an error saying so.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use ferromcp::client::{CallOptions, Client, ClientOptions};
use ferromcp::protocol::tasks::TaskStatus;
use ferromcp::protocol::{Implementation, Resource, SubscriptionFilter, Tool};
use ferromcp::server::{
    HandlerError, RedisBus, RedisTaskOptions, RedisTaskStore, RequestContext, ResourceOutput,
    SealKey, Server, ServerOptions, TaskOptions, TaskStart, TaskStore, TaskStoreError, TaskSupport,
    ToolOutput, ToolTaskOptions,
};
use ferromcp::transport::http::{HttpOptions, HttpServer};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(15);

/// A `redis-server` on `port`, without persistence, killed on drop.
struct Redis {
    child: Child,
    port: u16,
}

impl Redis {
    fn start(port: u16) -> Redis {
        // Nothing is written: no snapshots, no append-only file.
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .args(["--dir", &std::env::temp_dir().to_string_lossy()])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server (make system-tools-scale installs it)");
        let redis = Redis { child, port };
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return redis;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("redis-server did not start on port {port}");
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

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

/// A replica on `redis`: its own bus connection and store client, as
/// another process would have.
async fn replica(name: &str, redis: &str, prefix: &str) -> Replica {
    let options = ServerOptions {
        // Shared by the replicas: a task id one made, the other opens.
        seal_key: SealKey::from_secret(b"redis-replicas-test-seal-key"),
        event_bus: Some(Arc::new(RedisBus::on_channel(redis, prefix).unwrap())),
        tasks: TaskOptions {
            store: Arc::new(store(redis, prefix, name)),
            ..TaskOptions::default()
        },
        ..ServerOptions::default()
    };
    let server = Server::with_options(Implementation::new(name, "1.0.0"), options);
    server
        .add_resource(
            Resource::new("mem://watched", "watched"),
            |_ctx, _req| async { Ok(ResourceOutput::Text("watched".into())) },
        )
        .unwrap();
    server
        .add_tool_with(
            Tool::new("wait", json!({"type": "object"})),
            ToolTaskOptions {
                support: TaskSupport::Optional,
                start: TaskStart::OnCall,
            },
            |ctx: RequestContext, _args: Value| async move {
                ctx.cancellation_token().cancelled().await;
                Ok::<_, HandlerError>(ToolOutput::text("cancelled"))
            },
        )
        .unwrap();
    let http = HttpOptions::localhost(0);
    let stop = http.shutdown.clone();
    let bound = HttpServer::bind(server.clone(), http).await.unwrap();
    let url = format!(
        "http://127.0.0.1:{}/mcp",
        bound.local_addr().unwrap().port()
    );
    tokio::spawn(bound.run());
    Replica { server, url, stop }
}

fn store(redis: &str, prefix: &str, replica: &str) -> RedisTaskStore {
    RedisTaskStore::new(
        redis,
        RedisTaskOptions {
            prefix: format!("{prefix}:"),
            replica: Some(replica.into()),
            ..RedisTaskOptions::default()
        },
    )
    .unwrap()
}

async fn client(url: &str) -> Client {
    Client::connect_http_with(url, ClientOptions::default())
        .await
        .unwrap()
}

fn watch() -> SubscriptionFilter {
    SubscriptionFilter {
        resource_subscriptions: Some(vec!["mem://watched".into()]),
        ..SubscriptionFilter::default()
    }
}

/// Publishes on `from` until `sub` hears it: the bus connects lazily, so
/// the first publish may precede the subscription.
async fn until_heard(from: &Server, sub: &mut ferromcp::client::Subscription) -> Value {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        from.notify_resource_updated("mem://watched");
        if let Ok(Some(note)) = tokio::time::timeout(Duration::from_millis(200), sub.next()).await {
            return note.params;
        }
        assert!(tokio::time::Instant::now() < deadline, "never heard");
    }
}

#[tokio::test]
#[ignore = "needs redis-server: make test-scale"]
async fn changes_cross_replicas_through_redis_and_survive_a_redis_restart() {
    let port = free_port();
    let mut redis = Redis::start(port);
    let (a, b) = (
        replica("a", &redis.url(), "bus-test").await,
        replica("b", &redis.url(), "bus-test").await,
    );
    let on_b = client(&b.url).await;
    let mut sub = on_b.listen(watch()).await.unwrap();
    assert_eq!(
        until_heard(&a.server, &mut sub).await["uri"],
        "mem://watched"
    );
    // Drain what the warm-up loop sent, then one change, heard once.
    while tokio::time::timeout(Duration::from_millis(300), sub.next())
        .await
        .is_ok()
    {}
    a.server.notify_resource_updated("mem://watched");
    assert!(
        tokio::time::timeout(WAIT, sub.next())
            .await
            .unwrap()
            .is_some()
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(300), sub.next())
            .await
            .is_err(),
        "heard once"
    );

    // Redis restarts: the bus finds out, reconnects, resubscribes, and
    // the listener is told its resource may have changed (the gap).
    drop(redis);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    redis = Redis::start(port);
    let note = tokio::time::timeout(WAIT, sub.next())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(note.params["uri"], "mem://watched", "the gap's catch-up");
    // And later changes flow again.
    while tokio::time::timeout(Duration::from_millis(300), sub.next())
        .await
        .is_ok()
    {}
    assert_eq!(
        until_heard(&a.server, &mut sub).await["uri"],
        "mem://watched"
    );
    drop(redis);
}

#[tokio::test]
#[ignore = "needs redis-server: make test-scale"]
async fn a_task_is_shared_by_replicas_and_fails_clearly_when_its_replica_dies() {
    let redis = Redis::start(free_port());
    let (a, b) = (
        replica("a", &redis.url(), "task-test").await,
        replica("b", &redis.url(), "task-test").await,
    );
    let (on_a, on_b) = (client(&a.url).await, client(&b.url).await);
    let started = on_a
        .start_tool_task("wait", json!({}), &CallOptions::default())
        .await
        .unwrap();
    let through_b = on_b.tool_task(started.id().unwrap());
    assert_eq!(through_b.refresh().await.unwrap()["status"], "working");
    through_b.cancel().await.unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let state = started.refresh().await.unwrap();
        if state["status"] == "cancelled" {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{state}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A replica that dies: its store (and heartbeat) live on a runtime of
    // their own, which is then shut down, as the process would be.
    let url = redis.url();
    let task_id = std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async {
            let ghost = store(&url, "task-test", "ghost");
            let task = ferromcp::server::StoredTask {
                task: serde_json::from_value(json!({
                    "taskId": "ghost-task-0001", "status": "working",
                    "createdAt": "2026-12-05T00:00:00Z", "lastUpdatedAt": "2026-12-05T00:00:00Z",
                    "ttlMs": null
                }))
                .unwrap(),
                owner: None,
                keep_until_ms: None,
                revision: 0,
            };
            ghost.create(task).await.unwrap();
            "ghost-task-0001".to_owned()
        })
    })
    .join()
    .unwrap();
    let reader = store(&redis.url(), "task-test", "reader");
    assert_eq!(
        reader.get(task_id.clone(), None).await.unwrap().task.status,
        TaskStatus::Working,
        "its replica's heartbeat is still fresh"
    );
    tokio::time::sleep(Duration::from_secs(6)).await;
    let ended = reader.get(task_id.clone(), None).await.unwrap();
    assert_eq!(ended.task.status, TaskStatus::Failed);
    let message = ended.task.error.unwrap()["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("ghost") && message.contains("stopped"),
        "{message}"
    );
    // Someone else's task stays unseen.
    assert_eq!(
        reader
            .get(task_id, Some("mallory".into()))
            .await
            .unwrap_err(),
        TaskStoreError::NotFound
    );
}
