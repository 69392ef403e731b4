//! The Debug channel (`channels/AgentDebugChannel.h`): the MSH command
//! `agent_send_message <type> <content>` sends one message and waits for its
//! reply (30 s by default, `PKG_AGENT_REPLY_TIMEOUT_MS`).
//!
//! Several shells may send at once: the exchange (`exchange.rs`) gives each
//! its own reply or a timeout, never another's. `reset` wakes every waiting
//! sender and returns only when none is left, so the hub can then be freed.

use super::exchange::{reply_timeout_ms, Exchange, SendError, Waiting};
use crate::abi::messages::*;
use crate::ffi_fn;
use crate::rtt::name::ObjectName;
use crate::runtime::agent_loop::{AgentChannelOps, LOG_HOOKS};
use crate::runtime::context::Context_t;
use crate::runtime::hub::MessageHub_t;

use core::ffi::{c_char, c_int, CStr};

static CHANNEL: Exchange = Exchange::closed();

pub use super::exchange::set_reply_timeout_ms;

#[no_mangle]
pub static mut agent_debug_ops: AgentChannelOps = AgentChannelOps {
    init: Some(agent_debug_channel_init),
    reset: Some(agent_debug_reset_c),
};

unsafe extern "C" fn agent_debug_channel_init(hub: MessageHub_t, ctx: Context_t) -> c_int {
    ffi_fn!(failure = -1, {
        crate::runtime::agent_loop::channel_frees_replies_with_messages_destroy();
        // SAFETY: the channel framework passes NULL or its live hub and
        // context, the contract `agent_debug_channel` documents.
        unsafe { agent_debug_channel(hub, ctx) }
    })
}

/// The Debug channel next to the chosen one (`PKG_AGENT_ALSO_DEBUG_CHANNEL`):
/// `agent_send_message` gets its replies through a route of its own.
#[no_mangle]
pub static agent_debug_extra_ops: AgentChannelOps = AgentChannelOps {
    init: Some(agent_debug_extra_init),
    reset: Some(agent_debug_reset_c),
};

unsafe extern "C" fn agent_debug_extra_init(hub: MessageHub_t, _ctx: Context_t) -> c_int {
    ffi_fn!(failure = -1, {
        let names = (
            ObjectName::new(c"AgentDbg", c"AgDbg"),
            ObjectName::new(c"AgentDbgR", c"AgDbR"),
        );
        // SAFETY: the channel framework's NULL or live hub, which outlives
        // the channel (the agent resets its channels before freeing it).
        unsafe { CHANNEL.open_extra(hub, names, &LOG_HOOKS, "Debug channel") }
    })
}

unsafe extern "C" fn agent_debug_reset_c() {
    ffi_fn!(failure = (), { agent_debug_reset() })
}

/// Start the channel on `hub` (the context is not needed). Returns 0, or -1
/// without a hub or memory. A channel still open is closed first.
pub unsafe fn agent_debug_channel(message_hub: MessageHub_t, _context: Context_t) -> c_int {
    if message_hub.is_null() {
        return -1;
    }
    // SAFETY: the channel framework's live hub, which outlives the
    // channel (the agent resets it before freeing the hub).
    match unsafe { CHANNEL.open(message_hub, ObjectName::new(c"AgentDbg", c"AgDbg")) } {
        Ok(()) => 0,
        Err(()) => -1,
    }
}

/// Close the channel: wake waiting senders and wait until they are gone.
/// Idempotent.
pub fn agent_debug_reset() {
    CHANNEL.close();
}

fn say(text: &[u8]) {
    crate::rtt::log::console_print(text);
}

/// `agent_send_message <type> <content...>`: type 0 text, 1 audio, 2 image,
/// 3 video; the words of the content are joined with spaces. Prints the reply.
/// Returns 0 when a reply was printed, -1 otherwise.
pub unsafe fn agent_send_message(argc: c_int, argv: *mut *mut c_char) -> c_int {
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
        let grown = crate::base::fallible::extend(&mut content, separator)
            .and_then(|()| crate::base::fallible::extend(&mut content, args(i)));
        if grown.is_err() {
            say(b"agent_send_message: out of memory\n");
            return -1;
        }
    }
    if crate::base::fallible::push(&mut content, 0).is_err() {
        say(b"agent_send_message: out of memory\n");
        return -1;
    }
    send_and_wait(kind, &content)
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
    struct Printer<'a>(&'a mut dyn FnMut(&[u8]));
    impl Waiting for Printer<'_> {
        fn reply(&mut self, text: &[u8]) {
            (self.0)(text)
        }
    }
    let ms = reply_timeout_ms();
    CHANNEL
        .send(kind, content_nul, ms, ms, &mut Printer(on_reply))
        .map_err(|e| match e {
            SendError::NotRunning => {
                "the debug channel is not running (start the agent with main_loop_entry)"
            }
            SendError::Stopped => "the agent stopped before answering",
            SendError::NoMemory => "out of memory",
            SendError::Full => "the agent is busy (its input mailbox is full)",
            SendError::Timeout => "no reply in time",
            SendError::Busy => "the agent is busy",
        })
}
