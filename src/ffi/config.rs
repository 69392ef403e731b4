//! `agent_config.h`: the run-time configuration. The exports; the code is [`crate::runtime::config`].

use crate::ffi_fn;
use crate::runtime::config::agent_runtime_config_t;
use core::ffi::c_char;
use core::ptr::{self};

/// C export of [`crate::runtime::config::agent_config_get`], with its contract.
#[no_mangle]
pub extern "C" fn agent_config_get() -> *mut agent_runtime_config_t {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::runtime::config::agent_config_get()
    })
}

/// C export of [`crate::runtime::config::agent_config_set`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn agent_config_set(
    api_key: *const c_char,
    model_name: *const c_char,
    api_url: *const c_char,
) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::config::agent_config_set(api_key, model_name, api_url) }
    })
}

/// C export of [`crate::runtime::config::get_dynamic_agent_api_key`], with its contract.
#[no_mangle]
pub extern "C" fn get_dynamic_agent_api_key() -> *const c_char {
    ffi_fn!(failure = ptr::null(), {
        crate::runtime::config::get_dynamic_agent_api_key()
    })
}

/// C export of [`crate::runtime::config::get_dynamic_agent_model_name`], with its contract.
#[no_mangle]
pub extern "C" fn get_dynamic_agent_model_name() -> *const c_char {
    ffi_fn!(failure = ptr::null(), {
        crate::runtime::config::get_dynamic_agent_model_name()
    })
}

/// C export of [`crate::runtime::config::get_dynamic_agent_api_url`], with its contract.
#[no_mangle]
pub extern "C" fn get_dynamic_agent_api_url() -> *const c_char {
    ffi_fn!(failure = ptr::null(), {
        crate::runtime::config::get_dynamic_agent_api_url()
    })
}
