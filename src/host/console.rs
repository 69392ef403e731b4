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
///
/// # Safety
/// `text` is NULL or points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn rt_host_console_write(text: *const c_char, len: usize) {
    if text.is_null() || len == 0 {
        return;
    }
    // SAFETY: `text` is non-NULL and has `len` readable bytes (our contract).
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

/// Copy the captured text into `buf` (NUL-terminated, cut to `size - 1`
/// bytes), clear the capture and return how many bytes were captured.
///
/// # Safety
/// `buf` is NULL or points to `size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn rt_host_console_take(buf: *mut c_char, size: usize) -> usize {
    let mut cap = CAPTURE.lock().unwrap_or_else(|e| e.into_inner());
    let total = cap.total;
    if !buf.is_null() && size > 0 {
        let n = cap.len.min(size - 1);
        // SAFETY: `buf` has `size` writable bytes (our contract) and
        // `n + 1 <= size`; `cap.buf` is a separate static, so no overlap.
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

// ---- the console device ("uart0"): input for the CLI channel and the shell

use crate::rtt::{rt_device_t, rt_eok, rt_err_t, rt_error, rt_off_t, rt_size_t, rt_ssize_t};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const INPUT_BYTES: usize = 4096;

struct Input {
    buf: [u8; INPUT_BYTES],
    head: usize,
    len: usize,
}

static INPUT: Mutex<Input> = Mutex::new(Input {
    buf: [0; INPUT_BYTES],
    head: 0,
    len: 0,
});
static STDIN_STARTED: AtomicBool = AtomicBool::new(false);

/// `struct rt_device` as `host/include/rtthread.h` declares it (the C glue
/// reads `rx_indicate` through that declaration, as it does on a board).
#[repr(C)]
pub struct HostDevice {
    name: [u8; 16],
    /// `rt_err_t (*rx_indicate)(rt_device_t, rt_size_t)`, or 0.
    rx_indicate: AtomicUsize,
    tx_complete: usize,
    user_data: usize,
}

// SAFETY: the callback slot is atomic; the other members never change.
unsafe impl Sync for HostDevice {}

/// The one device of the host port: the console (`RT_CONSOLE_DEVICE_NAME`).
static CONSOLE_DEVICE: HostDevice = HostDevice {
    name: *b"uart0\0\0\0\0\0\0\0\0\0\0\0",
    rx_indicate: AtomicUsize::new(0),
    tx_complete: 0,
    user_data: 0,
};

pub type RxIndicate = unsafe extern "C" fn(dev: rt_device_t, size: rt_size_t) -> rt_err_t;

fn console_handle() -> rt_device_t {
    &CONSOLE_DEVICE as *const HostDevice as rt_device_t
}

fn notify(count: usize) {
    let f = CONSOLE_DEVICE.rx_indicate.load(Ordering::Acquire);
    if f != 0 {
        // SAFETY: a non-zero slot only ever holds an `RxIndicate` stored by
        // rt_device_set_rx_indicate, and fn pointers are address-sized.
        let f: RxIndicate = unsafe { core::mem::transmute(f) };
        // SAFETY: whoever installed the indicator registered it for this
        // device, and calls it as the kernel does: the device and a count.
        unsafe { f(console_handle(), count) };
    }
}

/// Type bytes into the console (what a terminal or a test sends).
pub fn input(bytes: &[u8]) {
    let mut stored = 0;
    for &b in bytes {
        let mut inp = INPUT.lock().unwrap_or_else(|e| e.into_inner());
        if inp.len == INPUT_BYTES {
            drop(inp);
            // Full: let the reader catch up, as a UART FIFO would stall.
            notify(stored);
            std::thread::sleep(std::time::Duration::from_millis(1));
            continue;
        }
        let at = (inp.head + inp.len) % INPUT_BYTES;
        inp.buf[at] = b;
        inp.len += 1;
        stored += 1;
    }
    notify(stored);
}

/// Type `len` bytes into the console (the C side of [`input`]).
///
/// # Safety
/// `bytes` is NULL or points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn rt_host_console_input(bytes: *const c_char, len: usize) {
    if bytes.is_null() {
        return;
    }
    // SAFETY: `bytes` is non-NULL and has `len` readable bytes (our contract).
    input(unsafe { core::slice::from_raw_parts(bytes as *const u8, len) });
}

