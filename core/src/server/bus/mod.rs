//! Change events between the replicas of one server (the event bus).
//!
//! A server publishes each change (a list changed, a resource updated, a
//! task's new state) on its own broadcast channel, which its listen streams
//! and legacy sessions read. With an [`EventBus`] the change also goes to
//! every other replica, which puts it on *its* channel: a
//! `subscriptions/listen` stream hears of a change made anywhere.
//!
//! The bus also carries what a task's runner must hear from another
//! replica: the answers of a `tasks/update` and a `tasks/cancel` that
//! arrived where the task does not run.
//!
//! A bus moves opaque payloads; what they mean is this module's business
//! (`wire.rs`), so a bus implementation (Redis, or the in-process
//! [`LocalBus`]) knows nothing of MCP.

#[cfg(feature = "redis")]
pub mod redis;
mod wire;

use std::sync::{Arc, Mutex, Weak};

use tokio::sync::broadcast;

use super::subscriptions::ServerEvent;
use super::tasks::{RunnerEvent, Runners};
use crate::rpc::lock_unpoisoned;

/// The environment variable naming the event bus: `redis://host:port[/db]`
/// (the [`redis::RedisBus`]); unset, a server has no bus (a single process).
pub const EVENT_BUS_ENV: &str = "FERROMCP_EVENT_BUS";

/// What a bus hands to the server attached to it.
#[derive(Debug, Clone, Copy)]
pub enum BusDelivery<'a> {
    /// A payload another replica (or this one) published.
    Message(&'a [u8]),
    /// Payloads may have been lost (the bus was disconnected): the server
    /// tells its listeners that everything they watch may have changed.
    Gap,
}

/// What receives a bus's deliveries: a server attached to it.
pub type BusReceiver = dyn Fn(BusDelivery<'_>) + Send + Sync;

/// Where a bus delivers: the server it is attached to.
pub type BusInbox = Arc<BusReceiver>;

/// A broadcast between the replicas of one server: what one publishes,
/// every attached server receives (its own payloads included; the server
/// skips those).
///
/// Delivery is at most once, in order per publisher. A bus that lost
/// payloads (a dropped connection) says so with [`BusDelivery::Gap`]
/// once it is back; the server turns that into "everything may have
/// changed" for its listeners, which is what a change notification means
/// anyway (re-read).
pub trait EventBus: std::fmt::Debug + Send + Sync + 'static {
    /// Sends `payload` to every attached server. Never blocks: a bus that
    /// cannot send now drops the payload (and its receivers see a gap).
    fn publish(&self, payload: Vec<u8>);
    /// Starts delivering to `inbox`, until the bus is dropped.
    fn attach(&self, inbox: BusInbox);
}

/// The in-process bus: servers in one process sharing it behave as
/// replicas sharing Redis (for tests, and for several `Server`s serving one
/// registry's changes on different ports).
///
/// ```
/// use std::sync::Arc;
/// use ferromcp::server::{LocalBus, Server, ServerOptions};
/// use ferromcp::protocol::Implementation;
///
/// let bus = Arc::new(LocalBus::default());
/// let replica = |name: &str| {
///     let options = ServerOptions { event_bus: Some(bus.clone()), ..ServerOptions::default() };
///     Server::with_options(Implementation::new(name, "1.0"), options)
/// };
/// let (a, b) = (replica("a"), replica("b"));
/// a.notify_resource_updated("file:///x"); // b's listen streams hear it too
/// # drop(b);
/// ```
#[derive(Debug, Default)]
pub struct LocalBus {
    inboxes: Mutex<Vec<Weak<BusReceiver>>>,
}

impl EventBus for LocalBus {
    fn publish(&self, payload: Vec<u8>) {
        let inboxes: Vec<_> = {
            let mut inboxes = lock_unpoisoned(&self.inboxes);
            inboxes.retain(|inbox| inbox.strong_count() > 0);
            inboxes.iter().filter_map(Weak::upgrade).collect()
        };
        for inbox in inboxes {
            inbox(BusDelivery::Message(&payload));
        }
    }

    fn attach(&self, inbox: BusInbox) {
        // Weak: the server holds the inbox (`Attached`), so a dropped
        // server stops receiving without detaching.
        lock_unpoisoned(&self.inboxes).push(Arc::downgrade(&inbox));
    }
}

