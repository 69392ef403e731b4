//! Allocation walks: run a scenario once per allocation point k, with the
//! k-th allocation of the whole process failing (the host heap's
//! process-wide fault injection, `rtt_agent::host::heap::inject`), and
//! check each run: no crash, no hang, an answer or an error, and the heap's
//! `used` exactly where it was before.
//!
//! A walk runs in a child process of the test binary ([`in_child_process`]):
//! the injection reaches every thread of its process, the test harness's
//! own included, so the child runs the one test alone (`--test-threads=1`:
//! the harness's main thread then sleeps until the test ends; it is also
//! left out of the heap's figures and of injection), and a crash (an abort on an allocation failure) takes
//! down the child, not the test run: the parent reports it with the walk
//! and the k it happened at.
//!
//! In the child, [`walk`] runs the scenario on a worker thread while the
//! test's own thread watches the clock: a run that takes longer than the
//! per-k bound ends the child with a "hang" report.
//!
//! A scenario prepares its inputs, calls [`Armed::run`] exactly once around
//! the code under test (nothing else may allocate on its thread meanwhile:
//! the test side's allocations would be numbered too), then checks and
//! frees everything it made, and returns `Ok(outcome)` (a short text that
//! classifies the run: "answered", "error: ...") or `Err(what is wrong)`.

use rtt_agent::host::heap::{self, Fault, InjectionReport};
use rtt_agent::host::thread;
use std::collections::BTreeMap;
use std::ffi::{c_int, c_void};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Set (to the test's name) in the child process that runs the walk.
pub const CHILD_ENV: &str = "RTT_AGENT_ALLOC_WALK_CHILD";
/// Lines of the child's output that the parent passes on (the summary).
pub const REPORT_PREFIX: &str = "alloc walk:";

/// Run `body` in a child process of this test binary, as the test named
/// `test` (its full name, for `--exact`), and fail unless it passed within
/// `limit`. In the child (the environment says so) `body` runs here. The
/// child's summary lines go to this process's stderr as they are, past the
/// harness's capture, so `cargo test` shows how many k were tried.
pub fn in_child_process(test: &str, limit: Duration, body: impl FnOnce()) {
    if std::env::var(CHILD_ENV).as_deref() == Ok(test) {
        install_abort_report();
        // The harness's main thread (its kernel id is the process id) is
        // not the firmware: it may still be setting up its wait for this
        // test (an allocation) when the walk arms the fault.
        assert!(heap::exclude_thread_id(std::process::id() as i32));
        body();
        return;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut child = Command::new(exe)
        .args([
            test,
            "--exact",
            "--test-threads=1",
            "--nocapture",
            "--include-ignored",
        ])
        .env(CHILD_ENV, test)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the child process");
    let collect = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = pipe.read_to_end(&mut all);
            String::from_utf8_lossy(&all).into_owned()
        })
    };
    let out = collect(Box::new(child.stdout.take().expect("piped stdout")));
    let err = collect(Box::new(child.stderr.take().expect("piped stderr")));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for the child") {
            break Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = out.join().unwrap_or_default();
    let err = err.join().unwrap_or_default();
    let mut stderr = std::io::stderr();
    // A line may follow the harness's "test ... " on the same line.
    for line in out.lines().chain(err.lines()) {
        if let Some(at) = line.find(REPORT_PREFIX) {
            let _ = writeln!(stderr, "{}", &line[at..]);
        }
    }
    let tail = |s: &str| {
        let lines: Vec<&str> = s.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    };
    match status {
        Some(s) if s.success() && out.contains("test result: ok. 1 passed") => {}
        Some(s) => panic!(
            "the walk's child process failed ({s}).\n--- stdout (end)\n{}\n--- stderr (end)\n{}",
            tail(&out),
            tail(&err)
        ),
        None => panic!(
            "the walk's child process did not finish within {limit:?}.\n--- stdout (end)\n{}\n--- stderr (end)\n{}",
            tail(&out),
            tail(&err)
        ),
    }
}

// ---- what the abort report prints -----------------------------------------

static WALK_NAME: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static WALK_NAME_LEN: AtomicUsize = AtomicUsize::new(0);
/// 0: no walk running; 1: counting; 2: fail_nth; 3: fail_from.
static WALK_MODE: AtomicU8 = AtomicU8::new(0);
static WALK_K: AtomicU64 = AtomicU64::new(0);

