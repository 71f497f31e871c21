//! The MCP client: stateless 2026-07-28 requests over stdio (spawning the
//! server) or Streamable HTTP.
//!
//! ```no_run
//! # async fn demo() -> Result<(), polymcp::Error> {
//! use polymcp::client::Client;
//! let client = Client::connect_http("http://127.0.0.1:8000/mcp").await?;
//! let tools = client.list_all_tools().await?;
//! let result = client.call_tool("echo", serde_json::json!({"text": "hi"})).await?;
//! # Ok(()) }
//! ```

mod http;
mod stdio;

use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;

use crate::Error;
use crate::protocol::jsonrpc::RequestId;
use crate::protocol::{Implementation, LATEST_PROTOCOL_VERSION, meta};
use crate::server::BoxFuture;

pub use stdio::StdioCommand;

/// Client identity and behaviour.
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// Sent as `_meta["io.modelcontextprotocol/clientInfo"]`.
    pub info: Implementation,
    /// The protocol version requests declare.
    pub protocol_version: String,
    /// Sent as `_meta["io.modelcontextprotocol/clientCapabilities"]`.
    pub capabilities: Map<String, Value>,
    /// Default per-request timeout; `None` waits indefinitely.
    pub timeout: Option<Duration>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            info: Implementation::new("polymcp-client", env!("CARGO_PKG_VERSION")),
            protocol_version: LATEST_PROTOCOL_VERSION.to_owned(),
            capabilities: Map::new(),
            timeout: Some(Duration::from_secs(60)),
        }
    }
}

/// One request as a transport sends it.
pub(crate) struct Outgoing {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    pub(crate) params: Map<String, Value>,
    /// Where notifications about this request (progress, logs) go.
    pub(crate) notifications: Option<mpsc::UnboundedSender<Value>>,
}

/// What carries requests to a server and brings back their results.
pub(crate) trait ClientTransport: Send + Sync {
    /// Sends a request; resolves to its `result`, or `Error::Mcp` for a
    /// JSON-RPC error.
    fn send(&self, request: Outgoing) -> BoxFuture<Result<Value, Error>>;
    /// Stops the transport (for stdio: ends the server process).
    fn close(&self) -> BoxFuture<()>;
}

/// An MCP client connected to one server.
#[derive(Clone)]
pub struct Client {
    transport: Arc<dyn ClientTransport>,
    options: Arc<ClientOptions>,
    next_id: Arc<AtomicI64>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Spawns `command` and talks to it over its stdin/stdout.
    pub async fn connect_stdio(command: StdioCommand) -> Result<Client, Error> {
        Self::connect_stdio_with(command, ClientOptions::default()).await
    }

    /// [`Client::connect_stdio`] with explicit options.
    pub async fn connect_stdio_with(
        command: StdioCommand,
        options: ClientOptions,
    ) -> Result<Client, Error> {
        let transport = stdio::StdioTransport::spawn(command)?;
        Ok(Self::from_transport(Arc::new(transport), options))
    }

    /// Talks to a Streamable HTTP endpoint (`http://host:port/mcp`).
    pub async fn connect_http(url: &str) -> Result<Client, Error> {
        Self::connect_http_with(url, ClientOptions::default()).await
    }

    /// [`Client::connect_http`] with explicit options.
    pub async fn connect_http_with(url: &str, options: ClientOptions) -> Result<Client, Error> {
        let transport = http::HttpTransport::new(url)?;
        Ok(Self::from_transport(Arc::new(transport), options))
    }

    fn from_transport(transport: Arc<dyn ClientTransport>, options: ClientOptions) -> Client {
        Client {
            transport,
            options: Arc::new(options),
            next_id: Arc::new(AtomicI64::new(1)),
        }
    }

    /// The options this client was built with.
    pub fn options(&self) -> &ClientOptions {
        &self.options
    }

    fn request_meta(&self) -> Value {
        json!({
            meta::PROTOCOL_VERSION: self.options.protocol_version,
            meta::CLIENT_INFO: self.options.info,
            meta::CLIENT_CAPABILITIES: self.options.capabilities,
        })
    }

    /// Sends any request, adding the per-request `_meta`, and returns the
    /// raw `result` object.
    pub async fn request(&self, method: &str, params: Map<String, Value>) -> Result<Value, Error> {
        self.request_with(method, params, None).await
    }

    /// [`Client::request`], routing notifications about the request (progress,
    /// log messages) to `notifications`.
    pub async fn request_with(
        &self,
        method: &str,
        mut params: Map<String, Value>,
        notifications: Option<mpsc::UnboundedSender<Value>>,
    ) -> Result<Value, Error> {
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        if let Value::Object(required) = self.request_meta() {
            for (k, v) in required {
                meta.entry(k).or_insert(v);
            }
        }
        params.insert("_meta".into(), Value::Object(meta));
        let id = RequestId::Number(self.next_id.fetch_add(1, Ordering::Relaxed));
        let send = self.transport.send(Outgoing {
            id,
            method: method.to_owned(),
            params,
            notifications,
        });
        match self.options.timeout {
            Some(limit) => tokio::time::timeout(limit, send)
                .await
                .map_err(|_| Error::Timeout)?,
            None => send.await,
        }
    }

    /// `server/discover`: supported versions, capabilities, identity.
    pub async fn discover(&self) -> Result<Value, Error> {
        self.request("server/discover", Map::new()).await
    }

    /// One page of `tools/list`.
    pub async fn list_tools(&self, cursor: Option<&str>) -> Result<Value, Error> {
        let mut params = Map::new();
        if let Some(cursor) = cursor {
            params.insert("cursor".into(), Value::from(cursor));
        }
        self.request("tools/list", params).await
    }

    /// Every tool, following `nextCursor` until the last page.
    pub async fn list_all_tools(&self) -> Result<Vec<Value>, Error> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self.list_tools(cursor.as_deref()).await?;
            if let Some(Value::Array(items)) = page.get("tools") {
                tools.extend(items.iter().cloned());
            }
            match page.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(tools),
            }
        }
    }

    /// `tools/call`: the `CallToolResult` object.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<Value, Error> {
        let mut params = Map::new();
        params.insert("name".into(), Value::from(name));
        params.insert("arguments".into(), arguments);
        self.request("tools/call", params).await
    }

    /// Ends the connection (for stdio: closes the server's stdin, then
    /// terminates it if it does not exit).
    pub async fn close(&self) {
        self.transport.close().await
    }
}
