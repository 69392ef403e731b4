//! Scheduled prompts (`PKG_AGENT_SCHEDULE`): `agent_schedule add <when>
//! <prompt>`, `list`, `del <id>` at the shell, `agent_schedule_add/del` in
//! AgentExt.h.
//!
//! `agent_schedule run <id>` runs an entry at once, as if it were due.
//!
//! The entries live in a file on the board's file system
//! (`PKG_AGENT_SCHEDULE_FILE`, `crate::wire::notes`'s form, written whole
//! through `crate::runtime::kept_file`), read at the agent's start. While the agent
//! runs, a thread wakes every second; a due prompt goes on the loop's input
//! mailbox as a user message, as the Debug channel's do, and its reply goes
//! out as every reply does (the channel shows it), to the log
//! (`schedule #<id>: <reply>`) and to the sink a module set
//! (`agent_schedule_set_sink`). While an entry's prompt waits or is being
//! answered, a run that falls due is counted as missed, not queued: at most
//! one run per entry waits.

use crate::abi::messages::Messages_t;
use crate::base::fallible::{copy_of, extend, push};
use crate::base::text_buf::TextBuf;
use crate::rtt::atomic::{AtomicBool, AtomicPtr, Ordering};
use crate::rtt::ipc::Semaphore;
use crate::rtt::name::ObjectName;
use crate::rtt::sleep_cell::SleepCell;
use crate::rtt::sleep_lock::SleepLock;
use crate::rtt::thread;
use crate::runtime::kept_file::{self, Failed};
use crate::wire::deadline::ms_to_ticks;
use crate::wire::notes::{self, Note, Notes};
use crate::wire::schedule::{self as when, BadWhen, Tm, When};
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, CStr};

use crate::rtt::glue::{agent_glue_local_time, agent_glue_schedule_file};

/// Most entries, and the longest prompt (bytes).
pub const MAX_ENTRIES: usize = 8;
pub const PROMPT_MAX: usize = 256;
/// The file's bound: every entry at its longest.
const FILE_MAX: usize = 64 + MAX_ENTRIES * (PROMPT_MAX * 2 + 64);
const WHAT: &str = "schedule: ";

/// One entry while the agent runs.
struct Entry {
    id: u32,
    when: When,
    prompt: Vec<u8>,
    /// `Every`: the tick it is next due.
    next_tick: u32,
    /// `Cron`: the minute it last ran (its stamp).
    last_minute: u32,
    /// Its prompt waits in the mailbox or is being answered.
    waiting: bool,
    missed: u32,
    runs: u32,
}

struct Table {
    entries: Vec<Entry>,
    /// Messages of ours on the mailbox, with their entry.
    tags: Vec<(usize, u32)>,
}

static TABLE: SleepCell<Table> = SleepCell::new(Table {
    entries: Vec::new(),
    tags: Vec::new(),
});

fn with_table<R>(f: impl FnOnce(&mut Vec<Entry>, &mut Vec<(usize, u32)>) -> R) -> R {
    TABLE.with(|t| f(&mut t.entries, &mut t.tags))
}

/// The reply's receiver a module set: `(id, reply)`.
pub type Sink = unsafe extern "C" fn(id: c_int, reply: *const c_char);
static SINK: AtomicPtr<core::ffi::c_void> = AtomicPtr::new(core::ptr::null_mut());

/// Set (or, with `None`, clear) the sink of the replies.
pub fn set_sink(sink: Option<Sink>) {
    SINK.store(
        sink.map_or(core::ptr::null_mut(), |f| f as *mut core::ffi::c_void),
        Ordering::SeqCst,
    );
}

fn path() -> Option<&'static CStr> {
    // SAFETY: the glue returns NULL or a static NUL-terminated string.
    unsafe { kept_file::path(agent_glue_schedule_file()) }
}

fn now() -> u32 {
    // SAFETY: only reads the tick counter.
    unsafe { crate::rtt::rt_tick_get() }
}

fn tick_rate() -> u32 {
    crate::rtt::board().tick_per_second.clamp(1, 1_000_000) as u32
}

