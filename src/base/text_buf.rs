//! A text built piece by piece that remembers running out of memory: once a
//! piece did not fit, the text is marked and later pieces are skipped, so
//! the caller checks once, at the end, instead of after every piece.

use alloc::vec::Vec;

#[derive(Default)]
pub struct TextBuf {
    pub bytes: Vec<u8>,
    /// A piece did not fit: the text is incomplete.
    pub oom: bool,
}

impl TextBuf {
    pub const fn new() -> Self {
        TextBuf {
            bytes: Vec::new(),
            oom: false,
        }
    }

    pub fn push(&mut self, piece: &[u8]) -> &mut Self {
        if !self.oom && super::fallible::extend(&mut self.bytes, piece).is_err() {
            self.oom = true;
        }
        self
    }

    pub fn push_str(&mut self, piece: &str) -> &mut Self {
        self.push(piece.as_bytes())
    }

    pub fn push_num(&mut self, n: usize) -> &mut Self {
        let mut digits = [0u8; 20];
        self.push(super::text::decimal(n as u64, &mut digits))
    }

    pub fn say(&mut self, pieces: &[&[u8]]) -> &mut Self {
        for piece in pieces {
            self.push(piece);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_join_and_numbers_are_decimal() {
        let mut t = TextBuf::new();
        t.push_str("a").push(b"b").push_num(1203).say(&[b"-", b"c"]);
        assert_eq!(t.bytes, b"ab1203-c");
        assert!(!t.oom);
    }

    #[test]
    fn after_out_of_memory_pieces_are_skipped() {
        let mut t = TextBuf::new();
        t.push(b"kept");
        t.oom = true;
        t.push(b"dropped").push_num(7);
        assert_eq!(t.bytes, b"kept");
    }
}
