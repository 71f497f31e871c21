//! Status codes and error messages: the one place where Rust errors become
//! the stable numbers C callers switch on.

use serde_json::Value;
use std::cell::RefCell;
use std::ffi::{CString, c_char};

use ferromcp_core::ErrorKind;

use crate::panic::ffi_boundary_or;

/// The outcome of a ferromcp function. The numeric values are stable: new
/// codes are only ever added, and existing values never change meaning.
///
/// Values come in groups: 0-99 the call itself (arguments, state, local
/// failures); 100-199 what happened to a request on the connection (the
/// peer answered with a JSON-RPC error, the connection closed, a timeout).
///
/// After a failure, ferromcp_last_error_message() describes it in more
/// detail; after FERROMCP_PEER_ERROR, ferromcp_last_error_code() and
/// ferromcp_last_error_data_json() give the JSON-RPC code and data.
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
    /// What was asked for is not there (a missing JSON member, an HTTP
    /// header the request did not carry).
    FERROMCP_NOT_FOUND = 11,
    /// A callback asked the client for input it has not given yet
    /// (2026-07-28): complete the call (any outcome is discarded) and
    /// return; the callback runs again once the client answers.
    FERROMCP_INPUT_REQUIRED = 12,
    /// The peer answered the request with a JSON-RPC error: read its code
    /// with ferromcp_last_error_code() and its data with
    /// ferromcp_last_error_data_json().
    FERROMCP_PEER_ERROR = 100,
    /// The request took longer than its timeout.
    FERROMCP_TIMEOUT = 101,
    /// The connection closed before the answer arrived.
    FERROMCP_CONNECTION_CLOSED = 102,
    /// The peer broke the protocol (an unexpected message, a missing field).
    FERROMCP_PROTOCOL_ERROR = 103,
    /// An HTTP-level failure, or an HTTP error status without a JSON-RPC
    /// error.
    FERROMCP_HTTP = 104,
    /// The OAuth authorization failed: the authorize or assertion callback
    /// failed, the authorization server refused, its metadata is unusable,
    /// or the server kept refusing the token (the message says which step).
    FERROMCP_AUTH = 105,
}

/// Every status, in numeric order.
const ALL_STATUSES: [ferromcp_status; 19] = [
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
    ferromcp_status::FERROMCP_NOT_FOUND,
    ferromcp_status::FERROMCP_INPUT_REQUIRED,
    ferromcp_status::FERROMCP_PEER_ERROR,
    ferromcp_status::FERROMCP_TIMEOUT,
    ferromcp_status::FERROMCP_CONNECTION_CLOSED,
    ferromcp_status::FERROMCP_PROTOCOL_ERROR,
    ferromcp_status::FERROMCP_HTTP,
    ferromcp_status::FERROMCP_AUTH,
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
            ferromcp_status::FERROMCP_NOT_FOUND => c"not found",
            ferromcp_status::FERROMCP_INPUT_REQUIRED => {
                c"the client's input is required; complete the call and return"
            }
            ferromcp_status::FERROMCP_PEER_ERROR => c"the peer answered with a JSON-RPC error",
            ferromcp_status::FERROMCP_TIMEOUT => c"the request timed out",
            ferromcp_status::FERROMCP_CONNECTION_CLOSED => {
                c"the connection closed before the answer arrived"
            }
            ferromcp_status::FERROMCP_PROTOCOL_ERROR => c"the peer broke the protocol",
            ferromcp_status::FERROMCP_HTTP => c"an HTTP failure",
            ferromcp_status::FERROMCP_AUTH => c"the OAuth authorization failed",
        }
    }
}

/// A failure inside a binding function, before it becomes a status code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct FfiError {
    pub(crate) status: ferromcp_status,
    pub(crate) message: String,
    /// The JSON-RPC code of a peer's error.
    pub(crate) code: Option<i32>,
    /// The JSON-RPC data of a peer's error, as JSON text.
    pub(crate) data_json: Option<String>,
}

impl FfiError {
    pub(crate) fn new(status: ferromcp_status, message: impl Into<String>) -> FfiError {
        FfiError {
            status,
            message: message.into(),
            code: None,
            data_json: None,
        }
    }

    pub(crate) fn null(argument: &str) -> FfiError {
        FfiError::new(
            ferromcp_status::FERROMCP_NULL_ARGUMENT,
            format!("`{argument}` must not be NULL"),
        )
    }
}

/// The status for each kind of core failure: the binding's one table from
/// core's classification ([`ferromcp_core::Error::kind`]) to C.
fn status_for(kind: ErrorKind) -> ferromcp_status {
    match kind {
        ErrorKind::PeerError => ferromcp_status::FERROMCP_PEER_ERROR,
        ErrorKind::Io => ferromcp_status::FERROMCP_IO,
        ErrorKind::Json => ferromcp_status::FERROMCP_INVALID_JSON,
        ErrorKind::Http | ErrorKind::HttpStatus => ferromcp_status::FERROMCP_HTTP,
        ErrorKind::Protocol => ferromcp_status::FERROMCP_PROTOCOL_ERROR,
        ErrorKind::InvalidDefinition => ferromcp_status::FERROMCP_INVALID_DEFINITION,
        ErrorKind::Closed => ferromcp_status::FERROMCP_CONNECTION_CLOSED,
        ErrorKind::Timeout => ferromcp_status::FERROMCP_TIMEOUT,
        ErrorKind::Cancelled => ferromcp_status::FERROMCP_REQUEST_CANCELLED,
        ErrorKind::Auth => ferromcp_status::FERROMCP_AUTH,
        // A kind added to core later: still a failure, until it gets its own.
        _ => ferromcp_status::FERROMCP_INTERNAL,
    }
}

