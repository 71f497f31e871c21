//! `ferromcp.ToolResult`: a complete `CallToolResult`, for handlers that need
//! more than a plain return value (several content blocks, images, an
//! explicit error flag). Plain return values are turned into results by core.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use serde_json::{Map, Value, json};

use crate::convert;

/// A complete tool result, returned by a handler as is.
///
/// ```python
/// @server.tool
/// def report() -> ferromcp.ToolResult:
///     return ferromcp.ToolResult(
///         ["two blocks:", {"type": "text", "text": "second"}],
///         structured_content={"ok": True},
///     )
/// ```
///
/// `content` items are content-block dicts; a `str` item is shorthand for a
/// text block.
#[pyclass(module = "ferromcp._native", name = "ToolResult", frozen)]
pub(crate) struct PyToolResult {
    result: Map<String, Value>,
}

impl PyToolResult {
    /// The `CallToolResult` object.
    pub(crate) fn result(&self) -> &Map<String, Value> {
        &self.result
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
        let mut result = Map::new();
        let mut blocks = Vec::new();
        for item in content.into_iter().flat_map(|list| list.iter()) {
            let block = match item.cast::<PyString>() {
                Ok(text) => json!({"type": "text", "text": text.to_cow()?}),
                Err(_) => {
                    Value::Object(convert::from_python_object(&item, None, "a content block")?)
                }
            };
            blocks.push(block);
        }
        result.insert("content".into(), Value::Array(blocks));
        if let Some(structured) = structured_content {
            let map = convert::from_python_object(structured, None, "structured_content")?;
            result.insert("structuredContent".into(), Value::Object(map));
        }
        if is_error {
            result.insert("isError".into(), Value::Bool(true));
        }
        if let Some(meta) = meta {
            let map = convert::from_python_object(meta, None, "meta")?;
            result.insert("_meta".into(), Value::Object(map));
        }
        Ok(PyToolResult { result })
    }

    /// The content blocks.
    #[getter]
    fn content<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_python(py, self.result.get("content").unwrap_or(&Value::Null))
    }

    /// The structured content, or `None`.
    #[getter]
    fn structured_content<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_python(
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
