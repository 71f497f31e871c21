//! Ownership across the C boundary, in one place (after rustls-ffi's
//! `Castable`): how a Rust object is handed to C and taken back, the
//! strings ferromcp hands out, and the `userdata` C hands in.
//!
//! - An object C owns (a `ferromcp_server`, a `ferromcp_client`...) is a
//!   `Box` turned into a pointer by [`to_boxed_mut_ptr`] (or
//!   [`set_boxed_mut_ptr`], into an output parameter) and turned back,
//!   exactly once, by [`free_box`] in its `_free` function or by
//!   [`try_box_from`] where C gives it back to be used up (a completed
//!   `ferromcp_call`). What else must happen when it goes is its `Drop`.
//! - An object C only borrows (a `ferromcp_context`, a
//!   `ferromcp_oauth_reply`) is lent for as long as its documentation
//!   says, and never freed by C; one that outlives the callback it is lent
//!   to (a client link's request) is held by a [`Lent`] meanwhile.
//! - Either kind is borrowed from the pointer C passes in by [`try_from`]
//!   or [`try_from_mut`], NULL being FERROMCP_NULL_ARGUMENT.
//! - A string is a `CString` handed out by [`give_string`] and freed by
//!   ferromcp_string_free().
//! - A `userdata` pointer from C is held by a [`Userdata`], which calls its
//!   ferromcp_userdata_free finalizer once, when the last holder lets go.
//!
//! No other file turns a box or a C string into a raw pointer or back.

use std::ffi::{CString, c_char, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{FfiError, ferromcp_status};
use crate::panic::ffi_boundary;

/// How C holds a [`Castable`] object: [`OwnershipBox`] or [`OwnershipRef`].
pub(crate) trait Ownership {}

/// C owns the object: its pointer is a `Box` from [`to_boxed_mut_ptr`],
/// which C gives back exactly once (to the type's `_free` function; a
/// `ferromcp_call` to the function that completes it).
pub(crate) struct OwnershipBox;

/// C only borrows the object, for as long as the function or callback that
/// lent it says; ferromcp frees it.
pub(crate) struct OwnershipRef;

impl Ownership for OwnershipBox {}
impl Ownership for OwnershipRef {}

/// A type C sees as an opaque struct, and how C holds it.
///
/// The C type is the Rust type itself: cbindgen declares a struct without
/// `#[repr(C)]` as an incomplete `typedef struct ferromcp_x ferromcp_x;`,
/// so C can hold pointers to it but never look inside. A type has exactly
/// one [`Castable::Ownership`], so only the types C may own can be given
/// out as boxes, taken back or freed, and only `Castable` types can be
/// borrowed from a pointer.
pub(crate) trait Castable {
    /// [`OwnershipBox`] or [`OwnershipRef`].
    type Ownership: Ownership;
}

/// Hands `value` to C as a pointer C owns.
pub(crate) fn to_boxed_mut_ptr<C>(value: C) -> *mut C
where
    C: Castable<Ownership = OwnershipBox>,
{
    Box::into_raw(Box::new(value))
}

/// Hands `value` to C through an output parameter.
///
/// # Safety
/// `out` is not NULL (checked beforehand with `check_out`, so a NULL
/// output leaves nothing behind) and writable.
pub(crate) unsafe fn set_boxed_mut_ptr<C>(out: *mut *mut C, value: C)
where
    C: Castable<Ownership = OwnershipBox>,
{
    // SAFETY: per the contract.
    unsafe { out.write(to_boxed_mut_ptr(value)) }
}

/// Takes back an object C owned, or `None` for NULL. C must not use the
/// pointer afterwards.
///
/// # Safety
/// `ptr` is NULL or came from [`to_boxed_mut_ptr`] and was not taken back
/// yet.
pub(crate) unsafe fn try_box_from<C>(ptr: *mut C) -> Option<Box<C>>
where
    C: Castable<Ownership = OwnershipBox>,
{
    if ptr.is_null() {
        return None;
    }
    // SAFETY: per the contract, a live box that nobody else takes back.
    Some(unsafe { Box::from_raw(ptr) })
}

/// Frees an object C owned: the whole body of every `ferromcp_*_free`.
/// NULL does nothing. The object's `Drop` runs inside the panic boundary;
/// a panic there (a finalizer cannot unwind) has nowhere to be reported,
/// since these functions return nothing.
///
/// # Safety
/// As [`try_box_from`].
pub(crate) unsafe fn free_box<C>(ptr: *mut C)
where
    C: Castable<Ownership = OwnershipBox>,
{
    let _ = ffi_boundary(|| {
        // SAFETY: forwarded contract.
        drop(unsafe { try_box_from(ptr) });
        Ok(())
    });
}

/// An object lent to C for as long as its Rust holder keeps it: a stable
/// address C borrows (a client link's request and the rest of its chain,
/// which live as long as the link's call), freed when the holder drops it.
///
/// A raw pointer rather than a `Box`: C and the holder both reach the
/// object, and moving a `Box` would claim sole access to it.
pub(crate) struct Lent<C: Castable<Ownership = OwnershipRef>>(std::ptr::NonNull<C>);

impl<C: Castable<Ownership = OwnershipRef>> Lent<C> {
    pub(crate) fn new(value: C) -> Lent<C> {
        Lent(std::ptr::NonNull::from(Box::leak(Box::new(value))))
    }

    /// The address C borrows, valid while `self` lives.
    pub(crate) fn as_ptr(&self) -> *mut C {
        self.0.as_ptr()
    }
}

impl<C: Castable<Ownership = OwnershipRef>> Drop for Lent<C> {
    fn drop(&mut self) {
        // SAFETY: leaked by `new`, freed once here; C's borrow ends when
        // the holder goes, per the lending function's contract.
        drop(unsafe { Box::from_raw(self.0.as_ptr()) });
    }
}

// SAFETY: a `Lent` owns its object as a `Box` would; C reaches it only as
// the object's own contract allows.
unsafe impl<C: Castable<Ownership = OwnershipRef> + Send> Send for Lent<C> {}
// SAFETY: as above.
unsafe impl<C: Castable<Ownership = OwnershipRef> + Sync> Sync for Lent<C> {}

/// Borrows the object behind a pointer C passed in; NULL is an error that
/// names the argument.
///
/// # Safety
/// `ptr` is NULL or points to a live object that stays alive, and is not
/// changed by anyone else, for `'a`.
pub(crate) unsafe fn try_from<'a, C: Castable>(
    ptr: *const C,
    name: &str,
) -> Result<&'a C, FfiError> {
    // SAFETY: per the contract.
    unsafe { ptr.as_ref() }.ok_or_else(|| FfiError::null(name))
}

