//! A value behind a [`SleepLock`]: the one shape of the library's shared
//! tables (a static reached from several threads, changed in short critical
//! sections). The value is reached only through [`SleepCell::with`], so the
//! lock cannot be forgotten and no caller writes an `unsafe` block for it.
//!
//! `with` is not re-entrant: a closure that calls `with` on the same cell
//! waits for itself forever (as a second `lock()` on the same `SleepLock`
//! would). Keep the closures short and free of other cells' locks where
//! one of those could take this one.

use super::sleep_lock::SleepLock;
use core::cell::UnsafeCell;

pub struct SleepCell<T> {
    lock: SleepLock,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only inside `with`, with the lock held, so at
// most one thread holds a `&mut T` at a time; `T: Send` because a value one
// thread put in may be used (and dropped) by another.
unsafe impl<T: Send> Sync for SleepCell<T> {}

impl<T> SleepCell<T> {
    pub const fn new(value: T) -> Self {
        SleepCell {
            lock: SleepLock::new(),
            value: UnsafeCell::new(value),
        }
    }

    /// Run `f` on the value with the lock held.
    pub fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        let _held = self.lock.lock();
        // SAFETY: the lock is held until `_held` drops after `f`: this is
        // the only reference to the value meanwhile.
        f(unsafe { &mut *self.value.get() })
    }
}
