//! Opt-in record of the host heap's live blocks at each new `max_used`, to
//! find which code holds the bytes of a transient peak (the board's load run
//! sees `max_used` creep up between two samples, with the heap at rest).
//!
//! `RT_HOST_HEAP_TRACE=DIR` turns it on: every counted block is kept with its
//! size and the call stack that allocated it (glibc's `backtrace`, raw
//! addresses), and each time `used` passes the highest figure dumped so far
//! by `RT_HOST_HEAP_TRACE_STEP` bytes (default 64), once
//! `RT_HOST_HEAP_TRACE_AFTER` seconds (default 0) have passed, the live
//! blocks are written to `DIR/peak-NNNN.txt`. `DIR/maps` is a copy of
//! `/proc/self/maps`, so `tools/heap-peaks.py` can resolve the addresses.
//!
//! Nothing here allocates: the table is static, files are written through
//! libc with a stack buffer. Off (no variable), each hook is one relaxed
//! load.

use core::ffi::{c_char, c_int, c_void};
use core::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Mutex;

const SLOTS: usize = 1 << 18;
const FRAMES: usize = 12;

#[derive(Clone, Copy)]
struct Block {
    ptr: usize,
    size: usize,
    frames: [usize; FRAMES],
}

const EMPTY: Block = Block {
    ptr: 0,
    size: 0,
    frames: [0; FRAMES],
};

struct Table {
    slots: [Block; SLOTS],
    dumped_max: usize,
    dumps: u32,
}

static TABLE: Mutex<Table> = Mutex::new(Table {
    slots: [EMPTY; SLOTS],
    dumped_max: 0,
    dumps: 0,
});

/// 0: not looked at yet, 1: off, 2: on.
static STATE: AtomicU8 = AtomicU8::new(0);
static STEP: AtomicUsize = AtomicUsize::new(64);
static AFTER_S: AtomicUsize = AtomicUsize::new(0);
static START_S: AtomicUsize = AtomicUsize::new(0);
static mut DIR: [u8; 256] = [0; 256];

extern "C" {
    /// glibc `<execinfo.h>`.
    fn backtrace(buffer: *mut *mut c_void, size: c_int) -> c_int;
}

