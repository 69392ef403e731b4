//! `AgentLoop.h`: the agent's lifecycle and its loop.
//!
//! One user message in, one reply out, always: the model's answer, or a text
//! saying what failed (the C package sent nothing on failure, so its CLI
//! waited forever). Between the two, at most `PKG_AGENT_MAX_TOOL_ROUNDS`
//! rounds of `chat()` and tool calls; every tool call gets exactly one tool
//! message, after the assistant message that made it.
//!
//! State: one [`AgentCell`] holds the lifecycle (stopped, starting, running,
//! stopping; every move a compare-and-swap) and, while the agent exists, one
//! [`Agent`] value that owns the hub, the context and, behind the agent's
//! one kernel mutex, what threads change while it runs. Other threads reach
//! it through a gate that its teardown closes and waits on.
//!
//! Stopping: `cleanup_agent_entry` marks the agent as stopping, cancels the
//! loop's request in flight (it ends at its next read or timeout), wakes the
//! loop with a NULL sentinel and waits until the loop thread has freed
//! everything. The loop frees the hub only after it has taken that sentinel,
//! so the sender never touches a freed mailbox. `init_agent` alone makes an
//! agent without a loop thread; `cleanup_agent` (or `cleanup_agent_entry`)
//! frees it on the calling thread.

use super::ability;
use super::context::Context_t;
use super::hub::{
    message_hub_create, message_hub_destroy, message_hub_get, message_hub_put, MessageHub_t,
};
pub use super::turn::StreamHooks;
use super::turn::{LoopConversation, LoopTools, ModelChat};
use super::utils::{print_reasoning, print_tool_call};
use crate::abi::messages::{messages_destroy, Messages_t};
use crate::agent::turn::{self, Answer, Reply, TurnError, TurnEvents, TurnSettings};
use crate::base::text_buf::TextBuf;
use crate::ffi_fn;
use crate::rtt::atomic::{AtomicBool, AtomicPtr, AtomicU8, Ordering};
use crate::rtt::gate::Gate;
use crate::rtt::ipc::{Locked, Semaphore};
use crate::rtt::name::ObjectName;
use crate::rtt::thread;
use crate::rtt::*;
use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, c_void};
use core::ptr;

/// `AgentChannelOps` (channels/AgentChannel.h).
#[repr(C)]
pub struct AgentChannelOps {
    pub init: Option<unsafe extern "C" fn(hub: MessageHub_t, ctx: Context_t) -> c_int>,
    pub reset: Option<unsafe extern "C" fn()>,
}

// SAFETY: a table of function pointers, never written after start-up.
unsafe impl Sync for AgentChannelOps {}

use crate::rtt::glue::{agent_tools_cleanup, init_tools};

/// The loop thread's name (`list thread` shows it; cleanup looks it up).
const LOOP_THREAD_NAME: ObjectName = ObjectName::new(c"AgentLoop", c"AgLoop");

/// The agent's lifecycle. Every change is a compare-and-swap from the state
/// it expects, so two `main_loop_entry` or two `cleanup_agent_entry` calls at
/// once cannot both act: one wins, the other waits for the outcome.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Lifecycle {
    Stopped = 0,
    /// The agent is being built (by the loop thread, or by a direct
    /// `init_agent` call).
    Starting = 1,
    Running = 2,
    /// The agent is being stopped and everything it owns freed.
    Stopping = 3,
}

/// The one agent of the library: its lifecycle and, while it exists, the
/// [`Agent`] value that owns everything the agent made.
///
/// Who may touch what:
/// - `agent` is written only by the thread that builds it (while Starting,
///   the gate closed) and by the one that tears it down (the gate closed
///   and empty); every other access goes through [`AgentCell::enter`].
/// - `done` is written only by the thread that won the move to Starting,
///   before the loop thread exists, and by the one that won the move to
///   Stopping, after the loop thread's last use of it.
/// - What changes while the agent runs lives in [`Shared`], behind the
///   agent's one kernel mutex.
struct AgentCell {
    lifecycle: AtomicU8,
    gate: Gate,
    /// The start-up/stop handshake with the loop thread: released when its
    /// start-up is over and when it has freed everything.
    done: UnsafeCell<Option<Semaphore>>,
    agent: UnsafeCell<Option<Agent>>,
    /// A turn is in progress: set by the loop thread when it takes a user
    /// message, cleared when the reply is out (`agent_is_busy`).
    busy: AtomicBool,
}

// SAFETY: `agent` and `done` are reached only under the rules on
// `AgentCell` (one writer at a time, readers through the gate); everything
// else is atomic.
unsafe impl Sync for AgentCell {}

static AGENT: AgentCell = AgentCell {
    lifecycle: AtomicU8::new(Lifecycle::Stopped as u8),
    gate: Gate::closed(),
    done: UnsafeCell::new(None),
    agent: UnsafeCell::new(None),
    busy: AtomicBool::new(false),
};

/// Everything a started agent owns; dropping it frees all of it.
struct Agent {
    hub: MessageHub_t,
    context: Context_t,
    /// The loop thread; NULL for an agent made by `init_agent` alone.
    loop_thread: rt_thread_t,
    shared: Locked<Shared>,
}

/// What threads change while the agent runs (behind the agent's mutex).
struct Shared {
    /// A reply made while there was memory, sent when building the real one
    /// fails: every message gets exactly one reply.
    spare_reply: Messages_t,
    /// Where the fragments of an answer go as they stream in (the CLI prints
    /// them, the WebNet channel sends them to the browser).
    /// (A reference: every set of hooks is a constant, and a copy would be
    /// 16 bytes of the agent's static state.)
    stream: &'static StreamHooks,
    /// The current turn's answer is being printed as it streams.
    last_reply_streamed: bool,
    /// The replies whose text was printed while it streamed, until a
    /// channel takes them ([`take_streamed`]): by reply, not one flag, so
    /// that the next turn (a scheduled or injected message queued behind)
    /// cannot change what a channel reads of the reply it is showing.
    streamed: [usize; 4],
    /// User messages answered since the agent started (`agent_status`).
    #[cfg(feature = "msh-extras")]
    answered: usize,
    /// How the channel opens its chat again when `main_loop_entry` finds
    /// the agent running (the CLI after Ctrl-D): set by its init.
    reopen: Option<fn() -> bool>,
}

