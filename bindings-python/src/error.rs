//! Errors crossing the boundary, converted here and nowhere else:
//! core [`ferromcp::Error`] -> a `ferromcp.errors` exception, and a Python
//! exception raised by a tool handler -> [`HandlerError`].
//!
//! The exception classes, and the one table from core's classification
//! (kind, code) to class, are plain Python (`ferromcp/errors.py`) so they
//! can also inherit from the matching builtins (`TimeoutError`,
//! `ValueError`...).

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

use ferromcp::protocol::codes;
use ferromcp::server::HandlerError;
use ferromcp::{Error, ErrorKind, McpError};

use crate::values;

static ERRORS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS_MODULE
        .get_or_try_init(py, || Ok(py.import("ferromcp.errors")?.unbind()))
        .map(|m| m.bind(py))
}

/// Converts a core error into the typed Python exception.
///
/// Core classifies the error ([`Error::kind`], [`Error::host_code`]);
/// `ferromcp.errors._from_native` picks the class from that classification
/// in its one table. Nothing here chooses a class.
pub(crate) fn to_py_err(py: Python<'_>, err: &Error) -> PyErr {
    let build = || -> PyResult<PyErr> {
        let data = match err.data() {
            Some(data) => values::to_python(py, data)?,
            None => py.None().into_bound(py),
        };
        let exc = errors_module(py)?.getattr("_from_native")?.call1((
            err.kind().as_str(),
            err.host_code(),
            err.host_message(),
            data,
        ))?;
        Ok(PyErr::from_value(exc))
    };
    // Only a broken installation (ferromcp.errors missing) lands here; the
    // message still says what failed.
    build().unwrap_or_else(|_| PyRuntimeError::new_err(err.to_string()))
}

/// Converts a core handler error (an ask the client refused, a session
/// that ended) into the `ferromcp.errors` exception for its code, so that
/// a handler that lets it propagate answers with the same JSON-RPC error
/// ([`handler_error`] reads the code back).
pub(crate) fn from_handler_error(py: Python<'_>, err: HandlerError) -> PyErr {
    let (code, message, data) = match err {
        HandlerError::Protocol(mcp) => (mcp.code, mcp.message, mcp.data),
        HandlerError::Tool(message) => (codes::INTERNAL_ERROR, message, None),
    };
    let build = || -> PyResult<PyErr> {
        let data = match &data {
            Some(data) => values::to_python(py, data)?,
            None => py.None().into_bound(py),
        };
        let exc = errors_module(py)?.getattr("_from_native")?.call1((
            ErrorKind::PeerError.as_str(),
            code,
            &message,
            data,
        ))?;
        Ok(PyErr::from_value(exc))
    };
    build().unwrap_or_else(|_| PyRuntimeError::new_err(message.clone()))
}

/// Adds the wire facts Python must not retype: the JSON-RPC codes (as
/// `codes`, a dict of name to code), the error kinds core classifies
/// failures into (`ERROR_KINDS`), and the key a non-object tool result is
/// wrapped under (`WRAPPED_RESULT_KEY`).
pub(crate) fn add_constants(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let table = PyDict::new(py);
    for &(name, code) in codes::ALL {
        table.set_item(name, code)?;
    }
    m.add("codes", table)?;
    let kinds: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
    m.add("ERROR_KINDS", kinds)?;
    m.add("WRAPPED_RESULT_KEY", ferromcp::server::WRAPPED_RESULT_KEY)?;
    Ok(())
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
        .and_then(|d| values::from_python(&d, None).ok());
    let mut mcp = McpError::new(code, message);
    mcp.data = data;
    Some(mcp)
}
