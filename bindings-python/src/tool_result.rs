//! `ferromcp.ToolResult`: a complete `CallToolResult`, for handlers that need
//! more than a plain return value (several content blocks, images, an
//! explicit error flag). Core assembles and checks the result
//! ([`ToolOutput::from_parts`]); this class only converts its arguments.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use serde_json::{Map, Value};

use ferromcp::server::ToolOutput;

use crate::values;

/// A complete tool result, returned by a handler as is.
///
/// >>> import ferromcp
/// >>> server = ferromcp.Server("demo")
/// >>> @server.tool
/// ... def report() -> ferromcp.ToolResult:
/// ...     return ferromcp.ToolResult(
/// ...         ["two blocks:", {"type": "text", "text": "second"}],
/// ...         structured_content={"ok": True},
/// ...     )
/// >>> result = report()
/// >>> len(result.content), result.structured_content, result.is_error
/// (2, {'ok': True}, False)
/// >>> ferromcp.ToolResult([{"type": "nonsense"}])
/// Traceback (most recent call last):
/// ValueError: ...
///
/// `content` items are content-block dicts; a `str` item is shorthand for a
/// text block. Core checks the result against the schema: an invalid block
/// raises `ValueError`.
#[pyclass(module = "ferromcp._native", name = "ToolResult", frozen)]
pub(crate) struct PyToolResult {
    result: Map<String, Value>,
}

impl PyToolResult {
    /// The result as core output, sent as is.
    pub(crate) fn output(&self) -> ToolOutput {
        ToolOutput::Result(self.result.clone())
    }
}

#[pymethods]
impl PyToolResult {
    #[new]
    #[pyo3(signature = (content=None, *, structured_content=None, is_error=false, meta=None))]
    fn new(
        content: Option<&Bound<'_, PyList>>,
        structured_content: Option<&Bound<'_, PyAny>>,
        is_error: bool,
        meta: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut blocks = Vec::new();
        for item in content.into_iter().flat_map(|list| list.iter()) {
            // A `str` item stays a string: core reads it as a text block.
            let block = match item.cast::<PyString>() {
                Ok(text) => Value::String(text.to_cow()?.into_owned()),
                Err(_) => {
                    Value::Object(values::from_python_object(&item, None, "a content block")?)
                }
            };
            blocks.push(block);
        }
        let structured = structured_content
            .map(|s| values::from_python_object(s, None, "structured_content"))
            .transpose()?
            .map(Value::Object);
        let meta = meta
            .map(|m| values::from_python_object(m, None, "meta"))
            .transpose()?
            .map(Value::Object);
        let result = match ToolOutput::from_parts(blocks, structured, is_error, meta) {
            Ok(ToolOutput::Result(map)) => map,
            // Cannot happen: from_parts always builds a whole result.
            Ok(ToolOutput::Value(_)) => Map::new(),
            Err(e) => return Err(PyValueError::new_err(e.to_string())),
        };
        Ok(PyToolResult { result })
    }

    /// The content blocks.
    #[getter]
    fn content<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        values::to_python(py, self.result.get("content").unwrap_or(&Value::Null))
    }

    /// The structured content, or `None`.
    #[getter]
    fn structured_content<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        values::to_python(
            py,
            self.result.get("structuredContent").unwrap_or(&Value::Null),
        )
    }

    /// Whether the result reports a tool error.
    #[getter]
    fn is_error(&self) -> bool {
        matches!(self.result.get("isError"), Some(Value::Bool(true)))
    }

    fn __repr__(&self) -> String {
        format!("ToolResult({})", Value::Object(self.result.clone()))
    }
}
