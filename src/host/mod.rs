//! The host port: RT-Thread's kernel API served on Linux, so that the
//! library's device code paths run unchanged in tests and the simulator.
//!
//! Rust half: heap, IPC, threads, console, shell registry. C half
//! (`host/port/*.c`): the variadic printf family, klibc, start-up hooks.
//! Headers for C code: `host/include/`.

pub mod console;
pub mod heap;
pub mod ipc;
pub mod shell;
pub mod thread;
pub mod webclient;

use core::time::Duration;

/// Kernel ticks to a wall-clock duration (the host runs at
/// `RT_TICK_PER_SECOND` from its rtconfig.h).
pub(crate) fn ticks_to_duration(ticks: i64) -> Duration {
    let tps = crate::rtt::board().tick_per_second.max(1) as u64;
    let ticks = ticks.max(0) as u64;
    Duration::from_micros(ticks.saturating_mul(1_000_000) / tps)
}
