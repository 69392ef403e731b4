//! The Debug channel (`channels/AgentDebugChannel.h`): the MSH command
//! `agent_send_message <type> <content>` sends one message and waits for its
//! reply (30 s by default, `PKG_AGENT_REPLY_TIMEOUT_MS`).
//!
//! Several shells may send at once: senders take turns, and each gets its
//! own reply or a timeout, never another's. The loop answers every message
//! exactly once and in order, so replies are matched by number: the channel
//! counts the messages it sent and the replies it took, and a reply whose
//! number is below the sender's ticket belonged to a sender that gave up; it
//! is discarded, and the sender waits on for its own until its deadline.
//! `reset` wakes every waiting sender and returns only when none is left, so
//! the hub can then be freed.

use super::super::agent_loop::AgentChannelOps;
use super::super::context::Context_t;
use super::super::hub::{message_hub_get_timeout, message_hub_put, MessageHub_t};
use super::super::messages::*;
use crate::ffi_fn;
use crate::rtt::gate::Gate;
use crate::rtt::ipc::Locked;
use crate::rtt::*;
use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, CStr};
use core::ptr;
use core::sync::atomic::{AtomicUsize, Ordering};

/// The channel while it is open: the hub it was started on and the senders'
/// turn, a kernel mutex whose holder sends and waits for its reply.
struct Open {
    hub: MessageHub_t,
    turn: Locked<Tickets>,
}

/// Messages sent to the loop and replies taken off the output mailbox since
/// the channel opened: a reply's number is its message's.
struct Tickets {
    sent: usize,
    taken: usize,
}

/// The channel: `open` is written by init (gate closed) and by reset (gate
/// closed and empty) only, and read by senders through the gate.
struct Channel {
    gate: Gate,
    open: UnsafeCell<Option<Open>>,
}

// SAFETY: `open` is reached only under the rules on `Channel`; the gate is
// atomic.
unsafe impl Sync for Channel {}
// SAFETY: the hub handle is a live hub shared by design (its mailboxes are
// kernel objects); moving it between threads is what the hub is for.
unsafe impl Send for Open {}

static CHANNEL: Channel = Channel {
    gate: Gate::closed(),
    open: UnsafeCell::new(None),
};

/// A reply timeout chosen at run time (tests, the simulator); 0: the board's
/// PKG_AGENT_REPLY_TIMEOUT_MS.
static REPLY_TIMEOUT_MS: AtomicUsize = AtomicUsize::new(0);

/// Wait `ms` for each reply instead of PKG_AGENT_REPLY_TIMEOUT_MS (`None`:
/// the board's value again).
pub fn set_reply_timeout_ms(ms: Option<u32>) {
    REPLY_TIMEOUT_MS.store(ms.map_or(0, |v| v.max(1) as usize), Ordering::SeqCst);
}

#[no_mangle]
pub static mut agent_debug_ops: AgentChannelOps = AgentChannelOps {
    init: Some(agent_debug_channel_init),
    reset: Some(agent_debug_reset_c),
};

unsafe extern "C" fn agent_debug_channel_init(hub: MessageHub_t, ctx: Context_t) -> c_int {
    ffi_fn!(failure = -1, {
        // SAFETY: the channel framework passes NULL or its live hub and
        // context, the contract `agent_debug_channel` documents.
        unsafe { agent_debug_channel(hub, ctx) }
    })
}
unsafe extern "C" fn agent_debug_reset_c() {
    ffi_fn!(failure = (), { agent_debug_reset() })
}

/// Start the channel on `hub` (the context is not needed). Returns 0, or -1
/// without a hub or memory. A channel still open is closed first.
#[no_mangle]
pub unsafe extern "C" fn agent_debug_channel(
    message_hub: MessageHub_t,
    _context: Context_t,
) -> c_int {
    ffi_fn!(failure = -1, nonnull(message_hub), {
        agent_debug_reset();
        let tickets = Tickets { sent: 0, taken: 0 };
        let Ok(turn) = Locked::create(c"AgentDbg", tickets) else {
            return -1;
        };
        // SAFETY: the gate is closed (reset above) and empty, so no sender
        // reaches `open` (see `Channel`).
        unsafe {
            *CHANNEL.open.get() = Some(Open {
                hub: message_hub,
                turn,
            })
        };
        CHANNEL.gate.open();
        0
    })
}

