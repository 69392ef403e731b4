//! The host port's kernel functions against RT-Thread 5.3's `src/ipc.c`,
//! `src/clock.c` and `src/kservice.c`/`src/mem.c`: error codes, timeouts of
//! 0 and for ever, what a delete wakes its waiters with, tick rounding, and
//! the heap's edge cases. docs/host-port.md lists each pin.

use rtt_agent::host::heap;
use rtt_agent::host::ipc::*;
use rtt_agent::host::thread::rt_tick_from_millisecond;
use rtt_agent::rtt::{rt_efull, rt_eok, rt_error, rt_etimeout, rt_ubase_t};
use rtt_agent::rtt::{RT_WAITING_FOREVER, RT_WAITING_NO};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

struct P(usize);
// SAFETY: kernel objects are shared between threads by design.
unsafe impl Send for P {}

#[test]
fn timeouts_of_zero_and_full_mailboxes() {
    let _g = serial();
    let sem = rt_sem_create(c"s".as_ptr(), 0, 0);
    assert_eq!(rt_sem_take(sem, RT_WAITING_NO), -rt_etimeout());
    assert_eq!(rt_sem_take(sem, 5), -rt_etimeout());
    assert_eq!(rt_sem_release(sem), rt_eok());
    assert_eq!(rt_sem_take(sem, RT_WAITING_FOREVER), rt_eok());
    assert_eq!(rt_sem_delete(sem), rt_eok());

    let mb = rt_mb_create(c"m".as_ptr(), 1, 0);
    let mut v: rt_ubase_t = 0;
    // SAFETY: a live mailbox and a writable local.
    let got = unsafe { rt_mb_recv(mb, &mut v, RT_WAITING_NO) };
    assert_eq!(got, -rt_etimeout());
    assert_eq!(rt_mb_send(mb, 7), rt_eok());
    assert_eq!(rt_mb_send(mb, 8), -rt_efull());
    assert_eq!(rt_mb_send_wait(mb, 8, 5), -rt_etimeout());
    // SAFETY: as above: a live mailbox and a writable local.
    assert_eq!(unsafe { rt_mb_recv(mb, &mut v, 5) }, rt_eok());
    assert_eq!(v, 7);
    assert_eq!(rt_mb_delete(mb), rt_eok());
}

/// 5.3 resumes the waiters of a deleted object with RT_ERROR; the semaphore
/// and mutex paths negate it, the mailbox paths return it as it is.
#[test]
fn delete_wakes_waiters_with_the_kernels_error() {
    let _g = serial();
    let mb = rt_mb_create(c"m".as_ptr(), 1, 0);
    let p = P(mb as usize);
    let waiter = thread::spawn(move || {
        let p = p;
        let mut v: rt_ubase_t = 0;
        // SAFETY: the mailbox is deleted while this waits: the call under
        // test, which wakes it before the object goes.
        unsafe { rt_mb_recv(p.0 as _, &mut v, RT_WAITING_FOREVER) }
    });
    thread::sleep(Duration::from_millis(100));
    assert_eq!(rt_mb_delete(mb), rt_eok());
    assert_eq!(waiter.join().unwrap(), rt_error());
    assert!(rt_error() > 0);

    let sem = rt_sem_create(c"s".as_ptr(), 0, 0);
    let p = P(sem as usize);
    let waiter = thread::spawn(move || {
        let p = p;
        rt_sem_take(p.0 as _, RT_WAITING_FOREVER)
    });
    thread::sleep(Duration::from_millis(100));
    assert_eq!(rt_sem_delete(sem), rt_eok());
    assert_eq!(waiter.join().unwrap(), -rt_error());
}

#[test]
fn mutex_recursion_stops_at_255_holds() {
    let _g = serial();
    let m = rt_mutex_create(c"x".as_ptr(), 0);
    for _ in 0..255 {
        assert_eq!(rt_mutex_take(m, RT_WAITING_FOREVER), rt_eok());
    }
    assert_eq!(rt_mutex_take(m, RT_WAITING_FOREVER), -rt_efull());
    let p = P(m as usize);
    // Not the owner: -RT_ERROR; a held mutex with timeout 0: -RT_ETIMEOUT.
    let other = thread::spawn(move || {
        let p = p;
        (
            rt_mutex_release(p.0 as _),
            rt_mutex_take(p.0 as _, RT_WAITING_NO),
        )
    });
    assert_eq!(other.join().unwrap(), (-rt_error(), -rt_etimeout()));
    for _ in 0..255 {
        assert_eq!(rt_mutex_release(m), rt_eok());
    }
    assert_eq!(rt_mutex_release(m), -rt_error());
    assert_eq!(rt_mutex_delete(m), rt_eok());
}

