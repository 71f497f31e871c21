//! The Node.js binding of ferromcp: a napi-rs addon that adapts JS values and
//! callbacks to the `ferromcp` core and nothing more.
//!
//! The addon is private. The npm package `ferromcp` loads it through the
//! generated loader (`native.js`, typed by the generated `native.d.ts`) and
//! wraps it in a small hand-written facade (`index.js` / `index.d.ts`), which
//! is the public API:
//!
//! ```js
//! const { Server } = require("ferromcp");
//!
//! const server = new Server({ name: "demo", version: "1.0.0" });
//! server.tool("echo", {
//!   description: "Returns the text unchanged.",
//!   inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
//! }, ({ text }) => text);
//! await server.serveStdio();
//! ```
//!
//! Modules mirror the core modules they adapt: `server` (`ferromcp::server`),
//! `handler` (the handler boundary), `context` (the request context),
//! `error` (both directions of error conversion), `runtime` (settling JS
//! promises from ferromcp's one tokio runtime) and `json` (JS numbers to JSON).

// First: `#[napi] impl` blocks in other modules (primitives.rs) look up the
// class's `js_name` recorded when napi-derive expanded the struct, so the
// struct must be expanded before them or the class is exported as `JsServer`.
mod server;

mod abort;
mod auth;
mod client;
mod context;
mod embed;
mod error;
mod handler;
mod host_call;
mod json;
mod oauth;
mod primitives;
mod runtime;
mod tool_result;
