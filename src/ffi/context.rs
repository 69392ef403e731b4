//! `context.h`: the conversation. The exports; the code is [`crate::runtime::context`].

use crate::ffi_fn;
use crate::runtime::context::Context_t;
use core::ptr;

/// C export of [`crate::runtime::context::agent_context_create`], with its contract.
#[no_mangle]
pub extern "C" fn agent_context_create() -> Context_t {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::runtime::context::agent_context_create()
    })
}

/// C export of [`crate::runtime::context::agent_context_destroy`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn agent_context_destroy(context: Context_t) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::context::agent_context_destroy(context) }
    })
}
