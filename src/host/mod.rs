//! The host port: RT-Thread's kernel API served on Linux, so that the
//! library's device code paths run unchanged in tests and the simulator.
//!
//! Rust half: heap, IPC, threads, console, shell registry. C half
//! (`host/port/*.c`): the variadic printf family, klibc, start-up hooks.
//! Headers for C code: `host/include/`.

/// The host port's own log lines, formatted with `core::fmt` (the host has
/// it anyway; the device's lines are built from pieces, see `rtt::log`).
#[macro_export]
macro_rules! host_log_e { ($($a:tt)*) => { $crate::host::log_fmt($crate::rtt::log::Level::Error, format_args!($($a)*)) } }
#[macro_export]
macro_rules! host_log_w { ($($a:tt)*) => { $crate::host::log_fmt($crate::rtt::log::Level::Warning, format_args!($($a)*)) } }
#[macro_export]
macro_rules! host_log_i { ($($a:tt)*) => { $crate::host::log_fmt($crate::rtt::log::Level::Info, format_args!($($a)*)) } }

/// Format and log a line through the same writer as the library's lines.
pub fn log_fmt(level: crate::rtt::log::Level, args: core::fmt::Arguments<'_>) {
    struct Adapter(crate::rtt::log::LineWriter);
    impl core::fmt::Write for Adapter {
        fn write_str(&mut self, s: &str) -> core::fmt::Result {
            self.0.write_bytes(s.as_bytes());
            Ok(())
        }
    }
    let mut line = Adapter(crate::rtt::log::LineWriter::new(level));
    let _ = core::fmt::write(&mut line, args);
    line.0.finish();
}

pub mod console;
pub mod heap;
pub mod heap_trace;
pub mod ipc;
pub mod irq;
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