#[test]
fn tick_from_millisecond_at_1000_hz() {
    assert_eq!(rtt_agent::rtt::board().tick_per_second, 1000);
    for ms in [0, 1, 999, 1000, 1999, 30000, i32::MAX] {
        assert_eq!(rt_tick_from_millisecond(ms), ms as u32);
    }
    assert_eq!(rt_tick_from_millisecond(-1), u32::MAX);
    assert_eq!(rt_tick_from_millisecond(-5), u32::MAX);
    // What webclient_set_timeout then makes of it: whole seconds.
    assert_eq!(rt_tick_from_millisecond(1999) / 1000, 1);
    assert_eq!(rt_tick_from_millisecond(-1) / 1000, 4_294_967);
}

#[test]
fn heap_edge_cases() {
    let _g = serial();
    assert!(heap::rt_malloc(0).is_null());
    // SAFETY: NULL is allowed for all three; `p` is the heap's own block.
    unsafe {
        heap::rt_free(std::ptr::null_mut());
        heap::rt_free_align(std::ptr::null_mut());
        let p = heap::rt_realloc(std::ptr::null_mut(), 32);
        assert!(!p.is_null());
        assert!(heap::rt_realloc(p, 0).is_null());
    }
    assert!(heap::rt_calloc(0, 8).is_null());
}

/// A growing `rt_realloc` holds the old block and the new one at once, as
/// RT-Thread 5.3's small-memory heap does (`rt_smem_realloc`: allocate,
/// copy, free), so `max_used` sees both; a shrinking one raises nothing.
#[test]
fn realloc_growth_counts_both_blocks_for_a_moment() {
    let _g = serial();
    let mut measured = None;
    // As in malloc_align_block_size: another thread's allocation between
    // two readings spoils one try, not the block sizes.
    for _ in 0..20 {
        let p = heap::rt_malloc(1000);
        assert!(!p.is_null());
        let before = heap::used();
        heap::rt_host_heap_reset_max_used();
        // SAFETY: `p` is a live block of this heap, replaced by the result.
        let q = unsafe { heap::rt_realloc(p, 3000) };
        assert!(!q.is_null());
        let grow_peak = heap::max_used() - before;
        let grown = heap::used() - before;
        let before_shrink = heap::used();
        heap::rt_host_heap_reset_max_used();
        // SAFETY: `q` is live; the result replaces it.
        let r = unsafe { heap::rt_realloc(q, 500) };
        assert!(!r.is_null());
        let shrink_peak = heap::max_used() - before_shrink;
        let shrunk = before_shrink - heap::used();
        // SAFETY: `r` is live and freed once.
        unsafe { heap::rt_free(r) };
        if heap::used() + 1000 == before {
            measured = Some((grow_peak, grown, shrink_peak, shrunk));
            break;
        }
    }
    assert_eq!(measured, Some((3000, 2000, 0, 2500)));
}

/// rt_malloc_align's block: size rounded up to the pointer size, plus the
/// alignment rounded up to the pointer size (5.3 kservice.c).
#[test]
fn malloc_align_block_size() {
    let _g = serial();
    let word = std::mem::size_of::<usize>();
    let round = |n: usize| (n + word - 1) & !(word - 1);
    for (size, align) in [(10usize, 32usize), (1, 64), (0, 16), (100, 2)] {
        // The heap is process-wide and the test harness allocates on its own
        // thread as other tests end: a measurement disturbed by that is
        // taken again (the block itself is the same every time).
        let mut measured = None;
        for _ in 0..20 {
            let before = heap::used();
            let p = heap::rt_malloc_align(size, align);
            assert!(!p.is_null());
            assert_eq!(p as usize % align, 0);
            let taken = heap::used().wrapping_sub(before);
            // SAFETY: `p` is a fresh block of at least `size` bytes, freed once.
            unsafe {
                std::ptr::write_bytes(p as *mut u8, 0xAB, size);
                heap::rt_free_align(p);
            }
            if heap::used() == before {
                measured = Some(taken);
                break;
            }
        }
        assert_eq!(measured, Some(round(size) + round(align)), "{size} {align}");
    }
}

