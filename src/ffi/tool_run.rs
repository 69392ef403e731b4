//! What the agent loop and the MCP server share when they run a registered
//! C tool: the tool lock, and the check of the arguments against the
//! tool's schema with its text for the caller.
//!
//! # The tool lock
//! C tools are written for one caller at a time (they reuse their node's
//! `ret` for every call), and the registry belongs to the loop thread while
//! the agent runs. So every run of a tool, and every change of the registry
//! while other threads may read it, happens under the agent's one tool
//! lock (a kernel mutex: priority inheritance, recursive for its holder):
//! - the loop holds it from the lookup of a tool call until the tool's
//!   result has been copied into the context (the `ToolAnswer` that borrows
//!   the node's result carries the guard), and while it registers tools
//!   queued from other threads;
//! - the MCP server holds it from the lookup of a `tools/call` until its
//!   reply holds a copy of the result, and while it lists the tools.
//!
//! A long tool therefore holds up the other side for as long as it runs;
//! nothing else waits on it (the loop's hub, the channels and the server's
//! other requests do not take it).

#[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
use super::tools::AgentToolNode_t;
#[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
use crate::cjson::json;
#[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
use crate::cjson::sys::*;
#[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
use core::ffi::{c_void, CStr};

#[cfg(feature = "mcp-server")]
pub(crate) use super::agent_loop::lock_tools;

/// Why `args` do not fit the parameters `node`'s tool registered, if they
/// do not.
///
/// # Safety
/// `node` is a live registry node (looked up under the tool lock); it and
/// `args` stay alive and unchanged until the mismatch has been described.
#[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
pub(crate) unsafe fn mismatch(
    node: AgentToolNode_t,
    args: *const cJSON,
) -> Result<(), crate::wire::tool_args::Mismatch<'static>> {
    // SAFETY: as this function's contract says.
    unsafe {
        let parameters = json::get(json::get((*node).tool_obj, c"function"), c"parameters");
        crate::wire::tool_args::check(parameters, args)
    }
}

/// A short text for the caller (the model, an MCP client) saying what is
/// wrong, handed to `out` in pieces.
#[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
pub(crate) fn describe(out: &mut dyn FnMut(&[u8]), why: crate::wire::tool_args::Mismatch<'_>) {
    use crate::wire::tool_args::Mismatch;
    match why {
        Mismatch::Missing(p) => {
            out(b"the required property \"");
            out(p);
            out(b"\" is missing");
        }
        Mismatch::Type(p, want, got) => {
            out(b"\"");
            out(p);
            out(b"\" should be ");
            out(want);
            out(b", not ");
            out(got);
        }
        Mismatch::NotInEnum(p, allowed) => {
            out(b"\"");
            out(p);
            out(b"\" should be one of ");
            // SAFETY: the schema's live enum array (see `mismatch`).
            let shown = unsafe { cJSON_PrintUnformatted(allowed) };
            if shown.is_null() {
                out(b"its enum values");
            } else {
                // SAFETY: a NUL-terminated string cJSON just printed, freed
                // once below with cJSON's allocator.
                unsafe {
                    out(CStr::from_ptr(shown).to_bytes());
                    cJSON_free(shown as *mut c_void);
                }
            }
        }
    }
}

/// Calls already run in the current turn (one user message's rounds): a
/// repeated identical call (same tool, same arguments) is not run again;
/// the model gets the earlier result with a note. Loop thread only (the
/// lock keeps it sound).
struct Earlier {
    lock: crate::rtt::sleep_lock::SleepLock,
    calls: core::cell::UnsafeCell<alloc::vec::Vec<Ran>>,
}

/// One call that ran: its tool, its arguments as cJSON prints them
/// unformatted, the text its tool answered.
struct Ran {
    name: alloc::vec::Vec<u8>,
    args: alloc::vec::Vec<u8>,
    result: alloc::vec::Vec<u8>,
}

// SAFETY: `calls` is reached only with `lock` held.
unsafe impl Sync for Earlier {}

static EARLIER: Earlier = Earlier {
    lock: crate::rtt::sleep_lock::SleepLock::new(),
    calls: core::cell::UnsafeCell::new(alloc::vec::Vec::new()),
};

fn with_earlier<R>(f: impl FnOnce(&mut alloc::vec::Vec<Ran>) -> R) -> R {
    let _held = EARLIER.lock.lock();
    // SAFETY: the lock is held.
    f(unsafe { &mut *EARLIER.calls.get() })
}

/// What the model reads instead of a repeated call's result, before the
/// earlier result.
pub(crate) const REPEATED_NOTE: &str = "note: this exact call (same tool, same arguments) already ran in this turn, so it was not run again; use its result, which was: ";

/// One turn's memory of its calls: forgotten when the turn begins and when
/// it ends (dropped).
pub(crate) struct Turn(());

impl Turn {
    pub(crate) fn begin() -> Turn {
        forget_calls();
        Turn(())
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        forget_calls();
    }
}

fn forget_calls() {
    // Freed outside the lock.
    drop(with_earlier(core::mem::take));
}

/// The earlier result of the same call in this turn, to `out`; whether
/// there was one.
pub(crate) fn earlier(name: &[u8], args: &[u8], out: &mut dyn FnMut(&[u8])) -> bool {
    with_earlier(
        |calls| match calls.iter().find(|r| r.name == name && r.args == args) {
            Some(r) => {
                out(&r.result);
                true
            }
            None => false,
        },
    )
}

/// Remember a call that ran and what its tool answered (skipped without
/// memory: the call would only run again).
pub(crate) fn remember(name: &[u8], args: &[u8], result: &[u8]) {
    use crate::base::fallible::{copy_of, push};
    let (Ok(name), Ok(args), Ok(result)) = (copy_of(name), copy_of(args), copy_of(result)) else {
        return;
    };
    let ran = Ran { name, args, result };
    let _ = with_earlier(|calls| push(calls, ran));
}
