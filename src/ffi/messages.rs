//! `messages.h`: the message arrays, for C (the type and its code are
//! [`crate::abi::messages`]).

use crate::abi::messages::{MessageType, Messages_t, TYPE_NULL};
use crate::ffi_fn;
use crate::rtt::{rt_err_t, rt_error};
use core::ffi::{c_char, c_int};
use core::ptr;

/// C export of [`crate::abi::messages::messages_create`], with its contract.
#[no_mangle]
pub extern "C" fn messages_create(max_size: c_int) -> Messages_t {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::abi::messages::messages_create(max_size)
    })
}

/// C export of [`crate::abi::messages::messages_append`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn messages_append(
    messages: Messages_t,
    message_type: MessageType,
    content: *const c_char,
) -> rt_err_t {
    ffi_fn!(failure = rt_error(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::abi::messages::messages_append(messages, message_type, content) }
    })
}

/// C export of [`crate::abi::messages::messages_destroy`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn messages_destroy(messages: Messages_t) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::abi::messages::messages_destroy(messages) }
    })
}

/// C export of [`crate::abi::messages::messages_get_type_idx`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn messages_get_type_idx(messages: Messages_t, idx: c_int) -> MessageType {
    ffi_fn!(failure = TYPE_NULL, {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::abi::messages::messages_get_type_idx(messages, idx) }
    })
}

/// C export of [`crate::abi::messages::messages_get_content_idx`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn messages_get_content_idx(messages: Messages_t, idx: c_int) -> *mut c_char {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::abi::messages::messages_get_content_idx(messages, idx) }
    })
}

/// C export of [`crate::abi::messages::get_agent_content_type`], with its contract.
#[no_mangle]
pub extern "C" fn get_agent_content_type(message_type: MessageType) -> *mut c_char {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::abi::messages::get_agent_content_type(message_type)
    })
}
