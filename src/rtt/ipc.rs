//! Kernel IPC objects as owned values: a created object is deleted when its
//! owner is dropped, so every `rt_*_create` has its `rt_*_delete` by
//! construction, on every path, failures included.
//!
//! The objects are dynamic (`rt_*_create`): they cost heap while they exist
//! and nothing afterwards, which keeps the heap at its baseline once the
//! agent is stopped. A wrapper never outlives its object, and a `&` to one is
//! all a thread needs to use it: the kernel serialises the operations.
//!
//! [`Locked`] is a value behind a kernel mutex: the one way the library
//! shares mutable state between threads.

use super::kernel::*;
use super::name::ObjectName;
use super::rt_eok;
use core::cell::UnsafeCell;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;

/// Ticks for `ms` milliseconds, at least 1 (0 would mean "do not wait").
pub fn ticks_from_ms(ms: u32) -> rt_int32_t {
    let ms = ms.min(i32::MAX as u32) as rt_int32_t;
    // SAFETY: a pure kernel conversion, callable from any thread.
    let ticks = unsafe { rt_tick_from_millisecond(ms) };
    ticks.clamp(1, i32::MAX as rt_tick_t) as rt_int32_t
}

/// An `rt_mutex` (priority inheritance, recursive for its owner, as the
/// kernel's are).
pub struct Mutex(NonNull<rt_mutex>);

// SAFETY: a kernel mutex is made to be used from any thread; the wrapper
// only holds its handle.
unsafe impl Send for Mutex {}
// SAFETY: as above: every operation on it is a kernel call that serialises
// itself.
unsafe impl Sync for Mutex {}

impl Mutex {
    /// A new mutex named `name` (as the board holds it: [`ObjectName`]
    /// bytes), or `None` without memory.
    pub fn create(name: ObjectName) -> Option<Mutex> {
        // SAFETY: `name` is NUL-terminated; the kernel copies it.
        let m = unsafe { rt_mutex_create(name.get().as_ptr(), RT_IPC_FLAG_PRIO) };
        NonNull::new(m).map(Mutex)
    }

    /// Take it, waiting up to `timeout` ticks (`RT_WAITING_FOREVER`). Returns
    /// whether it was taken: `false` on a timeout or when the kernel refuses
    /// (`-RT_ERROR` from an interrupt).
    pub fn take(&self, timeout: rt_int32_t) -> bool {
        // SAFETY: the mutex is live while `self` is.
        unsafe { rt_mutex_take(self.0.as_ptr(), timeout) == rt_eok() }
    }

    /// Give back a take of this thread's.
    pub fn release(&self) {
        // SAFETY: the mutex is live while `self` is; releasing a mutex this
        // thread does not hold is refused by the kernel, not undefined.
        unsafe { rt_mutex_release(self.0.as_ptr()) };
    }

    /// Take it, waiting as long as it takes; held until the guard drops.
    /// `None` when the kernel refuses (called from an interrupt).
    pub fn lock(&self) -> Option<MutexGuard<'_>> {
        self.take(RT_WAITING_FOREVER).then_some(MutexGuard(self))
    }
}

/// A take of a [`Mutex`], given back when dropped.
pub struct MutexGuard<'a>(&'a Mutex);

impl Drop for MutexGuard<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

impl Drop for Mutex {
    fn drop(&mut self) {
        // SAFETY: the mutex was created by `create` and this is its only
        // owner; nobody can hold it (a guard borrows the wrapper).
        unsafe { rt_mutex_delete(self.0.as_ptr()) };
    }
}

/// `T` that threads share, behind its own kernel mutex. Reached only through
/// [`Locked::lock`], whose guard gives `&mut T` while the mutex is held.
pub struct Locked<T> {
    mutex: Mutex,
    value: UnsafeCell<T>,
}

// SAFETY: `value` is only reached while `mutex` is held (see `lock`), so
// sharing a `Locked<T>` hands `T` from thread to thread, which `T: Send`
// allows.
unsafe impl<T: Send> Sync for Locked<T> {}
// SAFETY: moving the wrapper moves `T` and the mutex handle.
unsafe impl<T: Send> Send for Locked<T> {}

pub struct LockedGuard<'a, T> {
    locked: &'a Locked<T>,
}

impl<T> Locked<T> {
    /// `value` behind a new mutex named `name`, or `value` back without
    /// memory for the mutex.
    pub fn create(name: ObjectName, value: T) -> Result<Locked<T>, T> {
        match Mutex::create(name) {
            Some(mutex) => Ok(Locked {
                mutex,
                value: UnsafeCell::new(value),
            }),
            None => Err(value),
        }
    }

    /// Wait for the mutex (for ever: every holder's section is short and
    /// never waits on another thread). `None` only where the kernel refuses
    /// to wait (an interrupt).
    pub fn lock(&self) -> Option<LockedGuard<'_, T>> {
        if self.mutex.take(RT_WAITING_FOREVER) {
            Some(LockedGuard { locked: self })
        } else {
            None
        }
    }

    /// The value, without locking: `&mut self` proves no other thread can
    /// reach it.
    pub fn get_mut(&mut self) -> &mut T {
        self.value.get_mut()
    }
}

