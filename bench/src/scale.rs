//! Scale-out figures (issue 29), measured on the Rust everything-server and
//! a real `redis-server`:
//!
//! - *bus overhead*: the HTTP echo load of the server rows on one replica
//!   without, then with, `FERROMCP_EVENT_BUS` (and `FERROMCP_TASK_STORE`)
//!   pointing at Redis, round by round; a plain tool call must not pay for
//!   the bus, so the two CPU-per-request figures are compared as a target.
//! - *fan-out*: 1,000 `subscriptions/listen` streams spread over 3 replicas
//!   sharing Redis, a change triggered by a `tools/call` on one of them, and
//!   the time until each stream holds the `notifications/resources/updated`
//!   event; the same on one replica without Redis shows what the Redis hop
//!   costs.
//!
//! The streams are raw tokio TCP connections read by a few lines of HTTP and
//! SSE parsing (as `http.rs` does for calls), so the generator reading
//! 1,000 of them on its one core stays cheap next to the servers; and each
//! event is timed by the kernel's receive stamp, so the generator's own
//! round of the ready sockets is not counted as the servers' delay.

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::TcpStream;
use tokio::process::Child;
use tokio::sync::{Semaphore, mpsc};

use crate::config::{Server, ServerSpec, substitute_port};
use crate::http::{self, Conn, Endpoint, Session};
use crate::proc::{self, Launch};
use crate::runner::{self, Figures, Outcome, Plan};
use crate::stats::{Latency, median};
use crate::wire::{self, AnyReply, Wire};

/// The rows of the bus-overhead comparison; `bench/servers.json` names them
/// in its target.
pub const PLAIN_ROW: &str = "everything-rust";
pub const BUS_ROW: &str = "everything-rust-redis-bus";

/// The name `--only` selects these rows by, and their entry in
/// `Plan::known_unavailable` when their server did not build.
pub const KEY: &str = "scale";

/// The resource every listen stream watches and the trigger updates.
const WATCHED: &str = "test://watched-resource";
const TRIGGER_TOOL: &str = "test_notify_resource_updated";

/// The same seal keys for every replica (DEPLOYING.md): a fixed test key,
/// 32 bytes, so that a run is reproducible and no secret is involved.
const SEAL_KEYS: &str = "bWNwLWJlbmNoIHNjYWxlIHNlYWwga2V5IDMyIGJ5dGU=";

/// How long one trigger's event may take to reach every stream before the
/// streams still without it count as having missed it.
const TRIGGER_TIMEOUT: Duration = Duration::from_secs(2);
/// Quiet time between triggers, so that one trigger's deliveries never
/// overlap the next one's.
const TRIGGER_PAUSE: Duration = Duration::from_millis(20);
/// Listen requests being opened at once: the rest wait, so that a burst of
/// 1,000 connects does not overflow a listen backlog (a dropped SYN costs a
/// one-second retransmit, which is not what is measured).
const OPENING_AT_ONCE: usize = 64;
/// How long opening every stream may take.
const OPEN_TIMEOUT: Duration = Duration::from_secs(30);
/// Unmeasured triggers tried until every stream hears one: the replicas
/// subscribe to Redis in the background after they start listening.
const WARMUP_TRIGGERS: usize = 5;
/// The server's default connection cap (`HttpOptions::max_connections`).
const SERVER_CONNECTION_CAP: usize = 1024;

/// Everything the scale section measured.
#[derive(Debug, Clone, Serialize)]
pub struct ScaleReport {
    /// The server command (`{port}` left in).
    pub server: Vec<String>,
    /// `redis-server --version`'s version, when Redis was found.
    pub redis_version: Option<String>,
    /// The bus-overhead rows: without the bus, with it ([`PLAIN_ROW`],
    /// [`BUS_ROW`]), measured and summarised like the server rows.
    pub bus: Vec<Outcome>,
    /// Server CPU per request at c=32 with the bus / without, per round.
    pub bus_cpu_ratios: Vec<f64>,
    pub fan_out: Vec<FanOut>,
    pub notes: Vec<String>,
    pub elapsed_secs: f64,
}

impl ScaleReport {
    /// Whether anything failed: a row not measured, a wrong reply, an event
    /// missed.
    pub fn failed(&self) -> bool {
        self.bus
            .iter()
            .any(|o| o.errors > 0 || o.unavailable.is_some())
            || self.fan_out.iter().any(FanOut::failed)
    }

    /// Rows measured (for the run's "nothing was measured" check).
    pub fn measured(&self) -> usize {
        self.bus.iter().filter(|o| o.unavailable.is_none()).count()
            + self
                .fan_out
                .iter()
                .filter(|f| f.unavailable.is_none())
                .count()
    }
}

/// One fan-out setup: listen streams over some replicas, a series of
/// triggers, and when each stream heard of each trigger.
#[derive(Debug, Clone, Serialize)]
pub struct FanOut {
    pub name: String,
    pub replicas: usize,
    pub redis: bool,
    pub streams: usize,
    /// Streams acknowledged (the rest failed to open: see `errors`).
    pub opened: usize,
    /// Measured triggers, and the unmeasured ones sent before them until
    /// every stream heard one.
    pub triggers: usize,
    pub warmup_triggers: usize,
    /// (stream, trigger) pairs with the event received in time.
    pub delivered: u64,
    /// (stream, trigger) pairs without it, over every stream asked for.
    pub missed_events: u64,
    /// Streams that missed at least one measured trigger's event.
    pub streams_missing: usize,
    /// Events beyond one per stream and trigger, or arriving between
    /// triggers (a repeated or late delivery).
    pub extra_events: u64,
    /// Trigger to event, over every delivered (stream, trigger) pair: from
    /// writing the trigger call to the kernel's receive stamp of the event
    /// on the stream's socket (to the generator's read where the kernel
    /// gave no stamp: see `kernel_stamped`).
    pub latency_ms: Option<Quantiles>,
    /// Deliveries timed by the kernel's stamp.
    pub kernel_stamped: u64,
    /// The same pairs, up to the generator's read of the event: this adds
    /// the generator's own time to get round 1,000 sockets on one core.
    pub read_latency_ms: Option<Quantiles>,
    /// The same, for the streams on the replica that was called, and on
    /// the others (reached over Redis).
    pub same_replica_p50_ms: Option<f64>,
    pub other_replicas_p50_ms: Option<f64>,
    /// The trigger `tools/call`'s own round trip, median.
    pub trigger_call_p50_ms: Option<f64>,
    /// CPU of the replicas (and Redis) and of the load generator during the
    /// measured triggers, per delivered event.
    pub server_cpu_us_per_event: Option<f64>,
    pub generator_cpu_us_per_event: Option<f64>,
    pub unavailable: Option<String>,
    pub errors: Vec<String>,
    pub elapsed_secs: f64,
}

