//! The cli channel's exports; the code is [`crate::channels::cli`].

use crate::ffi_fn;
use crate::runtime::context::Context_t;
use crate::runtime::hub::MessageHub_t;
use core::ffi::c_int;

/// C export of [`crate::channels::cli::agent_cli_channel`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn agent_cli_channel(
    message_hub: MessageHub_t,
    _context: Context_t,
) -> c_int {
    ffi_fn!(failure = -1, {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::channels::cli::agent_cli_channel(message_hub, _context) }
    })
}

/// C export of [`crate::channels::cli::agent_cli_stop`], with its contract.
#[no_mangle]
pub extern "C" fn agent_cli_stop() {
    ffi_fn!(failure = (), { crate::channels::cli::agent_cli_stop() })
}
