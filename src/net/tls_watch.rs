//! What the board's TLS layer learns about the request running on its
//! thread, and what it tells back.
//!
//! webclient runs the TCP connect and the TLS handshake inside one call
//! (`webclient_post`) that the transport cannot interrupt. The library's
//! TLS glue (`glue/agent_tls.c` on a board, the host port's webclient on
//! Linux) runs them in short polls instead, and between two polls asks
//! [`budget`] how long the request on this thread may still wait: the
//! request's deadline, the longest silence (`PKG_AGENT_HTTP_TIMEOUT_MS`),
//! and whether cleanup cancelled it. When a handshake or a record fails,
//! it says why through [`note`]; the transport [`take`]s the reason to
//! word the error and to decide on a retry (a certificate never recovers,
//! a silent server may).
//!
//! A request registers itself with [`watch`] for as long as it runs. A
//! thread with no registered request (a C tool's own webclient call) gets
//! [`Budget::Unwatched`]: the glue then bounds the handshake by its own
//! limit, and nothing is noted.

use crate::wire::deadline::Deadline;

/// Why a TLS connection failed, as the glue reports it. The numbers are
/// `AGENT_TLS_FAIL_*` in `glue/agent_glue.h`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum TlsFailure {
    /// Cleanup cancelled the request.
    Cancelled = 1,
    /// The request's deadline passed during the connect or the handshake.
    Deadline = 2,
    /// The server was silent for the read timeout during the handshake.
    HandshakeSilent = 3,
    /// The server closed the connection during the handshake.
    ClosedInHandshake = 4,
    /// The certificate chain does not end at a root the firmware trusts.
    UntrustedCa = 5,
    /// The certificate is not for the URL's host name.
    NameMismatch = 6,
    /// The certificate has expired (by the board's clock).
    Expired = 7,
    /// The certificate is not valid yet (by the board's clock).
    NotYetValid = 8,
    /// A record larger than the board's mbedTLS input buffer.
    RecordTooLarge = 9,
    /// Another handshake failure (the detail is mbedTLS's code).
    Handshake = 10,
    /// The TCP connect failed (refused, unreachable, no address).
    Connect = 11,
}

impl TlsFailure {
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
    pub fn from_code(code: i32) -> Option<Self> {
        Some(match code {
            1 => Self::Cancelled,
            2 => Self::Deadline,
            3 => Self::HandshakeSilent,
            4 => Self::ClosedInHandshake,
            5 => Self::UntrustedCa,
            6 => Self::NameMismatch,
            7 => Self::Expired,
            8 => Self::NotYetValid,
            9 => Self::RecordTooLarge,
            10 => Self::Handshake,
            11 => Self::Connect,
            _ => return None,
        })
    }

    /// Could the same request succeed when sent again? A silent or closing
    /// server, or a failed connect, may recover; a certificate, a record
    /// size or a handshake the server refuses will fail the same way.
    pub fn retryable(self) -> bool {
        matches!(
            self,
            Self::HandshakeSilent | Self::ClosedInHandshake | Self::Connect
        )
    }

    /// The reason in words, naming what to check.
    pub fn text(self) -> &'static [u8] {
        match self {
            Self::Cancelled => b"cancelled",
            Self::Deadline => b"the TLS connect or handshake did not finish before the request deadline",
            Self::HandshakeSilent => b"TLS handshake timeout: the server stopped answering during the handshake",
            Self::ClosedInHandshake => b"the server closed the connection during the TLS handshake",
            Self::UntrustedCa => b"TLS: the server's certificate is not signed by a CA this firmware trusts (add its root CA)",
            Self::NameMismatch => b"TLS: the server's certificate is not for this host name (check the URL; an IP address needs a DNS-name SAN)",
            Self::Expired => b"TLS: the server's certificate has expired (by the board's clock)",
            Self::NotYetValid => b"TLS: the server's certificate is not valid yet (check the board's clock)",
            Self::RecordTooLarge => b"TLS: the server sent a record larger than mbedTLS's input buffer (set MBEDTLS_SSL_IN_CONTENT_LEN or MBEDTLS_SSL_MAX_CONTENT_LEN to 16384)",
            Self::Handshake => b"the TLS handshake failed",
            Self::Connect => b"cannot connect to the server (check the URL and the network)",
        }
    }
}

/// How long the request on the calling thread may still wait.
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Budget {
    /// No request of the library's runs on this thread.
    Unwatched,
    /// Cleanup cancelled it: stop now.
    Cancelled,
    /// `left_ms` until the deadline (0: passed); at most `silence_ms` of
    /// silence from the server.
    Left { left_ms: u32, silence_ms: u32 },
}

#[cfg(feature = "tls")]
pub use slots::{budget, note, take, watch, Watch};

/// Without HTTPS (`PKG_AGENT_TLS_MBEDTLS` off) no glue asks or tells:
/// nothing is registered and there is never a reason to take. The host
/// port's webclient, which speaks HTTPS whatever the parts, still asks and
/// tells: it hears [`Budget::Unwatched`] (its own limits then) and is not
/// listened to, as a C tool's own request on a board.
#[cfg(not(feature = "tls"))]
mod off {
    use super::{Budget, Deadline, TlsFailure};

    pub struct Watch;

    pub fn watch(_deadline: &Deadline, _silence_ms: u32) -> Option<Watch> {
        None
    }

