//! Status codes and error messages: the one place where Rust errors become
//! the stable numbers C callers switch on.

use std::cell::RefCell;
use std::ffi::{CString, c_char};

use crate::panic::ffi_boundary_or;

/// The outcome of a polymcp function. The numeric values are stable: new
/// codes are only ever added, and existing values never change meaning.
///
/// After a failure, polymcp_last_error_message() describes it in more detail.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum polymcp_status {
    /// Success.
    POLYMCP_OK = 0,
    /// A required pointer argument was NULL.
    POLYMCP_NULL_ARGUMENT = 1,
    /// A string argument was not valid UTF-8.
    POLYMCP_INVALID_UTF8 = 2,
    /// A JSON argument could not be parsed, or is not the kind of JSON value
    /// the function needs.
    POLYMCP_INVALID_JSON = 3,
    /// An argument has an unacceptable value (for example a host name that
    /// does not resolve).
    POLYMCP_INVALID_ARGUMENT = 4,
    /// The server rejected a definition (a bad tool name, or a schema that
    /// is not a valid JSON Schema).
    POLYMCP_INVALID_DEFINITION = 5,
    /// An operating-system I/O operation failed (binding a port, reading
    /// stdin).
    POLYMCP_IO = 6,
    /// The call is not allowed now: the server is already serving, or a
    /// blocking function was called from a polymcp callback thread.
    POLYMCP_INVALID_STATE = 7,
    /// The request was cancelled or its client went away before the result
    /// arrived, so the result was discarded. Not a failure of the caller.
    POLYMCP_REQUEST_CANCELLED = 8,
    /// An unexpected internal failure.
    POLYMCP_INTERNAL = 9,
    /// polymcp panicked (a bug in polymcp); the operation did not complete.
    POLYMCP_PANIC = 10,
}

/// Every status, in numeric order.
const ALL_STATUSES: [polymcp_status; 11] = [
    polymcp_status::POLYMCP_OK,
    polymcp_status::POLYMCP_NULL_ARGUMENT,
    polymcp_status::POLYMCP_INVALID_UTF8,
    polymcp_status::POLYMCP_INVALID_JSON,
    polymcp_status::POLYMCP_INVALID_ARGUMENT,
    polymcp_status::POLYMCP_INVALID_DEFINITION,
    polymcp_status::POLYMCP_IO,
    polymcp_status::POLYMCP_INVALID_STATE,
    polymcp_status::POLYMCP_REQUEST_CANCELLED,
    polymcp_status::POLYMCP_INTERNAL,
    polymcp_status::POLYMCP_PANIC,
];

impl polymcp_status {
    fn from_code(code: i32) -> Option<polymcp_status> {
        ALL_STATUSES
            .iter()
            .copied()
            .find(|status| *status as i32 == code)
    }

    /// A short, static description.
    fn describe(self) -> &'static std::ffi::CStr {
        match self {
            polymcp_status::POLYMCP_OK => c"success",
            polymcp_status::POLYMCP_NULL_ARGUMENT => c"a required pointer argument was NULL",
            polymcp_status::POLYMCP_INVALID_UTF8 => c"a string argument is not valid UTF-8",
            polymcp_status::POLYMCP_INVALID_JSON => c"a JSON argument is invalid",
            polymcp_status::POLYMCP_INVALID_ARGUMENT => c"an argument has an unacceptable value",
            polymcp_status::POLYMCP_INVALID_DEFINITION => c"the server rejected the definition",
            polymcp_status::POLYMCP_IO => c"an I/O operation failed",
            polymcp_status::POLYMCP_INVALID_STATE => c"the call is not allowed in this state",
            polymcp_status::POLYMCP_REQUEST_CANCELLED => {
                c"the request was cancelled; the result was discarded"
            }
            polymcp_status::POLYMCP_INTERNAL => c"internal error",
            polymcp_status::POLYMCP_PANIC => c"polymcp panicked (a bug in polymcp)",
        }
    }
}

/// A failure inside a binding function, before it becomes a status code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct FfiError {
    pub(crate) status: polymcp_status,
    pub(crate) message: String,
}

impl FfiError {
    pub(crate) fn new(status: polymcp_status, message: impl Into<String>) -> FfiError {
        FfiError {
            status,
            message: message.into(),
        }
    }

    pub(crate) fn null(argument: &str) -> FfiError {
        FfiError::new(
            polymcp_status::POLYMCP_NULL_ARGUMENT,
            format!("`{argument}` must not be NULL"),
        )
    }
}

impl From<polymcp_core::Error> for FfiError {
    fn from(error: polymcp_core::Error) -> FfiError {
        let status = match &error {
            polymcp_core::Error::InvalidDefinition(_) => polymcp_status::POLYMCP_INVALID_DEFINITION,
            polymcp_core::Error::Io(_) => polymcp_status::POLYMCP_IO,
            polymcp_core::Error::Json(_) => polymcp_status::POLYMCP_INVALID_JSON,
            _ => polymcp_status::POLYMCP_INTERNAL,
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
pub(crate) fn into_status(result: Result<(), FfiError>) -> polymcp_status {
    match result {
        Ok(()) => polymcp_status::POLYMCP_OK,
        Err(error) => {
            set_last_error(&error);
            error.status
        }
    }
}

/// A static, human-readable description of a status code.
///
/// `status`: any integer; values that are not a polymcp_status give
/// "unknown status".
///
/// Returns a NUL-terminated string with static lifetime. Never NULL; never
/// free it. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn polymcp_status_message(status: i32) -> *const c_char {
    ffi_boundary_or(c"unknown status".as_ptr(), || {
        polymcp_status::from_code(status)
            .map_or(c"unknown status", polymcp_status::describe)
            .as_ptr()
    })
}

/// Details of the latest failed polymcp call on the calling thread (each
/// thread has its own message), or "" if none failed yet.
///
/// Returns a NUL-terminated string owned by polymcp. Never NULL; never free
/// it. It stays valid until the next polymcp call on this thread that
/// fails, or until the thread exits: copy it to keep it longer.
#[unsafe(no_mangle)]
pub extern "C" fn polymcp_last_error_message() -> *const c_char {
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
            let message = text(polymcp_status_message(status as i32));
            assert!(!message.is_empty());
            assert!(seen.insert(message), "duplicate message for {status:?}");
        }
    }

    #[test]
    fn unknown_codes_are_named_unknown() {
        assert_eq!(text(polymcp_status_message(-1)), "unknown status");
        assert_eq!(text(polymcp_status_message(9999)), "unknown status");
    }

    #[test]
    fn last_error_is_per_thread_and_survives_success() {
        std::thread::spawn(|| {
            assert_eq!(text(polymcp_last_error_message()), "");
            let status = into_status(Err(FfiError::null("server")));
            assert_eq!(status, polymcp_status::POLYMCP_NULL_ARGUMENT);
            assert_eq!(into_status(Ok(())), polymcp_status::POLYMCP_OK);
            assert_eq!(
                text(polymcp_last_error_message()),
                "`server` must not be NULL"
            );
        })
        .join()
        .expect("test thread");
    }

    #[test]
    fn interior_nul_does_not_truncate_or_fail() {
        set_last_error(&FfiError::new(polymcp_status::POLYMCP_INTERNAL, "a\0b"));
        assert_eq!(text(polymcp_last_error_message()), "a\u{FFFD}b");
    }
}
