//! Incremental JSON tokenizer.
//!
//! It is fed the data of one SSE event in pieces split anywhere and reports
//! structure and string text to a [`Handler`] as soon as the bytes are there,
//! so no value has to be held whole: string text arrives in pieces that
//! always end on a character boundary, escapes already decoded. It owns no
//! heap memory: nesting is a bit stack in a `u32`, keys are kept in a small
//! inline buffer (the handler only matches short keys), numbers are checked
//! as they go and only their value as an unsigned integer is kept.
//!
//! The handler says, per key and per container, whether it wants the value;
//! unwanted values (whole subtrees) are skipped here without calling it, so
//! the boilerplate of every chunk (`id`, `model`, `system_fingerprint`, ...)
//! costs little more than a scan for its end.
//!
//! Leniencies, chosen to match what cJSON (the device's previous parser)
//! accepts and what real servers send:
//! - raw control characters inside strings are accepted as they are (the SSE
//!   rule that joins multi-line data with `\n` could otherwise not be told
//!   apart from a server's own mistake, and refusing gains nothing);
//! - a lone UTF-16 surrogate escape becomes U+FFFD instead of an error;
//! - NUL characters (raw, or escaped as `\u0000`) are left out of string
//!   text: the text ends up in C strings, where a NUL would cut it, and two
//!   ids that differ only by NULs would be one id there;
//! - only strings whose text is delivered are checked for valid UTF-8 and
//!   valid escapes; keys and unwanted strings are only scanned for their
//!   end (their text is never used, and checking it would cost most of the
//!   time);
//! - one event may carry several top-level values one after another.
//!
//! At the top level `[` can only start the `[DONE]` marker: chunks are
//! objects, and that is the one non-JSON payload the protocol has.

use super::{Stop, StreamError};

/// Deepest nesting accepted. Chat chunks nest 7 levels (root, choices,
/// choice, delta, tool_calls, call, function) and rarely more than 10 with
/// provider extras (tool arguments nest inside a string, not here); a bound
/// keeps the bracket stack in one 32-bit word.
const MAX_DEPTH: u8 = 32;
/// Longest key kept for matching. Longer keys are reported as unknown: no
/// key the chat layer looks for is longer than `reasoning_content` (17).
pub(crate) const KEY_MAX: usize = 24;
/// Decoded text is gathered up to this many bytes before it goes to the
/// handler, so that escape-heavy text (tool arguments are JSON inside a JSON
/// string: `{\"a\": 1}`) does not cost one handler call per escape.
const PEND: usize = 32;

const INVALID: Stop = Stop::Fail(StreamError::InvalidJson);
const BAD_UTF8: Stop = Stop::Fail(StreamError::InvalidUtf8);

/// A value that is neither string nor container.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Scalar {
    Null,
    Bool(bool),
    /// A valid JSON number; `Some` when it is a non-negative integer that
    /// fits a `u32` (the only numbers the chat layer reads are indexes;
    /// 32-bit arithmetic is what a 32-bit board does in one instruction).
    Number(Option<u32>),
}

/// Receives what the tokenizer finds, in document order. The tokenizer
/// takes it as `&mut dyn Handler`: one copy of the tokenizer is in the
/// image however many wire formats are built in (a copy per handler type
/// cost about 2.7 KB of Cortex-M flash each, for ~4% more instructions on
/// the per-chunk calls, which the transport's single clock reading per read
/// mostly won back). Returning an error
/// stops the tokenizer; it is passed on to the caller of `feed`. Nothing
/// inside a value the handler declined is reported.
pub(crate) trait Handler {
    /// An object (`true`) or array value starts; `Ok(false)` skips it whole
    /// (then no `end` comes for it either).
    fn begin(&mut self, object: bool) -> Result<bool, Stop>;
    /// The innermost open container (that was wanted) ends.
    fn end(&mut self) -> Result<(), Stop>;
    /// The key of the next member of the innermost object (`None`: longer
    /// than [`KEY_MAX`] bytes); `Ok(false)` skips the member's value.
    fn key(&mut self, key: Option<&[u8]>) -> Result<bool, Stop>;
    /// A string value starts; `Ok(false)` skips its text.
    fn str_begin(&mut self) -> Result<bool, Stop>;
    /// A piece of a wanted string's text, never empty, never splitting a
    /// character.
    fn str_chunk(&mut self, text: &str) -> Result<(), Stop>;
    /// A wanted string ends.
    fn str_end(&mut self) -> Result<(), Stop>;
    /// A null, boolean or number value.
    fn scalar(&mut self, value: Scalar) -> Result<(), Stop>;
    /// A container was just declined: should its raw text (exactly as it
    /// arrived, brackets included) be handed over instead? Then `raw`
    /// pieces follow and `raw_end` when it closes.
    #[cfg(feature = "provider-ollama")]
    fn capture(&mut self) -> bool {
        false
    }
    /// A piece of a captured container's raw text.
    #[cfg(feature = "provider-ollama")]
    fn raw(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        let _ = bytes;
        Ok(())
    }
    /// The captured container closed.
    #[cfg(feature = "provider-ollama")]
    fn raw_end(&mut self) -> Result<(), Stop> {
        Ok(())
    }
}

