//! Soak test: a server under steady load for a while must not keep growing.
//! While the load generator runs, the server's resident set (VmRSS) and open
//! descriptors (/proc/PID/fd) are sampled, summed over its process tree;
//! the sample at the end of warm-up is compared with the last one, both
//! taken under the same load (so the generator's own connections count
//! alike in both).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::config::substitute_port;
use crate::http::{self, Endpoint};
use crate::proc::{self, Launch};
use crate::stats::LoadResult;
use crate::stdio::{self, StdioServer, Stop};

/// One reading of a server's footprint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Time since the load started.
    pub at: Duration,
    /// Resident set, KiB.
    pub rss_kib: u64,
    /// Open file descriptors.
    pub fds: usize,
}

/// What growth is tolerated between the end of warm-up and the end.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Relative RSS growth allowed (0.10 = +10%)...
    pub rss_fraction: f64,
    /// ...or this much absolute growth, whichever is larger: allocators
    /// and interpreters settle in steps, which on a small heap can be more
    /// than 10% without being a leak.
    pub rss_floor_kib: u64,
    /// Descriptors allowed above the warm-up count (a log file opened
    /// late, an interpreter's lazily created pipe).
    pub fd_slack: usize,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            rss_fraction: 0.10,
            rss_floor_kib: 8 * 1024,
            fd_slack: 4,
        }
    }
}

/// The outcome of one soak run.
#[derive(Debug, Clone, PartialEq)]
pub struct Judgement {
    pub warm: Sample,
    pub end: Sample,
    /// Why it failed; empty when it held.
    pub failures: Vec<String>,
}

impl Judgement {
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }
}

/// Applies the growth rule to the samples of one run: `warm` is the first
/// sample at or after `warmup`, `end` the last. `None` without such samples.
pub fn judge(samples: &[Sample], warmup: Duration, tolerance: Tolerance) -> Option<Judgement> {
    let warm = *samples.iter().find(|s| s.at >= warmup)?;
    let end = *samples.last()?;
    if end.at <= warm.at {
        return None;
    }
    let mut failures = Vec::new();
    let allowed_kib =
        ((warm.rss_kib as f64 * tolerance.rss_fraction) as u64).max(tolerance.rss_floor_kib);
    let grown_kib = end.rss_kib.saturating_sub(warm.rss_kib);
    if grown_kib > allowed_kib {
        failures.push(format!(
            "RSS grew by {:.1} MiB after warm-up ({:.1} -> {:.1} MiB; allowed {:.1} MiB)",
            grown_kib as f64 / 1024.0,
            warm.rss_kib as f64 / 1024.0,
            end.rss_kib as f64 / 1024.0,
            allowed_kib as f64 / 1024.0
        ));
    }
    if end.fds > warm.fds + tolerance.fd_slack {
        failures.push(format!(
            "open descriptors grew from {} to {} after warm-up (slack {})",
            warm.fds, end.fds, tolerance.fd_slack
        ));
    }
    Some(Judgement {
        warm,
        end,
        failures,
    })
}

/// Resident set (KiB) and open descriptors of `pids`, summed; `None` once
/// none of them can be read (the server died).
pub fn read(pids: &[u32]) -> Option<(u64, usize)> {
    let mut rss = None;
    let mut fds = 0;
    for &pid in pids {
        let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
            continue;
        };
        let kib = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        if let Some(kib) = kib {
            *rss.get_or_insert(0) += kib;
        }
        fds += std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count());
    }
    rss.map(|rss| (rss, fds))
}

/// Samples the process tree of `pid` every `every` until `until` has
/// passed since `start`. Runs beside the load, on the same runtime.
pub async fn sample_until(
    pid: u32,
    start: Instant,
    every: Duration,
    until: Duration,
) -> Vec<Sample> {
    let mut samples = Vec::new();
    let mut tick = tokio::time::interval(every);
    loop {
        tick.tick().await;
        let at = start.elapsed();
        if at > until {
            break;
        }
        // Re-read the tree each time: a server may start helpers late.
        let tree = crate::proc::process_tree(pid);
        match read(&tree) {
            Some((rss_kib, fds)) => samples.push(Sample { at, rss_kib, fds }),
            None => break,
        }
    }
    samples
}

/// The sampling period for a run of `duration`: about 20 samples, at most
/// one a second.
pub fn period(duration: Duration) -> Duration {
    (duration / 20).clamp(Duration::from_millis(100), Duration::from_secs(1))
}

/// One server to soak: a language's echo server on one transport.
#[derive(Debug, Clone)]
pub struct Subject {
    pub language: String,
    /// `http` or `stdio`.
    pub transport: String,
    /// The manifest's command (`{port}` not yet substituted).
    pub argv: Vec<String>,
}

