//! Send one message to the loop and wait for its own reply: what the Debug
//! and WebNet channels share.
//!
//! Several senders may ask at once: they take turns, and each gets its own
//! reply or a timeout, never another's. The loop answers every message
//! exactly once and in order, so replies are matched by number: the
//! exchange counts the messages it sent and the replies it took, and a
//! reply whose number is below the sender's ticket belonged to a sender that
//! gave up; it is discarded, and the sender waits on for its own until its
//! deadline. `close` wakes every waiting sender and returns only when none is
//! left, so the hub can then be freed.

use crate::abi::messages::*;
use crate::rtt::gate::Gate;
use crate::rtt::ipc::{Locked, Mailbox};
use crate::rtt::name::ObjectName;
use crate::rtt::*;
use crate::runtime::agent_loop::StreamHooks;
use crate::runtime::hub::{message_hub_get_timeout, message_hub_put, MessageHub_t};
use crate::runtime::reply_route;
use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, CStr};
use core::ptr;

/// Wait `ms` for each reply instead of PKG_AGENT_REPLY_TIMEOUT_MS (`None`:
/// the board's value again), in the Debug and WebNet channels.
pub fn set_reply_timeout_ms(ms: Option<u32>) {
    crate::runtime::settings::change(|s| s.reply_timeout_ms = ms.map(|v| v.max(1)));
}

/// How long a sender waits for its reply.
pub fn reply_timeout_ms() -> u32 {
    match crate::runtime::settings::snapshot().reply_timeout_ms {
        None => board().reply_timeout_ms.clamp(1, i32::MAX as isize) as u32,
        Some(chosen) => chosen.min(i32::MAX as u32),
    }
}

/// Replies an extra channel's own mailbox holds: one sender waits at a
/// time, so a few cover the replies of senders that gave up.
const ROUTE_SLOTS: rt_size_t = 4;

/// Why a message got no reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The channel is not open (the agent is not running).
    NotRunning,
    /// The channel closed (the agent stopped) before the reply came.
    Stopped,
    NoMemory,
    /// The loop's input mailbox is full.
    Full,
    /// No reply before the timeout.
    Timeout,
    /// An exclusive sender found the loop still at a message whose sender
    /// gave up waiting.
    Busy,
}

/// The exchange while it is open: the hub and the senders' turn, a kernel
/// mutex whose holder sends and waits for its reply.
struct Open {
    hub: MessageHub_t,
    turn: Locked<Tickets>,
    /// Where the replies arrive: the hub's output mailbox, or the route's.
    replies: rt_mailbox_t,
    /// An extra channel's reply route: its own mailbox and its slot.
    route: Option<Route>,
}

/// An extra channel's reply route (`runtime::reply_route`).
struct Route {
    mailbox: Mailbox,
    slot: u8,
}

/// Messages sent to the loop and replies taken off the output mailbox since
/// the exchange opened: a reply's number is its message's.
struct Tickets {
    sent: usize,
    taken: usize,
}

/// `open` is written by `open` (gate closed) and by `close` (gate closed
/// and empty) only, and read by senders through the gate.
pub struct Exchange {
    gate: Gate,
    open: UnsafeCell<Option<Open>>,
}

// SAFETY: `open` is reached only under the rules on `Exchange`; the gate is
// atomic.
unsafe impl Sync for Exchange {}
// SAFETY: the hub handle is a live hub shared by design (its mailboxes are
// kernel objects); moving it between threads is what the hub is for.
unsafe impl Send for Open {}

impl Exchange {
    pub const fn closed() -> Exchange {
        Exchange {
            gate: Gate::closed(),
            open: UnsafeCell::new(None),
        }
    }

