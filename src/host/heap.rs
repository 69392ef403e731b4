//! The accounting heap behind `rt_malloc` and friends (and so behind the
//! Rust global allocator and cJSON). It keeps RT-Thread's `used` and
//! `max_used` exactly, refuses allocations beyond its `total` like a board's
//! heap, and can fail allocations on purpose for tests.
//!
//! Blocks come from libc `malloc` with a 16-byte header that records the
//! size, so valgrind still sees every block.

use crate::rtt::rt_size_t;
use core::cell::Cell;
use core::ffi::c_void;
use core::ptr;
use core::sync::atomic::{AtomicUsize, Ordering};

const HEADER: usize = 16;
/// The simulated board's heap size.
pub const HEAP_TOTAL: usize = 256 * 1024 * 1024;

static USED: AtomicUsize = AtomicUsize::new(0);
static MAX_USED: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Allocations this thread may still make before injected failures
    /// start; negative: never fail.
    static FAIL_AFTER: Cell<libc::c_long> = const { Cell::new(-1) };
    /// Test infrastructure running in the same process (the scripted LLM
    /// server) marks its threads so their blocks are not counted: `used`
    /// then measures the firmware side alone.
    static EXCLUDED: Cell<bool> = const { Cell::new(false) };
}

/// Second header word: the block is not counted in `used`.
const NOT_COUNTED: usize = 1;

fn excluded() -> bool {
    EXCLUDED.try_with(|e| e.get()).unwrap_or(false)
}

/// Leave this thread's allocations out of `used`/`max_used` (for test
/// servers that share the process with the code under test).
pub fn exclude_this_thread(on: bool) {
    let _ = EXCLUDED.try_with(|e| e.set(on));
}

/// Should this allocation fail by injection? Counts down otherwise.
fn injected_failure() -> bool {
    FAIL_AFTER
        .try_with(|left| {
            let n = left.get();
            if n < 0 {
                false
            } else if n == 0 {
                true
            } else {
                left.set(n - 1);
                false
            }
        })
        .unwrap_or(false)
}

fn reserve(size: usize) -> bool {
    let mut cur = USED.load(Ordering::Relaxed);
    loop {
        let Some(next) = cur.checked_add(size).filter(|&n| n <= HEAP_TOTAL) else {
            return false;
        };
        match USED.compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Relaxed) {
            Ok(_) => {
                MAX_USED.fetch_max(next, Ordering::AcqRel);
                return true;
            }
            Err(seen) => cur = seen,
        }
    }
}

fn release(size: usize) {
    USED.fetch_sub(size, Ordering::AcqRel);
}

/// # Safety
/// `p` is a block from this heap.
unsafe fn header_of(p: *mut c_void) -> *mut usize {
    // SAFETY: a block of this heap starts HEADER bytes into its libc block
    // (rt_malloc), so the header is inside the same allocation.
    unsafe { (p as *mut u8).sub(HEADER) as *mut usize }
}

#[no_mangle]
pub extern "C" fn rt_malloc(size: rt_size_t) -> *mut c_void {
    if size == 0 {
        return ptr::null_mut();
    }
    let counted = !excluded();
    if counted && (injected_failure() || !reserve(size)) {
        return ptr::null_mut();
    }
    // SAFETY: libc allocation of size + HEADER, NULL-checked; the header is
    // written within it and the user block starts 16 bytes in (still 16-byte
    // aligned).
    unsafe {
        let base = libc::malloc(size + HEADER) as *mut u8;
        if base.is_null() {
            if counted {
                release(size);
            }
            return ptr::null_mut();
        }
        *(base as *mut usize) = size;
        *(base as *mut usize).add(1) = if counted { 0 } else { NOT_COUNTED };
        base.add(HEADER) as *mut c_void
    }
}

/// Free a block of this heap; NULL is ignored.
///
/// # Safety
/// `p` is NULL or a live block from `rt_malloc`, `rt_realloc` or `rt_calloc`,
/// not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn rt_free(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: `p` is a live block of this heap (our contract): its header
    // holds the size and the counted flag, and its base is a libc block.
    unsafe {
        let h = header_of(p);
        if *h.add(1) != NOT_COUNTED {
            release(*h);
        }
        libc::free(h as *mut c_void);
    }
}

