//! The CLI channel (`channels/CLI.h`): a chat on the console device
//! (`RT_CONSOLE_DEVICE_NAME`). It takes the console from the shell while it
//! runs (its own receive callback), edits lines with [`LineEditor`], sends
//! each line to the agent and prints the reply. Ctrl-D leaves the chat and
//! gives the console back to the shell; the agent loop keeps running, and
//! `main_loop_entry` opens the chat again on the same session ([`reopen`]):
//! the conversation goes on.
//!
//! Giving the console back means putting back exactly the receive indicator
//! that was on the device before: finsh's own (`finsh_rx_ind`), or with
//! `RT_USING_POSIX_STDIO` the serial driver's (`serial_fops_rx_ind`, which
//! the shell's `read()` sleeps on). `finsh_set_device()` cannot do it: it
//! returns at once for the device the shell already has.

use crate::abi::messages::*;
use crate::ffi_fn;
use crate::rtt::atomic::{AtomicBool, Ordering};
use crate::rtt::gate::Gate;
use crate::rtt::ipc::{ticks_from_ms, Semaphore};
use crate::rtt::log::console_print;
use crate::rtt::name::ObjectName;
use crate::rtt::thread;
use crate::rtt::*;
use crate::runtime::agent_loop::{set_stream_to_console, take_streamed, AgentChannelOps};
use crate::runtime::context::Context_t;
use crate::runtime::hub::{message_hub_get_timeout, message_hub_put, MessageHub_t};
use crate::wire::line_editor::{Event, LineEditor};
use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, c_void, CStr};

use crate::rtt::glue::{
    agent_glue_console, agent_glue_rx_indicate, agent_glue_stack_used, agent_rx_indicate_t,
};

const PROMPT: &[u8] = b"you> ";

/// A running chat: made by [`agent_cli_channel`], freed by [`agent_cli_stop`]
/// after the channel thread has left.
struct Session {
    hub: MessageHub_t,
    device: rt_device_t,
    /// Released by the receive indicator: something was typed.
    rx: Semaphore,
    /// Released by the channel thread as its last act.
    exited: Semaphore,
    /// Set by a stop: the thread leaves at its next look.
    stop: AtomicBool,
    /// The indicator that was on the console when the chat took it (at the
    /// start, or when [`reopen`] took it again). Written only by the start
    /// and by a reopen that holds `chatting` while no chat thread runs; read
    /// by the chat thread and by `close_session`.
    saved_rx: UnsafeCell<agent_rx_indicate_t>,
    /// It was put back (on Ctrl-D, or by the stop).
    returned: AtomicBool,
    /// A chat thread runs (or is about to): set by the start and by a
    /// reopen (a compare-and-swap, so one at a time), cleared by the thread
    /// as its last act on the session.
    chatting: AtomicBool,
}

/// The channel. `session` is written only by start and stop (one at a time,
/// with `active` as the claim) while the gate is closed and empty; the
/// channel thread and the receive indicator (from an interrupt) read it
/// through the gate.
struct Channel {
    active: AtomicBool,
    gate: Gate,
    session: UnsafeCell<Option<Session>>,
}

// SAFETY: `session` is reached only under the rules on `Channel`; the rest
// is atomic.
unsafe impl Sync for Channel {}

static CLI: Channel = Channel {
    active: AtomicBool::new(false),
    gate: Gate::closed(),
    session: UnsafeCell::new(None),
};

impl Channel {
    /// Run `f` with the running session, if there is one.
    fn enter<R>(&self, f: impl FnOnce(&Session) -> R) -> Option<R> {
        let _pass = self.gate.enter()?;
        // SAFETY: inside the gate the session is complete and not written
        // (see `Channel`); the pass holds a stop off until `f` returns.
        unsafe { (*self.session.get()).as_ref() }.map(f)
    }
}

#[no_mangle]
pub static mut agent_cli_ops: AgentChannelOps = AgentChannelOps {
    init: Some(cli_init),
    reset: Some(cli_reset),
};

unsafe extern "C" fn cli_init(hub: MessageHub_t, ctx: Context_t) -> c_int {
    ffi_fn!(failure = -1, {
        crate::runtime::agent_loop::channel_frees_replies_with_messages_destroy();
        // SAFETY: the channel framework passes NULL or its live hub and
        // context, the contract `agent_cli_channel` documents.
        unsafe { agent_cli_channel(hub, ctx) }
    })
}
unsafe extern "C" fn cli_reset() {
    ffi_fn!(failure = (), { agent_cli_stop() })
}