/// The `echo-server` entries of examples/manifest.json, in its order.
pub fn subjects(manifest: &Path) -> Result<Vec<Subject>, String> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not JSON: {e}", manifest.display()))?;
    let Some(Value::Object(languages)) = value.get("echo-server") else {
        return Err(format!("{}: no \"echo-server\" entry", manifest.display()));
    };
    let mut out = Vec::new();
    for (language, transports) in languages {
        for transport in ["http", "stdio"] {
            let argv: Option<Vec<String>> = transports
                .get(transport)
                .and_then(|a| serde_json::from_value(a.clone()).ok());
            if let Some(argv) = argv {
                out.push(Subject {
                    language: language.clone(),
                    transport: transport.into(),
                    argv,
                });
            }
        }
    }
    Ok(out)
}

/// How long and how hard to drive each server.
#[derive(Debug, Clone)]
pub struct Plan {
    pub root: PathBuf,
    pub duration: Duration,
    pub warmup: Duration,
    /// HTTP connections, or stdio calls in flight.
    pub concurrency: usize,
    pub tolerance: Tolerance,
    /// Directory for the servers' logs.
    pub log_dir: Option<PathBuf>,
}

/// The result of soaking one subject.
#[derive(Debug)]
pub struct Outcome {
    pub subject: Subject,
    pub load: Option<LoadResult>,
    /// The verdict, or why there is none (did not start, died, no samples).
    pub judgement: Result<Judgement, String>,
}

impl Outcome {
    pub fn passed(&self) -> bool {
        let load_ok = self
            .load
            .as_ref()
            .is_some_and(|l| l.ok > 0 && l.errors == 0);
        load_ok && self.judgement.as_ref().is_ok_and(Judgement::passed)
    }
}

fn launch(plan: &Plan, subject: &Subject, argv: Vec<String>) -> Launch {
    let log = plan.log_dir.as_ref().map(|d| {
        d.join(format!(
            "soak-{}-{}.log",
            subject.language, subject.transport
        ))
    });
    Launch {
        argv,
        cwd: plan.root.clone(),
        cpu: None,
        log,
    }
}

/// Drives one subject for `plan.duration`, sampling beside the load.
pub async fn soak(plan: &Plan, subject: &Subject) -> Outcome {
    let mut outcome = Outcome {
        subject: subject.clone(),
        load: None,
        judgement: Err("not run".into()),
    };
    if let Some(missing) = proc::missing_parts(&subject.argv, &plan.root) {
        outcome.judgement = Err(format!(
            "unavailable: {missing} (run `make build RELEASE=1`)"
        ));
        return outcome;
    }
    let every = period(plan.duration);
    // The last sample is taken while the load still runs.
    let until = plan.duration.saturating_sub(every / 2);
    let ran = if subject.transport == "http" {
        soak_http(plan, subject, every, until).await
    } else {
        soak_stdio(plan, subject, every, until).await
    };
    match ran {
        Ok((load, samples)) => {
            outcome.load = Some(load);
            outcome.judgement = judge(&samples, plan.warmup, plan.tolerance).ok_or_else(|| {
                format!(
                    "no sample after the {:?} warm-up (the server died?)",
                    plan.warmup
                )
            });
        }
        Err(why) => outcome.judgement = Err(why),
    }
    outcome
}

