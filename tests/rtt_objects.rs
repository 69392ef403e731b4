//! The library's kernel wrappers (`rtt::thread`, `rtt::ipc`) on the host
//! port: a thread's state moves into it and is dropped exactly once, on
//! every path; a mutex guard gives the mutex back; an object's name is
//! the one the board's RT_NAME_MAX holds.

use rtt_agent::host::heap;
use rtt_agent::rtt::ipc::{Mutex, Semaphore};
use rtt_agent::rtt::name::ObjectName;
use rtt_agent::rtt::thread::{Spec, Thread};
use rtt_agent::rtt::RT_WAITING_FOREVER;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Heap figures are process-wide: one test at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts its drops.
struct State {
    value: u32,
    drops: Arc<AtomicUsize>,
    seen: Arc<AtomicUsize>,
    done: Arc<Semaphore>,
}

impl Drop for State {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

fn spec() -> Spec {
    Spec {
        name: ObjectName::short(c"tstate"),
        stack_size: 4096,
        priority: 10,
        tick: 10,
    }
}

fn state() -> (State, Arc<AtomicUsize>, Arc<AtomicUsize>, Arc<Semaphore>) {
    let drops = Arc::new(AtomicUsize::new(0));
    let seen = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(Semaphore::create(ObjectName::short(c"tdone"), 0).expect("a semaphore"));
    let s = State {
        value: 42,
        drops: drops.clone(),
        seen: seen.clone(),
        done: done.clone(),
    };
    (s, drops, seen, done)
}

#[test]
fn a_thread_gets_its_state_and_drops_it_once() {
    let _one = serial();
    let (s, drops, seen, done) = state();
    let started = Thread::spawn_with(&spec(), s, |s: State| {
        s.seen.store(s.value as usize, Ordering::SeqCst);
        let done = s.done.clone();
        drop(s);
        done.release();
    });
    assert!(started.is_some());
    assert!(done.take(RT_WAITING_FOREVER));
    assert_eq!(seen.load(Ordering::SeqCst), 42);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

#[test]
fn without_memory_the_state_is_dropped_here_and_nothing_runs() {
    let _one = serial();
    // Fail every allocation of this thread: the start block first.
    let (s, drops, seen, _done) = state();
    let before = heap::used();
    rtt_agent::host::heap::rt_host_heap_fail_after(0);
    let started = Thread::spawn_with(&spec(), s, |s: State| {
        s.seen.store(1, Ordering::SeqCst);
    });
    rtt_agent::host::heap::rt_host_heap_fail_after(-1);
    assert!(started.is_none());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(seen.load(Ordering::SeqCst), 0);
    assert_eq!(heap::used(), before);

    // The block made, the thread's own allocation failing: the block is
    // freed and the state dropped too.
    let (s, drops, seen, _done) = state();
    let before = heap::used();
    rtt_agent::host::heap::rt_host_heap_fail_after(1);
    let started = Thread::spawn_with(&spec(), s, |s: State| {
        s.seen.store(1, Ordering::SeqCst);
    });
    rtt_agent::host::heap::rt_host_heap_fail_after(-1);
    assert!(started.is_none());
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert_eq!(seen.load(Ordering::SeqCst), 0);
    assert_eq!(heap::used(), before);
}

#[test]
fn a_mutex_guard_gives_the_mutex_back() {
    let _one = serial();
    let m = Arc::new(Mutex::create(ObjectName::short(c"tmutex")).expect("a mutex"));
    let guard = m.lock().expect("taken");
    let other = m.clone();
    // Another thread cannot take it while the guard lives.
    let t = std::thread::spawn(move || other.take(5));
    assert!(!t.join().unwrap());
    drop(guard);
    let other = m.clone();
    let t = std::thread::spawn(move || {
        let ok = other.take(5);
        if ok {
            other.release();
        }
        ok
    });
    assert!(t.join().unwrap());
}

#[test]
fn object_names_fit_rt_name_max() {
    // The host port's RT_NAME_MAX is 16 (host/include/rtconfig.h): 15 bytes
    // are kept whole, longer names give way to their short form.
    let fits = ObjectName::new(c"AgentInputMb", c"AgIn");
    assert_eq!(fits.get(), c"AgentInputMb");
    let too_long = ObjectName::new(c"a_name_of_16_byt", c"short");
    assert_eq!(too_long.get(), c"short");
    assert_eq!(
        ObjectName::new(c"fifteen_bytes_x", c"f").get(),
        c"fifteen_bytes_x"
    );
    // Threads are found by the name they were made with.
    let _one = serial();
    let name = ObjectName::new(c"a_name_of_16_byt", c"tlong");
    let done = Arc::new(Semaphore::create(ObjectName::short(c"tdone2"), 0).expect("a semaphore"));
    let release = done.clone();
    let go = Arc::new(Semaphore::create(ObjectName::short(c"tgo"), 0).expect("a semaphore"));
    let wait = go.clone();
    let spec = Spec {
        name,
        stack_size: 4096,
        priority: 10,
        tick: 10,
    };
    let started = Thread::spawn_with(&spec, (wait, release), |(go, done)| {
        go.take(RT_WAITING_FOREVER);
        done.release();
    });
    assert!(started.is_some());
    assert!(rtt_agent::rtt::thread::exists(name));
    go.release();
    assert!(done.take(RT_WAITING_FOREVER));
}
