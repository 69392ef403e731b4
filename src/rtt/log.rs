//! Logging: Rust hands the C glue complete lines, printed through ulog with
//! a `"%s"` format. ulog cuts a line at `ULOG_LINE_BUF_SIZE` (its head of
//! colour, time, level, tag and thread name included), so a text longer than
//! one line is sent as several lines, each as long as the board's line buffer
//! allows (the glue works that out from rtconfig.h), never cut.

use core::ffi::{c_char, c_int};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(i32)]
pub enum Level {
    Error = 3,
    Warning = 4,
    Info = 6,
    Debug = 7,
}

extern "C" {
    fn agent_glue_log(level: c_int, text: *const c_char);
    /// Text bytes of one ulog line on this board (ULOG_LINE_BUF_SIZE less
    /// ulog's head and tail), or of one rt_kprintf line where ulog is not
    /// built or not started.
    fn agent_glue_log_piece() -> c_int;
    /// What one rt_kprintf call prints whole (RT_CONSOLEBUF_SIZE - 2).
    static agent_glue_console_piece: c_int;
}

/// Did the console's last text end inside a line (an answer streaming)? A
/// log line then starts on a new line instead of running on after it.
static MID_LINE: super::atomic::AtomicBool = super::atomic::AtomicBool::new(false);

/// The longest piece this side ever hands over (the stack buffer's size):
/// a 512-byte ulog line, the largest common setting.
const MAX_PIECE: usize = 512;

fn piece_len(configured: c_int) -> usize {
    (configured.max(16) as usize).min(MAX_PIECE)
}

/// Held around each print of the library: `rt_kprintf` formats into one
/// static buffer, unguarded unless the board sets
/// RT_USING_THREADSAFE_PRINTF (RT-Thread 5.3's qemu-vexpress-a9 does not),
/// so the loop's log line and the CLI chat's prompt, printed at once from
/// two threads, overwrote each other.
static CONSOLE: super::sleep_lock::SleepLock = super::sleep_lock::SleepLock::new();

/// A log line being written: bytes gather in a stack buffer (formatting never
/// allocates) and go out a full piece at a time, cut only between UTF-8
/// characters; [`LineWriter::finish`] sends the rest.
pub struct LineWriter {
    level: Level,
    piece: usize,
    buf: [u8; MAX_PIECE + 1],
    len: usize,
    sent: bool,
}

impl LineWriter {
    pub fn new(level: Level) -> Self {
        if MID_LINE.swap(false, super::atomic::Ordering::Relaxed) {
            let _console = CONSOLE.lock();
            // SAFETY: a literal, NUL-terminated and without a `%`.
            unsafe { super::kernel::rt_kprintf(c"\r\n".as_ptr()) };
        }
        // SAFETY: a plain glue call.
        let configured = unsafe { agent_glue_log_piece() };
        LineWriter {
            level,
            piece: piece_len(configured),
            buf: [0; MAX_PIECE + 1],
            len: 0,
            sent: false,
        }
    }

    // Every index below is bounded by MAX_PIECE (`min`), so that nothing
    // here can panic: the panic handler logs through this writer too.
    pub fn write_bytes(&mut self, bytes: &[u8]) {
        let mut rest = bytes;
        while !rest.is_empty() {
            let piece = self.piece.min(MAX_PIECE);
            let len = self.len.min(piece);
            if len == piece {
                self.send_full_piece();
                continue;
            }
            let free = self.buf.get_mut(len..piece).unwrap_or_default();
            let take = crate::base::text::copy_prefix(free, rest);
            self.len = len + take;
            rest = rest.get(take..).unwrap_or_default();
        }
    }

    /// Send the buffer up to its last whole character; keep the bytes of a
    /// character that continues in the next write.
    fn send_full_piece(&mut self) {
        let len = self.len.min(MAX_PIECE);
        let mut start = len;
        while start > 0 && (self.buf[start - 1] & 0xC0) == 0x80 {
            start -= 1;
        }
        let mut cut = len;
        if start > 1 {
            let lead = start - 1;
            let width = match self.buf[lead] {
                0xF0..=0xFF => 4,
                0xE0..=0xEF => 3,
                0xC0..=0xDF => 2,
                _ => 1,
            };
            if lead + width > len {
                cut = lead;
            }
        }
        self.send(cut);
        // The at most 3 bytes of a cut character move to the front, through
        // `get`s: no range check to fail.
        let keep = len.saturating_sub(cut);
        for k in 0..keep {
            let byte = self.buf.get(cut + k).copied().unwrap_or(0);
            if let Some(d) = self.buf.get_mut(k) {
                *d = byte;
            }
        }
        self.len = keep;
    }

    fn send(&mut self, upto: usize) {
        let upto = upto.min(MAX_PIECE);
        let kept = self.buf[upto];
        self.buf[upto] = 0;
        let console = CONSOLE.lock();
        // SAFETY: NUL-terminated at `upto` (< buf.len()); the glue prints it
        // with "%s" and does not keep the pointer.
        unsafe { agent_glue_log(self.level as c_int, self.buf.as_ptr() as *const c_char) };
        drop(console);
        self.buf[upto] = kept;
        self.sent = true;
    }

    /// Send what is left (an empty line when nothing was written at all).
    pub fn finish(mut self) {
        self.end();
    }

