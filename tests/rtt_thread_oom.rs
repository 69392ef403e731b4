//! `rtt::thread::Thread::spawn_with` without memory: the state is dropped
//! in the caller, the thread never runs, and the heap is back to where it
//! was. Alone in its test binary: `used` is process-wide and the host heap
//! is also the global allocator, so another test's thread ending (libtest
//! frees its captured output then) would move the figure under this one.

use rtt_agent::host::heap;
use rtt_agent::rtt::name::ObjectName;
use rtt_agent::rtt::thread::{Spec, Thread};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Counts its drops.
struct State {
    drops: Arc<AtomicUsize>,
    seen: Arc<AtomicUsize>,
}

impl Drop for State {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// Start a thread whose allocations fail after `n` successful ones of
/// this thread; it must not start, and the heap must be where it was.
fn fails_cleanly_after(n: core::ffi::c_long) {
    let drops = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let s = State {
        drops: drops.clone(),
        seen: seen.clone(),
    };
    let spec = Spec {
        name: ObjectName::short(c"toom"),
        stack_size: 4096,
        priority: 10,
        tick: 10,
    };
    let before = heap::used();
    heap::rt_host_heap_fail_after(n);
    let started = Thread::spawn_with(&spec, s, |s: State| {
        s.seen.store(1, Ordering::SeqCst);
    });
    heap::rt_host_heap_fail_after(-1);
    assert!(started.is_none(), "started with {n} allocations allowed");
    assert_eq!(drops.load(Ordering::SeqCst), 1, "state dropped once");
    assert_eq!(seen.load(Ordering::SeqCst), 0, "the thread never ran");
    assert_eq!(heap::used(), before, "heap back after {n} allocations");
}

#[test]
fn without_memory_the_state_is_dropped_here_and_nothing_runs() {
    // The start block itself fails.
    fails_cleanly_after(0);
    // The block made, the thread's own allocation failing: the block is
    // freed and the state dropped too.
    fails_cleanly_after(1);
}