unsafe extern "C" fn on_rx(_dev: rt_device_t, _size: rt_size_t) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        // From the driver, possibly in an interrupt: the gate is atomics
        // only, and releasing a semaphore is allowed there.
        CLI.enter(|session| session.rx.release());
        rt_eok()
    })
}

/// Start the chat on the console. Returns 0, or -1 without a console device,
/// a hub or memory, or when a chat runs already.
pub unsafe fn agent_cli_channel(message_hub: MessageHub_t, _context: Context_t) -> c_int {
    if message_hub.is_null() || CLI.active.swap(true, Ordering::AcqRel) {
        return -1;
    }
    let unclaim = || {
        CLI.active.store(false, Ordering::Release);
        -1
    };
    // SAFETY: a plain glue call.
    let device = unsafe { agent_glue_console() };
    let (Some(rx), Some(exited)) = (
        Semaphore::create(ObjectName::short(c"AgentRx"), 0),
        Semaphore::create(ObjectName::new(c"AgentCliX", c"AgCliX"), 0),
    ) else {
        crate::log_e!("CLI channel: no memory");
        return unclaim();
    };
    if device.is_null() {
        crate::log_e!("CLI channel: no console device");
        return unclaim();
    }
    let session = Session {
        hub: message_hub,
        device,
        rx,
        exited,
        stop: AtomicBool::new(false),
        // SAFETY: `device` is a live device; the glue only reads its
        // `rx_indicate` field.
        saved_rx: UnsafeCell::new(unsafe { agent_glue_rx_indicate(device) }),
        returned: AtomicBool::new(false),
        chatting: AtomicBool::new(true),
    };
    // SAFETY: claimed through `active`, with the gate closed and empty
    // (the last stop emptied it): nobody else reaches `session`.
    unsafe { *CLI.session.get() = Some(session) };
    CLI.gate.open();
    // SAFETY: `device` is live; `on_rx` has the indicator's C signature
    // and lives for the program.
    unsafe { rt_device_set_rx_indicate(device, Some(on_rx)) };
    if !spawn_chat_thread() {
        close_session();
        return unclaim();
    }
    crate::runtime::agent_loop::channel_reopens_with(reopen);
    0
}

/// Start the thread of the chat (false, logged, when it cannot be made).
fn spawn_chat_thread() -> bool {
    let spec = thread::Spec {
        name: crate::runtime::agent_loop::CLI_THREAD_NAME,
        stack_size: board().cli_stack_size().min(u32::MAX as usize) as u32,
        priority: board().loop_priority.clamp(0, 255) as u8,
        tick: 10,
    };
    let started = thread::Thread::spawn(&spec, cli_thread).is_some();
    if !started {
        crate::log_e!("CLI channel: cannot start its thread");
    }
    started
}

/// Open the chat again after the user left it with Ctrl-D
/// (`main_loop_entry` on the running agent): the same session and hub, so
/// the conversation goes on, and the console taken from whoever has it now,
/// as at the start. False when there is no session (none started, or
/// stopped by `agent_cli_stop`: a module that reads the replies itself),
/// its chat still runs, or a stop is under way.
fn reopen() -> bool {
    CLI.enter(|session| {
        if session
            .chatting
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return false;
        }
        let give_up = || {
            session.chatting.store(false, Ordering::Release);
            false
        };
        // The stop's flag first, then the left thread's last release: a
        // stop that took it first waits for nobody, and one after waits for
        // the new thread's, which sees the flag and leaves at once.
        if session.stop.load(Ordering::Acquire) || !session.exited.take(0) {
            return give_up();
        }
        // SAFETY: `chatting` is held here and the left thread is done with
        // the session (its last release was taken), so nobody reads
        // `saved_rx` (close_session waits for this pass); the device is the
        // live console, whose `rx_indicate` the glue only reads.
        unsafe { *session.saved_rx.get() = agent_glue_rx_indicate(session.device) };
        session.returned.store(false, Ordering::Release);
        // SAFETY: as at the start: the live console and our indicator.
        unsafe { rt_device_set_rx_indicate(session.device, Some(on_rx)) };
        if !spawn_chat_thread() {
            give_back(session);
            session.exited.release();
            return give_up();
        }
        true
    })
    .unwrap_or(false)
}

