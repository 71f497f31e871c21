//! Serde types for every definition of the 2026-07-28 `schema.json`.
//!
//! Each type's doc names the schema definition it implements. Names follow
//! the schema except where Rust asks otherwise:
//!
//! | schema | Rust |
//! | --- | --- |
//! | `Result`, `Request`, `Notification`, `Error` | [`BaseResult`], [`BaseRequest`], [`BaseNotification`], [`ErrorObject`] (no clash with `std`'s `Result` or [`crate::Error`]) |
//! | `JSONRPCMessage`, `JSONObject`... | [`JsonRpcMessage`], [`JsonObject`]... |
//! | `ElicitRequestURLParams` | [`ElicitRequestUrlParams`] |
//!
//! Conventions:
//! - `const` members (`jsonrpc`, `method`, `type`, error `code`) are
//!   zero-sized [`markers`] that only read and write their constant.
//! - Unions deserialise by their discriminator (`type`, `method`, `mode`,
//!   `resultType`...) and serialise untagged, each variant writing its own.
//! - Optional members are `Option` and omitted when `None`; `_meta` is a
//!   [`MetaObject`] map, or a typed meta object whose other keys are kept in
//!   `extra`.
//! - `number` members are `f64` written back as integers when integral, so
//!   `50` round-trips as `50`; `integer` members are `u64`/`i64`.

mod capabilities;
mod common;
mod completion;
mod content;
mod elicitation;
mod errors;
mod input;
pub mod markers;
mod messages;
mod meta_objects;
mod notifications;
mod prompts;
mod requests;
mod resources;
mod responses;
mod results;
mod sampling;
mod serde_util;
mod server_results;
mod subscriptions;
mod tool_calls;
mod tools;

pub use super::jsonrpc::RequestId;
pub use capabilities::*;
pub use common::*;
pub use completion::*;
pub use content::*;
pub use elicitation::*;
pub use errors::*;
pub use input::*;
pub use messages::*;
pub use meta_objects::*;
pub use notifications::*;
pub use prompts::*;
pub use requests::*;
pub use resources::*;
pub use responses::*;
pub use results::*;
pub use sampling::*;
pub use server_results::*;
pub use subscriptions::*;
pub use tool_calls::*;
pub use tools::*;
