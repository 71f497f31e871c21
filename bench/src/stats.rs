//! Counting replies and summarising latencies.

use serde::Serialize;
use std::time::Duration;

/// The outcome of one load phase.
#[derive(Debug, Default)]
pub struct LoadResult {
    /// Calls whose reply was checked and correct.
    pub ok: u64,
    /// Calls that failed: I/O error, HTTP error, or a wrong reply.
    pub errors: u64,
    /// Of `errors`, the calls answered (HTTP 200) with a wrong reply: a
    /// server (or proxy) that answers wrongly, not one that failed.
    pub wrong: u64,
    pub first_error: Option<String>,
    /// Latency of every correct call, in nanoseconds.
    pub latencies_ns: Vec<u64>,
    /// Wall time of the whole phase.
    pub elapsed: Duration,
}

impl LoadResult {
    pub fn record_ok(&mut self, took: Duration) {
        self.ok += 1;
        self.latencies_ns.push(took.as_nanos() as u64);
    }

    pub fn record_error(&mut self, why: String) {
        self.errors += 1;
        if why.starts_with(crate::http::WRONG) {
            self.wrong += 1;
        }
        if self.first_error.is_none() {
            self.first_error = Some(why);
        }
    }

    pub fn merge(&mut self, other: LoadResult) {
        self.ok += other.ok;
        self.errors += other.errors;
        self.wrong += other.wrong;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
        self.latencies_ns.extend(other.latencies_ns);
    }

    /// Correct calls per second.
    pub fn rate(&self) -> f64 {
        let secs = self.elapsed.as_secs_f64();
        if secs > 0.0 {
            self.ok as f64 / secs
        } else {
            0.0
        }
    }

    pub fn latency(&mut self) -> Latency {
        Latency::of(&mut self.latencies_ns)
    }
}

/// Latency percentiles in microseconds.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Latency {
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
}

impl Latency {
    pub fn of(samples: &mut [u64]) -> Latency {
        if samples.is_empty() {
            return Latency::default();
        }
        samples.sort_unstable();
        let at = |q: f64| {
            let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
            samples[i.min(samples.len() - 1)] as f64 / 1000.0
        };
        let sum: u128 = samples.iter().map(|&s| s as u128).sum();
        Latency {
            p50_us: at(0.50),
            p90_us: at(0.90),
            p99_us: at(0.99),
            max_us: samples[samples.len() - 1] as f64 / 1000.0,
            mean_us: sum as f64 / samples.len() as f64 / 1000.0,
        }
    }
}

/// The median of some values (the mean of the middle two for an even count).
pub fn median(values: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_median() {
        let mut samples: Vec<u64> = (1..=100).map(|i| i * 1000).collect();
        let l = Latency::of(&mut samples);
        assert_eq!(l.p50_us, 51.0);
        assert_eq!(l.p99_us, 99.0);
        assert_eq!(l.max_us, 100.0);
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
