//! The client rows of `mcp-bench run`: MCP *client* libraries calling
//! `echo` against one fast server (the ferromcp Rust echo server over
//! Streamable HTTP), measured like the servers are: calls per second and the
//! client's own CPU time per call.
//!
//! A client is a small program (bench/clients/, bench/sdk/) that speaks a
//! line protocol with mcp-bench over its stdin and stdout, so that start-up,
//! imports and the connection are left out of what is measured:
//!
//! ```text
//! client  → ready <protocol-version>     connected, one echo call checked
//! bench   → run <in-flight> <seconds>    call echo for that long, with that
//!                                        many calls in flight
//! client  → error <message>              (optional) the first failure
//! client  → done <ok> <errors> <secs>    checked replies, failed calls, and
//!                                        the phase's own wall time
//! bench   closes stdin                   the client disconnects and exits
//! ```
//!
//! Every call sends its own text (so no result cache can answer it) and
//! checks that the reply's first text content is that text. mcp-bench reads
//! the CPU time (utime + stime) of the client's process tree from /proc right
//! before writing `run` and right after reading `done`, and the server's the
//! same way. The client is pinned to the load generator's core (CPU 0), the
//! server to the servers' core (CPU 1).

use serde::Deserialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::config::{Target, substitute_port};
use crate::http::Endpoint;
use crate::proc::{self, Launch};
use crate::report::{self, TargetResult};
use crate::runner::{Figures, Outcome, Plan};
use crate::stats::median;

/// bench/clients.json: the server the clients call, the clients, targets.
#[derive(Debug, Clone, Deserialize)]
pub struct ClientsConfig {
    /// The server every client calls (`{port}` is replaced; endpoint /mcp).
    pub server: Vec<String>,
    pub clients: Vec<ClientSpec>,
    /// Targets between two clients' figures (same rules as the servers').
    #[serde(default)]
    pub targets: Vec<Target>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ClientSpec {
    /// Short unique name, used in tables and JSON.
    pub name: String,
    /// `ferromcp`, `official`, or `baseline` (the least a client in that
    /// language can do: a ceiling, not a competitor).
    pub kind: String,
    pub language: String,
    #[serde(default)]
    pub description: String,
    /// The client to compare with in the ratios table.
    #[serde(default)]
    pub compare_with: Option<String>,
    /// The program; `{url}` stands for the server's endpoint.
    pub command: Vec<String>,
}

/// Reads bench/clients.json.
pub fn load(path: &Path) -> Result<ClientsConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let config: ClientsConfig =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    if config.server.is_empty() {
        return Err(format!("{}: the server command is empty", path.display()));
    }
    let mut names: Vec<&str> = config.clients.iter().map(|c| c.name.as_str()).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("client name {} is used twice", w[0]));
    }
    if let Some(c) = config.clients.iter().find(|c| c.command.is_empty()) {
        return Err(format!("{}: empty command", c.name));
    }
    Ok(config)
}

/// How long a client may take to start and connect (interpreters import a
/// lot), and how long past its phase it may take to report.
const READY_TIMEOUT: Duration = Duration::from_secs(60);
const DONE_GRACE: Duration = Duration::from_secs(30);

/// What a client reported for one phase.
#[derive(Debug, Clone, Default)]
struct Phase {
    ok: u64,
    errors: u64,
    secs: f64,
    first_error: Option<String>,
}

/// A running client program and its end of the line protocol.
struct ClientProc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    pid: u32,
    log: Option<PathBuf>,
}

impl ClientProc {
    fn spawn(launch: &Launch) -> Result<ClientProc, String> {
        let mut child = proc::command(launch, Stdio::piped(), Stdio::piped())
            .map_err(|e| format!("cannot prepare {:?}: {e}", launch.argv))?
            .spawn()
            .map_err(|e| format!("cannot start {:?}: {e}", launch.argv))?;
        let pid = child.id().ok_or("the client exited at once")?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().ok_or("no stdout pipe")?;
        Ok(ClientProc {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            pid,
            log: launch.log.clone(),
        })
    }

