//! `AgentLoop.h`: the agent's lifecycle and its loop.
//!
//! One user message in, one reply out, always: the model's answer, or a text
//! saying what failed (the C package sent nothing on failure, so its CLI
//! waited forever). Between the two, at most `PKG_AGENT_MAX_TOOL_ROUNDS`
//! rounds of `chat()` and tool calls; every tool call gets exactly one tool
//! message, after the assistant message that made it.
//!
//! Stopping: `cleanup_agent_entry` marks the loop as stopping, cancels the
//! request in flight (it ends at its next read or timeout), wakes the loop
//! with a NULL sentinel and waits until the loop thread has freed everything.
//! The loop frees the hub only after it has taken that sentinel, so the
//! sender never touches a freed mailbox.

use super::chat::{chat_response_free, chat_with_error, ChatResponse, TOO_LONG_KEY};
use super::context::Context_t;
use super::hub::{
    message_hub_create, message_hub_destroy, message_hub_get, message_hub_put, MessageHub_t,
};
use super::messages::{messages_append, messages_create, messages_destroy, Messages_t, TYPE_TEXT};
use super::tools::{get_agent_tools, search_agent_tool_node};
use super::utils::{print_reasoning, print_tool_call};
use crate::chat::transport;
use crate::cjson_sys::*;
use crate::ffi_fn;
use crate::json;
use crate::rtt::*;
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicUsize, Ordering};

/// `AgentChannelOps` (channels/AgentChannel.h).
#[repr(C)]
pub struct AgentChannelOps {
    pub init: Option<unsafe extern "C" fn(hub: MessageHub_t, ctx: Context_t) -> c_int>,
    pub reset: Option<unsafe extern "C" fn()>,
}

// SAFETY: a table of function pointers, never written after start-up.
unsafe impl Sync for AgentChannelOps {}

extern "C" {
    /// AGENT_CHANNEL_OPS, as the C glue sees it.
    fn agent_glue_channel_ops() -> *const AgentChannelOps;
    /// Both in the user-editable src/tool_func.c.
    fn init_tools();
    fn agent_tools_cleanup();
}

/// The loop thread's name (`list thread` shows it; cleanup looks it up).
const LOOP_THREAD_NAME: &CStr = c"AgentLoop";

static HUB: AtomicPtr<super::hub::MessageHub> = AtomicPtr::new(ptr::null_mut());
static CONTEXT: AtomicPtr<super::context::Context> = AtomicPtr::new(ptr::null_mut());
/// The agent's lifecycle. Every change is a compare-and-swap from the state
/// it expects, so two `main_loop_entry` or two `cleanup_agent_entry` calls at
/// once cannot both act: one wins, the other waits for the outcome.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Lifecycle {
    Stopped = 0,
    /// `main_loop_entry` is creating the thread and the agent.
    Starting = 1,
    Running = 2,
    /// `cleanup_agent_entry` is stopping the loop and freeing everything.
    Stopping = 3,
}

static STATE: AtomicU8 = AtomicU8::new(Lifecycle::Stopped as u8);
/// The AgentLoop thread while it runs (it owns the tool registry then).
static LOOP_THREAD: AtomicPtr<rt_thread> = AtomicPtr::new(ptr::null_mut());

/// May the calling thread change the tool registry now? Yes without a loop
/// (the caller owns it, as in the C package) and on the loop thread; other
/// threads queue their tools for the loop (see `tools.rs`). While a stop is
/// under way they wait until it is over, so nothing is queued into a
/// registry being destroyed.
pub(crate) fn registry_is_mine() -> bool {
    loop {
        let lifecycle = state();
        // SAFETY: plain kernel call.
        let me = unsafe { rt_thread_self() };
        if me == LOOP_THREAD.load(Ordering::SeqCst) && !me.is_null() {
            return true;
        }
        match lifecycle {
            Lifecycle::Stopped => return true,
            Lifecycle::Stopping => {
                wait_while(Lifecycle::Stopping);
            }
            Lifecycle::Starting | Lifecycle::Running => return false,
        }
    }
}

fn state() -> Lifecycle {
    match STATE.load(Ordering::SeqCst) {
        1 => Lifecycle::Starting,
        2 => Lifecycle::Running,
        3 => Lifecycle::Stopping,
        _ => Lifecycle::Stopped,
    }
}

