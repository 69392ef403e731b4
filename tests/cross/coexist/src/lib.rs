//! Stand-in for RT-Thread's Rust runtime in the cross-build link check: a
//! second Rust static library with its own allocator (over rt_malloc) and
//! panic handler, built like RT-Thread builds its runtime (rlib + staticlib,
//! no LTO).
#![no_std]

extern crate alloc;

use core::alloc::{GlobalAlloc, Layout};

extern "C" {
    fn rt_malloc(size: usize) -> *mut u8;
    fn rt_free(ptr: *mut u8);
    fn rt_kprintf(fmt: *const u8, ...) -> i32;
}

struct RtHeap;

unsafe impl GlobalAlloc for RtHeap {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        rt_malloc(layout.size())
    }
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        rt_free(ptr)
    }
}

#[global_allocator]
static HEAP: RtHeap = RtHeap;

#[panic_handler]
fn panic(_info: &core::panic::PanicInfo) -> ! {
    loop {}
}

/// Something for the image to call: allocates through this runtime.
#[no_mangle]
pub extern "C" fn rust_standin_init() -> usize {
    let v = alloc::vec![7u8; 3];
    unsafe { rt_kprintf(b"rust runtime up\n\0".as_ptr()) };
    v.len()
}
