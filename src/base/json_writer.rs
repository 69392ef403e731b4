//! The JSON writer every request, reply and page is written with: bytes
//! go to a [`ByteSink`] as they are made (no document is built in memory),
//! and a [`ByteCounter`] pass gives the exact length first when a
//! `Content-Length` is needed.

/// Why a body could not be written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteError {
    /// The sink (the connection) failed.
    Sink,
    /// cJSON could not print a number (no memory).
    NoMemory,
    /// The trees nest deeper than the writer allows.
    TooDeep,
    /// A file sent inline could not be read, or is shorter than when its
    /// message was added (multimodal inline mode).
    File,
}

/// Where body bytes go.
pub trait ByteSink {
    fn put(&mut self, bytes: &[u8]) -> Result<(), WriteError>;
    /// The counting pass: count `n` bytes without being given them and
    /// return true. A sink that needs the bytes returns false (the default).
    fn skip(&mut self, _n: usize) -> bool {
        false
    }
    /// A file sent inline: `size` bytes of the file at `path`, written as
    /// base64 (the counting pass has [`ByteSink::skip`]ped them). Only a
    /// sink that can read files does this; the default refuses.
    fn put_file_base64(&mut self, _path: &core::ffi::CStr, _size: usize) -> Result<(), WriteError> {
        Err(WriteError::File)
    }
}

/// Counts what would be written (the `Content-Length` pass).
#[derive(Default)]
pub struct ByteCounter(pub usize);

impl ByteSink for ByteCounter {
    fn put(&mut self, bytes: &[u8]) -> Result<(), WriteError> {
        self.0 = self.0.saturating_add(bytes.len());
        Ok(())
    }
    fn skip(&mut self, n: usize) -> bool {
        self.0 = self.0.saturating_add(n);
        true
    }
}

/// A JSON string: quotes, backslashes and control characters escaped,
/// everything else (UTF-8 included) as is, in runs.
pub fn write_string(s: &[u8], out: &mut dyn ByteSink) -> Result<(), WriteError> {
    out.put(b"\"")?;
    let mut start = 0;
    for (i, &b) in s.iter().enumerate() {
        let escape: Option<&[u8]> = match b {
            b'"' => Some(b"\\\""),
            b'\\' => Some(b"\\\\"),
            b'\n' => Some(b"\\n"),
            b'\r' => Some(b"\\r"),
            b'\t' => Some(b"\\t"),
            0x08 => Some(b"\\b"),
            0x0C => Some(b"\\f"),
            0x00..=0x1F => None,
            _ => continue,
        };
        out.put(s.get(start..i).unwrap_or_default())?;
        match escape {
            Some(e) => out.put(e)?,
            None => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.put(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xF)],
                ])?;
            }
        }
        start = i + 1;
    }
    out.put(s.get(start..).unwrap_or_default())?;
    out.put(b"\"")
}

pub fn write_integer(v: i64, out: &mut dyn ByteSink) -> Result<(), WriteError> {
    if v < 0 {
        out.put(b"-")?;
    }
    let mut buf = [0u8; 20];
    out.put(crate::base::text::decimal(v.unsigned_abs(), &mut buf))
}

/// `v`'s value when it is a whole number of magnitude at most 2^53 (where
/// every integer is exact), read from its IEEE 754 bits: no float arithmetic,
/// which a board without a double-precision FPU pays for in helper code.
pub fn whole_number(v: f64) -> Option<i64> {
    let bits = v.to_bits();
    let negative = bits >> 63 != 0;
    let exponent = ((bits >> 52) & 0x7ff) as i32 - 1023;
    let fraction = bits & ((1u64 << 52) - 1);
    let magnitude = match exponent {
        // +0.0 and -0.0 (and subnormals, which are not whole unless zero).
        -1023 if fraction == 0 => 0,
        0..=52 => {
            let point = 52 - exponent as u32;
            if fraction & ((1u64 << point) - 1) != 0 {
                return None;
            }
            (fraction | 1 << 52) >> point
        }
        53 if fraction == 0 => 1 << 53,
        _ => return None,
    };
    Some(if negative {
        -(magnitude as i64)
    } else {
        magnitude as i64
    })
}

#[cfg(test)]
mod tests {
    use super::whole_number;

    /// The float arithmetic `whole_number` replaces, as the reference.
    fn by_float(v: f64) -> Option<i64> {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        (v.is_finite() && v == (v as i64) as f64 && v.abs() <= EXACT).then_some(v as i64)
    }

    #[test]
    fn whole_numbers_read_from_the_bits() {
        let exact = 9_007_199_254_740_992.0;
        for v in [
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.5,
            -2.5,
            3.0,
            1e15,
            123_456_789.0,
            exact,
            -exact,
            exact + 2.0,
            exact - 1.0,
            1e300,
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 4.0,
            f64::EPSILON,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            4_294_967_296.0,
            4_294_967_295.5,
        ] {
            assert_eq!(whole_number(v), by_float(v), "{v:e}");
        }
        // Every power of two and its neighbours.
        for e in -60..70 {
            let p = 2f64.powi(e);
            for v in [p, p + 1.0, p - 1.0, p * 3.0, -p, p + 0.5] {
                assert_eq!(whole_number(v), by_float(v), "{v:e}");
            }
        }
    }
}