/// The board's local time, if its clock is set.
fn local_time() -> Option<Tm> {
    let mut t = [0 as c_int; 5];
    // SAFETY: five writable ints.
    if unsafe { agent_glue_local_time(t.as_mut_ptr()) } != 0 {
        return None;
    }
    let [minute, hour, day, month, weekday] = t.map(|v| v.clamp(0, 255) as u8);
    Some(Tm {
        minute,
        hour,
        day,
        month,
        weekday,
    })
}

fn minute_stamp(t: &Tm) -> u32 {
    ((u32::from(t.month) * 32 + u32::from(t.day)) * 24 + u32::from(t.hour)) * 60
        + u32::from(t.minute)
}

/// An entry of the file: its key is `<id> <when>`.
fn parse_entry(note: &Note) -> Option<(u32, When)> {
    let key = &note.key;
    let space = key.iter().position(|&b| b == b' ')?;
    let id = crate::base::text::parse_decimal(key.get(..space)?, 6)? as u32;
    let rest = key.get(space + 1..)?;
    // "every 5s" or five cron fields: no more than five words.
    let (words, n) = when::words_of(rest);
    let words = words.get(..n)?;
    let (when, used) = when::parse(words).ok()?;
    (used == n).then_some((id, when))
}

fn load(path: &CStr) -> Result<Notes, Failed> {
    kept_file::load(
        path,
        notes::SCHEDULE_HEAD,
        FILE_MAX,
        "the schedule's bound",
        WHAT,
    )
}

/// Why an entry was not added.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddError {
    When(BadWhen),
    /// A cron expression on a board whose clock is not set.
    NoClock,
    EmptyPrompt,
    PromptTooLong,
    Full,
    NoFile,
    NoMemory,
    NotWritten,
}

impl AddError {
    pub fn text(self) -> &'static str {
        match self {
            AddError::When(b) => b.text(),
            AddError::NoClock => "the board's clock is not set: use every <N>s|m|h",
            AddError::EmptyPrompt => "no prompt",
            AddError::PromptTooLong => "the prompt is longer than 256 bytes",
            AddError::Full => "the schedule is full (8 entries)",
            AddError::NoFile => "no schedule file (PKG_AGENT_SCHEDULE_FILE is empty)",
            AddError::NoMemory => "out of memory",
            AddError::NotWritten => "the schedule file could not be written",
        }
    }
}

impl From<Failed> for AddError {
    fn from(f: Failed) -> Self {
        match f {
            Failed::NoMemory => AddError::NoMemory,
            Failed::NotWritten => AddError::NotWritten,
        }
    }
}

