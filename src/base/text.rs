//! Text helpers small enough for a board: decimal without `core::fmt` (the
//! one integer formatter of the library), the one UTF-8 check (core's
//! `from_utf8` is several times larger), and the byte-slice helpers that
//! keep the library free of panic paths (see "Slice helpers" below).

use core::ffi::CStr;

/// Where and how bytes stop being UTF-8, as core's `Utf8Error` tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Utf8Stop {
    /// Length of the longest valid prefix.
    pub valid_up_to: usize,
    /// Bytes of the invalid sequence there; `None`: the input ends inside a
    /// sequence that could still be completed.
    pub error_len: Option<u8>,
}

/// `b` as text when it is well-formed UTF-8 (RFC 3629: no overlong forms,
/// no surrogates, nothing above U+10FFFF), else where it stops being so.
pub fn utf8(b: &[u8]) -> Result<&str, Utf8Stop> {
    match utf8_split(b) {
        (text, None) => Ok(text),
        (_, Some(stop)) => Err(stop),
    }
}

/// The longest valid UTF-8 prefix of `b` as text.
pub fn utf8_prefix(b: &[u8]) -> &str {
    utf8_split(b).0
}

/// The longest well-formed prefix of `b` as text, and where and how the
/// rest stops being UTF-8 (`None`: all of `b` is text). One pass: the
/// prefix is not checked again.
pub fn utf8_split(b: &[u8]) -> (&str, Option<Utf8Stop>) {
    let valid = |upto: usize| {
        // SAFETY: every byte of `b` before `upto` was checked against RFC
        // 3629's table of well-formed sequences below, which is exactly what
        // `str` requires; `upto` never exceeds `b.len()`.
        unsafe { core::str::from_utf8_unchecked(b.get(..upto).unwrap_or_default()) }
    };
    let mut i = 0;
    while let Some(&lead) = b.get(i) {
        if lead < 0x80 {
            i += 1;
            continue;
        }
        // Width and the range of the second byte (RFC 3629, section 4).
        let (width, low, high) = match lead {
            0xC2..=0xDF => (2, 0x80, 0xBF),
            0xE0 => (3, 0xA0, 0xBF),
            0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
            0xED => (3, 0x80, 0x9F),
            0xF0 => (4, 0x90, 0xBF),
            0xF1..=0xF3 => (4, 0x80, 0xBF),
            0xF4 => (4, 0x80, 0x8F),
            _ => {
                let stop = Utf8Stop {
                    valid_up_to: i,
                    error_len: Some(1),
                };
                return (valid(i), Some(stop));
            }
        };
        let mut k = 1;
        while k < width {
            let error_len = match b.get(i + k) {
                None => None,
                Some(&c) => {
                    let (lo, hi) = if k == 1 { (low, high) } else { (0x80, 0xBF) };
                    if (lo..=hi).contains(&c) {
                        k += 1;
                        continue;
                    }
                    Some(k as u8)
                }
            };
            let stop = Utf8Stop {
                valid_up_to: i,
                error_len,
            };
            return (valid(i), Some(stop));
        }
        i += width;
    }
    (valid(b.len()), None)
}

/// `n` in decimal, written at the end of `buf`; returns the digits.
///
/// `n` is divided by ten as four 16-bit limbs in `u32` steps: a 32-bit board
/// has no 64-bit divide, and the compiler's helper for one costs flash.
pub fn decimal(n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let (hi, lo) = ((n >> 32) as u32, n as u32);
    let mut limbs = [hi >> 16, hi & 0xffff, lo >> 16, lo & 0xffff];
    let mut i = buf.len();
    while i > 0 {
        let mut rem = 0u32;
        for limb in limbs.iter_mut() {
            let cur = (rem << 16) | *limb;
            *limb = cur / 10;
            rem = cur % 10;
        }
        i -= 1;
        if let Some(digit) = buf.get_mut(i) {
            *digit = b'0' + rem as u8;
        }
        if limbs == [0; 4] {
            break;
        }
    }
    buf.get(i..).unwrap_or_default()
}

/// `n` in hexadecimal, at least four digits (as mbedTLS's error codes are
/// written), at the end of `buf`; returns the digits.
pub fn hex(n: u32, buf: &mut [u8; 8]) -> &[u8] {
    let mut i = buf.len();
    let mut rest = n;
    while i > 0 {
        i -= 1;
        if let Some(digit) = buf.get_mut(i) {
            *digit = b"0123456789abcdef"
                .get((rest & 0xf) as usize)
                .copied()
                .unwrap_or(b'0');
        }
        rest >>= 4;
        if rest == 0 && i <= buf.len() - 4 {
            break;
        }
    }
    buf.get(i..).unwrap_or_default()
}

