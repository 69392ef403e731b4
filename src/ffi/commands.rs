//! The msh commands `agent_config` and `agent_status`. The exports; the code is [`crate::runtime::commands`].

use crate::ffi_fn;
use core::ffi::{c_char, c_int};

/// C export of [`crate::runtime::commands::agent_config`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn agent_config(argc: c_int, argv: *mut *mut c_char) -> c_int {
    ffi_fn!(failure = -1, {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::commands::agent_config(argc, argv) }
    })
}

/// C export of [`crate::runtime::commands::agent_status`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn agent_status(_argc: c_int, _argv: *mut *mut c_char) -> c_int {
    ffi_fn!(failure = -1, {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::commands::agent_status(_argc, _argv) }
    })
}