    /// Open on `hub` (closing first if open). `name` names the turn's mutex.
    /// Err without memory.
    ///
    /// # Safety
    /// `hub` is a live hub that outlives the open exchange (the agent closes
    /// its channel before freeing the hub); `open` and `close` are called
    /// from one thread at a time.
    pub unsafe fn open(&self, hub: MessageHub_t, name: ObjectName) -> Result<(), ()> {
        self.close();
        let Ok(turn) = Locked::create(name, Tickets { sent: 0, taken: 0 }) else {
            return Err(());
        };
        // SAFETY: the hub is live (this function's contract).
        let replies = unsafe { (*hub).output_mailbox };
        let open = Open {
            hub,
            turn,
            replies,
            route: None,
        };
        // SAFETY: the gate is closed (above) and empty, so no sender reaches
        // `open` (see `Exchange`).
        unsafe { *self.open.get() = Some(open) };
        self.gate.open();
        Ok(())
    }

    /// Open as an extra channel next to the chosen one: its replies come
    /// through a route of its own (a mailbox named `mailbox_name`), and its
    /// turns stream to `hooks`. Err without memory or a free route.
    ///
    /// # Safety
    /// As [`Exchange::open`].
    pub unsafe fn open_routed(
        &self,
        hub: MessageHub_t,
        name: ObjectName,
        mailbox_name: ObjectName,
        hooks: &'static StreamHooks,
    ) -> Result<(), ()> {
        self.close();
        let Some(mailbox) = Mailbox::create(mailbox_name, ROUTE_SLOTS) else {
            return Err(());
        };
        let Ok(turn) = Locked::create(name, Tickets { sent: 0, taken: 0 }) else {
            return Err(());
        };
        let replies = mailbox.as_raw();
        // SAFETY: the mailbox lives in `open` until `close` released the
        // slot.
        let Some(slot) = (unsafe { reply_route::claim(replies, hooks) }) else {
            return Err(());
        };
        let route = Some(Route { mailbox, slot });
        let open = Open {
            hub,
            turn,
            replies,
            route,
        };
        // SAFETY: the gate is closed (above) and empty, so no sender reaches
        // `open` (see `Exchange`).
        unsafe { *self.open.get() = Some(open) };
        self.gate.open();
        Ok(())
    }

    pub fn is_open(&self) -> bool {
        self.gate.is_open()
    }

    /// An extra channel's `init`: open routed on `hub` (unless this
    /// exchange is already the chosen channel's); 0, or -1 with a log line
    /// naming `channel`.
    ///
    /// # Safety
    /// As [`Exchange::open`]; `hub` is NULL or live.
    pub unsafe fn open_extra(
        &self,
        hub: MessageHub_t,
        names: (ObjectName, ObjectName),
        hooks: &'static StreamHooks,
        channel: &str,
    ) -> c_int {
        if hub.is_null() || self.is_open() {
            // Already the chosen channel, or no hub: nothing to add.
            return -1;
        }
        // SAFETY: forwarded (this function's contract).
        if unsafe { self.open_routed(hub, names.0, names.1, hooks) }.is_err() {
            crate::log_e!(channel, ": no memory or no free reply route");
            return -1;
        }
        0
    }

    /// Is it open as an extra channel (with a reply route of its own)?
    #[cfg_attr(not(feature = "channel-webnet"), allow(dead_code))]
    pub fn is_routed(&self) -> bool {
        // SAFETY: inside the gate `open` is complete and not written (see
        // `Exchange`).
        self.gate
            .enter()
            .map(|_pass| unsafe { (*self.open.get()).as_ref() }.is_some_and(|o| o.route.is_some()))
            .unwrap_or(false)
    }

