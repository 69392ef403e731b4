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
//!   the node's result carries the guard);
//! - whoever registers the tools queued from other threads (the loop after
//!   a turn, or the queuing thread while the loop waits) holds it meanwhile;
//! - the MCP server holds it from the lookup of a `tools/call` until its
//!   reply holds a copy of the result, and while it lists the tools.
//!
//! A long tool therefore holds up the other side for as long as it runs;
//! nothing else waits on it (the loop's hub, the channels and the server's
//! other requests do not take it).

use super::tools::{self, AgentToolList, AgentToolNode_t};
use super::tools::{lock_tools, ToolsGuard};
use crate::abi::hooks::TextHook;
use crate::abi::messages::{messages_destroy, Messages_t};
use crate::base::text_buf::TextBuf;
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::rtt::rt_err_t;
use crate::rtt::{board, rt_eok};
use core::ffi::{c_void, CStr};
use core::ptr;

/// What runs behind a registry node. Every tool the model is offered is a
/// node of the registry (its definition is what the request lists); what
/// answers a call differs: a C tool's own function, or a remote MCP
/// server (and, later, a sub-agent). Either leaves its result in the node.
pub(crate) enum Tool {
    /// A C tool: its `execute_func` fills the node's `ret`.
    C(unsafe extern "C" fn(*mut cJSON, *mut AgentToolList)),
    /// A tool of an ability's own (a note's, a sub-agent's, a remote MCP
    /// server's).
    Native(&'static super::ability::Native),
}

impl Tool {
    /// What runs `node`'s tool; `None` for a node without a function.
    ///
    /// # Safety
    /// `node` is a live node of the registry, read under the tool lock.
    unsafe fn of(node: AgentToolNode_t) -> Option<Tool> {
        // SAFETY: as this function's contract says.
        if let Some(native) = unsafe { super::ability::native_tool(node) } {
            return Some(Tool::Native(native));
        }
        // SAFETY: as this function's contract says.
        unsafe { (*node).execute_func }.map(Tool::C)
    }
}

/// What a tool's function left in its node.
pub(crate) struct Ran {
    /// The node's result set (NULL when the tool set none): borrowed from
    /// the node, valid while the [`ToolSet`] it came from is held.
    pub result: Messages_t,
    /// The node's `ret`: `RT_EOK` when the tool reports success.
    pub status: rt_err_t,
}

/// What holds while a tool runs, as an ability keeps it (a tool's timeout
/// and retries, `PKG_AGENT_TOOL_OPTIONS`): begun before the call, ended
/// after it, one inside another for a tool run inside a tool.
struct CallScope {
    node: AgentToolNode_t,
    held: Option<(
        &'static super::ability::ToolCalls,
        super::ability::CallState,
    )>,
}

impl CallScope {
    /// # Safety
    /// `node` is a live node of the registry, read under the tool lock,
    /// alive until the scope drops.
    unsafe fn of(node: AgentToolNode_t) -> CallScope {
        let held = super::ability::tool_calls().map(|calls| {
            // A tool an ability serves keeps its own time (a remote call's
            // deadline is its request's).
            // SAFETY: as this function's contract says.
            let served = matches!(unsafe { Tool::of(node) }, Some(Tool::Native(_)));
            // SAFETY: as this function's contract says.
            (calls, unsafe { (calls.begin)(node, served) })
        });
        CallScope { node, held }
    }
}

impl Drop for CallScope {
    fn drop(&mut self) {
        if let Some((calls, state)) = self.held {
            // SAFETY: the node is live until the scope drops (`of`).
            unsafe { (calls.end)(self.node, state) };
        }
    }
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

    /// The registered tools, in registration order.
    pub(crate) fn tools(&self) -> impl Iterator<Item = AgentToolNode_t> {
        tools::nodes()
    }

