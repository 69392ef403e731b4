//! `utils.h`: JSON builders for tool definitions and message content, and the
//! print hooks the loop hands to `chat()`.
//!
//! Ownership: every builder returns a new tree owned by the caller, and takes
//! ownership of the trees passed to it, deleting them if it fails. Code
//! written as in the tool guide ignores failures, so this is what keeps a
//! failed registration from leaking.

use crate::abi::messages::{messages_get_content_idx, Messages_t};
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::ffi_fn;
use core::ffi::{c_char, CStr};
use core::ptr;

/// Delete every non-NULL tree in `trees` (a builder's failure path).
///
/// # Safety
/// Each pointer is NULL or a detached tree owned by the caller.
unsafe fn delete_all(trees: &[*mut cJSON]) {
    for &t in trees {
        if !t.is_null() {
            // SAFETY: `t` is non-NULL, so by this function's contract a
            // detached tree the caller owns and hands over here.
            unsafe { cJSON_Delete(t) };
        }
    }
}

/// `{"text": text, "type": "text"}`; `RT_NULL` for NULL text or no memory.
pub unsafe fn format_text(text: *const c_char) -> *mut cJSON {
    // SAFETY: the caller's contract is the one `text_part` needs.
    unsafe { crate::wire::chat::content::text_part(text) }
}

/// A new empty JSON array (`[]`), owned by the caller.
pub fn create_content_array() -> *mut cJSON {
    // SAFETY: a constructor without arguments; NULL without memory.
    unsafe { cJSON_CreateArray() }
}

/// The `content` of a user or tool message built from `messages`: a JSON
/// string holding the first message's text. `RT_NULL` when there is none.
/// With multimodal messages on (`PKG_AGENT_MULTIMODAL_ENABLE`), an array
/// with one part per item: `{"type":"text","text":...}`, or for an
/// audio/image/video item (a file path) `{"type":"image_url","image_url":
/// {"url":...}}` (`audio_url`, `video_url`), the file uploaded or sent
/// inline (see `src/abilities/multimodal/`); `RT_NULL` (the reason logged) when
/// a file cannot be sent or there is no item. Borrows `messages`; the result
/// is owned by the caller.
pub unsafe fn to_content(messages: Messages_t) -> *mut cJSON {
    // SAFETY: `messages` is NULL or a live set, borrowed (this export's
    // contract, which the hook shares).
    if let Some(content) = unsafe { super::ability::content(messages, false) } {
        return content;
    }
    // SAFETY: our contract is text_content's.
    unsafe { text_content(messages) }
}

/// The first item's text as a JSON string (`to_content` without
/// multimodal); NULL when there is none.
///
/// # Safety
/// `messages` is NULL or a live `Messages_t`, borrowed.
unsafe fn text_content(messages: Messages_t) -> *mut cJSON {
    // SAFETY: `messages` is NULL or a live `Messages_t` (contract), which
    // `messages_get_content_idx` accepts; it is borrowed.
    let text = unsafe { messages_get_content_idx(messages, 0) };
    // SAFETY: a live message's content is NUL-terminated.
    unsafe { json::new_string(text) }
}

/// The content the agent's context records for `messages`: `to_content`'s,
/// except that with multimodal on a message of one text item (every tool
/// result, most user messages) stays a plain string, which every provider
/// accepts (some refuse content arrays); parts are sent only when a file or
/// several items need them.
///
/// # Safety
/// `messages` is NULL or a live `Messages_t`, borrowed.
pub(crate) unsafe fn context_content(messages: Messages_t) -> *mut cJSON {
    // SAFETY: `messages` is NULL or live (contract), borrowed.
    if let Some(content) = unsafe { super::ability::content(messages, true) } {
        return content;
    }
    // SAFETY: our contract is text_content's.
    unsafe { text_content(messages) }
}

/// Log a reasoning fragment (the loop's `on_reasoning` hook).
pub unsafe extern "C" fn print_reasoning(text: *const c_char) {
    ffi_fn!(failure = (), {
        // SAFETY: NULL or NUL-terminated.
        if let Some(t) = unsafe { crate::base::text::cstr_arg(text) } {
            crate::log_d!("[reasoning] ", t);
        }
    })
}

/// Log a complete tool call (the loop's `on_tool_call` hook).
pub unsafe extern "C" fn print_tool_call(text: *const c_char) {
    ffi_fn!(failure = (), {
        // SAFETY: NULL or NUL-terminated.
        if let Some(t) = unsafe { crate::base::text::cstr_arg(text) } {
            crate::log_i!("[tool_call] ", t);
        }
    })
}

