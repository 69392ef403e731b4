//! `AgentConfig.h`: the API key, model and URL, settable at run time.
//!
//! The storage is `agent_runtime_config_storage` in the C glue, so its
//! alignment is exactly the board's `rt_align(RT_ALIGN_SIZE)`. A field holds
//! a runtime value once one was set; getters fall back to the `PKG_AGENT_*`
//! default while the field is empty.

use crate::ffi_boundary;
use crate::rtt::{board, rt_bool_t, RT_TRUE};
use core::ffi::{c_char, CStr};
use core::ptr::{addr_of, addr_of_mut};

pub const AGENT_CFG_API_KEY_MAX: usize = 128;
pub const AGENT_CFG_MODEL_MAX: usize = 128;
pub const AGENT_CFG_API_URL_MAX: usize = 128;

/// `agent_runtime_config_t` (offsets as in C; its alignment is the board's).
#[repr(C)]
pub struct agent_runtime_config {
    pub api_key: [c_char; AGENT_CFG_API_KEY_MAX],
    pub model_name: [c_char; AGENT_CFG_MODEL_MAX],
    pub api_url: [c_char; AGENT_CFG_API_URL_MAX],
    pub is_configured: rt_bool_t,
}
pub type agent_runtime_config_t = agent_runtime_config;

extern "C" {
    static mut agent_runtime_config_storage: agent_runtime_config_t;
}

fn storage() -> *mut agent_runtime_config_t {
    // Taking the address of the glue's static creates no reference.
    addr_of_mut!(agent_runtime_config_storage)
}

/// The runtime configuration, owned by the library (never free it). Fields
/// are empty until set; see the getters for the effective values.
#[no_mangle]
pub extern "C" fn agent_config_get() -> *mut agent_runtime_config_t {
    storage()
}

/// Copy `value` into `field` if it fits with its NUL; refuse otherwise.
fn store(field: &mut [c_char], value: &CStr, what: &str) -> bool {
    let bytes = value.to_bytes();
    if bytes.len() >= field.len() {
        crate::log_w!(
            "agent_config_set: {} is {} bytes, the limit is {}; not changed",
            what,
            bytes.len(),
            field.len() - 1
        );
        return false;
    }
    for (dst, &src) in field
        .iter_mut()
        .zip(bytes.iter().chain(core::iter::once(&0)))
    {
        *dst = src as c_char;
    }
    true
}

/// Set each non-NULL value that fits (at most 127 bytes); a longer one is
/// refused with a warning, never truncated. Borrows the strings.
#[no_mangle]
pub extern "C" fn agent_config_set(
    api_key: *const c_char,
    model_name: *const c_char,
    api_url: *const c_char,
) {
    ffi_boundary!((), {
        // SAFETY: arguments are NULL or NUL-terminated; the storage is only
        // written here, by the configuring thread.
        unsafe {
            let cfg = &mut *storage();
            let mut changed = false;
            if let Some(v) = super::cstr_arg(api_key) {
                changed |= store(&mut cfg.api_key, v, "api_key");
            }
            if let Some(v) = super::cstr_arg(model_name) {
                changed |= store(&mut cfg.model_name, v, "model_name");
            }
            if let Some(v) = super::cstr_arg(api_url) {
                changed |= store(&mut cfg.api_url, v, "api_url");
            }
            if changed {
                cfg.is_configured = RT_TRUE;
            }
        }
    })
}

/// The runtime value when set (non-empty), else the build's default.
fn effective(field: *const c_char, default: *const c_char) -> *const c_char {
    // SAFETY: `field` points into the storage, which always holds a NUL
    // within its array (zero-initialised, written only by `store`).
    if unsafe { *field } != 0 {
        field
    } else if default.is_null() {
        c"".as_ptr()
    } else {
        default
    }
}

/// The API key in use (runtime value, else `PKG_AGENT_API_KEY`). Borrowed.
#[no_mangle]
pub extern "C" fn get_dynamic_agent_api_key() -> *const c_char {
    // SAFETY: address of a field of the static storage.
    effective(
        unsafe { addr_of!((*storage()).api_key) } as *const c_char,
        board().api_key,
    )
}

/// The model in use (runtime value, else `PKG_AGENT_MODEL_NAME`). Borrowed.
#[no_mangle]
pub extern "C" fn get_dynamic_agent_model_name() -> *const c_char {
    // SAFETY: as above.
    effective(
        unsafe { addr_of!((*storage()).model_name) } as *const c_char,
        board().model_name,
    )
}

/// The chat-completions URL in use (runtime value, else `PKG_AGENT_API_URL`).
/// Borrowed.
#[no_mangle]
pub extern "C" fn get_dynamic_agent_api_url() -> *const c_char {
    // SAFETY: as above.
    effective(
        unsafe { addr_of!((*storage()).api_url) } as *const c_char,
        board().api_url,
    )
}