/// Close the channel: wake waiting senders and wait until they are gone.
/// Idempotent.
#[no_mangle]
pub extern "C" fn agent_debug_reset() {
    ffi_fn!(failure = (), {
        if !CHANNEL.gate.close() {
            return;
        }
        // SAFETY: written only by init, which cannot run now (the agent
        // calls init and reset from one thread); the hub outlives the channel
        // (the agent resets the channel before freeing it).
        let hub = unsafe { (*CHANNEL.open.get()).as_ref() }.map_or(ptr::null_mut(), |o| o.hub);
        CHANNEL.gate.wait_empty(|| {
            // A NULL sentinel wakes one waiting sender, which sees the
            // channel closed and leaves.
            if !hub.is_null() {
                // SAFETY: the live hub (see above); a NULL value is never
                // owned by anyone.
                unsafe { rt_mb_send((*hub).output_mailbox, 0) };
            }
        });
        // SAFETY: the gate is closed and empty: nobody else reaches `open`.
        unsafe { *CHANNEL.open.get() = None };
    })
}

fn say(text: &[u8]) {
    crate::rtt::log::console_print(text);
}

/// `agent_send_message <type> <content...>`: type 0 text, 1 audio, 2 image,
/// 3 video; the words of the content are joined with spaces. Prints the reply.
/// Returns 0 when a reply was printed, -1 otherwise.
#[no_mangle]
pub unsafe extern "C" fn agent_send_message(argc: c_int, argv: *mut *mut c_char) -> c_int {
    ffi_fn!(failure = -1, {
        // SAFETY: finsh passes argc valid, NUL-terminated argv strings.
        let args = |i: c_int| unsafe { CStr::from_ptr(*argv.add(i as usize)) }.to_bytes();
        if argc < 3 || argv.is_null() {
            say(b"usage: agent_send_message <type: 0 text, 1 audio, 2 image, 3 video> <content>\n");
            return -1;
        }
        let kind = match args(1) {
            b"0" => TYPE_TEXT,
            b"1" => TYPE_AUDIO,
            b"2" => TYPE_IMAGE,
            b"3" => TYPE_VIDEO,
            _ => {
                say(b"agent_send_message: the type is 0 (text), 1 (audio), 2 (image) or 3 (video)\n");
                return -1;
            }
        };
        let mut content: alloc::vec::Vec<u8> = alloc::vec::Vec::new();
        for i in 2..argc {
            let separator: &[u8] = if i > 2 { b" " } else { b"" };
            let grown = crate::fallible::extend(&mut content, separator)
                .and_then(|()| crate::fallible::extend(&mut content, args(i)));
            if grown.is_err() {
                say(b"agent_send_message: out of memory\n");
                return -1;
            }
        }
        if crate::fallible::push(&mut content, 0).is_err() {
            say(b"agent_send_message: out of memory\n");
            return -1;
        }
        send_and_wait(kind, &content)
    })
}

fn send_and_wait(kind: MessageType, content_nul: &[u8]) -> c_int {
    let mut printed = false;
    let result = send_message(kind, content_nul, &mut |text| {
        say(b"agent: ");
        say(text);
        say(b"\n");
        printed = true;
    });
    match result {
        Ok(()) if printed => 0,
        Ok(()) => -1,
        Err(why) => {
            say(b"agent: ");
            say(why.as_bytes());
            say(b"\n");
            -1
        }
    }
}

/// Send `content_nul` (NUL-terminated) through the debug channel and hand the
/// reply's text to `on_reply` (what `agent_send_message` prints).
pub fn send_message(
    kind: MessageType,
    content_nul: &[u8],
    on_reply: &mut dyn FnMut(&[u8]),
) -> Result<(), &'static str> {
    if content_nul.last() != Some(&0) {
        return Err("the content must end with a NUL");
    }
    let Some(_pass) = CHANNEL.gate.enter() else {
        return Err("the debug channel is not running (start the agent with main_loop_entry)");
    };
    // SAFETY: inside the gate `open` is complete and not written (see
    // `Channel`), and the pass keeps a reset waiting until this returns.
    let Some(open) = (unsafe { (*CHANNEL.open.get()).as_ref() }) else {
        return Err("the debug channel is not running");
    };
    // The turn: one sender at a time sends and waits for its reply.
    let Some(mut tickets) = open.turn.lock() else {
        return Err("the debug channel is closing");
    };
    // SAFETY: the hub outlives the open channel; the pass keeps it open.
    unsafe { exchange(open.hub, &mut tickets, kind, content_nul, on_reply) }
}