// SAFETY: the pointers are heap objects the agent owns outright (a message
// set, a chain of registry nodes); any thread holding the lock may use them.
unsafe impl Send for Shared {}

impl Drop for Agent {
    fn drop(&mut self) {
        let shared = self.shared.get_mut();
        super::hub::unwatch_input();
        // SAFETY: the agent is being torn down: the channel was reset and
        // the gate is closed and empty, so nothing uses the hub, the context
        // or the shared pointers any more; each was made by its create
        // function and is freed once.
        unsafe {
            message_hub_destroy(self.hub);
            super::context::agent_context_destroy(self.context);
            messages_destroy(shared.spare_reply);
        }
    }
}

/// What the abilities learn of the loop's lifecycle (the multimodal
/// content keeps the reasons of failed conversions only while it runs).
fn entered(to: Lifecycle) {
    let running = to == Lifecycle::Running;
    ability::each(|a| a.running, |hook| hook(running));
}

impl AgentCell {
    fn lifecycle(&self) -> Lifecycle {
        match self.lifecycle.load(Ordering::SeqCst) {
            1 => Lifecycle::Starting,
            2 => Lifecycle::Running,
            3 => Lifecycle::Stopping,
            _ => Lifecycle::Stopped,
        }
    }

    /// Move from `from` to `to`; the state found instead when it was not
    /// `from`.
    fn transition(&self, from: Lifecycle, to: Lifecycle) -> Result<(), Lifecycle> {
        self.lifecycle
            .compare_exchange(from as u8, to as u8, Ordering::SeqCst, Ordering::SeqCst)
            .map(|_| entered(to))
            .map_err(|_| self.lifecycle())
    }

    fn set(&self, to: Lifecycle) {
        self.lifecycle.store(to as u8, Ordering::SeqCst);
        entered(to);
    }

    /// Sleep until the lifecycle leaves `busy` (a start or a stop in
    /// progress, both bounded).
    fn wait_while(&self, busy: Lifecycle) -> Lifecycle {
        loop {
            let now = self.lifecycle();
            if now != busy {
                return now;
            }
            thread::sleep_ms(10);
        }
    }

    /// Run `f` with the agent, if there is one that is not being torn down.
    fn enter<R>(&self, f: impl FnOnce(&Agent) -> R) -> Option<R> {
        let _pass = self.gate.enter()?;
        // SAFETY: the gate is open only while `agent` holds a complete agent
        // and is not written (see `AgentCell`), and the pass keeps a
        // teardown waiting until `f` is done with the reference.
        let agent = unsafe { (*self.agent.get()).as_ref() }?;
        Some(f(agent))
    }

    /// Run `f` with the agent's shared state, under its lock.
    fn with_shared<R>(&self, f: impl FnOnce(&mut Shared) -> R) -> Option<R> {
        self.enter(|agent| agent.shared.lock().map(|mut shared| f(&mut shared)))
            .flatten()
    }

    /// The start-up/stop semaphore, when a loop thread was started.
    ///
    /// # Safety
    /// Not while the thread that won Starting or Stopping may write `done`
    /// (see `AgentCell`): the loop thread between its start and its last
    /// release, or that winning thread itself.
    unsafe fn done(&self) -> Option<&Semaphore> {
        // SAFETY: no writer now (this function's contract).
        unsafe { (*self.done.get()).as_ref() }
    }
}

/// A channel chosen at run time (the simulator, tests) instead of the
/// menuconfig one; NULL: use AGENT_CHANNEL_OPS. A setting, read at start.
static CHANNEL_OVERRIDE: AtomicPtr<AgentChannelOps> = AtomicPtr::new(ptr::null_mut());

/// Use `ops` instead of the channel chosen in menuconfig (takes effect at
/// the next `init_agent`). NULL returns to the menuconfig choice.
pub fn set_channel(ops: *const AgentChannelOps) {
    CHANNEL_OVERRIDE.store(ops as *mut AgentChannelOps, Ordering::Release);
}

/// Extra channels chosen at run time (the simulator, tests) instead of the
/// menuconfig ones, when `EXTRAS_OVERRIDDEN`; NULL entries are none.
#[cfg(any(feature = "channel-debug", feature = "channel-webnet"))]
static EXTRAS_OVERRIDE: [AtomicPtr<AgentChannelOps>; 2] = [
    AtomicPtr::new(ptr::null_mut()),
    AtomicPtr::new(ptr::null_mut()),
];
#[cfg(any(feature = "channel-debug", feature = "channel-webnet"))]
static EXTRAS_OVERRIDDEN: AtomicBool = AtomicBool::new(false);

