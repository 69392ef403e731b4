//! Messages the loop answers that no channel sent: text injected by a
//! module (`agent_inject_text`) and scheduled prompts. A channel that
//! matches replies to what it sent (the Debug and WebNet exchange, the CLI
//! chat) must not take the reply to one of these for its own: the loop
//! marks such a reply, and the channel asks [`take_reply`] for each reply
//! it receives.
//!
//! The marks are message addresses, kept from the put of the input to the
//! loop's taking it, and from the reply's put to a channel's taking it;
//! the agent's teardown forgets what is left.
//!
//! Kept only in builds that can mix such replies with a channel's own: the
//! schedule, and the channels that count replies (Debug, WebNet). The old
//! package's set (the CLI alone) shows an injected message's reply while
//! it waits for a line, as before, and keeps its flash.

use crate::abi::messages::Messages_t;

#[cfg(any(
    feature = "schedule",
    feature = "channel-debug",
    feature = "channel-webnet"
))]
pub use marks::*;

#[cfg(not(any(
    feature = "schedule",
    feature = "channel-debug",
    feature = "channel-webnet"
)))]
mod none {
    use super::Messages_t;
    pub fn mark_input(_msg: Messages_t) -> bool {
        true
    }
    pub fn unmark_input(_msg: Messages_t) {}
    pub fn take_input(_msg: Messages_t) -> bool {
        false
    }
    pub fn mark_reply(_out: Messages_t) {}
    pub fn take_reply(_reply: Messages_t) -> bool {
        false
    }
    pub fn forget_all() {}
}
#[cfg(not(any(
    feature = "schedule",
    feature = "channel-debug",
    feature = "channel-webnet"
)))]
pub use none::*;

#[cfg(any(
    feature = "schedule",
    feature = "channel-debug",
    feature = "channel-webnet"
))]
mod marks {
    use super::Messages_t;
    use crate::base::fallible::push;
    use crate::rtt::sleep_lock::SleepLock;
    use alloc::vec::Vec;
    use core::cell::UnsafeCell;

    struct Marks {
        lock: SleepLock,
        inputs: UnsafeCell<Vec<usize>>,
        replies: UnsafeCell<Vec<usize>>,
    }

    // SAFETY: both lists are reached only with `lock` held.
    unsafe impl Sync for Marks {}

    static MARKS: Marks = Marks {
        lock: SleepLock::new(),
        inputs: UnsafeCell::new(Vec::new()),
        replies: UnsafeCell::new(Vec::new()),
    };

    fn with<R>(f: impl FnOnce(&mut Vec<usize>, &mut Vec<usize>) -> R) -> R {
        let _held = MARKS.lock.lock();
        // SAFETY: the lock is held.
        unsafe { f(&mut *MARKS.inputs.get(), &mut *MARKS.replies.get()) }
    }

    /// Remove `m` from `list`: whether it was there. An emptied list gives its
    /// block back.
    fn take(list: &mut Vec<usize>, m: usize) -> bool {
        let before = list.len();
        list.retain(|&x| x != m);
        if list.is_empty() {
            *list = Vec::new();
        }
        list.len() != before
    }

    /// `msg` is about to go on the input mailbox from outside any channel;
    /// false without memory (then it is not sent).
    pub fn mark_input(msg: Messages_t) -> bool {
        with(|inputs, _| push(inputs, msg as usize).is_ok())
    }

    /// `msg` was not sent after all.
    pub fn unmark_input(msg: Messages_t) {
        with(|inputs, _| take(inputs, msg as usize));
    }

    /// The loop took `msg`: whether no channel sent it.
    pub fn take_input(msg: Messages_t) -> bool {
        with(|inputs, _| take(inputs, msg as usize))
    }

    /// The loop's reply `out` answers such a message. Without memory for the
    /// mark the reply is left unmarked (a channel may take it for its own: the
    /// same as before marks existed; logged).
    pub fn mark_reply(out: Messages_t) {
        if !with(|_, replies| push(replies, out as usize).is_ok()) {
            crate::log_w!("no memory to mark a reply to an injected message");
        }
    }

    /// A channel took `reply`: whether it answers a message no channel sent.
    pub fn take_reply(reply: Messages_t) -> bool {
        with(|_, replies| take(replies, reply as usize))
    }

    /// The agent is torn down: no mark is left.
    pub fn forget_all() {
        with(|inputs, replies| {
            *inputs = Vec::new();
            *replies = Vec::new();
        });
    }
}
