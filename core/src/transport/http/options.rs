//! [`EndpointOptions`]: what a host sets on an HTTP endpoint, whether it
//! is mounted in the host's own server or served by the listener.

use std::time::Duration;

use crate::legacy::SessionLimits;
use crate::transport::DEFAULT_MAX_MESSAGE_BYTES;

/// Settings of an [`HttpEndpoint`](super::HttpEndpoint): what the endpoint itself checks,
/// whoever owns the sockets.
///
/// ```
/// use ferromcp::transport::http::EndpointOptions;
///
/// // Mounted behind a reverse proxy answering for mcp.example.com.
/// let options = EndpointOptions {
///     allowed_hosts: Some(vec!["mcp.example.com".into()]),
///     allowed_origins: Some(vec!["https://app.example.com".into()]),
///     ..EndpointOptions::default()
/// };
/// assert_eq!(options.path.as_deref(), Some("/mcp"));
/// ```
#[derive(Debug, Clone)]
pub struct EndpointOptions {
    /// Path of the MCP endpoint (other paths get 404); `None` accepts any
    /// path, for hosts that route to the endpoint themselves.
    pub path: Option<String>,
    /// Largest accepted request body (413 beyond it).
    pub max_body_bytes: usize,
    /// `Host` header values (without port) accepted. `None` accepts the
    /// loopback names only (`localhost`, `127.0.0.1`, `[::1]`), the safe
    /// default against DNS rebinding; a public deployment lists its names.
    pub allowed_hosts: Option<Vec<String>>,
    /// `Origin` values accepted (exact, e.g. `https://app.example`);
    /// `None` means loopback origins only. Requests without `Origin`
    /// (non-browser clients) are not affected.
    pub allowed_origins: Option<Vec<String>>,
    /// Interval of SSE comment lines on streams with nothing to say.
    pub keep_alive: Duration,
    /// Bounds on legacy (2025-11-25) sessions.
    pub session_limits: SessionLimits,
    /// A request body must be complete this long after the head, or the
    /// request is answered 408.
    pub body_read_timeout: Duration,
    /// Protection by OAuth bearer tokens; `None` serves everyone. With it
    /// the endpoint also answers the protected resource metadata paths
    /// (`/.well-known/oauth-protected-resource[/path]`): a host routing
    /// only `path` to the endpoint routes those too.
    pub auth: Option<super::ProtectedResource>,
    /// Liveness and readiness endpoints (`GET /healthz`, `GET /readyz`),
    /// answered before any `Host`, `Origin` or token check (a probe
    /// connects by address); `None` serves neither.
    pub health: Option<Health>,
}

/// The state `/healthz` and `/readyz` report: live while the process
/// serves; ready until shutdown begins (a load balancer stops sending new
/// requests while in-flight ones finish). Cheap to clone: clones share it.
///
/// ```
/// use ferromcp::transport::http::Health;
/// let health = Health::default();
/// assert!(health.is_ready());
/// health.set_ready(false); // draining
/// assert!(!health.is_ready());
/// ```
#[derive(Debug, Clone)]
pub struct Health {
    ready: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Default for Health {
    fn default() -> Self {
        Health {
            ready: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
        }
    }
}

impl Health {
    /// Whether `/readyz` answers 200.
    pub fn is_ready(&self) -> bool {
        self.ready.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Turns readiness on or off (off: `/readyz` answers 503).
    pub fn set_ready(&self, ready: bool) {
        self.ready
            .store(ready, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Default for EndpointOptions {
    fn default() -> Self {
        EndpointOptions {
            path: Some("/mcp".into()),
            max_body_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            allowed_hosts: None,
            allowed_origins: None,
            keep_alive: Duration::from_secs(15),
            session_limits: SessionLimits::default(),
            body_read_timeout: Duration::from_secs(30),
            auth: None,
            health: None,
        }
    }
}