async fn soak_http(
    plan: &Plan,
    subject: &Subject,
    every: Duration,
    until: Duration,
) -> Result<(LoadResult, Vec<Sample>), String> {
    let port = proc::free_port().map_err(|e| format!("no free port: {e}"))?;
    let l = launch(plan, subject, substitute_port(&subject.argv, port));
    let stdout = proc::log_stdio(&l).map_err(|e| format!("cannot open the log: {e}"))?;
    let mut child = proc::command(&l, Stdio::null(), stdout)
        .map_err(|e| format!("cannot prepare {:?}: {e}", l.argv))?
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", l.argv))?;
    let pid = child.id().ok_or("the server exited at once")?;
    let endpoint = Endpoint::localhost(port);
    let started = Instant::now();
    // Servers bind their port once ready; interpreters take a while.
    while tokio::net::TcpStream::connect(endpoint.addr).await.is_err() {
        if started.elapsed() > stdio::FIRST_REPLY_TIMEOUT || matches!(child.try_wait(), Ok(Some(_)))
        {
            proc::kill(&mut child).await;
            return Err(format!(
                "not listening on port {port}; log:\n{}",
                proc::log_tail(l.log.as_deref())
            ));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let session = match http::open_session(&endpoint).await {
        Ok(session) => session,
        Err(why) => {
            proc::kill(&mut child).await;
            return Err(why);
        }
    };
    let start = Instant::now();
    let (load, samples) = tokio::join!(
        http::load(&endpoint, &session, plan.concurrency, plan.duration, 0),
        sample_until(pid, start, every, until),
    );
    proc::kill(&mut child).await;
    Ok((load, samples))
}

async fn soak_stdio(
    plan: &Plan,
    subject: &Subject,
    every: Duration,
    until: Duration,
) -> Result<(LoadResult, Vec<Sample>), String> {
    let l = launch(plan, subject, subject.argv.clone());
    let mut server = StdioServer::spawn(&l)?;
    let pid = server.pid().ok_or("the server exited at once")?;
    let wire = match server.detect().await {
        Ok(wire) => wire,
        Err(why) => {
            server.stop().await;
            return Err(why);
        }
    };
    let start = Instant::now();
    let (load, samples) = tokio::join!(
        server.load(wire, plan.concurrency, Stop::After(plan.duration), 0),
        sample_until(pid, start, every, until),
    );
    server.stop().await;
    Ok((load, samples))
}

/// The results as a table, one row per subject.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut out = String::from(
        "| server | calls/s | errors | RSS warm (MiB) | RSS end (MiB) | fds warm | fds end | verdict |\n\
         |---|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for o in outcomes {
        let name = format!("{} {}", o.subject.language, o.subject.transport);
        let (rate, errors) = match &o.load {
            Some(l) => (format!("{:.0}", l.rate()), l.errors.to_string()),
            None => ("-".into(), "-".into()),
        };
        let row = match &o.judgement {
            Ok(j) => format!(
                "| {name} | {rate} | {errors} | {:.1} | {:.1} | {} | {} | {} |",
                j.warm.rss_kib as f64 / 1024.0,
                j.end.rss_kib as f64 / 1024.0,
                j.warm.fds,
                j.end.fds,
                if o.passed() {
                    "ok".to_owned()
                } else if j.failures.is_empty() {
                    format!(
                        "FAIL: load errors ({})",
                        o.load
                            .as_ref()
                            .and_then(|l| l.first_error.clone())
                            .unwrap_or_else(|| "no calls answered".into())
                    )
                } else {
                    format!("FAIL: {}", j.failures.join("; "))
                }
            ),
            Err(why) => format!(
                "| {name} | {rate} | {errors} | - | - | - | - | FAIL: {} |",
                why.replace('\n', " ")
            ),
        };
        out.push_str(&row);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64, rss_mib: u64, fds: usize) -> Sample {
        Sample {
            at: Duration::from_secs(secs),
            rss_kib: rss_mib * 1024,
            fds,
        }
    }

    #[test]
    fn growth_within_the_floor_or_the_fraction_passes() {
        let t = Tolerance::default();
        // 20 -> 27 MiB: +35%, but under the 8 MiB floor.
        let small = [at(0, 10, 9), at(5, 20, 9), at(10, 27, 9)];
        assert!(judge(&small, Duration::from_secs(5), t).unwrap().passed());
        // 200 -> 218 MiB: +18 MiB, but under 10%.
        let large = [at(5, 200, 9), at(10, 218, 12)];
        assert!(judge(&large, Duration::from_secs(5), t).unwrap().passed());
    }

    #[test]
    fn growth_past_both_bounds_fails_and_says_why() {
        let t = Tolerance::default();
        // Growth before warm-up ends does not count; 20 -> 29 MiB after does.
        let samples = [at(0, 5, 9), at(5, 20, 9), at(10, 29, 9)];
        let j = judge(&samples, Duration::from_secs(5), t).unwrap();
        assert!(!j.passed());
        assert!(
            j.failures[0].contains("RSS grew by 9.0 MiB"),
            "{:?}",
            j.failures
        );
        let large = [at(5, 200, 9), at(10, 221, 9)];
        assert!(!judge(&large, Duration::from_secs(5), t).unwrap().passed());
    }

    #[test]
    fn descriptors_beyond_the_slack_fail() {
        let t = Tolerance::default();
        let ok = [at(5, 20, 10), at(10, 20, 14)];
        assert!(judge(&ok, Duration::from_secs(5), t).unwrap().passed());
        let leak = [at(5, 20, 10), at(10, 20, 15)];
        let j = judge(&leak, Duration::from_secs(5), t).unwrap();
        assert_eq!(j.failures.len(), 1);
        assert!(j.failures[0].contains("from 10 to 15"), "{:?}", j.failures);
    }

    #[test]
    fn no_verdict_without_a_sample_after_warm_up() {
        let t = Tolerance::default();
        assert_eq!(judge(&[], Duration::ZERO, t), None);
        assert_eq!(
            judge(&[at(1, 1, 1), at(2, 1, 1)], Duration::from_secs(3), t),
            None
        );
        assert_eq!(judge(&[at(3, 1, 1)], Duration::from_secs(3), t), None);
    }

    #[test]
    fn reads_this_process() {
        let (rss, fds) = read(&[std::process::id()]).expect("own /proc entry");
        assert!(rss > 0 && fds > 0);
        assert_eq!(read(&[u32::MAX]), None);
    }
}