extern "C" {
    fn signal(signum: c_int, handler: usize) -> usize;
    fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
}
const SIGABRT: c_int = 6;

fn raw_stderr(bytes: &[u8]) {
    // SAFETY: write(2) on the process's stderr with a valid buffer; it is
    // async-signal-safe, so the abort handler may call it.
    unsafe { write(2, bytes.as_ptr() as *const c_void, bytes.len()) };
}

extern "C" fn on_abort(_signum: c_int) {
    // Only async-signal-safe work here: atomics, a stack buffer, write(2).
    raw_stderr(b"\nalloc walk: ABORTED in walk '");
    let name = WALK_NAME.load(Ordering::SeqCst);
    if !name.is_null() {
        // SAFETY: a leaked, never freed name of WALK_NAME_LEN bytes.
        let name =
            unsafe { std::slice::from_raw_parts(name, WALK_NAME_LEN.load(Ordering::SeqCst)) };
        raw_stderr(name);
    }
    raw_stderr(match WALK_MODE.load(Ordering::SeqCst) {
        1 => b"', counting run (no fault injected)",
        2 => b"', fail_nth k=",
        3 => b"', fail_from k=",
        _ => b"', outside the walk's runs",
    });
    if WALK_MODE.load(Ordering::SeqCst) >= 2 {
        let mut digits = [0u8; 20];
        let mut at = digits.len();
        let mut k = WALK_K.load(Ordering::SeqCst);
        loop {
            at -= 1;
            digits[at] = b'0' + (k % 10) as u8;
            k /= 10;
            if k == 0 {
                break;
            }
        }
        raw_stderr(&digits[at..]);
    }
    raw_stderr(b"\n");
    // Returning lets abort() go on: the default action ends the process.
}

/// Print which walk and k were running if the process aborts (an
/// allocation failure that was not handled aborts with "memory allocation
/// of N bytes failed").
fn install_abort_report() {
    let handler: extern "C" fn(c_int) = on_abort;
    // SAFETY: installs a handler that only does async-signal-safe work.
    unsafe { signal(SIGABRT, handler as usize) };
}

fn set_walk_name(name: &str) {
    let leaked: &'static mut [u8] = Box::leak(name.as_bytes().to_vec().into_boxed_slice());
    WALK_NAME_LEN.store(leaked.len(), Ordering::SeqCst);
    WALK_NAME.store(leaked.as_mut_ptr(), Ordering::SeqCst);
}

// ---- the walk ---------------------------------------------------------------

/// The one armed stretch of a run.
pub struct Armed {
    fault: Fault,
    runs: usize,
    report: Option<InjectionReport>,
}

impl Armed {
    /// Run `f` with the walk's fault armed (process-wide), and disarm.
    pub fn run<R>(&mut self, f: impl FnOnce() -> R) -> R {
        self.runs += 1;
        heap::inject(self.fault);
        let r = f();
        heap::inject(Fault::Off);
        self.report = Some(heap::injection_report());
        r
    }
}

/// Which faults a walk injects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The k-th allocation point alone fails.
    FailNth,
    /// Every allocation point from the k-th on fails.
    FailFrom,
}

impl Mode {
    fn fault(self, k: u64) -> Fault {
        match self {
            Mode::FailNth => Fault::FailNth(k),
            Mode::FailFrom => Fault::FailFrom(k),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Mode::FailNth => "fail_nth",
            Mode::FailFrom => "fail_from",
        }
    }
}

/// What a walk did.
#[derive(Debug)]
pub struct Summary {
    /// Allocation points of a run without faults (the counting run).
    pub allocations: u64,
    /// Per mode: how many k were tried (each a run with a fault injected),
    /// and how many runs ended with each outcome.
    pub modes: Vec<(Mode, u64, BTreeMap<String, usize>)>,
}

struct Watch {
    /// The run in progress: since when, and what.
    current: Option<(Instant, String)>,
    finished: bool,
}