/// Move from `from` to `to`; the state found instead when it was not `from`.
fn transition(from: Lifecycle, to: Lifecycle) -> Result<(), Lifecycle> {
    STATE
        .compare_exchange(from as u8, to as u8, Ordering::SeqCst, Ordering::SeqCst)
        .map(|_| ())
        .map_err(|_| state())
}

fn set_state(to: Lifecycle) {
    STATE.store(to as u8, Ordering::SeqCst);
}

/// Sleep until the lifecycle leaves `busy` (a start or a stop in progress,
/// both bounded).
fn wait_while(busy: Lifecycle) -> Lifecycle {
    loop {
        let now = state();
        if now != busy {
            return now;
        }
        // SAFETY: plain kernel call.
        unsafe { rt_thread_mdelay(10) };
    }
}
static DONE: AtomicPtr<rt_semaphore> = AtomicPtr::new(ptr::null_mut());
/// A reply made while there was memory, sent when building the real one
/// fails: every message gets exactly one reply (the Debug channel pairs
/// replies with messages by their order).
static SPARE_REPLY: AtomicPtr<super::messages::Messages> = AtomicPtr::new(ptr::null_mut());
const OUT_OF_MEMORY_REPLY: &CStr = c"error: out of memory while answering";

fn make_spare_reply() -> Messages_t {
    text_reply(OUT_OF_MEMORY_REPLY)
}

/// A new one-item text message holding a copy of `text`, or NULL without
/// memory.
fn text_reply(text: &CStr) -> Messages_t {
    let m = messages_create(1);
    if m.is_null() {
        return m;
    }
    // SAFETY: `m` is a fresh message of ours; `text` is NUL-terminated and
    // outlives the call, which copies it.
    let appended = unsafe { messages_append(m, TYPE_TEXT, text.as_ptr()) };
    if appended != rt_eok() {
        // SAFETY: `m` is ours and not shared yet.
        unsafe { messages_destroy(m) };
        return ptr::null_mut();
    }
    m
}
/// A channel chosen at run time (the simulator, tests) instead of the
/// menuconfig one; NULL: use AGENT_CHANNEL_OPS.
static CHANNEL_OVERRIDE: AtomicPtr<AgentChannelOps> = AtomicPtr::new(ptr::null_mut());
/// Set while the answer is streamed to the console (the CLI channel), so the
/// channel knows the reply text was already printed.
static STREAM_TO_CONSOLE: AtomicBool = AtomicBool::new(false);
static LAST_REPLY_STREAMED: AtomicBool = AtomicBool::new(false);
/// User messages answered since start-up (for `agent_status`).
static ANSWERED: AtomicUsize = AtomicUsize::new(0);

/// Use `ops` instead of the channel chosen in menuconfig (takes effect at
/// the next `init_agent`). NULL returns to the menuconfig choice.
pub fn set_channel(ops: *const AgentChannelOps) {
    CHANNEL_OVERRIDE.store(ops as *mut AgentChannelOps, Ordering::Release);
}

/// Ask the loop to print answers on the console as they stream in.
pub fn set_stream_to_console(on: bool) {
    STREAM_TO_CONSOLE.store(on, Ordering::Release);
}

/// Was the last reply's text already printed while it streamed?
pub fn last_reply_streamed() -> bool {
    LAST_REPLY_STREAMED.load(Ordering::Acquire)
}

pub fn is_running() -> bool {
    matches!(state(), Lifecycle::Starting | Lifecycle::Running)
}

pub fn lifecycle() -> Lifecycle {
    state()
}

pub fn answered() -> usize {
    ANSWERED.load(Ordering::Relaxed)
}

fn channel_ops() -> Option<&'static AgentChannelOps> {
    let over = CHANNEL_OVERRIDE.load(Ordering::Acquire);
    // SAFETY: both are NULL or point to static channel tables.
    unsafe {
        if !over.is_null() {
            return Some(&*over);
        }
        agent_glue_channel_ops().as_ref()
    }
}

fn log_memory(what: &str) {
    let (mut total, mut used, mut max_used) = (0, 0, 0);
    // SAFETY: three writable locals.
    unsafe { rt_memory_info(&mut total, &mut used, &mut max_used) };
    crate::log_i!(
        "[mem] {}: used {} max_used {} total {}",
        what,
        used,
        max_used,
        total
    );
}