/// Add an entry: `words` are `<when>` then the prompt's words (joined by
/// spaces; surrounding quotes dropped). Its id.
pub fn add(words: &[&[u8]]) -> Result<u32, AddError> {
    let (parsed, used) = when::parse(words).map_err(AddError::When)?;
    if matches!(parsed, When::Cron(_)) && local_time().is_none() {
        return Err(AddError::NoClock);
    }
    let mut prompt = Vec::new();
    for (i, w) in words.iter().skip(used).enumerate() {
        let sep: &[u8] = if i > 0 { b" " } else { b"" };
        extend(&mut prompt, sep).map_err(|_| AddError::NoMemory)?;
        extend(&mut prompt, w).map_err(|_| AddError::NoMemory)?;
    }
    let prompt = unquote(prompt);
    if prompt.is_empty() {
        return Err(AddError::EmptyPrompt);
    }
    if prompt.len() > PROMPT_MAX {
        return Err(AddError::PromptTooLong);
    }
    let mut key = Vec::new();
    for (i, w) in words.iter().take(used).enumerate() {
        let sep: &[u8] = if i > 0 { b" " } else { b"" };
        extend(&mut key, sep).map_err(|_| AddError::NoMemory)?;
        extend(&mut key, w).map_err(|_| AddError::NoMemory)?;
    }
    let path = path().ok_or(AddError::NoFile)?;
    let _held = FILE_LOCK.lock();
    let mut file = load(path)?;
    if file.notes.len() >= MAX_ENTRIES {
        return Err(AddError::Full);
    }
    // Numbers are not reused: the file's summary line keeps the next one.
    let kept_next = crate::base::text::parse_decimal(&file.summary, 6).unwrap_or(1) as u32;
    let id = file
        .notes
        .iter()
        .filter_map(parse_entry)
        .map(|(id, _)| id + 1)
        .fold(kept_next.max(1), u32::max);
    let mut next = [0u8; 20];
    file.summary.clear();
    extend(
        &mut file.summary,
        crate::base::text::decimal(u64::from(id) + 1, &mut next),
    )
    .map_err(|_| AddError::NoMemory)?;
    let mut digits = [0u8; 20];
    let mut full_key = copy_of(crate::base::text::decimal(u64::from(id), &mut digits))
        .map_err(|_| AddError::NoMemory)?;
    push(&mut full_key, b' ').map_err(|_| AddError::NoMemory)?;
    extend(&mut full_key, &key).map_err(|_| AddError::NoMemory)?;
    let entry_prompt = copy_of(&prompt).map_err(|_| AddError::NoMemory)?;
    push(
        &mut file.notes,
        Note {
            key: full_key,
            text: prompt,
        },
    )
    .map_err(|_| AddError::NoMemory)?;
    kept_file::store(path, notes::SCHEDULE_HEAD, &file, WHAT)?;
    if RUNNING.load(Ordering::SeqCst) {
        let entry = fresh(id, parsed, entry_prompt);
        if with_table(|entries, _| push(entries, entry)).is_err() {
            crate::log_w!(
                "schedule: no memory to run entry #",
                id,
                " before the agent's next start"
            );
        }
    }
    Ok(id)
}

/// `"text"` without its quotes.
fn unquote(text: Vec<u8>) -> Vec<u8> {
    match (text.first(), text.last()) {
        (Some(b'"'), Some(b'"')) if text.len() >= 2 => text
            .get(1..text.len() - 1)
            .and_then(|t| copy_of(t).ok())
            .unwrap_or(text),
        _ => text,
    }
}

fn fresh(id: u32, when: When, prompt: Vec<u8>) -> Entry {
    let next_tick = match when {
        When::Every { ms } => now().wrapping_add(ms_to_ticks(ms, tick_rate())),
        When::Cron(_) => 0,
    };
    Entry {
        id,
        when,
        prompt,
        next_tick,
        last_minute: local_time().map_or(u32::MAX, |t| minute_stamp(&t)),
        waiting: false,
        missed: 0,
        runs: 0,
    }
}

/// Remove entry `id`: whether there was one.
pub fn del(id: u32) -> Result<bool, Failed> {
    let Some(path) = path() else {
        return Ok(false);
    };
    let _held = FILE_LOCK.lock();
    let mut file = load(path)?;
    let before = file.notes.len();
    file.notes
        .retain(|n| parse_entry(n).is_none_or(|(i, _)| i != id));
    let found = file.notes.len() != before;
    if found {
        kept_file::store(path, notes::SCHEDULE_HEAD, &file, WHAT)?;
    }
    let removed = with_table(|entries, _| {
        let before = entries.len();
        entries.retain(|e| e.id != id);
        entries.len() != before
    });
    Ok(found || removed)
}

/// The entries, a line each, to `out`.
pub fn list(out: &mut TextBuf) {
    let Some(path) = path() else {
        out.push_str("no schedule file (PKG_AGENT_SCHEDULE_FILE is empty)\n");
        return;
    };
    let file = {
        let _held = FILE_LOCK.lock();
        load(path)
    };
    let Ok(file) = file else {
        out.push_str("the schedule cannot be read (out of memory)\n");
        return;
    };
    if file.notes.is_empty() {
        out.push_str("no scheduled prompts\n");
        return;
    }
    for note in &file.notes {
        let Some((id, _)) = parse_entry(note) else {
            continue;
        };
        let stats = with_table(|entries, _| {
            entries
                .iter()
                .find(|e| e.id == id)
                .map(|e| (e.runs, e.missed))
        });
        out.push_str("#")
            .push(&note.key)
            .push_str(": ")
            .push(&note.text);
        if let Some((runs, missed)) = stats {
            out.push_str(" (runs ")
                .push_num(runs as usize)
                .push_str(", missed ")
                .push_num(missed as usize)
                .push_str(")");
        }
        out.push_str("\n");
    }
}