/// Where a number is in the JSON number grammar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Num {
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    ExpMark,
    ExpSign,
    Exp,
}

impl Num {
    /// The number may end here.
    fn complete(self) -> bool {
        matches!(self, Num::Zero | Num::Int | Num::Frac | Num::Exp)
    }

    /// The state after `b`, or `None` when `b` cannot continue the number
    /// (then it either ends the number or is an error).
    fn next(self, b: u8) -> Option<Num> {
        let digit = b.is_ascii_digit();
        match (self, b) {
            (Num::Minus, b'0') => Some(Num::Zero),
            (Num::Minus, _) | (Num::Int, _) if digit => Some(Num::Int),
            (Num::Zero | Num::Int, b'.') => Some(Num::Dot),
            (Num::Zero | Num::Int | Num::Frac, b'e' | b'E') => Some(Num::ExpMark),
            (Num::Dot | Num::Frac, _) if digit => Some(Num::Frac),
            (Num::ExpMark, b'+' | b'-') => Some(Num::ExpSign),
            (Num::ExpMark | Num::ExpSign | Num::Exp, _) if digit => Some(Num::Exp),
            _ => None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lit {
    True,
    False,
    Null,
}

impl Lit {
    fn of(b: u8) -> Option<Lit> {
        match b {
            b't' => Some(Lit::True),
            b'f' => Some(Lit::False),
            b'n' => Some(Lit::Null),
            _ => None,
        }
    }

    fn text(self) -> &'static [u8] {
        match self {
            Lit::True => b"true",
            Lit::False => b"false",
            Lit::Null => b"null",
        }
    }

    fn value(self) -> Scalar {
        match self {
            Lit::True => Scalar::Bool(true),
            Lit::False => Scalar::Bool(false),
            Lit::Null => Scalar::Null,
        }
    }
}

/// Kept small (a few bytes) because it is read and written for every byte
/// outside strings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Between top-level values: whitespace, a value, or the event's end.
    Top,
    /// A value must come (after `:`, or after `,` in an array).
    Value,
    /// Just after `[`: a value or `]`.
    FirstElem,
    /// Just after `{`: a key or `}`.
    FirstKey,
    /// After `,` in an object: a key.
    Key,
    /// After a key: `:`.
    Colon,
    /// After a value inside a container: `,` or the closing bracket.
    After,
    /// Inside a string: a key when `in_key`, else a value.
    Str,
    /// After a backslash inside a string.
    Esc,
    /// Inside `\uXXXX` after `n` hex digits; `high` is a preceding high
    /// surrogate waiting for its pair, or 0.
    Hex {
        n: u8,
        acc: u16,
        high: u16,
    },
    /// A high surrogate was decoded; a `\u` low surrogate should follow.
    High {
        unit: u16,
    },
    /// The backslash after a high surrogate.
    HighEsc {
        unit: u16,
    },
    Number(Num),
    /// Inside `true`/`false`/`null` after `pos` bytes.
    Literal {
        lit: Lit,
        pos: u8,
    },
    /// Inside the `[DONE]` marker after `matched` bytes.
    Done {
        matched: u8,
    },
    /// `[DONE]` was seen: the stream is over, nothing more is read.
    Finished,
}

pub(crate) struct Tokenizer {
    state: State,
    depth: u8,
    /// Bit `d` set: the container at depth `d + 1` is an object.
    stack: u32,
    /// Non-zero: inside a declined container that opened at this depth;
    /// nothing is reported until it closes.
    skip: u8,
    /// The handler declined the value of the current member.
    drop_value: bool,
    /// The open string is a key.
    in_key: bool,
    /// The open value string's text goes to the handler.
    emit: bool,
    key: [u8; KEY_MAX],
    /// The length of the key so far; `u8::MAX` once it is longer than
    /// [`KEY_MAX`] (then `key.get(..key_len)` is `None`, the key reported
    /// for too long).
    key_len: u8,
    /// Decoded text not yet handed over (always whole characters).
    pend: [u8; PEND],
    pend_len: u8,
    /// The start of a UTF-8 sequence cut by the end of the input.
    utf8: [u8; 4],
    utf8_len: u8,
    utf8_need: u8,
    /// The value of the number being read (see [`Scalar::Number`]).
    num: Option<u32>,
    /// The declined container being skipped is captured raw.
    #[cfg(feature = "provider-ollama")]
    capture: bool,
    /// Where the capture starts in the input of the current `feed`.
    #[cfg(feature = "provider-ollama")]
    cap_from: usize,
}

/// Whitespace between tokens (skipped where the expected byte is not
/// found). Not inlined: it is off the hot path, in four places.
#[inline(never)]
fn blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn hex(b: u8) -> Option<u16> {
    match b {
        b'0'..=b'9' => Some(u16::from(b - b'0')),
        b'a'..=b'f' => Some(u16::from(b - b'a') + 10),
        b'A'..=b'F' => Some(u16::from(b - b'A') + 10),
        _ => None,
    }
}

/// The length of the UTF-8 sequence that `lead` starts.
fn utf8_width(lead: u8) -> u8 {
    match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => 1,
    }
}