/// The bus named by [`EVENT_BUS_ENV`], if set; an unusable value is logged
/// (once per process) and leaves the server without a bus.
pub(crate) fn from_env() -> Option<Arc<dyn EventBus>> {
    let url = std::env::var(EVENT_BUS_ENV)
        .ok()
        .filter(|u| !u.is_empty())?;
    match bus_for_url(&url) {
        Ok(bus) => Some(bus),
        Err(error) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                tracing::error!(%error, "{EVENT_BUS_ENV} ignored: this server has no event bus");
            });
            None
        }
    }
}

/// The bus at `url` (`redis://...` or `rediss://...`), for every binding's
/// event bus option.
///
/// ```
/// use ferromcp::server::bus_for_url;
/// assert!(bus_for_url("redis://127.0.0.1:6379").is_ok()); // connects lazily
/// assert!(bus_for_url("nats://x").is_err());
/// ```
pub fn bus_for_url(url: &str) -> Result<Arc<dyn EventBus>, String> {
    if url.starts_with("redis://")
        || url.starts_with("rediss://")
        || url.starts_with("redis+unix://")
    {
        #[cfg(feature = "redis")]
        return Ok(Arc::new(redis::RedisBus::new(url)?));
        #[cfg(not(feature = "redis"))]
        return Err("this build of ferromcp has no Redis support (feature \"redis\")".into());
    }
    Err(format!(
        "unsupported event bus {url:?}: expected a redis:// URL"
    ))
}

/// A server's side of its events: the local channel its listeners read,
/// and the bus to the other replicas, if any.
#[derive(Clone)]
pub(crate) struct Events {
    local: broadcast::Sender<ServerEvent>,
    bus: Option<Arc<Attached>>,
}

/// A server attached to a bus.
struct Attached {
    bus: Arc<dyn EventBus>,
    /// Random per server: its own payloads come back and are skipped.
    origin: String,
    /// Keeps the inbox the bus holds weakly (the [`LocalBus`]) alive.
    _inbox: BusInbox,
}

impl Events {
    pub(crate) fn new(bus: Option<Arc<dyn EventBus>>, runners: Weak<Runners>) -> Events {
        let (local, _) = broadcast::channel(super::subscriptions::EVENT_BUFFER);
        let bus = bus.map(|bus| {
            let origin = super::tasks::new_task_id();
            let inbox = inbox(origin.clone(), local.clone(), runners);
            bus.attach(inbox.clone());
            Arc::new(Attached {
                bus,
                origin,
                _inbox: inbox,
            })
        });
        Events { local, bus }
    }

    /// Tells this server's listeners, and every other replica's.
    pub(crate) fn publish(&self, event: ServerEvent) {
        if let Some(attached) = &self.bus
            && let Some(payload) = wire::event(&attached.origin, &event)
        {
            attached.bus.publish(payload);
        }
        // No receiver just means nobody listens right now.
        let _ = self.local.send(event);
    }

    /// Hands a `tasks/update` or `tasks/cancel` for a task that does not
    /// run here to the replica where it runs; whether there is a bus.
    pub(crate) fn forward_to_runner(&self, task_id: &str, event: &RunnerEvent) -> bool {
        let Some(attached) = &self.bus else {
            return false;
        };
        if let Some(payload) = wire::control(&attached.origin, task_id, event) {
            attached.bus.publish(payload);
        }
        true
    }

    pub(crate) fn subscribe(&self) -> broadcast::Receiver<ServerEvent> {
        self.local.subscribe()
    }
}

/// What the server does with a delivery: another replica's event goes on
/// the local channel (not back on the bus), a control message to the task's
/// runner if it runs here, a gap to every listener.
fn inbox(
    origin: String,
    local: broadcast::Sender<ServerEvent>,
    runners: Weak<Runners>,
) -> BusInbox {
    Arc::new(move |delivery| match delivery {
        BusDelivery::Gap => {
            let _ = local.send(ServerEvent::Gap);
        }
        BusDelivery::Message(payload) => match wire::read(payload) {
            Ok(message) if message.origin == origin => {}
            Ok(message) => match message.body {
                wire::Body::Event(event) => {
                    let _ = local.send(event);
                }
                wire::Body::Control { task_id, event } => {
                    if let Some(runners) = runners.upgrade() {
                        // A runner's inbox is bounded: deliver from a task
                        // rather than block the bus's reader.
                        crate::runtime::spawn_here_or_shared(async move {
                            runners.send(&task_id, event).await;
                        });
                    }
                }
            },
            Err(error) => tracing::warn!(%error, "event bus: unreadable payload skipped"),
        },
    })
}