/// Register the tools, create the hub and the context, start the channel.
/// Logs `[mem] agent started`. On failure nothing is left allocated and the
/// loop will not start.
#[no_mangle]
pub extern "C" fn init_agent() {
    ffi_fn!(failure = (), {
        // SAFETY: C functions of the package; the objects are published only
        // once complete.
        unsafe {
            init_tools();
            let hub = message_hub_create();
            let ctx = super::context::agent_context_create();
            let spare = make_spare_reply();
            if hub.is_null() || ctx.is_null() || spare.is_null() {
                crate::log_e!("init_agent: out of memory");
                message_hub_destroy(hub);
                super::context::agent_context_destroy(ctx);
                messages_destroy(spare);
                agent_tools_cleanup();
                return;
            }
            messages_destroy(SPARE_REPLY.swap(spare, Ordering::AcqRel));
            HUB.store(hub, Ordering::Release);
            CONTEXT.store(ctx, Ordering::Release);
            log_memory("agent started");
            if let Some(init) = channel_ops().and_then(|ops| ops.init) {
                if init(hub, ctx) != 0 {
                    crate::log_w!("init_agent: the channel did not start");
                }
            }
        }
    })
}

/// Stop the channel, then free the hub (with whatever is still queued), the
/// context and the tools. Logs `[mem] cleanup done`. Idempotent.
#[no_mangle]
pub extern "C" fn cleanup_agent() {
    ffi_fn!(failure = (), {
        release_agent();
        log_memory("cleanup done");
    })
}

/// [`cleanup_agent`] without the log line: the loop thread's own cleanup,
/// whose figure would still count the thread's stack and control block.
fn release_agent() {
    if let Some(reset) = channel_ops().and_then(|ops| ops.reset) {
        // SAFETY: the channel's own reset; afterwards it no longer touches
        // the hub.
        unsafe { reset() };
    }
    let hub = HUB.swap(ptr::null_mut(), Ordering::AcqRel);
    let ctx = CONTEXT.swap(ptr::null_mut(), Ordering::AcqRel);
    // SAFETY: each pointer was swapped out of its static, so this is the
    // only owner; each is NULL or was made by its create function, and the
    // channel was reset above, so nothing uses the hub or context any more.
    unsafe {
        message_hub_destroy(hub);
        super::context::agent_context_destroy(ctx);
        messages_destroy(SPARE_REPLY.swap(ptr::null_mut(), Ordering::AcqRel));
    }
    // SAFETY: C function of the package.
    unsafe { agent_tools_cleanup() };
}

/// Wait (a bounded while) until the kernel has freed the finished loop and
/// channel threads: a thread that returns from its entry becomes defunct and
/// its stack and control block are freed later, by the idle (or system)
/// thread, after which its object can no longer be found.
fn wait_until_threads_freed() {
    for name in [LOOP_THREAD_NAME, super::channels::cli::CLI_THREAD_NAME] {
        for _ in 0..200 {
            // SAFETY: plain kernel calls; the name is NUL-terminated and
            // rt_thread_find only reads it.
            unsafe {
                if rt_thread_find(name.as_ptr() as *mut c_char).is_null() {
                    break;
                }
                rt_thread_mdelay(10);
            }
        }
    }
}

unsafe extern "C" fn loop_thread(_parameter: *mut c_void) {
    ffi_fn!(failure = (), {
        // Cleanup cancels the requests of this thread only, and the registry is
        // this thread's until it ends.
        // SAFETY: a kernel query about the calling thread, always valid here.
        LOOP_THREAD.store(unsafe { rt_thread_self() }, Ordering::SeqCst);
        // SAFETY: a kernel query about the calling thread, always valid here.
        transport::cancel_on_thread(unsafe { rt_thread_self() });
        init_agent();
        let hub = HUB.load(Ordering::Acquire);
        // Tell main_loop_entry that start-up is over (the channel is ready).
        let done = DONE.load(Ordering::Acquire);
        if !done.is_null() {
            // SAFETY: DONE is created by main_loop_entry before this thread
            // starts and deleted only after this thread's last release of it.
            unsafe { rt_sem_release(done) };
        }
        if !hub.is_null() {
            loop {
                // SAFETY: `hub` was made by `init_agent` on this thread and is
                // freed only by `release_agent` below, so it and its
                // `input_mailbox` are live.
                let msg = unsafe { message_hub_get(hub, (*hub).input_mailbox) };
                if state() == Lifecycle::Stopping {
                    // SAFETY: `msg` is NULL or a received set this thread now
                    // owns; not used again.
                    unsafe { messages_destroy(msg) };
                    if msg.is_null() {
                        break; // the stop sentinel: nobody sends to the hub any more
                    }
                    continue;
                }
                if msg.is_null() {
                    continue;
                }
                // Tools appended from other threads meanwhile: no request is
                // reading the registry now.
                super::tools::register_queued();
                // SAFETY: on the loop thread, with `hub` live (see above) and
                // `msg` a non-NULL received set handed over.
                unsafe { handle_user_message(hub, msg) };
            }
        }
        release_agent();
        transport::cancel_on_thread(ptr::null_mut());
        LOOP_THREAD.store(ptr::null_mut(), Ordering::SeqCst);
        let done = DONE.load(Ordering::Acquire);
        if !done.is_null() {
            // SAFETY: DONE is deleted by whoever waits for this release, only
            // after taking it, so it is still live here.
            unsafe { rt_sem_release(done) };
        }
    })
}

