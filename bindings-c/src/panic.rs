//! The panic boundary: unwinding into C is undefined behaviour, so every
//! exported function runs its body through one of these helpers.

use std::panic::{AssertUnwindSafe, catch_unwind};

use crate::error::{FfiError, ferromcp_status, into_status, set_last_error};

/// Runs a fallible body; a panic becomes [`ferromcp_status::FERROMCP_PANIC`]
/// and any failure is recorded as the thread's last error.
pub(crate) fn ffi_boundary(body: impl FnOnce() -> Result<(), FfiError>) -> ferromcp_status {
    // AssertUnwindSafe: after a panic the only thing we touch is the
    // thread-local error slot, which the panicking body never borrows.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(result) => into_status(result),
        Err(payload) => {
            let detail = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_owned())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".to_owned());
            set_last_error(&FfiError::new(
                ferromcp_status::FERROMCP_PANIC,
                format!("ferromcp panicked: {detail}"),
            ));
            ferromcp_status::FERROMCP_PANIC
        }
    }
}

/// Runs an infallible body that returns a plain value; a panic yields
/// `fallback` (C has no way to receive a status from such functions).
pub(crate) fn ffi_boundary_or<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panic_becomes_status_and_message() {
        let status = ffi_boundary(|| panic!("boom"));
        assert_eq!(status, ferromcp_status::FERROMCP_PANIC);
        // SAFETY: the function returns a thread-owned, NUL-terminated string.
        let message = unsafe { std::ffi::CStr::from_ptr(crate::ferromcp_last_error_message()) };
        assert_eq!(message.to_str(), Ok("ferromcp panicked: boom"));
    }

    #[test]
    fn panic_in_value_function_gives_fallback() {
        assert_eq!(ffi_boundary_or(7, || panic!("boom")), 7);
    }
}