    fn failed(&self, why: &str) -> String {
        let tail = proc::log_tail(self.log.as_deref());
        if tail.is_empty() {
            why.to_owned()
        } else {
            format!("{why}; log:\n{tail}")
        }
    }

    /// The next protocol line, skipping anything else a library printed.
    async fn line(&mut self, deadline: Instant, waiting_for: &str) -> Result<String, String> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.lines.next_line()).await {
                Err(_) => return Err(self.failed(&format!("no `{waiting_for}` in time"))),
                Ok(Err(e)) => return Err(self.failed(&format!("reading its stdout: {e}"))),
                Ok(Ok(None)) => {
                    return Err(self.failed(&format!("exited before `{waiting_for}`")));
                }
                Ok(Ok(Some(line))) => {
                    let line = line.trim().to_owned();
                    if ["ready", "done", "error"]
                        .iter()
                        .any(|w| line == *w || line.starts_with(&format!("{w} ")))
                    {
                        return Ok(line);
                    }
                }
            }
        }
    }

    /// Waits for `ready`; returns the protocol version the client speaks.
    async fn ready(&mut self) -> Result<String, String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            let line = self.line(deadline, "ready").await?;
            if let Some(rest) = line.strip_prefix("error ") {
                return Err(self.failed(rest));
            }
            if let Some(version) = line.strip_prefix("ready") {
                let version = version.trim();
                return Ok(if version.is_empty() {
                    "?".into()
                } else {
                    version.to_owned()
                });
            }
        }
    }

    /// One phase: `run N SECS`, then the client's report.
    async fn run(&mut self, in_flight: usize, secs: f64) -> Result<Phase, String> {
        let command = format!("run {in_flight} {secs}\n");
        let stdin = self.stdin.as_mut().ok_or("stdin already closed")?;
        if let Err(e) = stdin.write_all(command.as_bytes()).await {
            return Err(self.failed(&format!("writing to its stdin: {e}")));
        }
        let _ = stdin.flush().await;
        let deadline = Instant::now() + Duration::from_secs_f64(secs) + DONE_GRACE;
        let mut phase = Phase::default();
        loop {
            let line = self.line(deadline, "done").await?;
            if let Some(rest) = line.strip_prefix("error ") {
                phase.first_error.get_or_insert_with(|| rest.to_owned());
                continue;
            }
            let Some(rest) = line.strip_prefix("done ") else {
                continue;
            };
            let words: Vec<&str> = rest.split_whitespace().collect();
            let parsed = match words.as_slice() {
                [ok, errors, secs, ..] => ok
                    .parse()
                    .ok()
                    .zip(errors.parse().ok())
                    .zip(secs.parse::<f64>().ok()),
                _ => None,
            };
            // A phase takes time: zero, negative or NaN seconds is a broken report.
            let Some(((ok, errors), secs)) = parsed.filter(|(_, secs)| *secs > 0.0) else {
                return Err(format!("malformed report {line:?}"));
            };
            phase.ok = ok;
            phase.errors = errors;
            phase.secs = secs;
            return Ok(phase);
        }
    }

    /// Closes stdin (the client disconnects and exits), then makes sure.
    async fn stop(mut self) {
        drop(self.stdin.take());
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            proc::kill(&mut self.child).await;
        } else {
            // Anything it left behind in its process group.
            proc::kill(&mut self.child).await;
        }
    }
}

fn log_path(plan: &Plan, name: &str, what: &str) -> Option<PathBuf> {
    plan.log_dir
        .as_ref()
        .map(|d| d.join(format!("client-{name}-{what}.log")))
}

