//! Small helpers over the raw cJSON declarations. They keep the ownership
//! rules of cJSON in one place: an item handed to an `add_*` helper is owned
//! by the container on success and deleted on failure, so callers never leak
//! and never double-free.

use crate::cjson::sys::*;
use core::ffi::{c_char, CStr};
use core::ptr;

/// A cJSON tree owned here, deleted when dropped (NULL: nothing owned).
pub struct Json(*mut cJSON);

impl Json {
    /// Own `tree`.
    ///
    /// # Safety
    /// `tree` is NULL or a detached tree that nobody else deletes.
    pub unsafe fn from_raw(tree: *mut cJSON) -> Json {
        Json(tree)
    }

    /// The tree, borrowed (NULL when nothing is owned).
    pub fn as_ptr(&self) -> *mut cJSON {
        self.0
    }

    pub fn is_null(&self) -> bool {
        self.0.is_null()
    }
}

impl Drop for Json {
    fn drop(&mut self) {
        // SAFETY: NULL or the tree owned here (`from_raw`'s contract),
        // deleted once.
        unsafe { cJSON_Delete(self.0) };
    }
}

/// Attach `item` to `object` under `key`.
///
/// Takes ownership of `item` in every case: on failure (NULL object or item,
/// or cJSON could not copy the key) the item is deleted and `Err` returned.
///
/// # Safety
/// `object` is NULL or a live cJSON object; `item` is NULL or a detached item.
// There is one failure to report and nothing to say about it: `()` is the error.
#[allow(clippy::result_unit_err)]
pub unsafe fn add_to_object(object: *mut cJSON, key: &CStr, item: *mut cJSON) -> Result<(), ()> {
    if item.is_null() {
        return Err(());
    }
    if object.is_null() {
        // SAFETY: `item` is non-NULL and detached (caller's contract), so we own it.
        unsafe { cJSON_Delete(item) };
        return Err(());
    }
    // SAFETY: `object` is a live object and `item` a detached item (both non-NULL,
    // caller's contract); `key` is NUL-terminated and cJSON copies it.
    unsafe { cJSON_AddItemToObject(object, key.as_ptr(), item) };
    // cJSON copies the key into item->string only when it attached the item.
    // SAFETY: `item` is still live: either now owned by `object` or still ours.
    if unsafe { (*item).string.is_null() } {
        // SAFETY: with no key copied cJSON did not attach `item`, so it is still ours.
        unsafe { cJSON_Delete(item) };
        return Err(());
    }
    Ok(())
}

/// Append `item` to `array`; ownership as in [`add_to_object`].
///
/// # Safety
/// `array` is NULL or a live cJSON array; `item` is NULL or a detached item.
#[allow(clippy::result_unit_err)] // as for `add_to_object`
pub unsafe fn add_to_array(array: *mut cJSON, item: *mut cJSON) -> Result<(), ()> {
    if item.is_null() {
        return Err(());
    }
    if array.is_null() || array == item {
        // SAFETY: `item` is non-NULL and detached (caller's contract), so we own it.
        unsafe { cJSON_Delete(item) };
        return Err(());
    }
    // SAFETY: `array` is a live array and `item` a distinct detached item (checked
    // above and caller's contract); the array takes ownership.
    unsafe { cJSON_AddItemToArray(array, item) };
    Ok(())
}

/// `object[key]` as a C string when it is a JSON string.
///
/// # Safety
/// `object` is NULL or a live cJSON item.
pub unsafe fn get_str<'a>(object: *const cJSON, key: &CStr) -> Option<&'a CStr> {
    // SAFETY: `object` is NULL or live (caller's contract), as `get` requires.
    let item = unsafe { get(object, key) };
    // SAFETY: `item` is NULL or a child of the live `object`, which the caller
    // keeps alive for `'a`.
    unsafe { string_value(item) }
}

