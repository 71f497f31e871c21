//! The event bus on Redis pub/sub.
//!
//! Why pub/sub and not streams: a change notification means "re-read",
//! so a replica that missed some needs one catch-up, not a replay. Pub/sub
//! keeps nothing in Redis (no stream to trim, no consumer offsets per
//! replica) and costs one `PUBLISH` per change. What it loses, it loses
//! while a replica is disconnected from Redis; the replica knows when that
//! happened, and once it is subscribed again it delivers a
//! [`BusDelivery::Gap`]: every listen stream then sends the list changes
//! and resource updates it watches, and the current state of its tasks.
//!
//! One multiplexed RESP3 connection (redis' `ConnectionManager`, which
//! reconnects and resubscribes by itself) carries both the publishes and
//! the subscription's pushes. A ping every second finds a dead connection
//! even when nothing is published.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{IntoConnectionInfo, ProtocolVersion, PushInfo, PushKind};
use tokio::sync::mpsc;

use super::{BusDelivery, BusInbox, EventBus};
use crate::rpc::lock_unpoisoned;

/// The channel every replica of a server publishes on, unless named.
pub(crate) const DEFAULT_CHANNEL: &str = "ferromcp:events";

/// Payloads waiting to be published; past this, new ones are dropped (and
/// counted as a gap for the replicas: they will re-list).
const OUTBOX: usize = 4096;

/// How often the connection is checked while nothing is published.
const PING_EVERY: Duration = Duration::from_secs(1);

/// An [`EventBus`] on Redis pub/sub. Connects lazily, on first attach or
/// publish, from the runtime it is first used in.
///
/// ```no_run
/// use std::sync::Arc;
/// use ferromcp::server::{RedisBus, ServerOptions};
/// let bus = RedisBus::new("redis://127.0.0.1:6379")?;
/// let options = ServerOptions { event_bus: Some(Arc::new(bus)), ..ServerOptions::default() };
/// # Ok::<(), String>(())
/// ```
pub struct RedisBus {
    client: redis::Client,
    channel: String,
    /// Where deliveries go: every attached server.
    inboxes: Arc<Mutex<Vec<BusInbox>>>,
    /// The connection's queue of payloads to publish, once started.
    outbox: OnceLock<mpsc::Sender<Vec<u8>>>,
}

impl std::fmt::Debug for RedisBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisBus")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

impl RedisBus {
    /// A bus on the Redis at `url` (`redis://[user:password@]host:port[/db]`),
    /// on the channel `ferromcp:events`. Checks the URL only; connects when used.
    pub fn new(url: &str) -> Result<RedisBus, String> {
        RedisBus::on_channel(url, DEFAULT_CHANNEL)
    }

    /// Like [`RedisBus::new`] on another channel (several servers sharing
    /// one Redis, each with its replicas).
    pub fn on_channel(url: &str, channel: &str) -> Result<RedisBus, String> {
        Ok(RedisBus {
            client: client_for(url)?,
            channel: channel.to_owned(),
            inboxes: Arc::default(),
            outbox: OnceLock::new(),
        })
    }

    /// The connection's queue, starting the connection on first use.
    fn outbox(&self) -> &mpsc::Sender<Vec<u8>> {
        self.outbox.get_or_init(|| {
            let (outbox, pending) = mpsc::channel(OUTBOX);
            let connection = Connection {
                client: self.client.clone(),
                channel: self.channel.clone(),
                inboxes: self.inboxes.clone(),
            };
            crate::runtime::spawn_here_or_shared(connection.run(pending));
            outbox
        })
    }
}

/// The URL as a client speaking RESP3 (pushes on the same connection).
fn client_for(url: &str) -> Result<redis::Client, String> {
    if url.starts_with("rediss://") {
        return Err(
            "rediss:// (Redis over TLS) is not supported yet: use redis:// on a private network"
                .into(),
        );
    }
    let info = url
        .into_connection_info()
        .map_err(|e| format!("invalid Redis URL {url:?}: {e}"))?;
    let redis = info
        .redis_settings()
        .clone()
        .set_protocol(ProtocolVersion::RESP3);
    let info = info.set_redis_settings(redis);
    redis::Client::open(info).map_err(|e| format!("invalid Redis URL {url:?}: {e}"))
}

impl EventBus for RedisBus {
    fn publish(&self, payload: Vec<u8>) {
        if self.outbox().try_send(payload).is_err() {
            tracing::warn!("event bus: Redis is behind, a change was not published");
        }
    }

    fn attach(&self, inbox: BusInbox) {
        lock_unpoisoned(&self.inboxes).push(inbox);
        self.outbox();
    }
}

/// The connection's task: what it needs.
struct Connection {
    client: redis::Client,
    channel: String,
    inboxes: Arc<Mutex<Vec<BusInbox>>>,
}

impl Connection {
    fn deliver(&self, delivery: BusDelivery<'_>) {
        let inboxes = lock_unpoisoned(&self.inboxes).clone();
        for inbox in inboxes {
            inbox(delivery);
        }
    }

    /// Connects (retrying until Redis answers), subscribes, then publishes
    /// what is queued and delivers what arrives, until the bus is dropped.
    async fn run(self, mut pending: mpsc::Receiver<Vec<u8>>) {
        let (pushes, mut pushed) = mpsc::unbounded_channel::<PushInfo>();
        let config = ConnectionManagerConfig::new()
            .set_push_sender(pushes)
            .set_automatic_resubscription()
            .set_connection_timeout(Some(Duration::from_secs(2)))
            .set_response_timeout(Some(Duration::from_secs(2)))
            .set_max_delay(Duration::from_secs(1));
        let mut backoff = Duration::from_millis(100);
        let mut connection: ConnectionManager = loop {
            match self
                .client
                .get_connection_manager_with_config(config.clone())
                .await
            {
                Ok(connection) => break connection,
                Err(error) => {
                    tracing::warn!(%error, "event bus: Redis unreachable, retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(2));
                }
            }
        };
        let mut subscribed = false;
        // Set when the connection dropped: the next subscription
        // confirmation ends the gap.
        let mut lost = false;
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                payload = pending.recv() => {
                    let Some(payload) = payload else { return };
                    let published: redis::RedisResult<i64> = redis::cmd("PUBLISH")
                        .arg(&self.channel)
                        .arg(payload)
                        .query_async(&mut connection)
                        .await;
                    if let Err(error) = published {
                        tracing::warn!(%error, "event bus: a change was not published");
                        lost = true;
                    }
                }
                push = pushed.recv() => {
                    let Some(push) = push else { return };
                    match push.kind {
                        PushKind::Message => {
                            if let Some(redis::Value::BulkString(payload)) = push.data.get(1) {
                                self.deliver(BusDelivery::Message(payload));
                            }
                        }
                        PushKind::Subscribe if lost => {
                            lost = false;
                            tracing::info!("event bus: Redis is back; listeners re-read what they watch");
                            self.deliver(BusDelivery::Gap);
                        }
                        PushKind::Disconnection => {
                            lost = true;
                            tracing::warn!("event bus: lost Redis; reconnecting");
                        }
                        _ => {}
                    }
                }
                _ = ping.tick() => {
                    if !subscribed {
                        match connection.subscribe(&self.channel).await {
                            Ok(()) => subscribed = true,
                            Err(error) => tracing::warn!(%error, "event bus: subscribing failed, retrying"),
                        }
                        continue;
                    }
                    let pong: redis::RedisResult<String> =
                        redis::cmd("PING").query_async(&mut connection).await;
                    if pong.is_err() {
                        lost = true;
                    }
                }
            }
        }
    }
}
