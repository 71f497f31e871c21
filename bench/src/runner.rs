//! The benchmark run: every server, round by round, each round doing the
//! HTTP phases, the stdio phases and the cold starts of every server in
//! turn, so that drift on a shared machine spreads over all of them alike.

use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::config::{Server, substitute_port};
use crate::event_loop;
use crate::http::{self, Endpoint, Session};
use crate::proc::{self, Launch};
use crate::stats::{Latency, LoadResult, median};
use crate::stdio::{self, StdioServer, Stop};
use crate::wire::Wire;

/// What one run measures, and for how long.
#[derive(Debug, Clone, Serialize)]
pub struct Plan {
    #[serde(skip)]
    pub root: PathBuf,
    #[serde(skip)]
    pub log_dir: Option<PathBuf>,
    /// Servers known not to be runnable (their build failed), with why.
    #[serde(skip)]
    pub known_unavailable: BTreeMap<String, String>,
    pub rounds: usize,
    /// Length of each measured load phase.
    pub phase_secs: f64,
    /// Unmeasured load before the measured phases of a server start.
    pub warmup_secs: f64,
    pub http_concurrency: Vec<usize>,
    pub stdio_in_flight: usize,
    pub cold_starts_per_round: usize,
    pub payload_bytes: usize,
    pub payload_reps: usize,
    /// Listen streams and measured triggers of the fan-out (`scale`).
    pub fan_out_streams: usize,
    pub fan_out_triggers: usize,
    /// Core the servers are pinned to (`taskset`), if pinning.
    pub server_cpu: Option<usize>,
    /// Core the load generator is pinned to, if pinning.
    pub generator_cpu: Option<usize>,
}

impl Plan {
    pub fn full(root: PathBuf) -> Plan {
        Plan {
            root,
            log_dir: None,
            known_unavailable: BTreeMap::new(),
            rounds: 3,
            phase_secs: 2.0,
            warmup_secs: 0.5,
            http_concurrency: vec![1, 32],
            stdio_in_flight: 16,
            cold_starts_per_round: 4,
            payload_bytes: 1 << 20,
            payload_reps: 5,
            fan_out_streams: 1000,
            fan_out_triggers: 20,
            server_cpu: None,
            generator_cpu: None,
        }
    }

    /// The `BENCH_SHORT=1` plan: fewer and shorter phases, same figures.
    pub fn short(root: PathBuf) -> Plan {
        Plan {
            rounds: 2,
            phase_secs: 1.0,
            warmup_secs: 0.3,
            cold_starts_per_round: 2,
            payload_reps: 3,
            fan_out_triggers: 8,
            ..Plan::full(root)
        }
    }

    pub(crate) fn phase(&self) -> Duration {
        Duration::from_secs_f64(self.phase_secs)
    }

    pub(crate) fn warmup(&self) -> Duration {
        Duration::from_secs_f64(self.warmup_secs)
    }
}

/// Figures of one server in one round, by metric name.
pub type Figures = BTreeMap<String, f64>;

/// Everything measured for one server.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub name: String,
    pub kind: String,
    pub language: String,
    pub description: String,
    pub compare_with: Option<String>,
    /// Why the server was not measured at all.
    pub unavailable: Option<String>,
    /// Protocol revision used over HTTP and stdio.
    pub http_wire: Option<String>,
    pub stdio_wire: Option<String>,
    pub rounds: Vec<Figures>,
    pub cold_start_ms: Vec<f64>,
    /// Replies checked and found correct, and calls that failed.
    pub checked_replies: u64,
    pub errors: u64,
    /// The first few distinct failures (phase: message).
    pub error_messages: Vec<String>,
    /// Things to know that are not wrong replies: requests the server declined
    /// by design (a body size limit), a binary that is not the release build.
    pub notes: Vec<String>,
    /// Medians over the rounds (cold start: over every sample).
    pub median: Figures,
}

