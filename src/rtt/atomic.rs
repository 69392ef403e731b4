//! Atomics on every board: core's where the CPU has compare-and-swap;
//! on CPUs without it (Cortex-M0/M0+ such as the RP2040, RISC-V without the
//! A extension such as the ESP32-C3: Rust's `thumbv6m-none-eabi`,
//! `riscv32imc-unknown-none-elf`, ...) core offers only loads and stores,
//! and every read-modify-write here runs under the kernel's interrupt lock
//! instead, as RT-Thread's own soft atomics do on those CPUs.
//!
//! The lock is `rt_hw_interrupt_disable`/`rt_hw_interrupt_enable` through
//! the C glue (`glue/agent_atomic.c`): with `RT_USING_SMP` they are macros
//! (`rt_cpus_lock`), which Rust cannot call. On a single core, no thread or
//! interrupt runs between the lock and the unlock, so the load and the store
//! inside are one step; with SMP, `rt_cpus_lock` excludes the other cores
//! too. The types have the methods of core's that the library uses, with the
//! same signatures, so the rest of the library does not know which it has.
//! The lock is taken only around the few read-modify-writes of an agent
//! turn, never around a blocking call.

#[cfg(target_has_atomic = "ptr")]
pub use core::sync::atomic::{
    AtomicBool, AtomicI32, AtomicIsize, AtomicPtr, AtomicU16, AtomicU8, AtomicUsize, Ordering,
};

#[cfg(not(target_has_atomic = "ptr"))]
pub use core::sync::atomic::Ordering;
#[cfg(not(target_has_atomic = "ptr"))]
pub use locked::{AtomicBool, AtomicI32, AtomicIsize, AtomicPtr, AtomicU16, AtomicU8, AtomicUsize};

/// The locked atomics. Built for the host port too, where its tests run
/// them against the port's `rt_hw_interrupt_disable` from many threads.
#[cfg(any(not(target_has_atomic = "ptr"), feature = "host-port"))]
#[allow(dead_code)] // each board uses the methods its parts need
pub(crate) mod locked {
    use core::sync::atomic::{self as core_atomic, Ordering};

    extern "C" {
        /// `rt_hw_interrupt_disable()` (glue/agent_atomic.c).
        fn agent_atomic_lock() -> crate::rtt::kernel::rt_base_t;
        /// `rt_hw_interrupt_enable(level)`.
        fn agent_atomic_unlock(level: crate::rtt::kernel::rt_base_t);
    }

    /// Run `f` under the kernel's interrupt lock.
    #[inline(never)]
    fn locked<R>(f: impl FnOnce() -> R) -> R {
        // SAFETY: the kernel's interrupt lock, taken and given back in
        // pairs on the same thread; nothing inside blocks.
        let level = unsafe { agent_atomic_lock() };
        let r = f();
        // SAFETY: `level` is what the matching lock returned.
        unsafe { agent_atomic_unlock(level) };
        r
    }

    /// Loads and stores inside the lock: relaxed is enough, the lock
    /// orders them (and the calls to C are compiler barriers).
    const IN: Ordering = Ordering::Relaxed;

    /// A value the lock guards: core's atomic, for its loads and stores.
    trait Word {
        type V: Copy + PartialEq;
        fn get(&self) -> Self::V;
        fn set(&self, v: Self::V);
    }

    /// Under the lock: store `f(old)` when it is `Some`; `Ok(old)`, or
    /// `Err(old)` when nothing was stored (core's `fetch_update`).
    fn update<W: Word>(w: &W, f: impl FnOnce(W::V) -> Option<W::V>) -> Result<W::V, W::V> {
        locked(|| {
            let old = w.get();
            match f(old) {
                Some(new) => {
                    w.set(new);
                    Ok(old)
                }
                None => Err(old),
            }
        })
    }

    /// Under the lock: store `f(old)`; the old value.
    fn replace<W: Word>(w: &W, f: impl FnOnce(W::V) -> W::V) -> W::V {
        match update(w, |old| Some(f(old))) {
            Ok(old) | Err(old) => old,
        }
    }

    /// The methods every type has, with core's signatures.
    macro_rules! locked_common {
        ($t:ty) => {
            pub fn load(&self, order: Ordering) -> $t {
                self.0.load(order)
            }
            pub fn store(&self, v: $t, order: Ordering) {
                self.0.store(v, order)
            }
            pub fn swap(&self, v: $t, _order: Ordering) -> $t {
                replace(self, |_| v)
            }
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                _success: Ordering,
                _failure: Ordering,
            ) -> Result<$t, $t> {
                update(self, |old| (old == current).then_some(new))
            }
            pub fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                self.compare_exchange(current, new, success, failure)
            }
            pub fn fetch_update<F>(
                &self,
                _set_order: Ordering,
                _fetch_order: Ordering,
                f: F,
            ) -> Result<$t, $t>
            where
                F: FnMut($t) -> Option<$t>,
            {
                update(self, f)
            }
        };
    }

    macro_rules! locked_int {
        ($name:ident, $t:ty) => {
            #[repr(transparent)]
            pub struct $name(core_atomic::$name);

            impl Word for $name {
                type V = $t;
                fn get(&self) -> $t {
                    self.0.load(IN)
                }
                fn set(&self, v: $t) {
                    self.0.store(v, IN)
                }
            }

            impl $name {
                pub const fn new(v: $t) -> Self {
                    Self(core_atomic::$name::new(v))
                }
                locked_common!($t);
                pub fn fetch_and(&self, v: $t, _order: Ordering) -> $t {
                    replace(self, |old| old & v)
                }
                pub fn fetch_or(&self, v: $t, _order: Ordering) -> $t {
                    replace(self, |old| old | v)
                }
            }
        };
    }

    macro_rules! locked_arith {
        ($name:ident, $t:ty) => {
            locked_int!($name, $t);
            impl $name {
                pub fn fetch_add(&self, v: $t, _order: Ordering) -> $t {
                    replace(self, |old| old.wrapping_add(v))
                }
                pub fn fetch_sub(&self, v: $t, _order: Ordering) -> $t {
                    replace(self, |old| old.wrapping_sub(v))
                }
            }
        };
    }

    locked_int!(AtomicBool, bool);
    locked_arith!(AtomicU8, u8);
    locked_arith!(AtomicU16, u16);
    locked_arith!(AtomicI32, i32);
    locked_arith!(AtomicIsize, isize);
    locked_arith!(AtomicUsize, usize);

    #[repr(transparent)]
    pub struct AtomicPtr<T>(core_atomic::AtomicPtr<T>);

    impl<T> Word for AtomicPtr<T> {
        type V = *mut T;
        fn get(&self) -> *mut T {
            self.0.load(IN)
        }
        fn set(&self, p: *mut T) {
            self.0.store(p, IN)
        }
    }

    impl<T> AtomicPtr<T> {
        pub const fn new(p: *mut T) -> Self {
            Self(core_atomic::AtomicPtr::new(p))
        }
        locked_common!(*mut T);
    }
}