/// Print an answer fragment as is on the console (the loop's `on_context`
/// hook).
pub unsafe extern "C" fn print_context(text: *const c_char) {
    ffi_fn!(failure = (), {
        // SAFETY: NULL or NUL-terminated.
        if let Some(t) = unsafe { crate::base::text::cstr_arg(text) } {
            crate::rtt::log::console_print(t.to_bytes());
        }
    })
}

/// `{"type": "function", "function": {"name", "description", "parameters":
/// params_obj}}`. Takes ownership of `params_obj` (deleted on failure);
/// `RT_NULL` for a NULL name or on no memory. A NULL description is sent as
/// `""`; a NULL `params_obj` leaves out `parameters`.
pub unsafe fn create_tool_item(
    func_name: *const c_char,
    desc: *const c_char,
    params_obj: *mut cJSON,
) -> *mut cJSON {
    // SAFETY: string arguments are NULL or NUL-terminated; `params_obj` is
    // a detached tree handed over by the caller.
    unsafe {
        if func_name.is_null() {
            delete_all(&[params_obj]);
            return ptr::null_mut();
        }
        let desc = if desc.is_null() { c"".as_ptr() } else { desc };
        let item = cJSON_CreateObject();
        let function = cJSON_CreateObject();
        if item.is_null() || function.is_null() {
            delete_all(&[item, function, params_obj]);
            return ptr::null_mut();
        }
        if json::add_to_object(item, c"type", cJSON_CreateString(c"function".as_ptr())).is_err()
            || json::add_to_object(function, c"name", cJSON_CreateString(func_name)).is_err()
            || json::add_to_object(function, c"description", cJSON_CreateString(desc)).is_err()
        {
            delete_all(&[item, function, params_obj]);
            return ptr::null_mut();
        }
        if !params_obj.is_null()
            && json::add_to_object(function, c"parameters", params_obj).is_err()
        {
            delete_all(&[item, function]);
            return ptr::null_mut();
        }
        if json::add_to_object(item, c"function", function).is_err() {
            delete_all(&[item]);
            return ptr::null_mut();
        }
        item
    }
}

/// `{"type": "object", "properties": props_obj, "required": required_arr}`.
/// Takes ownership of both (deleted on failure). A NULL `props_obj` fails; a
/// NULL `required_arr` leaves out `required`.
pub unsafe fn create_param_obj(props_obj: *mut cJSON, required_arr: *mut cJSON) -> *mut cJSON {
    // SAFETY: both arguments are NULL or detached trees handed over.
    unsafe {
        if props_obj.is_null() {
            delete_all(&[required_arr]);
            return ptr::null_mut();
        }
        let obj = cJSON_CreateObject();
        if obj.is_null()
            || json::add_to_object(obj, c"type", cJSON_CreateString(c"object".as_ptr())).is_err()
        {
            delete_all(&[obj, props_obj, required_arr]);
            return ptr::null_mut();
        }
        if json::add_to_object(obj, c"properties", props_obj).is_err() {
            delete_all(&[obj, required_arr]);
            return ptr::null_mut();
        }
        if !required_arr.is_null() && json::add_to_object(obj, c"required", required_arr).is_err() {
            delete_all(&[obj]);
            return ptr::null_mut();
        }
        obj
    }
}

/// `props_obj[name] = {"type": type, "description": desc}`. Borrows every
/// argument; does nothing when `props_obj`, `name` or `type` is NULL or memory
/// runs out. A NULL description is sent as `""`.
pub unsafe fn create_property(
    props_obj: *mut cJSON,
    name: *const c_char,
    type_: *const c_char,
    desc: *const c_char,
) {
    // SAFETY: strings are NULL or NUL-terminated; `props_obj` is NULL or a
    // live object.
    unsafe {
        if props_obj.is_null() || name.is_null() || type_.is_null() {
            return;
        }
        let desc = if desc.is_null() { c"".as_ptr() } else { desc };
        let prop = cJSON_CreateObject();
        if prop.is_null()
            || json::add_to_object(prop, c"type", cJSON_CreateString(type_)).is_err()
            || json::add_to_object(prop, c"description", cJSON_CreateString(desc)).is_err()
        {
            delete_all(&[prop]);
            return;
        }
        let _ = json::add_to_object(props_obj, CStr::from_ptr(name), prop);
    }
}
