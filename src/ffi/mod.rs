//! The C-visible surface, one module per header area of `shared/spec/abi.md`.
//!
//! Every exported function has one failure convention: its body runs inside
//! [`ffi_boundary!`], which names the value returned when the body cannot
//! complete. With `std` (host) a panic is caught there and turned into that
//! value; without `std` there is no unwinding and the panic handler halts, so
//! bodies are written to have no reachable panic at all.
//!
//! Memory handed to C always comes from the RT-Thread heap (`rt_malloc`), so
//! C code may release it with `rt_free` as it did with the C package.

pub mod agent_loop;
pub mod channels;
pub mod chat;
pub mod commands;
pub mod config;
pub mod context;
pub mod hub;
pub mod messages;
pub mod prompt;
pub mod tools;
pub mod utils;

/// Run `$body`; if it panics (host builds only), return `$on_failure`.
#[macro_export]
macro_rules! ffi_boundary {
    ($on_failure:expr, $body:block) => {{
        #[cfg(feature = "std")]
        {
            match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| $body)) {
                Ok(value) => value,
                Err(_) => $on_failure,
            }
        }
        #[cfg(not(feature = "std"))]
        {
            $body
        }
    }};
}

use crate::rtt::{rt_malloc, rt_size_t};
use core::ffi::{c_char, CStr};
use core::ptr;

/// The concatenation of `parts` plus a NUL, on the RT-Thread heap
/// (`rt_strdup` semantics); NULL when the heap is exhausted. The caller owns
/// it and frees it with `rt_free`.
pub(crate) fn rt_strdup_parts(parts: &[&[u8]]) -> *mut c_char {
    let Some(total) = parts
        .iter()
        .try_fold(0usize, |acc, p| acc.checked_add(p.len()))
    else {
        return ptr::null_mut();
    };
    let Some(size) = total.checked_add(1) else {
        return ptr::null_mut();
    };
    // SAFETY: a fresh block of `size` bytes, NULL-checked, written within it.
    unsafe {
        let p = rt_malloc(size as rt_size_t) as *mut u8;
        if p.is_null() {
            return ptr::null_mut();
        }
        let mut off = 0;
        for part in parts {
            // A NUL inside would end the C string early: drop it.
            for &b in part.iter().filter(|&&b| b != 0) {
                *p.add(off) = b;
                off += 1;
            }
        }
        *p.add(off) = 0;
        p as *mut c_char
    }
}

/// `rt_strdup` of a C string.
pub(crate) fn rt_strdup_cstr(s: &CStr) -> *mut c_char {
    rt_strdup_parts(&[s.to_bytes()])
}

/// Borrow a C string argument; `None` for NULL.
///
/// # Safety
/// `p` is NULL or NUL-terminated and outlives `'a`.
pub(crate) unsafe fn cstr_arg<'a>(p: *const c_char) -> Option<&'a CStr> {
    if p.is_null() {
        None
    } else {
        Some(CStr::from_ptr(p))
    }
}
