//! What every binding needs from core to host MCP in another language, so
//! that a binding only adapts values and callbacks:
//!
//! - [`settings`]: a client's settings read once from the host's value;
//! - [`input`]: what a host's input handler answered, as the request's answer;
//! - [`threads`]: the threads its blocking handlers run on;
//! - on Linux, `wait` and `reactor`: the waits that let a host's own thread
//!   or event loop poll core's futures (reached through [`crate::runtime`]).

pub mod input;
#[cfg(target_os = "linux")]
pub(crate) mod reactor;
pub mod settings;
pub mod threads;
#[cfg(target_os = "linux")]
pub(crate) mod wait;