/// Resize a block of this heap (NULL: allocate; size 0: free).
///
/// # Safety
/// `p` is NULL or a live block of this heap; on success it is not used
/// afterwards (the result replaces it).
#[no_mangle]
pub unsafe extern "C" fn rt_realloc(p: *mut c_void, newsize: rt_size_t) -> *mut c_void {
    if p.is_null() {
        return rt_malloc(newsize);
    }
    if newsize == 0 {
        // SAFETY: `p` is a live block of this heap that the caller gives up.
        unsafe { rt_free(p) };
        return ptr::null_mut();
    }
    // SAFETY: `p` is a live block of this heap (our contract), so its header
    // and libc base are valid; on failure it is left untouched.
    unsafe {
        let h = header_of(p);
        let old = *h;
        let counted = *h.add(1) != NOT_COUNTED;
        if counted && newsize > old && (injected_failure() || !reserve(newsize - old)) {
            return ptr::null_mut();
        }
        let base = libc::realloc(h as *mut c_void, newsize + HEADER) as *mut u8;
        if base.is_null() {
            if counted && newsize > old {
                release(newsize - old);
            }
            return ptr::null_mut();
        }
        if counted && newsize < old {
            release(old - newsize);
        }
        *(base as *mut usize) = newsize;
        base.add(HEADER) as *mut c_void
    }
}

#[no_mangle]
pub extern "C" fn rt_calloc(count: rt_size_t, size: rt_size_t) -> *mut c_void {
    let Some(total) = count.checked_mul(size) else {
        return ptr::null_mut();
    };
    let p = rt_malloc(total);
    if !p.is_null() {
        // SAFETY: a fresh block of `total` bytes.
        unsafe { ptr::write_bytes(p as *mut u8, 0, total) };
    }
    p
}

/// As RT-Thread 5.3's (`src/kservice.c`): `align` rounded up to the pointer
/// size, a block of `size` rounded up to the pointer size plus `align`, the
/// aligned address (one whole `align` further when the block is already
/// aligned), and the original block's address just below it. `align` 0 or
/// not a power of two: NULL (the kernel computes garbage then).
#[no_mangle]
pub extern "C" fn rt_malloc_align(size: rt_size_t, align: rt_size_t) -> *mut c_void {
    if align == 0 || !align.is_power_of_two() {
        return ptr::null_mut();
    }
    let word = core::mem::size_of::<usize>();
    let align = (align + word - 1) & !(word - 1);
    let Some(total) = size
        .checked_add(word - 1)
        .map(|n| n & !(word - 1))
        .and_then(|n| n.checked_add(align))
    else {
        return ptr::null_mut();
    };
    let raw = rt_malloc(total);
    if raw.is_null() {
        return raw;
    }
    let aligned = if raw as usize & (align - 1) == 0 {
        raw as usize + align
    } else {
        (raw as usize + align - 1) & !(align - 1)
    };
    // SAFETY: `aligned - word` lies inside the block, at or after its start
    // (blocks are 16-byte aligned, so an unaligned one is at least 16 bytes
    // short of the next boundary).
    unsafe { *((aligned - word) as *mut usize) = raw as usize };
    aligned as *mut c_void
}

/// Free a block from `rt_malloc_align`; NULL is ignored.
///
/// # Safety
/// `p` is NULL or a live block from `rt_malloc_align`, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn rt_free_align(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    // SAFETY: `p` came from rt_malloc_align (our contract), which stored the
    // address of its rt_malloc block in the word just below `p`.
    unsafe {
        let raw = *((p as usize - core::mem::size_of::<usize>()) as *const usize);
        rt_free(raw as *mut c_void);
    }
}

/// The heap's `total`, `used` and `max_used`, each written when its pointer
/// is not NULL.
///
/// # Safety
/// Each pointer is NULL or valid for a write of an `rt_size_t`.
#[no_mangle]
pub unsafe extern "C" fn rt_memory_info(
    total: *mut rt_size_t,
    used: *mut rt_size_t,
    max_used: *mut rt_size_t,
) {
    // Threads that have finished still hold their join state; reap them so
    // that the figures are those of a kernel whose idle thread cleaned up.
    super::thread::reap_finished();
    // SAFETY: each pointer is NULL (skipped) or writable (our contract).
    unsafe {
        if !total.is_null() {
            *total = HEAP_TOTAL;
        }
        if !used.is_null() {
            *used = USED.load(Ordering::Acquire);
        }
        if !max_used.is_null() {
            *max_used = MAX_USED.load(Ordering::Acquire);
        }
    }
}

/// Current `used`, after reaping finished threads.
pub fn used() -> usize {
    let mut used = 0;
    // SAFETY: NULL for the figures not wanted, a local for `used`.
    unsafe { rt_memory_info(ptr::null_mut(), &mut used, ptr::null_mut()) };
    used
}

/// Current `max_used`.
pub fn max_used() -> usize {
    MAX_USED.load(Ordering::Acquire)
}

#[no_mangle]
pub extern "C" fn rt_host_heap_fail_after(n: libc::c_long) {
    let _ = FAIL_AFTER.try_with(|left| left.set(n));
}

#[no_mangle]
pub extern "C" fn rt_host_heap_reset_max_used() {
    MAX_USED.store(USED.load(Ordering::Acquire), Ordering::Release);
}
