//! `ferromcp_json_*`: a small JSON accessor so C programs can read the
//! fields they need from JSON text (an elicitation answer, a completion
//! request, a client call's result) without a JSON library of their own.

use serde_json::Value;
use std::ffi::c_char;

use crate::args::{check_out, parse_json, required_str};
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::give_string;
use crate::panic::ffi_boundary;

/// Reads one value from JSON text by JSON Pointer (RFC 6901, e.g.
/// "/content/name"; "" is the whole document).
///
/// - `json`: NUL-terminated UTF-8 JSON text, borrowed.
/// - `pointer`: NUL-terminated JSON Pointer, borrowed.
/// - `out_text`: receives a new string: a string value's text itself
///   (unquoted), any other value as compact JSON text. Free it with
///   ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_NOT_FOUND when nothing is at `pointer`;
/// FERROMCP_INVALID_JSON for unparsable `json`; FERROMCP_NULL_ARGUMENT,
/// FERROMCP_INVALID_UTF8.
///
/// Threads: any thread.
///
/// ```c
/// char *action = NULL;
/// if (ferromcp_json_get(answer_json, "/action", &action) == FERROMCP_OK) {
///     puts(action); // accept
///     ferromcp_string_free(action);
/// }
/// ```
///
/// # Safety
/// Strings NULL or NUL-terminated; `out_text` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_json_get(
    json: *const c_char,
    pointer: *const c_char,
    out_text: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let json = unsafe { required_str(json, "json") }?;
        let pointer = unsafe { required_str(pointer, "pointer") }?;
        check_out(out_text, "out_text")?;
        let document = parse_json(json, "json")?;
        let value = value_at(&document, pointer)?;
        let text = match value {
            Value::String(text) => text.replace('\0', "\u{FFFD}"),
            other => other.to_string(),
        };
        give_string(text, out_text)
    })
}

/// Lists the member names of the JSON object at `pointer` (RFC 6901) as a
/// JSON array of strings, so C code can walk an object (a schema's
/// properties) with ferromcp_json_get().
///
/// - `json`, `pointer`: NUL-terminated, borrowed.
/// - `out_keys_json`: receives a new string (e.g. `["a","b"]`); free it with
///   ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_NOT_FOUND when nothing is at `pointer`;
/// FERROMCP_INVALID_JSON for unparsable `json` or a value that is not an
/// object; FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8.
///
/// Threads: any thread.
///
/// ```c
/// char *keys = NULL;
/// ferromcp_json_keys("{\"a\":1}", "", &keys); // ["a"]
/// ferromcp_string_free(keys);
/// ```
///
/// # Safety
/// Strings NULL or NUL-terminated; `out_keys_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_json_keys(
    json: *const c_char,
    pointer: *const c_char,
    out_keys_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let json = unsafe { required_str(json, "json") }?;
        let pointer = unsafe { required_str(pointer, "pointer") }?;
        check_out(out_keys_json, "out_keys_json")?;
        let document = parse_json(json, "json")?;
        let value = value_at(&document, pointer)?;
        let Value::Object(map) = value else {
            return Err(FfiError::new(
                ferromcp_status::FERROMCP_INVALID_JSON,
                format!("the value at {pointer:?} is not an object"),
            ));
        };
        let keys: Vec<String> = map.keys().cloned().collect();
        give_string(Value::from(keys).to_string(), out_keys_json)
    })
}

/// Reads one value from JSON text by JSON Pointer as JSON text (a string
/// stays quoted), for building JSON from parts of another document.
///
/// - `json`, `pointer`: NUL-terminated, borrowed.
/// - `out_json`: receives a new string; free it with ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_NOT_FOUND when nothing is at `pointer`;
/// FERROMCP_INVALID_JSON; FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8.
///
/// Threads: any thread.
///
/// ```c
/// char *v = NULL;
/// ferromcp_json_get_json("{\"s\":\"x\"}", "/s", &v); // "\"x\""
/// ferromcp_string_free(v);
/// ```
///
/// # Safety
/// Strings NULL or NUL-terminated; `out_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_json_get_json(
    json: *const c_char,
    pointer: *const c_char,
    out_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let json = unsafe { required_str(json, "json") }?;
        let pointer = unsafe { required_str(pointer, "pointer") }?;
        check_out(out_json, "out_json")?;
        let document = parse_json(json, "json")?;
        let value = value_at(&document, pointer)?;
        give_string(value.to_string(), out_json)
    })
}

/// The value at `pointer` (RFC 6901) in `document`, or FERROMCP_NOT_FOUND:
/// the one lookup behind every JSON accessor.
fn value_at<'a>(document: &'a Value, pointer: &str) -> Result<&'a Value, FfiError> {
    document.pointer(pointer).ok_or_else(|| {
        FfiError::new(
            ferromcp_status::FERROMCP_NOT_FOUND,
            format!("nothing at {pointer:?}"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::ferromcp_string_free;
    use std::ffi::CStr;

    fn get(json: &std::ffi::CStr, pointer: &std::ffi::CStr) -> (ferromcp_status, Option<String>) {
        let mut out: *mut c_char = std::ptr::null_mut();
        // SAFETY: NUL-terminated inputs, a writable output.
        let status = unsafe { ferromcp_json_get(json.as_ptr(), pointer.as_ptr(), &mut out) };
        if out.is_null() {
            return (status, None);
        }
        // SAFETY: a string ferromcp just returned.
        let text = unsafe { CStr::from_ptr(out) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: as above, freed once.
        unsafe { ferromcp_string_free(out) };
        (status, Some(text))
    }

    #[test]
    fn strings_are_unquoted_and_other_values_are_json() {
        let doc = c"{\"action\":\"accept\",\"content\":{\"n\":1,\"s\":\"a\\\"b\"}}";
        assert_eq!(
            get(doc, c"/action"),
            (ferromcp_status::FERROMCP_OK, Some("accept".into()))
        );
        assert_eq!(
            get(doc, c"/content"),
            (
                ferromcp_status::FERROMCP_OK,
                Some("{\"n\":1,\"s\":\"a\\\"b\"}".into())
            )
        );
        assert_eq!(
            get(doc, c"/content/s"),
            (ferromcp_status::FERROMCP_OK, Some("a\"b".into()))
        );
        assert_eq!(
            get(doc, c"/missing"),
            (ferromcp_status::FERROMCP_NOT_FOUND, None)
        );
        assert_eq!(
            get(c"{", c""),
            (ferromcp_status::FERROMCP_INVALID_JSON, None)
        );
    }

    #[test]
    fn json_keys_lists_object_members_only() {
        let mut out: *mut c_char = std::ptr::null_mut();
        // SAFETY: NUL-terminated inputs, a writable output.
        let status = unsafe {
            ferromcp_json_keys(
                c"{\"p\":{\"a\":1,\"b\":2}}".as_ptr(),
                c"/p".as_ptr(),
                &mut out,
            )
        };
        assert_eq!(status, ferromcp_status::FERROMCP_OK);
        // SAFETY: a string ferromcp just returned, freed once.
        let keys = unsafe { std::ffi::CStr::from_ptr(out) }
            .to_string_lossy()
            .into_owned();
        unsafe { ferromcp_string_free(out) };
        assert_eq!(keys, r#"["a","b"]"#);
        out = std::ptr::null_mut();
        // SAFETY: as above.
        let status = unsafe { ferromcp_json_keys(c"[1]".as_ptr(), c"".as_ptr(), &mut out) };
        assert_eq!(status, ferromcp_status::FERROMCP_INVALID_JSON);
        assert!(out.is_null());
    }
}