/// One run: the scenario with `fault` armed, the heap checked around it
/// (unless `check_heap` is false: a warm-up run, which makes the one-time
/// allocations). The outer error is a broken walk (the scenario did not arm
/// once, threads did not end); the inner one a failed run.
fn run_once<S>(
    scenario: &mut S,
    fault: Fault,
    check_heap: bool,
) -> Result<(Result<String, String>, InjectionReport), String>
where
    S: FnMut(&mut Armed) -> Result<String, String>,
{
    let before = settled_used()?;
    let mut armed = Armed {
        fault,
        runs: 0,
        report: None,
    };
    let result = scenario(&mut armed);
    if armed.runs != 1 {
        return Err(format!(
            "the scenario armed the fault {} times (once expected)",
            armed.runs
        ));
    }
    let report = armed.report.expect("armed once");
    // The text the scenario returned is the one block of the run still
    // alive here; its allocation is its capacity exactly (the accounting
    // heap counts the requested size).
    let text = match &result {
        Ok(t) | Err(t) => t.capacity(),
    };
    let after = settled_used()? - text;
    if check_heap && after != before {
        let what = match &result {
            Ok(outcome) => format!("outcome: {outcome}"),
            Err(why) => format!("and the run failed: {why}"),
        };
        return Ok((
            Err(format!(
                "heap used {after} after the run, {before} before ({:+} bytes); {what}",
                after as i64 - before as i64
            )),
            report,
        ));
    }
    Ok((result, report))
}

fn settled_used() -> Result<usize, String> {
    if !thread::settle(Duration::from_secs(10)) {
        return Err("host threads still running 10 s after the run".into());
    }
    Ok(heap::used())
}

