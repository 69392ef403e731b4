//! A small line editor for the CLI channel: pure logic, no FFI. It takes the
//! bytes a terminal sends and produces what to echo, so the channel only has
//! to move bytes between the console device and here.
//!
//! Keys: printable text (UTF-8 included), Backspace/DEL, Left/Right,
//! Up/Down through the history, Home/End, Enter submits, Ctrl-D on an empty
//! line leaves, Ctrl-C clears the line.

use crate::base::fallible;
use alloc::vec::Vec;

/// Longest line accepted; more typing rings the bell.
pub const MAX_LINE: usize = 512;
/// Lines remembered for Up/Down.
pub const HISTORY: usize = 8;

#[derive(Debug, PartialEq, Eq)]
pub enum Event {
    /// Nothing to act on yet.
    Pending,
    /// Enter: the line (not empty).
    Submit(Vec<u8>),
    /// Ctrl-D on an empty line.
    Leave,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Escape {
    None,
    Esc,
    Csi,
}

pub struct LineEditor {
    line: Vec<u8>,
    cursor: usize,
    history: Vec<Vec<u8>>,
    /// Position while browsing the history (`history.len()` = the new line).
    browse: usize,
    /// The line being typed before browsing started.
    draft: Vec<u8>,
    escape: Escape,
    last_was_cr: bool,
}

impl Default for LineEditor {
    fn default() -> Self {
        Self::new()
    }
}

/// Start of the UTF-8 character that ends just before `at`.
fn prev_char_start(s: &[u8], at: usize) -> usize {
    let mut i = at.saturating_sub(1);
    while i > 0 && s.get(i).is_some_and(|&b| b & 0xC0 == 0x80) {
        i -= 1;
    }
    i
}

/// End of the UTF-8 character that starts at `at`.
fn next_char_end(s: &[u8], at: usize) -> usize {
    let mut i = (at + 1).min(s.len());
    while s.get(i).is_some_and(|&b| b & 0xC0 == 0x80) {
        i += 1;
    }
    i
}

/// Columns a byte run takes on the terminal (one per character).
fn width(s: &[u8]) -> usize {
    s.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

impl LineEditor {
    pub const fn new() -> Self {
        LineEditor {
            line: Vec::new(),
            cursor: 0,
            history: Vec::new(),
            browse: 0,
            draft: Vec::new(),
            escape: Escape::None,
            last_was_cr: false,
        }
    }

    /// The line as typed so far.
    pub fn line(&self) -> &[u8] {
        &self.line
    }

    /// Handle one byte; `echo` receives what the terminal must show.
    pub fn feed(&mut self, byte: u8, echo: &mut dyn FnMut(&[u8])) -> Event {
        let was_cr = core::mem::replace(&mut self.last_was_cr, false);
        match self.escape {
            Escape::Esc => {
                self.escape = if byte == b'[' || byte == b'O' {
                    Escape::Csi
                } else {
                    Escape::None
                };
                return Event::Pending;
            }
            Escape::Csi => {
                if byte.is_ascii_digit() || byte == b';' {
                    return Event::Pending;
                }
                self.escape = Escape::None;
                match byte {
                    b'D' => self.left(echo),
                    b'C' => self.right(echo),
                    b'A' => self.history_step(true, echo),
                    b'B' => self.history_step(false, echo),
                    b'H' => {
                        while self.cursor > 0 {
                            self.left(echo)
                        }
                    }
                    b'F' => {
                        while self.cursor < self.line.len() {
                            self.right(echo)
                        }
                    }
                    _ => {}
                }
                return Event::Pending;
            }
            Escape::None => {}
        }
        match byte {
            0x1B => self.escape = Escape::Esc,
            b'\r' | b'\n' => {
                if byte == b'\n' && was_cr {
                    return Event::Pending; // the LF of a CRLF
                }
                self.last_was_cr = byte == b'\r';
                echo(b"\r\n");
                let line = core::mem::take(&mut self.line);
                self.cursor = 0;
                self.browse = self.history.len();
                if line.iter().all(|b| b.is_ascii_whitespace()) {
                    return Event::Submit(Vec::new());
                }
                self.remember(&line);
                return Event::Submit(line);
            }
            // Ctrl-D on a non-empty line does nothing (the `_` arm).
            0x04 if self.line.is_empty() => return Event::Leave,
            0x03 => {
                echo(b"^C\r\n");
                self.line.clear();
                self.cursor = 0;
            }
            0x08 | 0x7F => self.backspace(echo),
            b if b >= 0x20 => self.insert(b, echo),
            _ => {}
        }
        Event::Pending
    }

    fn remember(&mut self, line: &[u8]) {
        if !cfg!(feature = "cli-history") {
            return; // built without history (PKG_AGENT_CLI_HISTORY off): its code goes
        }
        if self.history.last().is_some_and(|l| l.as_slice() == line) {
            return;
        }
        let Ok(copy) = fallible::copy_of(line) else {
            return; // no memory: simply not remembered
        };
        if self.history.len() == HISTORY {
            // The oldest goes (a rotation and a pop: `remove` keeps a panic
            // path for an index it cannot see is in range).
            self.history.rotate_left(1);
            self.history.pop();
        }
        if fallible::push(&mut self.history, copy).is_err() {
            return;
        }
        self.browse = self.history.len();
    }

    fn insert(&mut self, b: u8, echo: &mut dyn FnMut(&[u8])) {
        if self.line.len() >= MAX_LINE || fallible::push(&mut self.line, b).is_err() {
            echo(b"\x07");
            return;
        }
        if let Some(after) = self.line.get_mut(self.cursor..).filter(|a| !a.is_empty()) {
            after.rotate_right(1); // the new byte moves to the cursor
        }
        self.cursor += 1;
        // Echo once a character is complete (a continuation byte completes
        // nothing on its own; the lead byte alone would show garbage).
        let start = prev_char_start(&self.line, self.cursor);
        let end = next_char_end(&self.line, start);
        if self.cursor == end {
            echo(self.line.get(start..).unwrap_or_default());
            self.back(
                width(self.line.get(self.cursor..).unwrap_or_default()),
                echo,
            );
        }
    }

    fn backspace(&mut self, echo: &mut dyn FnMut(&[u8])) {
        if self.cursor == 0 {
            return;
        }
        let start = prev_char_start(&self.line, self.cursor);
        // The bytes after the cursor move back over the character, through
        // `get`s (`drain` would keep a panic path for a bad range).
        let gone = self.cursor - start;
        let mut to = start;
        while let Some(&b) = self.line.get(to + gone) {
            if let Some(d) = self.line.get_mut(to) {
                *d = b;
            }
            to += 1;
        }
        self.line.truncate(to);
        self.cursor = start;
        echo(b"\x08");
        echo(self.line.get(self.cursor..).unwrap_or_default());
        echo(b" \x08");
        self.back(
            width(self.line.get(self.cursor..).unwrap_or_default()),
            echo,
        );
    }

    fn left(&mut self, echo: &mut dyn FnMut(&[u8])) {
        if self.cursor > 0 {
            self.cursor = prev_char_start(&self.line, self.cursor);
            echo(b"\x08");
        }
    }

    fn right(&mut self, echo: &mut dyn FnMut(&[u8])) {
        if self.cursor < self.line.len() {
            let end = next_char_end(&self.line, self.cursor);
            echo(self.line.get(self.cursor..end).unwrap_or_default());
            self.cursor = end;
        }
    }

    fn back(&self, columns: usize, echo: &mut dyn FnMut(&[u8])) {
        for _ in 0..columns {
            echo(b"\x08");
        }
    }

    /// Replace the visible line with `text`.
    fn replace_line(&mut self, text: &[u8], echo: &mut dyn FnMut(&[u8])) {
        self.back(
            width(self.line.get(..self.cursor).unwrap_or_default()),
            echo,
        );
        let old_width = width(&self.line);
        self.line.clear();
        if fallible::extend(&mut self.line, text).is_err() {
            return;
        }
        self.cursor = self.line.len();
        echo(&self.line);
        let new_width = width(&self.line);
        if old_width > new_width {
            for _ in new_width..old_width {
                echo(b" ");
            }
            self.back(old_width - new_width, echo);
        }
    }

    fn history_step(&mut self, up: bool, echo: &mut dyn FnMut(&[u8])) {
        if !cfg!(feature = "cli-history") {
            return;
        }
        if up {
            if self.browse == 0 {
                return;
            }
            if self.browse == self.history.len() {
                self.draft.clear();
                // Without memory the draft is simply lost.
                let _ = fallible::extend(&mut self.draft, &self.line);
            }
            self.browse -= 1;
        } else {
            if self.browse >= self.history.len() {
                return;
            }
            self.browse += 1;
        }
        let text = if self.browse == self.history.len() {
            core::mem::take(&mut self.draft)
        } else {
            match self.history.get(self.browse).map(|l| fallible::copy_of(l)) {
                Some(Ok(copy)) => copy,
                _ => return,
            }
        };
        self.replace_line(&text, echo);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ed: &mut LineEditor, keys: &[u8]) -> (Vec<Event>, Vec<u8>) {
        let mut shown = Vec::new();
        let mut events = Vec::new();
        for &k in keys {
            let e = ed.feed(k, &mut |b| shown.extend_from_slice(b));
            if e != Event::Pending {
                events.push(e);
            }
        }
        (events, shown)
    }

    #[test]
    fn typing_editing_and_history() {
        let cases: &[(&[u8], &[u8])] = &[
            (b"hello\r", b"hello"),
            (b"helo\x1b[D\x1b[Dl\r", b"hello"), // insert in the middle
            (b"hellox\x7f\r", b"hello"),        // DEL
            (b"hellxo\x1b[D\x08\r", b"hello"),  // backspace before the cursor
            ("h\u{e9}llo\x7f\x7f\x7f\x7f".as_bytes(), b""), // not submitted yet
            // up recalls the last line (without the history, does nothing)
            (
                b"\x1b[Ahi\r",
                if cfg!(feature = "cli-history") {
                    &b"hellohi"[..]
                } else {
                    &b"hi"[..]
                },
            ),
        ];
        let mut ed = LineEditor::new();
        for (keys, want) in cases {
            let (events, _) = run(&mut ed, keys);
            if want.is_empty() {
                assert!(events.is_empty());
                // clear what the unfinished case left
                run(&mut ed, b"\x7f\x7f\x7f");
                assert_eq!(ed.line(), b"");
                continue;
            }
            assert_eq!(
                events,
                vec![Event::Submit(want.to_vec())],
                "keys {:?}",
                keys
            );
        }
    }

    #[test]
    fn utf8_backspace_removes_whole_characters() {
        let mut ed = LineEditor::new();
        run(&mut ed, "a\u{4e2d}\u{6587}".as_bytes());
        run(&mut ed, b"\x7f");
        assert_eq!(ed.line(), "a\u{4e2d}".as_bytes());
        let (_, shown) = run(&mut ed, b"\x1b[D\x1b[D");
        assert_eq!(shown, b"\x08\x08");
    }

    #[cfg(feature = "cli-history")]
    #[test]
    fn the_history_keeps_the_last_lines_only() {
        let mut ed = LineEditor::new();
        for i in 0..HISTORY + 3 {
            run(&mut ed, format!("line {i}\r").as_bytes());
        }
        // Up past the oldest stays on the oldest kept: line 3 of 0..=10.
        for _ in 0..HISTORY + 2 {
            run(&mut ed, b"\x1b[A");
        }
        assert_eq!(ed.line(), b"line 3");
        run(&mut ed, b"\x1b[B");
        assert_eq!(ed.line(), b"line 4");
    }

    #[cfg(feature = "cli-history")]
    #[test]
    fn up_down_walk_the_history_and_return_to_the_draft() {
        let mut ed = LineEditor::new();
        run(&mut ed, b"one\rtwo\rdra");
        run(&mut ed, b"\x1b[A");
        assert_eq!(ed.line(), b"two");
        run(&mut ed, b"\x1b[A\x1b[A");
        assert_eq!(ed.line(), b"one");
        run(&mut ed, b"\x1b[B");
        assert_eq!(ed.line(), b"two");
        run(&mut ed, b"\x1b[B");
        assert_eq!(ed.line(), b"dra");
    }

    #[cfg(not(feature = "cli-history"))]
    #[test]
    fn without_the_history_up_and_down_leave_the_draft() {
        let mut ed = LineEditor::new();
        run(&mut ed, b"one\rtwo\rdra");
        let (events, shown) = run(&mut ed, b"\x1b[A\x1b[A\x1b[B");
        assert!(events.is_empty());
        assert_eq!(shown, b"");
        assert_eq!(ed.line(), b"dra");
    }

    #[test]
    fn ctrl_d_leaves_only_on_an_empty_line_and_crlf_is_one_enter() {
        let mut ed = LineEditor::new();
        let (events, _) = run(&mut ed, b"x\x04\r\n\x04");
        assert_eq!(events, vec![Event::Submit(b"x".to_vec()), Event::Leave]);
    }

    #[test]
    fn the_line_is_bounded() {
        let mut ed = LineEditor::new();
        let keys = vec![b'a'; MAX_LINE + 10];
        let (_, shown) = run(&mut ed, &keys);
        assert_eq!(ed.line().len(), MAX_LINE);
        assert!(shown.ends_with(b"\x07"));
    }
}
