//! `agent_inject_text` (`utils.h` of the newest C package): text from an
//! event source (an MQTT message, a sensor, a timer) becomes a user
//! message of the running agent, answered in its turn like one typed on
//! the channel.
//!
//! The message goes on the loop's input mailbox, so one put while the loop
//! answers another waits its turn; nothing is merged or dropped on our
//! side. Without a running loop, or with the mailbox full, the text is
//! refused and nothing is kept: the caller buffers or drops it, as the
//! header says.

use super::agent_loop;
use crate::abi::messages::{messages_append, messages_create, messages_destroy, TYPE_TEXT};
use crate::rtt::{rt_eok, rt_err_t, rt_error};
use core::ffi::{c_char, CStr};

/// Put `text` (copied) on the running agent's input mailbox as a user
/// message. `RT_EOK` once it is queued (the loop then owns the copy);
/// otherwise `RT_ERROR`, positive, as upstream returns it: `text` NULL or
/// empty, no running loop, no memory, or the mailbox full.
///
/// # Safety
/// `text` is NULL or a NUL-terminated string, only read during the call.
pub unsafe fn inject_text(text: *const c_char) -> rt_err_t {
    let refused = rt_error();
    // SAFETY: NULL checked first; otherwise NUL-terminated (contract).
    if text.is_null() || unsafe { CStr::from_ptr(text) }.is_empty() {
        return refused;
    }
    if agent_loop::running_hub().is_null() {
        return refused;
    }
    let msg = messages_create(1);
    if msg.is_null() {
        crate::log_w!("no memory for an injected message; dropped");
        return refused;
    }
    // SAFETY: `msg` is the live set made above; `text` is NUL-terminated
    // and copied by the append.
    if unsafe { messages_append(msg, TYPE_TEXT, text) } != rt_eok() {
        // SAFETY: made above, owned here, not used again.
        unsafe { messages_destroy(msg) };
        crate::log_w!("no memory for an injected message; dropped");
        return refused;
    }
    // Its reply is nobody's on the channels (`super::unasked`).
    if !super::unasked::mark_input(msg) {
        // SAFETY: made above, owned here, not used again.
        unsafe { messages_destroy(msg) };
        crate::log_w!("no memory for an injected message; dropped");
        return refused;
    }
    // SAFETY: `msg` is a live set owned here; on `Ok` the loop owns it.
    match unsafe { agent_loop::put_user_message(msg) } {
        Ok(()) => rt_eok(),
        Err(msg) => {
            super::unasked::unmark_input(msg);
            // SAFETY: given back, so still owned here; not used again.
            unsafe { messages_destroy(msg) };
            crate::log_w!(
                "the agent is not running or its input mailbox is full: injected message dropped"
            );
            refused
        }
    }
}