/// Is `text` well-formed JSON (values nested at most [`MAX_DEPTH`] deep)?
/// Without allocating: it tells a body that cJSON could not parse for lack
/// of memory from one that is not JSON (the MCP server answers the two
/// differently).
#[cfg(feature = "mcp-server")]
pub(crate) fn is_well_formed(text: &[u8]) -> bool {
    struct Accept;
    impl Handler for Accept {
        fn begin(&mut self, _object: bool) -> Result<bool, Stop> {
            Ok(true)
        }
        fn end(&mut self) -> Result<(), Stop> {
            Ok(())
        }
        fn key(&mut self, _key: Option<&[u8]>) -> Result<bool, Stop> {
            Ok(true)
        }
        fn str_begin(&mut self) -> Result<bool, Stop> {
            Ok(true)
        }
        fn str_chunk(&mut self, _text: &str) -> Result<(), Stop> {
            Ok(())
        }
        fn str_end(&mut self) -> Result<(), Stop> {
            Ok(())
        }
        fn scalar(&mut self, _value: Scalar) -> Result<(), Stop> {
            Ok(())
        }
    }
    let mut t = Tokenizer::new();
    t.feed(text, &mut Accept).is_ok() && t.end_event(&mut Accept).is_ok()
}

/// The entry of `table` named `key` (`None`: not in it, or longer than
/// [`KEY_MAX`]). The Anthropic and Ollama handlers keep their keys in such
/// a table: a `match` on byte-string literals compiles to a chain of
/// compares per handler (about 700 bytes of Cortex-M flash each), where
/// this loop is one small function and the tables are data. (OpenAI's
/// handler, the one a board usually runs, matches by frame and key: about
/// as small there, and 6% fewer instructions per stream than a table.)
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
pub(crate) fn lookup<T: Copy>(key: Option<&[u8]>, table: &[(&[u8], T)]) -> Option<T> {
    let key = key?;
    table
        .iter()
        .find(|(name, _)| *name == key)
        .map(|&(_, value)| value)
}

/// The position of the first `a` or `b` in `hay`. Most bytes of a chunk
/// pass through this scan (string text, SSE lines), so it tests a word at a
/// time: a byte equal to the needle becomes zero after the XOR, and the
/// classic has-zero-byte test flags it. Flags can be wrong only above a true
/// zero byte (borrow propagation), so the lowest flag is always right.
/// (A byte loop over the first 8 bytes before the words, for the many short
/// runs, was tried: 7% more instructions per stream.)
pub(crate) fn find2(hay: &[u8], a: u8, b: u8) -> Option<usize> {
    const W: usize = core::mem::size_of::<usize>();
    const LO: usize = usize::MAX / 255;
    const HI: usize = LO << 7;
    let (ma, mb) = (
        LO.wrapping_mul(usize::from(a)),
        LO.wrapping_mul(usize::from(b)),
    );
    let mut base = 0usize;
    let mut words = hay.chunks_exact(W);
    for word in &mut words {
        let Ok(bytes) = <[u8; W]>::try_from(word) else {
            break;
        };
        let w = usize::from_le_bytes(bytes);
        let (xa, xb) = (w ^ ma, w ^ mb);
        let found = ((xa.wrapping_sub(LO) & !xa) | (xb.wrapping_sub(LO) & !xb)) & HI;
        if found != 0 {
            return Some(base + (found.trailing_zeros() / 8) as usize);
        }
        base += W;
    }
    let tail = words.remainder();
    tail.iter()
        .position(|&c| c == a || c == b)
        .map(|p| base + p)
}

fn is_high(u: u16) -> bool {
    (0xD800..0xDC00).contains(&u)
}

fn is_low(u: u16) -> bool {
    (0xDC00..0xE000).contains(&u)
}

impl Tokenizer {
    pub(crate) const fn new() -> Self {
        Tokenizer {
            state: State::Top,
            depth: 0,
            stack: 0,
            skip: 0,
            drop_value: false,
            in_key: false,
            emit: false,
            key: [0; KEY_MAX],
            key_len: 0,
            pend: [0; PEND],
            pend_len: 0,
            utf8: [0; 4],
            utf8_len: 0,
            utf8_need: 0,
            num: None,
            #[cfg(feature = "provider-ollama")]
            capture: false,
            #[cfg(feature = "provider-ollama")]
            cap_from: 0,
        }
    }