/// Start `extras` (at most two: the Debug and the WebNet channel's extra
/// tables) next to the chosen channel, instead of the menuconfig ones
/// (takes effect at the next `init_agent`). `None` returns to menuconfig's.
#[cfg(any(feature = "channel-debug", feature = "channel-webnet"))]
pub fn set_extra_channels(extras: Option<&[&'static AgentChannelOps]>) {
    for (i, slot) in EXTRAS_OVERRIDE.iter().enumerate() {
        let ops = extras
            .and_then(|e| e.get(i))
            .map_or(ptr::null_mut(), |o| *o as *const AgentChannelOps as *mut _);
        slot.store(ops, Ordering::Release);
    }
    EXTRAS_OVERRIDDEN.store(extras.is_some(), Ordering::Release);
}

/// Run `f` on each extra channel's table.
fn for_each_extra_channel(mut f: impl FnMut(&'static AgentChannelOps)) {
    #[cfg(any(feature = "channel-debug", feature = "channel-webnet"))]
    for i in 0..EXTRAS_OVERRIDE.len() {
        let ops = if EXTRAS_OVERRIDDEN.load(Ordering::Acquire) {
            EXTRAS_OVERRIDE
                .get(i)
                .map_or(ptr::null(), |o| o.load(Ordering::Acquire))
        } else {
            // SAFETY: the glue's getter: NULL or a static channel table.
            unsafe { crate::rtt::glue::agent_glue_extra_channel_ops(i as c_int) }
                .cast::<AgentChannelOps>()
        };
        // SAFETY: NULL or a static channel table (both sources above).
        if let Some(ops) = unsafe { ops.as_ref() } {
            f(ops);
        }
    }
    let _ = &mut f;
}

/// A function handed one NUL-terminated fragment, which it only borrows.
pub use crate::abi::hooks::TextHook;

/// Without a channel that shows them: reasoning and tool calls are logged.
pub const LOG_HOOKS: StreamHooks = StreamHooks {
    on_reasoning: Some(print_reasoning),
    on_tool_call: Some(print_tool_call),
    on_context: None,
    on_tool_result: None,
};

const CONSOLE_HOOKS: StreamHooks = StreamHooks {
    on_context: Some(print_context_streaming),
    ..LOG_HOOKS
};

/// Send the pieces of every turn to `hooks` (`None`: back to logging them).
/// No effect without a running agent; a channel sets them after `init_agent`
/// has built the agent (from its init) and they go with the agent.
pub fn set_stream_hooks(hooks: Option<&'static StreamHooks>) {
    AGENT.with_shared(|shared| shared.stream = hooks.unwrap_or(&LOG_HOOKS));
}

/// Ask the loop to print answers on the console as they stream in (the CLI
/// channel, while its chat runs). No effect without a running agent.
pub fn set_stream_to_console(on: bool) {
    set_stream_hooks(on.then_some(&CONSOLE_HOOKS));
}

/// Clear the conversation (back to the system prompt) before the loop
/// answers its next message. The context belongs to the loop thread, so
/// other threads ask rather than touch it. (Only the WebNet channel asks.)
#[cfg(feature = "channel-webnet")]
static CONVERSATION_RESET: AtomicBool = AtomicBool::new(false);

/// See [`CONVERSATION_RESET`]; the next message starts a new conversation.
#[cfg(feature = "channel-webnet")]
pub fn request_conversation_reset() {
    CONVERSATION_RESET.store(true, Ordering::SeqCst);
}

/// Was `reply`'s text already printed while it streamed? Asked once per
/// reply by the channel that shows it (the answer is forgotten).
pub fn take_streamed(reply: Messages_t) -> bool {
    let key = reply as usize;
    key != 0
        && AGENT
            .with_shared(|shared| {
                let found = shared.streamed.iter_mut().find(|s| **s == key);
                found.map(|s| *s = 0).is_some()
            })
            .unwrap_or(false)
}

pub fn is_running() -> bool {
    matches!(AGENT.lifecycle(), Lifecycle::Starting | Lifecycle::Running)
}

pub fn lifecycle() -> Lifecycle {
    AGENT.lifecycle()
}

/// Run `f` with the agent if its loop runs: the lifecycle is Running and it
/// has a loop thread (an agent made by `init_agent` alone has a hub that
/// nobody reads).
fn with_running_loop<R>(f: impl FnOnce(&Agent) -> R) -> Option<R> {
    if AGENT.lifecycle() != Lifecycle::Running {
        return None;
    }
    AGENT
        .enter(|agent| (!agent.loop_thread.is_null()).then(|| f(agent)))
        .flatten()
}

/// The running loop's hub (`agent_get_message_hub`), or NULL.
pub fn running_hub() -> MessageHub_t {
    with_running_loop(|agent| agent.hub).unwrap_or(ptr::null_mut())
}

/// Put `msg` on the running loop's input mailbox as a user message
/// (`agent_inject_text`): inside the agent's gate, so a racing cleanup
/// cannot free the hub under the put. Gives `msg` back when there is no
/// running loop or the mailbox is full.
///
/// # Safety
/// `msg` is a live message set, owned by the caller; on `Ok` it belongs to
/// the loop.
pub unsafe fn put_user_message(msg: Messages_t) -> Result<(), Messages_t> {
    let sent = with_running_loop(|agent| {
        // SAFETY: inside the gate the hub and its mailboxes are live; `msg`
        // is a live set (this function's contract), handed over on RT_EOK.
        unsafe { message_hub_put(agent.hub, msg, (*agent.hub).input_mailbox) }
    });
    match sent {
        Some(r) if r == rt_eok() => Ok(()),
        _ => Err(msg),
    }
}

/// Is the running loop in a turn (the request and its tools), or is a user
/// message waiting for it (put, not yet taken)?
pub fn is_busy() -> bool {
    with_running_loop(|agent| {
        // SAFETY: inside the gate the hub and its mailboxes are live.
        AGENT.busy.load(Ordering::SeqCst)
            || super::hub::pending() > 0
            || unsafe { crate::rtt::ipc::mailbox_entries((*agent.hub).input_mailbox) } > 0
    })
    .unwrap_or(false)
}

/// User messages answered since the agent started (0 without one).
#[cfg(feature = "msh-extras")]
pub fn answered() -> usize {
    AGENT.with_shared(|shared| shared.answered).unwrap_or(0)
}

/// Set by the library's own channels (CLI, Debug) when they start: they
/// free replies with `messages_destroy`, so the static out-of-memory reply
/// is safe for them. A board's own channel never sets it.
static CHANNEL_IS_OURS: AtomicBool = AtomicBool::new(false);

/// For the library's channels' `init`: replies to this channel may be the
/// static out-of-memory reply (see [`CHANNEL_IS_OURS`]).
pub fn channel_frees_replies_with_messages_destroy() {
    CHANNEL_IS_OURS.store(true, Ordering::Release);
}

/// For a channel's `init`: `main_loop_entry` on the running agent calls
/// `reopen` (the CLI: a chat the user left with Ctrl-D opens again, with
/// the conversation kept); it says whether a chat was opened. Without it
/// (every other channel) a second start only logs that the loop runs.
pub fn channel_reopens_with(reopen: fn() -> bool) {
    AGENT.with_shared(|shared| shared.reopen = Some(reopen));
}

/// Is the running channel one of the library's?
fn channel_is_ours() -> bool {
    CHANNEL_IS_OURS.load(Ordering::Acquire)
}

/// The name of the CLI channel's thread, which cleanup waits to see freed.
pub const CLI_THREAD_NAME: ObjectName = ObjectName::new(c"AgentCLI", c"AgCli");

fn channel_ops() -> Option<&'static AgentChannelOps> {
    let over = CHANNEL_OVERRIDE.load(Ordering::Acquire);
    // SAFETY: both are NULL or point to static channel tables.
    unsafe {
        if !over.is_null() {
            return Some(&*over);
        }
        crate::rtt::glue::agent_glue_channel_ops()
            .cast::<AgentChannelOps>()
            .as_ref()
    }
}

fn log_memory(what: &str) {
    let (mut total, mut used, mut max_used) = (0, 0, 0);
    // SAFETY: three writable locals.
    unsafe { rt_memory_info(&mut total, &mut used, &mut max_used) };
    crate::log_i!(
        "[mem] ",
        what,
        ": used ",
        used,
        " max_used ",
        max_used,
        " total ",
        total
    );
}

/// Build the agent on the calling thread, which won the move to Starting:
/// tools, hub, context, spare reply, lock; then open the gate and start the
/// channel. On failure nothing is left allocated. Logs `[mem] agent started`.
fn build_agent(loop_thread: rt_thread_t) -> bool {
    /// The rest of the start, once the tools are registered: hub, context,
    /// spare reply, lock, gate, channel.
    ///
    /// Not inlined: its locals are not on the stack while the MCP client's
    /// start below exchanges with its servers.
    #[inline(never)]
    fn assemble(loop_thread: rt_thread_t) -> bool {
        let hub = message_hub_create();
        let context = super::context::agent_context_create();
        let spare_reply = crate::abi::messages::out_of_memory_message();
        let shared = Shared {
            spare_reply,
            stream: &LOG_HOOKS,
            last_reply_streamed: false,
            streamed: [0; 4],
            #[cfg(feature = "msh-extras")]
            answered: 0,
            reopen: None,
        };
        let fail = || {
            crate::log_e!("init_agent: out of memory");
            // What the abilities made with their tools goes with them.
            ability::each(|a| a.forget, |forget| forget());
            // SAFETY: C function of the package.
            unsafe { agent_tools_cleanup() };
            false
        };
        let shared = match Locked::create(ObjectName::short(c"AgentSt"), shared) {
            Ok(shared) => shared,
            Err(shared) => {
                // SAFETY: each is NULL or was just made here and never shared.
                unsafe {
                    message_hub_destroy(hub);
                    super::context::agent_context_destroy(context);
                    messages_destroy(shared.spare_reply);
                }
                return fail();
            }
        };
        // From here the agent's drop frees whatever was made.
        let agent = Agent {
            hub,
            context,
            loop_thread,
            shared,
        };
        if hub.is_null() || context.is_null() || spare_reply.is_null() {
            drop(agent);
            return fail();
        }
        // SAFETY: non-NULL (checked above): the context just made, this
        // thread's, before any message reaches it.
        ability::each(|a| a.context_made, |made| unsafe { made(context) });
        // SAFETY: non-NULL (checked above): the hub just made, live.
        super::hub::watch_input(unsafe { (*hub).input_mailbox });
        // SAFETY: Starting, with the gate closed: no other thread reaches `agent`
        // (see `AgentCell`).
        unsafe { *AGENT.agent.get() = Some(agent) };
        AGENT.gate.open();
        // As the C package's init_agent: the file-operation thread (down_load
        // and C code posting to its queues) runs with the agent.
        ability::each(|a| a.open, |open| open());
        // SAFETY: the glue's logging only; no arguments.
        #[cfg(feature = "tls")]
        unsafe {
            crate::rtt::webclient::agent_tls_report()
        };
        log_memory("agent started");
        if let Some(init) = channel_ops().and_then(|ops| ops.init) {
            // SAFETY: the channel's own init with the live hub and context; the
            // channel is reset before either is freed.
            if unsafe { init(hub, context) } != 0 {
                crate::log_w!("init_agent: the channel did not start");
            }
        }
        for_each_extra_channel(|ops| {
            if let Some(init) = ops.init {
                // SAFETY: as the chosen channel's init above; extra channels
                // are reset before the hub and the context are freed too.
                if unsafe { init(hub, context) } != 0 {
                    crate::log_w!("init_agent: an extra channel did not start");
                }
            }
        });
        ability::each(|a| a.start, |start| start(put_user_message));
        true
    }

    CHANNEL_IS_OURS.store(false, Ordering::Release);
    super::tools::set_owner(Some(thread::current()));
    #[cfg(feature = "channel-webnet")]
    CONVERSATION_RESET.store(false, Ordering::SeqCst);
    // SAFETY: C function of the package (the user-editable tool_func.c).
    unsafe { init_tools() };
    ability::each(|a| a.register_tools, |register| register());
    assemble(loop_thread)
}

/// Tear the agent down on the calling thread, which won the move to
/// Stopping (or is the loop thread it stopped): reset the channel, close the
/// gate, wait for its users, free everything, clean the tools up.
fn tear_down_agent() {
    CHANNEL_IS_OURS.store(false, Ordering::Release);
    // First: nothing more is put on a hub that is going, and no tool call
    // from outside goes through the gate and the registry.
    ability::each(|a| a.stop, |stop| stop());
    for_each_extra_channel(|ops| {
        if let Some(reset) = ops.reset {
            // SAFETY: the channel's own reset; afterwards it no longer
            // touches the hub.
            unsafe { reset() };
        }
    });
    if let Some(reset) = channel_ops().and_then(|ops| ops.reset) {
        // SAFETY: the channel's own reset; afterwards it no longer touches
        // the hub.
        unsafe { reset() };
    }
    AGENT.gate.close();
    AGENT.gate.wait_empty(|| {});
    ability::each(|a| a.closed, |closed| closed());
    // SAFETY: the gate is closed and empty, so no other thread holds a
    // reference into `agent` (see `AgentCell`); this thread is its writer.
    let agent = unsafe { (*AGENT.agent.get()).take() };
    drop(agent);
    // The hub went with what was queued on it: their marks go too.
    super::unasked::forget_all();
    ability::each(|a| a.forget, |forget| forget());
    // SAFETY: C function of the package.
    unsafe { agent_tools_cleanup() };
    // After every request of the agent has ended (the loop thread and the
    // MCP client are stopped): the kept TLS session goes with the agent.
    // SAFETY: the glue frees its own copy under its own lock.
    #[cfg(feature = "tls")]
    unsafe {
        crate::rtt::webclient::agent_tls_forget()
    };
}

/// Register the tools, create the hub and the context, start the channel:
/// the agent without a loop thread (`main_loop_entry` starts one that does
/// this itself). Logs `[mem] agent started`. On failure nothing is left
/// allocated. With an agent already there: a warning, nothing else.
pub fn init_agent() {
    if AGENT
        .transition(Lifecycle::Stopped, Lifecycle::Starting)
        .is_err()
    {
        crate::log_w!("init_agent: the agent is already initialised");
        return;
    }
    if build_agent(ptr::null_mut()) {
        AGENT.set(Lifecycle::Running);
    } else {
        AGENT.set(Lifecycle::Stopped);
    }
    super::tools::set_owner(None);
}

/// Stop the agent, whichever way it was started (the loop thread too), and
/// free everything: channel, hub with whatever is still queued, context,
/// tools. Logs `[mem] cleanup done`. Idempotent.
pub fn cleanup_agent() {
    if stop_agent() == StopOutcome::NotRunning {
        log_memory("cleanup done");
    }
}

#[derive(PartialEq, Eq)]
enum StopOutcome {
    Stopped,
    NotRunning,
    /// Asked from the loop's own thread (a tool): it cannot wait for itself.
    Refused,
}

/// Stop the agent and wait until everything is freed; logs `[mem] cleanup
/// done` when it stopped one.
fn stop_agent() -> StopOutcome {
    loop {
        match AGENT.transition(Lifecycle::Running, Lifecycle::Stopping) {
            Ok(()) => break,
            Err(Lifecycle::Stopped) => return StopOutcome::NotRunning,
            // Another stop is at work: return once it is done, so that every
            // caller finds everything freed.
            Err(Lifecycle::Stopping) => {
                AGENT.wait_while(Lifecycle::Stopping);
                return StopOutcome::Stopped;
            }
            Err(_) => {
                AGENT.wait_while(Lifecycle::Starting);
            }
        }
    }
    let me = thread::current();
    let (hub, loop_thread) = AGENT
        .enter(|agent| (agent.hub, agent.loop_thread))
        .unwrap_or((ptr::null_mut(), ptr::null_mut()));
    if !loop_thread.is_null() && loop_thread == me {
        crate::log_w!("the agent cannot be stopped from its own thread (a tool?)");
        AGENT.set(Lifecycle::Running);
        return StopOutcome::Refused;
    }
    if loop_thread.is_null() {
        // An agent without a loop: this thread frees it.
        super::tools::set_owner(Some(me));
        tear_down_agent();
    } else {
        crate::net::cancel::request_cancel();
        // The loop takes this sentinel, sees Stopping and tears the agent
        // down; the hub lives until it has taken it.
        // SAFETY: the hub is live until the loop has taken the sentinel sent
        // here (the module comment); a full mailbox makes this wait.
        unsafe { rt_mb_send_wait((*hub).input_mailbox, 0, RT_WAITING_FOREVER) };
        // SAFETY: the loop thread uses `done` until its last release, which
        // this take waits for; only then does this thread (the Stopping
        // winner) write it.
        unsafe {
            if let Some(done) = AGENT.done() {
                done.take(RT_WAITING_FOREVER);
            }
            *AGENT.done.get() = None;
        }
        wait_until_threads_freed();
    }
    log_memory("cleanup done");
    crate::net::cancel::clear_cancel();
    super::tools::set_owner(None);
    AGENT.set(Lifecycle::Stopped);
    StopOutcome::Stopped
}

/// Wait (a bounded while) until the kernel has freed the finished loop and
/// channel threads: a thread that returns from its entry becomes defunct and
/// its stack and control block are freed later, by the idle (or system)
/// thread, after which its object can no longer be found.
fn wait_until_threads_freed() {
    let names: &[ObjectName] = &[
        LOOP_THREAD_NAME,
        #[cfg(feature = "channel-cli")]
        CLI_THREAD_NAME,
    ];
    for &name in names {
        for _ in 0..200 {
            if !thread::exists(name) {
                break;
            }
            thread::sleep_ms(10);
        }
    }
}

unsafe extern "C" fn loop_thread(_parameter: *mut c_void) {
    ffi_fn!(failure = (), {
        let me = thread::current();
        // Cleanup cancels the requests of this thread only.
        crate::net::cancel::cancel_on_thread(me);
        let built = build_agent(me);
        // SAFETY: `done` was set by main_loop_entry before this thread
        // started and is written again only after this thread's last release.
        let done = unsafe { AGENT.done() };
        // Tell main_loop_entry that start-up is over (the channel is ready).
        if let Some(done) = done {
            done.release();
        }
        if built {
            AGENT.enter(|agent| {
                // SAFETY: on the loop thread, inside the gate: the hub and the
                // context are live and this thread's.
                unsafe { serve(agent) }
            });
            tear_down_agent();
        } else {
            // Nothing was built: the registry is free again (after a stop
            // `stop_agent` gives it back).
            super::tools::set_owner(None);
        }
        crate::net::cancel::cancel_on_thread(ptr::null_mut());
        // The last act: whoever waits deletes the semaphore after this.
        if let Some(done) = done {
            done.release();
        }
    })
}

/// Answer messages until the stop sentinel arrives.
///
/// # Safety
/// On the loop thread, with `agent` the live agent it built.
unsafe fn serve(agent: &Agent) {
    loop {
        // Tools appended from other threads during the turn are registered
        // now; until the next message they are registered at once.
        super::tools::owner_waits();
        // SAFETY: the hub is live while the agent is (this function's
        // contract), and so is its `input_mailbox`.
        let msg = unsafe { message_hub_get(agent.hub, (*agent.hub).input_mailbox) };
        // The registry is the loop's again: no request reads it while
        // another thread changes it.
        super::tools::owner_works();
        if AGENT.lifecycle() == Lifecycle::Stopping {
            // SAFETY: `msg` is NULL or a received set this thread now owns;
            // not used again.
            unsafe { messages_destroy(msg) };
            if msg.is_null() {
                return; // the stop sentinel: nobody sends to the hub any more
            }
            continue;
        }
        if msg.is_null() {
            continue;
        }
        AGENT.busy.store(true, Ordering::SeqCst);
        // SAFETY: on the loop thread with the live agent; `msg` is a non-NULL
        // received set, handed over.
        unsafe { handle_user_message(agent, msg) };
        AGENT.busy.store(false, Ordering::SeqCst);
        super::hub::answered_one();
    }
}

/// Start the `AgentLoop` thread and return once the agent is initialised. A
/// second call while it runs starts nothing: it opens the channel's chat
/// again if the user left it (the CLI after Ctrl-D; the conversation is
/// kept), else it logs that the loop runs. Returns 0, or -1 when the thread
/// cannot be created or the agent cannot be initialised (no memory).
pub fn main_loop_entry() -> c_int {
    loop {
        match AGENT.transition(Lifecycle::Stopped, Lifecycle::Starting) {
            Ok(()) => break,
            Err(Lifecycle::Stopping) => {
                AGENT.wait_while(Lifecycle::Stopping);
            }
            Err(_) => {
                let reopen = with_running_loop(|agent| agent.shared.lock()?.reopen).flatten();
                // Outside the gate: the channel's own state keeps a stop out.
                if !reopen.is_some_and(|reopen| reopen()) {
                    crate::log_w!("the agent loop is already running");
                }
                return 0;
            }
        }
    }
    crate::net::cancel::clear_cancel();
    let Some(done) = Semaphore::create(ObjectName::new(c"AgentDone", c"AgDone"), 0) else {
        AGENT.set(Lifecycle::Stopped);
        return -1;
    };
    // SAFETY: this thread won the move to Starting and the loop thread
    // does not exist yet: nobody else reaches `done`.
    unsafe { *AGENT.done.get() = Some(done) };
    let cfg = board();
    let spec = thread::Spec {
        name: LOOP_THREAD_NAME,
        stack_size: cfg.loop_stack_size.clamp(2048, 1 << 20) as u32,
        priority: cfg.loop_priority.clamp(0, 255) as u8,
        tick: 10,
    };
    let forget_done = || {
        // SAFETY: no loop thread uses `done` (none started, or it made
        // its last release); this thread is the Starting winner.
        unsafe { *AGENT.done.get() = None };
        AGENT.set(Lifecycle::Stopped);
    };
    if thread::Thread::spawn(&spec, loop_thread).is_none() {
        crate::log_e!("cannot start the AgentLoop thread");
        forget_done();
        return -1;
    }
    // Return once the agent is up, so a command right after this one
    // (agent_send_message in a script) finds the channel ready.
    // SAFETY: the loop thread only releases `done`; it is written again
    // only by this thread below, after the loop's last release.
    let done = unsafe { AGENT.done() };
    if let Some(done) = done {
        done.take(RT_WAITING_FOREVER);
    }
    if !AGENT.gate.is_open() {
        // The agent could not be built: the thread is finishing.
        if let Some(done) = done {
            done.take(RT_WAITING_FOREVER);
        }
        wait_until_threads_freed();
        forget_done();
        return -1;
    }
    AGENT.set(Lifecycle::Running);
    0
}

/// Stop the loop and wait until everything it owned is freed. Without a
/// running agent: nothing to do. Returns 0; -1 when asked from the loop's
/// own thread (a tool), which cannot wait for itself.
pub fn cleanup_agent_entry() -> c_int {
    match stop_agent() {
        StopOutcome::Stopped => 0,
        StopOutcome::NotRunning => {
            crate::log_i!("the agent loop is not running");
            0
        }
        StopOutcome::Refused => -1,
    }
}

/// Answer one user message: rounds of chat() and tools, then one reply.
///
/// # Safety
/// On the loop thread only, with `agent` the live agent it built (its
/// context is this thread's); `msg` is a live message set, handed over.
unsafe fn handle_user_message(agent: &Agent, msg: Messages_t) {
    let ctx = agent.context;
    let mut reply = TextBuf::new();
    // The abilities' tags of this message (a scheduled prompt's, whose
    // reply also goes to the log and the sink).
    let tags = ability::Tags::take(msg);
    // An ability's trim after the reply (the summary's), decided once.
    let trim_later = ability::trim_after_reply();
    // Who sent it: no channel (its reply is marked, so none takes it for
    // its own), an extra channel (the reply goes to its route) or the
    // chosen one.
    let origin = super::unasked::take_input(msg);
    let unasked = origin == super::unasked::Origin::Unasked;
    // Is the reply the model's answer (which a console channel may have
    // printed as it streamed)? Anything else (an error, even after part of
    // an answer was streamed) must still be shown.
    let mut is_answer = false;
    let hooks = agent.shared.lock().map_or(&LOG_HOOKS, |mut shared| {
        shared.last_reply_streamed = false;
        shared.stream
    });
    // An extra channel's turn streams to that channel, not to the chosen
    // one's hooks (the console must not show a web user's answer).
    let routed = routed_hooks(origin);
    let hooks = routed.unwrap_or(hooks);
    // Forget a reason left by an earlier content (a tool result's).
    ability::why_refused(&mut crate::net::error::ErrorText::new());
    if !ctx.is_null() {
        // SAFETY: this thread's live context, before the message joins it.
        ability::each(|a| a.before_turn, |before| unsafe { before(ctx) });
    }
    #[cfg(feature = "channel-webnet")]
    if CONVERSATION_RESET.swap(false, Ordering::SeqCst) && !ctx.is_null() {
        // SAFETY: `ctx` is the non-NULL live context of this thread; its own
        // methods, called with it.
        unsafe {
            if let Some(clear) = (*ctx).clear_message {
                clear(ctx);
            }
            if let Some(build) = (*ctx).build_system_prompt {
                build(ctx);
            }
        }
    }
    let appended = ctx.is_null()
        // SAFETY: `ctx` is non-NULL, the live context of this thread; its
        // method borrows `msg`, a live set.
        || (unsafe { (*ctx).append_user_message.map_or(-1, |f| f(ctx, msg)) }) == rt_eok();
    // SAFETY: `msg` is owned here (this function's contract), not used again.
    unsafe { messages_destroy(msg) };
    let mut why = crate::net::error::ErrorText::new();
    if !appended && ability::why_refused(&mut why) {
        // A file of the message could not be sent: say which and why.
        reply.push_str("error: ").push(why.as_str().as_bytes());
    } else if ctx.is_null() || !appended {
        reply.push_str(
            "error: the message could not be added to the conversation (empty, or out of memory)",
        );
    } else {
        // SAFETY: `ctx` is the non-NULL live context of this thread.
        is_answer = unsafe { run_rounds(ctx, hooks, &mut reply) };
        // With the summary on, the context is trimmed after the reply went
        // out (below): the summary request must not delay it.
        // SAFETY: `ctx` is live; `trim_context` is its own method.
        let trim = unsafe { (*ctx).trim_context }.filter(|_| trim_later.is_none());
        if let Some(trim) = trim {
            // SAFETY: the context's method, called with that context.
            unsafe {
                trim(
                    ctx,
                    board().message_trim.clamp(0, c_int::MAX as isize) as c_int,
                )
            };
        }
    }
    tags.replied(&reply.bytes);
    let mut out = crate::abi::messages::message_of(reply);
    if unasked && !out.is_null() {
        super::unasked::mark_reply(out);
    }
    let mut shared = agent.shared.lock();
    if let Some(shared) = shared.as_mut() {
        // A just-made reply's address cannot be a reply still shown: an
        // entry equal to it is stale (a reply freed without being asked).
        let key = out as usize;
        for s in shared.streamed.iter_mut().filter(|s| **s == key) {
            *s = 0;
        }
        if shared.last_reply_streamed && is_answer && !out.is_null() {
            // The oldest entry gives way to the newest.
            shared.streamed.rotate_left(1);
            if let Some(last) = shared.streamed.last_mut() {
                *last = key;
            }
        }
        shared.last_reply_streamed = false;
    }
    if out.is_null() {
        crate::log_e!("no memory for the reply: sending the spare one");
        if let Some(shared) = shared.as_mut() {
            out = core::mem::replace(
                &mut shared.spare_reply,
                crate::abi::messages::out_of_memory_message(),
            );
        }
    }
    if out.is_null() && (channel_is_ours() || routed.is_some()) {
        // Not even the spare: the static reply, which needs no memory.
        out = crate::abi::messages::out_of_memory_reply();
    }
    #[cfg(feature = "msh-extras")]
    if let Some(shared) = shared.as_mut() {
        shared.answered += 1;
    }
    drop(shared);
    // SAFETY: the hub is live while the agent is (this function's
    // contract); `out` is NULL or a set owned here, handed over.
    unsafe { deliver(agent.hub, out, origin) };
    if let Some(trim) = trim_later.filter(|_| !ctx.is_null() && appended) {
        let keep = board().message_trim.clamp(0, c_int::MAX as isize) as c_int;
        // SAFETY: `ctx` is this thread's live context (non-NULL: appended).
        unsafe { trim(ctx, keep) };
    }
}

/// The hooks of the extra channel that sent a message, if one did (and its
/// route is still claimed).
fn routed_hooks(origin: super::unasked::Origin) -> Option<&'static StreamHooks> {
    match origin {
        #[cfg(any(feature = "channel-debug", feature = "channel-webnet"))]
        super::unasked::Origin::Routed(slot) => super::reply_route::hooks(slot),
        _ => None,
    }
}

