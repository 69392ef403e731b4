//! The accounting heap behind `rt_malloc` and friends (and so behind the
//! Rust global allocator and cJSON). It keeps RT-Thread's `used` and
//! `max_used` exactly, refuses allocations beyond its `total` like a board's
//! heap, and can fail allocations on purpose for tests.
//!
//! Blocks come from libc `malloc` with a 16-byte header that records the
//! size, so valgrind still sees every block.
//!
//! # Fault injection
//!
//! An *allocation point* is an `rt_malloc` (also through `rt_calloc`,
//! `rt_malloc_align` and the Rust global allocator) or a growing
//! `rt_realloc` of a counted block: the calls a board's heap may refuse.
//! Two ways to refuse them on purpose:
//!
//! - **per thread** ([`rt_host_heap_fail_after`], the C tests' tool): after
//!   `n` more successful allocation points of the calling thread, every one
//!   of that thread fails until it is called again with `n < 0`;
//! - **process-wide** ([`inject`], and its C forms [`rt_host_heap_fail_nth`],
//!   [`rt_host_heap_fail_from`], [`rt_host_heap_count_allocs`]): allocation
//!   points of every thread are numbered 0, 1, 2, ... from the moment it is
//!   armed, in the order they happen, and the `k`-th alone fails
//!   ([`Fault::FailNth`]), or every one from the `k`-th on
//!   ([`Fault::FailFrom`]), or none ([`Fault::Count`]: only counted).
//!   [`injection_report`] says how many points were numbered and how many
//!   failed, so a test learns N from a counting run and walks k = 0..N
//!   (a run with FailNth(k) that injected nothing made at most k points).
//!
//! Threads excluded with [`exclude_this_thread`] or [`exclude_thread_id`]
//! (test servers sharing the process, the test harness's main thread) are
//! neither counted nor failed. Code running inside
//! [`without_injection`] is counted in `used` but its allocation points are
//! neither numbered nor failed: it is for host-only machinery that has no
//! counterpart on a board and cannot report an allocation failure (rustls,
//! std's own thread bookkeeping), never for the library's code.
//!
//! Process-wide injection reaches every thread that is not excluded, the
//! test harness's own included: a test arms it only around the code under
//! test, from a thread that allocates nothing else meanwhile, and serialises
//! against every other test of its process.

use crate::rtt::rt_size_t;
use core::cell::Cell;
use core::ffi::c_void;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicU8, AtomicUsize, Ordering};

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
    /// Depth of [`without_injection`] scopes on this thread.
    static IMMUNE: Cell<u32> = const { Cell::new(0) };
    /// This thread's kernel id once looked up (0: not yet).
    static TID: Cell<libc::pid_t> = const { Cell::new(0) };
}

/// Threads left out by their kernel id ([`exclude_thread_id`]); 0: a free
/// slot.
static EXCLUDED_TIDS: [AtomicI32; 4] = [const { AtomicI32::new(0) }; 4];
static ANY_EXCLUDED_TID: AtomicBool = AtomicBool::new(false);

/// Process-wide fault injection (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// Nothing numbered, nothing failed.
    Off,
    /// Number the allocation points, fail none.
    Count,
    /// Fail the allocation point numbered `k` (from 0), and only that one.
    FailNth(u64),
    /// Fail every allocation point from the one numbered `k` on.
    FailFrom(u64),
}

const MODE_OFF: u8 = 0;
const MODE_COUNT: u8 = 1;
const MODE_NTH: u8 = 2;
const MODE_FROM: u8 = 3;

static MODE: AtomicU8 = AtomicU8::new(MODE_OFF);
static TARGET: AtomicU64 = AtomicU64::new(0);
/// Allocation points numbered since the mode was last set.
static NUMBERED: AtomicU64 = AtomicU64::new(0);
/// Of those, how many were failed on purpose.
static INJECTED: AtomicU64 = AtomicU64::new(0);

/// Set the process-wide injection. [`Fault::Off`] stops it and leaves the
/// counts of the run that ends readable ([`injection_report`]); any other
/// fault starts numbering again from 0. Set it while the threads under test
/// are quiet (a thread inside `rt_malloc` at that moment may number its
/// point against the old setting).
pub fn inject(fault: Fault) {
    // Off first, so that no thread numbers a point against a half-set
    // target while the counters are reset.
    MODE.store(MODE_OFF, Ordering::SeqCst);
    let (mode, k) = match fault {
        Fault::Off => return,
        Fault::Count => (MODE_COUNT, 0),
        Fault::FailNth(k) => (MODE_NTH, k),
        Fault::FailFrom(k) => (MODE_FROM, k),
    };
    NUMBERED.store(0, Ordering::SeqCst);
    INJECTED.store(0, Ordering::SeqCst);
    TARGET.store(k, Ordering::SeqCst);
    MODE.store(mode, Ordering::SeqCst);
}

/// What the process-wide injection saw since it was last set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InjectionReport {
    /// Allocation points numbered (the failed ones included).
    pub allocations: u64,
    /// Allocation points failed on purpose.
    pub injected: u64,
}

/// The counts of the current run, or of the last one once it was stopped
/// with [`Fault::Off`].
pub fn injection_report() -> InjectionReport {
    InjectionReport {
        allocations: NUMBERED.load(Ordering::SeqCst),
        injected: INJECTED.load(Ordering::SeqCst),
    }
}

/// Run `f` with this thread's allocation points left out of fault injection
/// (still counted in `used`): for host-only machinery without a board
/// counterpart that cannot report an allocation failure. Nests.
pub fn without_injection<R>(f: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            let _ = IMMUNE.try_with(|d| d.set(d.get().saturating_sub(1)));
        }
    }
    let _ = IMMUNE.try_with(|d| d.set(d.get().saturating_add(1)));
    let _leave = Leave;
    f()
}

