//! Reply routes: where the loop sends the reply to a message that an extra
//! channel sent (the Debug or WebNet channel next to the chosen one).
//!
//! The chosen channel reads the hub's output mailbox, as in the C package.
//! A second reader of that mailbox would take the first one's replies, so
//! an extra channel claims a route instead: its own mailbox and the hooks
//! that stream its turns. It marks each message it sends with the route's
//! slot (`super::unasked::mark_routed`); the loop reads the mark when it
//! takes the message, streams that turn to the route's hooks and puts the
//! reply into the route's mailbox.
//!
//! The put happens under the table's lock and `release` clears the slot
//! under it too, so a channel that closes (and then deletes its mailbox)
//! never has a reply put into a mailbox that is gone: the loop finds the
//! slot empty and frees the reply.

use super::hub::{message_hub_put, MessageHub_t};
use super::turn::StreamHooks;
use crate::abi::messages::Messages_t;
use crate::rtt::sleep_cell::SleepCell;
use crate::rtt::*;

/// How many extra channels can be open at once (the Debug and the WebNet
/// channel).
const SLOTS: usize = 2;

#[derive(Clone, Copy)]
struct Route {
    mailbox: rt_mailbox_t,
    hooks: &'static StreamHooks,
}

// SAFETY: a route's mailbox is a kernel object, usable from any thread;
// its hooks are static.
unsafe impl Send for Route {}

static TABLE: SleepCell<[Option<Route>; SLOTS]> = SleepCell::new([None; SLOTS]);

fn with<R>(f: impl FnOnce(&mut [Option<Route>; SLOTS]) -> R) -> R {
    TABLE.with(f)
}

/// The route of `slot` (1-based), if claimed.
fn route(routes: &mut [Option<Route>; SLOTS], slot: u8) -> Option<&mut Option<Route>> {
    routes.get_mut(usize::from(slot).checked_sub(1)?)
}

/// Claim a route: replies for messages marked with the returned slot go to
/// `mailbox`, and their turns stream to `hooks`. `None` when every slot is
/// taken.
///
/// # Safety
/// `mailbox` is a live mailbox that stays alive until [`release`] of the
/// slot has returned.
pub unsafe fn claim(mailbox: rt_mailbox_t, hooks: &'static StreamHooks) -> Option<u8> {
    with(|routes| {
        let (at, free) = routes.iter_mut().enumerate().find(|(_, r)| r.is_none())?;
        *free = Some(Route { mailbox, hooks });
        u8::try_from(at + 1).ok()
    })
}

/// Give `slot` back: from now on no reply is put into its mailbox (one of
/// its messages still in the loop gets its reply freed).
pub fn release(slot: u8) {
    with(|routes| {
        if let Some(r) = route(routes, slot) {
            *r = None;
        }
    });
}

/// The hooks that stream a turn of `slot`'s, if the slot is claimed.
pub fn hooks(slot: u8) -> Option<&'static StreamHooks> {
    with(|routes| {
        route(routes, slot)
            .and_then(|r| r.as_ref())
            .map(|r| r.hooks)
    })
}

/// What became of a reply handed to [`put`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Put {
    /// In the route's mailbox: the channel owns it now.
    Delivered,
    /// The route's mailbox is full: the caller still owns the reply.
    Full,
    /// The route was released: the caller still owns the reply.
    Gone,
}

/// Put `reply` into `slot`'s mailbox through `hub`'s put method.
///
/// # Safety
/// `hub` is a live hub; `reply` is a live message set owned by the caller,
/// handed over on [`Put::Delivered`].
pub unsafe fn put(hub: MessageHub_t, slot: u8, reply: Messages_t) -> Put {
    with(|routes| {
        let Some(r) = route(routes, slot).and_then(|r| r.as_ref()) else {
            return Put::Gone;
        };
        // SAFETY: a claimed route's mailbox is live until its release, which
        // waits for this lock; `hub` and `reply` as this function's contract.
        if unsafe { message_hub_put(hub, reply, r.mailbox) } == rt_eok() {
            Put::Delivered
        } else {
            Put::Full
        }
    })
}