/// Put `reply` where its sender reads it (`origin`): the output mailbox, or
/// an extra channel's route. A channel's reply waits (up to the reply
/// timeout) while the mailbox is full rather than being dropped, unless the
/// agent is stopping. The reply to a message no channel sent (unasked: a
/// scheduled or injected one) does not wait: nobody may be reading, and the
/// loop must not stop for it; it was logged.
///
/// # Safety
/// `hub` is a live hub; `reply` is NULL or a live set, handed over.
unsafe fn deliver(hub: MessageHub_t, reply: Messages_t, origin: super::unasked::Origin) {
    if reply.is_null() {
        crate::log_e!("no reply could be made (out of memory)");
        return;
    }
    #[cfg(any(feature = "channel-debug", feature = "channel-webnet"))]
    if let super::unasked::Origin::Routed(slot) = origin {
        // SAFETY: forwarded (this function's contract).
        return unsafe { deliver_routed(hub, reply, slot) };
    }
    if origin == super::unasked::Origin::Unasked {
        // SAFETY: `hub` is live (contract), so is its `output_mailbox`;
        // `reply` is a live set owned here.
        if unsafe { message_hub_put(hub, reply, (*hub).output_mailbox) } != rt_eok() {
            super::unasked::take_reply(reply);
            crate::log_d!(
                "the output mailbox is full: an unasked reply was not queued (it was logged)"
            );
            // SAFETY: not delivered, so still owned here; not used again.
            unsafe { messages_destroy(reply) };
        }
        return;
    }
    let patience = board().reply_timeout_ms.clamp(1, 600_000) as u32;
    let mut waited = 0;
    // SAFETY: `hub` is live (this function's contract), so its
    // `output_mailbox` is too; `reply` is a live set owned here.
    while unsafe { message_hub_put(hub, reply, (*hub).output_mailbox) } != rt_eok() {
        if waited >= patience || AGENT.lifecycle() == Lifecycle::Stopping {
            crate::log_w!("the reply could not be delivered (output mailbox full); dropped");
            // SAFETY: not delivered, so still owned here; not used again.
            unsafe { messages_destroy(reply) };
            return;
        }
        thread::sleep_ms(50);
        waited += 50;
    }
}