    /// Between values: the event may end here without losing anything.
    pub(crate) fn is_idle(&self) -> bool {
        match self.state {
            State::Top | State::Finished => true,
            State::Number(n) => self.depth == 0 && n.complete(),
            _ => false,
        }
    }

    /// The event's data is over: a top-level number ends here, anything else
    /// still open is an error. The tokenizer is ready for the next event
    /// either way.
    pub(crate) fn end_event(&mut self, h: &mut dyn Handler) -> Result<(), Stop> {
        let idle = self.is_idle();
        let number = matches!(self.state, State::Number(_));
        let num = self.num;
        *self = Tokenizer::new();
        if !idle {
            return Err(INVALID);
        }
        if number {
            h.scalar(Scalar::Number(num))?;
        }
        Ok(())
    }

    /// Read `input`, the next piece of the event's data.
    pub(crate) fn feed(&mut self, input: &[u8], h: &mut dyn Handler) -> Result<(), Stop> {
        #[allow(unused_mut)]
        let mut result = self.read(input, h);
        #[cfg(feature = "provider-ollama")]
        if result.is_ok() && self.capture {
            // The capture goes on in the next piece.
            result = h.raw(input.get(self.cap_from..).unwrap_or_default());
            self.cap_from = 0;
        }
        // Hand over the text decoded so far: the sink shows it now, not when
        // the string ends. Also on error, and a failure to take that text
        // wins: it came first in the stream, so the outcome is the same as if
        // every piece had been handed over at once, however reads are split.
        self.flush(h)?;
        result
    }