impl FanOut {
    fn new(name: &str, replicas: usize, redis: bool, streams: usize) -> FanOut {
        FanOut {
            name: name.into(),
            replicas,
            redis,
            streams,
            opened: 0,
            triggers: 0,
            warmup_triggers: 0,
            delivered: 0,
            missed_events: 0,
            streams_missing: 0,
            extra_events: 0,
            latency_ms: None,
            kernel_stamped: 0,
            read_latency_ms: None,
            same_replica_p50_ms: None,
            other_replicas_p50_ms: None,
            trigger_call_p50_ms: None,
            server_cpu_us_per_event: None,
            generator_cpu_us_per_event: None,
            unavailable: None,
            errors: Vec::new(),
            elapsed_secs: 0.0,
        }
    }

    pub fn failed(&self) -> bool {
        self.unavailable.is_some()
            || !self.errors.is_empty()
            || self.missed_events > 0
            || self.opened < self.streams
    }

    fn error(&mut self, why: impl Into<String>) {
        let why = why.into();
        if self.errors.len() < 8 && !self.errors.contains(&why) {
            self.errors.push(why);
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct Quantiles {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Quantiles {
    fn of_ns(samples: &mut [u64]) -> Option<Quantiles> {
        if samples.is_empty() {
            return None;
        }
        let l = Latency::of(samples);
        Some(Quantiles {
            p50: l.p50_us / 1000.0,
            p90: l.p90_us / 1000.0,
            p99: l.p99_us / 1000.0,
            max: l.max_us / 1000.0,
        })
    }
}

/// The HTTP command of the Rust everything-server in examples/manifest.json.
pub fn server_argv(manifest: &Path) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let m: Value =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", manifest.display()))?;
    m.pointer("/everything-server/rust/http")
        .and_then(Value::as_array)
        .and_then(|a| {
            a.iter()
                .map(|s| s.as_str().map(str::to_owned))
                .collect::<Option<Vec<String>>>()
        })
        .ok_or_else(|| {
            format!(
                "{} has no everything-server/rust http command",
                manifest.display()
            )
        })
}

/// Raises the soft descriptor limit to the hard one: 1,000 streams need
/// more than the common soft limit of 1,024 here, and the servers started
/// afterwards inherit it (a server lowers its connection cap to fit its
/// descriptor limit, two descriptors per connection).
pub fn raise_descriptor_limit() -> Result<u64, String> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit to fill in / read from.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return Err(format!("getrlimit: {}", std::io::Error::last_os_error()));
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit {
                rlim_cur: limit.rlim_max,
                rlim_max: limit.rlim_max,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) != 0 {
                return Err(format!("setrlimit: {}", std::io::Error::last_os_error()));
            }
            limit = raised;
        }
    }
    Ok(limit.rlim_cur)
}

/// A process started by this module: killed (its whole group) by `stop`,
/// and by SIGKILL when dropped or when mcp-bench dies (see `spawn`).
struct Proc {
    child: Child,
    pid: u32,
    log: Option<PathBuf>,
}

impl Proc {
    async fn stop(mut self) {
        proc::kill(&mut self.child).await;
    }

    fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(format!(
                "exited with {status}; log:\n{}",
                proc::log_tail(self.log.as_deref())
            )),
            _ => None,
        }
    }
}

fn spawn(
    plan: &Plan,
    argv: Vec<String>,
    env: &[(&str, String)],
    log: Option<PathBuf>,
) -> Result<Proc, String> {
    let launch = Launch {
        argv: argv.clone(),
        cwd: plan.root.clone(),
        cpu: plan.server_cpu,
        log: log.clone(),
    };
    let stdout = proc::log_stdio(&launch).map_err(|e| format!("cannot open the log: {e}"))?;
    let mut cmd = proc::command(&launch, Stdio::null(), stdout)
        .map_err(|e| format!("cannot prepare {argv:?}: {e}"))?;
    // The bus and the task store are given exactly: a setting inherited
    // from the caller's environment must not attach the "plain" row.
    for name in [
        "FERROMCP_EVENT_BUS",
        "FERROMCP_TASK_STORE",
        "FERROMCP_REPLICA",
    ] {
        cmd.env_remove(name);
    }
    for (name, value) in env {
        cmd.env(name, value);
    }
    // SAFETY: prctl is async-signal-safe and touches no memory of ours. A
    // mcp-bench killed mid-run (Ctrl-C reaches only its own process group)
    // takes Redis and the replicas with it instead of leaving them bound.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {argv:?}: {e}"))?;
    let pid = child.id().ok_or("exited at once")?;
    Ok(Proc { child, pid, log })
}

fn log_path(plan: &Plan, what: &str) -> Option<PathBuf> {
    plan.log_dir
        .as_ref()
        .map(|d| d.join(format!("scale-{what}.log")))
}

/// A `redis-server` on a free loopback port, nothing persisted.
struct Redis {
    proc: Proc,
    url: String,
}

fn redis_program() -> Option<PathBuf> {
    proc::which("redis-server").or_else(|| {
        ["/usr/bin/redis-server", "/usr/sbin/redis-server"]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
    })
}

fn redis_version(program: &Path) -> Option<String> {
    let out = std::process::Command::new(program)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .map(str::to_owned)
}

async fn redis_ping(port: u16) -> bool {
    let attempt = async {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.ok()?;
        s.write_all(b"PING\r\n").await.ok()?;
        let mut buf = [0u8; 16];
        let n = s.read(&mut buf).await.ok()?;
        buf[..n].starts_with(b"+PONG").then_some(())
    };
    tokio::time::timeout(Duration::from_millis(500), attempt)
        .await
        .ok()
        .flatten()
        .is_some()
}

