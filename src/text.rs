//! Decimal text without `core::fmt` (which costs flash on a board): the one
//! integer formatter of the library.

use core::ffi::CStr;

/// `n` in decimal, written at the end of `buf`; returns the digits.
pub fn decimal(mut n: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return &buf[i..];
        }
    }
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
            (u64::MAX, "18446744073709551615"),
        ] {
            let mut b = [0u8; 20];
            assert_eq!(decimal(n, &mut b), want.as_bytes());
            let mut c = [0u8; 21];
            assert_eq!(decimal_cstr(n, &mut c).to_bytes(), want.as_bytes());
        }
    }
}
