//! `MessageHub.h`, hub half: the two mailboxes. The exports; the code is [`crate::runtime::hub`].

use crate::abi::messages::Messages_t;
use crate::ffi_fn;
use crate::rtt::*;
use crate::runtime::hub::MessageHub_t;
use core::ptr;

/// C export of [`crate::runtime::hub::message_hub_create`], with its contract.
#[no_mangle]
pub extern "C" fn message_hub_create() -> MessageHub_t {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::runtime::hub::message_hub_create()
    })
}

/// C export of [`crate::runtime::hub::message_hub_destroy`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn message_hub_destroy(hub: MessageHub_t) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::hub::message_hub_destroy(hub) }
    })
}

/// C export of [`crate::runtime::hub::message_hub_put`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn message_hub_put(
    hub: MessageHub_t,
    message: Messages_t,
    mb: rt_mailbox_t,
) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::hub::message_hub_put(hub, message, mb) }
    })
}

/// C export of [`crate::runtime::hub::message_hub_get`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn message_hub_get(hub: MessageHub_t, mb: rt_mailbox_t) -> Messages_t {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::hub::message_hub_get(hub, mb) }
    })
}

/// C export of [`crate::runtime::hub::message_hub_get_timeout`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn message_hub_get_timeout(
    hub: MessageHub_t,
    mb: rt_mailbox_t,
    timeout: rt_int32_t,
) -> Messages_t {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::hub::message_hub_get_timeout(hub, mb, timeout) }
    })
}
