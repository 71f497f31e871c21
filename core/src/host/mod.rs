//! What every binding needs from core to host MCP in another language, so
//! that a binding only adapts values and callbacks:
//!
//! - [`settings`]: a client's settings read once from the host's value;
//! - [`caller`]: who sent a request, for links and visibility rules;
//! - `server_tls`: a server's TLS settings (certificate files, client CAs);
//! - [`input`]: what a host's input handler answered, as the request's answer;
//! - [`listen`]: an open `subscriptions/listen` stream a host object holds;
//! - [`headers`], [`http_body`]: a request's headers as a handler sees them,
//!   and a response body a host's own HTTP server reads chunk by chunk;
//! - [`oauth`]: a client's OAuth grant, callbacks and settings as core's options;
//! - [`threads`]: the threads its blocking handlers run on;
//! - [`notification_link`]: one host hook as a notification link of either side.
//!
//! The waits that let a host's own thread or event loop poll core's futures
//! are the runtime's ([`crate::runtime::block_here`],
//! [`crate::runtime::host_reactor`]): the client's sockets use them, so they
//! sit below the client, where this kit sits above it.

pub mod caller;
mod given;
pub mod headers;
pub mod http_body;
pub mod input;
pub mod listen;
pub mod logs;
pub mod notification_link;
pub mod oauth;
#[cfg(feature = "tls")]
pub mod server_tls;
pub mod settings;
pub mod task_settings;
pub mod threads;
