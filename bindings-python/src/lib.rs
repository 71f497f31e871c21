//! `ferromcp._native`: the compiled half of the `ferromcp` Python package.
//!
//! Thin by design: it adapts Python callables to core's handler boundary,
//! converts JSON values to and from Python objects, and runs core's
//! transports with the GIL released. Everything protocol is in the
//! `ferromcp` crate; everything Pythonic (schemas from type hints,
//! decorators, exception classes) is in `python/ferromcp/`.

mod auth;
mod cli;
mod client;
mod client_future;
mod client_middleware;
mod client_skill;
mod client_task;
mod context;
mod error;
mod gateway;
mod host_call;
mod http_embed;
mod logs;
mod loop_dispatch;
#[cfg(target_os = "linux")]
mod loop_reactor;
mod middleware;
mod notification_link;
mod oauth;
mod outbox;
mod pending;
mod primitives;
mod probe;
mod refs;
mod server;
mod serving;
mod sync;
mod telemetry;
mod tool_result;
mod tools;
mod values;
mod visibility;
mod workers;

use pyo3::prelude::*;

/// The native module. Import `ferromcp` instead.
#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<server::PyServer>()?;
    m.add_class::<gateway::PyMount>()?;
    http_embed::register(m)?;
    auth::register(m)?;
    client::register(m)?;
    oauth::register(m)?;
    telemetry::register(m)?;
    logs::register(m)?;
    m.add_class::<serving::PyServing>()?;
    m.add_class::<context::PyContext>()?;
    m.add_class::<tool_result::PyToolResult>()?;
    m.add_class::<middleware::PyMiddlewareCall>()?;
    m.add_class::<client_middleware::PyClientCall>()?;
    m.add_class::<middleware::PyBuiltinMiddleware>()?;
    // The release's version, compiled in: reading it from the installed
    // distribution's metadata (importlib.metadata) took a third of the
    // package's import time.
    m.add("VERSION", env!("CARGO_PKG_VERSION"))?;
    m.add(
        "PROTOCOL_VERSION",
        ferromcp::protocol::LATEST_PROTOCOL_VERSION,
    )?;
    error::add_constants(m)?;
    m.add_function(wrap_pyfunction!(probe::_probe_host_call, m)?)?;
    m.add_function(wrap_pyfunction!(primitives::uri_template_variables, m)?)?;
    m.add_function(wrap_pyfunction!(workers::_close_host_threads, m)?)?;
    m.add_function(wrap_pyfunction!(cli::cli_main, m)?)?;
    Ok(())
}
