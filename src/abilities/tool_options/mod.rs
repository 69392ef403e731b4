//! Per-tool options (`PKG_AGENT_TOOL_OPTIONS`; AgentExt.h's
//! `append_tool_ex`): a timeout, retries for remote tools, and direct
//! output.
//!
//! The options are kept by tool name, not by registry node: a tool appended
//! from another thread while the loop runs waits in the registry's queue
//! and gets its node later, and the node's layout is the C package's, with
//! no room for them. Options given with `append_tool_ex` belong to the
//! registry and go when it is destroyed (the agent's cleanup), as the tool
//! does. Options set by name with `agent_tool_set_options`, for tools the
//! board does not register itself (a remote MCP tool, `m<N>_<name>`), are
//! the caller's: they stay across the agent's restarts until set again.
//!
//! While a tool runs ([`CallScope`]), its timeout is the running call's
//! deadline: a remote tool's request ends there, and a C tool, which the
//! loop cannot stop, reads what is left with `agent_tool_deadline_ms()`.
//! Tools run one at a time under the tool lock, so one slot is enough; a
//! scope keeps the one it replaces (a tool run inside a tool, as a
//! sub-agent's are) and puts it back.

use crate::base::fallible::{copy_of, extend, push};
use crate::rtt::atomic::{AtomicUsize, Ordering};
use crate::rtt::sleep_cell::SleepCell;
use crate::runtime::ability::CallState;
use crate::runtime::tools::{function_name, AgentToolNode_t};
use crate::wire::deadline::{ticks_to_ms, Deadline};
use alloc::vec::Vec;

/// AgentExt.h's `agent_tool_options_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AgentToolOptions {
    /// Milliseconds a call may take; 0: no timeout of its own.
    pub timeout_ms: u32,
    /// Remote tools: how many times a failed call is sent again, with
    /// back-off (`PKG_AGENT_RETRY_BASE_MS`, doubled each time).
    pub retries: u8,
    /// Non-zero: a successful result is the answer; the model is not asked
    /// again.
    pub direct: u8,
    /// Zero.
    pub reserved: [u8; 2],
}

impl AgentToolOptions {
    pub fn is_direct(&self) -> bool {
        self.direct != 0
    }
}

/// One tool's options.
struct Entry {
    name: Vec<u8>,
    options: AgentToolOptions,
    /// Given with the tool (`append_tool_ex`): forgotten with the registry.
    registry: bool,
}

static TABLE: SleepCell<Vec<Entry>> = SleepCell::new(Vec::new());

fn with_table<R>(f: impl FnOnce(&mut Vec<Entry>) -> R) -> R {
    TABLE.with(f)
}

/// Keep `options` for the tool `name` (replacing earlier ones);
/// `registry`: they go with the registry. False without memory.
pub fn set(name: &[u8], options: AgentToolOptions, registry: bool) -> bool {
    let existing = with_table(|entries| {
        entries
            .iter_mut()
            .find(|e| e.name == name)
            .map(|e| {
                e.options = options;
                e.registry = registry;
            })
            .is_some()
    });
    if existing {
        return true;
    }
    let Ok(name) = copy_of(name) else {
        return false;
    };
    let entry = Entry {
        name,
        options,
        registry,
    };
    with_table(|entries| push(entries, entry)).is_ok()
}

/// Forget the options of the tool `name`.
pub fn unset(name: &[u8]) {
    with_table(|entries| {
        entries.retain(|e| e.name != name);
        if entries.is_empty() {
            // The table's own block goes too.
            *entries = Vec::new();
        }
    });
}

/// The options of the tool `name` (all zero when it has none).
pub fn of(name: &[u8]) -> AgentToolOptions {
    with_table(|entries| {
        entries
            .iter()
            .find(|e| e.name == name)
            .map_or_else(AgentToolOptions::default, |e| e.options)
    })
}

/// Forget the options given with the registry's tools (it is destroyed).
pub fn forget_registry() {
    with_table(|entries| {
        entries.retain(|e| !e.registry);
        if entries.is_empty() {
            // The table's own block goes too: the heap is back.
            *entries = Vec::new();
        }
    });
}

/// The running call's start tick and timeout (0: none).
static CALL_START: AtomicUsize = AtomicUsize::new(0);
static CALL_TIMEOUT_MS: AtomicUsize = AtomicUsize::new(0);
static CALL_RETRIES: AtomicUsize = AtomicUsize::new(0);

fn load(slot: &AtomicUsize) -> u32 {
    slot.load(Ordering::SeqCst) as u32
}

fn now() -> u32 {
    // SAFETY: only reads the tick counter.
    unsafe { crate::rtt::rt_tick_get() }
}

fn tick_rate() -> u32 {
    crate::rtt::board().tick_per_second.clamp(1, 1_000_000) as u32
}

/// The options of the call that runs, from its start to its end.
pub struct CallScope {
    saved: [usize; 3],
}

