//! mcp-bench: the load generator and benchmark driver.
//!
//! ```text
//! mcp-bench run   [--short] [--rounds N] [--phase SECS] [--only a,b] [--config FILE]
//!                 [--manifest FILE] [--root DIR] [--out DIR] [--no-pin]
//!                 [--generator-cpu N] [--server-cpu N] [--strict] [--clients FILE|none] [--clients-only]
//!                 [--no-scale]
//! mcp-bench scale [--short] [--rounds N] [--phase SECS] [--streams N] [--triggers N]
//!                 [--config FILE] [--manifest FILE] [--root DIR] [--no-pin]
//!                 [--generator-cpu N] [--server-cpu N] [--json FILE]
//! mcp-bench http  URL [--concurrency N] [--duration SECS] [--pad BYTES]
//! mcp-bench stdio [--in-flight N] [--duration SECS] [--pad BYTES] -- CMD ARGS…
//! mcp-bench cold  [--times N] -- CMD ARGS…
//! mcp-bench soak  [--duration SECS] [--warmup SECS] [--concurrency N] [--only rust,c]
//!                 [--transports http,stdio] [--manifest FILE] [--root DIR] [--log-dir DIR]
//! ```
//!
//! `run` measures every server of bench/servers.json and writes
//! bench/results/latest.{json,md}; BENCH_SHORT=1 is the same as --short.
//! It also measures the client libraries of bench/clients.json (see
//! `ferromcp_bench::clients`): read by default only when --config is not
//! given, so a custom server list runs no clients unless --clients names a
//! file; `--clients none` skips them, `--clients-only` skips the servers.
//! `run` also measures the scale-out rows (`ferromcp_bench::scale`: the
//! Redis event bus's cost to plain calls, the fan-out of a change to 1,000
//! listen streams over 3 replicas) unless `--no-scale`, `--clients-only`,
//! or an `--only` list without `scale`; `scale` measures them alone and
//! prints them (with their targets from bench/servers.json) without
//! touching bench/results.
//! `soak` drives every echo server of examples/manifest.json and fails if its
//! memory or descriptors grow after warm-up (see `ferromcp_bench::soak`).

use ferromcp_bench::clients;
use ferromcp_bench::config;
use ferromcp_bench::http::{self, Endpoint};
use ferromcp_bench::proc::{self, Launch};
use ferromcp_bench::report::{self, Machine, Report};
use ferromcp_bench::runner::{self, Plan};
use ferromcp_bench::scale;
use ferromcp_bench::soak;
use ferromcp_bench::stdio::{self, StdioServer, Stop};
use std::net::ToSocketAddrs;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "usage:
  mcp-bench run   [--short] [--rounds N] [--phase SECS] [--only a,b] [--config FILE]
                  [--manifest FILE] [--root DIR] [--out DIR] [--no-pin]
                  [--generator-cpu N] [--server-cpu N] [--strict] [--clients FILE|none] [--clients-only]
                  [--no-scale]
  mcp-bench scale [--short] [--rounds N] [--phase SECS] [--streams N] [--triggers N]
                  [--config FILE] [--manifest FILE] [--root DIR] [--no-pin]
                  [--generator-cpu N] [--server-cpu N] [--json FILE]
  mcp-bench http  URL [--concurrency N] [--duration SECS] [--pad BYTES]
  mcp-bench stdio [--in-flight N] [--duration SECS] [--pad BYTES] -- CMD ARGS...
  mcp-bench cold  [--times N] -- CMD ARGS...
  mcp-bench soak  [--duration SECS] [--warmup SECS] [--concurrency N] [--only rust,c]
                  [--transports http,stdio] [--manifest FILE] [--root DIR] [--log-dir DIR]";

/// Options as `--name value` pairs and flags, then the words after `--`.
struct Args {
    options: Vec<(String, Option<String>)>,
    positional: Vec<String>,
    command: Vec<String>,
}