/// Second header word: the block is not counted in `used`.
const NOT_COUNTED: usize = 1;

fn excluded() -> bool {
    if EXCLUDED.try_with(|e| e.get()).unwrap_or(false) {
        return true;
    }
    if !ANY_EXCLUDED_TID.load(Ordering::Acquire) {
        return false;
    }
    let tid = TID
        .try_with(|t| {
            if t.get() == 0 {
                // SAFETY: gettid has no preconditions.
                t.set(unsafe { libc::gettid() });
            }
            t.get()
        })
        .unwrap_or(0);
    tid != 0
        && EXCLUDED_TIDS
            .iter()
            .any(|s| s.load(Ordering::Acquire) == tid)
}

/// Leave this thread's allocations out of `used`/`max_used` and out of
/// fault injection (for test servers that share the process with the code
/// under test).
pub fn exclude_this_thread(on: bool) {
    let _ = EXCLUDED.try_with(|e| e.set(on));
}

/// [`exclude_this_thread`] for another thread, named by its kernel thread
/// id: one a test cannot run code on, such as the test harness's main
/// thread (on Linux its id is the process id), which may allocate at a
/// moment of its own while a test has process-wide injection armed. For
/// good (a few slots); false when they are all taken.
pub fn exclude_thread_id(tid: libc::pid_t) -> bool {
    if tid <= 0 {
        return false;
    }
    let taken = EXCLUDED_TIDS.iter().any(|s| {
        s.load(Ordering::Acquire) == tid
            || s.compare_exchange(0, tid, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
    });
    if taken {
        ANY_EXCLUDED_TID.store(true, Ordering::Release);
    }
    taken
}

/// Should this allocation point fail by injection? Per thread first, then
/// process-wide (which numbers it).
fn injected_failure() -> bool {
    if IMMUNE.try_with(|d| d.get() > 0).unwrap_or(false) {
        return false;
    }
    thread_failure() || process_failure()
}

fn process_failure() -> bool {
    let mode = MODE.load(Ordering::SeqCst);
    if mode == MODE_OFF {
        return false;
    }
    let n = NUMBERED.fetch_add(1, Ordering::SeqCst);
    let k = TARGET.load(Ordering::SeqCst);
    let fail = match mode {
        MODE_NTH => n == k,
        MODE_FROM => n >= k,
        _ => false,
    };
    if fail {
        INJECTED.fetch_add(1, Ordering::SeqCst);
    }
    fail
}

/// The per-thread countdown of [`rt_host_heap_fail_after`].
fn thread_failure() -> bool {
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
        let p = base.add(HEADER) as *mut c_void;
        if counted {
            super::heap_trace::born(p, size, USED.load(Ordering::Relaxed));
        }
        p
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
            super::heap_trace::died(p);
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
        // A growing block is counted as RT-Thread's heaps do it: a new block
        // of the new size while the old one is still held (small memory's
        // `rt_smem_realloc` allocates, copies, then frees), so `max_used`
        // sees both for a moment, as on the board.
        if counted && newsize > old && (injected_failure() || !reserve(newsize)) {
            return ptr::null_mut();
        }
        let base = libc::realloc(h as *mut c_void, newsize + HEADER) as *mut u8;
        if base.is_null() {
            if counted && newsize > old {
                release(newsize);
            }
            return ptr::null_mut();
        }
        let q = base.add(HEADER) as *mut c_void;
        if counted {
            super::heap_trace::died(p);
            if newsize > old {
                release(old);
            } else {
                release(old - newsize);
            }
            super::heap_trace::born(q, newsize, USED.load(Ordering::Relaxed));
        }
        *(base as *mut usize) = newsize;
        q
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

/// Per-thread fault injection: after `n` more successful allocation points
/// of the calling thread, every one of them fails until called again with
/// `n < 0`. Other threads are not affected (see [`rt_host_heap_fail_nth`]).
#[no_mangle]
pub extern "C" fn rt_host_heap_fail_after(n: libc::c_long) {
    let _ = FAIL_AFTER.try_with(|left| left.set(n));
}

/// Process-wide: fail the allocation point numbered `k` (from 0, counted
/// from this call on, every thread that is not excluded), and only that
/// one; `k < 0` turns process-wide injection off (the counts stay
/// readable).
#[no_mangle]
pub extern "C" fn rt_host_heap_fail_nth(k: libc::c_long) {
    inject(if k < 0 {
        Fault::Off
    } else {
        Fault::FailNth(k as u64)
    });
}

/// Process-wide: fail every allocation point from the one numbered `k` on;
/// `k < 0` turns process-wide injection off.
#[no_mangle]
pub extern "C" fn rt_host_heap_fail_from(k: libc::c_long) {
    inject(if k < 0 {
        Fault::Off
    } else {
        Fault::FailFrom(k as u64)
    });
}

/// Process-wide: number allocation points from now on without failing any.
#[no_mangle]
pub extern "C" fn rt_host_heap_count_allocs() {
    inject(Fault::Count);
}

/// Allocation points numbered since process-wide injection was last set
/// (failed ones included), or by the last run once it was turned off.
#[no_mangle]
pub extern "C" fn rt_host_heap_alloc_count() -> libc::c_ulong {
    injection_report().allocations as libc::c_ulong
}

/// Allocation points failed on purpose since process-wide injection was
/// last set, or by the last run once it was turned off.
#[no_mangle]
pub extern "C" fn rt_host_heap_injected_count() -> libc::c_ulong {
    injection_report().injected as libc::c_ulong
}

#[no_mangle]
pub extern "C" fn rt_host_heap_reset_max_used() {
    MAX_USED.store(USED.load(Ordering::Acquire), Ordering::Release);
}
