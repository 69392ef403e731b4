//! `AgentConfig.h`: the API key, model and URL, settable at run time.
//!
//! The storage is `agent_runtime_config_storage` in the C glue, so its
//! alignment is exactly the board's `rt_align(RT_ALIGN_SIZE)`. A field holds
//! a runtime value once one was set; getters fall back to the `PKG_AGENT_*`
//! default while the field is empty.
//!
//! Writers (`agent_config_set`) and `chat()`'s snapshot take [`CONFIG_LOCK`]:
//! a request copies the three strings once at its start ([`snapshot`]), so a
//! change made while it runs, retries and back-off included, applies to the
//! next request and never tears the current one. The C getters still hand out
//! pointers into the storage, as the C package did.

use crate::ffi_fn;
use crate::rtt::sleep_lock::SleepLock;
use crate::rtt::{board, rt_bool_t, RT_TRUE};
use alloc::vec::Vec;
use core::ffi::{c_char, CStr};
use core::ptr::{self, addr_of, addr_of_mut};

/// Guards [`agent_runtime_config_storage`] against torn reads and writes.
static CONFIG_LOCK: SleepLock = SleepLock::new();

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
    ffi_fn!(failure = ptr::null_mut(), { storage() })
}

/// Copy `value` into `field` if it fits with its NUL; refuse otherwise.
fn store(field: &mut [c_char], value: &CStr, what: &str) -> bool {
    let bytes = value.to_bytes();
    if bytes.len() >= field.len() {
        crate::log_w!(
            "agent_config_set: ",
            what,
            " is ",
            bytes.len(),
            " bytes, the limit is ",
            field.len() - 1,
            "; not changed"
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
pub unsafe extern "C" fn agent_config_set(
    api_key: *const c_char,
    model_name: *const c_char,
    api_url: *const c_char,
) {
    ffi_fn!(failure = (), {
        let _held = CONFIG_LOCK.lock();
        // SAFETY: arguments are NULL or NUL-terminated; the storage is written
        // only here, under CONFIG_LOCK.
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
    ffi_fn!(failure = ptr::null(), {
        // SAFETY: address of a field of the static storage.
        effective(
            unsafe { addr_of!((*storage()).api_key) } as *const c_char,
            board().api_key,
        )
    })
}

/// The model in use (runtime value, else `PKG_AGENT_MODEL_NAME`). Borrowed.
#[no_mangle]
pub extern "C" fn get_dynamic_agent_model_name() -> *const c_char {
    ffi_fn!(failure = ptr::null(), {
        // SAFETY: only the address of a field of the glue's static storage
        // is taken; nothing is read.
        effective(
            unsafe { addr_of!((*storage()).model_name) } as *const c_char,
            board().model_name,
        )
    })
}

/// The chat-completions URL in use (runtime value, else `PKG_AGENT_API_URL`).
/// Borrowed.
#[no_mangle]
pub extern "C" fn get_dynamic_agent_api_url() -> *const c_char {
    ffi_fn!(failure = ptr::null(), {
        // SAFETY: only the address of a field of the glue's static storage
        // is taken; nothing is read.
        effective(
            unsafe { addr_of!((*storage()).api_url) } as *const c_char,
            board().api_url,
        )
    })
}

/// The key, model and URL in use, copied together (one heap block) under
/// the lock: what one request works with from start to end.
pub struct ConfigSnapshot {
    text: Vec<u8>,
    model_at: usize,
    url_at: usize,
}

impl ConfigSnapshot {
    fn part(&self, from: usize) -> &CStr {
        CStr::from_bytes_until_nul(self.text.get(from..).unwrap_or(&[])).unwrap_or(c"")
    }
    pub fn api_key(&self) -> &CStr {
        self.part(0)
    }
    pub fn model(&self) -> &CStr {
        self.part(self.model_at)
    }
    pub fn url(&self) -> &CStr {
        self.part(self.url_at)
    }
}

/// A consistent copy of the configuration; `None` without memory.
pub fn snapshot() -> Option<ConfigSnapshot> {
    let _held = CONFIG_LOCK.lock();
    // SAFETY: the getters return NUL-terminated strings (the storage's
    // fields or the build's defaults), stable while CONFIG_LOCK is held.
    let (key, model, url) = unsafe {
        (
            CStr::from_ptr(get_dynamic_agent_api_key()).to_bytes_with_nul(),
            CStr::from_ptr(get_dynamic_agent_model_name()).to_bytes_with_nul(),
            CStr::from_ptr(get_dynamic_agent_api_url()).to_bytes_with_nul(),
        )
    };
    let mut text = Vec::new();
    text.try_reserve_exact(key.len() + model.len() + url.len())
        .ok()?;
    for part in [key, model, url] {
        crate::fallible::extend(&mut text, part).ok()?;
    }
    Some(ConfigSnapshot {
        model_at: key.len(),
        url_at: key.len() + model.len(),
        text,
    })
}

/// The key as shown to people: its first 3 and last 2 characters and its
/// length, never the whole key.
pub fn masked_key(key: &[u8], out: &mut [u8; 48]) -> usize {
    let mut n = 0;
    // Through `get_mut`, not indexing: no panic path.
    let mut put = |bytes: &[u8], n: &mut usize| {
        for &b in bytes {
            if let Some(slot) = out.get_mut(*n) {
                *slot = b;
                *n += 1;
            }
        }
    };
    if key.is_empty() {
        put(b"(none)", &mut n);
        return n;
    }
    if key.len() >= 12 {
        put(key.get(..3).unwrap_or_default(), &mut n);
        put(b"...", &mut n);
        put(key.get(key.len() - 2..).unwrap_or_default(), &mut n);
    } else {
        put(b"***", &mut n);
    }
    let mut digits = [0u8; 20];
    put(b" (", &mut n);
    put(crate::text::decimal(key.len() as u64, &mut digits), &mut n);
    put(b" characters)", &mut n);
    n
}
