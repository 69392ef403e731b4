//! The library's kernel wrappers (`rtt::thread`, `rtt::ipc`) on the host
//! port: a thread's state moves into it and is dropped exactly once, on
//! every path; a mutex guard gives the mutex back; an object's name is
//! the one the board's RT_NAME_MAX holds. The heap figures of a failed
//! start are in tests/rtt_thread_oom.rs, alone in their process.

use rtt_agent::rtt::ipc::{Mutex, Semaphore};
use rtt_agent::rtt::name::ObjectName;
use rtt_agent::rtt::thread::{Spec, Thread};
use rtt_agent::rtt::RT_WAITING_FOREVER;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Kernel objects are process-wide: one test at a time.
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

/// Wait until a thread made with `name` has ended and its record is freed:
/// the state's last references (a semaphore's `Arc`) drop inside the
/// thread, after it signalled, and the next test's heap figures must not
/// see them go.
fn wait_gone(name: ObjectName) {
    for _ in 0..5000 {
        if !rtt_agent::rtt::thread::exists(name) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    panic!("thread {:?} never ended", name.get());
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
    wait_gone(spec().name);
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
    wait_gone(name);
}
