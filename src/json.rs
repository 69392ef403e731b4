//! Small helpers over the raw cJSON declarations. They keep the ownership
//! rules of cJSON in one place: an item handed to an `add_*` helper is owned
//! by the container on success and deleted on failure, so callers never leak
//! and never double-free.

use crate::cjson_sys::*;
use core::ffi::{c_char, CStr};
use core::ptr;

/// Attach `item` to `object` under `key`.
///
/// Takes ownership of `item` in every case: on failure (NULL object or item,
/// or cJSON could not copy the key) the item is deleted and `Err` returned.
///
/// # Safety
/// `object` is NULL or a live cJSON object; `item` is NULL or a detached item.
pub unsafe fn add_to_object(object: *mut cJSON, key: &CStr, item: *mut cJSON) -> Result<(), ()> {
    if item.is_null() {
        return Err(());
    }
    if object.is_null() {
        cJSON_Delete(item);
        return Err(());
    }
    cJSON_AddItemToObject(object, key.as_ptr(), item);
    // cJSON copies the key into item->string only when it attached the item.
    if (*item).string.is_null() {
        cJSON_Delete(item);
        return Err(());
    }
    Ok(())
}

/// Append `item` to `array`; ownership as in [`add_to_object`].
///
/// # Safety
/// `array` is NULL or a live cJSON array; `item` is NULL or a detached item.
pub unsafe fn add_to_array(array: *mut cJSON, item: *mut cJSON) -> Result<(), ()> {
    if item.is_null() {
        return Err(());
    }
    if array.is_null() || array == item {
        cJSON_Delete(item);
        return Err(());
    }
    cJSON_AddItemToArray(array, item);
    Ok(())
}

/// `object[key]` as a C string when it is a JSON string.
///
/// # Safety
/// `object` is NULL or a live cJSON item.
pub unsafe fn get_str<'a>(object: *const cJSON, key: &CStr) -> Option<&'a CStr> {
    let item = get(object, key);
    string_value(item)
}

/// `object[key]`, or NULL.
///
/// # Safety
/// `object` is NULL or a live cJSON item.
pub unsafe fn get(object: *const cJSON, key: &CStr) -> *mut cJSON {
    if object.is_null() || (*object).type_ & 0xFF != cJSON_Object {
        return ptr::null_mut();
    }
    cJSON_GetObjectItemCaseSensitive(object, key.as_ptr())
}

/// The string of a JSON string item.
///
/// # Safety
/// `item` is NULL or a live cJSON item that outlives `'a`.
pub unsafe fn string_value<'a>(item: *const cJSON) -> Option<&'a CStr> {
    if item.is_null() || (*item).type_ & 0xFF != cJSON_String || (*item).valuestring.is_null() {
        return None;
    }
    Some(CStr::from_ptr((*item).valuestring))
}

/// A new JSON string from a C string (NULL if `s` is NULL or on no memory).
///
/// # Safety
/// `s` is NULL or NUL-terminated.
pub unsafe fn new_string(s: *const c_char) -> *mut cJSON {
    if s.is_null() {
        return ptr::null_mut();
    }
    cJSON_CreateString(s)
}

/// Is this a cJSON array?
///
/// # Safety
/// `item` is NULL or a live cJSON item.
pub unsafe fn is_array(item: *const cJSON) -> bool {
    !item.is_null() && (*item).type_ & 0xFF == cJSON_Array
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
            (*container).child
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