/// [`try_from`] for a function that changes the object.
///
/// # Safety
/// As [`try_from`], and nobody else uses the object for `'a`.
pub(crate) unsafe fn try_from_mut<'a, C: Castable>(
    ptr: *mut C,
    name: &str,
) -> Result<&'a mut C, FfiError> {
    // SAFETY: per the contract.
    unsafe { ptr.as_mut() }.ok_or_else(|| FfiError::null(name))
}

/// Hands `text` to C through an output parameter; C frees it with
/// ferromcp_string_free().
///
/// `out` must have been checked with `check_out` (not NULL) and be
/// writable, as the exported function's contract says.
pub(crate) fn give_string(text: String, out: *mut *mut c_char) -> Result<(), FfiError> {
    let text = CString::new(text).map_err(|_| {
        FfiError::new(
            ferromcp_status::FERROMCP_INTERNAL,
            "the text contains a NUL character",
        )
    })?;
    // SAFETY: checked non-NULL by the caller; writable per the contract.
    unsafe { out.write(text.into_raw()) };
    Ok(())
}

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

/// Copies `text` into a new string allocated by ferromcp: for handing
/// ferromcp a string it takes over and frees (the replacement params of a
/// ferromcp_notification_middleware_callback or
/// ferromcp_client_notification_middleware_callback), as memory is freed
/// only by the side that allocated it. Free one that is not handed over
/// with ferromcp_string_free(); do not change its length.
///
/// - `text`: NUL-terminated UTF-8, borrowed.
/// - `out_text`: receives the copy.
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT, FERROMCP_INVALID_UTF8.
///
/// Threads: any thread, also a ferromcp runtime thread (it never blocks).
///
/// ```c
/// char *copy = NULL;
/// if (ferromcp_string_new("{\"message\":\"hi\"}", &copy) == FERROMCP_OK) {
///     ...
///     ferromcp_string_free(copy);
/// }
/// ```
///
/// # Safety
/// `text` NULL or NUL-terminated; `out_text` NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_string_new(
    text: *const c_char,
    out_text: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        crate::args::check_out(out_text, "out_text")?;
        // SAFETY: forwarded contract.
        let text = unsafe { crate::args::required_str(text, "text") }?;
        give_string(text.to_owned(), out_text)
    })
}

