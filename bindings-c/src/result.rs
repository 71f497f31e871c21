//! Accessors for the fields C programs read most from a result's JSON text
//! (a CallToolResult from ferromcp_client_call_tool(), a ReadResourceResult,
//! a sampling answer): its text, whether it is a tool error, and its
//! structured content, without a JSON library of their own.

use serde_json::Value;
use std::ffi::c_char;

use crate::args::{check_out, parse_json, required_str};
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::give_string;
use crate::panic::ffi_boundary;

/// The text of a result: the `text` of each text block of its `content`,
/// one per line (other blocks skipped); "" when there is none.
///
/// - `result_json`: NUL-terminated UTF-8 JSON text of a result object,
///   borrowed.
/// - `out_text`: receives a new string; free it with ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_JSON for unparsable JSON;
/// FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8.
///
/// Threads: any thread.
///
/// ```c
/// char *text = NULL;
/// if (ferromcp_result_text(result_json, &text) == FERROMCP_OK) {
///     puts(text);
///     ferromcp_string_free(text);
/// }
/// ```
///
/// # Safety
/// `result_json` NULL or NUL-terminated; `out_text` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_result_text(
    result_json: *const c_char,
    out_text: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let json = unsafe { required_str(result_json, "result_json") }?;
        check_out(out_text, "out_text")?;
        let result = parse_json(json, "result_json")?;
        let text = ferromcp_core::protocol::content_text(&result);
        give_string(text.replace('\0', "\u{FFFD}"), out_text)
    })
}

/// Whether a tool result says the tool failed (`"isError": true`); false
/// when the member is absent or false.
///
/// - `result_json`: NUL-terminated UTF-8 JSON text of a result, borrowed.
/// - `out_is_error`: receives the answer.
///
/// Returns FERROMCP_OK; FERROMCP_INVALID_JSON for unparsable JSON or an
/// `isError` that is not a boolean; FERROMCP_NULL_ARGUMENT,
/// FERROMCP_INVALID_UTF8.
///
/// Threads: any thread.
///
/// ```c
/// bool failed = false;
/// ferromcp_result_is_error(result_json, &failed);
/// ```
///
/// # Safety
/// `result_json` NULL or NUL-terminated; `out_is_error` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_result_is_error(
    result_json: *const c_char,
    out_is_error: *mut bool,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let json = unsafe { required_str(result_json, "result_json") }?;
        check_out(out_is_error, "out_is_error")?;
        let result = parse_json(json, "result_json")?;
        let is_error = match result.get("isError") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                return Err(FfiError::new(
                    ferromcp_status::FERROMCP_INVALID_JSON,
                    format!("isError must be a boolean, not {other}"),
                ));
            }
        };
        // SAFETY: checked non-NULL; writable per the contract.
        unsafe { out_is_error.write(is_error) };
        Ok(())
    })
}

/// A tool result's structured content (`structuredContent`) as JSON text.
///
/// - `result_json`: NUL-terminated UTF-8 JSON text of a result, borrowed.
/// - `out_json`: receives a new string of compact JSON; free it with
///   ferromcp_string_free(). Untouched unless FERROMCP_OK.
///
/// Returns FERROMCP_OK; FERROMCP_NOT_FOUND when the result has none;
/// FERROMCP_INVALID_JSON for unparsable JSON; FERROMCP_NULL_ARGUMENT,
/// FERROMCP_INVALID_UTF8.
///
/// Threads: any thread.
///
/// ```c
/// char *structured = NULL;
/// if (ferromcp_result_structured_json(result_json, &structured) == FERROMCP_OK) {
///     char *sum = NULL;
///     ferromcp_json_get(structured, "/result", &sum);
///     ferromcp_string_free(sum);
///     ferromcp_string_free(structured);
/// }
/// ```
///
/// # Safety
/// `result_json` NULL or NUL-terminated; `out_json` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_result_structured_json(
    result_json: *const c_char,
    out_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let json = unsafe { required_str(result_json, "result_json") }?;
        check_out(out_json, "out_json")?;
        let result = parse_json(json, "result_json")?;
        match result.get("structuredContent") {
            None => Err(FfiError::new(
                ferromcp_status::FERROMCP_NOT_FOUND,
                "the result has no structuredContent",
            )),
            Some(value) => give_string(value.to_string(), out_json),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::ferromcp_string_free;
    use std::ffi::CStr;

    fn take(out: *mut c_char) -> Option<String> {
        if out.is_null() {
            return None;
        }
        // SAFETY: a string ferromcp just returned, freed once below.
        let text = unsafe { CStr::from_ptr(out) }
            .to_string_lossy()
            .into_owned();
        unsafe { ferromcp_string_free(out) };
        Some(text)
    }

    fn text(json: &CStr) -> (ferromcp_status, Option<String>) {
        let mut out = std::ptr::null_mut();
        // SAFETY: NUL-terminated input, writable output.
        let status = unsafe { ferromcp_result_text(json.as_ptr(), &mut out) };
        (status, take(out))
    }

    fn structured(json: &CStr) -> (ferromcp_status, Option<String>) {
        let mut out = std::ptr::null_mut();
        // SAFETY: as above.
        let status = unsafe { ferromcp_result_structured_json(json.as_ptr(), &mut out) };
        (status, take(out))
    }

    fn is_error(json: &CStr) -> (ferromcp_status, bool) {
        let mut out = false;
        // SAFETY: as above.
        let status = unsafe { ferromcp_result_is_error(json.as_ptr(), &mut out) };
        (status, out)
    }

    #[test]
    fn text_blocks_are_joined_one_per_line() {
        let result = c"{\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"image\",\"data\":\"\",\"mimeType\":\"image/png\"},{\"type\":\"text\",\"text\":\"b\"}],\"isError\":true}";
        assert_eq!(
            text(result),
            (ferromcp_status::FERROMCP_OK, Some("a\nb".into()))
        );
        assert_eq!(
            text(c"{\"content\":[]}"),
            (ferromcp_status::FERROMCP_OK, Some(String::new()))
        );
        assert_eq!(text(c"{"), (ferromcp_status::FERROMCP_INVALID_JSON, None));
        assert_eq!(is_error(result), (ferromcp_status::FERROMCP_OK, true));
    }

    #[test]
    fn is_error_is_false_when_absent_and_checked_when_present() {
        assert_eq!(
            is_error(c"{\"content\":[]}"),
            (ferromcp_status::FERROMCP_OK, false)
        );
        assert_eq!(
            is_error(c"{\"isError\":false}"),
            (ferromcp_status::FERROMCP_OK, false)
        );
        assert_eq!(
            is_error(c"{\"isError\":\"yes\"}").0,
            ferromcp_status::FERROMCP_INVALID_JSON
        );
    }

    #[test]
    fn structured_content_is_json_text_or_not_found() {
        assert_eq!(
            structured(c"{\"content\":[],\"structuredContent\":{\"result\":3}}"),
            (ferromcp_status::FERROMCP_OK, Some("{\"result\":3}".into()))
        );
        assert_eq!(
            structured(c"{\"content\":[]}"),
            (ferromcp_status::FERROMCP_NOT_FOUND, None)
        );
    }
}