    /// Close: wake waiting senders and wait until they are gone. Idempotent.
    pub fn close(&self) {
        if !self.gate.close() {
            return;
        }
        // SAFETY: written only by `open`, which cannot run now (its contract);
        // the hub (and the route's mailbox) outlive the open exchange.
        let replies = unsafe { (*self.open.get()).as_ref() }.map_or(ptr::null_mut(), |o| o.replies);
        self.gate.wait_empty(|| {
            // A NULL sentinel wakes one waiting sender, which sees the
            // exchange closed and leaves.
            if !replies.is_null() {
                // SAFETY: a live mailbox (see above); a NULL value is never
                // owned by anyone.
                unsafe { rt_mb_send(replies, 0) };
            }
        });
        // SAFETY: the gate is closed and empty: nobody else reaches `open`.
        let closed = unsafe { (*self.open.get()).take() };
        if let Some(route) = closed.and_then(|o| o.route) {
            // No reply is put into the mailbox after this; those already in
            // it are nobody's now.
            reply_route::release(route.slot);
            while let Some(left) = route.mailbox.try_recv() {
                // SAFETY: a value the loop put: NULL (a sentinel) or a reply
                // set handed over to this channel; not used again.
                unsafe { messages_destroy(left as Messages_t) };
            }
        }
    }

    /// Send `content_nul` (NUL-terminated) and hand the reply's text to
    /// `waiting.reply`. `waiting.before_send` runs once this sender has its
    /// turn, just before the message goes to the loop; while it waits,
    /// `waiting.tick` runs every `poll_ms` without a reply; `timeout_ms`
    /// bounds the whole wait.
    pub fn send(
        &self,
        kind: MessageType,
        content_nul: &[u8],
        timeout_ms: u32,
        poll_ms: u32,
        waiting: &mut dyn Waiting,
    ) -> Result<(), SendError> {
        if content_nul.last() != Some(&0) {
            return Err(SendError::NoMemory);
        }
        let Some(_pass) = self.gate.enter() else {
            return Err(SendError::NotRunning);
        };
        // SAFETY: inside the gate `open` is complete and not written (see
        // `Exchange`), and the pass keeps a close waiting until this returns.
        let Some(open) = (unsafe { (*self.open.get()).as_ref() }) else {
            return Err(SendError::NotRunning);
        };
        // The turn: one sender at a time sends and waits for its reply.
        let Some(mut tickets) = open.turn.lock() else {
            return Err(SendError::Stopped);
        };
        if !self.gate.is_open() {
            return Err(SendError::Stopped);
        }
        // SAFETY: the hub outlives the open exchange; the pass keeps it open.
        unsafe {
            self.exchange(
                open,
                &mut tickets,
                kind,
                content_nul,
                timeout_ms,
                poll_ms,
                waiting,
            )
        }
    }

