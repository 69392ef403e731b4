//! The host port's side of the board's TLS glue (`glue/agent_tls.c`): the
//! two calls the glue makes into the library, `agent_tls_budget` and
//! `agent_tls_note`, made here through their C symbols as the glue makes
//! them, with the glue's codes (`glue/agent_glue.h`). Without the `tls`
//! part no glue is built on a board, so the port hears "unwatched" and
//! tells nobody.

/// What `agent_tls_budget` answers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[cfg_attr(not(feature = "tls"), allow(dead_code))]
pub enum Budget {
    /// No request of the library runs on this thread.
    Unwatched,
    /// Cleanup cancelled the request.
    Cancelled,
    /// `left_ms` may still pass (0: the deadline passed); at most
    /// `silence_ms` without a byte.
    Left { left_ms: u32, silence_ms: u32 },
}

/// `AGENT_TLS_FAIL_*`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(i32)]
pub enum TlsFailure {
    Cancelled = 1,
    Deadline = 2,
    HandshakeSilent = 3,
    ClosedInHandshake = 4,
    UntrustedCa = 5,
    NameMismatch = 6,
    Expired = 7,
    NotYetValid = 8,
    RecordTooLarge = 9,
    Handshake = 10,
    Connect = 11,
}

#[cfg(feature = "tls")]
extern "C" {
    fn agent_tls_budget(silence_ms: *mut core::ffi::c_uint) -> core::ffi::c_int;
    fn agent_tls_note(failure: core::ffi::c_int, detail: core::ffi::c_int);
}

/// The calling thread's request budget, as the glue asks for it.
#[cfg(feature = "tls")]
pub fn budget() -> Budget {
    let mut silence_ms: core::ffi::c_uint = 0;
    // SAFETY: the library's export, with a writable unsigned int.
    match unsafe { agent_tls_budget(&mut silence_ms) } {
        -1 => Budget::Cancelled,
        left if left >= 0 => Budget::Left {
            left_ms: left as u32,
            silence_ms,
        },
        _ => Budget::Unwatched,
    }
}

/// Tell the library why the calling thread's connection failed.
#[cfg(feature = "tls")]
pub fn note(failure: TlsFailure, detail: i32) {
    // SAFETY: the library's export; it takes plain integers.
    unsafe { agent_tls_note(failure as i32, detail) }
}

#[cfg(not(feature = "tls"))]
pub fn budget() -> Budget {
    Budget::Unwatched
}

#[cfg(not(feature = "tls"))]
pub fn note(_failure: TlsFailure, _detail: i32) {}
