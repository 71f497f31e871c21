//! The tables (Markdown, printed and saved) and the JSON record of a run.

use serde::Serialize;
use std::fmt::Write as _;

use crate::config::Target;
use crate::runner::{Outcome, Plan};
use crate::stats::median;

/// The machine a run was made on.
#[derive(Debug, Clone, Serialize)]
pub struct Machine {
    pub cpus: usize,
    pub cpu_model: String,
    pub memory_gib: f64,
    pub kernel: String,
    /// 1-minute load average when the run started: other work on the machine.
    pub load_average: String,
}

impl Machine {
    pub fn probe(cpus: usize) -> Machine {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu_model = cpuinfo
            .lines()
            .find_map(|l| l.strip_prefix("model name"))
            .and_then(|v| v.split_once(':'))
            .map(|(_, m)| m.trim().to_owned())
            .unwrap_or_else(|| "unknown".into());
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        let mem_kib: f64 = meminfo
            .lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0.0);
        let read = |p: &str| {
            std::fs::read_to_string(p)
                .unwrap_or_default()
                .trim()
                .to_owned()
        };
        Machine {
            cpus,
            cpu_model,
            memory_gib: (mem_kib / 1024.0 / 1024.0 * 10.0).round() / 10.0,
            kernel: read("/proc/sys/kernel/osrelease"),
            load_average: read("/proc/loadavg")
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_owned(),
        }
    }

    pub fn describe(&self) -> String {
        format!(
            "{} CPUs ({}), {:.1} GiB RAM, Linux {}",
            self.cpus, self.cpu_model, self.memory_gib, self.kernel
        )
    }
}

/// A target with its measured ratio.
#[derive(Debug, Clone, Serialize)]
pub struct TargetResult {
    pub description: String,
    pub server: String,
    pub reference: String,
    pub metric: String,
    pub op: String,
    pub ratio: f64,
    /// server figure / reference figure: the median of the ratios of the
    /// two servers' figures in the same round (a paired comparison, so drift
    /// of a shared machine between rounds cancels out); `None` when either
    /// was not measured.
    pub measured: Option<f64>,
    /// The smallest and largest per-round ratio.
    pub round_min: Option<f64>,
    pub round_max: Option<f64>,
    pub met: Option<bool>,
}

pub fn evaluate(targets: &[Target], outcomes: &[Outcome]) -> Vec<TargetResult> {
    let find = |name: &str| {
        outcomes
            .iter()
            .find(|o| o.name == name && o.unavailable.is_none())
    };
    targets
        .iter()
        .map(|t| {
            let reference_metric = t.reference_metric.as_deref().unwrap_or(&t.metric);
            let mut ratios = Vec::new();
            if let (Some(a), Some(b)) = (find(&t.server), find(&t.reference)) {
                for (ra, rb) in a.rounds.iter().zip(&b.rounds) {
                    if let (Some(x), Some(y)) = (ra.get(&t.metric), rb.get(reference_metric))
                        && *y > 0.0
                    {
                        ratios.push(x / y);
                    }
                }
            }
            let measured = median(&ratios);
            TargetResult {
                description: t.description.clone(),
                server: t.server.clone(),
                reference: t.reference.clone(),
                metric: t.metric.clone(),
                op: t.op.clone(),
                ratio: t.ratio,
                measured,
                round_min: ratios.iter().copied().reduce(f64::min),
                round_max: ratios.iter().copied().reduce(f64::max),
                met: measured.map(|m| t.holds(m)),
            }
        })
        .collect()
}

/// The whole record of a run, as written to JSON.
#[derive(Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub date: String,
    pub command: String,
    pub git_commit: String,
    pub machine: Machine,
    pub plan: Plan,
    pub servers: Vec<Outcome>,
    pub targets: Vec<TargetResult>,
    /// The client rows (bench/clients.json), measured in the same run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clients: Vec<Outcome>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub client_targets: Vec<TargetResult>,
    /// The scale-out figures (issue 29), measured in the same run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<crate::scale::ScaleReport>,
}

