//! Kernel threads as values: a created thread that never started is deleted
//! when dropped; a started one belongs to the kernel, which frees a dynamic
//! thread once its entry returns (the idle thread reaps it).

use super::kernel::*;
use super::name::ObjectName;
use super::rt_eok;
use alloc::boxed::Box;
use core::ffi::{c_char, c_void};
use core::ptr::NonNull;

/// A thread's entry point, as the kernel calls it.
pub type Entry = unsafe extern "C" fn(parameter: *mut c_void);

/// What a new thread is made with.
pub struct Spec {
    /// As the board holds it: `list thread` shows it, cleanup finds the
    /// thread by it.
    pub name: ObjectName,
    pub stack_size: u32,
    pub priority: u8,
    pub tick: u32,
}

/// A created, not yet started thread.
pub struct Thread(NonNull<rt_thread>);

impl Thread {
    /// A new thread that will run `entry(NULL)`, or `None` without memory
    /// for its control block and stack. (A thread with state of its own is
    /// made by [`Thread::spawn_with`].)
    pub fn create(spec: &Spec, entry: Entry) -> Option<Thread> {
        #[cfg(not(thread_entry_a32))]
        let (entry, parameter): (Entry, *mut c_void) = (entry, core::ptr::null_mut());
        #[cfg(thread_entry_a32)]
        let (entry, parameter): (Entry, *mut c_void) = (a32_entry, entry as *mut c_void);
        // SAFETY: `entry` takes `parameter` as it is meant to: NULL, or
        // (`a32_entry`) the real entry.
        unsafe { Thread::create_raw(spec, entry, parameter) }
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
    pub fn spawn(spec: &Spec, entry: Entry) -> Option<rt_thread_t> {
        Thread::create(spec, entry)?.start()
    }

    /// Create and start a thread that runs `entry(state)`: the state moves
    /// into the thread, which owns it (and drops it when `entry` returns
    /// it, or at its end). `None` without memory for the thread or its
    /// start block; the state is then dropped here.
    pub fn spawn_with<T: Send + 'static>(
        spec: &Spec,
        state: T,
        entry: fn(T),
    ) -> Option<rt_thread_t> {
        let layout = core::alloc::Layout::new::<Start<T>>();
        // SAFETY: `Start` has a non-zero size (two function pointers).
        let start = unsafe { alloc::alloc::alloc(layout) } as *mut Start<T>;
        if start.is_null() {
            return None;
        }
        // SAFETY: a fresh block of `Start<T>`'s layout from the global
        // allocator, as `Box::from_raw` later expects.
        unsafe {
            start.write(Start {
                run: run_start::<T>,
                entry,
                state,
            })
        };
        let parameter = start as *mut c_void;
        // SAFETY: `thread_start` has the kernel's entry signature and takes
        // a `Start` block (whose `run` is its first field) as its parameter.
        let created = unsafe { Thread::create_raw(spec, thread_start, parameter) };
        let started = created.and_then(Thread::start);
        if started.is_none() {
            // SAFETY: no thread runs with `start` (never created, or
            // deleted unstarted): the block is still ours to free.
            drop(unsafe { Box::from_raw(start) });
        }
        started
    }

    /// A new thread running `entry(parameter)`.
    ///
    /// # Safety
    /// `entry` must take `parameter` as it is meant to.
    unsafe fn create_raw(spec: &Spec, entry: Entry, parameter: *mut c_void) -> Option<Thread> {
        // SAFETY: `name` is NUL-terminated (the kernel copies it); `entry`
        // has the kernel's entry signature and lives for the program.
        let t = unsafe {
            rt_thread_create(
                spec.name.get().as_ptr(),
                Some(entry),
                parameter,
                spec.stack_size,
                spec.priority,
                spec.tick,
            )
        };
        NonNull::new(t).map(Thread)
    }
}

/// What a thread of [`Thread::spawn_with`] starts from. `run` comes first
/// so that the one kernel entry, [`thread_start`], finds it whatever `T`.
#[repr(C)]
struct Start<T> {
    run: unsafe fn(*mut c_void),
    entry: fn(T),
    state: T,
}

/// Take the block back from the heap and run its entry with its state.
///
/// # Safety
/// `start` is a `Start<T>` from `spawn_with`, used once.
unsafe fn run_start<T>(start: *mut c_void) {
    // SAFETY: this function's contract; the box is freed as it is moved
    // out of, before the entry runs.
    let Start { entry, state, .. } = *unsafe { Box::from_raw(start as *mut Start<T>) };
    entry(state)
}

/// The kernel's entry for every thread of [`Thread::spawn_with`]; an A32
/// function where the kernel needs one (see [`a32_entry`]).
#[cfg_attr(thread_entry_a32, instruction_set(arm::a32))]
unsafe extern "C" fn thread_start(parameter: *mut c_void) {
    crate::ffi_fn!(failure = (), nonnull(parameter), {
        // SAFETY: `spawn_with` passes a `Start` block, whose first field
        // is its `run`.
        let run = unsafe { *(parameter as *const unsafe fn(*mut c_void)) };
        // SAFETY: `run` is `run_start` of the block's own `T`.
        unsafe { run(parameter) }
    })
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
pub fn exists(name: ObjectName) -> bool {
    // SAFETY: `name` is NUL-terminated; rt_thread_find only reads it.
    !unsafe { rt_thread_find(name.get().as_ptr() as *mut c_char) }.is_null()
}

/// Sleep the calling thread for `ms` milliseconds.
pub fn sleep_ms(ms: u32) {
    // SAFETY: a plain kernel sleep of the calling thread.
    unsafe { rt_thread_mdelay(ms.min(i32::MAX as u32) as rt_int32_t) };
}
