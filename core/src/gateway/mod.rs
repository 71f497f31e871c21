//! Composition: another server's tools, prompts, resources and templates
//! served as part of this one ([`Server::mount`]), and a server that is
//! nothing but another one, reached through a client ([`Server::proxy`]).
//!
//! The upstream is a [`Client`], so it may be a process on stdio or a
//! server on HTTP, of either era: the client speaks its era and the server
//! speaks each downstream client's, so a 2025-11-25 client reaches a
//! 2026-07-28-only server through a mount and the reverse. Progress, log
//! messages, cancellation and questions for input (elicitation, sampling,
//! roots) cross with each call (`forward.rs`); list changes and resource
//! updates cross through a listen stream on the upstream (on a 2025-11-25
//! upstream, its session's notifications), which keeps the mirrored lists
//! in step (`mirror.rs`).
//!
//! ```no_run
//! # async fn demo() -> Result<(), ferromcp::Error> {
//! use ferromcp::client::Client;
//! use ferromcp::server::Server;
//! let server = Server::new("gateway", "1.0.0");
//! let weather = Client::connect_http("https://weather.example/mcp").await?;
//! server.mount("weather", weather).await?; // tool `forecast` is now `weather_forecast`
//! server.run_stdio().await?;
//! # Ok(()) }
//! ```

mod forward;
mod mirror;
mod names;

use std::sync::Arc;
use tokio::task::JoinHandle;

use crate::Error;
use crate::client::{Client, ClientOptions, EraPreference, ListKind};
use crate::protocol::{DiscoverResult, Implementation, InputKind, SubscriptionFilter, methods};
use crate::server::{Server, ServerOptions};
use forward::Upstream;
use mirror::Mirror;
use names::Prefix;

/// At most this many resources of an upstream are subscribed to for
/// updates (each is a request to a 2025-11-25 upstream).
const MAX_WATCHED_RESOURCES: usize = 1024;

/// Why `prefix` cannot name a mount, if it cannot (see [`Server::mount`]).
pub fn check_prefix(prefix: &str) -> Result<(), String> {
    names::check(prefix)
}

/// `options` for a client that a mount forwards through: it declares
/// elicitation, sampling and roots, so a 2025-11-25 upstream (whose
/// session fixes the capabilities at `initialize`) may ask for each; the
/// questions asked during a forwarded call go to the downstream client that
/// made it. Over stdio a 2025-11-25 server's questions come apart from any
/// call: one goes to the only forwarded call in flight, and is refused
/// while several are (nothing says whose it is). A 2026-07-28 upstream sees each
/// downstream client's own capabilities with each call, whatever these say.
///
/// ```no_run
/// # async fn demo() -> Result<(), ferromcp::Error> {
/// use ferromcp::client::{Client, ClientOptions};
/// use ferromcp::gateway::upstream_options;
/// let client = Client::connect_http_with("http://127.0.0.1:3000/mcp", upstream_options(ClientOptions::default())).await?;
/// # Ok(()) }
/// ```
pub fn upstream_options(options: ClientOptions) -> ClientOptions {
    let refuse = |kind: InputKind| {
        move |_params: serde_json::Value| async move {
            Err(Error::Mcp(crate::McpError::internal(format!(
                "{} asked while no forwarded call waits: no client to ask",
                kind.method()
            ))))
        }
    };
    options
        .on_elicitation(refuse(InputKind::Elicitation))
        .on_sampling(refuse(InputKind::Sampling))
        .on_roots(refuse(InputKind::Roots))
}

/// One upstream mounted in a server. Dropping it leaves the mount in
/// place (it lives as long as the upstream listens); [`Mount::unmount`]
/// takes it out.
pub struct Mount {
    mirror: Arc<Mirror>,
    watcher: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Mount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mount")
            .field("prefix", &self.mirror.prefix)
            .finish_non_exhaustive()
    }
}

impl Mount {
    /// Stops following the upstream and removes everything the mount
    /// registered (downstream listeners hear of it as a list change).
    pub fn unmount(mut self) {
        if let Some(watcher) = self.watcher.take() {
            watcher.abort();
        }
        self.mirror.clear();
    }
}