/// Give the console back and free the session (the channel thread is gone
/// or never started).
fn close_session() {
    CLI.gate.close();
    CLI.gate.wait_empty(|| {});
    // SAFETY: the gate is closed and empty and this thread holds the claim:
    // nobody else reaches `session`.
    if let Some(session) = unsafe { (*CLI.session.get()).take() } {
        give_back(&session);
    }
}

/// Give the console back to whoever had it, once per session.
fn give_back(session: &Session) {
    if !session.returned.swap(true, Ordering::AcqRel) {
        // SAFETY: the session's device is the live console it was made for;
        // `saved_rx` is not written while a chat thread or close_session
        // may read it (see `Session`).
        unsafe { give_console_back(session.device, *session.saved_rx.get()) };
    }
}

/// Stop the chat (if it runs), give the console back to the shell and wait
/// until the channel's thread is gone. Idempotent.
pub fn agent_cli_stop() {
    if !CLI.active.load(Ordering::Acquire) {
        return;
    }
    let exited = CLI.enter(|session| {
        session.stop.store(true, Ordering::Release);
        session.rx.release();
        // The thread's last act; counted, so a thread that left on
        // Ctrl-D long ago is not waited for.
        session.exited.take(RT_WAITING_FOREVER)
    });
    if exited.is_none() {
        crate::log_w!("CLI channel: stopped without a session");
    }
    close_session();
    CLI.active.store(false, Ordering::Release);
}

/// Put back the indicator that was on the console when the chat started,
/// then call it once so whoever sleeps on it (the shell) reads what was
/// typed in between.
///
/// # Safety
/// `dev` is the live console device the session was made for.
unsafe fn give_console_back(dev: rt_device_t, saved: agent_rx_indicate_t) {
    // SAFETY: `dev` is the live console device (this function's contract);
    // `saved` is the indicator that was on it, or None.
    unsafe { rt_device_set_rx_indicate(dev, saved) };
    if let Some(wake) = saved {
        // SAFETY: `wake` is the device's own indicator, which the driver calls
        // with the device and a size; 0 means "nothing new, look again".
        unsafe { wake(dev, 0) };
    }
}

/// One byte from the console, waiting in short slices so a stop is seen.
/// Meanwhile a reply nobody typed for (the answer to a message injected
/// with `agent_inject_text`) is shown, then the prompt and the line so far
/// again.
fn next_byte(session: &Session, line: &[u8]) -> Option<u8> {
    loop {
        if session.stop.load(Ordering::Acquire) {
            return None;
        }
        let mut b = 0u8;
        // SAFETY: the session's device is the live console; the buffer is
        // the local `b`, 1 byte long.
        let n = unsafe { rt_device_read(session.device, -1, &mut b as *mut u8 as *mut c_void, 1) };
        if n == 1 {
            return Some(b);
        }
        if take_unasked(session.hub, 0) {
            console_print(PROMPT);
            console_print(line);
        }
        session.rx.take(ticks_from_ms(100));
    }
}

/// Print a reply (unless the model's answer was printed as it streamed)
/// and free it.
fn show_reply(reply: Messages_t) {
    if !take_streamed(reply) {
        // SAFETY: `reply` is a live message set owned here; the content
        // is borrowed from it.
        let t = unsafe { messages_get_content_idx(reply, 0) };
        if !t.is_null() {
            // SAFETY: `t` is non-NULL, NUL-terminated message content
            // owned by `reply`, which is still alive.
            console_print(unsafe { CStr::from_ptr(t) }.to_bytes());
        }
    }
    console_print(b"\r\n");
    // SAFETY: `reply` is owned here and not used after this.
    unsafe { messages_destroy(reply) };
}

/// Take one reply this channel did not ask for (waiting up to `ticks`) and
/// show it; true if there was one. This channel waits for the reply of
/// each line it sends, so whatever is on the output mailbox outside `ask`
/// answers someone else's message: one injected with `agent_inject_text`.
fn take_unasked(hub: MessageHub_t, ticks: rt_int32_t) -> bool {
    // SAFETY: the session's hub outlives the session (the agent resets the
    // channel before freeing it), so its `output_mailbox` can be read.
    let reply = unsafe { message_hub_get_timeout(hub, (*hub).output_mailbox, ticks) };
    if reply.is_null() {
        return false;
    }
    crate::runtime::unasked::take_reply(reply);
    show_reply(reply);
    true
}

