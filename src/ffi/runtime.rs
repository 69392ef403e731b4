//! `AgentRuntime.h`: what other modules (an MQTT client, a sensor driver)
//! ask about the running agent before they put a message on its hub.
//!
//! All three read the agent's one state (`agent_loop`): the lifecycle and
//! the busy flag are atomics, and the hub is read through the agent's gate,
//! so a call racing `cleanup_agent` returns NULL or the hub, never freed
//! memory. The hub itself stays valid until the agent is cleaned up: a
//! module that keeps it must stop using it before it calls (or lets anyone
//! call) `cleanup_agent_entry`, as with the C package.

use crate::ffi_fn;
use crate::rtt::{rt_bool_t, RT_FALSE, RT_TRUE};
use crate::runtime::agent_loop;
use crate::runtime::hub::MessageHub_t;
use core::ptr;

fn to_bool(b: bool) -> rt_bool_t {
    if b {
        RT_TRUE
    } else {
        RT_FALSE
    }
}

/// The running agent's hub: put user messages on its `input_mailbox`
/// (`message_hub_put`); the agent loop answers each on the output mailbox,
/// which the agent's channel reads. `RT_NULL` while no agent loop is running
/// (not started, starting, stopping, or made by `init_agent` alone, which
/// has no loop to read it).
///
/// Ownership: the hub belongs to the agent; do not destroy it. Valid until
/// the agent is cleaned up.
#[no_mangle]
pub extern "C" fn agent_get_message_hub() -> MessageHub_t {
    ffi_fn!(failure = ptr::null_mut(), { agent_loop::running_hub() })
}

/// `RT_TRUE` while the agent loop runs (from the end of `main_loop_entry` to
/// the start of `cleanup_agent_entry`), else `RT_FALSE`.
#[no_mangle]
pub extern "C" fn agent_is_running() -> rt_bool_t {
    ffi_fn!(failure = RT_FALSE, {
        to_bool(!agent_loop::running_hub().is_null())
    })
}

/// `RT_TRUE` while the loop is in a turn (from taking a user message to
/// sending its reply, the request to the model and every tool it calls
/// included) and while a message waits in its input mailbox; `RT_FALSE`
/// while it waits with nothing queued, or when no loop runs. Counting the
/// queued message closes the window upstream's flag leaves between a put
/// and the loop taking it, so a module that puts only on `RT_FALSE` never
/// queues a second message behind the first.
#[no_mangle]
pub extern "C" fn agent_is_busy() -> rt_bool_t {
    ffi_fn!(failure = RT_FALSE, { to_bool(agent_loop::is_busy()) })
}

/// `agent_inject_text` (`utils.h`): see [`crate::runtime::inject`] for the
/// contract. `text` is copied; the caller keeps it.
#[no_mangle]
pub unsafe extern "C" fn agent_inject_text(text: *const core::ffi::c_char) -> crate::rtt::rt_err_t {
    ffi_fn!(failure = crate::rtt::rt_error(), {
        // SAFETY: the caller's promise (NULL or NUL-terminated, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::inject::inject_text(text) }
    })
}