static FILE_LOCK: SleepLock = SleepLock::new();
const THREAD_NAME: ObjectName = ObjectName::new(c"AgentSched", c"AgSched");
static RUNNING: AtomicBool = AtomicBool::new(false);
static STOP: AtomicBool = AtomicBool::new(false);

struct Signals {
    /// Released by `stop` (wakes the thread) and by the thread as it ends.
    wake: UnsafeCell<Option<Semaphore>>,
    done: UnsafeCell<Option<Semaphore>>,
}
// SAFETY: written only while no scheduler thread exists; the thread only
// reads them.
unsafe impl Sync for Signals {}
static SIGNALS: Signals = Signals {
    wake: UnsafeCell::new(None),
    done: UnsafeCell::new(None),
};

/// How a prompt goes on the running loop's input mailbox (the loop hands
/// it over at start: the loop is above this module): `Err` gives the
/// message back.
pub use crate::runtime::ability::Put;
static PUT: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Read the file and start the thread (the agent's start), putting due
/// prompts with `put`. A failure is logged; the agent runs on without its
/// schedule.
pub fn start(put: Put) {
    PUT.store(put as *mut (), Ordering::SeqCst);
    let Some(path) = path() else {
        return;
    };
    if RUNNING.load(Ordering::SeqCst) {
        return;
    }
    let file = {
        let _held = FILE_LOCK.lock();
        load(path)
    };
    let Ok(file) = file else {
        crate::log_w!("schedule: not started: out of memory");
        return;
    };
    let mut entries = Vec::new();
    for note in &file.notes {
        let Some((id, parsed)) = parse_entry(note) else {
            crate::log_w!(
                "schedule: an entry of ",
                path.to_bytes(),
                " is not understood; skipped"
            );
            continue;
        };
        let Ok(prompt) = copy_of(&note.text) else {
            crate::log_w!("schedule: not started: out of memory");
            return;
        };
        if push(&mut entries, fresh(id, parsed, prompt)).is_err() {
            crate::log_w!("schedule: not started: out of memory");
            return;
        }
    }
    drop(file);
    let count = entries.len();
    let wake = Semaphore::create(ObjectName::new(c"AgentSchW", c"AgSchW"), 0);
    let done = Semaphore::create(ObjectName::new(c"AgentSchD", c"AgSchD"), 0);
    let (Some(wake), Some(done)) = (wake, done) else {
        crate::log_w!("schedule: not started: out of memory");
        return;
    };
    with_table(|table, _| *table = entries);
    // SAFETY: no scheduler thread exists (not running).
    unsafe {
        *SIGNALS.wake.get() = Some(wake);
        *SIGNALS.done.get() = Some(done);
    }
    STOP.store(false, Ordering::SeqCst);
    RUNNING.store(true, Ordering::SeqCst);
    let spec = thread::Spec {
        name: THREAD_NAME,
        stack_size: 2048,
        priority: crate::rtt::board().loop_priority.clamp(1, 255) as u8,
        tick: 10,
    };
    if thread::Thread::spawn_with(&spec, (), scheduler_thread).is_none() {
        crate::log_w!("schedule: not started: no memory for its thread");
        RUNNING.store(false, Ordering::SeqCst);
        forget_all();
        return;
    }
    crate::log_i!("schedule: ", count as u32, " scheduled prompt(s)");
}

/// Free the table and the signals (no thread runs).
fn forget_all() {
    drop(with_table(|entries, tags| {
        (core::mem::take(entries), core::mem::take(tags))
    }));
    // SAFETY: no scheduler thread exists.
    unsafe {
        *SIGNALS.wake.get() = None;
        *SIGNALS.done.get() = None;
    }
}

/// Stop the thread and wait for it (the agent's teardown, before the hub
/// goes); the entries stay in the file.
pub fn stop() {
    if !RUNNING.load(Ordering::SeqCst) {
        return;
    }
    STOP.store(true, Ordering::SeqCst);
    // SAFETY: set by `start`, not written until the thread has ended.
    unsafe {
        if let Some(wake) = (*SIGNALS.wake.get()).as_ref() {
            wake.release();
        }
        if let Some(done) = (*SIGNALS.done.get()).as_ref() {
            done.take(crate::rtt::RT_WAITING_FOREVER);
        }
    }
    // A finished thread's stack and control block are freed later, by the
    // idle thread: the agent's cleanup ends with the heap back, so wait (a
    // bounded while) until the kernel has let it go.
    for _ in 0..200 {
        if !thread::exists(THREAD_NAME) {
            break;
        }
        thread::sleep_ms(10);
    }
    RUNNING.store(false, Ordering::SeqCst);
    forget_all();
}

fn scheduler_thread(_: ()) {
    let second = ms_to_ticks(1000, tick_rate()).min(i32::MAX as u32) as i32;
    while !STOP.load(Ordering::SeqCst) {
        // SAFETY: set by `start` before the thread, cleared only after it.
        if let Some(wake) = unsafe { (*SIGNALS.wake.get()).as_ref() } {
            wake.take(second);
        }
        if STOP.load(Ordering::SeqCst) {
            break;
        }
        tick();
    }
    // SAFETY: as above; `stop` waits on it.
    if let Some(done) = unsafe { (*SIGNALS.done.get()).as_ref() } {
        done.release();
    }
}

/// Why `run_now` did not put an entry's prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunNow {
    /// The agent (and so the schedule) is not running.
    NotRunning,
    NoEntry,
    /// Its prompt waits or is being answered (counted as missed).
    Waiting,
    /// No memory, or the loop's mailbox is full (counted as missed).
    NotPut,
}

