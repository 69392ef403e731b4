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
//! A message an extra channel sent (the Debug or WebNet channel next to
//! the chosen one) is marked with that channel's reply route instead
//! (`super::reply_route`): its reply goes to the route, never to the
//! output mailbox.
//!
//! Kept only in builds that can mix such replies with a channel's own: the
//! schedule, and the channels that count replies (Debug, WebNet). The old
//! package's set (the CLI alone) shows an injected message's reply while
//! it waits for a line, as before, and keeps its flash.

use crate::abi::messages::Messages_t;

/// Who sent a message the loop took, so who gets its reply.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Origin {
    /// A channel that reads the output mailbox (the chosen channel, or C
    /// code using the hub): the reply goes there, unmarked.
    Channel,
    /// No channel (injected, scheduled): the reply is marked and put on the
    /// output mailbox without waiting.
    Unasked,
    /// An extra channel: the reply goes to its route (`reply_route` slot).
    Routed(u8),
}

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
    pub fn take_input(_msg: Messages_t) -> super::Origin {
        super::Origin::Channel
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
    use super::{Messages_t, Origin};
    use crate::base::fallible::push;
    use crate::rtt::sleep_cell::SleepCell;
    use alloc::vec::Vec;

    /// A marked input: the message's address and its origin (0: unasked;
    /// otherwise the reply route's slot).
    type Input = (usize, u8);

    struct Marks {
        inputs: Vec<Input>,
        replies: Vec<usize>,
    }

    static MARKS: SleepCell<Marks> = SleepCell::new(Marks {
        inputs: Vec::new(),
        replies: Vec::new(),
    });

    fn with<R>(f: impl FnOnce(&mut Vec<Input>, &mut Vec<usize>) -> R) -> R {
        MARKS.with(|m| f(&mut m.inputs, &mut m.replies))
    }

    /// Remove the first entry of `list` that is `found`, and return it. An
    /// emptied list gives its block back.
    fn take<T: Copy>(list: &mut Vec<T>, found: impl Fn(&T) -> bool) -> Option<T> {
        let mut taken = None;
        list.retain(|m| {
            let this = taken.is_none() && found(m);
            if this {
                taken = Some(*m);
            }
            !this
        });
        if list.is_empty() {
            *list = Vec::new();
        }
        taken
    }

    /// `msg` is about to go on the input mailbox from outside any channel;
    /// false without memory (then it is not sent).
    pub fn mark_input(msg: Messages_t) -> bool {
        with(|inputs, _| push(inputs, (msg as usize, 0)).is_ok())
    }

    /// `msg` is about to go on the input mailbox from an extra channel whose
    /// replies go to route `slot` (non-zero); false without memory (then it
    /// is not sent).
    pub fn mark_routed(msg: Messages_t, slot: u8) -> bool {
        slot != 0 && with(|inputs, _| push(inputs, (msg as usize, slot)).is_ok())
    }

    /// `msg` was not sent after all.
    pub fn unmark_input(msg: Messages_t) {
        with(|inputs, _| take(inputs, |m| m.0 == msg as usize));
    }

    /// The loop took `msg`: who sent it.
    pub fn take_input(msg: Messages_t) -> Origin {
        match with(|inputs, _| take(inputs, |m| m.0 == msg as usize)) {
            None => Origin::Channel,
            Some((_, 0)) => Origin::Unasked,
            Some((_, slot)) => Origin::Routed(slot),
        }
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
        with(|_, replies| take(replies, |&r| r == reply as usize).is_some())
    }

    /// The agent is torn down: no mark is left.
    pub fn forget_all() {
        with(|inputs, replies| {
            *inputs = Vec::new();
            *replies = Vec::new();
        });
    }
}