    fn read<H: Handler + ?Sized>(&mut self, input: &[u8], h: &mut H) -> Result<(), Stop> {
        let mut i = 0usize;
        while let Some(&b) = input.get(i) {
            match self.state {
                State::Str => {
                    // The hot path: take the whole run up to the next quote
                    // or backslash at once.
                    let rest = input.get(i..).unwrap_or_default();
                    let stop = find2(rest, b'"', b'\\');
                    let run = match stop {
                        Some(n) => rest.get(..n).unwrap_or_default(),
                        None => rest,
                    };
                    let quote = stop.is_some_and(|n| rest.get(n) == Some(&b'"'));
                    if self.in_key {
                        if quote && self.key_len == 0 {
                            // The whole key in one piece: match it in place.
                            i = i.saturating_add(run.len()).saturating_add(1);
                            self.state = State::Colon;
                            self.report_key(Some(run).filter(|k| k.len() <= KEY_MAX), h)?;
                            if input.get(i) == Some(&b':') {
                                // Usually the colon follows at once; the
                                // value is read on the next round.
                                self.state = State::Value;
                                i = i.saturating_add(1);
                            }
                            continue;
                        }
                        self.key_bytes(run);
                    } else if self.emit {
                        self.raw(run, stop.is_none(), quote, h)?;
                    }
                    // (An unwanted string's text is neither checked nor
                    // decoded: nothing would use the result.)
                    let Some(n) = stop else { return Ok(()) };
                    i = i.saturating_add(n).saturating_add(1);
                    if quote {
                        self.string_end(h)?;
                    } else {
                        self.state = State::Esc;
                    }
                    continue;
                }
                State::Esc if !self.in_key && !self.emit => {
                    // Unwanted string: whatever is escaped, it is not the
                    // closing quote.
                    self.state = State::Str;
                }
                State::Esc => {
                    let c = match b {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            self.state = State::Hex {
                                n: 0,
                                acc: 0,
                                high: 0,
                            };
                            i += 1;
                            continue;
                        }
                        _ => return Err(INVALID),
                    };
                    self.state = State::Str;
                    self.out_char(c, h)?;
                }
                State::Hex { n, acc, high } => {
                    let d = hex(b).ok_or(INVALID)?;
                    let acc = (acc << 4) | d;
                    if n < 3 {
                        self.state = State::Hex {
                            n: n + 1,
                            acc,
                            high,
                        };
                    } else {
                        self.code_unit(acc, high, h)?;
                    }
                }
                State::High { unit } => {
                    if b == b'\\' {
                        self.state = State::HighEsc { unit };
                    } else {
                        // The pair never came: U+FFFD, then read `b` as
                        // ordinary string text.
                        self.state = State::Str;
                        self.out_char(char::REPLACEMENT_CHARACTER, h)?;
                        continue;
                    }
                }
                State::HighEsc { unit } => {
                    if b == b'u' {
                        self.state = State::Hex {
                            n: 0,
                            acc: 0,
                            high: unit,
                        };
                    } else {
                        // Another escape follows the lone high surrogate.
                        self.state = State::Esc;
                        self.out_char(char::REPLACEMENT_CHARACTER, h)?;
                        continue;
                    }
                }
                State::Number(num) => {
                    if b.is_ascii_digit() && matches!(num, Num::Int | Num::Frac | Num::Exp) {
                        // A run of digits at once.
                        let rest = input.get(i..).unwrap_or_default();
                        let n = rest
                            .iter()
                            .position(|c| !c.is_ascii_digit())
                            .unwrap_or(rest.len());
                        if num == Num::Int {
                            for &d in rest.get(..n).unwrap_or_default() {
                                self.num = self
                                    .num
                                    .and_then(|v| v.checked_mul(10))
                                    .and_then(|v| v.checked_add(u32::from(d - b'0')));
                            }
                        }
                        i = i.saturating_add(n);
                        continue;
                    }
                    match num.next(b) {
                        Some(next) => {
                            // A fraction, an exponent or a minus sign: not
                            // an index (an `Int` reached here follows `-`).
                            if matches!(next, Num::Dot | Num::ExpMark | Num::Int) {
                                self.num = None;
                            }
                            self.state = State::Number(next);
                        }
                        None if num.complete() => {
                            // `b` is not part of the number: the number ends
                            // and `b` is read again in the state after it.
                            self.value_done();
                            self.report_scalar(Scalar::Number(self.num), h)?;
                            continue;
                        }
                        None => return Err(INVALID),
                    }
                }
                State::Literal { lit, pos } => {
                    let text = lit.text();
                    if text.get(usize::from(pos)) != Some(&b) {
                        return Err(INVALID);
                    }
                    let pos = pos + 1;
                    if usize::from(pos) == text.len() {
                        self.value_done();
                        self.report_scalar(lit.value(), h)?;
                    } else {
                        self.state = State::Literal { lit, pos };
                    }
                }
                State::Done { matched } => {
                    let want = b"[DONE]";
                    if want.get(usize::from(matched)) != Some(&b) {
                        return Err(INVALID);
                    }
                    let matched = matched + 1;
                    if usize::from(matched) == want.len() {
                        self.state = State::Finished;
                        return Err(Stop::Done);
                    }
                    self.state = State::Done { matched };
                }
                State::Finished => return Ok(()),
                // Between tokens. Whitespace is looked for only where the
                // expected byte is not found (compact JSON has none), so
                // that these states share one dispatch with the others.
                // One place closes and one starts a value, so that each is
                // inlined here rather than called per token. A bracket of
                // the wrong kind (`]` right after `{`, `}` right after `[`)
                // is refused by `close` as by the value grammar.
                State::FirstKey | State::FirstElem | State::After if b == b'}' || b == b']' => {
                    self.close(b, input, i, h)?;
                }
                State::Top | State::Value | State::FirstElem => {
                    i = self.start_value(input, i, h)?;
                    continue;
                }
                State::FirstKey | State::Key => {
                    if b == b'"' {
                        self.key_start();
                    } else if !blank(b) {
                        return Err(INVALID);
                    }
                }
                State::Colon => {
                    if b == b':' {
                        self.state = State::Value;
                    } else if !blank(b) {
                        return Err(INVALID);
                    }
                }
                State::After => match b {
                    // (`After` is only ever inside a container.)
                    b',' if self.object_at(self.depth.wrapping_sub(1)) => {
                        // Usually the next key's quote follows at once.
                        if input.get(i.saturating_add(1)) == Some(&b'"') {
                            self.key_start();
                            i = i.saturating_add(1);
                        } else {
                            self.state = State::Key;
                        }
                    }
                    b',' => self.state = State::Value,
                    _ if blank(b) => {}
                    _ => return Err(INVALID),
                },
            }
            i += 1;
        }
        Ok(())
    }

    /// Is the container at depth `d + 1` an object? (`d` < [`MAX_DEPTH`].)
    #[inline]
    fn object_at(&self, d: u8) -> bool {
        self.stack.wrapping_shr(u32::from(d)) & 1 != 0
    }

    #[inline]
    fn value_done(&mut self) {
        self.state = if self.depth == 0 {
            State::Top
        } else {
            State::After
        };
    }

    #[inline]
    fn key_start(&mut self) {
        self.in_key = true;
        self.key_len = 0;
        self.state = State::Str;
    }

    /// Whether values are being reported (not inside a declined value).
    #[inline]
    fn live(&self) -> bool {
        self.skip == 0
    }

    #[inline]
    fn report_key<H: Handler + ?Sized>(
        &mut self,
        key: Option<&[u8]>,
        h: &mut H,
    ) -> Result<(), Stop> {
        if self.live() {
            self.drop_value = !h.key(key)?;
        }
        Ok(())
    }

    /// (Not inlined: three places report a scalar, and a call costs less
    /// flash than three copies for the few scalars a chunk has.)
    #[inline(never)]
    fn report_scalar<H: Handler + ?Sized>(&mut self, value: Scalar, h: &mut H) -> Result<(), Stop> {
        if self.live() && !core::mem::take(&mut self.drop_value) {
            h.scalar(value)?;
        }
        Ok(())
    }

    /// The value starting with `input[i]`; returns where reading goes on.
    #[inline(always)]
    fn start_value<H: Handler + ?Sized>(
        &mut self,
        input: &[u8],
        i: usize,
        h: &mut H,
    ) -> Result<usize, Stop> {
        let Some(&b) = input.get(i) else {
            return Ok(i);
        };
        let next = i.saturating_add(1);
        match b {
            b'{' | b'[' if b == b'{' || self.depth > 0 => {
                let object = b == b'{';
                self.push(object)?;
                self.state = if object {
                    State::FirstKey
                } else {
                    State::FirstElem
                };
                let wanted = self.live() && !core::mem::take(&mut self.drop_value);
                if self.live() && !(wanted && h.begin(object)?) {
                    self.skip = self.depth;
                    #[cfg(feature = "provider-ollama")]
                    if wanted && h.capture() {
                        self.capture = true;
                        self.cap_from = i;
                    }
                }
                if object && input.get(next) == Some(&b'"') {
                    self.key_start();
                    return Ok(next.saturating_add(1));
                }
            }
            b'[' => self.state = State::Done { matched: 1 },
            b'"' => {
                self.in_key = false;
                self.state = State::Str;
                let wanted = self.live() && !core::mem::take(&mut self.drop_value);
                self.emit = wanted && h.str_begin()?;
            }
            b'-' => {
                self.num = None;
                self.state = State::Number(Num::Minus);
            }
            b'0'..=b'9' => {
                self.num = Some(u32::from(b - b'0'));
                self.state = State::Number(if b == b'0' { Num::Zero } else { Num::Int });
            }
            _ => {
                let Some(lit) = Lit::of(b) else {
                    // Not a value: whitespace before it, or an error.
                    return if blank(b) { Ok(next) } else { Err(INVALID) };
                };
                let text = lit.text();
                let end = i.saturating_add(text.len());
                if input.get(i..end) == Some(text) {
                    // The whole literal is here.
                    self.value_done();
                    self.report_scalar(lit.value(), h)?;
                    return Ok(end);
                }
                self.state = State::Literal { lit, pos: 1 };
            }
        }
        Ok(next)
    }

    fn push(&mut self, object: bool) -> Result<(), Stop> {
        if self.depth >= MAX_DEPTH {
            return Err(Stop::Fail(StreamError::TooDeep));
        }
        let bit = 1u32 << self.depth;
        if object {
            self.stack |= bit;
        } else {
            self.stack &= !bit;
        }
        self.depth += 1;
        Ok(())
    }

    /// `b` (a closing bracket) is `input[i]`.
    #[inline(always)]
    fn close<H: Handler + ?Sized>(
        &mut self,
        b: u8,
        input: &[u8],
        i: usize,
        h: &mut H,
    ) -> Result<(), Stop> {
        #[cfg(not(feature = "provider-ollama"))]
        let _ = (input, i);
        let closing = self.depth;
        let Some(d) = closing.checked_sub(1) else {
            return Err(INVALID);
        };
        if (b == b'}') != self.object_at(d) {
            return Err(INVALID);
        }
        self.depth = d;
        self.value_done();
        if self.live() {
            h.end()
        } else {
            if closing == self.skip {
                self.skip = 0;
                #[cfg(feature = "provider-ollama")]
                if core::mem::take(&mut self.capture) {
                    let end = i.saturating_add(1);
                    h.raw(input.get(self.cap_from..end).unwrap_or_default())?;
                    self.cap_from = 0;
                    return h.raw_end();
                }
            }
            Ok(())
        }
    }

    fn string_end<H: Handler + ?Sized>(&mut self, h: &mut H) -> Result<(), Stop> {
        if self.in_key {
            self.state = State::Colon;
            if self.live() {
                let len = usize::from(self.key_len);
                let key = self.key.get(..len);
                self.drop_value = !h.key(key)?;
            }
            Ok(())
        } else {
            self.value_done();
            if self.emit {
                self.emit = false;
                self.flush(h)?;
                h.str_end()?;
            }
            Ok(())
        }
    }

    /// A complete `\uXXXX` unit `u`; `high` is a high surrogate before it,
    /// or 0.
    fn code_unit<H: Handler + ?Sized>(&mut self, u: u16, high: u16, h: &mut H) -> Result<(), Stop> {
        self.state = State::Str;
        if high != 0 {
            if is_low(u) {
                let c = 0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(u) - 0xDC00);
                let c = char::from_u32(c).unwrap_or(char::REPLACEMENT_CHARACTER);
                return self.out_char(c, h);
            }
            self.out_char(char::REPLACEMENT_CHARACTER, h)?;
        }
        if is_high(u) {
            self.state = State::High { unit: u };
            Ok(())
        } else {
            let c = char::from_u32(u32::from(u)).unwrap_or(char::REPLACEMENT_CHARACTER);
            self.out_char(c, h)
        }
    }

    fn out_char<H: Handler + ?Sized>(&mut self, c: char, h: &mut H) -> Result<(), Stop> {
        let mut buf = [0u8; 4];
        self.out_str(c.encode_utf8(&mut buf), false, h)
    }

    /// Key text that did not arrive in one piece. Keys are only compared
    /// with known ASCII names, so they are not checked for UTF-8.
    fn key_bytes(&mut self, bytes: &[u8]) {
        let start = usize::from(self.key_len);
        match self.key.get_mut(start..start.saturating_add(bytes.len())) {
            Some(dst) => {
                for (d, &c) in dst.iter_mut().zip(bytes) {
                    *d = c;
                }
                self.key_len = u8::try_from(start + bytes.len()).unwrap_or(u8::MAX);
            }
            None => self.key_len = u8::MAX,
        }
    }

    /// Decoded text of the open string (key or wanted value). `last`: the
    /// gathered text goes to the handler right after this piece (the string
    /// or the input ends), so when nothing is gathered yet the piece goes
    /// now, as it is: the same call, without the copy and the second UTF-8
    /// check of `flush`.
    fn out_str<H: Handler + ?Sized>(&mut self, s: &str, last: bool, h: &mut H) -> Result<(), Stop> {
        if s.contains('\0') {
            // Left out (see the module comment); the parts hold none.
            for part in s.split('\0') {
                self.out_str(part, false, h)?;
            }
            return Ok(());
        }
        if self.in_key {
            self.key_bytes(s.as_bytes());
            return Ok(());
        }
        if !self.emit || s.is_empty() {
            return Ok(());
        }
        let start = usize::from(self.pend_len);
        if !last || start > 0 {
            if let Some(dst) = self.pend.get_mut(start..start.saturating_add(s.len())) {
                for (d, &c) in dst.iter_mut().zip(s.as_bytes()) {
                    *d = c;
                }
                self.pend_len = u8::try_from(start + s.len()).unwrap_or(u8::MAX);
                return Ok(());
            }
            self.flush(h)?;
            if s.len() < PEND {
                return self.out_str(s, false, h);
            }
        }
        h.str_chunk(s)
    }

    /// Hand the gathered text to the handler.
    fn flush<H: Handler + ?Sized>(&mut self, h: &mut H) -> Result<(), Stop> {
        let len = usize::from(core::mem::take(&mut self.pend_len));
        if len == 0 {
            return Ok(());
        }
        // Only whole characters are gathered, so this always succeeds.
        match crate::base::text::utf8(self.pend.get(..len).unwrap_or_default()) {
            Ok(s) => h.str_chunk(s),
            Err(_) => Err(BAD_UTF8),
        }
    }

    /// Raw (unescaped) text of a wanted string. `at_end`: the run stops
    /// because the input does, so a UTF-8 sequence cut at its end is kept
    /// for the next piece; otherwise a quote (`quote`) or backslash follows
    /// and a cut sequence is invalid.
    fn raw<H: Handler + ?Sized>(
        &mut self,
        run: &[u8],
        at_end: bool,
        quote: bool,
        h: &mut H,
    ) -> Result<(), Stop> {
        let mut run = run;
        if self.utf8_len > 0 {
            // Complete the character that the previous piece cut.
            while self.utf8_len < self.utf8_need {
                let Some((&c, tail)) = run.split_first() else {
                    return if at_end { Ok(()) } else { Err(BAD_UTF8) };
                };
                let slot = self.utf8.get_mut(usize::from(self.utf8_len));
                match slot {
                    Some(slot) if c & 0xC0 == 0x80 => *slot = c,
                    _ => return Err(BAD_UTF8),
                }
                self.utf8_len += 1;
                run = tail;
            }
            let buf = self.utf8;
            let len = usize::from(self.utf8_len);
            self.utf8_len = 0;
            // Re-checked whole: catches overlong forms and surrogates.
            match crate::base::text::utf8(buf.get(..len).unwrap_or_default()) {
                Ok(s) => self.out_str(s, false, h)?,
                Err(_) => return Err(BAD_UTF8),
            }
        }
        match crate::base::text::utf8_split(run) {
            (s, None) => self.out_str(s, at_end || quote, h),
            (head, Some(e)) => {
                let tail = run.get(e.valid_up_to..).unwrap_or_default();
                self.out_str(head, false, h)?;
                if e.error_len.is_some() || !at_end {
                    return Err(BAD_UTF8);
                }
                // A valid but incomplete sequence (1 to 3 bytes) at the end.
                for (d, &c) in self.utf8.iter_mut().zip(tail) {
                    *d = c;
                }
                self.utf8_len = u8::try_from(tail.len()).unwrap_or(4);
                self.utf8_need = tail.first().map_or(1, |&c| utf8_width(c));
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::format;
    use alloc::string::String;
    use alloc::vec::Vec;

    /// Writes down what the tokenizer reports; wants every value.
    #[derive(Default)]
    struct Log(Vec<String>);

    impl Handler for Log {
        fn begin(&mut self, object: bool) -> Result<bool, Stop> {
            self.0.push(String::from(if object { "{" } else { "[" }));
            Ok(true)
        }
        fn end(&mut self) -> Result<(), Stop> {
            self.0.push(String::from("end"));
            Ok(())
        }
        fn key(&mut self, key: Option<&[u8]>) -> Result<bool, Stop> {
            self.0.push(match key {
                Some(k) => format!("key {}", String::from_utf8_lossy(k)),
                None => String::from("key (too long)"),
            });
            Ok(true)
        }
        fn str_begin(&mut self) -> Result<bool, Stop> {
            self.0.push(String::from("\""));
            Ok(true)
        }
        fn str_chunk(&mut self, text: &str) -> Result<(), Stop> {
            // Pieces joined: how text is cut is not what is compared here.
            match self.0.last_mut() {
                Some(last) if last.starts_with("text ") => last.push_str(text),
                _ => self.0.push(format!("text {text}")),
            }
            Ok(())
        }
        fn str_end(&mut self) -> Result<(), Stop> {
            self.0.push(String::from("\"end"));
            Ok(())
        }
        fn scalar(&mut self, value: Scalar) -> Result<(), Stop> {
            self.0.push(format!("{value:?}"));
            Ok(())
        }
    }

    /// The reports for `doc` fed in two pieces cut at `at`, and the result.
    fn feed_cut(doc: &[u8], at: usize) -> (Vec<String>, Result<(), Stop>) {
        let mut t = Tokenizer::new();
        let mut log = Log::default();
        let (a, b) = doc.split_at(at);
        let r = t
            .feed(a, &mut log)
            .and_then(|()| t.feed(b, &mut log))
            .and_then(|()| t.end_event(&mut log));
        (log.0, r)
    }

    /// Every cut of `doc` gives `want` (the reports) and `result`.
    fn every_cut(doc: &str, want: &[&str], result: Result<(), Stop>) {
        for at in 0..=doc.len() {
            let (got, r) = feed_cut(doc.as_bytes(), at);
            assert_eq!(r, result, "{doc:?} cut at {at}");
            if result.is_ok() {
                assert_eq!(got, want, "{doc:?} cut at {at}");
            }
        }
    }

    /// A key of `KEY_MAX` bytes is reported, one byte longer is reported
    /// as too long, wherever the input is cut; a short key after a long one
    /// is itself again.
    #[test]
    fn key_lengths_at_every_cut() {
        let k24 = "k".repeat(KEY_MAX);
        let k25 = "l".repeat(KEY_MAX + 1);
        let k40 = "m".repeat(40);
        let doc = format!(r#"{{"{k24}":1,"{k25}":2,"{k40}":3,"ab":4}}"#);
        let key24 = format!("key {k24}");
        let want = [
            "{",
            key24.as_str(),
            "Number(Some(1))",
            "key (too long)",
            "Number(Some(2))",
            "key (too long)",
            "Number(Some(3))",
            "key ab",
            "Number(Some(4))",
            "end",
        ];
        every_cut(&doc, &want, Ok(()));
    }

    /// Whitespace between any two tokens, empty containers, strings,
    /// literals and numbers before a blank: all read the same as without
    /// the blanks.
    #[test]
    fn blanks_between_every_token() {
        let want = [
            "{",
            "key a",
            "Number(Some(1))",
            "key b",
            "[",
            "Number(Some(2))",
            "Bool(true)",
            "{",
            "end",
            "[",
            "end",
            "end",
            "key c",
            "\"",
            "text x",
            "\"end",
            "key d",
            "Null",
            "end",
        ];
        every_cut(
            r#"{"a":1,"b":[2,true,{},[]],"c":"x","d":null}"#,
            &want,
            Ok(()),
        );
        every_cut(
            " \t{ \"a\" : 1 ,\r\n \"b\" : [ 2 , true , { } , [ ] ] , \"c\" : \"x\" , \"d\" : null } \n",
            &want,
            Ok(()),
        );
    }

    /// A closing bracket of the other kind, a comma with nothing after it
    /// or before it, two values without a comma, a key without its colon:
    /// refused, blanks or not, however the input is cut.
    #[test]
    fn wrong_structure_is_refused_at_every_cut() {
        for doc in [
            r#"{"a":[1}"#,
            r#"{"a":{]}"#,
            r#"{"a":[ }"#,
            r#"{"a":{ ]}"#,
            r#"{"a":[}"#,
            r#"{ ]"#,
            r#"{"a":1 ,}"#,
            r#"{"a":[1 ,]}"#,
            r#"{ ,"a":1}"#,
            r#"{"a":1 "b":2}"#,
            r#"{"a":[1 2]}"#,
            r#"{"a" 1}"#,
            r#"{"a":}"#,
            r#"{"a":1}}"#,
            r#"]"#,
        ] {
            every_cut(doc, &[], Err(INVALID));
        }
    }
}
