//! The library's side of the board's TLS glue (`glue/agent_glue.h`,
//! `glue/agent_tls.c`): how long the request on the calling thread may
//! still wait, and why its connection failed. See
//! [`crate::net::tls_watch`].

use crate::ffi_fn;
use crate::net::tls_watch::{self, Budget, TlsFailure};
use core::ffi::{c_int, c_uint};

/// `AGENT_TLS_BUDGET_CANCELLED`.
const BUDGET_CANCELLED: c_int = -1;
/// `AGENT_TLS_BUDGET_UNWATCHED`.
const BUDGET_UNWATCHED: c_int = -2;

/// The ms the calling thread's request may still wait (0: its deadline
/// passed), `AGENT_TLS_BUDGET_CANCELLED` or `AGENT_TLS_BUDGET_UNWATCHED`;
/// `*silence_ms` (written when not NULL and the request is watched) gets
/// the longest silence allowed.
#[no_mangle]
pub unsafe extern "C" fn agent_tls_budget(silence_ms: *mut c_uint) -> c_int {
    ffi_fn!(failure = BUDGET_UNWATCHED, {
        // SAFETY: rt_tick_get only reads the tick counter.
        match tls_watch::budget(unsafe { crate::rtt::rt_tick_get() }) {
            Budget::Unwatched => BUDGET_UNWATCHED,
            Budget::Cancelled => BUDGET_CANCELLED,
            Budget::Left {
                left_ms,
                silence_ms: silence,
            } => {
                if !silence_ms.is_null() {
                    // SAFETY: not NULL, and the caller's writable unsigned int.
                    unsafe { *silence_ms = silence };
                }
                left_ms.min(i32::MAX as u32) as c_int
            }
        }
    })
}

/// The calling thread's connection failed for `failure`
/// (`AGENT_TLS_FAIL_*`; unknown values are ignored) with the TLS library's
/// code `detail`.
#[no_mangle]
pub extern "C" fn agent_tls_note(failure: c_int, detail: c_int) {
    ffi_fn!(failure = (), {
        if let Some(f) = TlsFailure::from_code(failure) {
            tls_watch::note(f, detail);
        }
    })
}
