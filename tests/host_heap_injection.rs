//! The host heap's fault injection (src/host/heap.rs): process-wide
//! injection reaches other threads (the k-th allocation alone, or every one
//! from the k-th on), counts every allocation point, leaves excluded threads
//! and `without_injection` scopes alone, and the per-thread
//! `rt_host_heap_fail_after` of the C tests stays per thread.
//!
//! Runs in a child process (see `rtt_agent_testkit::alloc_walk`): process-wide
//! injection would reach the test harness's own threads too.

use rtt_agent::host::heap::{self, Fault, InjectionReport};
use rtt_agent_testkit::alloc_walk::in_child_process;
use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Duration;

/// A thread that, on each `run`, makes `n` `rt_malloc(16)` calls (recording
/// which succeeded) while the caller has the fault armed, then frees them.
struct Other {
    go: Arc<Barrier>,
    done: Arc<Barrier>,
    n: Arc<AtomicUsize>,
    /// Bit i: allocation i succeeded.
    got: Arc<AtomicUsize>,
    excluded: Arc<AtomicUsize>,
}

impl Other {
    fn start() -> Other {
        let o = Other {
            go: Arc::new(Barrier::new(2)),
            done: Arc::new(Barrier::new(2)),
            n: Arc::new(AtomicUsize::new(0)),
            got: Arc::new(AtomicUsize::new(0)),
            excluded: Arc::new(AtomicUsize::new(0)),
        };
        let (go, done, n, got, excluded) = (
            o.go.clone(),
            o.done.clone(),
            o.n.clone(),
            o.got.clone(),
            o.excluded.clone(),
        );
        std::thread::spawn(move || loop {
            go.wait();
            heap::exclude_this_thread(excluded.load(Ordering::SeqCst) != 0);
            let mut blocks = [std::ptr::null_mut::<c_void>(); 16];
            let mut bits = 0;
            for (i, b) in blocks.iter_mut().enumerate().take(n.load(Ordering::SeqCst)) {
                *b = heap::rt_malloc(16);
                if !b.is_null() {
                    bits |= 1 << i;
                }
            }
            for b in blocks {
                // SAFETY: NULL or a block of this loop, freed once.
                unsafe { heap::rt_free(b) };
            }
            heap::exclude_this_thread(false);
            got.store(bits, Ordering::SeqCst);
            done.wait();
        });
        o
    }

    /// Arm `fault`, let the thread make `n` allocations, disarm: which
    /// succeeded, and the report.
    fn run(&self, fault: Fault, n: usize, excluded: bool) -> (usize, InjectionReport) {
        self.n.store(n, Ordering::SeqCst);
        self.excluded.store(usize::from(excluded), Ordering::SeqCst);
        heap::inject(fault);
        self.go.wait();
        self.done.wait();
        heap::inject(Fault::Off);
        (self.got.load(Ordering::SeqCst), heap::injection_report())
    }
}

fn report(allocations: u64, injected: u64) -> InjectionReport {
    InjectionReport {
        allocations,
        injected,
    }
}

#[test]
fn injection_reaches_other_threads_and_spares_excluded_ones() {
    in_child_process(
        "injection_reaches_other_threads_and_spares_excluded_ones",
        Duration::from_secs(60),
        || {
            let other = Other::start();
            // Counting: every allocation point of the other thread.
            assert_eq!(other.run(Fault::Count, 5, false), (0b11111, report(5, 0)));
            // Measured once the thread runs (std has freed its start-up
            // blocks by then).
            let before = heap::used();
            // The k-th alone fails, on the other thread; then they succeed again.
            assert_eq!(
                other.run(Fault::FailNth(2), 5, false),
                (0b11011, report(5, 1))
            );
            // Every one from the k-th on.
            assert_eq!(
                other.run(Fault::FailFrom(3), 6, false),
                (0b000111, report(6, 3))
            );
            // Beyond the run's allocations: nothing injected, all numbered.
            assert_eq!(
                other.run(Fault::FailNth(5), 5, false),
                (0b11111, report(5, 0))
            );
            // An excluded thread is neither numbered nor failed.
            assert_eq!(
                other.run(Fault::FailFrom(0), 4, true),
                (0b1111, report(0, 0))
            );
            // Off: nothing numbered, nothing failed.
            assert_eq!(other.run(Fault::Off, 3, false), (0b111, report(0, 0)));

            // The C forms: fail_nth(-1) stops and keeps the counts readable.
            heap::rt_host_heap_fail_nth(1);
            let a = heap::rt_malloc(8);
            let b = heap::rt_malloc(8);
            let c = heap::rt_malloc(8);
            heap::rt_host_heap_fail_nth(-1);
            assert!(!a.is_null() && b.is_null() && !c.is_null());
            assert_eq!(
                (
                    heap::rt_host_heap_alloc_count(),
                    heap::rt_host_heap_injected_count()
                ),
                (3, 1)
            );
            // A growing realloc is an allocation point; a shrinking one is not.
            heap::rt_host_heap_fail_from(0);
            // SAFETY: `a` is a live block of the heap; on failure it stays valid.
            let grown = unsafe { heap::rt_realloc(a, 64) };
            // SAFETY: as above; shrinking never fails.
            let shrunk = unsafe { heap::rt_realloc(a, 4) };
            heap::rt_host_heap_fail_from(-1);
            assert!(grown.is_null() && !shrunk.is_null());
            assert_eq!(heap::injection_report(), report(1, 1));
            // SAFETY: the live blocks of this test, each freed once.
            unsafe {
                heap::rt_free(shrunk);
                heap::rt_free(c);
            }

            // without_injection: counted in `used`, never numbered or failed.
            heap::inject(Fault::FailFrom(0));
            let spared = heap::without_injection(|| heap::rt_malloc(32));
            let refused = heap::rt_malloc(32);
            heap::inject(Fault::Off);
            assert!(!spared.is_null() && refused.is_null());
            assert_eq!(heap::injection_report(), report(1, 1));
            assert_eq!(heap::used(), before + 32);
            // SAFETY: the block made above, freed once.
            unsafe { heap::rt_free(spared) };

            // rt_host_heap_fail_after stays per thread: the other thread's
            // allocations go on succeeding, this thread's fail.
            heap::rt_host_heap_fail_after(0);
            let (bits, _) = other.run(Fault::Off, 3, false);
            let mine = heap::rt_malloc(8);
            heap::rt_host_heap_fail_after(-1);
            assert_eq!(bits, 0b111);
            assert!(mine.is_null());

            assert_eq!(heap::used(), before, "every block freed");
        },
    );
}
