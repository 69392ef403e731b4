//! `utils.h`'s multimodal half: the exports; the code is [`crate::abilities::multimodal`].

use crate::ffi_fn;
use crate::rtt::*;
use core::ffi::c_char;
use core::ptr;

/// C export of [`crate::abilities::multimodal::rt_host_multimodal_set`], with its contract.
#[cfg(feature = "host-port")]
#[no_mangle]
pub unsafe extern "C" fn rt_host_multimodal_set(
    mode: core::ffi::c_int,
    upload_url: *const c_char,
    download_url: *const c_char,
    max_bytes: core::ffi::c_long,
) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe {
            crate::abilities::multimodal::rt_host_multimodal_set(
                mode,
                upload_url,
                download_url,
                max_bytes,
            )
        }
    })
}
/// C export of [`crate::abilities::multimodal::file_op::agent_file_op_init`], with its contract.
#[no_mangle]
pub extern "C" fn agent_file_op_init() -> rt_thread_t {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::abilities::multimodal::file_op::agent_file_op_init()
    })
}

/// C export of [`crate::abilities::multimodal::file_op::agent_file_op_deinit`], with its contract.
#[no_mangle]
pub extern "C" fn agent_file_op_deinit() {
    ffi_fn!(failure = (), {
        crate::abilities::multimodal::file_op::agent_file_op_deinit()
    })
}

/// C export of [`crate::abilities::multimodal::file_op::get_agent_file_op_mq_input`], with its contract.
#[no_mangle]
pub extern "C" fn get_agent_file_op_mq_input() -> rt_mq_t {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::abilities::multimodal::file_op::get_agent_file_op_mq_input()
    })
}

/// C export of [`crate::abilities::multimodal::file_op::get_agent_file_op_mq_output`], with its contract.
#[no_mangle]
pub extern "C" fn get_agent_file_op_mq_output() -> rt_mq_t {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::abilities::multimodal::file_op::get_agent_file_op_mq_output()
    })
}

/// C export of [`crate::abilities::multimodal::file_op::agent_up_load`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn agent_up_load(path: *const c_char) -> *mut c_char {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::abilities::multimodal::file_op::agent_up_load(path) }
    })
}

/// C export of [`crate::abilities::multimodal::file_op::down_load`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn down_load(path: *const c_char, file_id: *const c_char) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::abilities::multimodal::file_op::down_load(path, file_id) }
    })
}