/// Hands bytes to C through `out_data`/`out_len`; C frees them with
/// ferromcp_bytes_free() (an empty result is a non-NULL pointer of
/// length 0, which ferromcp_bytes_free() takes as well).
///
/// Both outputs must have been checked with `check_out` (not NULL) and be
/// writable, as the exported function's contract says.
pub(crate) fn give_bytes(bytes: Vec<u8>, out_data: *mut *mut u8, out_len: *mut usize) {
    let bytes = bytes.into_boxed_slice();
    let len = bytes.len();
    let data = Box::into_raw(bytes).cast::<u8>();
    // SAFETY: checked non-NULL by the caller; writable per the contract.
    unsafe {
        out_data.write(data);
        out_len.write(len);
    }
}

/// Frees bytes ferromcp returned through an output pointer and length
/// (documented as "free them with ferromcp_bytes_free()").
///
/// - `data`: such bytes, or NULL (then nothing happens). Invalid after the
///   call.
/// - `len`: the length returned with them.
///
/// Returns nothing: it cannot fail.
///
/// Threads: any thread.
///
/// ```c
/// uint8_t *data = NULL; size_t len = 0;
/// if (ferromcp_skill_read(skill, "scripts/tag.sh", &data, &len) == FERROMCP_OK) {
///     fwrite(data, 1, len, stdout);
///     ferromcp_bytes_free(data, len);
/// }
/// ```
///
/// # Safety
/// `data` is NULL or bytes from ferromcp not freed yet, with their `len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_bytes_free(data: *mut u8, len: usize) {
    let _ = ffi_boundary(|| {
        if !data.is_null() {
            // SAFETY: allocated as a boxed slice of `len` bytes by `give_bytes`.
            drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(data, len)) });
        }
        Ok(())
    });
}

/// Releases a tool's userdata. Called exactly once, with the tool's
/// `userdata`, when ferromcp drops the tool: when a later tool with the same
/// name replaces it, or when the server is freed and no request that uses
/// it is still running. It may run on any thread, including after
/// ferromcp_server_free() returned; it must not block for long and must not
/// call back into ferromcp.
pub type ferromcp_userdata_free = Option<unsafe extern "C" fn(userdata: *mut c_void)>;

/// A `userdata` pointer from C and its finalizer, called once when the
/// holder drops it (unless [`Userdata::release`] gave it back first).
/// ferromcp never dereferences the pointer; it only passes it back to the
/// callbacks registered with it.
pub(crate) struct Userdata {
    pointer: *mut c_void,
    finalizer: ferromcp_userdata_free,
    /// Cleared when a registration fails: the caller then still owns the
    /// userdata and must not see the finalizer run.
    owned: AtomicBool,
}

// SAFETY: the header requires userdata and finalizers to be usable from any
// thread; ferromcp never dereferences the pointer. Whether the callbacks
// given it may run concurrently is each registration's documented contract.
unsafe impl Send for Userdata {}
// SAFETY: as above.
unsafe impl Sync for Userdata {}

impl Userdata {
    pub(crate) fn new(pointer: *mut c_void, finalizer: ferromcp_userdata_free) -> Userdata {
        Userdata {
            pointer,
            finalizer,
            owned: AtomicBool::new(true),
        }
    }

    /// The pointer, to pass to a callback.
    pub(crate) fn get(&self) -> *mut c_void {
        self.pointer
    }

    /// Gives the userdata back to the caller (a registration failed): the
    /// finalizer will not run.
    pub(crate) fn release(&self) {
        self.owned.store(false, Ordering::Release);
    }
}

/// Takes over a callback C registers together with its `userdata`: a NULL
/// `callback` is FERROMCP_NULL_ARGUMENT, and then the userdata stays the
/// caller's (its finalizer does not run), as every registering function
/// documents.
pub(crate) fn take_callback<F>(
    callback: Option<F>,
    userdata: *mut c_void,
    finalizer: ferromcp_userdata_free,
) -> Result<(F, Userdata), FfiError> {
    let callback = callback.ok_or_else(|| FfiError::null("callback"))?;
    Ok((callback, Userdata::new(userdata, finalizer)))
}

impl Drop for Userdata {
    fn drop(&mut self) {
        if let Some(finalizer) = self.finalizer
            && self.owned.load(Ordering::Acquire)
        {
            // SAFETY: the finalizer contract: called once, with the
            // userdata it was registered with. Drop runs once.
            unsafe { finalizer(self.pointer) }
        }
    }
}
