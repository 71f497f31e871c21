//! `ferromcp.Context`: what a Python handler may know and do about the
//! request it serves (a thin view of [`ferromcp::server::RequestContext`]).

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use ferromcp::protocol::jsonrpc::RequestId;
use ferromcp::server::{LogLevel, RequestContext};

use crate::convert;

/// The request a tool handler is serving.
///
/// Ask for it by annotating a handler parameter with `ferromcp.Context`:
///
/// ```python
/// @server.tool
/// def slow(n: int, ctx: ferromcp.Context) -> str:
///     for i in range(n):
///         if ctx.cancelled:
///             return "stopped"
///         ctx.progress(i, total=n)
///     return "done"
/// ```
#[pyclass(module = "ferromcp._native", name = "Context", frozen)]
pub(crate) struct PyContext {
    inner: RequestContext,
}

impl PyContext {
    pub(crate) fn new(inner: RequestContext) -> Self {
        PyContext { inner }
    }
}

#[pymethods]
impl PyContext {
    /// The JSON-RPC id of the request (`int` or `str`).
    #[getter]
    fn request_id<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(match self.inner.request_id() {
            RequestId::Number(n) => n.into_pyobject(py)?.into_any(),
            RequestId::String(s) => s.into_pyobject(py)?.into_any(),
        })
    }

    /// The protocol revision the client spoke, e.g. `"2026-07-28"`.
    #[getter]
    fn protocol_version(&self) -> &str {
        &self.inner.meta().protocol_version
    }

    /// The capabilities the client declared for this request.
    #[getter]
    fn client_capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(convert::to_python_dict(py, &self.inner.meta().client_capabilities)?.into_any())
    }

    /// True once the client cancelled the request; long handlers should
    /// check it and stop early.
    #[getter]
    fn cancelled(&self) -> bool {
        self.inner.is_cancelled()
    }

    /// Reports progress, when the client asked for it (a `progressToken`).
    /// Returns whether a notification was sent.
    #[pyo3(signature = (progress, total=None, message=None))]
    fn progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) -> bool {
        self.inner.progress(progress, total, message)
    }

    /// Sends a log message to the client when the request's log level
    /// admits `level` (`"debug"`, `"info"`, ..., `"emergency"`). Returns
    /// whether a message was sent.
    #[pyo3(signature = (level, data, logger=None))]
    fn log(&self, level: &str, data: &Bound<'_, PyAny>, logger: Option<&str>) -> PyResult<bool> {
        let level = LogLevel::parse(level)
            .ok_or_else(|| PyValueError::new_err(format!("unknown log level {level:?}")))?;
        let data = convert::from_python(data, None)?;
        Ok(self.inner.log(level, data, logger))
    }

    fn __repr__(&self) -> String {
        format!("<ferromcp.Context request_id={}>", self.inner.request_id())
    }
}