impl CallScope {
    /// A call of a tool with `options` starts now.
    pub fn enter(options: &AgentToolOptions) -> CallScope {
        let saved = [
            CALL_START.swap(now() as usize, Ordering::SeqCst),
            CALL_TIMEOUT_MS.swap(options.timeout_ms as usize, Ordering::SeqCst),
            CALL_RETRIES.swap(usize::from(options.retries), Ordering::SeqCst),
        ];
        CallScope { saved }
    }

    /// Milliseconds since the call started.
    pub fn elapsed_ms(&self) -> u32 {
        Self::elapsed_now_ms()
    }

    /// Milliseconds since the running call started.
    fn elapsed_now_ms() -> u32 {
        ticks_to_ms(now().wrapping_sub(load(&CALL_START)), tick_rate())
    }

    /// The scope as the slots it replaced, to [`CallScope::restore`] later
    /// (the loop's hook keeps them in its own state).
    fn into_saved(self) -> [usize; 3] {
        let saved = self.saved;
        core::mem::forget(self);
        saved
    }

    /// Put back the slots a scope replaced.
    fn restore(saved: [usize; 3]) {
        let [start, timeout, retries] = saved;
        CALL_START.store(start, Ordering::SeqCst);
        CALL_TIMEOUT_MS.store(timeout, Ordering::SeqCst);
        CALL_RETRIES.store(retries, Ordering::SeqCst);
    }
}

impl Drop for CallScope {
    fn drop(&mut self) {
        Self::restore(self.saved);
    }
}

/// The running call's limits, for a remote tool's request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallLimits {
    /// Milliseconds left before its timeout (at least 1); `None`: it has
    /// no timeout of its own.
    pub left_ms: Option<u32>,
    /// Times a failed request is sent again.
    pub retries: u8,
}

/// The limits of the call that runs now.
pub fn current() -> CallLimits {
    CallLimits {
        left_ms: left_ms().map(|ms| ms.max(1)),
        retries: load(&CALL_RETRIES).min(u32::from(u8::MAX)) as u8,
    }
}

/// The running call's timeout (ms); `None` when it has none.
pub fn timeout_ms() -> Option<u32> {
    Some(load(&CALL_TIMEOUT_MS)).filter(|&ms| ms != 0)
}

/// Milliseconds left of the running call's timeout (0 once it has passed);
/// `None` when no call runs or it has no timeout.
pub fn left_ms() -> Option<u32> {
    let ms = load(&CALL_TIMEOUT_MS);
    if ms == 0 {
        return None;
    }
    let deadline = Deadline::new(load(&CALL_START), ms, tick_rate());
    Some(deadline.remaining_ms(now()))
}

/// The direct-output results of the current turn, joined by new lines:
/// what the user gets instead of another answer of the model.
static DIRECT: SleepCell<Vec<u8>> = SleepCell::new(Vec::new());

fn with_direct<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    DIRECT.with(f)
}

/// Add a direct-output tool's result to the turn's answer; false without
/// memory (the result then goes to the model as any other).
pub fn add_direct(result: &[u8]) -> bool {
    with_direct(|text| {
        let sep: &[u8] = if text.is_empty() { b"" } else { b"\n" };
        let before = text.len();
        let added = extend(text, sep).is_ok() && extend(text, result).is_ok();
        if !added {
            text.truncate(before);
        }
        added
    })
}

/// Take the turn's direct answer (empty: none).
pub fn take_direct() -> Vec<u8> {
    with_direct(core::mem::take)
}

/// Whether a direct result waits.
pub fn has_direct() -> bool {
    with_direct(|text| !text.is_empty())
}

/// `agent_tool_deadline_ms` (AgentExt.h): for a tool while it runs, the
/// milliseconds left before its timeout (0 once passed); -1
/// (`RT_WAITING_FOREVER`) when it has no timeout or no tool runs.
pub fn agent_tool_deadline_ms() -> i32 {
    left_ms().map_or(-1, |ms| ms.min(i32::MAX as u32) as i32)
}

/// `agent_tool_set_options` (AgentExt.h): the options of the tool named
/// `name` (a remote MCP tool's `m<N>_<name>`, or any other), kept until set
/// again, across the agent's restarts; NULL `options`: none. `name` and
/// `options` are copied. `RT_EOK`, `RT_ERROR` without memory, `-RT_EINVAL`
/// for a NULL or empty name.
///
/// # Safety
/// `name` is NULL or NUL-terminated; `options` NULL or valid for reading.
pub unsafe fn agent_tool_set_options(
    name: *const core::ffi::c_char,
    options: *const AgentToolOptions,
) -> crate::rtt::rt_err_t {
    use crate::rtt::{rt_eok, rt_error};
    if name.is_null() {
        return -crate::rtt::board::rt_einval();
    }
    // SAFETY: non-NULL, so NUL-terminated (contract); read only.
    let name = unsafe { core::ffi::CStr::from_ptr(name) }.to_bytes();
    if name.is_empty() {
        return -crate::rtt::board::rt_einval();
    }
    // SAFETY: NULL or valid for reading (contract); copied.
    match unsafe { options.as_ref() } {
        None => {
            unset(name);
            rt_eok()
        }
        Some(options) if set(name, *options, false) => rt_eok(),
        Some(_) => rt_error(),
    }
}

