//! Status codes and error messages: the one place where Rust errors become
//! the stable numbers C callers switch on.

use std::cell::RefCell;
use std::ffi::{CString, c_char};

use crate::panic::ffi_boundary_or;

/// The outcome of a ferromcp function. The numeric values are stable: new
/// codes are only ever added, and existing values never change meaning.
///
/// After a failure, ferromcp_last_error_message() describes it in more detail.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ferromcp_status {
    /// Success.
    FERROMCP_OK = 0,
    /// A required pointer argument was NULL.
    FERROMCP_NULL_ARGUMENT = 1,
    /// A string argument was not valid UTF-8.
    FERROMCP_INVALID_UTF8 = 2,
    /// A JSON argument could not be parsed, or is not the kind of JSON value
    /// the function needs.
    FERROMCP_INVALID_JSON = 3,
    /// An argument has an unacceptable value (for example a host name that
    /// does not resolve).
    FERROMCP_INVALID_ARGUMENT = 4,
    /// The server rejected a definition (a bad tool name, or a schema that
    /// is not a valid JSON Schema).
    FERROMCP_INVALID_DEFINITION = 5,
    /// An operating-system I/O operation failed (binding a port, reading
    /// stdin).
    FERROMCP_IO = 6,
    /// The call is not allowed now: the server is already serving, or a
    /// blocking function was called from a ferromcp callback thread.
    FERROMCP_INVALID_STATE = 7,
    /// The request was cancelled or its client went away before the result
    /// arrived, so the result was discarded. Not a failure of the caller.
    FERROMCP_REQUEST_CANCELLED = 8,
    /// An unexpected internal failure.
    FERROMCP_INTERNAL = 9,
    /// ferromcp panicked (a bug in ferromcp); the operation did not complete.
    FERROMCP_PANIC = 10,
}

/// Every status, in numeric order.
const ALL_STATUSES: [ferromcp_status; 11] = [
    ferromcp_status::FERROMCP_OK,
    ferromcp_status::FERROMCP_NULL_ARGUMENT,
    ferromcp_status::FERROMCP_INVALID_UTF8,
    ferromcp_status::FERROMCP_INVALID_JSON,
    ferromcp_status::FERROMCP_INVALID_ARGUMENT,
    ferromcp_status::FERROMCP_INVALID_DEFINITION,
    ferromcp_status::FERROMCP_IO,
    ferromcp_status::FERROMCP_INVALID_STATE,
    ferromcp_status::FERROMCP_REQUEST_CANCELLED,
    ferromcp_status::FERROMCP_INTERNAL,
    ferromcp_status::FERROMCP_PANIC,
];

impl ferromcp_status {
    fn from_code(code: i32) -> Option<ferromcp_status> {
        ALL_STATUSES
            .iter()
            .copied()
            .find(|status| *status as i32 == code)
    }

    /// A short, static description.
    fn describe(self) -> &'static std::ffi::CStr {
        match self {
            ferromcp_status::FERROMCP_OK => c"success",
            ferromcp_status::FERROMCP_NULL_ARGUMENT => c"a required pointer argument was NULL",
            ferromcp_status::FERROMCP_INVALID_UTF8 => c"a string argument is not valid UTF-8",
            ferromcp_status::FERROMCP_INVALID_JSON => c"a JSON argument is invalid",
            ferromcp_status::FERROMCP_INVALID_ARGUMENT => c"an argument has an unacceptable value",
            ferromcp_status::FERROMCP_INVALID_DEFINITION => c"the server rejected the definition",
            ferromcp_status::FERROMCP_IO => c"an I/O operation failed",
            ferromcp_status::FERROMCP_INVALID_STATE => c"the call is not allowed in this state",
            ferromcp_status::FERROMCP_REQUEST_CANCELLED => {
                c"the request was cancelled; the result was discarded"
            }
            ferromcp_status::FERROMCP_INTERNAL => c"internal error",
            ferromcp_status::FERROMCP_PANIC => c"ferromcp panicked (a bug in ferromcp)",
        }
    }
}

/// A failure inside a binding function, before it becomes a status code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct FfiError {
    pub(crate) status: ferromcp_status,
    pub(crate) message: String,
}