/// `object[key]`, or NULL.
///
/// # Safety
/// `object` is NULL or a live cJSON item.
pub unsafe fn get(object: *const cJSON, key: &CStr) -> *mut cJSON {
    // SAFETY: `object` is non-NULL here (short-circuit) and live (caller's contract).
    if object.is_null() || unsafe { (*object).type_ } & 0xFF != cJSON_Object {
        return ptr::null_mut();
    }
    // SAFETY: `object` is a live cJSON object and `key` is NUL-terminated.
    unsafe { cJSON_GetObjectItemCaseSensitive(object, key.as_ptr()) }
}

/// The string of a JSON string item.
///
/// # Safety
/// `item` is NULL or a live cJSON item that outlives `'a`.
pub unsafe fn string_value<'a>(item: *const cJSON) -> Option<&'a CStr> {
    if item.is_null() {
        return None;
    }
    // SAFETY: `item` is non-NULL and live (caller's contract).
    let (type_, valuestring) = unsafe { ((*item).type_, (*item).valuestring) };
    if type_ & 0xFF != cJSON_String || valuestring.is_null() {
        return None;
    }
    // SAFETY: a cJSON string item's `valuestring` is a NUL-terminated buffer owned
    // by the item, which the caller keeps alive and unmodified for `'a`.
    Some(unsafe { CStr::from_ptr(valuestring) })
}

/// A new JSON string from a C string (NULL if `s` is NULL or on no memory).
///
/// # Safety
/// `s` is NULL or NUL-terminated.
pub unsafe fn new_string(s: *const c_char) -> *mut cJSON {
    if s.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: `s` is non-NULL and NUL-terminated (caller's contract); cJSON copies it.
    unsafe { cJSON_CreateString(s) }
}

/// Is this a cJSON array?
///
/// # Safety
/// `item` is NULL or a live cJSON item.
pub unsafe fn is_array(item: *const cJSON) -> bool {
    // SAFETY: `item` is non-NULL here (short-circuit) and live (caller's contract).
    !item.is_null() && unsafe { (*item).type_ } & 0xFF == cJSON_Array
}

/// Iterate over the children of an array or object.
///
/// # Safety
/// The container stays alive and unmodified while the iterator is used.
pub unsafe fn children(container: *const cJSON) -> Children {
    Children {
        next: if container.is_null() {
            ptr::null_mut()
        } else {
            // SAFETY: `container` is non-NULL and live (caller's contract).
            unsafe { (*container).child }
        },
    }
}

pub struct Children {
    next: *mut cJSON,
}

impl Iterator for Children {
    type Item = *mut cJSON;
    fn next(&mut self) -> Option<*mut cJSON> {
        if self.next.is_null() {
            return None;
        }
        let cur = self.next;
        // SAFETY: the container's contract (see `children`) keeps `cur` alive.
        self.next = unsafe { (*cur).next };
        Some(cur)
    }
}

/// Link the detached `item` in at `index` (cJSON 1.7.x has no insert that
/// reports failure; linking needs no memory).
///
/// # Safety
/// `array` is live, `index` at most its size, `item` detached and taken over.
pub unsafe fn insert_at(array: *mut cJSON, index: core::ffi::c_int, item: *mut cJSON) {
    // SAFETY: cJSON's list: `child` first, each `prev`/`next`, and the first
    // element's `prev` the last one; relinked here as cJSON does.
    unsafe {
        let first = (*array).child;
        if first.is_null() {
            (*item).prev = item;
            (*item).next = core::ptr::null_mut();
            (*array).child = item;
            return;
        }
        if index <= 0 {
            (*item).next = first;
            (*item).prev = (*first).prev;
            (*first).prev = item;
            (*array).child = item;
            return;
        }
        let mut before = first;
        for _ in 1..index {
            if (*before).next.is_null() {
                break;
            }
            before = (*before).next;
        }
        let after = (*before).next;
        (*item).prev = before;
        (*item).next = after;
        (*before).next = item;
        if after.is_null() {
            (*first).prev = item;
        } else {
            (*after).prev = item;
        }
    }
}