/// Run entry `id` now, as if it were due (`agent_schedule run <id>`: try an
/// entry without waiting for its time); its timing does not change.
pub fn run_now(id: u32) -> Result<(), RunNow> {
    if !RUNNING.load(Ordering::SeqCst) {
        return Err(RunNow::NotRunning);
    }
    let prompt = with_table(|entries, _| {
        let e = entries
            .iter_mut()
            .find(|e| e.id == id)
            .ok_or(RunNow::NoEntry)?;
        if e.waiting {
            e.missed += 1;
            return Err(RunNow::Waiting);
        }
        let Ok(prompt) = copy_of(&e.prompt) else {
            e.missed += 1;
            return Err(RunNow::NotPut);
        };
        e.waiting = true;
        e.runs += 1;
        Ok(prompt)
    })?;
    if put(id, &prompt) {
        Ok(())
    } else {
        with_table(|entries, _| {
            if let Some(e) = entries.iter_mut().find(|e| e.id == id) {
                e.waiting = false;
                e.missed += 1;
            }
        });
        Err(RunNow::NotPut)
    }
}

/// One second: put the due prompts on the mailbox.
fn tick() {
    let t = now();
    let tm = local_time();
    let mut due: Vec<(u32, Vec<u8>)> = Vec::new();
    with_table(|entries, _| {
        for e in entries.iter_mut() {
            let is_due = match e.when {
                When::Every { ms } => {
                    if (t.wrapping_sub(e.next_tick) as i32) < 0 {
                        false
                    } else {
                        let step = ms_to_ticks(ms, tick_rate());
                        e.next_tick = e.next_tick.wrapping_add(step);
                        if (t.wrapping_sub(e.next_tick) as i32) >= 0 {
                            // Far behind (the board was busy): from now on.
                            e.next_tick = t.wrapping_add(step);
                        }
                        true
                    }
                }
                When::Cron(c) => tm.is_some_and(|tm| {
                    let stamp = minute_stamp(&tm);
                    let run = c.matches(&tm) && stamp != e.last_minute;
                    if run {
                        e.last_minute = stamp;
                    }
                    run
                }),
            };
            if !is_due {
                continue;
            }
            if e.waiting {
                e.missed += 1;
                continue;
            }
            let queued = copy_of(&e.prompt)
                .ok()
                .is_some_and(|prompt| push(&mut due, (e.id, prompt)).is_ok());
            if queued {
                e.waiting = true;
                e.runs += 1;
            } else {
                e.missed += 1;
            }
        }
    });
    for (id, prompt) in due {
        if !put(id, &prompt) {
            with_table(|entries, _| {
                if let Some(e) = entries.iter_mut().find(|e| e.id == id) {
                    e.waiting = false;
                    e.missed += 1;
                }
            });
        }
    }
}