/// Starts the echo server and waits for its port.
async fn start_server(
    plan: &Plan,
    argv: &[String],
    log: Option<PathBuf>,
) -> Result<(Child, u32, Endpoint), String> {
    let port = proc::free_port().map_err(|e| format!("no free port: {e}"))?;
    let launch = Launch {
        argv: substitute_port(argv, port),
        cwd: plan.root.clone(),
        cpu: plan.server_cpu,
        log: log.clone(),
    };
    let stdout = proc::log_stdio(&launch).map_err(|e| format!("cannot open the log: {e}"))?;
    let mut child = proc::command(&launch, Stdio::null(), stdout)
        .map_err(|e| format!("cannot prepare {argv:?}: {e}"))?
        .spawn()
        .map_err(|e| format!("cannot start {argv:?}: {e}"))?;
    let pid = child.id().ok_or("the server exited at once")?;
    let endpoint = Endpoint::localhost(port);
    let started = Instant::now();
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Err(format!(
                "the server exited with {status}; log:\n{}",
                proc::log_tail(log.as_deref())
            ));
        }
        if tokio::net::TcpStream::connect(endpoint.addr).await.is_ok() {
            return Ok((child, pid, endpoint));
        }
        if started.elapsed() > READY_TIMEOUT {
            proc::kill(&mut child).await;
            return Err("the server is not listening".into());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn new_outcome(spec: &ClientSpec) -> Outcome {
    Outcome {
        name: spec.name.clone(),
        kind: spec.kind.clone(),
        language: spec.language.clone(),
        description: spec.description.clone(),
        compare_with: spec.compare_with.clone(),
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

fn note_error(out: &mut Outcome, phase: &str, why: &str) {
    let line = format!("{phase}: {why}");
    if out.error_messages.len() < 8 && !out.error_messages.contains(&line) {
        out.error_messages.push(line);
    }
}

/// One round of one client: its own server, warm-up, then the phases.
async fn client_round(
    plan: &Plan,
    config: &ClientsConfig,
    spec: &ClientSpec,
    out: &mut Outcome,
    figures: &mut Figures,
) {
    let server_log = log_path(plan, &spec.name, "server");
    let (mut server, server_pid, endpoint) =
        match start_server(plan, &config.server, server_log).await {
            Ok(s) => s,
            Err(why) => {
                out.errors += 1;
                note_error(out, "server start", &why);
                return;
            }
        };
    let url = format!("http://{}{}", endpoint.addr, endpoint.path);
    let argv: Vec<String> = spec
        .command
        .iter()
        .map(|a| a.replace("{url}", &url))
        .collect();
    let launch = Launch {
        argv,
        cwd: plan.root.clone(),
        cpu: plan.generator_cpu,
        log: log_path(plan, &spec.name, "client"),
    };
    let mut client = match ClientProc::spawn(&launch) {
        Ok(c) => c,
        Err(why) => {
            out.errors += 1;
            note_error(out, "client start", &why);
            proc::kill(&mut server).await;
            return;
        }
    };
    match client.ready().await {
        Ok(version) => out.http_wire = Some(version),
        Err(why) => {
            out.errors += 1;
            note_error(out, "connect", &why);
            client.stop().await;
            proc::kill(&mut server).await;
            return;
        }
    }
    let mut warm_ok = false;
    match client.run(plan.stdio_in_flight, plan.warmup_secs).await {
        Ok(p) => {
            out.errors += p.errors;
            if let Some(e) = &p.first_error {
                note_error(out, "warm-up", e);
            }
            warm_ok = p.ok > 0;
        }
        Err(why) => {
            out.errors += 1;
            note_error(out, "warm-up", &why);
        }
    }
    if warm_ok {
        let client_tree = proc::process_tree(client.pid);
        let server_tree = proc::process_tree(server_pid);
        for (prefix, n) in [("client_seq", 1), ("client_n", plan.stdio_in_flight)] {
            let (c0, s0) = (
                proc::cpu_seconds(&client_tree),
                proc::cpu_seconds(&server_tree),
            );
            let phase = client.run(n, plan.phase_secs).await;
            let (c1, s1) = (
                proc::cpu_seconds(&client_tree),
                proc::cpu_seconds(&server_tree),
            );
            match phase {
                Ok(p) => {
                    out.checked_replies += p.ok;
                    out.errors += p.errors;
                    if let Some(e) = &p.first_error {
                        note_error(out, prefix, e);
                    }
                    if p.ok > 0 {
                        let ok = p.ok as f64;
                        figures.insert(format!("{prefix}_rps"), ok / p.secs);
                        figures.insert(format!("{prefix}_cpu_us"), (c1 - c0) * 1e6 / ok);
                        figures.insert(format!("{prefix}_server_cpu_us"), (s1 - s0) * 1e6 / ok);
                    }
                }
                Err(why) => {
                    out.errors += 1;
                    note_error(out, prefix, &why);
                    break;
                }
            }
        }
        if let Some(rss) = proc::peak_rss_mib(&client_tree) {
            figures.insert("client_rss_mib".into(), rss);
        }
    }
    client.stop().await;
    proc::kill(&mut server).await;
}

/// Measures every client, interleaved round by round like the servers.
pub async fn run(plan: &Plan, config: &ClientsConfig) -> Vec<Outcome> {
    let mut outcomes: Vec<Outcome> = config.clients.iter().map(new_outcome).collect();
    for (spec, out) in config.clients.iter().zip(outcomes.iter_mut()) {
        let why = plan.known_unavailable.get(&spec.name).cloned().or_else(|| {
            proc::missing_parts(&config.server, &plan.root)
                .map(|m| format!("server: {m}"))
                .or_else(|| proc::missing_parts(&spec.command, &plan.root))
        });
        if let Some(why) = why {
            eprintln!("mcp-bench: client {} unavailable: {why}", spec.name);
            out.unavailable = Some(why);
        }
    }
    if let Some(w) = proc::profile_warning(&config.server, &plan.root) {
        eprintln!("mcp-bench: warning: client rows' server: {w}");
        for out in &mut outcomes {
            out.notes.push(format!("server: warning: {w}"));
        }
    }
    let order: Vec<usize> = (0..config.clients.len())
        .filter(|&i| outcomes[i].unavailable.is_none())
        .collect();
    for round in 0..plan.rounds {
        let mut this_round = order.clone();
        if !this_round.is_empty() {
            let k = round % this_round.len();
            this_round.rotate_left(k);
        }
        for &i in &this_round {
            let spec = &config.clients[i];
            let out = &mut outcomes[i];
            let mut figures = Figures::new();
            let t0 = Instant::now();
            client_round(plan, config, spec, out, &mut figures).await;
            let get = |k: &str| figures.get(k).copied().unwrap_or(0.0);
            eprintln!(
                "mcp-bench: round {}/{} client {:<22} seq {:.0}/s {:.1} cpu-µs/call, {} in flight {:.0}/s ({:.1} s, {} errors so far)",
                round + 1,
                plan.rounds,
                spec.name,
                get("client_seq_rps"),
                get("client_seq_cpu_us"),
                plan.stdio_in_flight,
                get("client_n_rps"),
                t0.elapsed().as_secs_f64(),
                out.errors
            );
            out.rounds.push(figures);
        }
    }
    for out in &mut outcomes {
        summarise(out);
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

/// Medians over the rounds.
fn summarise(out: &mut Outcome) {
    let mut keys: Vec<&String> = out.rounds.iter().flat_map(|r| r.keys()).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut medians = Figures::new();
    for key in keys {
        let values: Vec<f64> = out
            .rounds
            .iter()
            .filter_map(|r| r.get(key).copied())
            .collect();
        if let Some(m) = median(&values) {
            medians.insert(key.clone(), m);
        }
    }
    out.median = medians;
}

fn cell(o: &Outcome, metric: &str, f: fn(f64) -> String) -> String {
    o.figure(metric).map(f).unwrap_or_else(|| "—".into())
}

fn rate(v: f64) -> String {
    let n = v.round() as u64;
    let digits = n.to_string();
    let mut s = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            s.push(',');
        }
        s.push(c);
    }
    s
}

fn micros(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn ratio(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0}x")
    } else if v >= 1.0 {
        format!("{v:.1}x")
    } else {
        format!("{v:.2}x")
    }
}

/// The clients' figures table.
pub fn figures_table(outcomes: &[Outcome], plan: &Plan) -> String {
    let n = plan.stdio_in_flight;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "| client | wire | seq calls/s | seq client CPU µs/call | seq server CPU µs/call | {n} in flight calls/s | {n} in flight client CPU µs/call | client peak RSS MiB | errors |"
    );
    let _ = writeln!(t, "|---|---|--:|--:|--:|--:|--:|--:|--:|");
    for o in outcomes {
        if let Some(why) = &o.unavailable {
            let why = why.lines().next().unwrap_or("").replace('|', "/");
            let _ = writeln!(
                t,
                "| {} | error: {why} | | | | | | | {} |",
                o.name, o.errors
            );
            continue;
        }
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            o.name,
            o.http_wire.as_deref().unwrap_or("—"),
            cell(o, "client_seq_rps", rate),
            cell(o, "client_seq_cpu_us", micros),
            cell(o, "client_seq_server_cpu_us", micros),
            cell(o, "client_n_rps", rate),
            cell(o, "client_n_cpu_us", micros),
            cell(o, "client_rss_mib", micros),
            o.errors
        );
    }
    t
}

