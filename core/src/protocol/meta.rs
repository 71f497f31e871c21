//! Reserved `_meta` keys (spec: basic/index.mdx, "General fields").

/// Opts a request into progress notifications.
pub const PROGRESS_TOKEN: &str = "progressToken";
/// Protocol version of one request (required on every request).
pub const PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// Client name and version (recommended on every request).
pub const CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
/// Client capabilities relevant to one request (required on every request).
pub const CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
/// Minimum log level the server should emit for one request.
pub const LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
/// Correlates a notification with its `subscriptions/listen` request.
pub const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";
/// Server name and version, on every result.
pub const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
/// OpenTelemetry trace context keys.
pub const TRACEPARENT: &str = "traceparent";
/// OpenTelemetry trace state.
pub const TRACESTATE: &str = "tracestate";
/// OpenTelemetry baggage.
pub const BAGGAGE: &str = "baggage";