impl<T> Deref for LockedGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard exists only while this thread holds the mutex,
        // so no other reference to the value is live.
        unsafe { &*self.locked.value.get() }
    }
}

impl<T> DerefMut for LockedGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes this the only reference
        // through the guard.
        unsafe { &mut *self.locked.value.get() }
    }
}

impl<T> Drop for LockedGuard<'_, T> {
    fn drop(&mut self) {
        self.locked.mutex.release();
    }
}

/// A counting `rt_semaphore`.
pub struct Semaphore(NonNull<rt_semaphore>);

// SAFETY: a kernel semaphore is made to be used from any thread (and its
// release from interrupts); the wrapper only holds its handle.
unsafe impl Send for Semaphore {}
// SAFETY: as above.
unsafe impl Sync for Semaphore {}

impl Semaphore {
    /// A new semaphore with `value` tokens, or `None` without memory.
    pub fn create(name: ObjectName, value: u32) -> Option<Semaphore> {
        // SAFETY: `name` is NUL-terminated; the kernel copies it.
        let s = unsafe { rt_sem_create(name.get().as_ptr(), value, RT_IPC_FLAG_FIFO) };
        NonNull::new(s).map(Semaphore)
    }

    /// Take a token, waiting up to `timeout` ticks; whether one was taken.
    pub fn take(&self, timeout: rt_int32_t) -> bool {
        // SAFETY: the semaphore is live while `self` is.
        unsafe { rt_sem_take(self.0.as_ptr(), timeout) == rt_eok() }
    }

    /// Add a token, waking the first waiter. Callable from an interrupt.
    pub fn release(&self) {
        // SAFETY: the semaphore is live while `self` is.
        unsafe { rt_sem_release(self.0.as_ptr()) };
    }
}

impl Drop for Semaphore {
    fn drop(&mut self) {
        // SAFETY: created by `create`, deleted once, by its only owner.
        unsafe { rt_sem_delete(self.0.as_ptr()) };
    }
}

/// An `rt_mailbox` of word-sized values. The hub hands its two mailboxes to
/// C as raw handles ([`Mailbox::into_raw`]) and takes them back to delete
/// them ([`Mailbox::from_raw`]).
pub struct Mailbox(NonNull<rt_mailbox>);

extern "C" {
    fn agent_glue_mailbox_entries(mb: rt_mailbox_t) -> rt_uint16_t;
}

/// How many values wait in `mb` now (a snapshot; 0 for NULL). The glue reads
/// the kernel's count, whose place in `struct rt_mailbox` depends on the
/// board.
///
/// # Safety
/// `mb` is NULL or a live mailbox.
pub unsafe fn mailbox_entries(mb: rt_mailbox_t) -> u16 {
    // SAFETY: NULL or live (this function's contract); the glue only reads.
    unsafe { agent_glue_mailbox_entries(mb) }
}

// SAFETY: a kernel mailbox is made to be used from any thread; the wrapper
// only holds its handle.
unsafe impl Send for Mailbox {}
// SAFETY: as above.
unsafe impl Sync for Mailbox {}

impl Mailbox {
    /// A new mailbox of `slots` values, FIFO, or `None` without memory.
    pub fn create(name: ObjectName, slots: rt_size_t) -> Option<Mailbox> {
        // SAFETY: `name` is NUL-terminated; the kernel copies it.
        let mb = unsafe { rt_mb_create(name.get().as_ptr(), slots, RT_IPC_FLAG_FIFO) };
        NonNull::new(mb).map(Mailbox)
    }

    /// The handle, still owned by `self` (valid while it lives).
    pub fn as_raw(&self) -> rt_mailbox_t {
        self.0.as_ptr()
    }

    /// The handle, for C; the object is now the caller's to delete (through
    /// [`Mailbox::from_raw`]).
    pub fn into_raw(self) -> rt_mailbox_t {
        let raw = self.0.as_ptr();
        core::mem::forget(self);
        raw
    }

    /// Own `raw` again; `None` for NULL.
    ///
    /// # Safety
    /// `raw` is NULL or a live mailbox from [`Mailbox::into_raw`] that nobody
    /// else will use or delete.
    pub unsafe fn from_raw(raw: rt_mailbox_t) -> Option<Mailbox> {
        NonNull::new(raw).map(Mailbox)
    }

    /// Take the next value if one is there, without waiting.
    pub fn try_recv(&self) -> Option<rt_ubase_t> {
        let mut value: rt_ubase_t = 0;
        // SAFETY: the mailbox is live while `self` is; `value` is a local the
        // kernel writes one word into.
        let got = unsafe { rt_mb_recv(self.0.as_ptr(), &mut value, RT_WAITING_NO) };
        (got == rt_eok()).then_some(value)
    }
}

impl Drop for Mailbox {
    fn drop(&mut self) {
        // SAFETY: created by `create` (or given back by `from_raw`'s caller),
        // deleted once, by its only owner.
        unsafe { rt_mb_delete(self.0.as_ptr()) };
    }
}
