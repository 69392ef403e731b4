//! The web channel's exports; the code is [`crate::channels::web`].

use crate::channels::web::WebSession;
use crate::ffi_fn;
use crate::runtime::context::Context_t;
use crate::runtime::hub::MessageHub_t;
use core::ffi::c_int;

/// C export of [`crate::channels::web::webnet_agent_mode`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn webnet_agent_mode(hub: MessageHub_t, _ctx: Context_t) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::channels::web::webnet_agent_mode(hub, _ctx) }
    })
}

/// C export of [`crate::channels::web::agent_webnet_reset`], with its contract.
#[no_mangle]
pub extern "C" fn agent_webnet_reset() {
    ffi_fn!(failure = (), { crate::channels::web::agent_webnet_reset() })
}

/// C export of [`crate::channels::web::agent_web_cgi`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn agent_web_cgi(session: *mut WebSession, endpoint: c_int) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::channels::web::agent_web_cgi(session, endpoint) }
    })
}