impl Server {
    /// Serves `upstream`'s tools, prompts, resources and resource templates
    /// as part of this server, renamed with `prefix` (tool `echo` under
    /// `"alpha"` is `alpha_echo`, resource `file:///a` is
    /// `alpha+file:///a`, skill `skill://git/SKILL.md` is
    /// `skill://alpha/git/SKILL.md`; an empty prefix keeps the names), with
    /// completions of their arguments, its skills, and its tasks (a call
    /// the upstream makes a task is one here too, for a client that
    /// declared the extension). Changes the upstream announces are
    /// followed.
    ///
    /// Fails with [`Error::InvalidDefinition`] when the prefix is not a
    /// letter followed by letters, digits, `-`, `_` and `.` (in URIs a `_`
    /// is written `-`), before anything is sent; otherwise when the upstream
    /// cannot be reached or listed.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), ferromcp::Error> {
    /// use ferromcp::client::{Client, StdioCommand};
    /// use ferromcp::server::Server;
    /// let server = Server::new("gateway", "1.0.0");
    /// let files = Client::connect_stdio(StdioCommand::new("npx", ["-y", "@modelcontextprotocol/server-filesystem", "."])).await?;
    /// let mount = server.mount("files", files).await?;
    /// println!("{:?}", server.tool_names()); // ["files_read_file", ...]
    /// mount.unmount();
    /// # Ok(()) }
    /// ```
    pub async fn mount(&self, prefix: &str, upstream: Client) -> Result<Mount, Error> {
        let prefix_text = prefix;
        let prefix = Prefix::new(prefix).map_err(Error::InvalidDefinition)?;
        let label = if prefix_text.is_empty() {
            String::new()
        } else {
            format!("{prefix_text:?}")
        };
        let discovered = upstream.discover().await?;
        self.mount_discovered(
            prefix,
            Upstream {
                client: upstream,
                label,
            },
            &discovered,
        )
        .await
    }

    /// [`Server::mount`] for another server of this process: `upstream` is
    /// reached over an in-memory pipe (no socket, no process), in the
    /// 2026-07-28 era, with the calls' questions passed on as for any
    /// mount. What every binding's `mount` of a server object does.
    ///
    /// ```
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), ferromcp::Error> {
    /// use ferromcp::protocol::Tool;
    /// use ferromcp::server::{Server, ToolOutput};
    /// let weather = Server::new("weather", "1.0.0");
    /// weather.add_tool(Tool::new("forecast", serde_json::json!({"type": "object"})), |_ctx, _args| async {
    ///     Ok(ToolOutput::text("sunny"))
    /// })?;
    /// let app = Server::new("app", "1.0.0");
    /// app.mount_server("weather", &weather).await?;
    /// assert_eq!(app.tool_names(), ["weather_forecast"]);
    /// # Ok(()) }
    /// ```
    pub async fn mount_server(&self, prefix: &str, upstream: &Server) -> Result<Mount, Error> {
        if Arc::ptr_eq(&self.shared, &upstream.shared) {
            // Each listing would hold the last one's renamed copies, and
            // each change list them again: names without end.
            return Err(Error::InvalidDefinition(
                "a server cannot be mounted in itself".into(),
            ));
        }
        let options = upstream_options(ClientOptions {
            era: EraPreference::Modern,
            ..ClientOptions::default()
        });
        self.mount(prefix, Client::in_memory_with(upstream, options))
            .await
    }

    /// A server that serves what `upstream` serves, under the upstream's
    /// own names, in whichever era each of its clients speaks: what
    /// `ferromcp proxy` serves. Its identity and instructions are the
    /// upstream's.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), ferromcp::Error> {
    /// use ferromcp::client::Client;
    /// use ferromcp::server::Server;
    /// let remote = Client::connect_http("https://mcp.example.com/mcp").await?;
    /// Server::proxy(remote).await?.run_stdio().await?;
    /// # Ok(()) }
    /// ```
    pub async fn proxy(upstream: Client) -> Result<Server, Error> {
        let discovered = upstream.discover().await?;
        let info = discovered
            .meta
            .as_ref()
            .and_then(|meta| meta.server_info.clone())
            .unwrap_or_else(|| Implementation::new("ferromcp-proxy", env!("CARGO_PKG_VERSION")));
        let options = ServerOptions {
            instructions: discovered.instructions.clone(),
            ..ServerOptions::default()
        };
        let server = Server::with_options(info, options);
        let upstream = Upstream {
            client: upstream,
            label: String::new(),
        };
        // Unprefixed: a plain tools/call can go upstream as it is, over a
        // transport that adds nothing per call (a relaying server reads its
        // calls' params for the relay, which would be wasted on the others).
        if upstream.client.may_relay() {
            server.set_relay(Arc::new(forward::Relayed {
                upstream: upstream.clone(),
                offers_tasks: mirror::Offers::from(&discovered.capabilities).tasks,
            }));
        }
        server
            .mount_discovered(
                Prefix::new("").map_err(Error::InvalidDefinition)?,
                upstream,
                &discovered,
            )
            .await?;
        Ok(server)
    }

    async fn mount_discovered(
        &self,
        prefix: Prefix,
        upstream: Upstream,
        discovered: &DiscoverResult,
    ) -> Result<Mount, Error> {
        let capabilities = &discovered.capabilities;
        let offers = mirror::Offers::from(capabilities);
        let mirror = Arc::new(Mirror::new(self, upstream, prefix, offers));
        if capabilities.tools.is_some() {
            mirror.sync(ListKind::Tools).await?;
        }
        if capabilities.prompts.is_some() {
            mirror.sync(ListKind::Prompts).await?;
        }
        if capabilities.resources.is_some() {
            mirror.sync(ListKind::Resources).await?;
            mirror.sync(ListKind::ResourceTemplates).await?;
        }
        mirror.sync(ListKind::Skills).await?;
        let filter = Watch::from(discovered);
        let watcher = filter.wanted().then(|| {
            let server = mirror.server.clone();
            let following = follow(mirror.clone(), filter);
            // Following ends with the server: a dropped server (a proxy
            // nobody serves any more) lets its upstream go.
            tokio::spawn(async move {
                tokio::select! {
                    () = following => {}
                    () = server.dropped() => {}
                }
            })
        });
        Ok(Mount { mirror, watcher })
    }
}

