//! Ready-made middleware: [`LogRequests`] (each request's method, name,
//! outcome and duration, as `tracing` events), [`RateLimit`] (a token
//! bucket per client, in bounded memory) and [`MaskErrors`] (internal
//! errors reach the client as a generic message, the detail stays in the
//! server's log).

use std::collections::HashMap;
use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Middleware, MiddlewareRequest, MiddlewareResult, Next};
use crate::protocol::codes;
use crate::rpc::lock_unpoisoned;
use crate::{BoxFuture, McpError};

/// One request as [`LogRequests`] reports it, and one masked error as
/// [`MaskErrors`] does.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// The method, e.g. `tools/call`.
    pub method: String,
    /// The tool or prompt name, if the request has one.
    pub name: Option<String>,
    /// How long the rest of the chain took.
    pub micros: u64,
    /// The JSON-RPC error it ended in (for a masked error: the original).
    pub error: Option<McpError>,
}

/// Where a ready-made link reports: a binding's own log (a JS function,
/// Python `logging`, a C callback) instead of `tracing`.
pub type RecordSink = Arc<dyn Fn(&RequestRecord) + Send + Sync>;

fn record(
    method: String,
    name: Option<String>,
    started: Instant,
    result: &MiddlewareResult,
) -> RequestRecord {
    RequestRecord {
        method,
        name,
        micros: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        error: result.as_ref().err().cloned(),
    }
}

/// Logs every request once it ends: method, tool or prompt name, outcome
/// (`ok` or the error code) and duration, at `info` (errors at `warn`), on
/// the `ferromcp::requests` target, or to the sink given.
///
/// ```
/// let server = ferromcp::server::Server::new("demo", "1.0.0");
/// server.add_middleware(ferromcp::server::middleware::builtin::LogRequests::default());
/// ```
#[derive(Clone, Default)]
pub struct LogRequests {
    sink: Option<RecordSink>,
}

impl LogRequests {
    /// Reports each request to `sink` instead of `tracing`.
    pub fn with_sink(sink: RecordSink) -> LogRequests {
        LogRequests { sink: Some(sink) }
    }
}

impl Middleware for LogRequests {
    fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        let sink = self.sink.clone();
        Box::pin(async move {
            let method = request.method.clone();
            let name = request.name().map(str::to_owned);
            let started = Instant::now();
            let result = next.run(request).await;
            let record = record(method, name, started, &result);
            match (&sink, &record.error) {
                (Some(sink), _) => sink(&record),
                (None, None) => tracing::info!(
                    target: "ferromcp::requests",
                    method = %record.method, name = record.name.as_deref().unwrap_or(""),
                    micros = record.micros, "ok"
                ),
                (None, Some(error)) => tracing::warn!(
                    target: "ferromcp::requests",
                    method = %record.method, name = record.name.as_deref().unwrap_or(""),
                    micros = record.micros, code = error.code, message = %error.message, "failed"
                ),
            }
            result
        })
    }
}

/// Refuses internal errors' details: a `-32603` error reaches the client
/// as `"Internal error"` without data, and the original is logged (with
/// the method) at `error` on the `ferromcp::requests` target, or given to
/// the sink. Errors a client can act on (invalid params, unknown tool...)
/// pass unchanged, as do tool results flagged `isError` (the model is meant
/// to read those).
///
/// ```
/// let server = ferromcp::server::Server::new("demo", "1.0.0");
/// server.add_middleware(ferromcp::server::middleware::builtin::MaskErrors::default());
/// ```
#[derive(Clone, Default)]
pub struct MaskErrors {
    sink: Option<RecordSink>,
}

impl MaskErrors {
    /// Reports each masked error to `sink` instead of `tracing`.
    pub fn with_sink(sink: RecordSink) -> MaskErrors {
        MaskErrors { sink: Some(sink) }
    }
}

impl Middleware for MaskErrors {
    fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        let sink = self.sink.clone();
        Box::pin(async move {
            let method = request.method.clone();
            let name = request.name().map(str::to_owned);
            let started = Instant::now();
            let result = next.run(request).await;
            match &result {
                Err(error) if error.code == codes::INTERNAL_ERROR => {
                    match &sink {
                        Some(sink) => sink(&record(method, name, started, &result)),
                        None => tracing::error!(
                            target: "ferromcp::requests",
                            %method, message = %error.message,
                            "internal error (masked for the client)"
                        ),
                    }
                    Err(McpError::internal("Internal error"))
                }
                _ => result,
            }
        })
    }
}

