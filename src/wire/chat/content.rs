//! Parts of a message's `content` array in the OpenAI chat format, built as
//! cJSON trees (the context holds them; the request writers print them).

use crate::cjson::json;
use crate::cjson::sys::*;
use core::ffi::c_char;
use core::ptr;

/// A text part, `{"text": text, "type": "text"}`; `RT_NULL` for NULL text
/// or no memory. Copies `text`; the caller owns the part.
///
/// # Safety
/// `text` is NULL or NUL-terminated.
pub unsafe fn text_part(text: *const c_char) -> *mut cJSON {
    // SAFETY: `text` is NULL or NUL-terminated; the new object is deleted on
    // any failure.
    unsafe {
        if text.is_null() {
            return ptr::null_mut();
        }
        let obj = cJSON_CreateObject();
        if obj.is_null()
            || json::add_to_object(obj, c"text", cJSON_CreateString(text)).is_err()
            || json::add_to_object(obj, c"type", cJSON_CreateString(c"text".as_ptr())).is_err()
        {
            cJSON_Delete(obj);
            return ptr::null_mut();
        }
        obj
    }
}