/// Start the `AgentLoop` thread and return once the agent is initialised. A
/// second call while it runs does nothing. Returns 0, or -1 when the thread
/// cannot be created or the agent cannot be initialised (no memory).
#[no_mangle]
pub extern "C" fn main_loop_entry() -> c_int {
    ffi_fn!(failure = -1, {
        loop {
            match transition(Lifecycle::Stopped, Lifecycle::Starting) {
                Ok(()) => break,
                Err(Lifecycle::Stopping) => {
                    wait_while(Lifecycle::Stopping);
                }
                Err(_) => {
                    crate::log_w!("the agent loop is already running");
                    return 0;
                }
            }
        }
        transport::clear_cancel();
        // SAFETY: kernel calls; failures are checked and unwound.
        unsafe {
            let done = rt_sem_create(c"AgentDone".as_ptr(), 0, RT_IPC_FLAG_FIFO);
            if done.is_null() {
                set_state(Lifecycle::Stopped);
                return -1;
            }
            DONE.store(done, Ordering::Release);
            let cfg = board();
            let stack = cfg.loop_stack_size.clamp(2048, 1 << 20) as u32;
            let prio = cfg.loop_priority.clamp(0, 255) as u8;
            let thread = rt_thread_create(
                LOOP_THREAD_NAME.as_ptr(),
                Some(loop_thread),
                ptr::null_mut(),
                stack,
                prio,
                10,
            );
            if thread.is_null() || rt_thread_startup(thread) != rt_eok() {
                crate::log_e!("cannot start the AgentLoop thread");
                if !thread.is_null() {
                    rt_thread_delete(thread);
                }
                DONE.store(ptr::null_mut(), Ordering::Release);
                rt_sem_delete(done);
                set_state(Lifecycle::Stopped);
                return -1;
            }
            // Return once the agent is up, so a command right after this one
            // (agent_send_message in a script) finds the channel ready.
            rt_sem_take(done, RT_WAITING_FOREVER);
            if HUB.load(Ordering::Acquire).is_null() {
                // init_agent failed: the thread is finishing; wait for it.
                rt_sem_take(done, RT_WAITING_FOREVER);
                DONE.store(ptr::null_mut(), Ordering::Release);
                rt_sem_delete(done);
                set_state(Lifecycle::Stopped);
                return -1;
            }
        }
        set_state(Lifecycle::Running);
        0
    })
}

/// Stop the loop and wait until everything it owned is freed. Without a
/// running loop: nothing to do. Returns 0.
#[no_mangle]
pub extern "C" fn cleanup_agent_entry() -> c_int {
    ffi_fn!(failure = -1, {
        loop {
            match transition(Lifecycle::Running, Lifecycle::Stopping) {
                Ok(()) => break,
                Err(Lifecycle::Stopped) => {
                    crate::log_i!("the agent loop is not running");
                    return 0;
                }
                // Another cleanup is at work: return once it is done, so
                // that every caller finds everything freed.
                Err(Lifecycle::Stopping) => {
                    wait_while(Lifecycle::Stopping);
                    return 0;
                }
                Err(_) => {
                    wait_while(Lifecycle::Starting);
                }
            }
        }
        transport::request_cancel();
        // SAFETY: the hub stays alive until the loop has taken the sentinel
        // sent here (see the module comment); the semaphore until we delete it.
        unsafe {
            let hub = HUB.load(Ordering::Acquire);
            if !hub.is_null() {
                rt_mb_send_wait((*hub).input_mailbox, 0, RT_WAITING_FOREVER);
            }
            // The loop thread releases DONE as its last act; it is swapped
            // out only after that, so the loop always finds it.
            let done = DONE.load(Ordering::Acquire);
            if !done.is_null() {
                rt_sem_take(done, RT_WAITING_FOREVER);
                DONE.store(ptr::null_mut(), Ordering::Release);
                rt_sem_delete(done);
            }
        }
        wait_until_threads_freed();
        log_memory("cleanup done");
        transport::clear_cancel();
        set_state(Lifecycle::Stopped);
        0
    })
}

