//! The debug channel's exports; the code is [`crate::channels::debug`].

use crate::ffi_fn;
use crate::runtime::context::Context_t;
use crate::runtime::hub::MessageHub_t;
use core::ffi::{c_char, c_int};

/// C export of [`crate::channels::debug::agent_debug_channel`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn agent_debug_channel(
    message_hub: MessageHub_t,
    _context: Context_t,
) -> c_int {
    ffi_fn!(failure = -1, {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::channels::debug::agent_debug_channel(message_hub, _context) }
    })
}

/// C export of [`crate::channels::debug::agent_debug_reset`], with its contract.
#[no_mangle]
pub extern "C" fn agent_debug_reset() {
    ffi_fn!(failure = (), {
        crate::channels::debug::agent_debug_reset()
    })
}

/// C export of [`crate::channels::debug::agent_send_message`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn agent_send_message(argc: c_int, argv: *mut *mut c_char) -> c_int {
    ffi_fn!(failure = -1, {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::channels::debug::agent_send_message(argc, argv) }
    })
}