impl From<ferromcp_core::Error> for FfiError {
    fn from(error: ferromcp_core::Error) -> FfiError {
        FfiError::from(&error)
    }
}

/// For a caller that keeps the error too (a client link passes it on).
impl From<&ferromcp_core::Error> for FfiError {
    fn from(error: &ferromcp_core::Error) -> FfiError {
        FfiError {
            status: status_for(error.kind()),
            message: error.to_string(),
            code: error.code(),
            data_json: error.data().map(Value::to_string),
        }
    }
}

/// The latest failure on a thread, as the accessors hand it to C.
#[derive(Default)]
struct LastError {
    message: CString,
    code: i32,
    data_json: Option<CString>,
}

/// A C string from Rust text; interior NULs would truncate it silently, so
/// they are replaced.
fn c_text(text: &str) -> CString {
    CString::new(text.replace('\0', "\u{FFFD}")).unwrap_or_default()
}

thread_local! {
    static LAST_ERROR: RefCell<LastError> = RefCell::new(LastError::default());
}

/// Records `error` as this thread's latest failure.
pub(crate) fn set_last_error(error: &FfiError) {
    let last = LastError {
        message: c_text(&error.message),
        code: error.code.unwrap_or(0),
        data_json: error.data_json.as_deref().map(c_text),
    };
    LAST_ERROR.with(|slot| *slot.borrow_mut() = last);
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
        LAST_ERROR.with(|slot| slot.borrow().message.as_ptr())
    })
}

/// The JSON-RPC error code of the latest failed ferromcp call on the calling
/// thread, when it failed with FERROMCP_PEER_ERROR (the peer answered with a
/// JSON-RPC error); 0 when that failure carried no JSON-RPC code, or when no
/// call failed yet. (0 is never a JSON-RPC error code MCP uses.)
///
/// Thread-safe: each thread has its own latest failure.
#[unsafe(no_mangle)]
pub extern "C" fn ferromcp_last_error_code() -> i32 {
    ffi_boundary_or(0, || LAST_ERROR.with(|slot| slot.borrow().code))
}

/// The JSON-RPC `data` of the latest failed ferromcp call on the calling
/// thread, as compact UTF-8 JSON text, or NULL when that failure carried no
/// data (or no call failed yet).
///
/// Returns a NUL-terminated string owned by ferromcp, or NULL; never free
/// it. It stays valid until the next ferromcp call on this thread that
/// fails, or until the thread exits: copy it to keep it longer.
#[unsafe(no_mangle)]
pub extern "C" fn ferromcp_last_error_data_json() -> *const c_char {
    ffi_boundary_or(std::ptr::null(), || {
        LAST_ERROR.with(|slot| {
            slot.borrow()
                .data_json
                .as_ref()
                .map_or(std::ptr::null(), |d| d.as_ptr())
        })
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
        let expected: Vec<i32> = (0..=12).chain(100..=105).collect();
        assert_eq!(values, expected);
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
    fn core_failures_keep_their_classification() {
        use ferromcp_core::{Error, McpError};
        let cases = [
            (Error::Timeout, ferromcp_status::FERROMCP_TIMEOUT),
            (Error::Closed, ferromcp_status::FERROMCP_CONNECTION_CLOSED),
            (
                Error::Cancelled,
                ferromcp_status::FERROMCP_REQUEST_CANCELLED,
            ),
            (
                Error::Protocol("x".into()),
                ferromcp_status::FERROMCP_PROTOCOL_ERROR,
            ),
            (Error::Http("x".into()), ferromcp_status::FERROMCP_HTTP),
            (
                Error::HttpStatus(500, "x".into()),
                ferromcp_status::FERROMCP_HTTP,
            ),
            (
                Error::InvalidDefinition("x".into()),
                ferromcp_status::FERROMCP_INVALID_DEFINITION,
            ),
            (
                Error::Io(std::io::Error::other("x")),
                ferromcp_status::FERROMCP_IO,
            ),
        ];
        for (error, status) in cases {
            let ffi = FfiError::from(error);
            assert_eq!(ffi.status, status);
            assert_eq!(ffi.code, None);
        }
        for kind in ErrorKind::ALL {
            assert_ne!(
                status_for(kind),
                ferromcp_status::FERROMCP_INTERNAL,
                "{kind}"
            );
        }
        std::thread::spawn(|| {
            assert_eq!(ferromcp_last_error_code(), 0);
            assert!(ferromcp_last_error_data_json().is_null());
            let peer = Error::Mcp(
                McpError::new(-32021, "needs sampling")
                    .with_data(serde_json::json!({"requiredCapabilities": {"sampling": {}}})),
            );
            let status = into_status(Err(FfiError::from(peer)));
            assert_eq!(status, ferromcp_status::FERROMCP_PEER_ERROR);
            assert_eq!(ferromcp_last_error_code(), -32021);
            assert_eq!(
                text(ferromcp_last_error_data_json()),
                r#"{"requiredCapabilities":{"sampling":{}}}"#
            );
            assert_eq!(
                text(ferromcp_last_error_message()),
                "MCP error -32021: needs sampling"
            );
            // A later failure without data clears both.
            let _ = into_status(Err(FfiError::from(Error::Timeout)));
            assert_eq!(ferromcp_last_error_code(), 0);
            assert!(ferromcp_last_error_data_json().is_null());
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