    /// [`LineWriter::finish`] through a borrow: a writer moved into
    /// `finish` is first copied to another slot of the caller's frame, so
    /// its buffer would sit twice on the stack of whoever logs. Nothing is
    /// written to the writer after this.
    pub fn end(&mut self) {
        if self.len > 0 || !self.sent {
            self.send(self.len);
        }
    }
}

/// One part of a log line: text as it is, or a number in decimal. Lines are
/// built from parts rather than with `core::fmt`, so no formatter is linked
/// for them. Numbers are `usize`, the board's word: every number logged is
/// a count, a size or an `int`, and each call site builds its pieces, so a
/// 64-bit field would cost two stores per number everywhere.
#[derive(Clone, Copy)]
pub enum Piece<'a> {
    Text(&'a [u8]),
    Number(usize),
    Negative(usize),
}

impl Piece<'_> {
    pub fn write_to(&self, line: &mut LineWriter) {
        let mut digits = [0u8; 20];
        match *self {
            Piece::Text(t) => line.write_bytes(t),
            Piece::Number(n) => line.write_bytes(crate::base::text::decimal(n as u64, &mut digits)),
            Piece::Negative(n) => {
                line.write_bytes(b"-");
                line.write_bytes(crate::base::text::decimal(n as u64, &mut digits));
            }
        }
    }
}

impl<'a> From<&'a str> for Piece<'a> {
    fn from(t: &'a str) -> Self {
        Piece::Text(t.as_bytes())
    }
}
impl<'a> From<&'a [u8]> for Piece<'a> {
    fn from(t: &'a [u8]) -> Self {
        Piece::Text(t)
    }
}
impl<'a> From<&'a core::ffi::CStr> for Piece<'a> {
    fn from(t: &'a core::ffi::CStr) -> Self {
        Piece::Text(t.to_bytes())
    }
}
macro_rules! unsigned_piece {
    ($($t:ty),*) => {$(
        impl From<$t> for Piece<'_> {
            fn from(n: $t) -> Self {
                Piece::Number(n as usize)
            }
        }
    )*};
}
unsigned_piece!(u8, u16, u32, usize);
macro_rules! signed_piece {
    ($($t:ty),*) => {$(
        impl From<$t> for Piece<'_> {
            fn from(n: $t) -> Self {
                if n < 0 {
                    Piece::Negative(n.unsigned_abs() as usize)
                } else {
                    Piece::Number(n as usize)
                }
            }
        }
    )*};
}
signed_piece!(i32, isize);

/// Log the pieces as one line (split into ulog lines as needed).
pub fn log_line(level: Level, pieces: &[Piece<'_>]) {
    let mut line = LineWriter::new(level);
    for p in pieces {
        p.write_to(&mut line);
    }
    line.end();
}

/// Log `parts` as one line (split into pieces as needed).
pub fn log_parts(level: Level, parts: &[&[u8]]) {
    let mut line = LineWriter::new(level);
    for p in parts {
        line.write_bytes(p);
    }
    line.end();
}

/// `log_e!("text ", value, " more")`: the pieces (strings, byte strings, C
/// strings, integers) of one line at that level, without `core::fmt`.
#[macro_export]
macro_rules! log_e { ($($p:expr),+ $(,)?) => { $crate::rtt::log::log_line($crate::rtt::log::Level::Error, &[$($crate::rtt::log::Piece::from($p)),+]) } }
#[macro_export]
macro_rules! log_w { ($($p:expr),+ $(,)?) => { $crate::rtt::log::log_line($crate::rtt::log::Level::Warning, &[$($crate::rtt::log::Piece::from($p)),+]) } }
#[macro_export]
macro_rules! log_i { ($($p:expr),+ $(,)?) => { $crate::rtt::log::log_line($crate::rtt::log::Level::Info, &[$($crate::rtt::log::Piece::from($p)),+]) } }
#[macro_export]
macro_rules! log_d { ($($p:expr),+ $(,)?) => { $crate::rtt::log::log_line($crate::rtt::log::Level::Debug, &[$($crate::rtt::log::Piece::from($p)),+]) } }
/// Print text on the console as is. `rt_kprintf` cuts its output at the
/// kernel's console buffer (RT_CONSOLEBUF_SIZE), so the text goes out in
/// pieces that always fit.
pub fn console_print(text: &[u8]) {
    if let Some(&last) = text.last() {
        MID_LINE.store(last != b'\n', super::atomic::Ordering::Relaxed);
    }
    // SAFETY: a constant defined by the C glue.
    let piece = piece_len(unsafe { agent_glue_console_piece }).min(128);
    let mut rest = text;
    while !rest.is_empty() {
        // `split_at_checked`, not `chunks`: no panic path.
        let (chunk, after) = rest.split_at_checked(piece).unwrap_or((rest, &[]));
        rest = after;
        // At most 128 bytes into 129: always NUL-terminated.
        let mut buf = [0u8; 129];
        crate::base::text::copy_prefix(&mut buf, chunk);
        let _console = CONSOLE.lock();
        // SAFETY: NUL-terminated stack buffer, constant "%s" format.
        unsafe {
            super::kernel::rt_kprintf(c"%s".as_ptr(), buf.as_ptr());
        }
    }
}