/// Feed the process's stdin into the console device (the simulator).
pub fn start_stdin_reader() {
    if STDIN_STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    let _ = std::thread::Builder::new().name("stdin".into()).spawn(|| {
        let mut buf = [0u8; 256];
        loop {
            // SAFETY: reading into a local buffer from fd 0.
            let n = unsafe { libc::read(0, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
            if n <= 0 {
                // End of input behaves like Ctrl-D.
                input(&[4]);
                break;
            }
            input(&buf[..n as usize]);
        }
    });
}

/// The console's receive callback right now (what a board's
/// `dev->rx_indicate` holds).
pub fn rx_indicate() -> Option<RxIndicate> {
    let f = CONSOLE_DEVICE.rx_indicate.load(Ordering::Acquire);
    // SAFETY: a non-zero slot only ever holds an `RxIndicate` stored by
    // rt_device_set_rx_indicate, and fn pointers are address-sized.
    (f != 0).then(|| unsafe { core::mem::transmute::<usize, RxIndicate>(f) })
}

/// Is `f` the console's current receive callback?
pub fn rx_is(f: RxIndicate) -> bool {
    CONSOLE_DEVICE.rx_indicate.load(Ordering::Acquire) == f as usize
}

/// Bytes typed but not read yet.
pub fn pending_input() -> usize {
    INPUT.lock().unwrap_or_else(|e| e.into_inner()).len
}

/// The console device when `name` is the board's console device name, else
/// NULL.
///
/// # Safety
/// `name` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn rt_device_find(name: *const c_char) -> rt_device_t {
    if name.is_null() {
        return core::ptr::null_mut();
    }
    // SAFETY: `name` is non-NULL and NUL-terminated (our contract); the board's
    // `console_device` is a NUL-terminated string of the C glue's.
    let (wanted, console) = unsafe {
        (
            core::ffi::CStr::from_ptr(name),
            core::ffi::CStr::from_ptr(crate::rtt::board().console_device),
        )
    };
    if wanted == console {
        console_handle()
    } else {
        core::ptr::null_mut()
    }
}

fn is_console(dev: rt_device_t) -> bool {
    dev == console_handle()
}

#[no_mangle]
pub extern "C" fn rt_device_open(dev: rt_device_t, _oflag: u16) -> rt_err_t {
    if is_console(dev) {
        rt_eok()
    } else {
        -rt_error()
    }
}

#[no_mangle]
pub extern "C" fn rt_device_close(dev: rt_device_t) -> rt_err_t {
    rt_device_open(dev, 0)
}

/// Take up to `size` typed bytes from the console device into `buffer`.
///
/// # Safety
/// `buffer` is NULL or points to `size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn rt_device_read(
    dev: rt_device_t,
    _pos: rt_off_t,
    buffer: *mut core::ffi::c_void,
    size: rt_size_t,
) -> rt_ssize_t {
    if !is_console(dev) || buffer.is_null() {
        return -(rt_error() as rt_ssize_t);
    }
    let mut inp = INPUT.lock().unwrap_or_else(|e| e.into_inner());
    let n = inp.len.min(size);
    for i in 0..n {
        let b = inp.buf[(inp.head + i) % INPUT_BYTES];
        // SAFETY: `buffer` is non-NULL with `size` writable bytes (our
        // contract), and i < n <= size.
        unsafe { *(buffer as *mut u8).add(i) = b };
    }
    inp.head = (inp.head + n) % INPUT_BYTES;
    inp.len -= n;
    n as rt_ssize_t
}

/// Print `size` bytes from `buffer` on the console.
///
/// # Safety
/// `buffer` is NULL or points to `size` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn rt_device_write(
    dev: rt_device_t,
    _pos: rt_off_t,
    buffer: *const core::ffi::c_void,
    size: rt_size_t,
) -> rt_ssize_t {
    if !is_console(dev) || buffer.is_null() {
        return -(rt_error() as rt_ssize_t);
    }
    // SAFETY: `buffer` is non-NULL with `size` readable bytes (our contract).
    write(unsafe { core::slice::from_raw_parts(buffer as *const u8, size) });
    size as rt_ssize_t
}

#[no_mangle]
pub extern "C" fn rt_device_set_rx_indicate(
    dev: rt_device_t,
    rx_ind: Option<unsafe extern "C" fn(dev: rt_device_t, size: rt_size_t) -> rt_err_t>,
) -> rt_err_t {
    if !is_console(dev) {
        return -rt_error();
    }
    CONSOLE_DEVICE
        .rx_indicate
        .store(rx_ind.map_or(0, |f| f as usize), Ordering::Release);
    rt_eok()
}