impl Outcome {
    pub(crate) fn new(server: &Server) -> Outcome {
        Outcome {
            name: server.spec.name.clone(),
            kind: server.spec.kind.clone(),
            language: server.spec.language.clone(),
            description: server.spec.description.clone(),
            compare_with: server.spec.compare_with.clone(),
            unavailable: None,
            http_wire: None,
            stdio_wire: None,
            rounds: Vec::new(),
            cold_start_ms: Vec::new(),
            checked_replies: 0,
            errors: 0,
            error_messages: Vec::new(),
            notes: Vec::new(),
            median: Figures::new(),
        }
    }

    pub(crate) fn note_error(&mut self, phase: &str, why: &str) {
        let line = format!("{phase}: {why}");
        if self.error_messages.len() < 8 && !self.error_messages.contains(&line) {
            self.error_messages.push(line);
        }
    }

    fn note(&mut self, phase: &str, why: &str) {
        let line = format!("{phase}: {why}");
        if !self.notes.contains(&line) {
            self.notes.push(line);
        }
    }

    pub(crate) fn count(&mut self, phase: &str, r: &LoadResult) {
        self.checked_replies += r.ok;
        self.errors += r.errors;
        if let Some(why) = &r.first_error {
            self.note_error(phase, why);
        }
    }

    /// A median figure, if measured.
    pub fn figure(&self, metric: &str) -> Option<f64> {
        self.median.get(metric).copied()
    }

    pub(crate) fn summarise(&mut self) {
        let mut keys: Vec<&String> = self.rounds.iter().flat_map(|r| r.keys()).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut median_figures = Figures::new();
        for key in keys {
            let values: Vec<f64> = self
                .rounds
                .iter()
                .filter_map(|r| r.get(key).copied())
                .collect();
            if let Some(m) = median(&values) {
                median_figures.insert(key.clone(), m);
            }
        }
        // Over every sample rather than over the rounds' medians.
        if let Some(m) = median(&self.cold_start_ms) {
            median_figures.insert("cold_start_ms".into(), m);
        }
        self.median = median_figures;
    }
}

fn log_path(plan: &Plan, server: &str, what: &str) -> Option<PathBuf> {
    plan.log_dir
        .as_ref()
        .map(|d| d.join(format!("{server}-{what}.log")))
}

fn launch(plan: &Plan, argv: Vec<String>, log: Option<PathBuf>) -> Launch {
    Launch {
        argv,
        cwd: plan.root.clone(),
        cpu: plan.server_cpu,
        log,
    }
}

/// CPU time of the load generator itself, to show what it costs per call.
pub(crate) fn own_cpu_seconds() -> f64 {
    proc::cpu_seconds(&[std::process::id()])
}

pub(crate) fn record_generator(figures: &mut Figures, prefix: &str, r: &LoadResult, cpu_secs: f64) {
    if r.ok > 0 {
        figures.insert(
            format!("{prefix}_generator_cpu_us"),
            cpu_secs * 1e6 / r.ok as f64,
        );
    }
}

pub(crate) fn record_load(
    figures: &mut Figures,
    prefix: &str,
    r: &mut LoadResult,
    cpu_secs: Option<f64>,
) {
    figures.insert(format!("{prefix}_rps"), r.rate());
    let l: Latency = r.latency();
    figures.insert(format!("{prefix}_p50_us"), l.p50_us);
    figures.insert(format!("{prefix}_p99_us"), l.p99_us);
    if let Some(cpu) = cpu_secs
        && r.ok > 0
    {
        figures.insert(format!("{prefix}_cpu_us"), cpu * 1e6 / r.ok as f64);
    }
}

/// An HTTP server started and answering, with its log file.
struct Started {
    child: tokio::process::Child,
    pid: u32,
    endpoint: Endpoint,
    session: Session,
    log: Option<PathBuf>,
}