impl FfiError {
    pub(crate) fn new(status: ferromcp_status, message: impl Into<String>) -> FfiError {
        FfiError {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn null(argument: &str) -> FfiError {
        FfiError::new(
            ferromcp_status::FERROMCP_NULL_ARGUMENT,
            format!("`{argument}` must not be NULL"),
        )
    }
}

impl From<ferromcp_core::Error> for FfiError {
    fn from(error: ferromcp_core::Error) -> FfiError {
        let status = match &error {
            ferromcp_core::Error::InvalidDefinition(_) => {
                ferromcp_status::FERROMCP_INVALID_DEFINITION
            }
            ferromcp_core::Error::Io(_) => ferromcp_status::FERROMCP_IO,
            ferromcp_core::Error::Json(_) => ferromcp_status::FERROMCP_INVALID_JSON,
            _ => ferromcp_status::FERROMCP_INTERNAL,
        };
        FfiError::new(status, error.to_string())
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `error` as this thread's latest failure.
pub(crate) fn set_last_error(error: &FfiError) {
    // Interior NULs would truncate the C string silently; replace them.
    let text = error.message.replace('\0', "\u{FFFD}");
    let text = CString::new(text).unwrap_or_default();
    LAST_ERROR.with(|slot| *slot.borrow_mut() = text);
}

/// Turns a result into a status, recording the message of a failure.
pub(crate) fn into_status(result: Result<(), FfiError>) -> ferromcp_status {
    match result {
        Ok(()) => ferromcp_status::FERROMCP_OK,
        Err(error) => {
            set_last_error(&error);
            error.status
        }
    }
}

/// A static, human-readable description of a status code.
///
/// `status`: any integer; values that are not a ferromcp_status give
/// "unknown status".
///
/// Returns a NUL-terminated string with static lifetime. Never NULL; never
/// free it. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn ferromcp_status_message(status: i32) -> *const c_char {
    ffi_boundary_or(c"unknown status".as_ptr(), || {
        ferromcp_status::from_code(status)
            .map_or(c"unknown status", ferromcp_status::describe)
            .as_ptr()
    })
}

/// Details of the latest failed ferromcp call on the calling thread (each
/// thread has its own message), or "" if none failed yet.
///
/// Returns a NUL-terminated string owned by ferromcp. Never NULL; never free
/// it. It stays valid until the next ferromcp call on this thread that
/// fails, or until the thread exits: copy it to keep it longer.
#[unsafe(no_mangle)]
pub extern "C" fn ferromcp_last_error_message() -> *const c_char {
    ffi_boundary_or(c"".as_ptr(), || {
        // The CString's heap buffer does not move when the thread-local is
        // borrowed again, only when a later failure replaces it, as documented.
        LAST_ERROR.with(|slot| slot.borrow().as_ptr())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn text(ptr: *const c_char) -> String {
        // SAFETY: the functions under test return static or thread-owned C strings.
        unsafe { CStr::from_ptr(ptr) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn values_are_stable() {
        let values: Vec<i32> = ALL_STATUSES.iter().map(|s| *s as i32).collect();
        assert_eq!(values, (0..=10).collect::<Vec<_>>());
    }

    #[test]
    fn every_status_has_a_distinct_message() {
        let mut seen = std::collections::HashSet::new();
        for status in ALL_STATUSES {
            let message = text(ferromcp_status_message(status as i32));
            assert!(!message.is_empty());
            assert!(seen.insert(message), "duplicate message for {status:?}");
        }
    }

    #[test]
    fn unknown_codes_are_named_unknown() {
        assert_eq!(text(ferromcp_status_message(-1)), "unknown status");
        assert_eq!(text(ferromcp_status_message(9999)), "unknown status");
    }

    #[test]
    fn last_error_is_per_thread_and_survives_success() {
        std::thread::spawn(|| {
            assert_eq!(text(ferromcp_last_error_message()), "");
            let status = into_status(Err(FfiError::null("server")));
            assert_eq!(status, ferromcp_status::FERROMCP_NULL_ARGUMENT);
            assert_eq!(into_status(Ok(())), ferromcp_status::FERROMCP_OK);
            assert_eq!(
                text(ferromcp_last_error_message()),
                "`server` must not be NULL"
            );
        })
        .join()
        .expect("test thread");
    }

    #[test]
    fn interior_nul_does_not_truncate_or_fail() {
        set_last_error(&FfiError::new(ferromcp_status::FERROMCP_INTERNAL, "a\0b"));
        assert_eq!(text(ferromcp_last_error_message()), "a\u{FFFD}b");
    }
}
