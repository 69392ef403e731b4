//! Logging: Rust formats a whole line, the C glue prints it through ulog with
//! a `"%s"` format. ulog cuts lines at its buffer size (128 by default), so
//! long texts are sent as several lines rather than cut.

use core::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Level {
    Error = 3,
    Warning = 4,
    Info = 6,
    Debug = 7,
}

extern "C" {
    fn agent_glue_log(level: core::ffi::c_int, text: *const core::ffi::c_char);
}

/// Longest piece handed to ulog at once (its default line buffer is 128
/// bytes including the tag and level prefix).
const PIECE: usize = 96;

/// A fixed, stack-only line buffer: formatting a log line never allocates.
pub struct LineBuf {
    buf: [u8; PIECE * 4 + 1],
    len: usize,
    overflowed: bool,
}

impl LineBuf {
    pub const fn new() -> Self {
        LineBuf {
            buf: [0; PIECE * 4 + 1],
            len: 0,
            overflowed: false,
        }
    }
    /// End the line with "..." so a cut log line is visibly cut.
    fn mark_cut(&mut self) {
        let mut end = self.len.min(self.buf.len() - 4);
        while end > 0 && (self.buf[end] & 0xC0) == 0x80 {
            end -= 1;
        }
        self.buf[end..end + 3].copy_from_slice(b"...");
        self.len = end + 3;
    }
    pub fn as_str(&self) -> &str {
        // Only whole UTF-8 sequences are ever copied in (see write_str).
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl Default for LineBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Write for LineBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let room = self.buf.len() - 1 - self.len;
        let mut take = s.len().min(room);
        while take > 0 && !s.is_char_boundary(take) {
            take -= 1;
        }
        self.buf[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        if take < s.len() {
            self.overflowed = true;
        }
        Ok(())
    }
}

/// Print `text` through the glue, in pieces of at most [`PIECE`] bytes.
pub fn emit(level: Level, text: &str) {
    let mut rest = text;
    loop {
        let mut cut = rest.len().min(PIECE);
        while cut > 0 && cut < rest.len() && !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let mut piece = [0u8; PIECE + 1];
        piece[..cut].copy_from_slice(&rest.as_bytes()[..cut]);
        // SAFETY: `piece` is NUL-terminated (zero-initialised, cut <= PIECE)
        // and outlives the call.
        unsafe { agent_glue_log(level as i32, piece.as_ptr() as *const core::ffi::c_char) };
        rest = &rest[cut..];
        if rest.is_empty() {
            break;
        }
    }
}

/// Format and log a line.
pub fn log_fmt(level: Level, args: fmt::Arguments<'_>) {
    let mut line = LineBuf::new();
    let _ = fmt::write(&mut line, args);
    if line.overflowed {
        line.mark_cut();
    }
    emit(level, line.as_str());
}

#[macro_export]
macro_rules! log_e { ($($a:tt)*) => { $crate::rtt::log::log_fmt($crate::rtt::log::Level::Error, format_args!($($a)*)) } }
#[macro_export]
macro_rules! log_w { ($($a:tt)*) => { $crate::rtt::log::log_fmt($crate::rtt::log::Level::Warning, format_args!($($a)*)) } }
#[macro_export]
macro_rules! log_i { ($($a:tt)*) => { $crate::rtt::log::log_fmt($crate::rtt::log::Level::Info, format_args!($($a)*)) } }
#[macro_export]
macro_rules! log_d { ($($a:tt)*) => { $crate::rtt::log::log_fmt($crate::rtt::log::Level::Debug, format_args!($($a)*)) } }

/// Print text on the console as is. `rt_kprintf` cuts its output at the
/// kernel's console buffer (RT_CONSOLEBUF_SIZE, often 128 bytes), so the
/// text goes out in pieces that always fit.
pub fn console_print(text: &[u8]) {
    for piece in text.chunks(PIECE) {
        let mut buf = [0u8; PIECE + 1];
        buf[..piece.len()].copy_from_slice(piece);
        // SAFETY: NUL-terminated stack buffer, constant "%s" format.
        unsafe {
            super::kernel::rt_kprintf(c"%s".as_ptr(), buf.as_ptr());
        }
    }
}