/// A growing reply text on the heap; allocation failure is remembered and
/// turns the reply into a fixed "out of memory" text.
struct Reply {
    text: Vec<u8>,
    oom: bool,
}

impl Reply {
    fn new() -> Self {
        Reply {
            text: Vec::new(),
            oom: false,
        }
    }
    fn push(&mut self, bytes: &[u8]) -> &mut Self {
        if self.text.try_reserve(bytes.len() + 1).is_err() {
            self.oom = true;
        } else {
            self.text.extend_from_slice(bytes);
        }
        self
    }
    fn push_str(&mut self, s: &str) -> &mut Self {
        self.push(s.as_bytes())
    }
    fn push_num(&mut self, n: usize) -> &mut Self {
        let mut digits = [0u8; 20];
        self.push(crate::text::decimal(n as u64, &mut digits))
    }
    /// As a new `Messages_t` (owned by the caller), or NULL.
    fn into_messages(mut self) -> Messages_t {
        if self.oom {
            // No growing of the text here: the fixed text, or NULL (then the
            // spare reply goes out).
            return make_spare_reply();
        }
        if self.text.try_reserve(1).is_err() {
            return ptr::null_mut();
        }
        // Keep it a C string: a NUL inside the answer would cut it anyway.
        self.text.retain(|&b| b != 0);
        self.text.push(0);
        match CStr::from_bytes_with_nul(&self.text) {
            Ok(text) => text_reply(text),
            Err(_) => ptr::null_mut(),
        }
    }
}

/// Answer one user message: rounds of chat() and tools, then one reply.
///
/// # Safety
/// On the loop thread only (CONTEXT is NULL or the context it owns); `hub`
/// is the live hub and `msg` a live message set, handed over.
unsafe fn handle_user_message(hub: MessageHub_t, msg: Messages_t) {
    let ctx = CONTEXT.load(Ordering::Acquire);
    let mut reply = Reply::new();
    LAST_REPLY_STREAMED.store(false, Ordering::Release);
    let appended = ctx.is_null()
        // SAFETY: `ctx` is non-NULL, the live context of this thread; its
        // method borrows `msg`, a live set.
        || (unsafe { (*ctx).append_user_message.map_or(-1, |f| f(ctx, msg)) }) == rt_eok();
    // SAFETY: `msg` is owned here (this function's contract), not used again.
    unsafe { messages_destroy(msg) };
    if ctx.is_null() || !appended {
        reply.push_str(
            "error: the message could not be added to the conversation (empty, or out of memory)",
        );
    } else {
        // SAFETY: `ctx` is the non-NULL live context of this thread.
        unsafe { run_rounds(ctx, &mut reply) };
        // SAFETY: `ctx` is live; `trim_context` is its own method.
        if let Some(trim) = unsafe { (*ctx).trim_context } {
            // SAFETY: the context's method, called with that context.
            unsafe {
                trim(
                    ctx,
                    board().message_trim.clamp(0, c_int::MAX as isize) as c_int,
                )
            };
        }
    }
    let mut out = reply.into_messages();
    if out.is_null() {
        crate::log_e!("no memory for the reply: sending the spare one");
        out = SPARE_REPLY.swap(make_spare_reply(), Ordering::AcqRel);
    }
    // SAFETY: `hub` is live (this function's contract); `out` is NULL or a
    // set owned here, handed over.
    unsafe { deliver(hub, out) };
    ANSWERED.fetch_add(1, Ordering::Relaxed);
}