/// A token bucket per client: each may make `burst` requests at once and
/// `per_second` more every second; beyond that a request is refused with
/// a `-32000` error saying when to retry (`data.retryAfterMs`), before it
/// runs. A client is its auth subject (or OAuth client id) when the
/// request is authenticated, else its `clientInfo` name and version.
///
/// Memory is bounded: at most `max_clients` buckets are kept; a new
/// client past that takes the place of the one idle longest, so a flood
/// of made-up identities costs a full bucket each, never more memory.
///
/// ```
/// use ferromcp::server::middleware::builtin::RateLimit;
/// let server = ferromcp::server::Server::new("demo", "1.0.0");
/// server.add_middleware(RateLimit::new(10.0, 20));
/// ```
pub struct RateLimit {
    per_second: f64,
    burst: f64,
    max_clients: NonZeroUsize,
    buckets: Mutex<HashMap<String, Bucket>>,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// The error code of a refused request (an implementation-defined server
/// error, as JSON-RPC reserves -32000 to -32099 for).
pub const RATE_LIMITED: i32 = -32000;

impl RateLimit {
    /// `per_second` requests a second per client, with bursts of `burst`,
    /// for at most 10,000 clients at once. A negative or non-finite
    /// `per_second` is taken as 0 (no refill), a `burst` of 0 as 1; see
    /// [`RateLimit::try_new`] to refuse them instead.
    pub fn new(per_second: f64, burst: u32) -> RateLimit {
        let per_second = if per_second.is_finite() {
            per_second.max(0.0)
        } else {
            0.0
        };
        RateLimit {
            per_second,
            burst: f64::from(burst.max(1)),
            max_clients: NonZeroUsize::new(10_000).unwrap_or(NonZeroUsize::MIN),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// [`RateLimit::new`], refusing settings that make no sense, with the
    /// reason (what every binding reports for its host's arguments).
    ///
    /// ```
    /// use ferromcp::server::middleware::builtin::RateLimit;
    /// assert!(RateLimit::try_new(10.0, 20).is_ok());
    /// assert_eq!(RateLimit::try_new(1.0, 0).err().unwrap(), "burst must be at least 1");
    /// ```
    pub fn try_new(per_second: f64, burst: u32) -> Result<RateLimit, String> {
        if !(per_second.is_finite() && per_second >= 0.0) {
            return Err(format!(
                "perSecond must be a finite number >= 0, not {per_second}"
            ));
        }
        if burst == 0 {
            return Err("burst must be at least 1".into());
        }
        Ok(RateLimit::new(per_second, burst))
    }

    /// Sets how many clients' buckets are kept.
    pub fn with_max_clients(mut self, max_clients: NonZeroUsize) -> RateLimit {
        self.max_clients = max_clients;
        self
    }

    /// How many clients have a bucket now (at most `max_clients`).
    pub fn clients(&self) -> usize {
        lock_unpoisoned(&self.buckets).len()
    }

    /// Who the request is from, for its bucket.
    fn client_of(request: &MiddlewareRequest) -> String {
        if let Some(auth) = &request.meta.auth
            && let Some(who) = auth.subject.as_ref().or(auth.client_id.as_ref())
        {
            return format!("auth:{who}");
        }
        match &request.meta.client_info {
            Some(info) => format!("client:{}", info.get()),
            None => "anonymous".to_owned(),
        }
    }

    /// Takes a token for `client` now, or says how long until one is there.
    fn take(&self, client: String, now: Instant) -> Result<(), Duration> {
        let mut buckets = lock_unpoisoned(&self.buckets);
        if !buckets.contains_key(&client) && buckets.len() >= self.max_clients.get() {
            // The longest idle goes: O(n) only when full and a new client
            // comes, which the cap makes rare for real traffic.
            if let Some(idle) = buckets
                .iter()
                .min_by_key(|(_, bucket)| bucket.at)
                .map(|(key, _)| key.clone())
            {
                buckets.remove(&idle);
            }
        }
        let bucket = buckets.entry(client).or_insert(Bucket {
            tokens: self.burst,
            at: now,
        });
        let refill = now.duration_since(bucket.at).as_secs_f64() * self.per_second;
        bucket.tokens = (bucket.tokens + refill).min(self.burst);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        if self.per_second <= 0.0 {
            return Err(Duration::MAX);
        }
        Err(Duration::from_secs_f64(
            (1.0 - bucket.tokens) / self.per_second,
        ))
    }
}

impl Middleware for RateLimit {
    fn handle(&self, request: MiddlewareRequest, next: Next) -> BoxFuture<MiddlewareResult> {
        let client = RateLimit::client_of(&request);
        match self.take(client, Instant::now()) {
            Ok(()) => next.run(request),
            Err(wait) => {
                let retry_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX);
                Box::pin(async move {
                    Err(McpError::new(
                        RATE_LIMITED,
                        format!("Too many requests: retry in {retry_ms} ms"),
                    )
                    .with_data(serde_json::json!({ "retryAfterMs": retry_ms })))
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_refills_and_the_client_count_stays_bounded() {
        let limit = RateLimit::new(2.0, 2).with_max_clients(NonZeroUsize::new(3).unwrap());
        let start = Instant::now();
        assert!(limit.take("a".into(), start).is_ok());
        assert!(limit.take("a".into(), start).is_ok());
        let wait = limit.take("a".into(), start).unwrap_err();
        assert_eq!(wait, Duration::from_millis(500));
        // Half a second later one token is back.
        assert!(
            limit
                .take("a".into(), start + Duration::from_millis(500))
                .is_ok()
        );
        for i in 0..1000 {
            let _ = limit.take(format!("flood-{i}"), start + Duration::from_millis(600 + i));
        }
        assert_eq!(limit.clients(), 3);
    }
}
