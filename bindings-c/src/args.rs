//! Reading arguments that C passed in: strings, JSON text, the members of
//! JSON options objects, and output pointers. Every check here turns a
//! caller mistake into a status instead of undefined behaviour, as far as a
//! pointer can be checked at all (NULL). Objects C passes in are borrowed
//! through `crate::ffi`.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::ffi::{CStr, c_char};

use crate::error::{FfiError, ferromcp_status};

/// Borrows a required NUL-terminated UTF-8 string.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that outlives `'a`.
pub(crate) unsafe fn required_str<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, FfiError> {
    if ptr.is_null() {
        return Err(FfiError::null(name));
    }
    // SAFETY: checked non-NULL; NUL termination is the caller's contract.
    let bytes = unsafe { CStr::from_ptr(ptr) };
    bytes.to_str().map_err(|e| {
        FfiError::new(
            ferromcp_status::FERROMCP_INVALID_UTF8,
            format!("`{name}` is not valid UTF-8: {e}"),
        )
    })
}

/// Like [`required_str`], but NULL means "absent".
///
/// # Safety
/// As for [`required_str`].
pub(crate) unsafe fn optional_str<'a>(
    ptr: *const c_char,
    name: &str,
) -> Result<Option<&'a str>, FfiError> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: forwarded contract.
    unsafe { required_str(ptr, name) }.map(Some)
}

/// Parses JSON text passed by C.
pub(crate) fn parse_json(text: &str, name: &str) -> Result<Value, FfiError> {
    serde_json::from_str(text).map_err(|e| {
        FfiError::new(
            ferromcp_status::FERROMCP_INVALID_JSON,
            format!("`{name}` is not valid JSON: {e}"),
        )
    })
}

/// Parses JSON text that must be an object.
pub(crate) fn parse_json_object(text: &str, name: &str) -> Result<Map<String, Value>, FfiError> {
    match parse_json(text, name)? {
        Value::Object(map) => Ok(map),
        other => Err(FfiError::new(
            ferromcp_status::FERROMCP_INVALID_JSON,
            format!("`{name}` must be a JSON object, not {}", json_kind(&other)),
        )),
    }
}

/// An optional JSON object argument: NULL reads as the empty object.
///
/// # Safety
/// As for [`required_str`].
pub(crate) unsafe fn optional_object(
    ptr: *const c_char,
    name: &str,
) -> Result<Map<String, Value>, FfiError> {
    // SAFETY: forwarded contract.
    match unsafe { optional_str(ptr, name) }? {
        Some(text) => parse_json_object(text, name),
        None => Ok(Map::new()),
    }
}

/// A definition given as JSON text (a Tool, a Resource...), read into the
/// protocol type `T`.
///
/// # Safety
/// As for [`required_str`].
pub(crate) unsafe fn definition<T: DeserializeOwned>(
    ptr: *const c_char,
    name: &str,
) -> Result<T, FfiError> {
    // SAFETY: forwarded contract.
    let text = unsafe { required_str(ptr, name) }?;
    serde_json::from_value(parse_json(text, name)?).map_err(|e| {
        FfiError::new(
            ferromcp_status::FERROMCP_INVALID_DEFINITION,
            format!("`{name}` is not a valid definition: {e}"),
        )
    })
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A JSON options argument `name` that is wrong: `why`.
pub(crate) fn bad(name: &str, why: impl std::fmt::Display) -> FfiError {
    FfiError::new(
        ferromcp_status::FERROMCP_INVALID_JSON,
        format!("`{name}`: {why}"),
    )
}

/// Refuses members this version does not know, so a misspelt option is an
/// error rather than silently ignored.
pub(crate) fn only_known(
    map: &Map<String, Value>,
    known: &[&str],
    name: &str,
) -> Result<(), FfiError> {
    match map.keys().find(|k| !known.contains(&k.as_str())) {
        Some(key) => Err(bad(name, format!("unknown option {key:?}"))),
        None => Ok(()),
    }
}

/// The member `member` of the options `name`, which must be a list of
/// strings.
pub(crate) fn strings(value: &Value, name: &str, member: &str) -> Result<Vec<String>, FfiError> {
    value
        .as_array()
        .and_then(|items| {
            items
                .iter()
                .map(|v| v.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        })
        .ok_or_else(|| bad(name, format!("\"{member}\" must be a list of strings")))
}

/// Checks that an output pointer is usable before any work is done, so a
/// NULL output never leaves side effects behind.
pub(crate) fn check_out<T>(out: *mut T, name: &str) -> Result<(), FfiError> {
    if out.is_null() {
        Err(FfiError::null(name))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_string_is_reported_by_name() {
        // SAFETY: NULL is allowed input.
        let err = unsafe { required_str(std::ptr::null(), "name") }.unwrap_err();
        assert_eq!(err.status, ferromcp_status::FERROMCP_NULL_ARGUMENT);
        assert!(err.message.contains("`name`"));
        // SAFETY: NULL is allowed input.
        assert_eq!(unsafe { optional_str(std::ptr::null(), "d") }, Ok(None));
    }

    #[test]
    fn invalid_utf8_is_rejected() {
        let bytes = b"\xff\xfe\0";
        // SAFETY: a NUL-terminated byte string.
        let err = unsafe { required_str(bytes.as_ptr().cast(), "name") }.unwrap_err();
        assert_eq!(err.status, ferromcp_status::FERROMCP_INVALID_UTF8);
    }

    #[test]
    fn json_objects_are_told_apart() {
        assert!(parse_json_object("{\"a\":1}", "x").is_ok());
        let err = parse_json_object("[1]", "x").unwrap_err();
        assert_eq!(err.status, ferromcp_status::FERROMCP_INVALID_JSON);
        assert!(err.message.contains("an array"));
        let err = parse_json("{", "x").unwrap_err();
        assert_eq!(err.status, ferromcp_status::FERROMCP_INVALID_JSON);
    }
}
