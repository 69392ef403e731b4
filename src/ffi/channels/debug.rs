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
use crate::rtt::*;
use core::ffi::{c_char, c_int, CStr};
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

static HUB: AtomicPtr<super::super::hub::MessageHub> = AtomicPtr::new(ptr::null_mut());
static TURN: AtomicPtr<rt_mutex> = AtomicPtr::new(ptr::null_mut());
static OPEN: AtomicBool = AtomicBool::new(false);
/// Senders inside `send_message`. With OPEN it forms a Dekker pair (a sender
/// counts itself in, then checks OPEN; reset clears OPEN, then waits for the
/// count), so all four accesses are SeqCst.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);
/// Messages sent to the loop and replies taken off the output mailbox since
/// the channel started; only the sender holding TURN touches them.
static SENT: AtomicUsize = AtomicUsize::new(0);
static TAKEN: AtomicUsize = AtomicUsize::new(0);
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
/// without a hub or memory.
#[no_mangle]
pub unsafe extern "C" fn agent_debug_channel(
    message_hub: MessageHub_t,
    _context: Context_t,
) -> c_int {
    ffi_fn!(failure = -1, nonnull(message_hub), {
        // SAFETY: plain kernel call.
        let turn = unsafe { rt_mutex_create(c"AgentDbg".as_ptr(), RT_IPC_FLAG_FIFO) };
        if turn.is_null() {
            return -1;
        }
        let old = TURN.swap(turn, Ordering::AcqRel);
        if !old.is_null() {
            // SAFETY: a mutex left from a channel that was never reset.
            unsafe { rt_mutex_delete(old) };
        }
        SENT.store(0, Ordering::SeqCst);
        TAKEN.store(0, Ordering::SeqCst);
        HUB.store(message_hub, Ordering::Release);
        OPEN.store(true, Ordering::SeqCst);
        0
    })
}

/// Close the channel: wake waiting senders and wait until they are gone.
/// Idempotent.
#[no_mangle]
pub extern "C" fn agent_debug_reset() {
    ffi_fn!(failure = (), {
        if !OPEN.swap(false, Ordering::SeqCst) {
            return;
        }
        let hub = HUB.load(Ordering::Acquire);
        // SAFETY: the hub outlives the channel (cleanup_agent resets the
        // channel before freeing it).
        unsafe {
            while IN_FLIGHT.load(Ordering::SeqCst) > 0 {
                // A NULL sentinel wakes one waiting sender, which sees the
                // channel closed and leaves.
                if !hub.is_null() {
                    rt_mb_send((*hub).output_mailbox, 0);
                }
                rt_thread_mdelay(5);
            }
            let turn = TURN.swap(ptr::null_mut(), Ordering::AcqRel);
            if !turn.is_null() {
                rt_mutex_delete(turn);
            }
        }
        HUB.store(ptr::null_mut(), Ordering::Release);
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
            let word = args(i);
            if content.try_reserve(word.len() + 2).is_err() {
                say(b"agent_send_message: out of memory\n");
                return -1;
            }
            if i > 2 {
                content.push(b' ');
            }
            content.extend_from_slice(word);
        }
        content.push(0);
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
    IN_FLIGHT.fetch_add(1, Ordering::SeqCst);
    let result = if OPEN.load(Ordering::SeqCst) {
        take_turn(kind, content_nul, on_reply)
    } else {
        Err("the debug channel is not running (start the agent with main_loop_entry)")
    };
    IN_FLIGHT.fetch_sub(1, Ordering::SeqCst);
    result
}

fn take_turn(
    kind: MessageType,
    content_nul: &[u8],
    on_reply: &mut dyn FnMut(&[u8]),
) -> Result<(), &'static str> {
    let turn = TURN.load(Ordering::Acquire);
    let hub = HUB.load(Ordering::Acquire);
    if turn.is_null() || hub.is_null() {
        return Err("the debug channel is not running");
    }
    // SAFETY: the mutex and the hub stay alive while IN_FLIGHT > 0 (reset
    // waits for it to reach 0).
    unsafe {
        if rt_mutex_take(turn, RT_WAITING_FOREVER) != rt_eok() {
            return Err("the debug channel is closing");
        }
        let r = exchange(hub, kind, content_nul, on_reply);
        rt_mutex_release(turn);
        r
    }
}

/// Send one message to the loop through `hub` and hand its reply to
/// `on_reply`.
///
/// # Safety
/// `hub` is a live hub (non-NULL) that stays alive for the call;
/// `content_nul` ends with a NUL.
unsafe fn exchange(
    hub: MessageHub_t,
    kind: MessageType,
    content_nul: &[u8],
    on_reply: &mut dyn FnMut(&[u8]),
) -> Result<(), &'static str> {
    if !OPEN.load(Ordering::SeqCst) {
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
    let ticket = SENT.fetch_add(1, Ordering::SeqCst);
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
            if !OPEN.load(Ordering::SeqCst) {
                return Err("the agent stopped before answering");
            }
            continue;
        }
        if TAKEN.fetch_add(1, Ordering::SeqCst) < ticket {
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