    /// The tool named `name` among those `offered` accepts (the MCP server
    /// offers only the board's own tools).
    pub(crate) fn find(
        &self,
        name: &[u8],
        offered: impl Fn(AgentToolNode_t) -> bool,
    ) -> Option<AgentToolNode_t> {
        self.tools().filter(|&n| offered(n)).find(|&n| {
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
        // The tool's timeout and retries hold while it runs.
        // SAFETY: the node is live and ours under the lock (contract).
        let _scope = unsafe { CallScope::of(node) };
        // SAFETY: the node is live and ours under the lock (contract).
        match unsafe { Tool::of(node) } {
            // SAFETY: the tool's own function with a live arguments object
            // (borrowed) and its node, as `append_tool` documents.
            Some(Tool::C(exec)) => unsafe { exec(args, node) },
            // SAFETY: a live node of the registry and a live object, as
            // the tool's type documents.
            Some(Tool::Native(native)) => unsafe { tools::run_native(node, args, native) },
            None => {}
        }
        // SAFETY: as above: the node's result, read under the lock.
        let ret = unsafe { &(*node).ret };
        Ran {
            result: ret.messages,
            status: ret.ret,
        }
    }
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

/// Why the arguments do not fit the tool's registered parameters, if they
/// do not (`PKG_AGENT_CHECK_TOOL_ARGS`).
#[cfg(feature = "tool-arg-check")]
fn check_arguments(
    tools: &ToolSet,
    node: AgentToolNode_t,
    args: *const cJSON,
) -> Result<(), crate::wire::tool_args::Mismatch<'static>> {
    // SAFETY: `node` came from `tools`, held by the caller; the parsed
    // `args` stay alive and unchanged until the mismatch has been described.
    unsafe { tools.check(node, args) }
}

#[cfg(not(feature = "tool-arg-check"))]
fn check_arguments(
    _tools: &ToolSet,
    _node: AgentToolNode_t,
    _args: *const cJSON,
) -> Result<(), core::convert::Infallible> {
    Ok(())
}

#[cfg(feature = "tool-arg-check")]
fn describe_mismatch(text: &mut TextBuf, why: crate::wire::tool_args::Mismatch<'_>) {
    describe(
        &mut |piece| {
            text.push(piece);
        },
        why,
    );
}

#[cfg(not(feature = "tool-arg-check"))]
fn describe_mismatch(_text: &mut TextBuf, why: core::convert::Infallible) {
    match why {}
}

/// A tool call's answer: the tool's own result set (the node's, borrowed),
/// or a text made here (`own`, freed on drop). It holds the tool lock, so
/// no other caller runs the tool and overwrites its result while the
/// answer is read (see `super::tool_run`).
pub(crate) struct ToolAnswer {
    pub content: Messages_t,
    own: Messages_t,
    _tools: Option<ToolSet>,
}

impl Drop for ToolAnswer {
    fn drop(&mut self) {
        // SAFETY: `own` is NULL or the set built for this answer, owned.
        unsafe { messages_destroy(self.own) };
    }
}

/// Run one tool call through the registry (unknown tool, too long or invalid
/// arguments, the schema check, the tool itself) and show its result to
/// `on_result`. `too_long`: its arguments were cut at
/// `PKG_AGENT_MAX_TOOL_ARG_LEN` (see `chat::LongCalls`).
///
/// # Safety
/// On the loop thread only (it owns the tool registry); `call` is NULL or a
/// live tool call that outlives the answer.
pub(crate) unsafe fn run_tool_call(
    call: *mut cJSON,
    too_long: bool,
    on_result: TextHook,
) -> ToolAnswer {
    // SAFETY: `call` is NULL or live.
    let function = unsafe { json::get(call, c"function") };
    // SAFETY: `function` is NULL or a live child of `call`.
    let name = unsafe { json::get_str(function, c"name") }.map_or(&b""[..], |n| n.to_bytes());
    let mut text = TextBuf::new();
    let mut result: Messages_t = ptr::null_mut();
    let tools = ToolSet::lock();
    let node = tools.as_ref().and_then(|t| t.find(name, |_| true));
    match (&tools, node) {
        (None, _) => {
            text.push_str("error: the tool registry is gone (the agent is stopping); the tool \"")
                .push(name)
                .push_str("\" was not run");
        }
        (Some(set), None) => {
            text.push_str("error: there is no tool named \"")
                .push(name)
                .push_str("\"; the tools are:");
            for (i, tool) in set.tools().enumerate() {
                // SAFETY: a live node of the registry, read under the lock.
                let known = unsafe { super::tools::function_name((*tool).tool_obj) }
                    .map_or(&b"?"[..], |n| n.to_bytes());
                text.push_str(if i == 0 { " " } else { ", " }).push(known);
            }
        }
        (Some(_), Some(_)) if unconfigured(name, mqtt_broker_unset()) => {
            text.push_str("error: the tool \"").push(name).push_str(
                "\" is not configured: PKG_AGENT_TOOL_MQTT_BROKER_URL is empty (menuconfig: \
                     Agent Tools Configuration, MQTT Connection); the tool was not run",
            );
        }
        (Some(_), Some(_)) if too_long => {
            text.push_str("error: the arguments for \"")
                .push(name)
                .push_str("\" are longer than this device accepts (")
                .push_num(board().max_tool_arg_len.max(0) as usize)
                .push_str(" bytes); the tool was not run");
        }
        (Some(set), Some(node)) => {
            // SAFETY: `function` is NULL or a live child of `call`.
            let raw = unsafe { json::get_str(function, c"arguments") }.unwrap_or(c"");
            // SAFETY: under the tool lock; `call`'s name found `node`.
            result = unsafe { run_found(set, node, name, raw, &mut text) };
        }
    }
    let own = if result.is_null() {
        crate::abi::messages::message_of(text)
    } else {
        ptr::null_mut()
    };
    let content = if result.is_null() { own } else { result };
    if let Some(show) = on_result {
        // SAFETY: `content` is NULL or a live set; its text is borrowed
        // for the call only.
        let shown = unsafe { crate::abi::messages::messages_get_content_idx(content, 0) };
        if !shown.is_null() {
            // SAFETY: the channel's hook, handed a NUL-terminated string it
            // only borrows.
            unsafe { show(shown) };
        }
    }
    ToolAnswer {
        content,
        own,
        _tools: tools,
    }
}

fn mqtt_broker_unset() -> bool {
    // SAFETY: a constant of the glue, only read.
    unsafe { crate::rtt::glue::agent_mqtt_broker_unset != 0 }
}

/// Whether a call of the tool `name` is refused for want of configuration:
/// the C package's MQTT toolset (its tools are `mqtt_*`) with no broker set.
/// Its default was a public broker; ours is empty, so nothing leaves the
/// board until the user names one.
pub(crate) fn unconfigured(name: &[u8], mqtt_broker_unset: bool) -> bool {
    mqtt_broker_unset && name.starts_with(b"mqtt_")
}

/// Parse and check the arguments of a call to `node`'s tool, run it unless
/// this turn already ran the same call, and give its result set (the
/// node's, borrowed while `set` is held) or NULL with the reason in `text`.
///
/// # Safety
/// `node` came from `set`.
unsafe fn run_found(
    set: &ToolSet,
    node: AgentToolNode_t,
    name: &[u8],
    raw: &CStr,
    text: &mut TextBuf,
) -> Messages_t {
    let raw = if raw.to_bytes().iter().all(u8::is_ascii_whitespace) {
        c"{}"
    } else {
        raw
    };
    // SAFETY: `raw` is a NUL-terminated string; cJSON only reads it.
    let args = unsafe { cJSON_Parse(raw.as_ptr()) };
    // SAFETY: `args` is non-NULL when read, a tree just parsed.
    if args.is_null() || unsafe { (*args).type_ } & 0xFF != cJSON_Object {
        if !args.is_null() {
            // SAFETY: `args` is the parsed tree, owned here.
            unsafe { cJSON_Delete(args) };
        }
        text.push_str("error: the arguments for \"")
            .push(name)
            .push_str("\" are not a valid JSON object; the tool was not run");
        return ptr::null_mut();
    }
    if let Err(why) = check_arguments(set, node, args) {
        // SAFETY: `args` is the parsed tree, owned here, not used again.
        unsafe { cJSON_Delete(args) };
        text.push_str("error: the arguments for \"")
            .push(name)
            .push_str("\" do not fit its parameters: ");
        describe_mismatch(text, why);
        text.push_str("; the tool was not run");
        return ptr::null_mut();
    }
    // The arguments as the record of this turn's calls knows them.
    // SAFETY: `args` is the live parsed tree; the printed text is freed
    // below.
    let printed = unsafe { cJSON_PrintUnformatted(args) };
    let key = if printed.is_null() {
        None
    } else {
        // SAFETY: non-NULL: a NUL-terminated string cJSON printed.
        Some(unsafe { CStr::from_ptr(printed) }.to_bytes())
    };
    let repeated = key.is_some_and(|key| {
        earlier(name, key, &mut |earlier| {
            text.push_str(REPEATED_NOTE).push(earlier);
        })
    });
    let mut result = ptr::null_mut();
    if !repeated {
        // SAFETY: `node` came from `set` (contract); `args` a live object.
        let ran = unsafe { set.execute(node, args) };
        // SAFETY: `ran.result` is NULL or the node's live set.
        let own_text = unsafe { crate::abi::messages::messages_get_content_idx(ran.result, 0) };
        if !own_text.is_null() {
            // The tool's own text, success or error (the guide tells
            // tools to explain failures this way).
            result = ran.result;
            // SAFETY: non-NULL: the node's NUL-terminated text.
            let said = unsafe { CStr::from_ptr(own_text) }.to_bytes();
            if let Some(key) = key {
                remember(name, key, said);
            }
            if ran.status == rt_eok() {
                answer_directly(name, said);
            }
        } else if ran.status == rt_eok() {
            text.push_str("error: the tool \"")
                .push(name)
                .push_str("\" returned no result");
        } else {
            text.push_str("error: the tool \"")
                .push(name)
                .push_str("\" failed (invalid or missing arguments?)");
        }
    }
    // SAFETY: `args` is the parsed tree, owned here; the tool borrowed it.
    unsafe { cJSON_Delete(args) };
    if !printed.is_null() {
        // SAFETY: printed by cJSON above, freed once with its allocator.
        unsafe { cJSON_free(printed as *mut c_void) };
    }
    result
}

/// A successful result of a direct-output tool is the turn's answer
/// (`PKG_AGENT_TOOL_OPTIONS`), not in a nested turn.
fn answer_directly(name: &[u8], result: &[u8]) {
    if let Some(calls) = super::ability::tool_calls().filter(|_| !in_nested_turn()) {
        (calls.succeeded)(name, result);
    }
}

/// Calls already run in the current turn (one user message's rounds): a
/// repeated identical call (same tool, same arguments) is not run again;
/// the model gets the earlier result with a note. Loop thread only (the
/// lock keeps it sound).
static EARLIER: crate::rtt::sleep_cell::SleepCell<alloc::vec::Vec<EarlierCall>> =
    crate::rtt::sleep_cell::SleepCell::new(alloc::vec::Vec::new());

/// One call that ran: its tool, its arguments as cJSON prints them
/// unformatted, the text its tool answered.
struct EarlierCall {
    name: alloc::vec::Vec<u8>,
    args: alloc::vec::Vec<u8>,
    result: alloc::vec::Vec<u8>,
}

fn with_earlier<R>(f: impl FnOnce(&mut alloc::vec::Vec<EarlierCall>) -> R) -> R {
    EARLIER.with(f)
}

/// What the model reads instead of a repeated call's result, before the
/// earlier result.
pub(crate) const REPEATED_NOTE: &str = "note: this exact call (same tool, same arguments) already ran in this turn, so it was not run again; use its result, which was: ";

/// One turn's memory of its calls: forgotten when the turn begins and when
/// it ends (dropped); the flag is false for a nested turn, which keeps the
/// outer one's.
pub(crate) struct Turn(bool);

impl Turn {
    pub(crate) fn begin() -> Turn {
        forget_calls();
        Turn(true)
    }

    /// A turn inside a call of another (a sub-agent's): the outer turn's
    /// memory of calls and its direct answers stay; no direct answer is
    /// taken from the calls made inside.
    #[cfg(feature = "sub-agents")]
    pub(crate) fn nested() -> Turn {
        NESTED.fetch_add(1, core::sync::atomic::Ordering::SeqCst);
        Turn(false)
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        if self.0 {
            forget_calls();
        } else {
            #[cfg(feature = "sub-agents")]
            NESTED.fetch_sub(1, core::sync::atomic::Ordering::SeqCst);
        }
    }
}

/// Nested turns now running (sub-agents'): their calls give no direct
/// answer.
#[cfg(feature = "sub-agents")]
static NESTED: crate::rtt::atomic::AtomicUsize = crate::rtt::atomic::AtomicUsize::new(0);

/// Whether a nested turn runs now.
pub(crate) fn in_nested_turn() -> bool {
    #[cfg(feature = "sub-agents")]
    return NESTED.load(core::sync::atomic::Ordering::SeqCst) > 0;
    #[cfg(not(feature = "sub-agents"))]
    false
}

fn forget_calls() {
    // Freed outside the lock.
    drop(with_earlier(core::mem::take));
    if let Some(calls) = super::ability::tool_calls() {
        drop((calls.take_direct)());
    }
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

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_mqtt_tools_wait_for_a_broker() {
        use super::unconfigured;
        assert!(unconfigured(b"mqtt_publish", true));
        assert!(unconfigured(b"mqtt_connect", true));
        assert!(!unconfigured(b"mqtt_publish", false));
        assert!(!unconfigured(b"add", true));
        assert!(!unconfigured(b"my_mqtt_bridge", true));
    }
}
