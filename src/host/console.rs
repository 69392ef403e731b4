//! The host console: what `rt_kprintf` and ulog print goes to stdout, or to
//! a fixed capture buffer that tests read (no heap is used either way, so
//! capturing does not disturb heap accounting).

use core::ffi::c_char;
use std::sync::Mutex;

const CAPTURE_BYTES: usize = 256 * 1024;

struct Capture {
    on: bool,
    len: usize,
    total: usize,
    buf: [u8; CAPTURE_BYTES],
}

static CAPTURE: Mutex<Capture> = Mutex::new(Capture {
    on: false,
    len: 0,
    total: 0,
    buf: [0; CAPTURE_BYTES],
});

fn write_stdout(bytes: &[u8]) {
    let mut rest = bytes;
    while !rest.is_empty() {
        // SAFETY: writing an initialised buffer to fd 1.
        let n = unsafe { libc::write(1, rest.as_ptr() as *const libc::c_void, rest.len()) };
        if n <= 0 {
            break;
        }
        rest = &rest[n as usize..];
    }
}

/// Print bytes on the console (called by the C half for every line).
#[no_mangle]
pub extern "C" fn rt_host_console_write(text: *const c_char, len: usize) {
    if text.is_null() || len == 0 {
        return;
    }
    // SAFETY: `len` readable bytes (the C half's contract).
    let bytes = unsafe { core::slice::from_raw_parts(text as *const u8, len) };
    write(bytes);
}

/// Print bytes on the console (or into the capture buffer).
pub fn write(bytes: &[u8]) {
    let mut cap = CAPTURE.lock().unwrap_or_else(|e| e.into_inner());
    if cap.on {
        let start = cap.len;
        let n = bytes.len().min(CAPTURE_BYTES - start);
        cap.buf[start..start + n].copy_from_slice(&bytes[..n]);
        cap.len += n;
        cap.total += bytes.len();
        return;
    }
    drop(cap);
    write_stdout(bytes);
}

#[no_mangle]
pub extern "C" fn rt_host_console_capture(on: crate::rtt::rt_bool_t) {
    let mut cap = CAPTURE.lock().unwrap_or_else(|e| e.into_inner());
    cap.on = on != 0;
}

#[no_mangle]
pub extern "C" fn rt_host_console_take(buf: *mut c_char, size: usize) -> usize {
    let mut cap = CAPTURE.lock().unwrap_or_else(|e| e.into_inner());
    let total = cap.total;
    if !buf.is_null() && size > 0 {
        let n = cap.len.min(size - 1);
        // SAFETY: `buf` has `size` writable bytes (caller's contract).
        unsafe {
            core::ptr::copy_nonoverlapping(cap.buf.as_ptr(), buf as *mut u8, n);
            *buf.add(n) = 0;
        }
    }
    cap.len = 0;
    cap.total = 0;
    total
}

/// Everything captured so far, as text (for Rust tests), and clear it.
pub fn take_captured() -> String {
    let mut cap = CAPTURE.lock().unwrap_or_else(|e| e.into_inner());
    let s = String::from_utf8_lossy(&cap.buf[..cap.len]).into_owned();
    cap.len = 0;
    cap.total = 0;
    s
}