/// [`deliver`] to an extra channel's route: waits while its mailbox is full
/// as for the chosen channel; a released route (the channel closed) frees
/// the reply.
///
/// # Safety
/// `hub` is a live hub; `reply` is a live set, handed over.
#[cfg(any(feature = "channel-debug", feature = "channel-webnet"))]
unsafe fn deliver_routed(hub: MessageHub_t, reply: Messages_t, slot: u8) {
    use super::reply_route::{put, Put};
    let patience = board().reply_timeout_ms.clamp(1, 600_000) as u32;
    let mut waited = 0;
    loop {
        // SAFETY: `hub` is live and `reply` a live set owned here (this
        // function's contract), handed over on `Delivered`.
        let why = match unsafe { put(hub, slot, reply) } {
            Put::Delivered => return,
            Put::Gone => "its channel closed",
            Put::Full if waited >= patience || AGENT.lifecycle() == Lifecycle::Stopping => {
                "the channel's mailbox is full"
            }
            Put::Full => {
                thread::sleep_ms(50);
                waited += 50;
                continue;
            }
        };
        crate::log_w!("the reply could not be delivered (", why, "); dropped");
        // SAFETY: not delivered, so still owned here; not used again.
        unsafe { messages_destroy(reply) };
        return;
    }
}

unsafe extern "C" fn print_context_streaming(text: *const c_char) {
    ffi_fn!(failure = (), {
        AGENT.with_shared(|shared| shared.last_reply_streamed = true);
        // SAFETY: `chat()` passes each fragment as a NUL-terminated string,
        // which `print_context` only borrows.
        unsafe { super::utils::print_context(text) };
    })
}

