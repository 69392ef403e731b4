//! Kernel threads as values: a created thread that never started is deleted
//! when dropped; a started one belongs to the kernel, which frees a dynamic
//! thread once its entry returns (the idle thread reaps it).

use super::kernel::*;
use super::rt_eok;
use core::ffi::{c_char, c_void, CStr};
use core::ptr::NonNull;

/// A thread's entry point, as the kernel calls it.
pub type Entry = unsafe extern "C" fn(parameter: *mut c_void);

/// What a new thread is made with.
pub struct Spec<'a> {
    pub name: &'a CStr,
    pub stack_size: u32,
    pub priority: u8,
    pub tick: u32,
}

/// A created, not yet started thread.
pub struct Thread(NonNull<rt_thread>);

impl Thread {
    /// A new thread that will run `entry(NULL)`, or `None` without memory
    /// for its control block and stack. (The library's threads find their
    /// state in their owner's cell, not in a parameter.)
    pub fn create(spec: &Spec<'_>, entry: Entry) -> Option<Thread> {
        #[cfg(not(thread_entry_a32))]
        let (entry, parameter): (Entry, *mut c_void) = (entry, core::ptr::null_mut());
        #[cfg(thread_entry_a32)]
        let (entry, parameter): (Entry, *mut c_void) = (a32_entry, entry as *mut c_void);
        // SAFETY: `name` is NUL-terminated (the kernel copies it); `entry` has
        // the kernel's entry signature and lives for the program, and takes
        // `parameter` as it is meant to.
        let t = unsafe {
            rt_thread_create(
                spec.name.as_ptr(),
                Some(entry),
                parameter,
                spec.stack_size,
                spec.priority,
                spec.tick,
            )
        };
        NonNull::new(t).map(Thread)
    }

    /// Start it. From here the kernel owns the thread; on failure it is
    /// deleted (dropped) and `None` returned.
    pub fn start(self) -> Option<rt_thread_t> {
        let raw = self.0.as_ptr();
        // SAFETY: a created thread that has not been started.
        if unsafe { rt_thread_startup(raw) } != rt_eok() {
            return None; // `self` drops: deleted
        }
        core::mem::forget(self);
        Some(raw)
    }

    /// Create and start in one step.
    pub fn spawn(spec: &Spec<'_>, entry: Entry) -> Option<rt_thread_t> {
        Thread::create(spec, entry)?.start()
    }
}

impl Drop for Thread {
    fn drop(&mut self) {
        // SAFETY: a created thread that never started: deleting it frees its
        // control block and stack.
        unsafe { rt_thread_delete(self.0.as_ptr()) };
    }
}

/// The kernel's entry for every thread of a Thumb-2 build on Cortex-A or
/// Cortex-R (`thumbv7a`/`thumbv7r`, which the SConscript picks there: about
/// 30% less flash than A32 code); `parameter` is the real entry.
///
/// Why: RT-Thread's Cortex-A port (libcpu/arm/cortex-a/stack.c, 5.x)
/// starts every thread at its own `_thread_start`, A32 code that calls the
/// entry with `blx` (which would switch to Thumb correctly), but sets the
/// thread's first CPSR.T from bit 0 of the entry's address. A Thumb entry
/// would start `_thread_start` itself in Thumb state, which faults. An A32
/// entry starts it in ARM state, and the call from here into the library's
/// Thumb code is an ordinary interworking call. (The Cortex-R ports jump to
/// the entry directly, where either kind works.)
#[cfg(thread_entry_a32)]
#[instruction_set(arm::a32)]
unsafe extern "C" fn a32_entry(parameter: *mut c_void) {
    crate::ffi_fn!(failure = (), nonnull(parameter), {
        // SAFETY: `Thread::create` passes an `Entry` as the parameter of
        // this entry, and nothing else; a function pointer and a data
        // pointer have the same size on ARM.
        let entry: Entry = unsafe { core::mem::transmute::<*mut c_void, Entry>(parameter) };
        // SAFETY: the library's thread entries take NULL (see `create`).
        unsafe { entry(core::ptr::null_mut()) }
    })
}

/// The calling thread.
pub fn current() -> rt_thread_t {
    // SAFETY: reads the scheduler's current thread; no preconditions.
    unsafe { rt_thread_self() }
}

/// Is a thread named `name` still known to the kernel? A finished dynamic
/// thread stays findable until the kernel has freed it.
pub fn exists(name: &CStr) -> bool {
    // SAFETY: `name` is NUL-terminated; rt_thread_find only reads it.
    !unsafe { rt_thread_find(name.as_ptr() as *mut c_char) }.is_null()
}

/// Sleep the calling thread for `ms` milliseconds.
pub fn sleep_ms(ms: u32) {
    // SAFETY: a plain kernel sleep of the calling thread.
    unsafe { rt_thread_mdelay(ms.min(i32::MAX as u32) as rt_int32_t) };
}