    /// # Safety
    /// `open`'s hub (non-NULL) and reply mailbox stay alive for the call;
    /// `content_nul` ends with a NUL.
    #[allow(clippy::too_many_arguments)]
    unsafe fn exchange(
        &self,
        open: &Open,
        tickets: &mut Tickets,
        kind: MessageType,
        content_nul: &[u8],
        timeout_ms: u32,
        poll_ms: u32,
        waiting: &mut dyn Waiting,
    ) -> Result<(), SendError> {
        let (hub, replies) = (open.hub, open.replies);
        // Replies of senders that gave up and are already back: taken now.
        while tickets.taken < tickets.sent {
            // SAFETY: the hub and the mailbox are live (this function's
            // contract).
            let stale = unsafe { message_hub_get_timeout(hub, replies, 0) };
            if stale.is_null() {
                break;
            }
            // A reply to a message no channel sent is nobody's ticket.
            if !crate::runtime::unasked::take_reply(stale) {
                tickets.taken += 1;
            }
            // SAFETY: a received message, owned here, not used again.
            unsafe { messages_destroy(stale) };
        }
        if waiting.exclusive() && tickets.taken < tickets.sent {
            return Err(SendError::Busy);
        }
        let msg = messages_create(1);
        if msg.is_null()
            // SAFETY: `msg` is the live set just created; `content_nul` ends
            // with a NUL (this function's contract) and is only copied.
            || unsafe { messages_append(msg, kind, content_nul.as_ptr() as *const c_char) }
                != rt_eok()
        {
            // SAFETY: `msg` is NULL or the set created above, owned here and
            // not used again.
            unsafe { messages_destroy(msg) };
            return Err(SendError::NoMemory);
        }
        // An extra channel's message carries its route, so the loop sends
        // the reply there.
        if let Some(route) = &open.route {
            if !crate::runtime::unasked::mark_routed(msg, route.slot) {
                // SAFETY: the set created above, owned here, not used again.
                unsafe { messages_destroy(msg) };
                return Err(SendError::NoMemory);
            }
        }
        waiting.before_send();
        // SAFETY: `hub` is live (this function's contract), so its
        // `input_mailbox` can be read; `msg` is a live set owned here.
        if unsafe { message_hub_put(hub, msg, (*hub).input_mailbox) } != rt_eok() {
            crate::runtime::unasked::unmark_input(msg);
            // SAFETY: on failure the caller keeps ownership of `msg`; it is
            // not used again.
            unsafe { messages_destroy(msg) };
            return Err(SendError::Full);
        }
        // This message's number; its reply has the same one.
        let ticket = tickets.sent;
        tickets.sent += 1;
        let ms = timeout_ms.clamp(1, i32::MAX as u32) as i32;
        // SAFETY: a pure kernel conversion, callable from any thread.
        let timeout = unsafe { rt_tick_from_millisecond(ms) };
        // SAFETY: as above.
        let poll = unsafe { rt_tick_from_millisecond(poll_ms.clamp(1, i32::MAX as u32) as i32) };
        // SAFETY: reads the kernel tick counter, callable from any thread.
        let asked_at = unsafe { rt_tick_get() };
        let reply = loop {
            // SAFETY: reads the kernel tick counter, callable from any thread.
            let waited = unsafe { rt_tick_get() }.wrapping_sub(asked_at);
            if waited >= timeout {
                return Err(SendError::Timeout);
            }
            let left = (timeout - waited).min(poll).min(i32::MAX as rt_tick_t) as i32;
            // SAFETY: the hub and the reply mailbox are live (this
            // function's contract).
            let reply = unsafe { message_hub_get_timeout(hub, replies, left) };
            if reply.is_null() {
                // A timeout, or close's wake-up sentinel.
                if !self.gate.is_open() {
                    return Err(SendError::Stopped);
                }
                waiting.tick();
                continue;
            }
            if crate::runtime::unasked::take_reply(reply) {
                // The reply to an injected or scheduled message: not a
                // sender's (the log has it).
                // SAFETY: `reply` is non-NULL and owned here; not used again.
                unsafe { messages_destroy(reply) };
                continue;
            }
            let number = tickets.taken;
            tickets.taken += 1;
            if number < ticket {
                // The answer to a sender that gave up waiting.
                // SAFETY: `reply` is non-NULL and owned here (a received
                // message); it is not used again.
                unsafe { messages_destroy(reply) };
                continue;
            }
            break reply;
        };
        // SAFETY: `reply` is a live message set owned here; the content is
        // borrowed from it.
        let text = unsafe { messages_get_content_idx(reply, 0) };
        waiting.reply(if text.is_null() {
            b""
        } else {
            // SAFETY: `text` is non-NULL and NUL-terminated (message
            // content), owned by `reply`, which outlives this call.
            unsafe { CStr::from_ptr(text) }.to_bytes()
        });
        // SAFETY: `reply` is owned here and not used after this.
        unsafe { messages_destroy(reply) };
        Ok(())
    }
}

/// What a sender does around its exchange.
pub trait Waiting {
    /// Refuse to send while the loop still works for a sender that gave up
    /// (whose turn could still produce output).
    fn exclusive(&self) -> bool {
        false
    }
    /// It has its turn; the message goes to the loop next.
    fn before_send(&mut self) {}
    /// It waited a poll interval without a reply.
    fn tick(&mut self) {}
    /// Its reply's text.
    fn reply(&mut self, text: &[u8]);
}