/// Put entry `id`'s prompt on the loop's mailbox, tagged.
fn put(id: u32, prompt: &[u8]) -> bool {
    use crate::abi::messages::{messages_append, messages_create, messages_destroy, TYPE_TEXT};
    let mut text = TextBuf::new();
    text.push(prompt).push(b"\0");
    if text.oom {
        return false;
    }
    let msg = messages_create(1);
    if msg.is_null() {
        return false;
    }
    // SAFETY: the live set made above; the text is NUL-terminated, copied.
    if unsafe { messages_append(msg, TYPE_TEXT, text.bytes.as_ptr() as *const c_char) }
        != crate::rtt::rt_eok()
    {
        // SAFETY: made above, owned here.
        unsafe { messages_destroy(msg) };
        return false;
    }
    if with_table(|_, tags| push(tags, (msg as usize, id))).is_err()
        || !crate::runtime::unasked::mark_input(msg)
    {
        with_table(|_, tags| tags.retain(|&(m, _)| m != msg as usize));
        // SAFETY: made above, owned here.
        unsafe { messages_destroy(msg) };
        return false;
    }
    let put = PUT.load(Ordering::SeqCst);
    let sent = if put.is_null() {
        Err(msg)
    } else {
        // SAFETY: `put` is the loop's `Put`, stored by `start` (which runs
        // before this thread) as a function pointer; `msg` is a live set
        // owned here, the loop's on `Ok`.
        unsafe { core::mem::transmute::<*mut (), Put>(put)(msg) }
    };
    match sent {
        Ok(()) => true,
        Err(msg) => {
            crate::runtime::unasked::unmark_input(msg);
            with_table(|_, tags| tags.retain(|&(m, _)| m != msg as usize));
            // SAFETY: given back, so still ours.
            unsafe { messages_destroy(msg) };
            crate::log_w!(
                "schedule: #",
                id,
                ": the agent's mailbox is full; counted as missed"
            );
            false
        }
    }
}

/// Whether `msg` (just taken by the loop) is a scheduled prompt: its
/// entry's id.
pub fn take_tag(msg: crate::abi::messages::Messages_t) -> Option<u32> {
    with_table(|_, tags| {
        let at = tags.iter().position(|&(m, _)| m == msg as usize)?;
        let id = tags.get(at).map(|&(_, id)| id);
        tags.retain(|&(m, _)| m != msg as usize);
        id
    })
}

/// The reply to entry `id`'s prompt: logged, handed to the sink; the entry
/// may run again.
pub fn replied(id: u32, reply: &[u8]) {
    with_table(|entries, _| {
        if let Some(e) = entries.iter_mut().find(|e| e.id == id) {
            e.waiting = false;
        }
    });
    crate::log_i!("schedule #", id, ": ", reply);
    let sink = SINK.load(Ordering::SeqCst);
    if sink.is_null() {
        return;
    }
    let mut text = TextBuf::new();
    text.push(reply).push(b"\0");
    if text.oom {
        return;
    }
    // SAFETY: a `Sink` stored by `set_sink`; the text is NUL-terminated
    // and borrowed for the call.
    unsafe {
        let f: Sink = core::mem::transmute::<*mut core::ffi::c_void, Sink>(sink);
        f(
            id.min(i32::MAX as u32) as c_int,
            text.bytes.as_ptr() as *const c_char,
        );
    }
}