const RATIO_METRICS: [&str; 4] = [
    "client_seq_rps",
    "client_seq_cpu_us",
    "client_n_rps",
    "client_n_cpu_us",
];

/// Each client against the official client it is compared with.
pub fn ratios_table(outcomes: &[Outcome]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "| client | vs | seq calls/s | seq CPU/call | in flight calls/s | in flight CPU/call |"
    );
    let _ = writeln!(t, "|---|---|--:|--:|--:|--:|");
    for o in outcomes.iter().filter(|o| o.unavailable.is_none()) {
        let Some(name) = &o.compare_with else {
            continue;
        };
        let reference = outcomes
            .iter()
            .find(|r| &r.name == name && r.unavailable.is_none());
        let cells: Vec<String> = RATIO_METRICS
            .iter()
            .map(
                |m| match (o.figure(m), reference.and_then(|r| r.figure(m))) {
                    (Some(a), Some(b)) if b > 0.0 => ratio(a / b),
                    _ => "—".into(),
                },
            )
            .collect();
        let vs = if reference.is_some() {
            name.clone()
        } else {
            format!("{name} (not measured)")
        };
        let _ = writeln!(t, "| {} | {vs} | {} |", o.name, cells.join(" | "));
    }
    t
}

/// The Markdown section of the report for the client rows.
pub fn markdown(outcomes: &[Outcome], targets: &[TargetResult], plan: &Plan) -> String {
    let mut m = String::new();
    if outcomes.is_empty() {
        return m;
    }
    let _ = writeln!(
        m,
        "\n### Clients: call_tool(echo) against the ferromcp Rust echo server over Streamable HTTP (medians over rounds)\n"
    );
    m.push_str(&figures_table(outcomes, plan));
    let _ = writeln!(
        m,
        "\n### Client ratios (client / official client: above 1x means more calls per second, more CPU per call)\n"
    );
    m.push_str(&ratios_table(outcomes));
    if !targets.is_empty() {
        let _ = writeln!(m, "\n### Client targets\n");
        m.push_str(&report::targets_table(targets));
    }
    let noted: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| !o.error_messages.is_empty() || !o.notes.is_empty())
        .collect();
    if !noted.is_empty() {
        let _ = writeln!(m, "\n### Client errors and notes\n");
        for o in noted {
            for e in &o.error_messages {
                let _ = writeln!(m, "- {}: error: {}", o.name, e.lines().next().unwrap_or(""));
            }
            for n in &o.notes {
                let _ = writeln!(m, "- {}: {n}", o.name);
            }
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_rejects_duplicates_and_empty_commands() {
        let dir = std::env::temp_dir().join(format!("ferromcp-clients-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("clients.json");
        let write = |v: serde_json::Value| std::fs::write(&path, v.to_string()).unwrap();
        let client = |name: &str, command: Vec<&str>| serde_json::json!({"name": name, "kind": "ferromcp", "language": "rust", "command": command});
        write(
            serde_json::json!({"server": ["s"], "clients": [client("a", vec!["x"]), client("a", vec!["y"])]}),
        );
        assert!(load(&path).unwrap_err().contains("used twice"));
        write(serde_json::json!({"server": ["s"], "clients": [client("a", vec![])]}));
        assert!(load(&path).unwrap_err().contains("empty command"));
        write(serde_json::json!({"server": ["s"], "clients": [client("a", vec!["x", "{url}"])]}));
        assert_eq!(load(&path).unwrap().clients[0].command[1], "{url}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
