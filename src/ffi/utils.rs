//! `utils.h`: printing helpers. The exports; the code is [`crate::runtime::utils`].

use crate::abi::messages::Messages_t;
use crate::cjson::sys::*;
use crate::ffi_fn;
use core::ffi::c_char;
use core::ptr;

/// C export of [`crate::runtime::utils::format_text`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn format_text(text: *const c_char) -> *mut cJSON {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::utils::format_text(text) }
    })
}

/// C export of [`crate::runtime::utils::create_content_array`], with its contract.
#[no_mangle]
pub extern "C" fn create_content_array() -> *mut cJSON {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::runtime::utils::create_content_array()
    })
}

/// C export of [`crate::runtime::utils::to_content`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn to_content(messages: Messages_t) -> *mut cJSON {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::utils::to_content(messages) }
    })
}

/// C export of [`crate::runtime::utils::print_reasoning`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn print_reasoning(text: *const c_char) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::utils::print_reasoning(text) }
    })
}

/// C export of [`crate::runtime::utils::print_tool_call`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn print_tool_call(text: *const c_char) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::utils::print_tool_call(text) }
    })
}

/// C export of [`crate::runtime::utils::print_context`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn print_context(text: *const c_char) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::utils::print_context(text) }
    })
}

/// C export of [`crate::runtime::utils::create_tool_item`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn create_tool_item(
    func_name: *const c_char,
    desc: *const c_char,
    params_obj: *mut cJSON,
) -> *mut cJSON {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::utils::create_tool_item(func_name, desc, params_obj) }
    })
}

/// C export of [`crate::runtime::utils::create_param_obj`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn create_param_obj(
    props_obj: *mut cJSON,
    required_arr: *mut cJSON,
) -> *mut cJSON {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::utils::create_param_obj(props_obj, required_arr) }
    })
}

/// C export of [`crate::runtime::utils::create_property`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn create_property(
    props_obj: *mut cJSON,
    name: *const c_char,
    type_: *const c_char,
    desc: *const c_char,
) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::utils::create_property(props_obj, name, type_, desc) }
    })
}
