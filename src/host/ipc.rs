//! Mailboxes, semaphores and mutexes of the host port, with RT-Thread's
//! semantics (RT-Thread 5.3 `src/ipc.c`): timeouts in ticks
//! (`RT_WAITING_FOREVER` and any negative value wait for ever,
//! `RT_WAITING_NO` fails at once with `-RT_ETIMEOUT`, or `-RT_EFULL` for a
//! full `rt_mb_send`), negative error numbers, and waiters woken by a
//! delete: `rt_sem_take`/`rt_mutex_take` return `-RT_ERROR`, but
//! `rt_mb_recv`/`rt_mb_send_wait` return the kernel's thread error as it is,
//! i.e. **positive** `RT_ERROR` (5.3 resumes them with `RT_ERROR` and the
//! mailbox paths do not negate it). A mutex holds at most 255 times
//! (`RT_MUTEX_HOLD_MAX`), then `-RT_EFULL`.
//!
//! Objects are allocated on the accounting heap (through the global
//! allocator) at creation, as the kernel allocates them from its heap; send
//! and receive never allocate.

use super::ticks_to_duration;
use crate::rtt::*;
use core::ffi::c_char;
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;

/// When a blocking wait gives up.
enum Deadline {
    Never,
    Now,
    At(Instant),
}

impl Deadline {
    fn from_ticks(timeout: rt_int32_t) -> Self {
        if timeout == RT_WAITING_FOREVER || timeout < 0 {
            Deadline::Never
        } else if timeout == RT_WAITING_NO {
            Deadline::Now
        } else {
            Deadline::At(Instant::now() + ticks_to_duration(timeout as i64))
        }
    }
}

