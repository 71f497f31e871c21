//! Errors crossing the boundary, converted here and nowhere else:
//! core [`ferromcp::Error`] -> a `ferromcp.errors` exception, and a Python
//! exception raised by a tool handler -> [`HandlerError`].
//!
//! The exception classes are plain Python (`ferromcp/errors.py`) so they can
//! also inherit from the matching builtins (`TimeoutError`, `ValueError`...).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

use ferromcp::protocol::codes;
use ferromcp::server::HandlerError;
use ferromcp::{Error, McpError};

use crate::convert;

static ERRORS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS_MODULE
        .get_or_try_init(py, || Ok(py.import("ferromcp.errors")?.unbind()))
        .map(|m| m.bind(py))
}

/// The `ferromcp.errors` class standing for a core error, and its JSON-RPC code.
fn class_for(err: &Error) -> (&'static str, i32) {
    match err {
        Error::Mcp(e) => (
            match e.code {
                codes::PARSE_ERROR => "ParseError",
                codes::INVALID_REQUEST => "InvalidRequestError",
                codes::METHOD_NOT_FOUND => "MethodNotFoundError",
                codes::INVALID_PARAMS => "InvalidParamsError",
                codes::INTERNAL_ERROR => "InternalError",
                _ => "McpError",
            },
            e.code,
        ),
        Error::Io(_) | Error::Http(_) | Error::HttpStatus(..) => {
            ("TransportError", codes::INTERNAL_ERROR)
        }
        Error::Closed => ("ConnectionClosedError", codes::INTERNAL_ERROR),
        Error::Json(_) => ("ParseError", codes::PARSE_ERROR),
        Error::Protocol(_) => ("ProtocolError", codes::INTERNAL_ERROR),
        Error::InvalidDefinition(_) => ("InvalidDefinitionError", codes::INVALID_PARAMS),
        Error::Timeout => ("RequestTimeoutError", codes::INTERNAL_ERROR),
        Error::Cancelled => ("RequestCancelledError", codes::INTERNAL_ERROR),
    }
}

/// Converts a core error into the typed Python exception.
pub(crate) fn to_py_err(py: Python<'_>, err: &Error) -> PyErr {
    let (class_name, code) = class_for(err);
    let (message, data) = match err {
        Error::Mcp(e) => (e.message.clone(), e.data.as_ref()),
        other => (other.to_string(), None),
    };
    let build = || -> PyResult<PyErr> {
        let class = errors_module(py)?.getattr(class_name)?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("code", code)?;
        if let Some(data) = data {
            kwargs.set_item("data", convert::to_python(py, data)?)?;
        }
        let exc = class.call((message.as_str(),), Some(&kwargs))?;
        Ok(PyErr::from_value(exc))
    };
    // Only a broken installation (ferromcp.errors missing) lands here; the
    // message still says what failed.
    build().unwrap_or_else(|_| PyRuntimeError::new_err(err.to_string()))
}

/// Converts an exception raised by a tool handler.
///
/// `ferromcp.McpError` (and subclasses) deliberately raised by the handler
/// become a JSON-RPC error; every other exception becomes a tool error
/// result (`isError: true`) reading `"<ExceptionType>: <message>"`, so the
/// model sees what went wrong and the server keeps serving.
pub(crate) fn handler_error(py: Python<'_>, err: PyErr) -> HandlerError {
    if let Some(mcp) = as_mcp_error(py, &err) {
        return HandlerError::Protocol(mcp);
    }
    HandlerError::Tool(describe(py, &err))
}

/// `"ValueError: boom"`, or just `"ValueError"` when the message is empty.
pub(crate) fn describe(py: Python<'_>, err: &PyErr) -> String {
    let type_name = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    let message = err
        .value(py)
        .str()
        .map(|s| s.to_string())
        .unwrap_or_default();
    if message.is_empty() {
        type_name
    } else {
        format!("{type_name}: {message}")
    }
}

fn as_mcp_error(py: Python<'_>, err: &PyErr) -> Option<McpError> {
    let class = errors_module(py).ok()?.getattr("McpError").ok()?;
    let value = err.value(py);
    if !value.is_instance(&class).ok()? {
        return None;
    }
    let code: i32 = value
        .getattr("code")
        .and_then(|c| c.extract())
        .unwrap_or(codes::INTERNAL_ERROR);
    let message: String = value
        .getattr("message")
        .and_then(|m| m.extract())
        .unwrap_or_else(|_| describe(py, err));
    let data = value
        .getattr("data")
        .ok()
        .filter(|d| !d.is_none())
        .and_then(|d| convert::from_python(&d, None).ok());
    let mut mcp = McpError::new(code, message);
    mcp.data = data;
    Some(mcp)
}