/// Send one message to the loop through `hub` and hand its reply to
/// `on_reply`.
///
/// # Safety
/// `hub` is a live hub (non-NULL) that stays alive for the call;
/// `content_nul` ends with a NUL.
unsafe fn exchange(
    hub: MessageHub_t,
    tickets: &mut Tickets,
    kind: MessageType,
    content_nul: &[u8],
    on_reply: &mut dyn FnMut(&[u8]),
) -> Result<(), &'static str> {
    if !CHANNEL.gate.is_open() {
        return Err("the debug channel is closing");
    }
    let msg = messages_create(1);
    if msg.is_null()
        // SAFETY: `msg` is the live set just created; `content_nul` ends with
        // a NUL (this function's contract) and is only copied.
        || unsafe { messages_append(msg, kind, content_nul.as_ptr() as *const c_char) } != rt_eok()
    {
        // SAFETY: `msg` is NULL or the set created above, owned here and not
        // used again.
        unsafe { messages_destroy(msg) };
        return Err("out of memory");
    }
    // SAFETY: `hub` is live (this function's contract), so its
    // `input_mailbox` can be read; `msg` is a live set owned here.
    if unsafe { message_hub_put(hub, msg, (*hub).input_mailbox) } != rt_eok() {
        // SAFETY: on failure the caller keeps ownership of `msg`; it is not
        // used again.
        unsafe { messages_destroy(msg) };
        return Err("the agent is busy (its input mailbox is full)");
    }
    // This message's number; its reply has the same one.
    let ticket = tickets.sent;
    tickets.sent += 1;
    let ms = match REPLY_TIMEOUT_MS.load(Ordering::SeqCst) {
        0 => board().reply_timeout_ms.clamp(1, i32::MAX as isize) as i32,
        chosen => chosen.min(i32::MAX as usize) as i32,
    };
    // SAFETY: a pure kernel conversion, callable from any thread.
    let timeout = unsafe { rt_tick_from_millisecond(ms) };
    // SAFETY: reads the kernel tick counter, callable from any thread.
    let asked_at = unsafe { rt_tick_get() };
    let reply = loop {
        // SAFETY: reads the kernel tick counter, callable from any thread.
        let waited = unsafe { rt_tick_get() }.wrapping_sub(asked_at);
        if waited >= timeout {
            return Err("no reply in time");
        }
        let left = (timeout - waited).min(i32::MAX as rt_tick_t) as i32;
        // SAFETY: `hub` is live (this function's contract), so its
        // `output_mailbox` can be read and received from.
        let reply = unsafe { message_hub_get_timeout(hub, (*hub).output_mailbox, left) };
        if reply.is_null() {
            // A timeout, or reset's wake-up sentinel.
            if !CHANNEL.gate.is_open() {
                return Err("the agent stopped before answering");
            }
            continue;
        }
        let number = tickets.taken;
        tickets.taken += 1;
        if number < ticket {
            // The answer to a sender that gave up waiting.
            // SAFETY: `reply` is non-NULL and owned here (a received
            // message); it is not used again.
            unsafe { messages_destroy(reply) };
            continue;
        }
        break reply;
    };
    // SAFETY: `reply` is a live message set owned here; the content is
    // borrowed from it.
    let text = unsafe { messages_get_content_idx(reply, 0) };
    on_reply(if text.is_null() {
        b""
    } else {
        // SAFETY: `text` is non-NULL and NUL-terminated (message content),
        // owned by `reply`, which outlives this call.
        unsafe { CStr::from_ptr(text) }.to_bytes()
    });
    // SAFETY: `reply` is owned here and not used after this.
    unsafe { messages_destroy(reply) };
    Ok(())
}