/// The chat()/tool rounds for the message just appended to `ctx`
/// (`crate::agent::turn`); the text for the user goes into `reply`. True
/// when that is the model's answer (which the channel may have shown as it
/// streamed), false for an error or direct-output tools' results.
///
/// # Safety
/// On the loop thread only (it owns the tool registry), with `ctx` its live
/// context (non-NULL, `message` a live array).
unsafe fn run_rounds(ctx: Context_t, hooks: &StreamHooks, reply: &mut TextBuf) -> bool {
    let settings = TurnSettings {
        max_rounds: board().max_tool_rounds.max(1) as usize,
        mode: super::turn::tool_mode(),
    };
    let max_tokens = board().max_tokens.clamp(1, c_int::MAX as isize) as c_int;
    // SAFETY: `ctx` is this thread's live context (this function's contract).
    let mut conversation = unsafe { LoopConversation::new(ctx) };
    let mut chat = ModelChat::new(hooks, max_tokens);
    let mut tools = LoopTools::begin(hooks);
    match turn::run(
        settings,
        &mut conversation,
        &mut chat,
        &mut tools,
        &LoopEvents,
    ) {
        Ok(Reply::Model(answer)) => {
            reply.push(answer.text());
            true
        }
        // Not streamed: the channel shows it as any reply.
        Ok(Reply::Tools) => {
            reply.push(tools.direct_text());
            false
        }
        Err(why) => {
            describe_turn_error(reply, &why);
            false
        }
    }
}

/// The loop's side of a turn: it ends when the agent is stopping.
struct LoopEvents;

impl TurnEvents for LoopEvents {
    fn stopping(&self) -> bool {
        AGENT.lifecycle() == Lifecycle::Stopping
    }
}

/// What the user reads when a turn ends without the model's answer.
fn describe_turn_error(reply: &mut TextBuf, why: &TurnError<crate::net::error::ErrorText>) {
    match why {
        TurnError::Stopping => reply.push_str("error: the agent is stopping"),
        TurnError::Request(error) => {
            let why = error.as_str().as_bytes();
            reply
                .push_str("error: the request to the model failed: ")
                .push(if why.is_empty() {
                    b"unknown error"
                } else {
                    why
                })
        }
        TurnError::EmptyAnswer => reply.push_str("(the model returned an empty answer)"),
        TurnError::CallsNotRecorded => {
            reply.push_str("error: out of memory while recording the model's tool calls")
        }
        TurnError::ResultNotRecorded => {
            reply.push_str("error: out of memory while recording a tool result")
        }
        TurnError::RoundLimit(rounds) => reply
            .push_str("error: round limit reached (")
            .push_num(*rounds)
            .push_str(" tool rounds) before the model gave an answer"),
    };
}