const FLAGS: [&str; 6] = [
    "--short",
    "--no-pin",
    "--strict",
    "--help",
    "--clients-only",
    "--no-scale",
];

impl Args {
    fn parse(raw: &[String]) -> Result<Args, String> {
        let mut args = Args {
            options: Vec::new(),
            positional: Vec::new(),
            command: Vec::new(),
        };
        let mut it = raw.iter();
        while let Some(a) = it.next() {
            if a == "--" {
                args.command = it.cloned().collect();
                break;
            }
            if FLAGS.contains(&a.as_str()) {
                args.options.push((a.clone(), None));
            } else if a.starts_with("--") {
                let value = it.next().ok_or_else(|| format!("{a} needs a value"))?;
                args.options.push((a.clone(), Some(value.clone())));
            } else {
                args.positional.push(a.clone());
            }
        }
        Ok(args)
    }

    fn flag(&self, name: &str) -> bool {
        self.options.iter().any(|(n, _)| n == name)
    }

    fn value(&self, name: &str) -> Option<&str> {
        self.options
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    fn number<T: std::str::FromStr>(&self, name: &str, default: T) -> Result<T, String> {
        match self.value(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("{name}: not a number: {v:?}")),
        }
    }

    fn reject_unknown(&self, known: &[&str]) -> Result<(), String> {
        match self
            .options
            .iter()
            .find(|(n, _)| !known.contains(&n.as_str()))
        {
            Some((n, _)) => Err(format!("unknown option {n}")),
            None => Ok(()),
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    // One thread: the generator is pinned to one core, and a single-threaded
    // scheduler has no cross-thread wake-ups to pay for.
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

fn print_load(label: &str, r: &mut ferromcp_bench::stats::LoadResult) {
    let l = r.latency();
    println!(
        "{label}: {:.0} calls/s, {} ok, {} errors ({} wrong answers), p50 {:.1} µs, p90 {:.1} µs, p99 {:.1} µs, max {:.1} µs",
        r.rate(),
        r.ok,
        r.errors,
        r.wrong,
        l.p50_us,
        l.p90_us,
        l.p99_us,
        l.max_us
    );
    if let Some(e) = &r.first_error {
        println!("first error: {e}");
    }
}

fn cmd_http(args: &Args) -> Result<ExitCode, String> {
    args.reject_unknown(&["--concurrency", "--duration", "--pad"])?;
    let url = args.positional.first().ok_or("http: missing URL")?;
    let rest = url.strip_prefix("http://").ok_or("only http:// URLs")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let addr = authority
        .to_socket_addrs()
        .map_err(|e| format!("{authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("{authority}: no address"))?;
    let endpoint = Endpoint {
        addr,
        path: path.to_owned(),
    };
    let concurrency: usize = args.number("--concurrency", 32)?;
    let duration: f64 = args.number("--duration", 5.0)?;
    let pad: usize = args.number("--pad", 0)?;
    runtime()?.block_on(async {
        let session = http::open_session(&endpoint).await?;
        println!("wire: {}", session.wire.as_str());
        let mut r = http::load(
            &endpoint,
            &session,
            concurrency,
            Duration::from_secs_f64(duration),
            pad,
        )
        .await;
        print_load(&format!("http c={concurrency}"), &mut r);
        Ok(if r.errors == 0 && r.ok > 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        })
    })
}

fn stdio_launch(args: &Args) -> Result<Launch, String> {
    if args.command.is_empty() {
        return Err("missing the server command after --".into());
    }
    let cwd = std::env::current_dir().map_err(|e| e.to_string())?;
    Ok(Launch {
        argv: args.command.clone(),
        cwd,
        cpu: None,
        log: None,
    })
}

fn cmd_stdio(args: &Args) -> Result<ExitCode, String> {
    args.reject_unknown(&["--in-flight", "--duration", "--pad"])?;
    let launch = stdio_launch(args)?;
    let in_flight: usize = args.number("--in-flight", 16)?;
    let duration: f64 = args.number("--duration", 5.0)?;
    let pad: usize = args.number("--pad", 0)?;
    runtime()?.block_on(async {
        let mut server = StdioServer::spawn(&launch)?;
        let wire = server.detect().await?;
        println!("wire: {}", wire.as_str());
        let mut r = server
            .load(
                wire,
                in_flight,
                Stop::After(Duration::from_secs_f64(duration)),
                pad,
            )
            .await;
        server.stop().await;
        print_load(&format!("stdio {in_flight} in flight"), &mut r);
        Ok(if r.errors == 0 && r.ok > 0 {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        })
    })
}

fn cmd_cold(args: &Args) -> Result<ExitCode, String> {
    args.reject_unknown(&["--times"])?;
    let launch = stdio_launch(args)?;
    let times: usize = args.number("--times", 5)?;
    runtime()?.block_on(async {
        let mut probe = StdioServer::spawn(&launch)?;
        let wire = probe.detect().await;
        probe.stop().await;
        let wire = wire?;
        let mut samples = Vec::new();
        for _ in 0..times {
            samples.push(stdio::cold_start(&launch, wire).await?.as_secs_f64() * 1000.0);
        }
        let median = ferromcp_bench::stats::median(&samples).unwrap_or(0.0);
        println!(
            "cold start ({}): median {median:.2} ms of {samples:.2?}",
            wire.as_str()
        );
        Ok(ExitCode::SUCCESS)
    })
}

fn cmd_soak(args: &Args) -> Result<ExitCode, String> {
    args.reject_unknown(&[
        "--duration",
        "--warmup",
        "--concurrency",
        "--only",
        "--transports",
        "--manifest",
        "--root",
        "--log-dir",
    ])?;
    let root = match args.value("--root") {
        Some(r) => PathBuf::from(r),
        None => std::env::current_dir().map_err(|e| e.to_string())?,
    };
    let manifest = args
        .value("--manifest")
        .map_or_else(|| root.join("examples/manifest.json"), PathBuf::from);
    let mut subjects = soak::subjects(&manifest)?;
    if let Some(only) = args.value("--only") {
        let wanted: Vec<&str> = only.split(',').map(str::trim).collect();
        subjects.retain(|s| wanted.contains(&s.language.as_str()));
    }
    if let Some(transports) = args.value("--transports") {
        let wanted: Vec<&str> = transports.split(',').map(str::trim).collect();
        subjects.retain(|s| wanted.contains(&s.transport.as_str()));
    }
    if subjects.is_empty() {
        return Err("soak: no echo server selected".into());
    }
    let duration: f64 = args.number("--duration", 60.0)?;
    // A quarter of the run by default: long enough for allocators, JITs
    // and caches to reach their working size.
    let warmup: f64 = args.number("--warmup", duration / 4.0)?;
    if !(warmup >= 0.0 && warmup < duration) {
        return Err("--warmup must be shorter than --duration".into());
    }
    let log_dir = args.value("--log-dir").map(PathBuf::from);
    if let Some(dir) = &log_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let plan = soak::Plan {
        root,
        duration: Duration::from_secs_f64(duration),
        warmup: Duration::from_secs_f64(warmup),
        concurrency: args.number("--concurrency", 8)?,
        tolerance: soak::Tolerance::default(),
        log_dir,
    };
    let rt = runtime()?;
    let mut outcomes = Vec::new();
    for subject in &subjects {
        eprintln!(
            "mcp-bench soak: {} {} for {duration} s (warm-up {warmup} s)",
            subject.language, subject.transport
        );
        outcomes.push(rt.block_on(soak::soak(&plan, subject)));
    }
    println!("{}", soak::table(&outcomes));
    Ok(if outcomes.iter().all(soak::Outcome::passed) {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Pins the load generator (this thread, before the runtime starts, so
/// every thread inherits the mask) and says where servers go; returns the
/// number of CPUs.
fn pin(args: &Args, plan: &mut Plan) -> Result<usize, String> {
    let cpus = proc::cpus();
    if !args.flag("--no-pin") && cpus >= 2 {
        let generator: usize = args.number("--generator-cpu", 0)?;
        let server: usize = args.number("--server-cpu", 1)?;
        if proc::which("taskset").is_none() {
            eprintln!("mcp-bench: taskset (util-linux) not found; servers are not pinned");
        } else {
            plan.server_cpu = Some(server);
        }
        match proc::pin_self(generator) {
            Ok(()) => plan.generator_cpu = Some(generator),
            Err(e) => eprintln!("mcp-bench: cannot pin the load generator: {e}"),
        }
    }
    Ok(cpus)
}

fn is_scale_row(name: &str) -> bool {
    name == scale::PLAIN_ROW || name == scale::BUS_ROW
}

fn root_dir(args: &Args) -> Result<PathBuf, String> {
    match args.value("--root") {
        Some(r) => Ok(PathBuf::from(r)),
        None => std::env::current_dir().map_err(|e| e.to_string()),
    }
}

/// The scale-out rows alone: printed, with their targets, and written as
/// JSON only where `--json` says (bench/results is left to `run`).
fn cmd_scale(args: &Args) -> Result<ExitCode, String> {
    args.reject_unknown(&[
        "--short",
        "--rounds",
        "--phase",
        "--streams",
        "--triggers",
        "--config",
        "--manifest",
        "--root",
        "--no-pin",
        "--generator-cpu",
        "--server-cpu",
        "--json",
    ])?;
    let root = root_dir(args)?;
    let config_path = args
        .value("--config")
        .map_or_else(|| root.join("bench/servers.json"), PathBuf::from);
    let manifest_path = args
        .value("--manifest")
        .map_or_else(|| root.join("examples/manifest.json"), PathBuf::from);
    let config_targets = config::load_targets(&config_path)?;
    let argv = scale::server_argv(&manifest_path)?;
    let short = args.flag("--short") || std::env::var("BENCH_SHORT").is_ok_and(|v| v == "1");
    let mut plan = if short {
        Plan::short(root.clone())
    } else {
        Plan::full(root.clone())
    };
    plan.rounds = args.number("--rounds", plan.rounds)?.max(1);
    plan.phase_secs = args.number("--phase", plan.phase_secs)?;
    plan.fan_out_streams = args.number("--streams", plan.fan_out_streams)?.max(1);
    plan.fan_out_triggers = args.number("--triggers", plan.fan_out_triggers)?.max(1);
    pin(args, &mut plan)?;
    let log_dir = std::env::temp_dir().join(format!("mcp-bench-scale-{}", std::process::id()));
    std::fs::create_dir_all(&log_dir)
        .map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
    plan.log_dir = Some(log_dir.clone());
    eprintln!(
        "mcp-bench scale: {} rounds of {} s phases, {} listen streams, {} triggers; server logs in {}",
        plan.rounds,
        plan.phase_secs,
        plan.fan_out_streams,
        plan.fan_out_triggers,
        log_dir.display()
    );
    let scale = runtime()?.block_on(scale::run(&plan, &argv));
    let mut targets = report::evaluate(&config_targets, &scale.bus);
    targets.retain(|t| is_scale_row(&t.server));
    let mut markdown = scale::markdown(&scale, &plan);
    if !targets.is_empty() {
        markdown.push_str("\n### Targets\n\n");
        markdown.push_str(&report::targets_table(&targets));
    }
    println!("{markdown}");
    if let Some(path) = args.value("--json") {
        let json = serde_json::to_string_pretty(&serde_json::json!({
            "plan": plan,
            "scale": scale,
            "targets": targets,
        }))
        .map_err(|e| e.to_string())?;
        std::fs::write(path, json).map_err(|e| format!("cannot write {path}: {e}"))?;
    }
    // A missed target is reported, not a failure: as with `run`.
    Ok(if scale.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn cmd_run(args: &Args, raw: &[String]) -> Result<ExitCode, String> {
    args.reject_unknown(&[
        "--short",
        "--rounds",
        "--phase",
        "--only",
        "--config",
        "--manifest",
        "--root",
        "--out",
        "--no-pin",
        "--generator-cpu",
        "--server-cpu",
        "--strict",
        "--clients",
        "--clients-only",
        "--no-scale",
    ])?;
    let root = root_dir(args)?;
    let config_path = args
        .value("--config")
        .map_or_else(|| root.join("bench/servers.json"), PathBuf::from);
    let manifest_path = args
        .value("--manifest")
        .map_or_else(|| root.join("examples/manifest.json"), PathBuf::from);
    let (config, mut servers) = config::load(&config_path, &manifest_path)?;
    let clients_path = match args.value("--clients") {
        Some("none") => None,
        Some(path) => Some(PathBuf::from(path)),
        None if args.value("--config").is_none() => Some(root.join("bench/clients.json")),
        None => None,
    };
    let mut clients_config = match &clients_path {
        Some(path) => Some(clients::load(path)?),
        None => None,
    };
    // The scale rows by default with the default server list, like the
    // clients; `--only` runs them when it names `scale`.
    let mut with_scale = args.value("--config").is_none();
    if let Some(only) = args.value("--only") {
        let wanted: Vec<&str> = only.split(',').map(str::trim).collect();
        with_scale = wanted.contains(&scale::KEY);
        let client_names: Vec<&str> = clients_config
            .iter()
            .flat_map(|c| c.clients.iter().map(|c| c.name.as_str()))
            .collect();
        if let Some(unknown) = wanted.iter().find(|w| {
            **w != scale::KEY
                && !servers.iter().any(|s| s.name() == **w)
                && !client_names.contains(w)
        }) {
            return Err(format!(
                "--only: no server or client named {unknown} (nor `scale`)"
            ));
        }
        servers.retain(|s| wanted.contains(&s.name()));
        if let Some(c) = &mut clients_config {
            c.clients.retain(|c| wanted.contains(&c.name.as_str()));
        }
    }
    if args.flag("--clients-only") {
        servers.clear();
        with_scale = false;
    }
    if args.flag("--no-scale") {
        with_scale = false;
    }
    let short = args.flag("--short") || std::env::var("BENCH_SHORT").is_ok_and(|v| v == "1");
    let mut plan = if short {
        Plan::short(root.clone())
    } else {
        Plan::full(root.clone())
    };
    plan.rounds = args.number("--rounds", plan.rounds)?.max(1);
    plan.phase_secs = args.number("--phase", plan.phase_secs)?;
    // Set by bench/bench.mk: the `make build-LANG` parts that failed. Their
    // ferromcp servers are not run, so no stale artifact is measured.
    if let Ok(failed) = std::env::var("MCP_BENCH_FAILED_BUILDS") {
        for part in failed.split_whitespace() {
            let language = part.strip_prefix("build-").unwrap_or(part);
            if language == "rust" {
                // The everything-server of the scale rows is a Rust example.
                plan.known_unavailable.insert(
                    scale::KEY.to_owned(),
                    format!("`make {part} RELEASE=1` failed"),
                );
            }
            for s in servers
                .iter()
                .filter(|s| s.spec.kind == "ferromcp" && s.spec.language == language)
            {
                plan.known_unavailable.insert(
                    s.name().to_owned(),
                    format!("`make {part} RELEASE=1` failed"),
                );
            }
            for c in clients_config
                .iter()
                .flat_map(|c| &c.clients)
                .filter(|c| c.kind == "ferromcp" && c.language == language)
            {
                plan.known_unavailable
                    .insert(c.name.clone(), format!("`make {part} RELEASE=1` failed"));
            }
        }
    }

    let machine = Machine::probe(pin(args, &mut plan)?);

    let out_dir = args
        .value("--out")
        .map_or_else(|| root.join("bench/results"), PathBuf::from);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let stamp = report::utc_timestamp(now);
    let file_stamp = stamp.replace(':', "");
    let log_dir = out_dir.join("logs").join(&file_stamp);
    std::fs::create_dir_all(&log_dir)
        .map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
    plan.log_dir = Some(log_dir.clone());

    eprintln!(
        "mcp-bench: {} servers, {} rounds of {} s phases; server logs in {}",
        servers.len(),
        plan.rounds,
        plan.phase_secs,
        log_dir.display()
    );
    let rt = runtime()?;
    let outcomes = rt.block_on(runner::run(&plan, &servers));
    let scale = if with_scale {
        let argv = scale::server_argv(&manifest_path)?;
        eprintln!("mcp-bench: scale-out rows (Redis event bus, listen fan-out)");
        Some(rt.block_on(scale::run(&plan, &argv)))
    } else {
        None
    };
    let mut rows = outcomes.clone();
    rows.extend(scale.iter().flat_map(|s| s.bus.iter().cloned()));
    let mut targets = report::evaluate(&config.targets, &rows);
    if outcomes.is_empty() {
        // `--only scale`: the server targets would all read "not measured".
        targets.retain(|t| is_scale_row(&t.server));
    }
    let (client_outcomes, client_targets) = match &clients_config {
        Some(c) if !c.clients.is_empty() => {
            eprintln!("mcp-bench: {} clients", c.clients.len());
            let outcomes = rt.block_on(clients::run(&plan, c));
            let targets = report::evaluate(&c.targets, &outcomes);
            (outcomes, targets)
        }
        _ => (Vec::new(), Vec::new()),
    };
    let command = std::env::var("MCP_BENCH_COMMAND").unwrap_or_else(|_| {
        let mut words = vec!["mcp-bench".to_owned()];
        words.extend(raw.iter().cloned());
        words.join(" ")
    });
    let git_commit = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(&root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown".into());
    let report = Report {
        schema: "ferromcp-bench/1",
        date: stamp,
        command,
        git_commit,
        machine,
        plan,
        servers: outcomes,
        targets,
        clients: client_outcomes,
        client_targets,
        scale,
    };
    let markdown = report::markdown(&report);
    println!("{markdown}");
    let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
    for (name, text) in [
        (format!("bench-{file_stamp}.json"), &json),
        ("latest.json".to_owned(), &json),
        ("latest.md".to_owned(), &markdown),
    ] {
        let path = out_dir.join(name);
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    eprintln!(
        "mcp-bench: results in {}",
        out_dir.join("latest.json").display()
    );

    let measured = report
        .servers
        .iter()
        .chain(&report.clients)
        .filter(|o| o.unavailable.is_none())
        .count()
        + report
            .scale
            .as_ref()
            .map_or(0, scale::ScaleReport::measured);
    let failed = report
        .servers
        .iter()
        .chain(&report.clients)
        .any(|o| o.errors > 0 || o.unavailable.is_some())
        || report
            .scale
            .as_ref()
            .is_some_and(scale::ScaleReport::failed);
    if measured == 0 || (args.flag("--strict") && failed) {
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    let Some((sub, rest)) = raw.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let result = Args::parse(rest).and_then(|args| {
        if args.flag("--help") {
            println!("{USAGE}");
            return Ok(ExitCode::SUCCESS);
        }
        match sub.as_str() {
            "run" => cmd_run(&args, &raw),
            "http" => cmd_http(&args),
            "stdio" => cmd_stdio(&args),
            "cold" => cmd_cold(&args),
            "soak" => cmd_soak(&args),
            "scale" => cmd_scale(&args),
            _ => Err(format!("unknown command {sub}")),
        }
    });
    match result {
        Ok(code) => code,
        Err(why) => {
            eprintln!("mcp-bench: {why}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
