//! `_native._probe_host_call`: a private hook for the binding's own tests
//! that runs a Python callable as a handler of any kind through the one
//! host-call adapter ([`crate::host_call`]), and shows what core made of
//! its return value.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use ferromcp::protocol::{CreateMessageResult, ElicitResult, ListRootsResult};
use ferromcp::server::{CompletionOutput, HandlerError, PromptOutput, ResourceOutput, ToolOutput};

use crate::host_call::{HostCall, HostCtx};
use crate::oauth::CallbackText;
use crate::refs::{HandlerKind, PyRefs};
use crate::values;

/// Runs `callable(input, None)` through the host-call adapter as a handler
/// of `kind` (`"tool"`, `"resource"`, `"prompt"`, `"completion"`, a
/// client's `"elicitation"`, `"sampling"` or `"roots"` answer, or an
/// `"oauth"` callback) and returns the output core built from its return
/// value, as Rust's debug text. `event_loop` runs an `async def`.
///
/// Private, for the binding's own tests: it shows that every kind goes
/// through the one adapter and core's rule for that kind, before the
/// user-facing APIs of those kinds exist.
#[pyfunction]
#[pyo3(signature = (kind, callable, input, event_loop=None))]
pub(crate) fn _probe_host_call(
    py: Python<'_>,
    kind: &str,
    callable: Py<PyAny>,
    input: &Bound<'_, PyAny>,
    event_loop: Option<Py<PyAny>>,
) -> PyResult<String> {
    let handler_kind = match kind {
        "tool" => HandlerKind::Tool,
        "resource" => HandlerKind::Resource,
        "prompt" => HandlerKind::Prompt,
        "completion" => HandlerKind::Completion,
        "elicitation" | "sampling" | "roots" => HandlerKind::Input,
        "oauth" => HandlerKind::OAuth,
        other => return Err(PyValueError::new_err(format!("unknown kind {other:?}"))),
    };
    let input_kind = kind.to_owned();
    let is_async = py
        .import("inspect")?
        .call_method1("iscoroutinefunction", (callable.bind(py),))?
        .is_truthy()?;
    let refs = Arc::new(PyRefs::new(None));
    refs.set_handler(handler_kind, "probe", callable);
    if let Some(event_loop) = event_loop {
        refs.set_event_loop(event_loop);
    }
    let call = HostCall {
        key: (handler_kind, Arc::from("probe")),
        refs: refs.clone(),
        ctx: HostCtx::None,
        input: values::from_python(input, None)?,
        is_async,
    };
    fn debug<O: std::fmt::Debug>(r: Result<O, HandlerError>) -> Result<String, String> {
        r.map(|o| format!("{o:?}")).map_err(|e| e.to_string())
    }
    let outcome = py.detach(move || {
        ferromcp::runtime::get().block_on(async move {
            match handler_kind {
                HandlerKind::Tool => debug(call.run::<ToolOutput>().await),
                HandlerKind::Resource => debug(call.run::<ResourceOutput>().await),
                HandlerKind::Prompt => debug(call.run::<PromptOutput>().await),
                HandlerKind::Completion => debug(call.run::<CompletionOutput>().await),
                // Never probed: `handler_kind` comes from the names above.
                HandlerKind::Verifier
                | HandlerKind::Upstream
                | HandlerKind::Middleware
                | HandlerKind::Visibility => Err(format!("no probe for a {}", handler_kind.noun())),
                HandlerKind::OAuth => debug(call.run::<CallbackText>().await),
                HandlerKind::Input => match input_kind.as_str() {
                    "elicitation" => debug(call.run::<ElicitResult>().await),
                    "sampling" => debug(call.run::<CreateMessageResult>().await),
                    _ => debug(call.run::<ListRootsResult>().await),
                },
            }
        })
    });
    refs.clear();
    outcome.map_err(PyValueError::new_err)
}
