//! `ferromcp._native.ToolTask`: core's [`ToolTask`] for Python, the handle
//! on a `tools/call` the server runs as a task (SEP-2663). The pure-Python
//! `ferromcp.ToolTask` (asyncio) and `ferromcp.SyncToolTask` wrap it; like
//! the client's methods, each takes an `event_loop` (an awaitable of that
//! loop) or `None` (blocks with the GIL released).

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;

use std::sync::Arc;

use ferromcp::client::{CallOptions, CallResult, ToolTask};

use crate::client::relayed;
use crate::client_future::{self, ToPy};
use crate::values;

fn value_to_py() -> ToPy<Value> {
    Box::new(|py, value: Value| Ok(values::to_python(py, &value)?.unbind()))
}

#[pyclass(module = "ferromcp._native", name = "ToolTask", frozen)]
pub(crate) struct PyToolTask {
    pub(crate) task: ToolTask,
}

#[pymethods]
impl PyToolTask {
    /// The task's id; `None` when the server answered with the result at once.
    #[getter]
    fn id(&self) -> Option<String> {
        self.task.id().map(str::to_owned)
    }

    /// The last state seen (a `DetailedTask` object, or the result when
    /// there was no task).
    #[getter]
    fn last(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        Ok(values::to_python(py, &self.task.last())?.unbind())
    }

    /// `tasks/get` now; answers with the task's state.
    fn refresh(
        &self,
        py: Python<'_>,
        event_loop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let task = self.task.clone();
        client_future::run(
            py,
            event_loop,
            async move { task.refresh().await },
            value_to_py(),
        )
    }

    /// `tasks/update` with `responses` (input responses by request key).
    fn respond(
        &self,
        py: Python<'_>,
        responses: &Bound<'_, PyDict>,
        event_loop: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let responses = values::from_python_object(responses, None, "responses")?;
        let task = self.task.clone();
        client_future::run(
            py,
            event_loop,
            async move { task.respond(responses).await },
            Box::new(|py, ()| Ok(py.None())),
        )
    }

    /// `tasks/cancel`.
    fn cancel(&self, py: Python<'_>, event_loop: Option<&Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let task = self.task.clone();
        client_future::run(
            py,
            event_loop,
            async move { task.cancel().await },
            Box::new(|py, ()| Ok(py.None())),
        )
    }

    /// Follows the task to its end (answering its questions with the
    /// client's handlers) and answers with the tool's result.
    /// `on_state(state)` is called with the task's state (a dict) each time its
    /// status or status message changes, in order and before the result
    /// (on a worker thread when awaited, on the calling thread when
    /// blocking).
    #[pyo3(signature = (event_loop, on_state=None))]
    fn result(
        &self,
        py: Python<'_>,
        event_loop: Option<&Bound<'_, PyAny>>,
        on_state: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let task = self.task.clone();
        let mut options = CallOptions::default();
        let events = on_state.map(|callable| {
            let (show, events) = relayed(callable, |py, state: Value| {
                Ok((values::to_python(py, &state)?.unbind(),))
            });
            options.on_task_state = Some(Arc::new(move |state: &Value| show(state.clone())));
            events
        });
        client_future::run_with_events(
            py,
            event_loop,
            async move { task.result_with(&options).await.map(CallResult::CallTool) },
            Box::new(|py, result: CallResult| Ok(values::to_python(py, &result)?.unbind())),
            events,
        )
    }

    fn __repr__(&self) -> String {
        match self.task.id() {
            Some(id) => format!("<ferromcp._native.ToolTask {id}>"),
            None => "<ferromcp._native.ToolTask (answered at once)>".to_owned(),
        }
    }
}