/// Put `reply` on the output mailbox, waiting (up to the reply timeout) while
/// it is full rather than dropping it, unless the agent is stopping.
///
/// # Safety
/// `hub` is a live hub; `reply` is NULL or a live set, handed over.
unsafe fn deliver(hub: MessageHub_t, reply: Messages_t) {
    if reply.is_null() {
        crate::log_e!("no reply could be made (out of memory)");
        return;
    }
    let patience = board().reply_timeout_ms.clamp(1, 600_000) as u32;
    let mut waited = 0;
    // SAFETY: `hub` is live (this function's contract), so its
    // `output_mailbox` is too; `reply` is a live set owned here.
    while unsafe { message_hub_put(hub, reply, (*hub).output_mailbox) } != rt_eok() {
        if waited >= patience || state() == Lifecycle::Stopping {
            crate::log_w!("the reply could not be delivered (output mailbox full); dropped");
            // SAFETY: not delivered, so still owned here; not used again.
            unsafe { messages_destroy(reply) };
            return;
        }
        // SAFETY: a plain kernel sleep of the calling thread.
        unsafe { rt_thread_mdelay(50) };
        waited += 50;
    }
}

unsafe extern "C" fn print_context_streaming(text: *const c_char) {
    ffi_fn!(failure = (), {
        LAST_REPLY_STREAMED.store(true, Ordering::Release);
        // SAFETY: `chat()` passes each fragment as a NUL-terminated string,
        // which `print_context` only borrows.
        unsafe { super::utils::print_context(text) };
    })
}

/// The chat()/tool rounds for the message just appended to `ctx`; the text
/// for the user goes into `reply`.
///
/// # Safety
/// On the loop thread only (it owns the tool registry), with `ctx` its live
/// context (non-NULL, `message` a live array).
unsafe fn run_rounds(ctx: Context_t, reply: &mut Reply) {
    let rounds = board().max_tool_rounds.max(1) as usize;
    let max_tokens = board().max_tokens.clamp(1, c_int::MAX as isize) as c_int;
    let on_context: Option<unsafe extern "C" fn(*const c_char)> =
        if STREAM_TO_CONSOLE.load(Ordering::Acquire) {
            Some(print_context_streaming)
        } else {
            None
        };
    for _round in 0..rounds {
        if state() == Lifecycle::Stopping {
            reply.push_str("error: the agent is stopping");
            return;
        }
        let mut error = transport::ErrorText::new();
        // SAFETY: `ctx` is live (this function's contract) and its array and
        // the registry's tools array (NULL or live, this thread's) are not
        // modified during the call, which only borrows them.
        let resp = unsafe {
            chat_with_error(
                (*ctx).message,
                get_agent_tools(),
                max_tokens,
                Some(print_reasoning),
                Some(print_tool_call),
                on_context,
                &mut error,
            )
        };
        if resp.is_null() {
            let why = error.as_str().as_bytes();
            reply
                .push_str("error: the request to the model failed: ")
                .push(if why.is_empty() {
                    b"unknown error"
                } else {
                    why
                });
            return;
        }
        // SAFETY: `resp` is a non-NULL response from `chat()`, owned here
        // until `chat_response_free` below.
        let r: &ChatResponse = unsafe { &*resp };
        // SAFETY: `tool_call` is a live array of the response (chat()'s
        // guarantee); `child` is read only once it is known to be an array.
        let has_calls = unsafe { json::is_array(r.tool_call) && !(*r.tool_call).child.is_null() };
        // The assistant message goes in first: tool results must follow the
        // message that called them, or the next request is rejected.
        // SAFETY: `ctx` is live; its method borrows the live `resp`.
        let append_ok =
            unsafe { (*ctx).append_assistant_message.map_or(-1, |f| f(ctx, resp)) } == rt_eok();
        if !has_calls {
            let text = if r.context.is_null() {
                &b""[..]
            } else {
                // SAFETY: `context` is non-NULL, a NUL-terminated string
                // owned by `resp`, which is freed only after `text`'s last use.
                unsafe { CStr::from_ptr(r.context) }.to_bytes()
            };
            if text.is_empty() {
                reply.push_str("(the model returned an empty answer)");
            } else {
                reply.push(text);
            }
            // SAFETY: `resp` is owned here and not used again.
            unsafe { chat_response_free(resp) };
            return;
        }
        if !append_ok {
            // SAFETY: `resp` is owned here and not used again.
            unsafe { chat_response_free(resp) };
            reply.push_str("error: out of memory while recording the model's tool calls");
            return;
        }
        // SAFETY: `tool_call` is the response's live array, unchanged while
        // iterating (the tools only see copies of the arguments).
        for call in unsafe { json::children(r.tool_call) } {
            // SAFETY: on the loop thread with `ctx` live; `call` is a live
            // element of the response.
            unsafe { answer_tool_call(ctx, call) };
        }
        // SAFETY: `resp` is owned here and not used again.
        unsafe { chat_response_free(resp) };
    }
    reply
        .push_str("error: round limit reached (")
        .push_num(rounds)
        .push_str(" tool rounds) before the model gave an answer");
}