/// Starts the HTTP server, waits for its port, finds its wire.
async fn start_http(plan: &Plan, server: &Server, argv: &[String]) -> Result<Started, String> {
    let port = proc::free_port().map_err(|e| format!("no free port: {e}"))?;
    let log = log_path(plan, server.name(), "http");
    let l = launch(plan, substitute_port(argv, port), log.clone());
    let stdout = proc::log_stdio(&l).map_err(|e| format!("cannot open the log: {e}"))?;
    let mut child = proc::command(&l, Stdio::null(), stdout)
        .map_err(|e| format!("cannot prepare {argv:?}: {e}"))?
        .spawn()
        .map_err(|e| format!("cannot start {argv:?}: {e}"))?;
    let pid = child.id().ok_or("the server exited at once")?;
    let endpoint = Endpoint::localhost(port);
    let started = Instant::now();
    // Servers bind their port once they are ready; interpreters take a while.
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "exited with {status} before listening; log:\n{}",
                proc::log_tail(log.as_deref())
            ));
        }
        if tokio::net::TcpStream::connect(endpoint.addr).await.is_ok() {
            break;
        }
        if started.elapsed() > stdio::FIRST_REPLY_TIMEOUT {
            proc::kill(&mut child).await;
            return Err(format!(
                "not listening on port {port} after {:?}; log:\n{}",
                stdio::FIRST_REPLY_TIMEOUT,
                proc::log_tail(log.as_deref())
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    match http::open_session(&endpoint).await {
        Ok(session) => Ok(Started {
            child,
            pid,
            endpoint,
            session,
            log,
        }),
        Err(why) => {
            proc::kill(&mut child).await;
            Err(why)
        }
    }
}

async fn http_round(
    plan: &Plan,
    server: &Server,
    argv: &[String],
    out: &mut Outcome,
    figures: &mut Figures,
) {
    let Started {
        mut child,
        pid,
        endpoint,
        session,
        log,
    } = match start_http(plan, server, argv).await {
        Ok(started) => started,
        Err(why) => {
            out.errors += 1;
            out.note_error("http start", &why);
            return;
        }
    };
    out.http_wire = Some(session.wire.as_str().into());
    let top = plan.http_concurrency.iter().copied().max().unwrap_or(1);
    let warm = http::load(&endpoint, &session, top, plan.warmup(), 0).await;
    out.count("http warm-up", &warm);
    if warm.ok == 0 {
        proc::kill(&mut child).await;
        return;
    }
    for &c in &plan.http_concurrency {
        // The event-loop delay of the busiest phase: a report right before
        // it starts the interval, the one right after it reads it.
        let delay_log = log
            .as_deref()
            .filter(|_| server.spec.event_loop_delay && c == top);
        if let Some(log) = delay_log {
            let before = event_loop::reports(log).len();
            if event_loop::report(pid, log, before).await.is_none() {
                out.note("event-loop delay", "the server sent no report");
            }
        }
        let pids = proc::process_tree(pid);
        let (cpu0, own0) = (proc::cpu_seconds(&pids), own_cpu_seconds());
        let mut r = http::load(&endpoint, &session, c, plan.phase(), 0).await;
        let (cpu, own) = (proc::cpu_seconds(&pids) - cpu0, own_cpu_seconds() - own0);
        if let Some(log) = delay_log {
            let before = event_loop::reports(log).len();
            if let Some(d) = event_loop::report(pid, log, before).await {
                figures.insert(format!("http_c{c}_eld_p99_ms"), d.p99_ms);
                figures.insert(format!("http_c{c}_eld_max_ms"), d.max_ms);
            }
        }
        out.count(&format!("http c={c}"), &r);
        record_generator(figures, &format!("http_c{c}"), &r, own);
        record_load(figures, &format!("http_c{c}"), &mut r, Some(cpu));
    }
    // Read before the large payload, whose buffers say nothing about the
    // footprint under ordinary load.
    let tree = proc::process_tree(pid);
    if let Some(rss) = proc::peak_rss_mib(&tree) {
        figures.insert("rss_mib".into(), rss);
    }
    if let Some(anon) = proc::anon_rss_mib(&tree) {
        figures.insert("rss_anon_mib".into(), anon);
    }
    if plan.payload_reps > 0 {
        let mut r =
            http::payload_round_trips(&endpoint, &session, plan.payload_bytes, plan.payload_reps)
                .await;
        if r.ok == 0
            && r.first_error
                .as_deref()
                .is_some_and(|e| e.starts_with("HTTP 413"))
        {
            // A body limit below 1 MiB is the server's choice, not a wrong
            // reply: reported, not counted as an error.
            out.note(
                "http 1 MiB",
                "refused with HTTP 413 (the server's request body limit)",
            );
        } else {
            out.count("http 1 MiB", &r);
        }
        if r.ok > 0 {
            figures.insert("http_1mib_ms".into(), r.latency().p50_us / 1000.0);
        }
        if let Some(rss) = proc::peak_rss_mib(&proc::process_tree(pid)) {
            figures.insert("rss_after_1mib_mib".into(), rss);
        }
    }
    proc::kill(&mut child).await;
}

async fn stdio_round(
    plan: &Plan,
    server: &Server,
    argv: &[String],
    out: &mut Outcome,
    figures: &mut Figures,
) {
    let l = launch(plan, argv.to_vec(), log_path(plan, server.name(), "stdio"));
    let mut s = match StdioServer::spawn(&l) {
        Ok(s) => s,
        Err(why) => {
            out.errors += 1;
            out.note_error("stdio start", &why);
            return;
        }
    };
    // The era is a property of the server: probe once, then reuse it.
    let known = out.stdio_wire.as_deref().map(|w| {
        if w == Wire::Modern.as_str() {
            Wire::Modern
        } else {
            Wire::Legacy
        }
    });
    let ready = match known {
        Some(w) => s.handshake(w).await.map(|()| w),
        None => s.detect().await,
    };
    let wire = match ready {
        Ok(w) => w,
        Err(why) => {
            out.errors += 1;
            out.note_error("stdio handshake", &why);
            s.stop().await;
            return;
        }
    };
    out.stdio_wire = Some(wire.as_str().into());
    let warm = s
        .load(wire, plan.stdio_in_flight, Stop::After(plan.warmup()), 0)
        .await;
    out.count("stdio warm-up", &warm);
    if warm.ok == 0 {
        s.stop().await;
        return;
    }
    let pids = s.pid().map(proc::process_tree).unwrap_or_default();
    for (prefix, n) in [("stdio_seq", 1), ("stdio_n", plan.stdio_in_flight)] {
        let (cpu0, own0) = (proc::cpu_seconds(&pids), own_cpu_seconds());
        let mut r = s.load(wire, n, Stop::After(plan.phase()), 0).await;
        let (cpu, own) = (proc::cpu_seconds(&pids) - cpu0, own_cpu_seconds() - own0);
        out.count(prefix, &r);
        record_generator(figures, prefix, &r, own);
        record_load(figures, prefix, &mut r, (!pids.is_empty()).then_some(cpu));
    }
    if let Some(rss) = proc::peak_rss_mib(&pids) {
        figures.insert("stdio_rss_mib".into(), rss);
    }
    if plan.payload_reps > 0 {
        let mut r = s
            .load(
                wire,
                1,
                Stop::Calls(plan.payload_reps as u64),
                plan.payload_bytes,
            )
            .await;
        out.count("stdio 1 MiB", &r);
        if r.ok > 0 {
            figures.insert("stdio_1mib_ms".into(), r.latency().p50_us / 1000.0);
        }
    }
    s.stop().await;
}

async fn cold_round(plan: &Plan, server: &Server, argv: &[String], out: &mut Outcome) {
    let Some(wire) = out.stdio_wire.as_deref() else {
        return;
    };
    let wire = if wire == Wire::Modern.as_str() {
        Wire::Modern
    } else {
        Wire::Legacy
    };
    for _ in 0..plan.cold_starts_per_round {
        let l = launch(plan, argv.to_vec(), log_path(plan, server.name(), "cold"));
        match stdio::cold_start(&l, wire).await {
            Ok(d) => out.cold_start_ms.push(d.as_secs_f64() * 1000.0),
            Err(why) => {
                out.errors += 1;
                out.note_error("cold start", &why);
            }
        }
    }
}

fn short_summary(f: &Figures, cold: &[f64]) -> String {
    let get = |k: &str| f.get(k).copied();
    let mut parts = Vec::new();
    if let Some(v) = get("http_c32_rps") {
        parts.push(format!("http c=32 {v:.0}/s"));
    }
    if let Some(v) = get("http_c32_cpu_us") {
        parts.push(format!("{v:.1} cpu-µs/req"));
    }
    if let Some(v) = get("stdio_n_rps") {
        parts.push(format!("stdio {v:.0}/s"));
    }
    if let Some(v) = median(cold) {
        parts.push(format!("cold {v:.1} ms"));
    }
    parts.join(", ")
}

/// Measures every available server, interleaved round by round.
pub async fn run(plan: &Plan, servers: &[Server]) -> Vec<Outcome> {
    let mut outcomes: Vec<Outcome> = servers.iter().map(Outcome::new).collect();
    for (server, out) in servers.iter().zip(outcomes.iter_mut()) {
        let mut missing: Vec<String> = plan
            .known_unavailable
            .get(server.name())
            .cloned()
            .into_iter()
            .collect();
        missing.extend(
            [&server.http, &server.stdio]
                .into_iter()
                .flatten()
                .filter_map(|argv| proc::missing_parts(argv, &plan.root)),
        );
        if let Some(why) = missing.first() {
            out.unavailable = Some(why.clone());
            eprintln!("mcp-bench: {} unavailable: {why}", server.name());
        }
        let warnings: Vec<String> = [&server.http, &server.stdio]
            .into_iter()
            .flatten()
            .filter_map(|argv| proc::profile_warning(argv, &plan.root))
            .collect();
        if let Some(warning) = warnings.first() {
            eprintln!("mcp-bench: warning: {}: {warning}", server.name());
            out.note("build", &format!("warning: {warning}"));
        }
    }
    let order: Vec<usize> = (0..servers.len())
        .filter(|&i| outcomes[i].unavailable.is_none())
        .collect();
    for round in 0..plan.rounds {
        // A different server goes first each round, so none always follows
        // the same neighbour.
        let mut this_round = order.clone();
        if !this_round.is_empty() {
            let k = round % this_round.len();
            this_round.rotate_left(k);
        }
        for &i in &this_round {
            let server = &servers[i];
            let out = &mut outcomes[i];
            let mut figures = Figures::new();
            let t0 = Instant::now();
            if let Some(argv) = &server.http {
                http_round(plan, server, argv, out, &mut figures).await;
            }
            if let Some(argv) = &server.stdio {
                stdio_round(plan, server, argv, out, &mut figures).await;
            }
            let cold_before = out.cold_start_ms.len();
            if let Some(argv) = &server.stdio {
                cold_round(plan, server, argv, out).await;
            }
            // This round's own cold start, so targets can pair rounds.
            if let Some(m) = median(&out.cold_start_ms[cold_before..]) {
                figures.insert("cold_start_ms".into(), m);
            }
            eprintln!(
                "mcp-bench: round {}/{} {:<22} {} ({:.1} s, {} errors so far)",
                round + 1,
                plan.rounds,
                server.name(),
                short_summary(&figures, &out.cold_start_ms[cold_before..]),
                t0.elapsed().as_secs_f64(),
                out.errors
            );
            out.rounds.push(figures);
        }
    }
    for out in &mut outcomes {
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
    outcomes
}