/// RT-Thread 5.3 `src/ipc.c` message queues: a send larger than the message
/// size is `-RT_ERROR`, a full queue `-RT_EFULL` (rt_mq_send does not wait),
/// rt_mq_recv returns the message's length (cut to the caller's size) or
/// `-RT_ETIMEOUT`, and a delete wakes a waiter with the positive `RT_ERROR`
/// the kernel resumes it with.
#[test]
fn message_queues_as_in_ipc_c() {
    use core::ffi::c_void;
    let _g = serial();
    let mq = rt_mq_create(c"q".as_ptr(), 8, 2, 0);
    assert!(!mq.is_null());
    let msg = *b"abcdefghij";
    // SAFETY: `mq` is live; the buffers hold the sizes given.
    unsafe {
        assert_eq!(
            rt_mq_send(mq, msg.as_ptr() as *const c_void, 9),
            -rt_error()
        );
        assert_eq!(rt_mq_send(mq, msg.as_ptr() as *const c_void, 3), rt_eok());
        assert_eq!(rt_mq_send(mq, msg.as_ptr() as *const c_void, 8), rt_eok());
        assert_eq!(
            rt_mq_send(mq, msg.as_ptr() as *const c_void, 1),
            -rt_efull()
        );
        let mut out = [0u8; 8];
        assert_eq!(rt_mq_recv(mq, out.as_mut_ptr() as *mut c_void, 8, 0), 3);
        assert_eq!(&out[..3], b"abc");
        assert_eq!(rt_mq_recv(mq, out.as_mut_ptr() as *mut c_void, 4, 0), 4);
        assert_eq!(&out[..4], b"abcd");
        assert_eq!(
            rt_mq_recv(mq, out.as_mut_ptr() as *mut c_void, 8, RT_WAITING_NO),
            -rt_etimeout()
        );
        assert_eq!(
            rt_mq_recv(mq, out.as_mut_ptr() as *mut c_void, 8, 5),
            -rt_etimeout()
        );
    }
    let p = P(mq as usize);
    let waiter = thread::spawn(move || {
        let p = p;
        let mut out = [0u8; 8];
        // SAFETY: the queue is deleted while this waits: the call under
        // test, which wakes it before the object goes.
        unsafe {
            rt_mq_recv(
                p.0 as _,
                out.as_mut_ptr() as *mut c_void,
                8,
                RT_WAITING_FOREVER,
            )
        }
    });
    thread::sleep(Duration::from_millis(100));
    assert_eq!(rt_mq_delete(mq), rt_eok());
    assert_eq!(waiter.join().unwrap(), rt_error());
}

/// The heap's peak tracer (`RT_HOST_HEAP_TRACE`, src/host/heap_trace.rs)
/// and `tools/heap-peaks.py`: a child process holding one known block at
/// its peak has that block named by the function that allocated it.
#[test]
fn heap_trace_names_the_holder_of_a_peak() {
    let dir = std::env::temp_dir().join(format!("rtt-heap-trace-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "heap_trace_child", "--test-threads=1"])
        .env("RT_HOST_HEAP_TRACE", &dir)
        .env("HEAP_TRACE_CHILD", "1")
        .output()
        .unwrap();
    assert!(child.status.success(), "{child:?}");
    let report = std::process::Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tools/heap-peaks.py"))
        .arg(&dir)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&report.stdout);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.status.success(), "{report:?}");
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("77777  ") && l.ends_with("hold_a_peak_block")),
        "{text}"
    );
}

/// The child of [`heap_trace_names_the_holder_of_a_peak`] (nothing
/// without its variable).
#[test]
fn heap_trace_child() {
    if std::env::var_os("HEAP_TRACE_CHILD").is_some() {
        hold_a_peak_block();
    }
}

#[inline(never)]
fn hold_a_peak_block() {
    let p = heap::rt_malloc(77777);
    assert!(!p.is_null());
    // SAFETY: the block just made, freed once.
    unsafe { heap::rt_free(p) };
}
