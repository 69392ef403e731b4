//! Decimal text without `core::fmt` (which costs flash on a board): the one
//! integer formatter of the library.

use core::ffi::CStr;

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
        buf[i] = b'0' + rem as u8;
        if limbs == [0; 4] {
            break;
        }
    }
    &buf[i..]
}

/// `n` in decimal as a C string (for a `"%s"` argument).
pub fn decimal_cstr(n: u64, buf: &mut [u8; 21]) -> &CStr {
    let mut digits = [0u8; 20];
    let d = decimal(n, &mut digits);
    buf[..d.len()].copy_from_slice(d);
    buf[d.len()] = 0;
    CStr::from_bytes_until_nul(&buf[..=d.len()]).unwrap_or(c"0")
}

#[cfg(test)]
mod tests {
    use super::*;

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
