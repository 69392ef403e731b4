//! `MessageHub.h`, hub half: two RT-Thread mailboxes that carry `Messages_t`
//! pointers between channels and the agent loop.
//!
//! Ownership: a successful put hands the `Messages_t` to whoever gets it; a
//! NULL pointer may be sent as a wake-up sentinel and is never owned.

use crate::abi::messages::{messages_destroy, Messages_t};
use crate::ffi_fn;
use crate::rtt::atomic::{AtomicPtr, AtomicUsize, Ordering};
use crate::rtt::ipc::Mailbox;
use crate::rtt::name::ObjectName;
use crate::rtt::*;
use core::ffi::c_void;
use core::mem::size_of;
use core::ptr;

pub const MESSAGE_HUB_INPUT_MAILBOX_SIZE: rt_size_t = 10;
pub const MESSAGE_HUB_OUTPUT_MAILBOX_SIZE: rt_size_t = 10;
const INPUT_NAME: ObjectName = ObjectName::new(c"AgentInputMb", c"AgIn");
const OUTPUT_NAME: ObjectName = ObjectName::new(c"AgentOutMb", c"AgOut");

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

/// The input mailbox whose puts are counted: the running agent's (set
/// with [`watch_input`]); NULL while there is none.
static WATCHED_INPUT: AtomicPtr<rt_mailbox> = AtomicPtr::new(ptr::null_mut());

/// User messages put on the watched input mailbox through `put_message`
/// and not answered yet: counted before the send, so that no moment
/// between the loop's receive and its turn reads idle (`agent_is_busy`).
static PENDING: AtomicUsize = AtomicUsize::new(0);

/// Count the user messages put on `input` from now on (none pending).
pub fn watch_input(input: rt_mailbox_t) {
    PENDING.store(0, Ordering::SeqCst);
    WATCHED_INPUT.store(input, Ordering::SeqCst);
}

/// Stop counting (the mailbox is about to be freed).
pub fn unwatch_input() {
    WATCHED_INPUT.store(ptr::null_mut(), Ordering::SeqCst);
    PENDING.store(0, Ordering::SeqCst);
}

/// Messages put on the watched input mailbox and not yet answered.
pub fn pending() -> usize {
    PENDING.load(Ordering::SeqCst)
}

/// One counted message was answered (or its send failed); never below 0:
/// a message sent to the mailbox directly was not counted.
pub fn answered_one() {
    let _ = PENDING.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
}

/// The `put_message` method: `-RT_ERROR` for a NULL hub, message or mailbox,
/// otherwise `rt_mb_send`'s result (`-RT_EFULL` when the mailbox is full).
unsafe extern "C" fn hub_put_message(
    hub: MessageHub_t,
    message: Messages_t,
    mb: rt_mailbox_t,
) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), nonnull(hub, message, mb), {
        // Counted before the send: the loop may take it at once.
        let counted = WATCHED_INPUT.load(Ordering::SeqCst) == mb;
        if counted {
            PENDING.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: `mb` is non-NULL (checked above) and, per this method's
        // contract, one of the hub's live mailboxes; the value is only stored.
        let sent = unsafe { rt_mb_send(mb, message as rt_ubase_t) };
        if counted && sent != rt_eok() {
            answered_one();
        }
        sent
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
pub fn message_hub_create() -> MessageHub_t {
    // Each object is deleted by its owner's drop on the way out of a
    // failure; only a complete hub lets go of them.
    let Some(input) = Mailbox::create(INPUT_NAME, MESSAGE_HUB_INPUT_MAILBOX_SIZE) else {
        return ptr::null_mut();
    };
    let Some(output) = Mailbox::create(OUTPUT_NAME, MESSAGE_HUB_OUTPUT_MAILBOX_SIZE) else {
        return ptr::null_mut();
    };
    // SAFETY: a plain allocation, NULL-checked before use.
    let hub = unsafe { rt_malloc(size_of::<MessageHub>()) } as MessageHub_t;
    if hub.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: `hub` is a fresh block of the struct's size (rt_malloc
    // aligns to RT_ALIGN_SIZE, at least a pointer's alignment).
    unsafe {
        hub.write(MessageHub {
            input_mailbox: input.into_raw(),
            output_mailbox: output.into_raw(),
            put_message: Some(hub_put_message),
            get_message: Some(hub_get_message),
        })
    };
    hub
}

/// Destroy every `Messages_t` still queued in either mailbox, delete both
/// mailboxes and free the hub. NULL-safe. Threads still blocked on the hub
/// must have been stopped first.
pub unsafe fn message_hub_destroy(hub: MessageHub_t) {
    if hub.is_null() {
        return;
    }
    // SAFETY: `hub` came from message_hub_create and the caller gives it
    // up, mailboxes included; nobody uses them any more.
    let mailboxes = unsafe { [(*hub).input_mailbox, (*hub).output_mailbox] };
    for raw in mailboxes {
        // SAFETY: the hub's own mailbox (or NULL), handed over with it.
        if let Some(mb) = unsafe { Mailbox::from_raw(raw) } {
            while let Some(queued) = mb.try_recv() {
                // SAFETY: every value put in a hub mailbox is NULL or a
                // message set whose ownership passed to the mailbox.
                unsafe { messages_destroy(queued as Messages_t) };
            }
        } // deleted here
    }
    // SAFETY: the block message_hub_create allocated; not used again.
    unsafe { rt_free(hub as *mut c_void) };
}

/// Put `message` into `mb` through the hub's `put_message` method.
///
/// On `RT_EOK` ownership of `message` passes to the receiver; on any error
/// the caller still owns it. `-RT_ERROR` for a NULL hub.
pub unsafe fn message_hub_put(
    hub: MessageHub_t,
    message: Messages_t,
    mb: rt_mailbox_t,
) -> rt_err_t {
    if hub.is_null() {
        return -rt_error();
    }
    // SAFETY: a live hub (caller's contract); the method pointer was set by
    // message_hub_create or by C code that replaced it.
    unsafe {
        match (*hub).put_message {
            Some(put) => put(hub, message, mb),
            None => -rt_error(),
        }
    }
}

/// Take the next message from `mb`, waiting forever, through the hub's
/// `get_message` method. The caller owns the result; `RT_NULL` for a NULL hub
/// or when a NULL sentinel was received.
pub unsafe fn message_hub_get(hub: MessageHub_t, mb: rt_mailbox_t) -> Messages_t {
    if hub.is_null() {
        return ptr::null_mut();
    }
    // SAFETY: as in message_hub_put.
    unsafe {
        match (*hub).get_message {
            Some(get) => get(hub, mb),
            None => ptr::null_mut(),
        }
    }
}

/// Take the next message from `mb`, waiting at most `timeout` ticks
/// (`RT_WAITING_FOREVER` allowed). The caller owns the result; `RT_NULL` on
/// timeout, for a NULL hub or mailbox, or when a NULL sentinel was received.
pub unsafe fn message_hub_get_timeout(
    hub: MessageHub_t,
    mb: rt_mailbox_t,
    timeout: rt_int32_t,
) -> Messages_t {
    // SAFETY: `receive` checks both pointers; the mailbox is live while
    // the hub is (caller's contract).
    unsafe { receive(hub, mb, timeout) }
}
