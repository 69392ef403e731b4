//! The kernel's interrupt lock, `rt_hw_interrupt_disable` and
//! `rt_hw_interrupt_enable`, on the host.
//!
//! On a single-core board, disabling interrupts stops every other thread
//! until they are enabled again; `disable` returns the previous state
//! (PRIMASK on Cortex-M0, `mstatus.MIE` on RISC-V) and `enable(level)`
//! restores exactly it, so pairs nest: only the outermost `enable` lets the
//! others run again. Here the same is a process-wide lock that the holding
//! thread may take again: a level of 1 means "already held by this thread",
//! 0 "was free", and only `enable(0)` gives the lock back. Another thread
//! that asks waits, as it would not run on the board. (Code that takes no
//! lock still runs on the host; the library's atomics all take it.)

use crate::rtt::kernel::rt_base_t;
use std::sync::{Condvar, Mutex};
use std::thread::ThreadId;

static HOLDER: Mutex<Option<ThreadId>> = Mutex::new(None);
static FREED: Condvar = Condvar::new();

#[no_mangle]
pub extern "C" fn rt_hw_interrupt_disable() -> rt_base_t {
    let me = std::thread::current().id();
    let mut holder = HOLDER.lock().unwrap_or_else(|e| e.into_inner());
    if *holder == Some(me) {
        return 1;
    }
    while holder.is_some() {
        holder = FREED.wait(holder).unwrap_or_else(|e| e.into_inner());
    }
    *holder = Some(me);
    0
}

#[no_mangle]
pub extern "C" fn rt_hw_interrupt_enable(level: rt_base_t) {
    if level != 0 {
        return; // an inner pair: still disabled, as on the board
    }
    let mut holder = HOLDER.lock().unwrap_or_else(|e| e.into_inner());
    if *holder == Some(std::thread::current().id()) {
        *holder = None;
        FREED.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rtt::atomic::locked::{AtomicBool, AtomicPtr, AtomicU8, AtomicUsize};
    use core::sync::atomic::Ordering::SeqCst;
    use std::sync::atomic::{AtomicBool as StdBool, Ordering};
    use std::sync::Arc;

    #[test]
    fn pairs_nest_and_only_the_outermost_enable_lets_others_run() {
        let outer = rt_hw_interrupt_disable();
        assert_eq!(outer, 0);
        let inner = rt_hw_interrupt_disable();
        assert_eq!(inner, 1);
        let other_ran = Arc::new(StdBool::new(false));
        let flag = other_ran.clone();
        let other = std::thread::spawn(move || {
            let level = rt_hw_interrupt_disable();
            flag.store(true, Ordering::SeqCst);
            rt_hw_interrupt_enable(level);
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        rt_hw_interrupt_enable(inner);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !other_ran.load(Ordering::SeqCst),
            "ran inside the outer pair"
        );
        rt_hw_interrupt_enable(outer);
        other.join().unwrap();
        assert!(other_ran.load(Ordering::SeqCst));
    }

    /// The locked atomics (what a Cortex-M0 or RV32IMC build uses) under
    /// contention: no update is lost, and compare-and-swap admits one
    /// winner per value.
    #[test]
    fn locked_atomics_lose_no_update() {
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        static BITS: AtomicU8 = AtomicU8::new(0);
        static TICKETS: AtomicUsize = AtomicUsize::new(0);
        let threads: Vec<_> = (0..8u8)
            .map(|t| {
                std::thread::spawn(move || {
                    let mut won = 0;
                    for _ in 0..2000 {
                        COUNT.fetch_add(3, SeqCst);
                        COUNT.fetch_sub(1, SeqCst);
                        let seen = TICKETS.load(SeqCst);
                        if TICKETS
                            .compare_exchange(seen, seen + 1, SeqCst, SeqCst)
                            .is_ok()
                        {
                            won += 1;
                        }
                    }
                    BITS.fetch_or(1 << t, SeqCst);
                    won
                })
            })
            .collect();
        let won: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(COUNT.load(SeqCst), 8 * 2000 * 2);
        assert_eq!(BITS.load(SeqCst), 0xFF);
        assert_eq!(won, TICKETS.load(SeqCst), "a ticket taken twice or lost");
        assert_eq!(BITS.fetch_and(0x0F, SeqCst), 0xFF);
        assert_eq!(BITS.load(SeqCst), 0x0F);
    }

    #[test]
    fn locked_atomics_behave_as_cores() {
        let b = AtomicBool::new(false);
        assert!(!b.swap(true, SeqCst));
        assert_eq!(b.compare_exchange(false, true, SeqCst, SeqCst), Err(true));
        assert_eq!(
            b.compare_exchange_weak(true, false, SeqCst, SeqCst),
            Ok(true)
        );
        assert!(!b.fetch_or(true, SeqCst));
        assert!(b.fetch_and(false, SeqCst));
        let n = AtomicUsize::new(2);
        assert_eq!(n.fetch_update(SeqCst, SeqCst, |v| v.checked_sub(1)), Ok(2));
        assert_eq!(n.fetch_update(SeqCst, SeqCst, |v| v.checked_sub(1)), Ok(1));
        assert_eq!(n.fetch_update(SeqCst, SeqCst, |v| v.checked_sub(1)), Err(0));
        assert_eq!(n.fetch_sub(1, SeqCst), 0);
        assert_eq!(n.load(SeqCst), usize::MAX, "wraps as core's does");
        let mut x = 5u32;
        let p = AtomicPtr::new(core::ptr::null_mut());
        assert!(p.swap(&mut x, SeqCst).is_null());
        assert_eq!(
            p.compare_exchange(core::ptr::null_mut(), &mut x, SeqCst, SeqCst),
            Err(&mut x as *mut u32)
        );
        assert_eq!(p.load(SeqCst), &mut x as *mut u32);
    }
}
