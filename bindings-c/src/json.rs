//! Strings ferromcp hands to C, and a small JSON accessor so C programs
//! can read the fields they need from JSON text (an elicitation answer, a
//! completion request) without a JSON library of their own.

use serde_json::Value;
use std::ffi::{CString, c_char};

use crate::args::{check_out, parse_json, required_str};
use crate::context::give_string;
use crate::error::{FfiError, ferromcp_status};
use crate::panic::ffi_boundary;

/// Frees a string ferromcp returned through an output parameter (documented
/// as "free it with ferromcp_string_free()").
///
/// - `text`: such a string, or NULL (then nothing happens). Invalid after
///   the call.
///
/// Returns nothing: it cannot fail.
///
/// Threads: any thread.
///
/// # Safety
/// `text` is NULL or a string from ferromcp not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_string_free(text: *mut c_char) {
    let _ = ffi_boundary(|| {
        if !text.is_null() {
            // SAFETY: allocated by CString::into_raw in `give_string`.
            drop(unsafe { CString::from_raw(text) });
        }
        Ok(())
    });
}

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

/// The value at `pointer` (RFC 6901) in `document`, or FERROMCP_NOT_FOUND:
/// the one lookup behind every JSON accessor.
pub(crate) fn value_at<'a>(document: &'a Value, pointer: &str) -> Result<&'a Value, FfiError> {
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
}
