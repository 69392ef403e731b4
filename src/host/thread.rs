//! Threads and time of the host port. Each `rt_thread_create`d thread is a
//! real OS thread; `rt_thread_self` works on it and on threads the port did
//! not create. A finished thread is reaped (joined) by `rt_memory_info`, as
//! a kernel's idle thread frees a defunct thread, so heap figures settle.

use super::ipc::{free_box, try_box};
use super::ticks_to_duration;
use crate::rtt::*;
use core::cell::Cell;
use core::ffi::{c_char, c_void, CStr};
use core::ptr;
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::Instant;

pub struct HostThread {
    name: [u8; 16],
    entry: Option<unsafe extern "C" fn(*mut c_void)>,
    parameter: *mut c_void,
    stack_size: usize,
    /// The stack's bytes on the heap, as `rt_thread_create` takes them from
    /// `rt_malloc` on a board (the OS thread runs on its own stack; this
    /// block only keeps the heap figures a board's).
    stack: *mut u8,
    started: bool,
}

thread_local! {
    static CURRENT: Cell<*mut HostThread> = const { Cell::new(ptr::null_mut()) };
    /// What rt_thread_self returns on a thread the port did not create.
    static FOREIGN: HostThread = const {
        HostThread { name: *b"host\0\0\0\0\0\0\0\0\0\0\0\0", entry: None, parameter: ptr::null_mut(), stack_size: 0, stack: ptr::null_mut(), started: true }
    };
}

/// Stack high-water marks per thread name (deepest use seen), measured by
/// painting each thread's unused stack at start and scanning it at exit.
static HIGH_WATER: Mutex<[([u8; 16], usize); 16]> = Mutex::new([([0; 16], 0); 16]);

const PAINT: u8 = 0xA5;
/// Left unpainted at the low end (guard area, red zone of signal frames).
const LOW_MARGIN: usize = 16 * 1024;

/// This thread's stack as (lowest address, highest address).
fn stack_bounds() -> Option<(usize, usize)> {
    // SAFETY: pthread calls on the calling thread with local out-parameters.
    unsafe {
        let mut attr: libc::pthread_attr_t = core::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) != 0 {
            return None;
        }
        let mut addr: *mut c_void = ptr::null_mut();
        let mut size: libc::size_t = 0;
        let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
        libc::pthread_attr_destroy(&mut attr);
        ok.then(|| (addr as usize, addr as usize + size))
    }
}

/// Fill the unused part of this thread's stack (below the caller's frame)
/// with a pattern.
///
/// Not under valgrind: memcheck marks stack memory a thread has popped as
/// inaccessible, so reading the pattern back after a deep call (the agent
/// loop's) would be reported as invalid reads. Valgrind's preload library in
/// `LD_PRELOAD` tells it is there.
#[inline(never)]
fn paint_stack() -> Option<(usize, usize)> {
    static UNDER_VALGRIND: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let valgrind = *UNDER_VALGRIND
        .get_or_init(|| std::env::var("LD_PRELOAD").is_ok_and(|v| v.contains("vgpreload")));
    if valgrind {
        return None;
    }
    let (low, high) = stack_bounds()?;
    let marker = 0u8;
    let sp = &marker as *const u8 as usize;
    let start = low + LOW_MARGIN;
    let end = sp.checked_sub(4096)?;
    if end <= start {
        return None;
    }
    // SAFETY: [start, end) lies inside this thread's own stack, below the
    // live frames (4 KB under this one), above the guard area: memory no
    // object occupies.
    unsafe { ptr::write_bytes(start as *mut u8, PAINT, end - start) };
    Some((start, high))
}

/// Deepest stack use since `paint_stack`, in bytes from the stack's top.
fn measure_stack(painted: (usize, usize)) -> usize {
    let (start, high) = painted;
    let mut at = start;
    // SAFETY: reading this thread's own stack in the painted range.
    while at < high && unsafe { ptr::read_volatile(at as *const u8) } == PAINT {
        at += 1;
    }
    high - at
}

fn record_high_water(name: &[u8; 16], used: usize) {
    let mut table = HIGH_WATER.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(slot) = table.iter_mut().find(|(n, _)| n == name) {
        slot.1 = slot.1.max(used);
    } else if let Some(slot) = table.iter_mut().find(|(n, _)| n[0] == 0) {
        *slot = (*name, used);
    }
}

/// The deepest stack use measured for threads named `name`, in bytes.
pub fn stack_high_water(name: &str) -> Option<usize> {
    let table = HIGH_WATER.lock().unwrap_or_else(|e| e.into_inner());
    table
        .iter()
        .find(|(n, _)| n[0] != 0 && n.split(|&b| b == 0).next() == Some(name.as_bytes()))
        .map(|(_, v)| *v)
}

/// Forget the measured high-water marks.
pub fn reset_stack_high_water() {
    *HIGH_WATER.lock().unwrap_or_else(|e| e.into_inner()) = [([0; 16], 0); 16];
}