/// A decimal number of at most `max_digits` (at most 9, so it fits 32 bits)
/// ASCII digits, nothing else; `None` otherwise.
pub fn parse_decimal(v: &[u8], max_digits: usize) -> Option<usize> {
    if v.is_empty() || v.len() > max_digits.min(9) || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(v.iter().fold(0usize, |n, &d| n * 10 + (d - b'0') as usize))
}

/// `given == expected` in a time that depends on `expected`'s length only:
/// a secret (a token) compared byte by byte until the first difference
/// would tell an attacker how much of a guess was right.
pub fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    let mut differ = (given.len() != expected.len()) as u8;
    for (i, &e) in expected.iter().enumerate() {
        differ |= e ^ given.get(i).copied().unwrap_or(!e);
    }
    differ == 0
}

/// `n` in decimal as a C string (for a `"%s"` argument).
pub fn decimal_cstr(n: u64, buf: &mut [u8; 21]) -> &CStr {
    let mut digits = [0u8; 20];
    let d = decimal(n, &mut digits);
    // At most 20 digits into 21 bytes, zero-filled behind them (no indexing:
    // no bounds-check panic path).
    *buf = [0; 21];
    for (b, &digit) in buf.iter_mut().zip(d) {
        *b = digit;
    }
    CStr::from_bytes_until_nul(buf).unwrap_or(c"0")
}

// Slice helpers with no panic path. Indexing, `copy_from_slice`,
// `copy_within`, `strip_suffix`, `windows` and `chunks` each keep a path to
// a bounds-check panic that the compiler cannot always prove dead; these are
// written with `get`s and zips, so every image of the library links no panic
// code at all (tests/cross checks that) and no input can reach one.

/// Copy as much of `src` as fits at the start of `dst`; the count.
pub fn copy_prefix(dst: &mut [u8], src: &[u8]) -> usize {
    let mut n = 0;
    for (d, s) in dst.iter_mut().zip(src) {
        *d = *s;
        n += 1;
    }
    n
}

/// `b` after `prefix`, if it starts with it (core's `strip_prefix` keeps a
/// panic path through `split_at`).
pub fn strip_prefix<'a>(b: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    if b.get(..prefix.len())? == prefix {
        b.get(prefix.len()..)
    } else {
        None
    }
}

/// `b` before `suffix`, if it ends with it.
pub fn strip_suffix<'a>(b: &'a [u8], suffix: &[u8]) -> Option<&'a [u8]> {
    let cut = b.len().checked_sub(suffix.len())?;
    if b.get(cut..)? == suffix {
        b.get(..cut)
    } else {
        None
    }
}

/// `b` without one trailing `last` byte, if it ends with one.
pub fn strip_last(b: &[u8], last: u8) -> &[u8] {
    match b.split_last() {
        Some((&end, before)) if end == last => before,
        _ => b,
    }
}

