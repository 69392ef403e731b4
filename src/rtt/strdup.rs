//! C strings on the RT-Thread heap (`rt_strdup` semantics), so that C code
//! may free what the library hands it with `rt_free`, as with the C package.

use super::{rt_malloc, rt_size_t};
use core::ffi::{c_char, CStr};
use core::ptr;

/// The concatenation of `parts` plus a NUL, on the RT-Thread heap
/// (`rt_strdup` semantics); NULL when the heap is exhausted. The caller owns
/// it and frees it with `rt_free`.
pub fn rt_strdup_parts(parts: &[&[u8]]) -> *mut c_char {
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
pub fn rt_strdup_cstr(s: &CStr) -> *mut c_char {
    rt_strdup_parts(&[s.to_bytes()])
}
