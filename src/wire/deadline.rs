//! The whole request's deadline (`PKG_AGENT_REQUEST_TIMEOUT_MS`), kept in
//! kernel ticks so it works on any tick rate and across the tick counter's
//! wraparound.
//!
//! Pure: every function takes the current tick as an argument (the transport
//! passes `rt_tick_get()`), so the arithmetic, wraparound included, is
//! tested without waiting for a counter to wrap.

/// Longest deadline in ticks: half the tick counter's range, so that an
/// elapsed time computed with `wrapping_sub` is never ambiguous (at 1000 Hz
/// that is 24.8 days, far beyond the option's range).
const MAX_TICKS: u32 = i32::MAX as u32;

/// `ms` milliseconds in ticks of a `hz` tick, rounded up, at most
/// [`MAX_TICKS`] (`hz` 0 is taken as 1).
///
/// In `u32` steps (whole seconds, then the rest), exact for any tick rate
/// below 4 MHz: a 32-bit board has no 64-bit divide, and the compiler's
/// helper for one costs flash.
pub fn ms_to_ticks(ms: u32, hz: u32) -> u32 {
    let hz = hz.max(1);
    let whole = (ms / 1000).checked_mul(hz);
    let part = ((ms % 1000).saturating_mul(hz)).div_ceil(1000);
    whole
        .and_then(|w| w.checked_add(part))
        .map_or(MAX_TICKS, |t| t.min(MAX_TICKS))
}

/// `ticks` of a `hz` tick in milliseconds, rounded down (saturating); `u32`
/// steps as in [`ms_to_ticks`].
pub fn ticks_to_ms(ticks: u32, hz: u32) -> u32 {
    let hz = hz.max(1);
    let whole = (ticks / hz).checked_mul(1000);
    let part = (ticks % hz).saturating_mul(1000) / hz;
    whole.and_then(|w| w.checked_add(part)).unwrap_or(u32::MAX)
}

/// A point in time `ms` after `start`, on a `hz` tick.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deadline {
    start: u32,
    limit: u32,
    hz: u32,
    ms: u32,
}

impl Deadline {
    /// The deadline `ms` milliseconds after the tick `start`.
    pub fn new(start: u32, ms: u32, hz: u32) -> Self {
        let hz = hz.max(1);
        Deadline {
            start,
            limit: ms_to_ticks(ms, hz),
            hz,
            ms,
        }
    }

    /// The tick it counts from.
    pub fn start_tick(&self) -> u32 {
        self.start
    }

    /// The length it was made with, in milliseconds.
    pub fn ms(&self) -> u32 {
        self.ms
    }

    /// The tick rate it counts in.
    pub fn hz(&self) -> u32 {
        self.hz
    }

    /// Ticks since the start at tick `now` (correct across one wraparound
    /// of the counter).
    pub fn elapsed_ticks(&self, now: u32) -> u32 {
        now.wrapping_sub(self.start)
    }

    /// Ticks left at tick `now`; 0 once the deadline has passed.
    pub fn remaining_ticks(&self, now: u32) -> u32 {
        self.limit.saturating_sub(self.elapsed_ticks(now))
    }

    /// Milliseconds left at tick `now` (rounded down); 0 once passed.
    pub fn remaining_ms(&self, now: u32) -> u32 {
        ticks_to_ms(self.remaining_ticks(now), self.hz)
    }

    /// Has the deadline passed at tick `now` (less than a millisecond
    /// left)?
    pub fn expired(&self, now: u32) -> bool {
        self.remaining_ms(now) == 0
    }
}
