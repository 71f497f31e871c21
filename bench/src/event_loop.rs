//! The event-loop delay of a Node server during a load phase, read from the
//! server itself: a server started with bench/servers/event-loop-delay.mjs
//! preloaded (`"event_loop_delay": true` in bench/servers.json) prints one
//! line `mcp-bench event-loop-delay {json}` to stderr on each SIGUSR2, with
//! what `perf_hooks.monitorEventLoopDelay` saw since the previous one.
//! Signalling before and after a phase brackets it.

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Deserialize;

const MARKER: &str = "mcp-bench event-loop-delay ";

/// What the server reported for one interval, in milliseconds of delay
/// beyond the sampling timer's own interval.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq)]
pub struct Delay {
    pub samples: u64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// The reports in a server's log so far, oldest first.
pub fn reports(log: &Path) -> Vec<Delay> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix(MARKER))
        .filter_map(|json| serde_json::from_str(json).ok())
        .collect()
}

/// Asks the server for a report (and so starts a new interval).
pub fn signal(pid: u32) {
    // SAFETY: kill(2) has no memory-safety preconditions; the server opted
    // in to SIGUSR2 (without a handler it would terminate it).
    unsafe {
        libc::kill(pid as i32, libc::SIGUSR2);
    }
}

/// Signals the server and waits (up to 2 s) for the report that follows the
/// `before` reports already in its log.
pub async fn report(pid: u32, log: &Path, before: usize) -> Option<Delay> {
    signal(pid);
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        let all = reports(log);
        if all.len() > before {
            return all.last().copied();
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_marked_lines() {
        let dir = std::env::temp_dir().join(format!("mcp-bench-eld-{}", std::process::id()));
        std::fs::write(
            &dir,
            "listening\nmcp-bench event-loop-delay {\"samples\":5,\"p50_ms\":0.1,\"p99_ms\":2.5,\"max_ms\":7,\"mean_ms\":0.2}\nnoise\n",
        )
        .unwrap();
        let r = reports(&dir);
        let _ = std::fs::remove_file(&dir);
        assert_eq!(
            r,
            vec![Delay {
                samples: 5,
                p50_ms: 0.1,
                p99_ms: 2.5,
                max_ms: 7.0
            }]
        );
    }
}
