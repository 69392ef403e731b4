//! A gate in front of state that another thread will tear down: users enter
//! and leave it (atomics only, so an interrupt may enter too), and the owner
//! closes it and waits until the last user has left before freeing what it
//! guards. Nobody who entered can see the state freed under them.
//!
//! A user counts itself in, then looks at `open`; the owner clears `open`,
//! then looks at the count. Both orders are sequentially consistent, so on
//! SMP at least one of the two sees the other (with acquire/release alone,
//! both could miss each other).

use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub struct Gate {
    open: AtomicBool,
    users: AtomicUsize,
}

/// Proof of having entered: the guarded state stays until it is dropped.
pub struct Pass<'a> {
    gate: &'a Gate,
}

impl Gate {
    pub const fn closed() -> Gate {
        Gate {
            open: AtomicBool::new(false),
            users: AtomicUsize::new(0),
        }
    }

    /// Let users in (the guarded state is complete).
    pub fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
    }

    pub fn is_open(&self) -> bool {
        self.open.load(Ordering::SeqCst)
    }

    /// Enter, or `None` when the gate is closed.
    pub fn enter(&self) -> Option<Pass<'_>> {
        self.users.fetch_add(1, Ordering::SeqCst);
        if self.open.load(Ordering::SeqCst) {
            Some(Pass { gate: self })
        } else {
            self.users.fetch_sub(1, Ordering::SeqCst);
            None
        }
    }

    /// Close the gate; `false` when it was closed already.
    pub fn close(&self) -> bool {
        self.open.swap(false, Ordering::SeqCst)
    }

    /// Wait until everyone who entered has left, calling `nudge` between
    /// looks (to wake a user blocked on the guarded state).
    pub fn wait_empty(&self, mut nudge: impl FnMut()) {
        while self.users.load(Ordering::SeqCst) > 0 {
            nudge();
            super::thread::sleep_ms(5);
        }
    }
}

impl Drop for Pass<'_> {
    fn drop(&mut self) {
        self.gate.users.fetch_sub(1, Ordering::SeqCst);
    }
}
