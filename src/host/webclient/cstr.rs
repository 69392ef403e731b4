//! The C library calls the package's parsing relies on, with their C
//! semantics on bounded buffers: `strnlen`, `snprintf("%s")`, `strtol`,
//! `atoi`, `strstr`, and heap copies of C strings (`web_strdup`).

use crate::host::heap;
use core::ffi::{c_char, c_int, CStr};

/// Length of the C string at `p`, at most `max`.
pub(super) fn cstrnlen(p: &[u8]) -> usize {
    p.iter().position(|&b| b == 0).unwrap_or(p.len())
}

/// `snprintf(dst, dst.len(), "%s", text)`: writes what fits with a NUL,
/// returns the length it wanted (as `rt_vsnprintf`).
pub(super) fn put(dst: &mut [u8], text: &[u8]) -> usize {
    if !dst.is_empty() {
        let n = text.len().min(dst.len() - 1);
        dst[..n].copy_from_slice(&text[..n]);
        dst[n] = 0;
    }
    text.len()
}

/// `snprintf(dst, dst.len(), "%s%s...", parts...)`: [`put`] of the parts
/// joined, without joining them anywhere else first.
pub(super) fn put_parts(dst: &mut [u8], parts: &[&[u8]]) -> usize {
    let room = dst.len().saturating_sub(1);
    let mut at = 0usize;
    let mut wanted = 0usize;
    for part in parts {
        let n = part.len().min(room - at.min(room));
        dst[at..at + n].copy_from_slice(&part[..n]);
        at += n;
        wanted += part.len();
    }
    if !dst.is_empty() {
        dst[at] = 0;
    }
    wanted
}

/// `strtol(s, NULL, base)` on a bounded buffer (stops at a NUL).
pub(super) fn strtol(s: &[u8], base: u32) -> i64 {
    let s = &s[..cstrnlen(s)];
    let mut i = 0;
    while i < s.len() && (s[i] == b' ' || (b'\t'..=b'\r').contains(&s[i])) {
        i += 1;
    }
    let neg = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    if base == 16
        && s.get(i) == Some(&b'0')
        && matches!(s.get(i + 1), Some(b'x' | b'X'))
        && s.get(i + 2).is_some_and(|c| c.is_ascii_hexdigit())
    {
        i += 2;
    }
    let mut v: i64 = 0;
    while let Some(d) = s.get(i).and_then(|&c| (c as char).to_digit(base)) {
        v = v.saturating_mul(base as i64).saturating_add(d as i64);
        i += 1;
    }
    if neg {
        -v
    } else {
        v
    }
}

/// glibc's `atoi`: `(int) strtol(s, NULL, 10)`.
pub(super) fn atoi(s: &[u8]) -> c_int {
    strtol(s, 10) as c_int
}

/// A heap copy of `bytes` as a C string (`web_strdup`/`web_malloc`), or
/// NULL when the heap refuses.
pub(super) fn heap_cstr(bytes: &[u8]) -> *mut c_char {
    let p = heap::rt_malloc(bytes.len() + 1) as *mut u8;
    if !p.is_null() {
        // SAFETY: a fresh block of len + 1 bytes.
        unsafe {
            core::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
            *p.add(bytes.len()) = 0;
        }
    }
    p as *mut c_char
}

pub(super) fn cstr_bytes<'a>(p: *const c_char) -> &'a [u8] {
    if p.is_null() {
        return b"";
    }
    // SAFETY: a NUL-terminated string of ours (or the caller's).
    unsafe { CStr::from_ptr(p) }.to_bytes()
}

/// Does `hay` (a C string) contain `needle`?
pub(super) fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_parts_is_snprintf_of_the_joined_parts() {
        for size in 0..12 {
            let mut a = vec![0xAAu8; size];
            let mut b = vec![0xAAu8; size];
            let whole = put(&mut a, b"GET /x HTTP");
            let parts = put_parts(&mut b, &[b"GET ", b"/x", b"", b" HTTP"]);
            assert_eq!((whole, &a), (parts, &b), "size {size}");
        }
    }

    #[test]
    fn c_number_parsing() {
        assert_eq!(strtol(b"1a\r", 16), 26);
        assert_eq!(strtol(b" 0x10;ext", 16), 16);
        assert_eq!(strtol(b"zz", 16), 0);
        assert_eq!(strtol(b"200 OK", 10), 200);
        assert_eq!(atoi(b" 12abc"), 12);
        assert_eq!(atoi(b"-3"), -3);
        assert_eq!(atoi(b"x"), 0);
    }
}
