//! `MessageHub.h`, hub half: two RT-Thread mailboxes that carry `Messages_t`
//! pointers between channels and the agent loop.
//!
//! Ownership: a successful put hands the `Messages_t` to whoever gets it; a
//! NULL pointer may be sent as a wake-up sentinel and is never owned.

use super::messages::{messages_destroy, Messages_t};
use crate::ffi_fn;
use crate::rtt::*;
use core::ffi::{c_char, c_void};
use core::mem::size_of;
use core::ptr;

pub const MESSAGE_HUB_INPUT_MAILBOX_SIZE: rt_size_t = 10;
pub const MESSAGE_HUB_OUTPUT_MAILBOX_SIZE: rt_size_t = 10;
const INPUT_NAME: &[u8] = b"AgentInputMb\0";
const OUTPUT_NAME: &[u8] = b"AgentOutMb\0";

pub type PutMessageFn =
    unsafe extern "C" fn(self_: MessageHub_t, message: Messages_t, mb: rt_mailbox_t) -> rt_err_t;
pub type GetMessageFn = unsafe extern "C" fn(self_: MessageHub_t, mb: rt_mailbox_t) -> Messages_t;

#[repr(C)]
pub struct MessageHub {
    pub input_mailbox: rt_mailbox_t,
    pub output_mailbox: rt_mailbox_t,
    pub put_message: Option<PutMessageFn>,
    pub get_message: Option<GetMessageFn>,
}
pub type MessageHub_t = *mut MessageHub;

/// The `put_message` method: `-RT_ERROR` for a NULL hub, message or mailbox,
/// otherwise `rt_mb_send`'s result (`-RT_EFULL` when the mailbox is full).
unsafe extern "C" fn hub_put_message(
    hub: MessageHub_t,
    message: Messages_t,
    mb: rt_mailbox_t,
) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), nonnull(hub, message, mb), {
        // SAFETY: `mb` is non-NULL (checked above) and, per this method's
        // contract, one of the hub's live mailboxes; the value is only stored.
        unsafe { rt_mb_send(mb, message as rt_ubase_t) }
    })
}

/// The `get_message` method: blocks until something arrives; NULL for a NULL
/// hub or mailbox, a receive error or a NULL sentinel.
unsafe extern "C" fn hub_get_message(hub: MessageHub_t, mb: rt_mailbox_t) -> Messages_t {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: `hub` and `mb` are NULL or, per this method's contract, the
        // live hub and one of its mailboxes, which is what `receive` needs.
        unsafe { receive(hub, mb, RT_WAITING_FOREVER) }
    })
}

/// Receive one message from `mb`, waiting up to `timeout` ticks.
///
/// # Safety
/// `hub` and `mb` are each NULL or valid (a live hub and a live mailbox).
unsafe fn receive(hub: MessageHub_t, mb: rt_mailbox_t, timeout: rt_int32_t) -> Messages_t {
    if hub.is_null() || mb.is_null() {
        return ptr::null_mut();
    }
    let mut value: rt_ubase_t = 0;
    // SAFETY: `mb` is non-NULL (checked above) and live per this function's
    // contract; `value` is a local the kernel writes one word into.
    if unsafe { rt_mb_recv(mb, &mut value, timeout) } != rt_eok() {
        return ptr::null_mut();
    }
    value as Messages_t
}

/// Create a hub with its input (`"AgentInputMb"`) and output (`"AgentOutMb"`)
/// mailboxes, 10 slots each, FIFO.
///
/// Returns a hub owned by the caller (free it with `message_hub_destroy`), or
/// `RT_NULL` when the heap or the kernel refuses; nothing leaks on failure.
#[no_mangle]
pub extern "C" fn message_hub_create() -> MessageHub_t {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: each object is NULL-checked and released on the failure path;
        // the hub is fully initialised before it is returned.
        unsafe {
            let hub = rt_malloc(size_of::<MessageHub>()) as MessageHub_t;
            if hub.is_null() {
                return ptr::null_mut();
            }
            let input = rt_mb_create(
                INPUT_NAME.as_ptr() as *const c_char,
                MESSAGE_HUB_INPUT_MAILBOX_SIZE,
                RT_IPC_FLAG_FIFO,
            );
            if input.is_null() {
                rt_free(hub as *mut c_void);
                return ptr::null_mut();
            }
            let output = rt_mb_create(
                OUTPUT_NAME.as_ptr() as *const c_char,
                MESSAGE_HUB_OUTPUT_MAILBOX_SIZE,
                RT_IPC_FLAG_FIFO,
            );
            if output.is_null() {
                rt_mb_delete(input);
                rt_free(hub as *mut c_void);
                return ptr::null_mut();
            }
            hub.write(MessageHub {
                input_mailbox: input,
                output_mailbox: output,
                put_message: Some(hub_put_message),
                get_message: Some(hub_get_message),
            });
            hub
        }
    })
}

/// Destroy every `Messages_t` still queued in either mailbox, delete both
/// mailboxes and free the hub. NULL-safe. Threads still blocked on the hub
/// must have been stopped first.
#[no_mangle]
pub unsafe extern "C" fn message_hub_destroy(hub: MessageHub_t) {
    ffi_fn!(failure = (), nonnull(hub), {
        // SAFETY: `hub` came from message_hub_create and the caller gives it up.
        unsafe {
            for mb in [(*hub).input_mailbox, (*hub).output_mailbox] {
                if mb.is_null() {
                    continue;
                }
                let mut value: rt_ubase_t = 0;
                while rt_mb_recv(mb, &mut value, RT_WAITING_NO) == rt_eok() {
                    messages_destroy(value as Messages_t);
                }
                rt_mb_delete(mb);
            }
            rt_free(hub as *mut c_void);
        }
    })
}

/// Put `message` into `mb` through the hub's `put_message` method.
///
/// On `RT_EOK` ownership of `message` passes to the receiver; on any error
/// the caller still owns it. `-RT_ERROR` for a NULL hub.
#[no_mangle]
pub unsafe extern "C" fn message_hub_put(
    hub: MessageHub_t,
    message: Messages_t,
    mb: rt_mailbox_t,
) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), nonnull(hub), {
        // SAFETY: a live hub (caller's contract); the method pointer was set by
        // message_hub_create or by C code that replaced it.
        unsafe {
            match (*hub).put_message {
                Some(put) => put(hub, message, mb),
                None => -rt_error(),
            }
        }
    })
}

/// Take the next message from `mb`, waiting forever, through the hub's
/// `get_message` method. The caller owns the result; `RT_NULL` for a NULL hub
/// or when a NULL sentinel was received.
#[no_mangle]
pub unsafe extern "C" fn message_hub_get(hub: MessageHub_t, mb: rt_mailbox_t) -> Messages_t {
    ffi_fn!(failure = ptr::null_mut(), nonnull(hub), {
        // SAFETY: as in message_hub_put.
        unsafe {
            match (*hub).get_message {
                Some(get) => get(hub, mb),
                None => ptr::null_mut(),
            }
        }
    })
}

/// Take the next message from `mb`, waiting at most `timeout` ticks
/// (`RT_WAITING_FOREVER` allowed). The caller owns the result; `RT_NULL` on
/// timeout, for a NULL hub or mailbox, or when a NULL sentinel was received.
#[no_mangle]
pub unsafe extern "C" fn message_hub_get_timeout(
    hub: MessageHub_t,
    mb: rt_mailbox_t,
    timeout: rt_int32_t,
) -> Messages_t {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: `receive` checks both pointers; the mailbox is live while
        // the hub is (caller's contract).
        unsafe { receive(hub, mb, timeout) }
    })
}
