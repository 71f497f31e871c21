//! `ferromcp_skill`: core's [`LoadedSkill`] for C, a skill (the skills
//! extension, SEP-2640) whose `SKILL.md` core read and checked against its
//! entry (digest, size, frontmatter); its other files are read one at a
//! time, each checked too. Listing skills is ferromcp_client_list() with
//! FERROMCP_LIST_SKILLS; one entry is ferromcp_client_request() of
//! `"skills/get"`.

use std::ffi::{CString, c_char};

use ferromcp_core::client::LoadedSkill;
use serde_json::Value;

use crate::args::{check_out, required_str};
use crate::client::ferromcp_client;
use crate::error::{FfiError, ferromcp_status};
use crate::ffi::{
    Castable, OwnershipBox, free_box, give_bytes, give_string, set_boxed_mut_ptr, try_from,
};
use crate::panic::ffi_boundary;
use crate::threads::block;

/// A loaded skill.
///
/// Opaque. Created by ferromcp_client_load_skill(), freed by
/// ferromcp_skill_free(). Its functions may be called from several threads
/// at once; it keeps its client's connection in use until freed.
pub struct ferromcp_skill {
    loaded: LoadedSkill,
    /// `loaded.skill_md` for C, borrowed by ferromcp_skill_md().
    skill_md: CString,
}

impl Castable for ferromcp_skill {
    type Ownership = OwnershipBox;
}

/// Loads a skill: reads its `SKILL.md` and checks it against the skill's
/// entry (digest and size when the entry lists files, and the
/// frontmatter); a mismatch is an error and nothing is returned.
///
/// - `client`: a connected client.
/// - `skill`: the skill's `SKILL.md` URI (then `skills/get` fetches its
///   entry first), or its entry as JSON object text, as `skills/list`
///   gave it (no extra request), borrowed.
/// - `out_skill`: receives the skill; free it with ferromcp_skill_free().
///   Written only on FERROMCP_OK.
///
/// Returns FERROMCP_OK; FERROMCP_PROTOCOL_ERROR when the content does not
/// match the entry (the message names the file and why); FERROMCP_PEER_ERROR
/// (e.g. an unknown skill, or a malformed entry: -32602); otherwise as
/// ferromcp_client_discover().
///
/// Threads: any thread that may block.
///
/// ```c
/// ferromcp_skill *skill = NULL;
/// if (ferromcp_client_load_skill(client, "skill://git-workflow/SKILL.md", &skill) == FERROMCP_OK) {
///     puts(ferromcp_skill_md(skill));
///     ferromcp_skill_free(skill);
/// }
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_client_load_skill(
    client: *const ferromcp_client,
    skill: *const c_char,
    out_skill: *mut *mut ferromcp_skill,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let client = unsafe { try_from(client, "client") }?.client.clone();
        let skill = unsafe { required_str(skill, "skill") }?;
        check_out(out_skill, "out_skill")?;
        // A URI never starts with `{`: an object is the entry itself.
        let skill = if skill.trim_start().starts_with('{') {
            serde_json::from_str(skill).map_err(|e| {
                FfiError::new(
                    ferromcp_status::FERROMCP_INVALID_JSON,
                    format!("`skill`: {e}"),
                )
            })?
        } else {
            Value::from(skill)
        };
        let loaded = block(async move { client.load_skill_value(skill).await })?;
        let skill_md = CString::new(loaded.skill_md.clone()).map_err(|_| {
            FfiError::new(
                ferromcp_status::FERROMCP_PROTOCOL_ERROR,
                "SKILL.md contains a NUL character",
            )
        })?;
        // SAFETY: checked non-NULL; writable per the contract.
        unsafe { set_boxed_mut_ptr(out_skill, ferromcp_skill { loaded, skill_md }) };
        Ok(())
    })
}

/// The skill's `SKILL.md` text, frontmatter included, as checked.
/// Borrowed: valid until ferromcp_skill_free(); NULL for a NULL `skill`.
///
/// Threads: any thread.
///
/// ```c
/// printf("%s\n", ferromcp_skill_md(skill));
/// ```
///
/// # Safety
/// `skill` NULL or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_skill_md(skill: *const ferromcp_skill) -> *const c_char {
    // SAFETY: forwarded contract.
    unsafe { skill.as_ref() }.map_or(std::ptr::null(), |s| s.skill_md.as_ptr())
}

/// The entry the skill was loaded from (`uri`, `frontmatter`,
/// `resources`), as JSON text.
///
/// - `skill`: a live skill.
/// - `out_entry_json`: receives it; free it with ferromcp_string_free().
///
/// Returns FERROMCP_OK; FERROMCP_NULL_ARGUMENT.
///
/// Threads: any thread.
///
/// ```c
/// char *entry = NULL, *name = NULL;
/// ferromcp_skill_entry(skill, &entry);
/// ferromcp_json_get(entry, "/frontmatter/name", &name);
/// ferromcp_string_free(name);
/// ferromcp_string_free(entry);
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_skill_entry(
    skill: *const ferromcp_skill,
    out_entry_json: *mut *mut c_char,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY: forwarded contract.
        let skill = unsafe { try_from(skill, "skill") }?;
        check_out(out_entry_json, "out_entry_json")?;
        let text = serde_json::to_string(&skill.loaded.skill).map_err(|e| {
            FfiError::new(ferromcp_status::FERROMCP_INTERNAL, format!("entry: {e}"))
        })?;
        give_string(text, out_entry_json)
    })
}

/// Reads one file of the skill, checked against the entry's digest and
/// size; a file the entry does not list is refused without a request.
///
/// - `skill`: a live skill.
/// - `file`: the file's path inside the skill (`"references/FORMS.md"`) or
///   its URI, borrowed.
/// - `out_data`, `out_len`: receive the file's bytes; free them with
///   ferromcp_bytes_free(). Written only on FERROMCP_OK.
///
/// Returns FERROMCP_OK; FERROMCP_PROTOCOL_ERROR for a file the entry does
/// not list or whose content does not match it; otherwise as
/// ferromcp_client_discover().
///
/// Threads: any thread that may block.
///
/// ```c
/// uint8_t *data = NULL; size_t len = 0;
/// if (ferromcp_skill_read(skill, "references/HOOKS.md", &data, &len) == FERROMCP_OK) {
///     fwrite(data, 1, len, stdout);
///     ferromcp_bytes_free(data, len);
/// }
/// ```
///
/// # Safety
/// Pointers NULL or valid as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_skill_read(
    skill: *const ferromcp_skill,
    file: *const c_char,
    out_data: *mut *mut u8,
    out_len: *mut usize,
) -> ferromcp_status {
    ffi_boundary(|| {
        // SAFETY (both): forwarded contract.
        let loaded = unsafe { try_from(skill, "skill") }?.loaded.clone();
        let file = unsafe { required_str(file, "file") }?.to_owned();
        check_out(out_data, "out_data")?;
        check_out(out_len, "out_len")?;
        let bytes = block(async move { loaded.read(&file).await })?;
        give_bytes(bytes, out_data, out_len);
        Ok(())
    })
}

/// Frees a skill.
///
/// - `skill`: from ferromcp_client_load_skill(), or NULL. No call may
///   still be using it; pointers from ferromcp_skill_md() end with it.
///
/// Threads: any thread.
///
/// # Safety
/// `skill` NULL or live and not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ferromcp_skill_free(skill: *mut ferromcp_skill) {
    // SAFETY: NULL or allocated by ferromcp_client_load_skill(); freed
    // once per the contract.
    unsafe { free_box(skill) }
}