/// `1234567.8` → `1,234,568`.
fn thousands(v: f64) -> String {
    let n = v.round() as i64;
    let digits = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// Few significant digits, so the tables stay readable.
fn short(v: f64) -> String {
    if v >= 1000.0 {
        thousands(v)
    } else if v >= 100.0 {
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

fn cell(o: &Outcome, metric: &str, f: fn(f64) -> String) -> String {
    o.figure(metric).map(f).unwrap_or_else(|| "—".into())
}

fn wires(o: &Outcome) -> String {
    let http = o.http_wire.as_deref().unwrap_or("—");
    let stdio = o.stdio_wire.as_deref().unwrap_or("—");
    if http == stdio {
        http.to_owned()
    } else {
        format!("{http} / {stdio}")
    }
}

/// The figures table.
pub fn figures_table(outcomes: &[Outcome], plan: &Plan) -> String {
    let mut t = String::new();
    let n = plan.stdio_in_flight;
    let _ = writeln!(
        t,
        "| server | wire | HTTP c=1 req/s | c=1 p50 µs | HTTP c=32 req/s | c=32 p50 / p99 µs | HTTP c=32 server CPU µs/req | stdio seq calls/s | stdio {n} in flight calls/s | stdio {n} CPU µs/call | cold start ms | peak RSS / anon MiB (HTTP) | 1 MiB HTTP / stdio ms | errors |"
    );
    let _ = writeln!(
        t,
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|"
    );
    for o in outcomes {
        if let Some(why) = &o.unavailable {
            let why = why.lines().next().unwrap_or("");
            let _ = writeln!(
                t,
                "| {} | unavailable: {} | | | | | | | | | | | | |",
                o.name,
                why.replace('|', "/")
            );
            continue;
        }
        let latency = match (o.figure("http_c32_p50_us"), o.figure("http_c32_p99_us")) {
            (Some(a), Some(b)) => format!("{} / {}", short(a), short(b)),
            _ => "—".into(),
        };
        let payload = format!(
            "{} / {}",
            cell(o, "http_1mib_ms", short),
            cell(o, "stdio_1mib_ms", short)
        );
        let memory = format!(
            "{} / {}",
            cell(o, "rss_mib", short),
            cell(o, "rss_anon_mib", short)
        );
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            o.name,
            wires(o),
            cell(o, "http_c1_rps", thousands),
            cell(o, "http_c1_p50_us", short),
            cell(o, "http_c32_rps", thousands),
            latency,
            cell(o, "http_c32_cpu_us", short),
            cell(o, "stdio_seq_rps", thousands),
            cell(o, "stdio_n_rps", thousands),
            cell(o, "stdio_n_cpu_us", short),
            cell(o, "cold_start_ms", short),
            memory,
            payload,
            o.errors,
        );
    }
    t
}

const RATIO_METRICS: [(&str, &str); 5] = [
    ("http_c32_rps", "c=32 req/s"),
    ("http_c32_cpu_us", "c=32 CPU/req"),
    ("stdio_n_rps", "stdio calls/s"),
    ("cold_start_ms", "cold start"),
    ("rss_mib", "peak RSS"),
];

fn ratio_cells(o: &Outcome, reference: Option<&Outcome>) -> Vec<String> {
    RATIO_METRICS
        .iter()
        .map(
            |(metric, _)| match (o.figure(metric), reference.and_then(|r| r.figure(metric))) {
                (Some(a), Some(b)) if b > 0.0 => ratio(a / b),
                _ => "—".into(),
            },
        )
        .collect()
}

/// Ratios of every server to the baseline, and of each ferromcp server to
/// the official SDK of its language.
pub fn ratios_table(outcomes: &[Outcome]) -> String {
    let baseline = outcomes
        .iter()
        .find(|o| o.kind == "baseline" && o.unavailable.is_none());
    let mut t = String::new();
    let heads: Vec<&str> = RATIO_METRICS.iter().map(|(_, h)| *h).collect();
    let _ = writeln!(
        t,
        "| server | vs baseline: {} | vs official SDK | vs SDK: {} |",
        heads.join(" | "),
        heads.join(" | ")
    );
    let _ = writeln!(
        t,
        "|---|{}---|{}",
        "--:|".repeat(heads.len()),
        "--:|".repeat(heads.len())
    );
    for o in outcomes
        .iter()
        .filter(|o| o.kind != "baseline" && o.unavailable.is_none())
    {
        let sdk = o.compare_with.as_deref().and_then(|name| {
            outcomes
                .iter()
                .find(|r| r.name == name && r.unavailable.is_none())
        });
        let sdk_name = match (&o.compare_with, sdk) {
            (Some(name), Some(_)) => name.clone(),
            (Some(name), None) => format!("{name} (not measured)"),
            (None, _) => "—".into(),
        };
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} |",
            o.name,
            ratio_cells(o, baseline).join(" | "),
            sdk_name,
            ratio_cells(o, sdk).join(" | ")
        );
    }
    t
}

/// Three significant digits: a target's margin can be a few percent.
fn precise_ratio(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.1}x")
    } else if v >= 1.0 {
        format!("{v:.2}x")
    } else {
        format!("{v:.3}x")
    }
}