std::thread_local! {
    static INSIDE: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

fn env_usize(name: &core::ffi::CStr) -> Option<usize> {
    // SAFETY: getenv with a NUL-terminated name; the result is read at once.
    let p = unsafe { libc::getenv(name.as_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: getenv returned a NUL-terminated string.
    let s = unsafe { core::ffi::CStr::from_ptr(p) }.to_str().ok()?;
    s.trim().parse().ok()
}

fn now_s() -> usize {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid timespec out-pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as usize
}

fn on() -> bool {
    match STATE.load(Ordering::Relaxed) {
        1 => false,
        2 => true,
        _ => {
            // SAFETY: as in env_usize.
            let p = unsafe { libc::getenv(c"RT_HOST_HEAP_TRACE".as_ptr()) };
            let on = !p.is_null();
            if on {
                // SAFETY: `p` is NUL-terminated; DIR is written once, here,
                // before STATE says "on", and read only after.
                unsafe {
                    let dir = &mut *core::ptr::addr_of_mut!(DIR);
                    let n = libc::strlen(p).min(dir.len() - 1);
                    core::ptr::copy_nonoverlapping(p as *const u8, dir.as_mut_ptr(), n);
                }
                if let Some(s) = env_usize(c"RT_HOST_HEAP_TRACE_STEP") {
                    STEP.store(s.max(1), Ordering::Relaxed);
                }
                if let Some(s) = env_usize(c"RT_HOST_HEAP_TRACE_AFTER") {
                    AFTER_S.store(s, Ordering::Relaxed);
                }
                START_S.store(now_s(), Ordering::Relaxed);
                copy_maps();
            }
            STATE.store(if on { 2 } else { 1 }, Ordering::Relaxed);
            on
        }
    }
}

fn slot_of(ptr: usize) -> usize {
    (ptr >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - 18)
}

/// A counted block was handed out.
pub fn born(ptr: *mut c_void, size: usize, used_now: usize) {
    if ptr.is_null() || !on() || INSIDE.with(|i| i.replace(true)) {
        return;
    }
    let mut frames = [core::ptr::null_mut::<c_void>(); FRAMES];
    // SAFETY: a buffer of FRAMES pointers.
    unsafe { backtrace(frames.as_mut_ptr(), FRAMES as c_int) };
    if let Ok(mut t) = TABLE.lock() {
        let mut i = slot_of(ptr as usize);
        let mut probes = 0;
        while t.slots[i].ptr != 0 && probes < SLOTS {
            i = (i + 1) & (SLOTS - 1);
            probes += 1;
        }
        if probes < SLOTS {
            t.slots[i] = Block {
                ptr: ptr as usize,
                size,
                frames: frames.map(|f| f as usize),
            };
        }
        let late = now_s().saturating_sub(START_S.load(Ordering::Relaxed))
            >= AFTER_S.load(Ordering::Relaxed);
        if late && used_now >= t.dumped_max + STEP.load(Ordering::Relaxed) {
            t.dumped_max = used_now;
            t.dumps += 1;
            dump(&t, used_now);
        }
    }
    INSIDE.with(|i| i.set(false));
}

/// A counted block is given back.
pub fn died(ptr: *mut c_void) {
    if ptr.is_null() || STATE.load(Ordering::Relaxed) != 2 || INSIDE.with(|i| i.replace(true)) {
        return;
    }
    if let Ok(mut t) = TABLE.lock() {
        let mut i = slot_of(ptr as usize);
        let mut probes = 0;
        while t.slots[i].ptr != ptr as usize {
            if t.slots[i].ptr == 0 || probes == SLOTS {
                INSIDE.with(|x| x.set(false));
                return;
            }
            i = (i + 1) & (SLOTS - 1);
            probes += 1;
        }
        // Backward-shift deletion keeps every probe chain unbroken.
        let mut hole = i;
        let mut j = (i + 1) & (SLOTS - 1);
        while t.slots[j].ptr != 0 {
            let home = slot_of(t.slots[j].ptr);
            let between = if hole <= j {
                home > hole && home <= j
            } else {
                home > hole || home <= j
            };
            if !between {
                t.slots[hole] = t.slots[j];
                hole = j;
            }
            j = (j + 1) & (SLOTS - 1);
        }
        t.slots[hole] = EMPTY;
    }
    INSIDE.with(|i| i.set(false));
}

/// A file in DIR, opened for writing.
fn open_in_dir(name: &[u8]) -> c_int {
    let mut path = [0u8; 320];
    // SAFETY: DIR is only written before STATE says "on".
    let dir = unsafe { &*core::ptr::addr_of!(DIR) };
    let d = dir.iter().position(|&b| b == 0).unwrap_or(dir.len());
    let n = name.len().min(path.len() - d - 2);
    path[..d].copy_from_slice(&dir[..d]);
    path[d] = b'/';
    path[d + 1..d + 1 + n].copy_from_slice(&name[..n]);
    // SAFETY: `path` is NUL-terminated (zero-filled past the name).
    unsafe {
        libc::open(
            path.as_ptr() as *const c_char,
            libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC,
            0o644,
        )
    }
}

fn copy_maps() {
    let out = open_in_dir(b"maps");
    // SAFETY: a NUL-terminated path.
    let inp = unsafe { libc::open(c"/proc/self/maps".as_ptr(), libc::O_RDONLY) };
    if out >= 0 && inp >= 0 {
        let mut buf = [0u8; 4096];
        loop {
            // SAFETY: `buf` is writable for its length.
            let n = unsafe { libc::read(inp, buf.as_mut_ptr() as *mut c_void, buf.len()) };
            if n <= 0 {
                break;
            }
            // SAFETY: the first `n` bytes of `buf` were just read.
            unsafe { libc::write(out, buf.as_ptr() as *const c_void, n as usize) };
        }
    }
    // SAFETY: closing descriptors we opened (a negative one is ignored by the kernel with EBADF).
    unsafe {
        libc::close(out);
        libc::close(inp);
    }
}

/// Writes formatted text to a descriptor through a stack buffer.
struct FdWriter {
    fd: c_int,
    buf: [u8; 4096],
    len: usize,
}

impl FdWriter {
    fn flush(&mut self) {
        // SAFETY: the first `len` bytes of `buf` are initialised.
        unsafe { libc::write(self.fd, self.buf.as_ptr() as *const c_void, self.len) };
        self.len = 0;
    }
}

impl core::fmt::Write for FdWriter {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        for &b in s.as_bytes() {
            if self.len == self.buf.len() {
                self.flush();
            }
            self.buf[self.len] = b;
            self.len += 1;
        }
        Ok(())
    }
}

fn dump(t: &Table, used_now: usize) {
    use core::fmt::Write;
    let mut name = [0u8; 16];
    let mut n = t.dumps;
    name[..5].copy_from_slice(b"peak-");
    for k in (0..4).rev() {
        name[5 + k] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    name[9..13].copy_from_slice(b".txt");
    let fd = open_in_dir(&name[..13]);
    if fd < 0 {
        return;
    }
    let mut w = FdWriter {
        fd,
        buf: [0; 4096],
        len: 0,
    };
    let t_s = now_s().saturating_sub(START_S.load(Ordering::Relaxed));
    let _ = writeln!(w, "t_s {} used {}", t_s, used_now);
    for b in t.slots.iter().filter(|b| b.ptr != 0) {
        let _ = write!(w, "{}", b.size);
        for f in b.frames.iter().filter(|&&f| f != 0) {
            let _ = write!(w, " {:x}", f);
        }
        let _ = writeln!(w);
    }
    w.flush();
    // SAFETY: a descriptor we opened.
    unsafe { libc::close(fd) };
}