/// What a mount follows of its upstream: the list changes it announces and,
/// when it takes subscriptions, updates of its resources.
#[derive(Clone, Copy)]
struct Watch {
    tools: bool,
    prompts: bool,
    resources: bool,
    updates: bool,
}

impl From<&DiscoverResult> for Watch {
    fn from(discovered: &DiscoverResult) -> Watch {
        let caps = &discovered.capabilities;
        let resources = caps.resources.as_ref();
        Watch {
            tools: caps.tools.as_ref().and_then(|t| t.list_changed) == Some(true),
            prompts: caps.prompts.as_ref().and_then(|p| p.list_changed) == Some(true),
            resources: resources.and_then(|r| r.list_changed) == Some(true),
            updates: resources.and_then(|r| r.subscribe) == Some(true),
        }
    }
}

impl Watch {
    fn wanted(&self) -> bool {
        self.tools || self.prompts || self.resources || self.updates
    }

    fn filter(&self, mirror: &Mirror) -> SubscriptionFilter {
        let on = |flag: bool| flag.then_some(true);
        SubscriptionFilter {
            tools_list_changed: on(self.tools),
            prompts_list_changed: on(self.prompts),
            resources_list_changed: on(self.resources),
            resource_subscriptions: self.updates.then(|| {
                let mut uris = mirror.resource_uris();
                uris.sort();
                uris.truncate(MAX_WATCHED_RESOURCES);
                uris
            }),
        }
    }
}

/// Follows the upstream's changes for as long as it lets the mount listen:
/// a list change re-reads that list; a resource update is announced under
/// the downstream URI; a change to the resource list listens again so the
/// new resources' updates are heard.
async fn follow(mirror: Arc<Mirror>, watch: Watch) {
    let mut failures = 0u32;
    loop {
        let filter = watch.filter(&mirror);
        let watched = filter.resource_subscriptions.clone();
        let mut subscription = match mirror.upstream.client.listen(filter).await {
            Ok(subscription) => subscription,
            Err(error) => {
                failures += 1;
                tracing::warn!(upstream = %mirror.upstream.label, %error, "cannot follow the upstream's changes");
                if failures >= 5 {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_secs(1 << failures)).await;
                continue;
            }
        };
        failures = 0;
        // What changed between the last reading and this stream's
        // acknowledgement was not heard: read the lists again.
        mirror.upstream.client.clear_cache();
        for (kind, watched_kind) in [
            (ListKind::Tools, watch.tools),
            (ListKind::Prompts, watch.prompts),
            (ListKind::Resources, watch.resources),
            (ListKind::ResourceTemplates, watch.resources),
            (ListKind::Skills, watch.resources),
        ] {
            if watched_kind && let Err(error) = mirror.sync(kind).await {
                tracing::warn!(upstream = %mirror.upstream.label, %error, "cannot re-read the upstream's list");
            }
        }
        while let Some(note) = subscription.next().await {
            let kind = match note.method.as_str() {
                methods::NOTIFICATIONS_TOOLS_LIST_CHANGED => ListKind::Tools,
                methods::NOTIFICATIONS_PROMPTS_LIST_CHANGED => ListKind::Prompts,
                methods::NOTIFICATIONS_RESOURCES_LIST_CHANGED => ListKind::Resources,
                methods::NOTIFICATIONS_RESOURCES_UPDATED => {
                    if let Some(uri) = note.params.get("uri").and_then(|u| u.as_str())
                        && let Some(server) = mirror.server.upgrade()
                    {
                        server.notify_resource_updated(&mirror.prefix.uri(uri));
                    }
                    continue;
                }
                _ => continue,
            };
            mirror.upstream.client.clear_cache();
            let synced = match kind {
                // Skills are resources: their list changes with theirs.
                ListKind::Resources => {
                    let mut synced = Ok(());
                    for kind in [
                        ListKind::Resources,
                        ListKind::ResourceTemplates,
                        ListKind::Skills,
                    ] {
                        synced = synced.and(mirror.sync(kind).await);
                    }
                    synced
                }
                kind => mirror.sync(kind).await,
            };
            if let Err(error) = synced {
                tracing::warn!(upstream = %mirror.upstream.label, %error, "cannot re-read the upstream's list");
            }
            if kind == ListKind::Resources && watch.updates {
                let mut now = mirror.resource_uris();
                now.sort();
                now.truncate(MAX_WATCHED_RESOURCES);
                if Some(now) != watched {
                    break;
                }
            }
        }
        if subscription.ended().is_some_and(|ended| ended.is_err()) {
            tracing::warn!(upstream = %mirror.upstream.label, ended = ?subscription.ended(), "the upstream's change stream ended");
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        }
    }
}