pub fn targets_table(results: &[TargetResult]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "| target | measured (median of rounds) | range over rounds | required | result |"
    );
    let _ = writeln!(t, "|---|--:|--:|--:|---|");
    for r in results {
        let measured = r.measured.map(precise_ratio).unwrap_or_else(|| "—".into());
        let range = match (r.round_min, r.round_max) {
            (Some(a), Some(b)) => format!("{} – {}", precise_ratio(a), precise_ratio(b)),
            _ => "—".into(),
        };
        let verdict = match r.met {
            Some(true) => "met",
            Some(false) => "MISSED",
            None => "not measured",
        };
        let _ = writeln!(
            t,
            "| {} ({} / {}, {}) | {} | {} | {} {} | {} |",
            r.description,
            r.server,
            r.reference,
            r.metric,
            measured,
            range,
            r.op,
            precise_ratio(r.ratio),
            verdict
        );
    }
    t
}

/// The whole Markdown report.
pub fn markdown(report: &Report) -> String {
    let mut m = String::new();
    let _ = writeln!(
        m,
        "Measured {} on {}; load average {} at the start.",
        report.date,
        report.machine.describe(),
        report.machine.load_average
    );
    let pin = match (report.plan.generator_cpu, report.plan.server_cpu) {
        (Some(g), Some(s)) => format!("load generator pinned to CPU {g}, server to CPU {s}"),
        _ => "no CPU pinning".into(),
    };
    let _ = writeln!(
        m,
        "Command: `{}` (commit {}); {} rounds, {} s per phase, {pin}; servers run without `{}`.\n",
        report.command,
        report.git_commit,
        report.plan.rounds,
        report.plan.phase_secs,
        crate::proc::MACHINE_ONLY_ENV
    );
    if report.servers.is_empty() {
        // `--clients-only` (or `--only scale`): no server tables full of
        // dashes.
        if let Some(scale) = &report.scale {
            m.push_str(&crate::scale::markdown(scale, &report.plan));
            if !report.targets.is_empty() {
                let _ = writeln!(m, "\n### Targets\n");
                m.push_str(&targets_table(&report.targets));
            }
        }
        m.push_str(&crate::clients::markdown(
            &report.clients,
            &report.client_targets,
            &report.plan,
        ));
        return m;
    }
    let _ = writeln!(m, "### Figures (medians over rounds)\n");
    m.push_str(&figures_table(&report.servers, &report.plan));
    let _ = writeln!(
        m,
        "\n### Ratios (server / reference: above 1x means more requests per second, more CPU per request, a slower cold start, more memory)\n"
    );
    m.push_str(&ratios_table(&report.servers));
    m.push_str(&event_loop_table(&report.servers));
    if let Some(scale) = &report.scale {
        m.push_str(&crate::scale::markdown(scale, &report.plan));
    }
    if !report.targets.is_empty() {
        let _ = writeln!(m, "\n### Targets (issue #6, item 4; issue 29)\n");
        m.push_str(&targets_table(&report.targets));
    }
    let noted: Vec<&Outcome> = report
        .servers
        .iter()
        .filter(|o| !o.error_messages.is_empty() || !o.notes.is_empty())
        .collect();
    if !noted.is_empty() {
        let _ = writeln!(m, "\n### Errors and notes\n");
        for o in noted {
            for e in &o.error_messages {
                let first = e.lines().next().unwrap_or("");
                let _ = writeln!(m, "- {}: error: {}", o.name, first);
            }
            for r in &o.notes {
                let _ = writeln!(m, "- {}: {}", o.name, r);
            }
        }
    }
    m.push_str(&crate::clients::markdown(
        &report.clients,
        &report.client_targets,
        &report.plan,
    ));
    m
}

/// The event-loop delay of the servers that report one (Node), during the
/// HTTP c=32 phase; empty when none does.
pub fn event_loop_table(outcomes: &[Outcome]) -> String {
    let measured: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.figure("http_c32_eld_p99_ms").is_some())
        .collect();
    if measured.is_empty() {
        return String::new();
    }
    let mut t = String::from(
        "\n### Event-loop delay (HTTP c=32, perf_hooks.monitorEventLoopDelay, medians over rounds)\n\n",
    );
    t.push_str(
        "| server | HTTP c=32 req/s | event-loop delay p99 ms | max ms |\n|---|--:|--:|--:|\n",
    );
    for o in measured {
        let _ = writeln!(
            t,
            "| {} | {} | {} | {} |",
            o.name,
            cell(o, "http_c32_rps", thousands),
            cell(o, "http_c32_eld_p99_ms", short),
            cell(o, "http_c32_eld_max_ms", short),
        );
    }
    t
}

/// `YYYY-MM-DDTHH:MM:SSZ` for a Unix time (civil-from-days, proleptic
/// Gregorian), so that no date crate is needed for a file name.
pub fn utc_timestamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting() {
        assert_eq!(thousands(1_234_567.8), "1,234,568");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(ratio(0.456), "0.46x");
        assert_eq!(ratio(12.3), "12x");
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(1_709_251_199), "2024-02-29T23:59:59Z");
    }
}
