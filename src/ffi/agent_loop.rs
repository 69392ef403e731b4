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

use super::chat::{agent_chat_last_error, chat, chat_response_free, ChatResponse, TOO_LONG_KEY};
use super::context::Context_t;
use super::hub::{
    message_hub_create, message_hub_destroy, message_hub_get, message_hub_put, MessageHub_t,
};
use super::messages::{messages_append, messages_create, messages_destroy, Messages_t, TYPE_TEXT};
use super::tools::{get_agent_tools, search_agent_tool_node};
use super::utils::{print_reasoning, print_tool_call};
use crate::chat::transport;
use crate::cjson_sys::*;
use crate::ffi_boundary;
use crate::json;
use crate::rtt::*;
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

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
static RUNNING: AtomicBool = AtomicBool::new(false);
static STOPPING: AtomicBool = AtomicBool::new(false);
static DONE: AtomicPtr<rt_semaphore> = AtomicPtr::new(ptr::null_mut());
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
    RUNNING.load(Ordering::Acquire)
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
    ffi_boundary!((), {
        // SAFETY: C functions of the package; the objects are published only
        // once complete.
        unsafe {
            init_tools();
            let hub = message_hub_create();
            let ctx = super::context::agent_context_create();
            if hub.is_null() || ctx.is_null() {
                crate::log_e!("init_agent: out of memory");
                message_hub_destroy(hub);
                super::context::agent_context_destroy(ctx);
                agent_tools_cleanup();
                return;
            }
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
    ffi_boundary!((), {
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
    message_hub_destroy(hub);
    super::context::agent_context_destroy(ctx);
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
    init_agent();
    let hub = HUB.load(Ordering::Acquire);
    // Tell main_loop_entry that start-up is over (the channel is ready).
    let done = DONE.load(Ordering::Acquire);
    if !done.is_null() {
        rt_sem_release(done);
    }
    if !hub.is_null() {
        loop {
            let msg = message_hub_get(hub, (*hub).input_mailbox);
            if STOPPING.load(Ordering::Acquire) {
                messages_destroy(msg);
                if msg.is_null() {
                    break; // the stop sentinel: nobody sends to the hub any more
                }
                continue;
            }
            if msg.is_null() {
                continue;
            }
            handle_user_message(hub, msg);
        }
    }
    release_agent();
    let done = DONE.load(Ordering::Acquire);
    if !done.is_null() {
        rt_sem_release(done);
    }
}

/// Start the `AgentLoop` thread and return once the agent is initialised. A
/// second call while it runs does nothing. Returns 0, or -1 when the thread
/// cannot be created or the agent cannot be initialised (no memory).
#[no_mangle]
pub extern "C" fn main_loop_entry() -> c_int {
    ffi_boundary!(-1, {
        if RUNNING.swap(true, Ordering::AcqRel) {
            crate::log_w!("the agent loop is already running");
            return 0;
        }
        STOPPING.store(false, Ordering::Release);
        transport::clear_cancel();
        // SAFETY: kernel calls; failures are checked and unwound.
        unsafe {
            let done = rt_sem_create(c"AgentDone".as_ptr(), 0, RT_IPC_FLAG_FIFO);
            if done.is_null() {
                RUNNING.store(false, Ordering::Release);
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
                RUNNING.store(false, Ordering::Release);
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
                RUNNING.store(false, Ordering::Release);
                return -1;
            }
        }
        0
    })
}

/// Stop the loop and wait until everything it owned is freed. Without a
/// running loop: nothing to do. Returns 0.
#[no_mangle]
pub extern "C" fn cleanup_agent_entry() -> c_int {
    ffi_boundary!(-1, {
        if !RUNNING.load(Ordering::Acquire) {
            crate::log_i!("the agent loop is not running");
            return 0;
        }
        STOPPING.store(true, Ordering::Release);
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
        RUNNING.store(false, Ordering::Release);
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
            self.text.clear();
            self.text
                .extend_from_slice(b"error: out of memory while answering");
        }
        if self.text.try_reserve(1).is_err() {
            return ptr::null_mut();
        }
        // Keep it a C string: a NUL inside the answer would cut it anyway.
        self.text.retain(|&b| b != 0);
        self.text.push(0);
        let m = messages_create(1);
        if !m.is_null()
            && messages_append(m, TYPE_TEXT, self.text.as_ptr() as *const c_char) != rt_eok()
        {
            messages_destroy(m);
            return ptr::null_mut();
        }
        m
    }
}

/// Answer one user message: rounds of chat() and tools, then one reply.
unsafe fn handle_user_message(hub: MessageHub_t, msg: Messages_t) {
    let ctx = CONTEXT.load(Ordering::Acquire);
    let mut reply = Reply::new();
    LAST_REPLY_STREAMED.store(false, Ordering::Release);
    let appended =
        ctx.is_null() || ((*ctx).append_user_message.map_or(-1, |f| f(ctx, msg))) == rt_eok();
    messages_destroy(msg);
    if ctx.is_null() || !appended {
        reply.push_str(
            "error: the message could not be added to the conversation (empty, or out of memory)",
        );
    } else {
        run_rounds(ctx, &mut reply);
        if let Some(trim) = (*ctx).trim_context {
            trim(
                ctx,
                board().message_trim.clamp(0, c_int::MAX as isize) as c_int,
            );
        }
    }
    let out = reply.into_messages();
    if out.is_null() {
        crate::log_e!("no memory for the reply");
    } else if message_hub_put(hub, out, (*hub).output_mailbox) != rt_eok() {
        crate::log_w!("the reply could not be delivered (output mailbox full); dropped");
        messages_destroy(out);
    }
    ANSWERED.fetch_add(1, Ordering::Relaxed);
}

unsafe extern "C" fn print_context_streaming(text: *const c_char) {
    LAST_REPLY_STREAMED.store(true, Ordering::Release);
    super::utils::print_context(text);
}

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
        if STOPPING.load(Ordering::Acquire) {
            reply.push_str("error: the agent is stopping");
            return;
        }
        let resp = chat(
            (*ctx).message,
            get_agent_tools(),
            max_tokens,
            Some(print_reasoning),
            Some(print_tool_call),
            on_context,
        );
        if resp.is_null() {
            let why = CStr::from_ptr(agent_chat_last_error()).to_bytes();
            reply
                .push_str("error: the request to the model failed: ")
                .push(if why.is_empty() {
                    b"unknown error"
                } else {
                    why
                });
            return;
        }
        let r: &ChatResponse = &*resp;
        let has_calls = json::is_array(r.tool_call) && !(*r.tool_call).child.is_null();
        // The assistant message goes in first: tool results must follow the
        // message that called them, or the next request is rejected.
        let append_ok = (*ctx).append_assistant_message.map_or(-1, |f| f(ctx, resp)) == rt_eok();
        if !has_calls {
            let text = if r.context.is_null() {
                &b""[..]
            } else {
                CStr::from_ptr(r.context).to_bytes()
            };
            if text.is_empty() {
                reply.push_str("(the model returned an empty answer)");
            } else {
                reply.push(text);
            }
            chat_response_free(resp);
            return;
        }
        if !append_ok {
            chat_response_free(resp);
            reply.push_str("error: out of memory while recording the model's tool calls");
            return;
        }
        for call in json::children(r.tool_call) {
            answer_tool_call(ctx, call);
        }
        chat_response_free(resp);
    }
    reply
        .push_str("error: round limit reached (")
        .push_num(rounds)
        .push_str(" tool rounds) before the model gave an answer");
}

/// Run one tool call and append its `tool` message: the tool's text, or an
/// error the model can act on (behaviour.md §2).
unsafe fn answer_tool_call(ctx: Context_t, call: *mut cJSON) {
    let id = json::get_str(call, c"id").unwrap_or(c"");
    let function = json::get(call, c"function");
    let name = json::get_str(function, c"name").map_or(&b""[..], |n| n.to_bytes());
    let mut text = Reply::new();
    let mut result: Messages_t = ptr::null_mut();

    let node = search_agent_tool_node(call);
    if node.is_null() {
        text.push_str("error: there is no tool named \"")
            .push(name)
            .push_str("\"; the tools are:");
        for (i, tool) in json::children(get_agent_tools()).enumerate() {
            let known = super::tools::function_name(tool).map_or(&b"?"[..], |n| n.to_bytes());
            text.push_str(if i == 0 { " " } else { ", " }).push(known);
        }
    } else if !json::get(call, TOO_LONG_KEY).is_null() {
        text.push_str("error: the arguments for \"")
            .push(name)
            .push_str("\" are longer than this device accepts (")
            .push_num(board().max_tool_arg_len.max(0) as usize)
            .push_str(" bytes); the tool was not run");
    } else {
        let raw = json::get_str(function, c"arguments").unwrap_or(c"");
        let raw = if raw.to_bytes().iter().all(u8::is_ascii_whitespace) {
            c"{}"
        } else {
            raw
        };
        let args = cJSON_Parse(raw.as_ptr());
        if args.is_null() || (*args).type_ & 0xFF != cJSON_Object {
            if !args.is_null() {
                cJSON_Delete(args);
            }
            text.push_str("error: the arguments for \"")
                .push(name)
                .push_str("\" are not a valid JSON object; the tool was not run");
        } else {
            if let Some(exec) = (*node).execute_func {
                exec(args, node);
            }
            cJSON_Delete(args);
            let ret = &(*node).ret;
            let has_text = !super::messages::messages_get_content_idx(ret.messages, 0).is_null();
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
    if let Some(f) = (*ctx).append_tool_message {
        if f(ctx, id.as_ptr(), content) != rt_eok() {
            crate::log_e!("no memory for a tool result");
        }
    }
    messages_destroy(own);
}
