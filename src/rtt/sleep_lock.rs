//! A lock for state that exists before the agent starts and after it stops
//! (the runtime configuration): no kernel object to create or leak, no heap.
//! A waiter sleeps a tick between tries, so a lower-priority holder gets to
//! run and release it (a yield would only let equal priorities run). Only
//! for short critical sections: copying a few hundred bytes, or one heap
//! allocation or free (the heap never takes one of these locks, so that
//! cannot deadlock).

use crate::rtt::atomic::{AtomicBool, Ordering};

pub struct SleepLock {
    held: AtomicBool,
}

pub struct SleepLockGuard<'a> {
    lock: &'a SleepLock,
}

impl SleepLock {
    pub const fn new() -> Self {
        SleepLock {
            held: AtomicBool::new(false),
        }
    }

    pub fn lock(&self) -> SleepLockGuard<'_> {
        while self
            .held
            .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            // SAFETY: plain kernel call (thread context: the lock is never
            // taken from an interrupt).
            unsafe { super::kernel::rt_thread_mdelay(1) };
        }
        SleepLockGuard { lock: self }
    }
}

impl Default for SleepLock {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for SleepLockGuard<'_> {
    fn drop(&mut self) {
        self.lock.held.store(false, Ordering::Release);
    }
}