/// Send a line and wait for its reply, still watching for a stop.
fn ask(session: &Session, line: &[u8]) {
    let hub = session.hub;
    let mut text: alloc::vec::Vec<u8> = alloc::vec::Vec::new();
    let copied = crate::base::fallible::extend(&mut text, line);
    if copied
        .and_then(|()| crate::base::fallible::push(&mut text, 0))
        .is_err()
    {
        console_print(b"(out of memory)\r\n");
        return;
    }
    // The loop answers one message at a time, and this channel sends its
    // next line only after the reply to the last one: a turn running now,
    // or a message waiting, is someone else's (an injected message). Its
    // reply comes first; take it, so that the next reply is this line's.
    while crate::runtime::agent_loop::is_busy() {
        if session.stop.load(Ordering::Acquire) {
            return;
        }
        take_unasked(hub, ticks_from_ms(200));
    }
    while take_unasked(hub, 0) {}
    let msg = messages_create(1);
    if msg.is_null()
        // SAFETY: `msg` is the live set just created; `text` ends with the NUL
        // pushed above and is only copied.
        || unsafe { messages_append(msg, TYPE_TEXT, text.as_ptr() as *const c_char) } != rt_eok()
    {
        // SAFETY: `msg` is NULL or the set created above, owned here and not
        // used again.
        unsafe { messages_destroy(msg) };
        console_print(b"(out of memory)\r\n");
        return;
    }
    // SAFETY: the session's hub outlives the session (the agent resets the
    // channel before freeing it), so its `input_mailbox` can be read; `msg`
    // is a live set owned here.
    if unsafe { message_hub_put(hub, msg, (*hub).input_mailbox) } != rt_eok() {
        // SAFETY: on failure the caller keeps ownership of `msg`; it is not
        // used again.
        unsafe { messages_destroy(msg) };
        console_print(b"(the agent is busy)\r\n");
        return;
    }
    console_print(b"agent> ");
    loop {
        if session.stop.load(Ordering::Acquire) {
            return;
        }
        // SAFETY: the hub is live (see above), so its `output_mailbox` can be
        // read and received from.
        let reply =
            unsafe { message_hub_get_timeout(hub, (*hub).output_mailbox, ticks_from_ms(200)) };
        if reply.is_null() {
            continue;
        }
        let unasked = crate::runtime::unasked::take_reply(reply);
        show_reply(reply);
        if unasked {
            // An injected or scheduled message's reply came first: shown,
            // and this line's is still to come.
            console_print(b"agent> ");
            continue;
        }
        return;
    }
}

/// The chat, until Ctrl-D or a stop.
fn chat(session: &Session) {
    set_stream_to_console(true);
    console_print(b"\r\nAgent chat: type a message and press Enter; Ctrl-D leaves.\r\n");
    console_print(PROMPT);
    let mut editor = LineEditor::new();
    while let Some(b) = next_byte(session, editor.line()) {
        match editor.feed(b, &mut |bytes| console_print(bytes)) {
            Event::Pending => {}
            Event::Submit(line) => {
                if !line.is_empty() {
                    ask(session, &line);
                }
                if session.stop.load(Ordering::Acquire) {
                    break;
                }
                console_print(PROMPT);
            }
            Event::Leave => {
                console_print(b"\r\nleaving the agent chat (the agent keeps running; cleanup_agent_entry stops it)\r\n");
                break;
            }
        }
    }
    set_stream_to_console(false);
    give_back(session);
}

unsafe extern "C" fn cli_thread(_parameter: *mut c_void) {
    ffi_fn!(failure = (), {
        // The session outlives this: a stop frees it only after taking
        // `exited`, released here as the last act inside the gate.
        CLI.enter(|session| {
            chat(session);
            // `list thread` cannot see this thread once it has ended: its
            // stack's high-water mark is logged here (sizing
            // PKG_AGENT_CLI_STACK_SIZE).
            // SAFETY: a plain glue call about the calling thread.
            let used = unsafe { agent_glue_stack_used() };
            if used > 0 {
                crate::log_d!(
                    "[mem] CLI thread stack high-water: ",
                    used,
                    " of ",
                    board().cli_stack_size(),
                    " bytes"
                );
            }
            session.exited.release();
            // The last act on the session: a reopen may start a chat again.
            session.chatting.store(false, Ordering::Release);
        });
    })
}
