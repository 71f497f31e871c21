//! JSON values <-> Python objects, converted directly (no JSON text in
//! between): `dict`, `list`/`tuple`, `str`, `int`, `float`, `bool`, `None`.
//!
//! Objects of any other type go through the optional `default` callable
//! (the same idea as `json.dumps(default=...)`), which the pure-Python layer
//! uses for dataclasses, enums and models.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use serde::Serialize;
use serde_json::{Map, Number, Value};

/// Deep enough for any real payload; shallow enough that a self-referencing
/// list fails with an error instead of overflowing the stack.
const MAX_DEPTH: usize = 200;

/// Builds the Python object for anything serialisable as JSON, a JSON value
/// or one of core's typed results alike, directly (`pythonize`: no JSON tree
/// or text in between).
pub(crate) fn to_python<'py, T: Serialize + ?Sized>(
    py: Python<'py>,
    value: &T,
) -> PyResult<Bound<'py, PyAny>> {
    pythonize::pythonize(py, value).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Builds a Python `dict` for a JSON object.
pub(crate) fn to_python_dict<'py>(
    py: Python<'py>,
    map: &Map<String, Value>,
) -> PyResult<Bound<'py, PyDict>> {
    Ok(to_python(py, map)?.cast_into::<PyDict>()?)
}

/// Reads a Python object as JSON. `default` converts objects of other types
/// into something convertible; without it they raise `TypeError`.
pub(crate) fn from_python(
    obj: &Bound<'_, PyAny>,
    default: Option<&Bound<'_, PyAny>>,
) -> PyResult<Value> {
    Converter { default }.convert(obj, 0)
}

/// Reads a Python mapping that must be a JSON object (a schema, a result).
pub(crate) fn from_python_object(
    obj: &Bound<'_, PyAny>,
    default: Option<&Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Map<String, Value>> {
    match from_python(obj, default)? {
        Value::Object(map) => Ok(map),
        _ => Err(PyTypeError::new_err(format!("{what} must be a dict"))),
    }
}

struct Converter<'a, 'py> {
    default: Option<&'a Bound<'py, PyAny>>,
}

impl Converter<'_, '_> {
    fn convert(&self, obj: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
        if depth > MAX_DEPTH {
            return Err(PyValueError::new_err(format!(
                "value nested deeper than {MAX_DEPTH} levels (a circular reference?)"
            )));
        }
        if obj.is_none() {
            return Ok(Value::Null);
        }
        // bool before int: True is an int in Python.
        if let Ok(b) = obj.cast::<PyBool>() {
            return Ok(Value::Bool(b.is_true()));
        }
        if obj.is_instance_of::<PyInt>() {
            if let Ok(i) = obj.extract::<i64>() {
                return Ok(Value::from(i));
            }
            if let Ok(u) = obj.extract::<u64>() {
                return Ok(Value::from(u));
            }
            return Err(PyValueError::new_err(
                "integer does not fit in 64 bits and cannot be sent as JSON",
            ));
        }
        if let Ok(f) = obj.cast::<PyFloat>() {
            return Number::from_f64(f.value())
                .map(Value::Number)
                .ok_or_else(|| {
                    PyValueError::new_err("NaN and infinity cannot be sent as JSON numbers")
                });
        }
        if let Ok(s) = obj.cast::<PyString>() {
            return Ok(Value::String(s.to_cow()?.into_owned()));
        }
        if let Ok(dict) = obj.cast::<PyDict>() {
            let mut map = Map::with_capacity(dict.len());
            for (key, item) in dict.iter() {
                let Ok(key) = key.cast::<PyString>() else {
                    return Err(PyTypeError::new_err(format!(
                        "JSON object keys must be str, not {}",
                        key.get_type().name()?
                    )));
                };
                map.insert(key.to_cow()?.into_owned(), self.convert(&item, depth + 1)?);
            }
            return Ok(Value::Object(map));
        }
        if let Ok(list) = obj.cast::<PyList>() {
            return list
                .iter()
                .map(|item| self.convert(&item, depth + 1))
                .collect::<PyResult<Vec<_>>>()
                .map(Value::Array);
        }
        if let Ok(tuple) = obj.cast::<PyTuple>() {
            return tuple
                .iter()
                .map(|item| self.convert(&item, depth + 1))
                .collect::<PyResult<Vec<_>>>()
                .map(Value::Array);
        }
        match self.default {
            Some(default) => {
                let replacement = default.call1((obj,))?;
                if replacement.is(obj) {
                    return Err(not_serializable(obj));
                }
                self.convert(&replacement, depth + 1)
            }
            None => Err(not_serializable(obj)),
        }
    }
}

fn not_serializable(obj: &Bound<'_, PyAny>) -> PyErr {
    let type_name = obj
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into());
    PyTypeError::new_err(format!(
        "Object of type {type_name} is not JSON serializable"
    ))
}
