//! A gate in front of state that another thread will tear down: users enter
//! and leave it (atomics only, so an interrupt may enter too), and the owner
//! closes it and waits until the last user has left before freeing what it
//! guards. Nobody who entered can see the state freed under them.
//!
//! The gate is one word: bit 0 says open, the rest counts the users inside
//! (in steps of [`USER`]). A user counts itself in and reads the open bit in
//! the same atomic operation, and the owner clears the bit in one, so the two
//! are ordered by the word itself: a user either got in before the close
//! (and is counted when the owner looks) or sees the gate closed and counts
//! itself out again. One word is also 4 bytes of RAM less per gate than a
//! flag and a count.

use crate::rtt::atomic::{AtomicUsize, Ordering};

/// The open bit.
const OPEN: usize = 1;
/// One user inside.
const USER: usize = 2;

pub struct Gate {
    word: AtomicUsize,
}

/// Proof of having entered: the guarded state stays until it is dropped.
pub struct Pass<'a> {
    gate: &'a Gate,
}

impl Gate {
    pub const fn closed() -> Gate {
        Gate {
            word: AtomicUsize::new(0),
        }
    }

    /// Let users in (the guarded state is complete).
    pub fn open(&self) {
        self.word.fetch_or(OPEN, Ordering::SeqCst);
    }

    pub fn is_open(&self) -> bool {
        self.word.load(Ordering::SeqCst) & OPEN != 0
    }

    /// Enter, or `None` when the gate is closed. Not inlined: every guarded
    /// access enters, and one copy of the atomic loop is enough.
    #[inline(never)]
    pub fn enter(&self) -> Option<Pass<'_>> {
        if self.word.fetch_add(USER, Ordering::SeqCst) & OPEN != 0 {
            Some(Pass { gate: self })
        } else {
            self.word.fetch_sub(USER, Ordering::SeqCst);
            None
        }
    }

    /// Close the gate; `false` when it was closed already.
    pub fn close(&self) -> bool {
        self.word.fetch_and(!OPEN, Ordering::SeqCst) & OPEN != 0
    }

    /// Wait until everyone who entered has left, calling `nudge` between
    /// looks (to wake a user blocked on the guarded state).
    pub fn wait_empty(&self, mut nudge: impl FnMut()) {
        while self.word.load(Ordering::SeqCst) >= USER {
            nudge();
            super::thread::sleep_ms(5);
        }
    }
}

impl Drop for Pass<'_> {
    /// Not inlined either: an atomic decrement is a loop with two barriers,
    /// and every pass is dropped somewhere.
    #[inline(never)]
    fn drop(&mut self) {
        self.gate.word.fetch_sub(USER, Ordering::SeqCst);
    }
}
