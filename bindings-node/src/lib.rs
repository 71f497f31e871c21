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
//! One file per native class or concern, named as in the Python binding:
//! `server` (the `Server` class), `tools` and `primitives` (which callable
//! each kind of handler runs), `host_call` (the one adapter that runs a JS
//! callable), `context` (the request context), `auth` (protected serving),
//! `http_embed` (core's HTTP endpoint for a JS web server), `middleware`
//! (JS links of core's middleware chain, core's ready-made links),
//! `notification_middleware` (JS hooks on the notifications a server or a
//! client receives),
//! `visibility` (who sees which item), `cli` (the `ferromcp` command line
//! for the package's `bin`), `logs` (core's log events to a JS function),
//! `telemetry` (core's spans reported to the application's OpenTelemetry
//! SDK), `gateway`
//! (`mount`, `mountServer` and `proxy` of `Server`, and `Mount`), `client` and
//! `oauth`, `tool_result`, `abort` (`ctx.signal`), `error` (both directions
//! of error conversion), `values` (JS values to JSON) and `runtime`
//! (settling JS promises from ferromcp's one tokio runtime).

// First: the generated typings name a class by the `js_name` napi-derive
// recorded when it expanded the struct, so a module that mentions
// `JsServer` (http_embed.rs) must come after it, or the typings say
// `JsServer`.
mod server;

mod abort;
mod auth;
mod cli;
mod client;
mod client_middleware;
mod client_skill;
mod client_task;
mod context;
mod error;
mod gateway;
mod host_call;
mod http_embed;
mod logs;
mod middleware;
mod notification_middleware;
mod oauth;
mod primitives;
mod runtime;
mod telemetry;
mod tool_result;
mod tools;
mod values;
mod visibility;