/// `agent_schedule add <when> <prompt> | list | del <id>`.
///
/// # Safety
/// finsh's `argc` and NUL-terminated `argv`.
pub unsafe fn command(argc: c_int, argv: *mut *mut c_char) -> c_int {
    let mut words: Vec<&[u8]> = Vec::new();
    for i in 0..argc.max(0) as usize {
        // SAFETY: finsh passes `argc` valid NUL-terminated strings.
        let w = unsafe { CStr::from_ptr(*argv.add(i)) }.to_bytes();
        if push(&mut words, w).is_err() {
            say(b"agent_schedule: out of memory\n");
            return -1;
        }
    }
    let mut out = TextBuf::new();
    let rc = match words.get(1..) {
        Some([cmd, rest @ ..]) if *cmd == b"add" => match add(rest) {
            Ok(id) => {
                out.push_str("scheduled #")
                    .push_num(id as usize)
                    .push_str("\n");
                0
            }
            Err(e) => {
                out.push_str("agent_schedule: ")
                    .push_str(e.text())
                    .push_str("\n");
                -1
            }
        },
        Some([cmd]) if *cmd == b"list" => {
            list(&mut out);
            0
        }
        Some([cmd, id]) if *cmd == b"run" => {
            let why = match crate::base::text::parse_decimal(id, 6).map(|id| run_now(id as u32)) {
                Some(Ok(())) => None,
                Some(Err(RunNow::NotRunning)) => Some("the agent is not running"),
                Some(Err(RunNow::NoEntry)) => Some("no such entry"),
                Some(Err(RunNow::Waiting)) => {
                    Some("its last run is still waiting (counted as missed)")
                }
                Some(Err(RunNow::NotPut)) => {
                    Some("the agent's mailbox is full or no memory (counted as missed)")
                }
                None => Some("run takes an entry's number"),
            };
            match why {
                None => {
                    out.push_str("running #").push(id).push_str("\n");
                    0
                }
                Some(why) => {
                    out.push_str("agent_schedule: ")
                        .push_str(why)
                        .push_str("\n");
                    -1
                }
            }
        }
        Some([cmd, id]) if *cmd == b"del" => {
            match crate::base::text::parse_decimal(id, 6).map(|id| del(id as u32)) {
                Some(Ok(true)) => {
                    out.push_str("deleted #").push(id).push_str("\n");
                    0
                }
                Some(Ok(false)) => {
                    out.push_str("agent_schedule: no entry #")
                        .push(id)
                        .push_str("\n");
                    -1
                }
                Some(Err(_)) => {
                    out.push_str("agent_schedule: the schedule file could not be written\n");
                    -1
                }
                None => {
                    out.push_str("agent_schedule: del takes an entry's number\n");
                    -1
                }
            }
        }
        _ => {
            out.push_str(
                "usage: agent_schedule add every <N>s|m|h <prompt> | add \"<min> <hour> <day> <month> <weekday>\" <prompt> | list | run <id> | del <id>\n",
            );
            -1
        }
    };
    say(&out.bytes);
    rc
}

fn say(text: &[u8]) {
    crate::rtt::log::console_print(text);
}

/// The schedule's hooks: its thread runs with the agent; a scheduled
/// prompt's reply goes to the log and the sink.
pub const ABILITY: crate::runtime::ability::Ability = crate::runtime::ability::Ability {
    start: Some(start),
    stop: Some(stop),
    took: Some(took),
    replied: Some(replied_to),
    ..crate::runtime::ability::Ability::NONE
};

/// [`take_tag`] as a hook's tag: the entry's id plus one (0: not a
/// scheduled prompt).
fn took(msg: Messages_t) -> u32 {
    take_tag(msg).map_or(0, |id| id.saturating_add(1))
}

fn replied_to(tag: u32, reply: &[u8]) {
    replied(tag - 1, reply);
}