/// Wait on `cond` until `ready` holds, the object is deleted, or the deadline
/// passes. Returns the guard and `Ok(())`, or the kernel's error number.
fn wait_until<'a, T>(
    cond: &Condvar,
    mut guard: MutexGuard<'a, T>,
    deadline: &Deadline,
    ready: impl Fn(&T) -> bool,
    deleted: impl Fn(&T) -> bool,
) -> (MutexGuard<'a, T>, Result<(), rt_err_t>) {
    loop {
        if deleted(&guard) {
            return (guard, Err(-rt_error()));
        }
        if ready(&guard) {
            return (guard, Ok(()));
        }
        match deadline {
            Deadline::Now => return (guard, Err(-rt_etimeout())),
            Deadline::Never => guard = cond.wait(guard).unwrap_or_else(|e| e.into_inner()),
            Deadline::At(at) => {
                let now = Instant::now();
                if now >= *at {
                    return (guard, Err(-rt_etimeout()));
                }
                guard = cond
                    .wait_timeout(guard, *at - now)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        }
    }
}

/// Move `value` to the heap, or return NULL when the heap refuses (a kernel
/// object creation fails; it never aborts).
pub(crate) fn try_box<T>(value: T) -> *mut T {
    const { assert!(core::mem::size_of::<T>() != 0) };
    let layout = std::alloc::Layout::new::<T>();
    // SAFETY: `T` is not zero-sized (asserted at compile time), as `alloc`
    // requires; the block is checked for NULL, then initialised with a write.
    unsafe {
        let p = std::alloc::alloc(layout) as *mut T;
        if !p.is_null() {
            p.write(value);
        }
        p
    }
}

/// Drop and free a value made by [`try_box`].
///
/// # Safety
/// `p` came from `try_box::<T>` and is not used afterwards.
pub(crate) unsafe fn free_box<T>(p: *mut T) {
    // SAFETY: `p` is a live, initialised `T` from `try_box` that nobody uses
    // afterwards (our contract), allocated with `T`'s own layout.
    unsafe {
        core::ptr::drop_in_place(p);
        std::alloc::dealloc(p as *mut u8, std::alloc::Layout::new::<T>());
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Wake every waiter with a "deleted" error and wait for them to leave, so
/// that the object can be freed.
fn retire<T>(m: &Mutex<T>, cond: &Condvar, mark: impl Fn(&mut T), waiters: impl Fn(&T) -> usize) {
    let mut g = lock(m);
    mark(&mut g);
    cond.notify_all();
    while waiters(&g) > 0 {
        g = cond.wait(g).unwrap_or_else(|e| e.into_inner());
    }
}

// ---- mailboxes -----------------------------------------------------------

struct MbState {
    queue: VecDeque<rt_ubase_t>,
    size: usize,
    deleted: bool,
    waiters: usize,
}

/// `repr(C)` with `entry` first: the host headers declare `struct
/// rt_mailbox` as that one member, which the glue reads as on a board.
#[repr(C)]
pub struct HostMailbox {
    /// How many values wait (the real mailbox's `entry`), kept equal to the
    /// queue's length under the state lock.
    entry: core::sync::atomic::AtomicU16,
    state: Mutex<MbState>,
    cond: Condvar,
}

fn mailbox<'a>(mb: rt_mailbox_t) -> Option<&'a HostMailbox> {
    // SAFETY: not checkable here: the exports take kernel handles on the
    // kernel's terms, and a non-NULL rt_mailbox_t of the host port is a live
    // HostMailbox from rt_mb_create (a stale one is UB, as on a board).
    (!mb.is_null()).then(|| unsafe { &*(mb as *const HostMailbox) })
}

#[no_mangle]
pub extern "C" fn rt_mb_create(
    _name: *const c_char,
    size: rt_size_t,
    _flag: rt_uint8_t,
) -> rt_mailbox_t {
    let mut queue = VecDeque::new();
    if size == 0 || queue.try_reserve_exact(size).is_err() {
        return core::ptr::null_mut();
    }
    let mb = HostMailbox {
        entry: core::sync::atomic::AtomicU16::new(0),
        state: Mutex::new(MbState {
            queue,
            size,
            deleted: false,
            waiters: 0,
        }),
        cond: Condvar::new(),
    };
    try_box(mb) as rt_mailbox_t
}

#[no_mangle]
pub extern "C" fn rt_mb_delete(mb: rt_mailbox_t) -> rt_err_t {
    let Some(m) = mailbox(mb) else {
        return -rt_error();
    };
    retire(&m.state, &m.cond, |s| s.deleted = true, |s| s.waiters);
    // SAFETY: created by try_box in rt_mb_create; no waiter is left.
    unsafe { free_box(mb as *mut HostMailbox) };
    rt_eok()
}

/// RT-Thread 5.3's mailbox waits return `thread->error` unchanged: a
/// delete's `RT_ERROR` comes back positive.
fn mailbox_error(e: rt_err_t) -> rt_err_t {
    if e == -rt_error() {
        rt_error()
    } else {
        e
    }
}

fn mb_send(mb: rt_mailbox_t, value: rt_ubase_t, timeout: rt_int32_t) -> rt_err_t {
    let Some(m) = mailbox(mb) else {
        return -rt_error();
    };
    let mut g = lock(&m.state);
    if g.queue.len() >= g.size && timeout == RT_WAITING_NO {
        return -rt_efull();
    }
    g.waiters += 1;
    let (mut g, r) = wait_until(
        &m.cond,
        g,
        &Deadline::from_ticks(timeout),
        |s| s.queue.len() < s.size,
        |s| s.deleted,
    );
    g.waiters -= 1;
    if let Err(e) = r {
        m.cond.notify_all();
        return mailbox_error(e);
    }
    g.queue.push_back(value);
    m.entry
        .store(g.queue.len() as u16, core::sync::atomic::Ordering::Release);
    m.cond.notify_all();
    rt_eok()
}

#[no_mangle]
pub extern "C" fn rt_mb_send(mb: rt_mailbox_t, value: rt_ubase_t) -> rt_err_t {
    mb_send(mb, value, RT_WAITING_NO)
}

#[no_mangle]
pub extern "C" fn rt_mb_send_wait(
    mb: rt_mailbox_t,
    value: rt_ubase_t,
    timeout: rt_int32_t,
) -> rt_err_t {
    mb_send(mb, value, timeout)
}

/// Take the next value of the mailbox, waiting up to `timeout` ticks.
///
/// # Safety
/// `value` is NULL or valid for a write of an `rt_ubase_t` (and `mb`, as
/// for every mailbox call, NULL or a live mailbox).
#[no_mangle]
pub unsafe extern "C" fn rt_mb_recv(
    mb: rt_mailbox_t,
    value: *mut rt_ubase_t,
    timeout: rt_int32_t,
) -> rt_err_t {
    let Some(m) = mailbox(mb) else {
        return -rt_error();
    };
    let mut g = lock(&m.state);
    g.waiters += 1;
    let (mut g, r) = wait_until(
        &m.cond,
        g,
        &Deadline::from_ticks(timeout),
        |s| !s.queue.is_empty(),
        |s| s.deleted,
    );
    g.waiters -= 1;
    if let Err(e) = r {
        m.cond.notify_all();
        return mailbox_error(e);
    }
    let v = g.queue.pop_front().unwrap_or(0);
    m.entry
        .store(g.queue.len() as u16, core::sync::atomic::Ordering::Release);
    if !value.is_null() {
        // SAFETY: `value` is non-NULL and writable (our contract).
        unsafe { *value = v };
    }
    m.cond.notify_all();
    rt_eok()
}

// ---- message queues ------------------------------------------------------
// RT-Thread 5.3 `src/ipc.c`: messages of at most `msg_size` bytes, copied in
// and out; a send of more than `msg_size` bytes is `-RT_ERROR`, a full queue
// `-RT_EFULL` (rt_mq_send does not wait); rt_mq_recv returns the length of
// the message (cut to the caller's size), `-RT_ETIMEOUT`, or a delete's
// positive `RT_ERROR` as the thread's error.

struct MqState {
    queue: VecDeque<Vec<u8>>,
    /// The message slots not in use, each with room for `msg_size` bytes:
    /// made at creation (the kernel's pool), so sends never allocate.
    free: Vec<Vec<u8>>,
    msg_size: usize,
    max_msgs: usize,
    deleted: bool,
    waiters: usize,
}

pub struct HostMessageQueue {
    state: Mutex<MqState>,
    cond: Condvar,
}

fn message_queue<'a>(mq: rt_mq_t) -> Option<&'a HostMessageQueue> {
    // SAFETY: as for mailboxes: a non-NULL rt_mq_t of the host port is a
    // live HostMessageQueue from rt_mq_create (a stale one is UB, as on a
    // board).
    (!mq.is_null()).then(|| unsafe { &*(mq as *const HostMessageQueue) })
}

#[no_mangle]
pub extern "C" fn rt_mq_create(
    _name: *const c_char,
    msg_size: rt_size_t,
    max_msgs: rt_size_t,
    _flag: rt_uint8_t,
) -> rt_mq_t {
    let mut queue = VecDeque::new();
    let mut free = Vec::new();
    if msg_size == 0
        || max_msgs == 0
        || queue.try_reserve_exact(max_msgs).is_err()
        || free.try_reserve_exact(max_msgs).is_err()
    {
        return core::ptr::null_mut();
    }
    for _ in 0..max_msgs {
        let mut slot = Vec::new();
        if slot.try_reserve_exact(msg_size).is_err() {
            return core::ptr::null_mut();
        }
        free.push(slot);
    }
    let mq = HostMessageQueue {
        state: Mutex::new(MqState {
            queue,
            free,
            msg_size,
            max_msgs,
            deleted: false,
            waiters: 0,
        }),
        cond: Condvar::new(),
    };
    try_box(mq) as rt_mq_t
}

#[no_mangle]
pub extern "C" fn rt_mq_delete(mq: rt_mq_t) -> rt_err_t {
    let Some(m) = message_queue(mq) else {
        return -rt_error();
    };
    retire(&m.state, &m.cond, |s| s.deleted = true, |s| s.waiters);
    // SAFETY: created by try_box in rt_mq_create; no waiter is left.
    unsafe { free_box(mq as *mut HostMessageQueue) };
    rt_eok()
}

/// Copy `size` bytes at `buffer` to the end of the queue.
///
/// # Safety
/// `buffer` is valid for `size` bytes (and `mq` NULL or a live queue).
#[no_mangle]
pub unsafe extern "C" fn rt_mq_send(
    mq: rt_mq_t,
    buffer: *const core::ffi::c_void,
    size: rt_size_t,
) -> rt_err_t {
    let Some(m) = message_queue(mq) else {
        return -rt_error();
    };
    if buffer.is_null() || size == 0 {
        return -rt_error();
    }
    let mut g = lock(&m.state);
    if size > g.msg_size {
        return -rt_error();
    }
    if g.queue.len() >= g.max_msgs {
        return -rt_efull();
    }
    let Some(mut msg) = g.free.pop() else {
        return -rt_efull();
    };
    msg.clear();
    // SAFETY: `buffer` is valid for `size` bytes (our contract); the slot
    // has room for `msg_size` >= `size` bytes, so this does not allocate.
    msg.extend_from_slice(unsafe { core::slice::from_raw_parts(buffer as *const u8, size) });
    g.queue.push_back(msg);
    m.cond.notify_all();
    rt_eok()
}

/// Take the next message into `buffer` (at most `size` bytes), waiting up
/// to `timeout` ticks: its length, or a kernel error.
///
/// # Safety
/// `buffer` is valid for writes of `size` bytes (and `mq` NULL or live).
#[no_mangle]
pub unsafe extern "C" fn rt_mq_recv(
    mq: rt_mq_t,
    buffer: *mut core::ffi::c_void,
    size: rt_size_t,
    timeout: rt_int32_t,
) -> rt_ssize_t {
    let Some(m) = message_queue(mq) else {
        return -rt_error();
    };
    if buffer.is_null() || size == 0 {
        return -rt_error();
    }
    let mut g = lock(&m.state);
    g.waiters += 1;
    let (mut g, r) = wait_until(
        &m.cond,
        g,
        &Deadline::from_ticks(timeout),
        |s| !s.queue.is_empty(),
        |s| s.deleted,
    );
    g.waiters -= 1;
    if let Err(e) = r {
        m.cond.notify_all();
        return mailbox_error(e);
    }
    let Some(msg) = g.queue.pop_front() else {
        return -rt_error();
    };
    let len = msg.len().min(size);
    // SAFETY: `buffer` is valid for `size` >= `len` bytes (our contract).
    unsafe { core::ptr::copy_nonoverlapping(msg.as_ptr(), buffer as *mut u8, len) };
    g.free.push(msg);
    m.cond.notify_all();
    len as rt_ssize_t
}

// ---- semaphores ----------------------------------------------------------

struct SemState {
    value: u32,
    deleted: bool,
    waiters: usize,
}

pub struct HostSemaphore {
    state: Mutex<SemState>,
    cond: Condvar,
}

fn semaphore<'a>(sem: rt_sem_t) -> Option<&'a HostSemaphore> {
    // SAFETY: not checkable here: the exports take kernel handles on the
    // kernel's terms, and a non-NULL rt_sem_t of the host port is a live
    // HostSemaphore from rt_sem_create (a stale one is UB, as on a board).
    (!sem.is_null()).then(|| unsafe { &*(sem as *const HostSemaphore) })
}

#[no_mangle]
pub extern "C" fn rt_sem_create(
    _name: *const c_char,
    value: rt_uint32_t,
    _flag: rt_uint8_t,
) -> rt_sem_t {
    let s = HostSemaphore {
        state: Mutex::new(SemState {
            value,
            deleted: false,
            waiters: 0,
        }),
        cond: Condvar::new(),
    };
    try_box(s) as rt_sem_t
}

#[no_mangle]
pub extern "C" fn rt_sem_delete(sem: rt_sem_t) -> rt_err_t {
    let Some(s) = semaphore(sem) else {
        return -rt_error();
    };
    retire(&s.state, &s.cond, |st| st.deleted = true, |st| st.waiters);
    // SAFETY: created by try_box; no waiter is left.
    unsafe { free_box(sem as *mut HostSemaphore) };
    rt_eok()
}

#[no_mangle]
pub extern "C" fn rt_sem_take(sem: rt_sem_t, timeout: rt_int32_t) -> rt_err_t {
    let Some(s) = semaphore(sem) else {
        return -rt_error();
    };
    let mut g = lock(&s.state);
    g.waiters += 1;
    let (mut g, r) = wait_until(
        &s.cond,
        g,
        &Deadline::from_ticks(timeout),
        |st| st.value > 0,
        |st| st.deleted,
    );
    g.waiters -= 1;
    if let Err(e) = r {
        s.cond.notify_all();
        return e;
    }
    g.value -= 1;
    rt_eok()
}

#[no_mangle]
pub extern "C" fn rt_sem_trytake(sem: rt_sem_t) -> rt_err_t {
    rt_sem_take(sem, RT_WAITING_NO)
}

#[no_mangle]
pub extern "C" fn rt_sem_release(sem: rt_sem_t) -> rt_err_t {
    let Some(s) = semaphore(sem) else {
        return -rt_error();
    };
    let mut g = lock(&s.state);
    if g.value == u32::from(u16::MAX) {
        return -rt_efull();
    }
    g.value += 1;
    s.cond.notify_all();
    rt_eok()
}

// ---- mutexes (recursive for their owner, as RT-Thread's) -----------------

/// RT-Thread's `RT_MUTEX_HOLD_MAX` (`RT_UINT8_MAX`).
const RT_MUTEX_HOLD_MAX: u32 = 255;

struct MutexState {
    owner: rt_thread_t,
    hold: u32,
    deleted: bool,
    waiters: usize,
}

pub struct HostMutex {
    state: Mutex<MutexState>,
    cond: Condvar,
}

// SAFETY: the owner pointer is only compared, never dereferenced.
unsafe impl Send for MutexState {}

fn host_mutex<'a>(m: rt_mutex_t) -> Option<&'a HostMutex> {
    // SAFETY: not checkable here: the exports take kernel handles on the
    // kernel's terms, and a non-NULL rt_mutex_t of the host port is a live
    // HostMutex from rt_mutex_create (a stale one is UB, as on a board).
    (!m.is_null()).then(|| unsafe { &*(m as *const HostMutex) })
}

#[no_mangle]
pub extern "C" fn rt_mutex_create(_name: *const c_char, _flag: rt_uint8_t) -> rt_mutex_t {
    let m = HostMutex {
        state: Mutex::new(MutexState {
            owner: core::ptr::null_mut(),
            hold: 0,
            deleted: false,
            waiters: 0,
        }),
        cond: Condvar::new(),
    };
    try_box(m) as rt_mutex_t
}

#[no_mangle]
pub extern "C" fn rt_mutex_delete(mutex: rt_mutex_t) -> rt_err_t {
    let Some(m) = host_mutex(mutex) else {
        return -rt_error();
    };
    retire(&m.state, &m.cond, |st| st.deleted = true, |st| st.waiters);
    // SAFETY: created by try_box; no waiter is left.
    unsafe { free_box(mutex as *mut HostMutex) };
    rt_eok()
}

#[no_mangle]
pub extern "C" fn rt_mutex_take(mutex: rt_mutex_t, timeout: rt_int32_t) -> rt_err_t {
    let Some(m) = host_mutex(mutex) else {
        return -rt_error();
    };
    let me = super::thread::rt_thread_self();
    let mut g = lock(&m.state);
    if g.hold > 0 && g.owner == me {
        if g.hold >= RT_MUTEX_HOLD_MAX {
            return -rt_efull();
        }
        g.hold += 1;
        return rt_eok();
    }
    g.waiters += 1;
    let (mut g, r) = wait_until(
        &m.cond,
        g,
        &Deadline::from_ticks(timeout),
        |st| st.hold == 0,
        |st| st.deleted,
    );
    g.waiters -= 1;
    if let Err(e) = r {
        m.cond.notify_all();
        return e;
    }
    g.owner = me;
    g.hold = 1;
    rt_eok()
}

#[no_mangle]
pub extern "C" fn rt_mutex_release(mutex: rt_mutex_t) -> rt_err_t {
    let Some(m) = host_mutex(mutex) else {
        return -rt_error();
    };
    let mut g = lock(&m.state);
    if g.hold == 0 || g.owner != super::thread::rt_thread_self() {
        return -rt_error();
    }
    g.hold -= 1;
    if g.hold == 0 {
        g.owner = core::ptr::null_mut();
        m.cond.notify_all();
    }
    rt_eok()
}