/// Walk `scenario` over every allocation point: a counting run first (it
/// must answer), then for each mode a run per k = 0, 1, 2, ... until a run
/// reaches no k-th allocation (it made fewer: the walk has covered them
/// all, and that run must answer like the counting run). `warm_ups` runs
/// without faults come first, so that one-time allocations (lazy statics)
/// are made before the heap is compared. Each run must end within `per_k`.
///
/// Call it on the test's thread: the runs go to a worker thread, this one
/// watches the clock. Panics with the walk's name, the mode and k of the
/// first run that failed; ends the process (exit code 3) on a hang.
pub fn walk<S>(name: &str, warm_ups: usize, modes: &[Mode], per_k: Duration, scenario: S) -> Summary
where
    S: FnMut(&mut Armed) -> Result<String, String> + Send + 'static,
{
    set_walk_name(name);
    let watch = Arc::new((
        Mutex::new(Watch {
            current: None,
            finished: false,
        }),
        Condvar::new(),
    ));
    let modes = modes.to_vec();
    let worker = {
        let watch = watch.clone();
        let name = name.to_string();
        std::thread::Builder::new()
            .name(format!("walk {name}"))
            .spawn(move || {
                struct Finished(Arc<(Mutex<Watch>, Condvar)>);
                impl Drop for Finished {
                    fn drop(&mut self) {
                        let (m, c) = &*self.0;
                        m.lock().unwrap_or_else(|e| e.into_inner()).finished = true;
                        c.notify_all();
                    }
                }
                let _finished = Finished(watch.clone());
                let mark = |what: Option<String>| {
                    let (m, _) = &*watch;
                    m.lock().unwrap_or_else(|e| e.into_inner()).current =
                        what.map(|w| (Instant::now(), w));
                };
                walk_runs(&name, warm_ups, &modes, scenario, mark)
            })
            .expect("start the walk's worker")
    };
    {
        let (m, c) = &*watch;
        let mut g = m.lock().unwrap_or_else(|e| e.into_inner());
        while !g.finished {
            if let Some((since, what)) = &g.current {
                if since.elapsed() > per_k {
                    let _ = writeln!(
                        std::io::stdout(),
                        "{REPORT_PREFIX} HANG in walk '{name}': {what} ran for more than {per_k:?}"
                    );
                    let _ = std::io::stdout().flush();
                    std::process::exit(3);
                }
            }
            g = c
                .wait_timeout(g, Duration::from_millis(100))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
    match worker.join() {
        Ok(Ok(summary)) => summary,
        Ok(Err(why)) => panic!("walk '{name}': {why}"),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}

fn walk_runs<S>(
    name: &str,
    warm_ups: usize,
    modes: &[Mode],
    mut scenario: S,
    mark: impl Fn(Option<String>),
) -> Result<Summary, String>
where
    S: FnMut(&mut Armed) -> Result<String, String>,
{
    for i in 0..warm_ups {
        mark(Some(format!("warm-up run {i}")));
        let (result, _) = run_once(&mut scenario, Fault::Off, false)?;
        match result {
            Ok(outcome) if outcome == "answered" => {}
            Ok(outcome) => return Err(format!("warm-up run {i} did not answer: {outcome}")),
            Err(why) => return Err(format!("warm-up run {i}: {why}")),
        }
    }
    mark(Some("the counting run".into()));
    WALK_MODE.store(1, Ordering::SeqCst);
    let (result, counted) = run_once(&mut scenario, Fault::Count, true)?;
    match result {
        Ok(outcome) if outcome == "answered" && counted.injected == 0 => {}
        Ok(outcome) => return Err(format!("the counting run did not answer: {outcome}")),
        Err(why) => return Err(format!("the counting run: {why}")),
    }
    let n = counted.allocations;
    let mut summary = Summary {
        allocations: n,
        modes: Vec::new(),
    };
    // Failed runs are collected, and the walk goes on: one report lists
    // every k that failed.
    let mut failures: Vec<String> = Vec::new();
    for &mode in modes {
        let mut outcomes = BTreeMap::new();
        let mut failed = 0usize;
        let mut k = 0u64;
        loop {
            // Runs of a threaded scenario may differ by a few allocations;
            // far beyond N something keeps allocating.
            if k > n.saturating_mul(2) + 1000 {
                failures.push(format!(
                    "{}: still reaching allocation {k} (the counting run made {n})",
                    mode.name()
                ));
                break;
            }
            mark(Some(format!("{} k={k}", mode.name())));
            WALK_K.store(k, Ordering::SeqCst);
            WALK_MODE.store(if mode == Mode::FailNth { 2 } else { 3 }, Ordering::SeqCst);
            let (result, report) = run_once(&mut scenario, mode.fault(k), true)
                .map_err(|e| format!("{} k={k} (of N={n}): {e}", mode.name()))?;
            if report.injected == 0 {
                // Fewer than k + 1 allocation points: every k was tried.
                match result {
                    Ok(outcome) if outcome == "answered" => {}
                    Ok(outcome) => failures.push(format!(
                        "{} k={k}: no fault reached, yet the run did not answer: {outcome}",
                        mode.name()
                    )),
                    Err(why) => failures.push(format!(
                        "{} k={k}: no fault reached, yet the run failed: {why}",
                        mode.name()
                    )),
                }
                break;
            }
            match result {
                Ok(outcome) => *outcomes.entry(outcome).or_insert(0) += 1,
                Err(why) => {
                    failed += 1;
                    failures.push(format!("{} k={k} (of N={n}): {why}", mode.name()));
                }
            }
            k += 1;
        }
        WALK_MODE.store(0, Ordering::SeqCst);
        if k < n {
            // The last run made fewer allocations than the counting run: the
            // points from k to N - 1 were never failed.
            failures.push(format!(
                "{}: the walk ended at k={k}, but the counting run made {n} allocations",
                mode.name()
            ));
        }
        let classes: Vec<String> = outcomes.iter().map(|(o, c)| format!("{c}x {o}")).collect();
        report_line(&format!(
            "{name}: {} over every allocation: N={n} allocations counted, {k} k tried (k=0..{}); \
             {} failed; passed (no crash, in time, heap back at its baseline): {}",
            mode.name(),
            k.saturating_sub(1),
            failed,
            classes.join("; ")
        ));
        summary.modes.push((mode, k, outcomes));
    }
    mark(None);
    if !failures.is_empty() {
        for f in &failures {
            report_line(&format!("{name}: FAILED {f}"));
        }
        return Err(format!(
            "{} failed run(s), the first: {}",
            failures.len(),
            failures[0]
        ));
    }
    Ok(summary)
}

/// A line of the walk's summary (passed on by the parent process).
pub fn report_line(text: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{REPORT_PREFIX} {text}");
    let _ = out.flush();
}

/// A fixed buffer for text the code under test hands back while the fault
/// is armed (a `String` would allocate on the test's side then).
pub struct FixedText {
    buf: [u8; 1024],
    len: usize,
    /// More was handed over than fits.
    pub overflow: bool,
    /// How many times text was handed over.
    pub calls: usize,
}

impl Default for FixedText {
    fn default() -> Self {
        FixedText {
            buf: [0; 1024],
            len: 0,
            overflow: false,
            calls: 0,
        }
    }
}

impl FixedText {
    /// Replace the text (no allocation).
    pub fn set(&mut self, bytes: &[u8]) {
        self.calls += 1;
        let n = bytes.len().min(self.buf.len());
        self.buf[..n].copy_from_slice(&bytes[..n]);
        self.len = n;
        self.overflow = bytes.len() > n;
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.buf[..self.len]).into_owned()
    }
}