/// Where `needle` (not empty) first starts in `hay`.
pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let first = *needle.first()?;
    let mut from = 0;
    while let Some(rest) = hay.get(from..) {
        let at = from + rest.iter().position(|&b| b == first)?;
        if hay.get(at..at.saturating_add(needle.len())) == Some(needle) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Remove `v[from..to]`, moving the rest down (a range outside `v` removes
/// what of it is inside).
pub fn remove_range<T: Copy>(v: &mut alloc::vec::Vec<T>, from: usize, to: usize) {
    let gone = to.saturating_sub(from);
    let mut at = from;
    while let Some(&item) = v.get(at.saturating_add(gone)) {
        if let Some(slot) = v.get_mut(at) {
            *slot = item;
        }
        at += 1;
    }
    v.truncate(at.min(v.len()));
}

/// Borrow a C string argument; `None` for NULL.
///
/// # Safety
/// `p` is NULL or NUL-terminated and outlives `'a`.
pub unsafe fn cstr_arg<'a>(p: *const core::ffi::c_char) -> Option<&'a core::ffi::CStr> {
    if p.is_null() {
        None
    } else {
        // SAFETY: `p` is non-NULL here, and the contract above makes it
        // NUL-terminated and alive for `'a`.
        Some(unsafe { core::ffi::CStr::from_ptr(p) })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn strip_prefix_and_suffix() {
        use super::{strip_prefix, strip_suffix};
        assert_eq!(strip_prefix(b"```json", b"```"), Some(&b"json"[..]));
        assert_eq!(strip_prefix(b"``", b"```"), None);
        assert_eq!(strip_prefix(b"abc", b"x"), None);
        assert_eq!(strip_prefix(b"abc", b""), Some(&b"abc"[..]));
        assert_eq!(strip_suffix(b"x```", b"```"), Some(&b"x"[..]));
        assert_eq!(strip_suffix(b"``", b"```"), None);
        assert_eq!(strip_suffix(b"abc", b"b"), None);
    }

    #[test]
    fn hex_has_at_least_four_digits() {
        let mut buf = [0u8; 8];
        assert_eq!(super::hex(0x7100, &mut buf), b"7100");
        assert_eq!(super::hex(0x50, &mut buf), b"0050");
        assert_eq!(super::hex(0, &mut buf), b"0000");
        assert_eq!(super::hex(0xdead_beef, &mut buf), b"deadbeef");
    }

    use super::*;

    #[test]
    fn slice_helpers() {
        let mut buf = [0u8; 4];
        assert_eq!(copy_prefix(&mut buf, b"ab"), 2);
        assert_eq!(&buf, b"ab\0\0");
        assert_eq!(copy_prefix(&mut buf, b"abcdef"), 4);
        assert_eq!(&buf, b"abcd");
        assert_eq!(copy_prefix(&mut [], b"x"), 0);
        assert_eq!(strip_last(b"line\r", b'\r'), b"line");
        assert_eq!(strip_last(b"line", b'\r'), b"line");
        assert_eq!(strip_last(b"", b'/'), b"");
        assert_eq!(find(b"http://a/b", b"://"), Some(4));
        assert_eq!(find(b"a::/b://", b"://"), Some(5));
        assert_eq!(find(b"ab", b"abc"), None);
        assert_eq!(find(b"ab", b""), None);
        assert_eq!(find(b"head\r\n\r\nbody", b"\r\n\r\n"), Some(4));
        let mut v = b"notes|gone|kept".to_vec();
        remove_range(&mut v, 6, 11);
        assert_eq!(v, b"notes|kept");
        remove_range(&mut v, 5, 99);
        assert_eq!(v, b"notes");
        remove_range(&mut v, 2, 2);
        assert_eq!(v, b"notes");
    }

    #[test]
    fn decimals_parsed_and_secrets_compared() {
        assert_eq!(parse_decimal(b"4096", 9), Some(4096));
        assert_eq!(parse_decimal(b"123456789", 9), Some(123_456_789));
        assert_eq!(parse_decimal(b"1234567890", 12), None);
        assert_eq!(parse_decimal(b"1234567", 6), None);
        assert_eq!(parse_decimal(b"", 9), None);
        assert_eq!(parse_decimal(b"12a", 9), None);
        assert_eq!(parse_decimal(b"-1", 9), None);
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
        assert!(!same_secret(b"abcd", b"abc"));
        assert!(!same_secret(b"", b"abc"));
        assert!(same_secret(b"", b""));
    }

    /// `utf8` says what core's `from_utf8` says, for every input tried.
    fn same_as_core(b: &[u8]) {
        let want = core::str::from_utf8(b).map_err(|e| Utf8Stop {
            valid_up_to: e.valid_up_to(),
            error_len: e.error_len().map(|n| n as u8),
        });
        assert_eq!(utf8(b), want, "{b:02x?}");
    }

    #[test]
    fn utf8_agrees_with_core() {
        // Every one- and two-byte input, and every lead byte with each
        // second byte and a third and fourth continuation (or none).
        for a in 0..=255u8 {
            same_as_core(&[a]);
            for b in 0..=255u8 {
                same_as_core(&[a, b]);
                same_as_core(&[a, b, 0x80]);
                same_as_core(&[a, b, 0xBF, 0x80]);
                same_as_core(&[b'x', a, b, 0x8F, 0x41]);
            }
        }
        // Random mixtures of text and noise.
        let mut seed = 0x2545_f491_u32;
        for _ in 0..20_000 {
            let mut buf = [0u8; 12];
            for byte in buf.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                *byte = match seed % 4 {
                    0 => b'a',
                    1 => 0x80 | (seed >> 8) as u8 & 0x3F,
                    _ => (seed >> 16) as u8,
                };
            }
            same_as_core(&buf);
        }
        for s in [
            "",
            "plain",
            "h\u{e9}llo",
            "\u{20ac}",
            "\u{1F600}!",
            "\u{10FFFF}",
        ] {
            same_as_core(s.as_bytes());
        }
        assert_eq!(utf8_prefix(b"ab\xE2\x82"), "ab");
    }

    #[test]
    fn decimal_table() {
        for (n, want) in [
            (0u64, "0"),
            (7, "7"),
            (10, "10"),
            (4096, "4096"),
            (65_535, "65535"),
            (65_536, "65536"),
            (u32::MAX as u64, "4294967295"),
            (1 << 32, "4294967296"),
            (9_007_199_254_740_993, "9007199254740993"),
            (u64::MAX, "18446744073709551615"),
        ] {
            let mut b = [0u8; 20];
            assert_eq!(decimal(n, &mut b), want.as_bytes());
            let mut c = [0u8; 21];
            assert_eq!(decimal_cstr(n, &mut c).to_bytes(), want.as_bytes());
        }
        // Against core's formatter, over every magnitude.
        let mut n = 1u64;
        while let Some(next) = n.checked_mul(3) {
            for m in [n - 1, n, n + 1] {
                let mut b = [0u8; 20];
                assert_eq!(decimal(m, &mut b), m.to_string().as_bytes());
            }
            n = next;
        }
    }
}