/// Run one tool call and append its `tool` message: the tool's text, or an
/// error the model can act on (behaviour.md §2).
///
/// # Safety
/// On the loop thread only (it owns the tool registry), with `ctx` its live
/// context; `call` is NULL or a live tool call that outlives the call.
unsafe fn answer_tool_call(ctx: Context_t, call: *mut cJSON) {
    // SAFETY: `call` is NULL or live for this whole function.
    let id = unsafe { json::get_str(call, c"id") }.unwrap_or(c"");
    // SAFETY: `call` is NULL or live.
    let function = unsafe { json::get(call, c"function") };
    // SAFETY: `function` is NULL or a live child of `call`.
    let name = unsafe { json::get_str(function, c"name") }.map_or(&b""[..], |n| n.to_bytes());
    let mut text = Reply::new();
    let mut result: Messages_t = ptr::null_mut();

    // SAFETY: `call` is NULL or live, borrowed; the registry is this thread's.
    let node = unsafe { search_agent_tool_node(call) };
    // SAFETY: `call` is NULL or live; a read-only lookup.
    let too_long = !unsafe { json::get(call, TOO_LONG_KEY) }.is_null();
    if node.is_null() {
        text.push_str("error: there is no tool named \"")
            .push(name)
            .push_str("\"; the tools are:");
        // SAFETY: the tools array is NULL or live and only this thread
        // changes it (not during this loop).
        for (i, tool) in unsafe { json::children(get_agent_tools()) }.enumerate() {
            // SAFETY: `tool` is a live element of the tools array.
            let known =
                unsafe { super::tools::function_name(tool) }.map_or(&b"?"[..], |n| n.to_bytes());
            text.push_str(if i == 0 { " " } else { ", " }).push(known);
        }
    } else if too_long {
        text.push_str("error: the arguments for \"")
            .push(name)
            .push_str("\" are longer than this device accepts (")
            .push_num(board().max_tool_arg_len.max(0) as usize)
            .push_str(" bytes); the tool was not run");
    } else {
        // SAFETY: `function` is NULL or a live child of `call`.
        let raw = unsafe { json::get_str(function, c"arguments") }.unwrap_or(c"");
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
        } else {
            // SAFETY: `node` is a non-NULL node of the registry, which only
            // this thread changes.
            if let Some(exec) = unsafe { (*node).execute_func } {
                // SAFETY: the tool's own function, with the live arguments
                // object (borrowed) and its node, as `append_tool` documents.
                unsafe { exec(args, node) };
            }
            // SAFETY: `args` is the parsed tree, owned here; tools borrow it.
            unsafe { cJSON_Delete(args) };
            // SAFETY: `node` is a live registry node (see above).
            let ret = unsafe { &(*node).ret };
            // SAFETY: `ret.messages` is NULL or the node's live set.
            let has_text =
                !unsafe { super::messages::messages_get_content_idx(ret.messages, 0) }.is_null();
            if has_text {
                // The tool's own text, success or error (the guide tells
                // tools to explain failures this way).
                result = ret.messages;
            } else if ret.ret == rt_eok() {
                text.push_str("error: the tool \"")
                    .push(name)
                    .push_str("\" returned no result");
            } else {
                text.push_str("error: the tool \"")
                    .push(name)
                    .push_str("\" failed (invalid or missing arguments?)");
            }
        }
    }
    let own = if result.is_null() {
        text.into_messages()
    } else {
        ptr::null_mut()
    };
    let content = if result.is_null() { own } else { result };
    // SAFETY: `ctx` is live (this function's contract).
    if let Some(f) = unsafe { (*ctx).append_tool_message } {
        // SAFETY: the context's method with that context; `id` is
        // NUL-terminated and `content` NULL or a live set, both borrowed.
        if unsafe { f(ctx, id.as_ptr(), content) } != rt_eok() {
            crate::log_e!("no memory for a tool result");
        }
    }
    // SAFETY: `own` is NULL or the set built here, owned; not used again.
    unsafe { messages_destroy(own) };
}