/// Extra room every host thread gets on top of the stack it asked for: the
/// host's libc and std need more than a microcontroller's code does.
const HOST_STACK_EXTRA: usize = 256 * 1024;

const SLOTS: usize = 64;
static RUNNING: Mutex<[Option<JoinHandle<()>>; SLOTS]> = Mutex::new([const { None }; SLOTS]);

/// Join every started thread whose entry function has returned (never the
/// calling thread).
pub fn reap_finished() {
    let me = std::thread::current().id();
    let mut slots = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    for slot in slots.iter_mut() {
        let done = matches!(slot, Some(h) if h.is_finished() && h.thread().id() != me);
        if done {
            if let Some(h) = slot.take() {
                let _ = h.join();
            }
        }
    }
}

/// Wait (up to `timeout`) until every thread the port started has ended and
/// been reaped, as a board's idle thread eventually frees defunct threads.
/// Tests call it before reading exact heap figures. True when all are gone.
pub fn settle(timeout: std::time::Duration) -> bool {
    let until = Instant::now() + timeout;
    loop {
        reap_finished();
        let idle = RUNNING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .all(Option::is_none);
        if idle {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

/// Create a thread record (started by `rt_thread_startup`); NULL when
/// `entry` is NULL or the heap refuses the record or its stack block.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `entry` may be called with `parameter`
/// on another thread once the thread is started (`parameter` must be valid
/// there for as long as `entry` uses it).
#[no_mangle]
pub unsafe extern "C" fn rt_thread_create(
    name: *const c_char,
    entry: Option<unsafe extern "C" fn(*mut c_void)>,
    parameter: *mut c_void,
    stack_size: rt_uint32_t,
    _priority: rt_uint8_t,
    _tick: rt_uint32_t,
) -> rt_thread_t {
    if entry.is_none() {
        return ptr::null_mut();
    }
    let mut buf = [0u8; 16];
    if !name.is_null() {
        // SAFETY: `name` is non-NULL and NUL-terminated (our contract).
        let bytes = unsafe { CStr::from_ptr(name) }.to_bytes();
        let n = bytes.len().min(15);
        buf[..n].copy_from_slice(&bytes[..n]);
    }
    let Ok(layout) = stack_layout(stack_size as usize) else {
        return ptr::null_mut();
    };
    // SAFETY: a non-zero size (stack_layout); checked for NULL.
    let stack = unsafe { std::alloc::alloc(layout) };
    if stack.is_null() {
        return ptr::null_mut();
    }
    let t = try_box(HostThread {
        name: buf,
        entry,
        parameter,
        stack_size: stack_size as usize,
        stack,
        started: false,
    });
    if t.is_null() {
        // SAFETY: allocated just above with this layout.
        unsafe { std::alloc::dealloc(stack, layout) };
        return ptr::null_mut();
    }
    live_insert(t);
    t as rt_thread_t
}

fn stack_layout(size: usize) -> Result<std::alloc::Layout, std::alloc::LayoutError> {
    std::alloc::Layout::from_size_align(size.max(1), 8)
}

/// Free a record and its stack block (a defunct thread's end on a board).
///
/// # Safety
/// `t` is a live record from `rt_thread_create` that nothing uses any more.
unsafe fn free_record(t: *mut HostThread) {
    // Freed while LIVE is held: once `rt_thread_find` no longer sees the
    // thread, its memory is back too (a caller waiting for a thread to go
    // compares heap figures next).
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(slot) = live.iter_mut().find(|s| **s == t as usize) {
        *slot = 0;
    }
    // SAFETY: (caller's contract) the record is live; its stack block was
    // allocated with this layout by rt_thread_create.
    unsafe {
        if let Ok(layout) = stack_layout((*t).stack_size) {
            std::alloc::dealloc((*t).stack, layout);
        }
        free_box(t);
    }
    drop(live);
}

struct SendPtr(*mut HostThread);
// SAFETY: the record is handed to the new thread, which alone uses it from
// then on (and frees it when its entry returns, like a defunct kernel thread).
unsafe impl Send for SendPtr {}

#[no_mangle]
pub extern "C" fn rt_thread_startup(thread: rt_thread_t) -> rt_err_t {
    let t = thread as *mut HostThread;
    if t.is_null() {
        return -rt_error();
    }
    // SAFETY: a live record from rt_thread_create (caller's contract).
    let rec = unsafe { &mut *t };
    if rec.started {
        return -rt_error();
    }
    rec.started = true;
    let stack = rec.stack_size.saturating_add(HOST_STACK_EXTRA);
    let handoff = SendPtr(t);
    // The OS thread gets no name: std would copy it onto the heap as the
    // thread starts and free it after the thread's record, so heap figures
    // read right after a thread ended would count it (on a board the name
    // lives in the control block). The name stays in the record.
    // std's spawn allocates infallibly (an abort at out of memory); a
    // board's rt_thread_startup allocates nothing, so injected failures
    // must not land here (still counted in `used`).
    let spawned = super::heap::without_injection(|| {
        std::thread::Builder::new()
            .stack_size(stack)
            .spawn(move || {
                let handoff = handoff;
                let t = handoff.0;
                CURRENT.with(|c| c.set(t));
                // SAFETY: the record stays alive until freed below, by this thread
                // (its only user from now on); calling `entry` with `parameter`
                // here is what rt_thread_create's caller allowed.
                unsafe {
                    let name = (*t).name;
                    let painted = paint_stack();
                    if let Some(entry) = (*t).entry {
                        entry((*t).parameter);
                    }
                    if let Some(p) = painted {
                        record_high_water(&name, measure_stack(p));
                    }
                    CURRENT.with(|c| c.set(ptr::null_mut()));
                    free_record(t);
                }
            })
    });
    match spawned {
        Ok(handle) => {
            let mut slots = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(slot) = slots.iter_mut().find(|s| s.is_none()) {
                *slot = Some(handle);
            }
            rt_eok()
        }
        Err(_) => {
            rec.started = false;
            -rt_error()
        }
    }
}

/// Deletes a thread that was never started. A running host thread cannot be
/// killed from outside (the kernel could): that returns `-RT_ERROR`.
#[no_mangle]
pub extern "C" fn rt_thread_delete(thread: rt_thread_t) -> rt_err_t {
    let t = thread as *mut HostThread;
    if t.is_null() {
        return -rt_error();
    }
    // SAFETY: a live record (caller's contract); an unstarted one is owned by
    // nobody else.
    unsafe {
        if (*t).started {
            return -rt_error();
        }
        free_record(t);
    }
    rt_eok()
}

/// Records of created threads that are not freed yet, by address: what the
/// kernel's object container holds, so `rt_thread_find` sees a finished
/// thread until it is reaped, as on a board until the idle thread frees it.
static LIVE: Mutex<[usize; SLOTS]> = Mutex::new([0; SLOTS]);

fn live_insert(t: *mut HostThread) {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(slot) = live.iter_mut().find(|s| **s == 0) {
        *slot = t as usize;
    }
}

/// `rt_thread_find`: the first live thread with this name (names compared
/// over RT_NAME_MAX bytes, as `rt_object_find` does), or NULL.
///
/// # Safety
/// `name` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn rt_thread_find(name: *mut c_char) -> rt_thread_t {
    if name.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: `name` is non-NULL and NUL-terminated (our contract).
    let wanted = unsafe { CStr::from_ptr(name) }.to_bytes();
    let wanted = &wanted[..wanted.len().min(15)];
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    for &addr in live.iter().filter(|a| **a != 0) {
        // SAFETY: records in LIVE are alive (removed before they are freed).
        let rec = unsafe { &*(addr as *const HostThread) };
        let len = rec
            .name
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(rec.name.len());
        if &rec.name[..len] == wanted {
            return addr as rt_thread_t;
        }
    }
    ptr::null_mut()
}

#[no_mangle]
pub extern "C" fn rt_thread_self() -> rt_thread_t {
    let cur = CURRENT.with(|c| c.get());
    if !cur.is_null() {
        return cur as rt_thread_t;
    }
    FOREIGN.with(|f| f as *const HostThread as rt_thread_t)
}

#[no_mangle]
pub extern "C" fn rt_thread_delay(tick: rt_tick_t) -> rt_err_t {
    std::thread::sleep(ticks_to_duration(tick as i64));
    rt_eok()
}

#[no_mangle]
pub extern "C" fn rt_thread_mdelay(ms: rt_int32_t) -> rt_err_t {
    rt_thread_delay(rt_tick_from_millisecond(ms.max(0)))
}

#[no_mangle]
pub extern "C" fn rt_thread_yield() -> rt_err_t {
    std::thread::yield_now();
    rt_eok()
}

#[no_mangle]
pub extern "C" fn rt_interrupt_get_nest() -> rt_uint8_t {
    0
}

static BOOT: OnceLock<Instant> = OnceLock::new();

#[no_mangle]
pub extern "C" fn rt_tick_get() -> rt_tick_t {
    let boot = BOOT.get_or_init(Instant::now);
    let tps = board().tick_per_second.max(1) as u64;
    // Whole seconds and the microseconds of the last one apart, in u64: the
    // same floor as (microseconds * tps / 10^6), without 128-bit division
    // (the chat client reads the tick twice per body read, and the port's
    // cost should not blur the library's in instruction counts).
    let elapsed = boot.elapsed();
    (elapsed.as_secs() * tps + u64::from(elapsed.subsec_micros()) * tps / 1_000_000) as rt_tick_t
}

#[no_mangle]
pub extern "C" fn rt_tick_from_millisecond(ms: rt_int32_t) -> rt_tick_t {
    if ms < 0 {
        return RT_WAITING_FOREVER as rt_tick_t;
    }
    let tps = board().tick_per_second.max(1) as u64;
    ((ms as u64 * tps).div_ceil(1000)) as rt_tick_t
}