async fn start_redis(plan: &Plan, program: &Path) -> Result<Redis, String> {
    let port = proc::free_port().map_err(|e| format!("no free port: {e}"))?;
    let dir = std::env::temp_dir();
    let argv: Vec<String> = [
        program.to_string_lossy().as_ref(),
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--daemonize",
        "no",
        "--dir",
        &dir.to_string_lossy(),
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut proc = spawn(plan, argv, &[], log_path(plan, "redis"))
        .map_err(|why| format!("redis-server: {why}"))?;
    let started = Instant::now();
    loop {
        if let Some(why) = proc.exited() {
            return Err(format!("redis-server {why}"));
        }
        if redis_ping(port).await {
            return Ok(Redis {
                proc,
                url: format!("redis://127.0.0.1:{port}"),
            });
        }
        if started.elapsed() > Duration::from_secs(10) {
            let log = proc::log_tail(proc.log.as_deref());
            proc.stop().await;
            return Err(format!(
                "redis-server did not answer PING on port {port} within 10 s; log:\n{log}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A replica started and answering `tools/list` on the 2026-07-28 wire.
struct Replica {
    proc: Proc,
    endpoint: Endpoint,
    session: Session,
}

fn replica_env(redis: Option<&Redis>, name: Option<&str>) -> Vec<(&'static str, String)> {
    let mut env = vec![("FERROMCP_SEAL_KEYS", SEAL_KEYS.to_owned())];
    if let Some(r) = redis {
        env.push(("FERROMCP_EVENT_BUS", r.url.clone()));
        env.push(("FERROMCP_TASK_STORE", r.url.clone()));
    }
    if let Some(name) = name {
        env.push(("FERROMCP_REPLICA", name.to_owned()));
    }
    env
}

async fn start_replica(
    plan: &Plan,
    argv: &[String],
    env: &[(&str, String)],
    log: Option<PathBuf>,
) -> Result<Replica, String> {
    let port = proc::free_port().map_err(|e| format!("no free port: {e}"))?;
    let mut proc = spawn(plan, substitute_port(argv, port), env, log)?;
    let endpoint = Endpoint::localhost(port);
    let started = Instant::now();
    loop {
        if let Some(why) = proc.exited() {
            return Err(format!("the server {why}"));
        }
        if TcpStream::connect(endpoint.addr).await.is_ok() {
            break;
        }
        if started.elapsed() > crate::stdio::FIRST_REPLY_TIMEOUT {
            let log = proc::log_tail(proc.log.as_deref());
            proc.stop().await;
            return Err(format!(
                "the server is not listening on port {port} after {:?}; log:\n{log}",
                crate::stdio::FIRST_REPLY_TIMEOUT
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    match http::open_session(&endpoint).await {
        Ok(session) if session.wire == Wire::Modern => Ok(Replica {
            proc,
            endpoint,
            session,
        }),
        Ok(_) => {
            proc.stop().await;
            Err("the server does not speak the 2026-07-28 wire (subscriptions/listen)".into())
        }
        Err(why) => {
            proc.stop().await;
            Err(why)
        }
    }
}

/// Runs both scale measurements. `redis-server` missing or failing leaves
/// the rows that need it unavailable, with why; the single-replica fan-out
/// is measured regardless.
pub async fn run(plan: &Plan, argv: &[String]) -> ScaleReport {
    let t0 = Instant::now();
    let mut report = ScaleReport {
        server: argv.to_vec(),
        redis_version: None,
        bus: vec![
            row(
                PLAIN_ROW,
                "Rust everything-server, one replica, no event bus",
            ),
            row(
                BUS_ROW,
                "Rust everything-server, one replica, FERROMCP_EVENT_BUS and FERROMCP_TASK_STORE on a local redis-server",
            ),
        ],
        bus_cpu_ratios: Vec::new(),
        fan_out: Vec::new(),
        notes: Vec::new(),
        elapsed_secs: 0.0,
    };
    let unavailable = |report: &mut ScaleReport, why: &str| {
        for o in &mut report.bus {
            o.unavailable = Some(why.to_owned());
        }
        eprintln!("mcp-bench: scale: {why}");
    };
    let missing = plan.known_unavailable.get(KEY).cloned().or_else(|| {
        proc::missing_parts(argv, &plan.root).map(|why| format!("{why} (`make build` builds it)"))
    });
    if let Some(why) = missing {
        unavailable(&mut report, &why);
        for (name, replicas, redis) in fan_out_setups() {
            let mut f = FanOut::new(name, replicas, redis, plan.fan_out_streams);
            f.unavailable = Some(why.clone());
            report.fan_out.push(f);
        }
        return report;
    }
    if let Some(warning) = proc::profile_warning(argv, &plan.root) {
        eprintln!("mcp-bench: warning: scale: {warning}");
        report.notes.push(format!("warning: {warning}"));
    }
    match raise_descriptor_limit() {
        Ok(limit) if (limit as usize) < 2 * plan.fan_out_streams + 256 => {
            report.notes.push(format!(
                "the descriptor limit is {limit}: too low for {} listen streams",
                plan.fan_out_streams
            ))
        }
        Ok(_) => {}
        Err(why) => report
            .notes
            .push(format!("cannot raise the descriptor limit: {why}")),
    }
    let redis = match redis_program() {
        None => {
            Err("redis-server not found on PATH (`make system-tools-scale` installs it)".to_owned())
        }
        Some(program) => {
            report.redis_version = redis_version(&program);
            start_redis(plan, &program).await
        }
    };
    let redis = match redis {
        Ok(r) => Some(r),
        Err(why) => {
            unavailable(&mut report, &why);
            report.notes.push(why);
            None
        }
    };
    if let Some(redis) = &redis {
        bus_overhead(plan, argv, redis, &mut report).await;
    }
    for (name, replicas, with_redis) in fan_out_setups() {
        let mut f = FanOut::new(name, replicas, with_redis, plan.fan_out_streams);
        let started = Instant::now();
        match (with_redis, &redis) {
            (true, None) => f.unavailable = Some("no redis-server (see above)".into()),
            (true, Some(r)) => fan_out(plan, argv, Some(r), &mut f).await,
            (false, _) => fan_out(plan, argv, None, &mut f).await,
        }
        f.elapsed_secs = started.elapsed().as_secs_f64();
        eprintln!("mcp-bench: scale: {}", fan_out_summary(&f));
        report.fan_out.push(f);
    }
    if let Some(r) = redis {
        r.proc.stop().await;
    }
    report.elapsed_secs = t0.elapsed().as_secs_f64();
    report
}

/// Name, replicas, Redis: the single replica first, as the baseline.
fn fan_out_setups() -> [(&'static str, usize, bool); 2] {
    [
        ("1 replica, no event bus", 1, false),
        ("3 replicas, Redis event bus", 3, true),
    ]
}

fn row(name: &str, description: &str) -> Outcome {
    Outcome::new(&Server {
        spec: ServerSpec {
            name: name.into(),
            kind: "scale".into(),
            language: "rust".into(),
            description: description.into(),
            compare_with: None,
            manifest: None,
            http: None,
            stdio: None,
            event_loop_delay: false,
        },
        http: None,
        stdio: None,
    })
}

/// The HTTP echo load of the server rows, round by round on a fresh server
/// each time; which row goes first alternates, so drift during a round
/// spreads over both.
async fn bus_overhead(plan: &Plan, argv: &[String], redis: &Redis, report: &mut ScaleReport) {
    let top = plan.http_concurrency.iter().copied().max().unwrap_or(1);
    // At about 12 us per request (release) two shared cores make one
    // round's CPU figure vary by +-10%, more than the 5% the target allows:
    // the ratio is the median of at least 5 rounds.
    let rounds = plan.rounds.max(5);
    for round in 0..rounds {
        let mut order = [0usize, 1];
        if round % 2 == 1 {
            order.reverse();
        }
        let mut round_figures = [Figures::new(), Figures::new()];
        for &i in &order {
            let with_bus = i == 1;
            let out = &mut report.bus[i];
            let figures = &mut round_figures[i];
            let t0 = Instant::now();
            let env = replica_env(with_bus.then_some(redis), None);
            let log = log_path(plan, &out.name);
            let replica = match start_replica(plan, argv, &env, log).await {
                Ok(r) => r,
                Err(why) => {
                    out.errors += 1;
                    out.note_error("http start", &why);
                    continue;
                }
            };
            out.http_wire = Some(replica.session.wire.as_str().into());
            let warm = http::load(&replica.endpoint, &replica.session, top, plan.warmup(), 0).await;
            out.count("http warm-up", &warm);
            if warm.ok > 0 {
                for &c in &plan.http_concurrency {
                    let pids = proc::process_tree(replica.proc.pid);
                    let cpu0 = proc::cpu_seconds(&pids);
                    let redis0 = proc::cpu_seconds(&[redis.proc.pid]);
                    let own0 = runner::own_cpu_seconds();
                    let mut r =
                        http::load(&replica.endpoint, &replica.session, c, plan.phase(), 0).await;
                    let cpu = proc::cpu_seconds(&pids) - cpu0;
                    let redis_cpu = proc::cpu_seconds(&[redis.proc.pid]) - redis0;
                    let own = runner::own_cpu_seconds() - own0;
                    out.count(&format!("http c={c}"), &r);
                    runner::record_generator(figures, &format!("http_c{c}"), &r, own);
                    runner::record_load(figures, &format!("http_c{c}"), &mut r, Some(cpu));
                    // Redis's own CPU in the same phase: a plain call that
                    // reached Redis would show here, not in the server's.
                    if with_bus && r.ok > 0 {
                        figures.insert(
                            format!("http_c{c}_redis_cpu_us"),
                            redis_cpu * 1e6 / r.ok as f64,
                        );
                    }
                }
                if let Some(rss) = proc::peak_rss_mib(&proc::process_tree(replica.proc.pid)) {
                    figures.insert("rss_mib".into(), rss);
                }
            }
            replica.proc.stop().await;
            eprintln!(
                "mcp-bench: scale round {}/{} {:<26} {} ({:.1} s, {} errors so far)",
                round + 1,
                rounds,
                out.name,
                short_bus_summary(figures),
                t0.elapsed().as_secs_f64(),
                out.errors
            );
        }
        let [plain, bus] = round_figures;
        if let (Some(a), Some(b)) = (bus.get("http_c32_cpu_us"), plain.get("http_c32_cpu_us"))
            && *b > 0.0
        {
            report.bus_cpu_ratios.push(a / b);
        }
        report.bus[0].rounds.push(plain);
        report.bus[1].rounds.push(bus);
    }
    for out in &mut report.bus {
        out.summarise();
        if out.unavailable.is_none() && out.checked_replies == 0 {
            out.unavailable = Some(
                out.error_messages
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "no reply was ever correct".into()),
            );
        }
    }
}

fn short_bus_summary(f: &Figures) -> String {
    let mut parts = Vec::new();
    if let Some(v) = f.get("http_c32_rps") {
        parts.push(format!("http c=32 {v:.0}/s"));
    }
    if let Some(v) = f.get("http_c32_cpu_us") {
        parts.push(format!("{v:.1} cpu-µs/req"));
    }
    if let Some(v) = f.get("http_c32_redis_cpu_us") {
        parts.push(format!("redis {v:.2} cpu-µs/req"));
    }
    parts.join(", ")
}

/// When an event arrived: as the kernel stamped the bytes on receipt
/// (`SO_TIMESTAMPNS`), and when the generator's read returned them. With
/// 1,000 streams ready at once the generator gets to the last socket some
/// milliseconds after the first; the kernel's stamp does not wait for it.
#[derive(Clone, Copy)]
struct Stamp {
    kernel: Option<SystemTime>,
    read: Instant,
}

/// What a listen stream's reader tells the driver.
enum Note {
    Acked(usize),
    /// `notifications/resources/updated` for the watched URI.
    Updated(usize, Stamp),
    Ended(usize, String),
}

/// The `subscriptions/listen` request of stream `id`, headers included.
fn listen_request(endpoint: &Endpoint, id: u64) -> Vec<u8> {
    let body = wire::request(
        Wire::Modern,
        id,
        "subscriptions/listen",
        serde_json::json!({"notifications": {"resourceSubscriptions": [WATCHED]}}),
    );
    let session = Session {
        wire: Wire::Modern,
        session_id: None,
    };
    let mut request = http::request_head(
        endpoint,
        Some(&session),
        Some("subscriptions/listen"),
        None,
        body.len(),
    );
    request.extend_from_slice(&body);
    request
}

/// The trigger: a `tools/call` of `test_notify_resource_updated`.
fn trigger_request(endpoint: &Endpoint, id: u64) -> Vec<u8> {
    let body = wire::request(
        Wire::Modern,
        id,
        "tools/call",
        serde_json::json!({"name": TRIGGER_TOOL, "arguments": {"uri": WATCHED}}),
    );
    let session = Session {
        wire: Wire::Modern,
        session_id: None,
    };
    let mut request = http::request_head(
        endpoint,
        Some(&session),
        Some("tools/call"),
        Some(TRIGGER_TOOL),
        body.len(),
    );
    request.extend_from_slice(&body);
    request
}

/// Sends one trigger and checks its answer; the connection is opened when
/// there is none, and dropped when the server closes it.
async fn trigger(conn: &mut Option<Conn>, endpoint: &Endpoint, id: u64) -> Result<(), String> {
    if conn.is_none() {
        *conn = Some(
            Conn::connect(endpoint.addr)
                .await
                .map_err(|e| format!("trigger call: connect: {e}"))?,
        );
    }
    let Some(c) = conn.as_mut() else {
        return Err("trigger call: no connection".into());
    };
    let outcome = match c.send(&trigger_request(endpoint, id)).await {
        Ok(response) => (check_trigger(&response, id), response.close),
        Err(e) => (Err(format!("trigger call: {e}")), true),
    };
    if outcome.1 {
        *conn = None;
    }
    outcome.0
}

fn check_trigger(response: &http::Response<'_>, id: u64) -> Result<(), String> {
    if response.status != 200 {
        return Err(format!(
            "trigger call: HTTP {}: {}",
            response.status,
            wire::preview(response.body)
        ));
    }
    let message = response
        .message_for(id)
        .ok_or("trigger call: no answer in the response")?;
    let reply = AnyReply::parse(&message)
        .ok_or_else(|| format!("trigger call: not JSON-RPC: {}", wire::preview(&message)))?;
    if let Some(e) = reply.error {
        return Err(format!("trigger call: error {}: {}", e.code, e.message));
    }
    if reply
        .result
        .as_ref()
        .and_then(|r| r.get("isError"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        return Err(format!(
            "trigger call: the tool failed: {}",
            wire::preview(&message)
        ));
    }
    Ok(())
}

/// Decodes a chunked body as it arrives.
#[derive(Default)]
struct Dechunker {
    raw: Vec<u8>,
    /// Data bytes of the current chunk still to come.
    left: usize,
    /// The CRLF after a chunk's data is still to come.
    crlf: bool,
    /// The last chunk was seen: the response (the stream) is over.
    done: bool,
}

impl Dechunker {
    fn feed(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
        self.raw.extend_from_slice(input);
        let mut pos = 0;
        while !self.done {
            if self.left > 0 {
                let take = self.left.min(self.raw.len() - pos);
                out.extend_from_slice(&self.raw[pos..pos + take]);
                pos += take;
                self.left -= take;
                if self.left > 0 {
                    break;
                }
                self.crlf = true;
            }
            if self.crlf {
                if self.raw.len() - pos < 2 {
                    break;
                }
                if &self.raw[pos..pos + 2] != b"\r\n" {
                    return Err("a chunk is not followed by CRLF".into());
                }
                pos += 2;
                self.crlf = false;
            }
            let Some(i) = wire::find(&self.raw[pos..], b"\r\n") else {
                break;
            };
            let line = String::from_utf8_lossy(&self.raw[pos..pos + i]);
            let size_text = line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_text, 16)
                .map_err(|_| format!("bad chunk size {size_text:?}"))?;
            pos += i + 2;
            if size == 0 {
                self.done = true;
            }
            self.left = size;
        }
        self.raw.drain(..pos);
        Ok(())
    }
}

/// Appends the body bytes of `input` (chunked or not) to `body`.
fn feed(dechunker: Option<&mut Dechunker>, input: &[u8], body: &mut Vec<u8>) -> Result<(), String> {
    match dechunker {
        Some(d) => d.feed(input, body),
        None => {
            body.extend_from_slice(input);
            Ok(())
        }
    }
}

/// Where the first SSE event in `buf` ends (before its blank line), and
/// where the next one starts; `\n\n` and `\r\n\r\n` both end an event.
fn event_end(buf: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    while let Some(at) = buf[i..].iter().position(|&b| b == b'\n') {
        let nl = i + at;
        match &buf[nl + 1..] {
            [b'\n', ..] => return Some((nl, nl + 2)),
            [b'\r', b'\n', ..] => return Some((nl, nl + 3)),
            _ => i = nl + 1,
        }
    }
    None
}

/// The parts of an SSE event's message a listen stream looks at, borrowed
/// (1,000 streams parse every event on the generator's one core).
#[derive(Deserialize)]
struct Event<'a> {
    #[serde(default)]
    id: Option<IgnoredAny>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    params: Option<EventParams<'a>>,
}

#[derive(Deserialize)]
struct EventParams<'a> {
    #[serde(borrow, default)]
    uri: Option<Cow<'a, str>>,
    #[serde(rename = "_meta", default)]
    meta: Option<EventMeta>,
}

#[derive(Deserialize)]
struct EventMeta {
    #[serde(rename = "io.modelcontextprotocol/subscriptionId", default)]
    subscription_id: Option<u64>,
}

/// One listen stream: opens it, says when it is acknowledged and when each
/// update arrives, until it ends (the driver drops the task to close it).
async fn listen(
    stream: usize,
    addr: SocketAddr,
    request: Vec<u8>,
    id: u64,
    opening: Arc<Semaphore>,
    notes: mpsc::UnboundedSender<Note>,
) {
    let why = match read_listen(stream, addr, &request, id, opening, &notes).await {
        Ok(()) => "the server ended the stream".to_owned(),
        Err(why) => why,
    };
    let _ = notes.send(Note::Ended(stream, why));
}

async fn read_listen(
    stream: usize,
    addr: SocketAddr,
    request: &[u8],
    id: u64,
    opening: Arc<Semaphore>,
    notes: &mpsc::UnboundedSender<Note>,
) -> Result<(), String> {
    let mut permit = Some(
        opening
            .acquire_owned()
            .await
            .map_err(|_| "cancelled".to_owned())?,
    );
    let mut tcp = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    tcp.set_nodelay(true).map_err(|e| e.to_string())?;
    // A missing stamp is not an error: the read time stands in for it.
    let _ = stamp_receipts(&tcp);
    tcp.write_all(request)
        .await
        .map_err(|e| format!("write: {e}"))?;
    let mut raw = Vec::with_capacity(8 * 1024);
    let (head_len, chunked) = loop {
        let (n, _) = read_stamped(&tcp, &mut raw)
            .await
            .map_err(|e| format!("read: {e}"))?;
        if n == 0 {
            return Err("the server closed the connection before answering".into());
        }
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut response = httparse::Response::new(&mut headers);
        match response.parse(&raw) {
            Ok(httparse::Status::Complete(n)) => {
                let status = response.code.unwrap_or(0);
                let header = |name: &str| {
                    response
                        .headers
                        .iter()
                        .find(|h| h.name.eq_ignore_ascii_case(name))
                        .map(|h| h.value.to_ascii_lowercase())
                };
                let sse =
                    header("content-type").is_some_and(|v| v.starts_with(b"text/event-stream"));
                if status != 200 || !sse {
                    return Err(format!(
                        "the listen request answered HTTP {status} (not an SSE stream): {}",
                        wire::preview(&raw[n..])
                    ));
                }
                let chunked = header("transfer-encoding")
                    .is_some_and(|v| wire::find(&v, b"chunked").is_some());
                break (n, chunked);
            }
            Ok(httparse::Status::Partial) => {}
            Err(e) => return Err(format!("malformed HTTP response: {e}")),
        }
    };
    let mut dechunker = chunked.then(Dechunker::default);
    let mut body = Vec::new();
    feed(dechunker.as_mut(), &raw[head_len..], &mut body)?;
    let mut at = Stamp {
        kernel: None,
        read: Instant::now(),
    };
    let mut chunk = Vec::with_capacity(8 * 1024);
    loop {
        let mut consumed = 0;
        while let Some((end, next)) = event_end(&body[consumed..]) {
            for data in wire::sse_messages(&body[consumed..consumed + end]) {
                let event: Event = serde_json::from_slice(&data).map_err(|e| {
                    format!("an event is not JSON-RPC: {e}: {}", wire::preview(&data))
                })?;
                if event.id.is_some() {
                    // The listen request answered: the stream is over.
                    return Err(format!(
                        "the listen request was answered: {}",
                        wire::preview(&data)
                    ));
                }
                let params = event.params.as_ref();
                let ours = params
                    .and_then(|p| p.meta.as_ref())
                    .and_then(|m| m.subscription_id)
                    == Some(id);
                match event.method.as_deref() {
                    Some("notifications/subscriptions/acknowledged") if ours => {
                        permit = None;
                        let _ = notes.send(Note::Acked(stream));
                    }
                    Some("notifications/resources/updated")
                        if ours && params.and_then(|p| p.uri.as_deref()) == Some(WATCHED) =>
                    {
                        let _ = notes.send(Note::Updated(stream, at));
                    }
                    _ => {}
                }
            }
            consumed += next;
        }
        body.drain(..consumed);
        chunk.clear();
        let (n, kernel) = read_stamped(&tcp, &mut chunk)
            .await
            .map_err(|e| format!("read: {e}"))?;
        // Before any parsing.
        at = Stamp {
            kernel,
            read: Instant::now(),
        };
        if n == 0 {
            drop(permit);
            return Ok(());
        }
        feed(dechunker.as_mut(), &chunk, &mut body)?;
        if dechunker.as_ref().is_some_and(|d| d.done) {
            return Ok(());
        }
    }
}

/// Asks the kernel to stamp what the socket receives (`SO_TIMESTAMPNS`:
/// TCP hands the stamp of the last segment a read consumed).
fn stamp_receipts(tcp: &TcpStream) -> std::io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: the descriptor is the open socket `tcp` owns; the option value
    // is a c_int of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            tcp.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Reads what is there into `buf`'s spare room (0 at end of stream), with
/// the kernel's receive stamp when it gives one.
async fn read_stamped(
    tcp: &TcpStream,
    buf: &mut Vec<u8>,
) -> std::io::Result<(usize, Option<SystemTime>)> {
    buf.reserve(8 * 1024);
    loop {
        tcp.readable().await?;
        match tcp.try_io(Interest::READABLE, || recv_stamped(tcp.as_raw_fd(), buf)) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            other => return other,
        }
    }
}

fn recv_stamped(fd: RawFd, buf: &mut Vec<u8>) -> std::io::Result<(usize, Option<SystemTime>)> {
    let spare = buf.spare_capacity_mut();
    let mut iov = libc::iovec {
        iov_base: spare.as_mut_ptr().cast(),
        iov_len: spare.len(),
    };
    // Room for a few control messages; u64 keeps cmsghdr aligned.
    let mut control = [0u64; 16];
    // SAFETY: msghdr is plain data; all-zero is a valid empty header.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&control) as _;
    // SAFETY: `msg` points at one iovec over `buf`'s spare capacity and at
    // `control`, both alive and of the lengths given, for this call only.
    let n = unsafe { libc::recvmsg(fd, &mut msg, libc::MSG_DONTWAIT) };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let n = n as usize;
    // SAFETY: the kernel wrote `n` bytes into the spare capacity.
    unsafe { buf.set_len(buf.len() + n) };
    let mut stamp = None;
    // SAFETY: the CMSG_* walk stays within `msg.msg_controllen` bytes of
    // `control`, which the kernel filled; the timestamp is read unaligned.
    unsafe {
        let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
        while !cmsg.is_null() {
            if (*cmsg).cmsg_level == libc::SOL_SOCKET && (*cmsg).cmsg_type == libc::SCM_TIMESTAMPNS
            {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast());
                stamp = Some(UNIX_EPOCH + Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32));
            }
            cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
        }
    }
    Ok((n, stamp))
}

/// Per stream: its replica, whether it is open, and per measured trigger
/// when its event came (after the trigger was sent).
struct StreamState {
    replica: usize,
    acked: bool,
    ended: Option<String>,
    got: Vec<Option<Delivery>>,
}

/// How long one trigger's event took to reach one stream.
#[derive(Clone, Copy)]
struct Delivery {
    /// To the kernel's receive stamp, when there is one.
    kernel: Option<Duration>,
    /// To the generator's read.
    read: Duration,
}

/// One fan-out setup, start to end; every process it starts is stopped.
async fn fan_out(plan: &Plan, argv: &[String], redis: Option<&Redis>, f: &mut FanOut) {
    let mut replicas = Vec::new();
    for r in 0..f.replicas {
        let name = format!("r{}", r + 1);
        let env = replica_env(redis, redis.is_some().then_some(name.as_str()));
        let bus = if redis.is_some() { "-redis" } else { "" };
        let log = log_path(plan, &format!("fanout{}{bus}-{name}", f.replicas));
        match start_replica(plan, argv, &env, log).await {
            Ok(replica) => replicas.push(replica),
            Err(why) => {
                f.unavailable = Some(format!("replica {name}: {why}"));
                break;
            }
        }
    }
    if f.unavailable.is_none() {
        drive_fan_out(plan, &replicas, redis, f).await;
    }
    for r in replicas {
        r.proc.stop().await;
    }
}

async fn drive_fan_out(plan: &Plan, replicas: &[Replica], redis: Option<&Redis>, f: &mut FanOut) {
    let per_replica = f.streams.div_ceil(replicas.len().max(1));
    if per_replica + 2 > SERVER_CONNECTION_CAP {
        f.error(format!(
            "{per_replica} streams per replica exceed the server's connection cap of {SERVER_CONNECTION_CAP}"
        ));
    }
    let (tx, mut rx) = mpsc::unbounded_channel();
    let opening = Arc::new(Semaphore::new(OPENING_AT_ONCE));
    let mut readers = tokio::task::JoinSet::new();
    let mut states: Vec<StreamState> = Vec::with_capacity(f.streams);
    for s in 0..f.streams {
        let replica = s % replicas.len();
        let endpoint = &replicas[replica].endpoint;
        // Ids from 1: the subscription id of each stream is its own.
        let id = s as u64 + 1;
        readers.spawn(listen(
            s,
            endpoint.addr,
            listen_request(endpoint, id),
            id,
            opening.clone(),
            tx.clone(),
        ));
        states.push(StreamState {
            replica,
            acked: false,
            ended: None,
            got: vec![None; plan.fan_out_triggers],
        });
    }
    drop(tx);

    // Every stream acknowledged (or failed).
    let deadline = Instant::now() + OPEN_TIMEOUT;
    let mut settled = 0;
    while settled < f.streams {
        match tokio::time::timeout_at(deadline.into(), rx.recv()).await {
            Ok(Some(Note::Acked(s))) => {
                if !states[s].acked {
                    states[s].acked = true;
                    settled += 1;
                }
            }
            Ok(Some(Note::Ended(s, why))) => {
                if !states[s].acked {
                    settled += 1;
                }
                states[s].acked = false;
                f.error(format!(
                    "stream {s} (replica r{}): {why}",
                    states[s].replica + 1
                ));
                states[s].ended = Some(why);
            }
            Ok(Some(Note::Updated(..))) => f.extra_events += 1,
            Ok(None) | Err(_) => break,
        }
    }
    f.opened = states.iter().filter(|s| s.acked).count();
    if f.opened < f.streams {
        f.error(format!(
            "{} of {} listen streams did not open within {OPEN_TIMEOUT:?}",
            f.streams - f.opened,
            f.streams
        ));
    }
    if f.opened == 0 {
        readers.shutdown().await;
        return;
    }

    let trigger_at = &replicas[0].endpoint;
    let mut conn = None;
    let mut next_id = 1_000_000_u64;

    // Unmeasured triggers until every open stream hears one: this also
    // waits out the replicas' subscription to Redis.
    let mut warm = false;
    for _ in 0..WARMUP_TRIGGERS {
        f.warmup_triggers += 1;
        next_id += 1;
        let sent = Instant::now();
        if let Err(why) = trigger(&mut conn, trigger_at, next_id).await {
            f.error(why);
            break;
        }
        let mut heard = vec![false; f.streams];
        let mut count = 0;
        let want = states
            .iter()
            .filter(|s| s.acked && s.ended.is_none())
            .count();
        let deadline = sent + TRIGGER_TIMEOUT;
        while count < want {
            match tokio::time::timeout_at(deadline.into(), rx.recv()).await {
                Ok(Some(Note::Updated(s, at))) if at.read >= sent && !heard[s] => {
                    heard[s] = true;
                    count += 1;
                }
                Ok(Some(Note::Ended(s, why))) => {
                    f.error(format!(
                        "stream {s} (replica r{}) ended: {why}",
                        states[s].replica + 1
                    ));
                    states[s].ended = Some(why);
                }
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => break,
            }
        }
        if count == want {
            warm = true;
            break;
        }
    }
    if !warm {
        f.error(format!(
            "after {} unmeasured triggers some open streams had still heard none",
            f.warmup_triggers
        ));
    }
    tokio::time::sleep(TRIGGER_PAUSE).await;
    // Stray deliveries of the warm-up are not the first trigger's.
    while let Ok(note) = rx.try_recv() {
        if let Note::Ended(s, why) = note {
            states[s].ended = Some(why);
        }
    }

    let pids: Vec<u32> = replicas
        .iter()
        .flat_map(|r| proc::process_tree(r.proc.pid))
        .chain(redis.map(|r| r.proc.pid))
        .collect();
    let cpu0 = proc::cpu_seconds(&pids);
    let own0 = runner::own_cpu_seconds();
    let mut call_ns = Vec::new();
    for k in 0..plan.fan_out_triggers {
        next_id += 1;
        let (sent, sent_wall) = (Instant::now(), SystemTime::now());
        if let Err(why) = trigger(&mut conn, trigger_at, next_id).await {
            f.error(why);
            break;
        }
        call_ns.push(sent.elapsed().as_nanos() as u64);
        f.triggers += 1;
        let want = states
            .iter()
            .filter(|s| s.acked && s.ended.is_none())
            .count();
        let mut count = 0;
        let deadline = sent + TRIGGER_TIMEOUT;
        while count < want {
            match tokio::time::timeout_at(deadline.into(), rx.recv()).await {
                Ok(Some(Note::Updated(s, at))) => {
                    if at.read >= sent && states[s].got[k].is_none() {
                        states[s].got[k] = Some(Delivery {
                            kernel: at.kernel.and_then(|t| t.duration_since(sent_wall).ok()),
                            read: at.read - sent,
                        });
                        count += 1;
                    } else {
                        f.extra_events += 1;
                    }
                }
                Ok(Some(Note::Ended(s, why))) => {
                    f.error(format!(
                        "stream {s} (replica r{}) ended: {why}",
                        states[s].replica + 1
                    ));
                    states[s].ended = Some(why);
                }
                Ok(Some(Note::Acked(_))) => {}
                Ok(None) | Err(_) => break,
            }
        }
        tokio::time::sleep(TRIGGER_PAUSE).await;
    }
    let cpu = proc::cpu_seconds(&pids) - cpu0;
    let own = runner::own_cpu_seconds() - own0;
    // Anything still queued arrived after its trigger's window.
    while let Ok(note) = rx.try_recv() {
        if let Note::Updated(..) = note {
            f.extra_events += 1;
        }
    }
    readers.shutdown().await;
    summarise_fan_out(f, &states, replicas.len(), &call_ns, cpu, own);
}

fn summarise_fan_out(
    f: &mut FanOut,
    states: &[StreamState],
    replicas: usize,
    call_ns: &[u64],
    server_cpu: f64,
    own_cpu: f64,
) {
    let (mut all, mut read) = (Vec::new(), Vec::new());
    let (mut same, mut others) = (Vec::new(), Vec::new());
    for s in states {
        let mut missed = false;
        for d in &s.got[..f.triggers] {
            let Some(d) = d else {
                missed = true;
                f.missed_events += 1;
                continue;
            };
            if d.kernel.is_some() {
                f.kernel_stamped += 1;
            }
            let ns = d.kernel.unwrap_or(d.read).as_nanos() as u64;
            all.push(ns);
            read.push(d.read.as_nanos() as u64);
            let ms = ns as f64 / 1e6;
            if s.replica == 0 {
                same.push(ms);
            } else {
                others.push(ms);
            }
        }
        if missed {
            f.streams_missing += 1;
        }
    }
    f.delivered = all.len() as u64;
    f.latency_ms = Quantiles::of_ns(&mut all);
    f.read_latency_ms = Quantiles::of_ns(&mut read);
    f.same_replica_p50_ms = median(&same);
    if replicas > 1 {
        f.other_replicas_p50_ms = median(&others);
    }
    let call_ms: Vec<f64> = call_ns.iter().map(|&ns| ns as f64 / 1e6).collect();
    f.trigger_call_p50_ms = median(&call_ms);
    if f.delivered > 0 {
        f.server_cpu_us_per_event = Some(server_cpu * 1e6 / f.delivered as f64);
        f.generator_cpu_us_per_event = Some(own_cpu * 1e6 / f.delivered as f64);
    }
}

fn fan_out_summary(f: &FanOut) -> String {
    if let Some(why) = &f.unavailable {
        return format!("fan-out {}: unavailable: {why}", f.name);
    }
    let latency = f.latency_ms.map_or_else(
        || "no event".to_owned(),
        |q| {
            format!(
                "p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                q.p50, q.p99, q.max
            )
        },
    );
    format!(
        "fan-out {}: {} of {} streams open, {} triggers, {latency}, {} streams missed an event ({:.1} s)",
        f.name, f.opened, f.streams, f.triggers, f.streams_missing, f.elapsed_secs
    )
}

fn short(v: f64) -> String {
    if v >= 1000.0 {
        let n = v.round() as u64;
        let s = n.to_string();
        let mut out = String::new();
        for (i, c) in s.chars().enumerate() {
            if i > 0 && (s.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    } else if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A message with a log tail in it, on one line of a table or list.
fn one_line(text: &str) -> String {
    let joined = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" / ")
        .replace('|', "/");
    match joined.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &joined[..cut]),
        None => joined,
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(short).unwrap_or_else(|| "—".into())
}

/// The scale section of the report.
pub fn markdown(report: &ScaleReport, plan: &Plan) -> String {
    let mut m = String::new();
    let _ = writeln!(
        m,
        "\n### Scale-out (issue 29): the Redis event bus and listen fan-out\n"
    );
    let redis = report.redis_version.as_deref().map_or_else(
        || "redis-server".to_owned(),
        |v| format!("redis-server {v}"),
    );
    let pin = match plan.server_cpu {
        Some(cpu) => format!("servers and Redis pinned to CPU {cpu}"),
        None => "no CPU pinning".into(),
    };
    let _ = writeln!(
        m,
        "`{}` with {redis} on loopback, {pin}; {:.0} s.\n",
        report.server.join(" "),
        report.elapsed_secs
    );
    let _ = writeln!(
        m,
        "| server | HTTP c=1 req/s | c=1 CPU µs/req | HTTP c=32 req/s | c=32 p50 / p99 µs | HTTP c=32 server CPU µs/req | Redis CPU µs/req (c=32) | errors |"
    );
    let _ = writeln!(m, "|---|--:|--:|--:|--:|--:|--:|--:|");
    for o in &report.bus {
        if let Some(why) = &o.unavailable {
            let _ = writeln!(
                m,
                "| {} | unavailable: {} | | | | | | |",
                o.name,
                one_line(why)
            );
            continue;
        }
        let latency = match (o.figure("http_c32_p50_us"), o.figure("http_c32_p99_us")) {
            (Some(a), Some(b)) => format!("{} / {}", short(a), short(b)),
            _ => "—".into(),
        };
        let _ = writeln!(
            m,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            o.name,
            opt(o.figure("http_c1_rps")),
            opt(o.figure("http_c1_cpu_us")),
            opt(o.figure("http_c32_rps")),
            latency,
            opt(o.figure("http_c32_cpu_us")),
            opt(o.figure("http_c32_redis_cpu_us")),
            o.errors
        );
    }
    if let Some(r) = median(&report.bus_cpu_ratios) {
        let lo = report
            .bus_cpu_ratios
            .iter()
            .copied()
            .fold(f64::INFINITY, f64::min);
        let hi = report
            .bus_cpu_ratios
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max);
        let _ = writeln!(
            m,
            "\nServer CPU per request at c=32, with the bus / without: **{r:.3}x** (median of the rounds' ratios; {lo:.3}x – {hi:.3}x over {} rounds).",
            report.bus_cpu_ratios.len()
        );
    }
    let _ = writeln!(
        m,
        "\n| fan-out | listen streams open | triggers | trigger → event p50 / p99 / max ms | p50 on the called replica / others ms | as read by the generator p50 / p99 ms | streams that missed an event | events missed | extra events | trigger call p50 ms | server / generator CPU µs per event | errors |"
    );
    let _ = writeln!(m, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|");
    for f in &report.fan_out {
        if let Some(why) = &f.unavailable {
            let _ = writeln!(
                m,
                "| {} | unavailable: {} | | | | | | | | | | |",
                f.name,
                one_line(why)
            );
            continue;
        }
        let latency = f.latency_ms.map_or_else(
            || "—".to_owned(),
            |q| format!("{} / {} / {}", short(q.p50), short(q.p99), short(q.max)),
        );
        let split = format!(
            "{} / {}",
            opt(f.same_replica_p50_ms),
            opt(f.other_replicas_p50_ms)
        );
        let read = f.read_latency_ms.map_or_else(
            || "—".to_owned(),
            |q| format!("{} / {}", short(q.p50), short(q.p99)),
        );
        let cpu = format!(
            "{} / {}",
            opt(f.server_cpu_us_per_event),
            opt(f.generator_cpu_us_per_event)
        );
        let _ = writeln!(
            m,
            "| {} | {} of {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            f.name,
            f.opened,
            f.streams,
            f.triggers,
            latency,
            split,
            read,
            f.streams_missing,
            f.missed_events,
            f.extra_events,
            opt(f.trigger_call_p50_ms),
            cpu,
            f.errors.len()
        );
    }
    let mut lines: Vec<String> = report
        .notes
        .iter()
        .map(String::as_str)
        .map(one_line)
        .collect();
    for o in &report.bus {
        lines.extend(
            o.error_messages
                .iter()
                .map(|e| format!("{}: error: {}", o.name, one_line(e))),
        );
        lines.extend(o.notes.iter().map(|n| format!("{}: {n}", o.name)));
    }
    for f in &report.fan_out {
        if f.kernel_stamped < f.delivered {
            lines.push(format!(
                "fan-out {}: {} of {} deliveries timed at the generator's read (the kernel gave no receive stamp)",
                f.name,
                f.delivered - f.kernel_stamped,
                f.delivered
            ));
        }
        lines.extend(
            f.errors
                .iter()
                .map(|e| format!("fan-out {}: error: {}", f.name, one_line(e))),
        );
    }
    if !lines.is_empty() {
        m.push('\n');
        for l in lines {
            let _ = writeln!(m, "- {l}");
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_decode_across_reads() {
        let mut d = Dechunker::default();
        let mut out = Vec::new();
        let input = b"5\r\nhello\r\n6;x=1\r\n world\r\n0\r\n\r\n";
        for piece in input.chunks(3) {
            d.feed(piece, &mut out).expect("valid chunks");
        }
        assert_eq!(out, b"hello world");
        assert!(d.done);
    }

    #[test]
    fn events_end_at_blank_lines() {
        assert_eq!(event_end(b"data: a\n\ndata: b"), Some((7, 9)));
        assert_eq!(event_end(b"data: a\r\n\r\n"), Some((8, 11)));
        assert_eq!(event_end(b"data: a\n"), None);
    }
}
