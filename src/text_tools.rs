//! Tools for models without function calling (`PKG_AGENT_TOOLS_TEXT`, cargo
//! feature `tools-text`): the calls travel as text in the answer.
//!
//! The system prompt describes the tools and asks for each call as one line
//!
//! ```text
//! <tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>
//! ```
//!
//! [`CallFilter`] takes the answer's fragments as they stream and passes on
//! only the text outside such calls (split anywhere, a marker included), so
//! the user never sees them; [`calls`] finds the calls in the whole answer.
//! Pure: no FFI, no allocation.

/// Where a call starts and ends.
pub const OPEN: &[u8] = b"<tool_call>";
pub const CLOSE: &[u8] = b"</tool_call>";

/// Hides the calls in a streamed answer.
pub struct CallFilter {
    /// Inside a call (after OPEN, before CLOSE).
    inside: bool,
    /// How many bytes of the marker being looked for have matched so far
    /// (held back: they may be the start of a marker or plain text).
    matched: usize,
    /// A newline right after a call is part of it.
    after_call: bool,
}

impl Default for CallFilter {
    fn default() -> Self {
        Self::new()
    }
}

impl CallFilter {
    pub const fn new() -> Self {
        CallFilter {
            inside: false,
            matched: 0,
            after_call: false,
        }
    }

    /// Feed one fragment; `out` gets the visible text (possibly in pieces).
    pub fn feed(&mut self, mut text: &[u8], out: &mut dyn FnMut(&[u8])) {
        while !text.is_empty() {
            // (Slices through `get`s: no range check that could fail.)
            if self.after_call {
                self.after_call = false;
                if let Some((b'\n', after)) = text.split_first() {
                    text = after;
                    continue;
                }
            }
            let marker = if self.inside { CLOSE } else { OPEN };
            if self.matched > 0 {
                // Continue a partial match.
                let want = marker.get(self.matched..).unwrap_or_default();
                let n = want.len().min(text.len());
                if text.get(..n) == want.get(..n) {
                    self.matched += n;
                    text = text.get(n..).unwrap_or_default();
                    if self.matched == marker.len() {
                        self.matched = 0;
                        self.after_call = self.inside;
                        self.inside = !self.inside;
                    }
                    continue;
                }
                // Not a marker after all: the held bytes were text.
                if !self.inside {
                    out(marker.get(..self.matched).unwrap_or_default());
                }
                self.matched = 0;
                continue;
            }
            // Up to the next possible marker start.
            let at = text.iter().position(|&b| b == b'<').unwrap_or(text.len());
            let (before, from) = text.split_at_checked(at).unwrap_or((text, &[]));
            if !self.inside && !before.is_empty() {
                out(before);
            }
            text = from;
            if let Some((_, after)) = text.split_first() {
                // A '<': start matching (the loop above checks the rest).
                self.matched = 1;
                text = after;
            }
        }
    }

    /// The answer ended: held bytes that were not a marker are text.
    pub fn finish(&mut self, out: &mut dyn FnMut(&[u8])) {
        if !self.inside && self.matched > 0 {
            out(OPEN.get(..self.matched).unwrap_or_default());
        }
        *self = Self::default();
    }
}

/// The calls in a whole answer: the text between each OPEN and the next
/// CLOSE (an unclosed call at the end counts too, as a model may stop there).
pub fn calls(answer: &[u8]) -> Calls<'_> {
    Calls { rest: answer }
}

pub struct Calls<'a> {
    rest: &'a [u8],
}

use crate::text::find;

impl<'a> Iterator for Calls<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        // (Slices through `get`: no range check that could fail.)
        let start = find(self.rest, OPEN)? + OPEN.len();
        let body = self.rest.get(start..).unwrap_or_default();
        match find(body, CLOSE) {
            Some(end) => {
                self.rest = body.get(end + CLOSE.len()..).unwrap_or_default();
                body.get(..end)
            }
            None => {
                self.rest = &[];
                Some(body)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    extern crate std;
    use std::vec::Vec;

    fn filtered(pieces: &[&[u8]]) -> Vec<u8> {
        let mut f = CallFilter::new();
        let mut out = Vec::new();
        for p in pieces {
            f.feed(p, &mut |b| out.extend_from_slice(b));
        }
        f.finish(&mut |b| out.extend_from_slice(b));
        out
    }

    #[test]
    fn calls_are_hidden_however_the_answer_is_split() {
        let table: &[(&[u8], &[u8])] = &[
            (b"plain text", b"plain text"),
            (b"a <b> c < d", b"a <b> c < d"),
            (
                b"<tool_call>{\"name\":\"add\"}</tool_call>\nThe sum",
                b"The sum",
            ),
            (b"first <tool_call>x</tool_call> then", b"first  then"),
            (b"<tool_call>a</tool_call>\n<tool_call>b</tool_call>\n", b""),
            (b"<tool_cal", b"<tool_cal"),
            (b"x <tool_call>unclosed", b"x "),
            (b"<tool_call>a < b</tool_cal></tool_call>ok", b"ok"),
            (b"<<tool_call>z</tool_call>", b"<"),
        ];
        for (whole, want) in table {
            assert_eq!(
                filtered(&[whole]),
                *want,
                "{:?}",
                std::str::from_utf8(whole)
            );
            // Every split in two, and byte by byte.
            for cut in 0..=whole.len() {
                assert_eq!(
                    filtered(&[&whole[..cut], &whole[cut..]]),
                    *want,
                    "cut {cut}"
                );
            }
            let bytes: Vec<&[u8]> = whole.chunks(1).collect();
            assert_eq!(filtered(&bytes), *want);
        }
    }

    #[test]
    fn calls_are_found() {
        let a = b"I will add.\n<tool_call>{\"a\":1}</tool_call>\n<tool_call>{\"b\":2}</tool_call>";
        let found: Vec<&[u8]> = calls(a).collect();
        assert_eq!(found, [&b"{\"a\":1}"[..], b"{\"b\":2}"]);
        assert_eq!(calls(b"no calls").count(), 0);
        let found: Vec<&[u8]> = calls(b"<tool_call>{\"c\":3}").collect();
        assert_eq!(found, [&b"{\"c\":3}"[..]]);
    }
}
