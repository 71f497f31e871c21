//! ferromcp-bench: measures MCP servers over Streamable HTTP and stdio.
//!
//! `mcp-bench run` drives every server of bench/servers.json round by round
//! and prints figures, ratios and target checks; `mcp-bench http`, `stdio`
//! and `cold` measure one server; `scale` (also part of `run`) measures the
//! Redis event bus's cost to plain calls and the fan-out of a change to
//! 1,000 listen streams over 3 replicas. `baseline-server` is the physical-limit
//! reference: hyper + serde_json answering just the echo tool.

pub mod clients;
pub mod config;
pub mod event_loop;
pub mod http;
pub mod otlp_sink;
pub mod proc;
pub mod report;
pub mod runner;
pub mod scale;
pub mod soak;
pub mod stats;
pub mod stdio;
pub mod wire;
