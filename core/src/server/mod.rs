//! The MCP server: a registry of primitives, request dispatch, and the
//! entry points that serve it over stdio or Streamable HTTP.

mod context;
mod dispatch;
mod handler;
mod panic;
mod registry;
pub(crate) mod seal;
pub(crate) mod tool_result;
mod validation;

pub use context::{LogLevel, RequestContext, RequestMeta};
pub use dispatch::CacheScope;
pub(crate) use dispatch::{Prepared, Rejection};
pub use handler::{
    BoxFuture, Completion, CompletionReceiver, HandlerError, HandlerResult, ToolHandler,
    ToolOutput,
};
pub use seal::SealKey;

use std::sync::{Arc, RwLock};

use crate::protocol::{Implementation, Tool};
use crate::transport::http::HttpOptions;
use crate::Error;
use registry::Registry;

/// Caching hints for one kind of result (`ttlMs` + `cacheScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// How long (ms) the client may consider the result fresh.
    pub ttl_ms: u64,
    /// Who may cache it.
    pub scope: CacheScope,
}

impl Default for CacheHint {
    /// Immediately stale and shareable: lists can change at run time, so a
    /// server opts in to longer freshness explicitly.
    fn default() -> Self {
        CacheHint {
            ttl_ms: 0,
            scope: CacheScope::Public,
        }
    }
}

/// Server-wide settings.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Natural-language guidance returned by `server/discover`.
    pub instructions: Option<String>,
    /// Items per page of `tools/list` (and the other lists).
    pub page_size: usize,
    /// Caching hints for `server/discover`.
    pub discover_cache: CacheHint,
    /// Caching hints for `tools/list`.
    pub tools_cache: CacheHint,
    /// Key protecting cursors and request state; share it between replicas.
    pub seal_key: SealKey,
    /// Whether every result carries `_meta["io.modelcontextprotocol/serverInfo"]`.
    pub include_server_info: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            instructions: None,
            page_size: 100,
            discover_cache: CacheHint::default(),
            tools_cache: CacheHint::default(),
            seal_key: SealKey::random(),
            include_server_info: true,
        }
    }
}

pub(crate) struct ServerShared {
    pub(crate) info: Implementation,
    pub(crate) options: ServerOptions,
    pub(crate) registry: RwLock<Registry>,
}

/// An MCP server. Cheap to clone: clones share the registry, so a tool added
/// through one clone is served by all.
#[derive(Clone)]
pub struct Server {
    pub(crate) shared: Arc<ServerShared>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("info", &self.shared.info)
            .finish_non_exhaustive()
    }
}

impl Server {
    /// A server with default options.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Server {
        Server::with_options(Implementation::new(name, version), ServerOptions::default())
    }

    /// A server with explicit identity and options.
    pub fn with_options(info: Implementation, options: ServerOptions) -> Server {
        Server {
            shared: Arc::new(ServerShared {
                info,
                options,
                registry: RwLock::new(Registry::default()),
            }),
        }
    }

    /// The server's identity.
    pub fn info(&self) -> &Implementation {
        &self.shared.info
    }

    /// Registers (or replaces) a tool. Fails when the tool's name or schemas
    /// are unacceptable (invalid JSON Schema, a network `$ref`, a bad name).
    pub fn add_tool(&self, tool: Tool, handler: impl ToolHandler) -> Result<(), Error> {
        let entry = registry::ToolEntry::new(tool, Arc::new(handler))?;
        self.registry_write().insert_tool(entry);
        Ok(())
    }

    /// Removes a tool; returns whether it existed.
    pub fn remove_tool(&self, name: &str) -> bool {
        self.registry_write().remove_tool(name)
    }

    /// Names of the registered tools, in listing order.
    pub fn tool_names(&self) -> Vec<String> {
        self.registry_read().tool_names()
    }

    /// Serves on this process's stdin/stdout until stdin reaches EOF.
    pub async fn serve_stdio(&self) -> Result<(), Error> {
        crate::transport::stdio::serve(self.clone(), tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves Streamable HTTP until the process ends or `options.shutdown`
    /// is cancelled.
    pub async fn serve_http(&self, options: HttpOptions) -> Result<(), Error> {
        crate::transport::http::serve(self.clone(), options).await
    }

    pub(crate) fn registry_read(&self) -> std::sync::RwLockReadGuard<'_, Registry> {
        // A poisoned lock means a panic while mutating the registry; its
        // maps are still structurally valid, so keep serving.
        self.shared
            .registry
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn registry_write(&self) -> std::sync::RwLockWriteGuard<'_, Registry> {
        self.shared
            .registry
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
