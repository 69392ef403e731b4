//! The global allocator: every Rust allocation comes from the RT-Thread heap,
//! so `rt_memory_info` sees it (on the host, the port's accounting heap).
//!
//! `rt_malloc` guarantees `RT_ALIGN_SIZE`; larger alignments go through
//! `rt_malloc_align`/`rt_free_align`, which have no realloc, so a realloc of
//! such a block allocates, copies and frees.

use super::board::board;
use super::kernel::{rt_free, rt_free_align, rt_malloc, rt_malloc_align, rt_realloc};
use core::alloc::{GlobalAlloc, Layout};
use core::ffi::c_void;

pub struct RtAllocator;

#[inline]
fn heap_align() -> usize {
    let a = board().align_size;
    if a > 0 {
        a as usize
    } else {
        4
    }
}

// SAFETY: every block comes from the RT-Thread heap with at least the layout's
// alignment, and is returned to the same family of functions it came from
// (decided by the layout's alignment, which Rust passes back unchanged).
unsafe impl GlobalAlloc for RtAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let size = layout.size().max(1);
        if layout.align() <= heap_align() {
            // SAFETY: `rt_malloc` accepts any size and returns NULL or a block
            // aligned to `RT_ALIGN_SIZE`, which covers `layout.align()` here.
            unsafe { rt_malloc(size) as *mut u8 }
        } else {
            // SAFETY: `layout.align()` is a power of two (a `Layout`
            // invariant), as `rt_malloc_align` requires.
            unsafe { rt_malloc_align(size, layout.align()) as *mut u8 }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.align() <= heap_align() {
            // SAFETY: `GlobalAlloc::dealloc`'s contract: `ptr` came from
            // `alloc` with this layout, which used `rt_malloc` for this
            // alignment, and is freed once.
            unsafe { rt_free(ptr as *mut c_void) }
        } else {
            // SAFETY: as `GlobalAlloc::dealloc` requires, `ptr` came from
            // `alloc` with this layout, which used `rt_malloc_align` for this
            // alignment, and is freed once.
            unsafe { rt_free_align(ptr as *mut c_void) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.align() <= heap_align() {
            // SAFETY: `GlobalAlloc::realloc`'s contract: `ptr` is a live block
            // from `alloc` with this layout, i.e. from `rt_malloc`, so
            // `rt_realloc` may resize it.
            return unsafe { rt_realloc(ptr as *mut c_void, new_size.max(1)) as *mut u8 };
        }
        // SAFETY: the alignment is `layout`'s (a nonzero power of two) and
        // `GlobalAlloc::realloc` requires `new_size`, rounded up to it, not to
        // overflow `isize`.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: `new_layout` has a nonzero size (`realloc`'s contract
        // requires `new_size > 0`) and a valid alignment.
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: `ptr` is live for `layout.size()` bytes, `new` is a fresh
            // block of `new_size` bytes, so both cover the copied minimum and
            // cannot overlap.
            unsafe { core::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size)) };
            // SAFETY: `ptr` came from `alloc` with `layout` (realloc's
            // contract) and is not used after this.
            unsafe { self.dealloc(ptr, layout) };
        }
        new
    }
}

#[cfg(not(feature = "rt-rust-runtime"))]
#[global_allocator]
static GLOBAL: RtAllocator = RtAllocator;

#[cfg(all(not(feature = "std"), not(feature = "rt-rust-runtime")))]
extern "C" {
    /// `glue/agent_log.c`: `rt_assert_handler` where the board has it
    /// (RT_DEBUGING_ASSERT on 5.x, RT_DEBUG on 4.x), else nothing.
    fn agent_glue_panic(what: *const core::ffi::c_char, line: core::ffi::c_int);
}

/// The device's panic policy (see `src/ffi/mod.rs`, "Panic policy"): without
/// std nothing can unwind. Log the message through the kernel, then hand over
/// to the board's assert path, `rt_assert_handler` through the glue (its
/// `rt_assert_set_hook` hook, e.g. a reset, or RT-Thread's print-and-spin;
/// nothing on a board built without asserts); only if that returns,
/// park this thread in `rt_thread_mdelay` forever. Exported functions are
/// written so that no input reaches here.
#[cfg(all(not(feature = "std"), not(feature = "rt-rust-runtime")))]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let mut line = super::log::LineWriter::new(super::log::Level::Error);
    line.write_bytes(b"panic: ");
    // Only a message without arguments: formatting one would pull
    // core::fmt into every image for a path that should never run.
    match info.message().as_str() {
        Some(text) => line.write_bytes(text.as_bytes()),
        None => line.write_bytes(b"(a formatted message)"),
    }
    let (file, number) = info
        .location()
        .map_or(("?", 0), |loc| (loc.file(), loc.line()));
    line.write_bytes(b" at ");
    line.write_bytes(file.as_bytes());
    line.write_bytes(b":");
    super::log::Piece::from(number).write_to(&mut line);
    line.finish();
    // SAFETY: a static NUL-terminated string; the glue hands it to the
    // kernel's assert entry point (which may not return) when the board has
    // one.
    unsafe {
        agent_glue_panic(
            c"rust panic (message logged above)".as_ptr(),
            number as core::ffi::c_int,
        );
    }
    loop {
        // SAFETY: plain kernel call; yields to other threads forever.
        unsafe {
            super::kernel::rt_thread_mdelay(1000);
        }
    }
}
