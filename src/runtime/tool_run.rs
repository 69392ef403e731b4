//! The one tool dispatch: how the agent loop and the MCP server run a
//! registered C tool. [`ToolSet`] is the registry under the tool lock; a
//! caller finds a tool in it, checks the arguments against the tool's
//! schema, and runs it. What a caller tells its own client (the model's
//! `tool` message, an MCP `tools/call` result) is written from the
//! outcome at its edge.
//!
//! # The tool lock
//! C tools are written for one caller at a time (they reuse their node's
//! `ret` for every call), and the registry belongs to the loop thread while
//! the agent runs. So every run of a tool, and every change of the registry
//! while other threads may read it, happens under the one tool lock (a
//! kernel mutex: priority inheritance, recursive for its holder), which the
//! registry makes and deletes with itself (`super::tools::lock_tools`), so
//! it is there with or without a running loop:
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

use super::tools::{self, AgentToolNode_t};
use super::tools::{lock_tools, ToolsGuard};
use crate::abi::messages::Messages_t;
#[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
use crate::cjson::json;
use crate::cjson::sys::cJSON;
#[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
use crate::cjson::sys::*;
use crate::rtt::rt_err_t;
#[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
use core::ffi::c_void;
use core::ffi::CStr;

/// Which of the registered tools a caller may run.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Offered {
    /// Every registered tool (the agent's model).
    All,
    /// The board's own tools: not those a remote MCP server lends the
    /// agent (an MCP client of the board; two boards pointed at each
    /// other then do not loop).
    #[cfg_attr(not(feature = "mcp-server"), allow(dead_code))]
    Served,
}

/// What a tool's function left in its node.
pub(crate) struct Ran {
    /// The node's result set (NULL when the tool set none): borrowed from
    /// the node, valid while the [`ToolSet`] it came from is held.
    pub result: Messages_t,
    /// The node's `ret`: `RT_EOK` when the tool reports success.
    pub status: rt_err_t,
}

/// The tool registry under the tool lock, held until dropped.
pub(crate) struct ToolSet {
    _held: ToolsGuard,
}

impl ToolSet {
    /// Take the tool lock, waiting while another caller runs a tool; `None`
    /// when there is no registry (not created, or being destroyed).
    pub(crate) fn lock() -> Option<ToolSet> {
        lock_tools().map(|held| ToolSet { _held: held })
    }

    /// The tools `offered`, in registration order.
    pub(crate) fn tools(&self, offered: Offered) -> impl Iterator<Item = AgentToolNode_t> {
        tools::nodes().filter(move |&n| offered == Offered::All || !is_remote(n))
    }

    /// The tool named `name` among those `offered`.
    pub(crate) fn find(&self, name: &[u8], offered: Offered) -> Option<AgentToolNode_t> {
        self.tools(offered).find(|&n| {
            // SAFETY: a live node of the registry, read under the lock.
            unsafe { tools::function_name((*n).tool_obj) }.map(CStr::to_bytes) == Some(name)
        })
    }

    /// Whether `args` fit the parameters `node`'s tool registered.
    ///
    /// # Safety
    /// `node` came from this set; `args` is a live object that stays
    /// unchanged until the mismatch has been described.
    #[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
    pub(crate) unsafe fn check(
        &self,
        node: AgentToolNode_t,
        args: *const cJSON,
    ) -> Result<(), crate::wire::tool_args::Mismatch<'static>> {
        // SAFETY: as this function's contract says.
        unsafe { mismatch(node, args) }
    }

    /// Run `node`'s tool with `args` (borrowed by the tool).
    ///
    /// # Safety
    /// `node` came from this set; `args` is a live cJSON object.
    pub(crate) unsafe fn execute(&self, node: AgentToolNode_t, args: *mut cJSON) -> Ran {
        // SAFETY: the node is live and ours under the lock (contract).
        if let Some(exec) = unsafe { (*node).execute_func } {
            // SAFETY: the tool's own function with a live arguments object
            // (borrowed) and its node, as `append_tool` documents.
            unsafe { exec(args, node) };
        }
        // SAFETY: as above: the node's result, read under the lock.
        let ret = unsafe { &(*node).ret };
        Ran {
            result: ret.messages,
            status: ret.ret,
        }
    }
}

#[cfg(feature = "mcp-client")]
fn is_remote(node: AgentToolNode_t) -> bool {
    crate::runtime::mcp::client::is_remote(node)
}
#[cfg(not(feature = "mcp-client"))]
fn is_remote(_node: AgentToolNode_t) -> bool {
    false
}

/// Why `args` do not fit the parameters `node`'s tool registered, if they
/// do not.
///
/// # Safety
/// `node` is a live registry node (looked up under the tool lock); it and
/// `args` stay alive and unchanged until the mismatch has been described.
#[cfg(any(feature = "tool-arg-check", feature = "mcp-server"))]
unsafe fn mismatch(
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
    calls: core::cell::UnsafeCell<alloc::vec::Vec<EarlierCall>>,
}

/// One call that ran: its tool, its arguments as cJSON prints them
/// unformatted, the text its tool answered.
struct EarlierCall {
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

fn with_earlier<R>(f: impl FnOnce(&mut alloc::vec::Vec<EarlierCall>) -> R) -> R {
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
    let ran = EarlierCall { name, args, result };
    let _ = with_earlier(|calls| push(calls, ran));
}