    pub fn budget(_now: u32) -> Budget {
        Budget::Unwatched
    }

    pub fn note(_failure: TlsFailure, _detail: i32) {}

    pub fn take() -> Option<(TlsFailure, i32)> {
        None
    }
}
#[cfg(not(feature = "tls"))]
pub use off::{budget, note, take, watch, Watch};

#[cfg(feature = "tls")]
mod slots {
    use super::{Budget, Deadline, TlsFailure};
    use crate::rtt::atomic::{AtomicI32, AtomicPtr, AtomicUsize, Ordering};
    use crate::rtt::rt_thread;
    use core::ptr;

    /// Requests that may run at once: the loop's, the MCP client's (same
    /// thread), C callers' own `chat()`s. A request that finds no free slot
    /// runs unwatched.
    const SLOTS: usize = 4;

    struct Slot {
        thread: AtomicPtr<rt_thread>,
        start: AtomicUsize,
        ms: AtomicUsize,
        silence_ms: AtomicUsize,
        failure: AtomicI32,
        detail: AtomicI32,
    }

    impl Slot {
        const fn new() -> Self {
            Slot {
                thread: AtomicPtr::new(ptr::null_mut()),
                start: AtomicUsize::new(0),
                ms: AtomicUsize::new(0),
                silence_ms: AtomicUsize::new(0),
                failure: AtomicI32::new(0),
                detail: AtomicI32::new(0),
            }
        }
    }

    static TABLE: [Slot; SLOTS] = [Slot::new(), Slot::new(), Slot::new(), Slot::new()];

    fn this_thread() -> *mut rt_thread {
        // SAFETY: rt_thread_self only reads the scheduler's current thread.
        unsafe { crate::rtt::rt_thread_self() }
    }

    /// The slot of the calling thread's request.
    fn mine() -> Option<&'static Slot> {
        let me = this_thread();
        if me.is_null() {
            return None;
        }
        TABLE.iter().find(|s| s.thread.load(Ordering::SeqCst) == me)
    }

    /// A registered request; unregistered when dropped.
    pub struct Watch {
        slot: &'static Slot,
    }

    impl Drop for Watch {
        fn drop(&mut self) {
            self.slot.thread.store(ptr::null_mut(), Ordering::SeqCst);
        }
    }

    /// Register the calling thread's request, with its deadline and the
    /// server's longest silence; None when every slot is taken.
    pub fn watch(deadline: &Deadline, silence_ms: u32) -> Option<Watch> {
        let me = this_thread();
        if me.is_null() {
            return None;
        }
        let slot = TABLE.iter().find(|s| {
            s.thread
                .compare_exchange(ptr::null_mut(), me, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        })?;
        // Only this thread reads the slot's other fields while it is
        // registered, so the order of these stores does not matter.
        slot.start
            .store(deadline.start_tick() as usize, Ordering::SeqCst);
        slot.ms.store(deadline.ms() as usize, Ordering::SeqCst);
        slot.silence_ms.store(silence_ms as usize, Ordering::SeqCst);
        slot.failure.store(0, Ordering::SeqCst);
        slot.detail.store(0, Ordering::SeqCst);
        Some(Watch { slot })
    }

    /// The calling thread's budget at tick `now`.
    pub fn budget(now: u32) -> Budget {
        let Some(slot) = mine() else {
            return Budget::Unwatched;
        };
        if crate::net::cancel::cancelled() {
            return Budget::Cancelled;
        }
        let deadline = Deadline::new(
            slot.start.load(Ordering::SeqCst) as u32,
            slot.ms.load(Ordering::SeqCst) as u32,
            crate::rtt::board().tick_per_second.clamp(1, 1_000_000) as u32,
        );
        Budget::Left {
            left_ms: deadline.remaining_ms(now),
            silence_ms: slot.silence_ms.load(Ordering::SeqCst) as u32,
        }
    }

    /// The glue's report: the calling thread's request failed for `failure`
    /// (`detail`: the TLS library's code, or 0). Ignored without a registered
    /// request; a later report replaces an earlier one.
    pub fn note(failure: TlsFailure, detail: i32) {
        if let Some(slot) = mine() {
            slot.detail.store(detail, Ordering::SeqCst);
            slot.failure.store(failure as i32, Ordering::SeqCst);
        }
    }

    /// The reason the glue reported for the calling thread's request since it
    /// was last taken, and its detail.
    pub fn take() -> Option<(TlsFailure, i32)> {
        let slot = mine()?;
        let code = slot.failure.swap(0, Ordering::SeqCst);
        TlsFailure::from_code(code).map(|f| (f, slot.detail.load(Ordering::SeqCst)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for code in 1..=11 {
            let f = TlsFailure::from_code(code).unwrap();
            assert_eq!(f as i32, code);
            assert!(!f.text().is_empty());
        }
        assert_eq!(TlsFailure::from_code(0), None);
        assert_eq!(TlsFailure::from_code(12), None);
    }

    #[test]
    fn only_transient_failures_are_retried() {
        let retried: [i32; 3] = [3, 4, 11];
        for code in 1..=11 {
            let f = TlsFailure::from_code(code).unwrap();
            assert_eq!(f.retryable(), retried.contains(&code), "{f:?}");
        }
    }
}