/// Tool options plugged into the loop: each call's timeout and retries
/// hold while it runs, a direct-output tool's result is the turn's answer,
/// and the options given with a tool go with the registry.
pub const ABILITY: crate::runtime::ability::Ability = crate::runtime::ability::Ability {
    registry_gone: Some(forget_registry),
    tool_calls: Some(&TOOL_CALLS),
    ..crate::runtime::ability::Ability::NONE
};

static TOOL_CALLS: crate::runtime::ability::ToolCalls = crate::runtime::ability::ToolCalls {
    begin,
    end,
    succeeded,
    take_direct,
};

/// A tool that ends within this much past its timeout is not reported: a
/// sub-agent's last request ends at the timeout, a few ticks after it.
const PAST_TIMEOUT_GRACE_MS: u32 = 50;

/// The call of `node`'s tool begins: its options hold. The state kept for
/// [`end`]: the scope it replaced, and the timeout to report against (0:
/// none, or `served`, a remote tool, whose request the timeout itself
/// ends).
///
/// # Safety
/// `node` is a live node of the registry, under the tool lock.
unsafe fn begin(node: AgentToolNode_t, served: bool) -> CallState {
    // SAFETY: as this function's contract says.
    let name = unsafe { function_name((*node).tool_obj) }.map_or(&b""[..], |n| n.to_bytes());
    let options = of(name);
    let [start, timeout, retries] = CallScope::enter(&options).into_saved();
    let report = if served {
        0
    } else {
        options.timeout_ms as usize
    };
    CallState([start, timeout, retries, report])
}

/// The call ended: the scope it replaced is back; a C tool that ran past
/// its timeout is logged (the loop cannot stop C code).
///
/// # Safety
/// As [`begin`]'s, with the state it gave.
unsafe fn end(node: AgentToolNode_t, state: CallState) {
    let [start, timeout, retries, report] = state.0;
    let took = CallScope::elapsed_now_ms();
    CallScope::restore([start, timeout, retries]);
    let report = report as u32;
    if report != 0 && took > report.saturating_add(PAST_TIMEOUT_GRACE_MS) {
        // SAFETY: the node is live until the call ends (contract).
        let name = unsafe { function_name((*node).tool_obj) }.map_or(&b""[..], |n| n.to_bytes());
        let mut a = [0u8; 20];
        let mut b = [0u8; 20];
        crate::log_w!(
            "the tool ",
            name,
            " ran ",
            crate::base::text::decimal(u64::from(took), &mut a),
            " ms, past its timeout of ",
            crate::base::text::decimal(u64::from(report), &mut b),
            " ms"
        );
    }
}

/// A direct-output tool's successful result joins the turn's answer;
/// without memory to keep it, it goes to the model as any result.
fn succeeded(name: &[u8], result: &[u8]) {
    if of(name).is_direct() && !add_direct(result) {
        crate::log_w!(
            "no memory to answer with the result of ",
            name,
            ": the model gets it"
        );
    }
}

/// `append_tool_ex` (AgentExt.h): [`append_tool`](crate::runtime::tools::append_tool)
/// with `options` (NULL: none) kept for the tool's name. Ownership: as
/// `append_tool`, `tool_obj` is taken, also on failure; `options` is
/// borrowed and copied. Returns `RT_EOK`, or `RT_ERROR` (no memory, or
/// `append_tool` refused) with no options left behind.
///
/// # Safety
/// `tool_obj` is NULL or a detached tree handed over; `options` NULL or
/// valid for reading.
pub unsafe fn append_tool_ex(
    tool_obj: *mut crate::cjson::sys::cJSON,
    execute_func: Option<crate::runtime::tools::ExecuteFn>,
    options: *const AgentToolOptions,
) -> crate::rtt::rt_err_t {
    use crate::base::fallible::copy_of;
    use crate::rtt::rt_error;
    // SAFETY: NULL or valid for reading (contract); copied.
    let options = unsafe { options.as_ref() }.copied().unwrap_or_default();
    // SAFETY: `tool_obj` is NULL or a live tree (contract), read only.
    let name = unsafe { crate::runtime::tools::function_name(tool_obj) }
        .map_or(&b""[..], |n| n.to_bytes());
    // The name outlives `tool_obj`, which a refusing `append_tool` frees.
    let Ok(name) = copy_of(name) else {
        crate::log_w!("append_tool_ex: out of memory");
        // SAFETY: handed over (contract), not used again.
        unsafe { crate::cjson::sys::cJSON_Delete(tool_obj) };
        return rt_error();
    };
    let keep = options != AgentToolOptions::default() && !name.is_empty();
    if keep && !set(&name, options, true) {
        crate::log_w!("append_tool_ex: out of memory");
        // SAFETY: handed over (contract), not used again.
        unsafe { crate::cjson::sys::cJSON_Delete(tool_obj) };
        return rt_error();
    }
    // SAFETY: forwarded (the caller's contract is append_tool's).
    let rc = unsafe { crate::runtime::tools::append_tool(tool_obj, execute_func) };
    if rc != crate::rtt::rt_eok() && keep {
        unset(&name);
    }
    rc
}
