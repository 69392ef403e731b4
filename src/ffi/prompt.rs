//! The system prompt. The exports; the code is [`crate::runtime::prompt`].

use crate::ffi_fn;
use crate::runtime::prompt::RoleType;
use core::ffi::c_char;
use core::ptr;

/// C export of [`crate::runtime::prompt::get_role_string`], with its contract.
#[no_mangle]
pub extern "C" fn get_role_string(role: RoleType) -> *mut c_char {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::runtime::prompt::get_role_string(role)
    })
}

/// C export of [`crate::runtime::prompt::get_system_prompt`], with its contract.
#[no_mangle]
pub extern "C" fn get_system_prompt() -> *mut c_char {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::runtime::prompt::get_system_prompt()
    })
}
