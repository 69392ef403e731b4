//! The notes file (`PKG_AGENT_NOTES`): what the agent keeps across reboots
//! (the model's `remember`/`recall`/`forget` notes and the conversation's
//! summary note), as bytes. Pure: the runtime reads and writes the file.
//!
//! ```text
//! rtt-agent notes 1
//! s<TAB>summary text
//! n<TAB>key<TAB>text          (one line per note, oldest first)
//! end<TAB>1a2b3c4d            (FNV-1a 32 of every byte before this line)
//! ```
//!
//! Backslash, new line, tab and carriage return inside a field are written
//! `\\`, `\n`, `\t`, `\r`. A file that does not start with the head line,
//! has a line of another shape, or whose check value differs is not ours
//! (or was damaged): [`parse`] says so and the caller sets it aside. The
//! file is written whole to a temporary file and renamed, so the check
//! value guards against what the rename cannot: another program's file at
//! the same path, a card written elsewhere, a flipped bit.

use crate::base::fallible::{extend, push, OutOfMemory};
use crate::base::text::strip_prefix;
use alloc::vec::Vec;

/// The notes file's head line.
pub const HEAD: &[u8] = b"rtt-agent notes 1\n";
/// The head line of the schedule file (`PKG_AGENT_SCHEDULE`), which is
/// written in the same form: a line per entry, its key the entry's id and
/// when, its text the prompt.
pub const SCHEDULE_HEAD: &[u8] = b"rtt-agent schedule 1\n";
/// Longest key (bytes).
pub const KEY_MAX: usize = 64;

/// One note: its key and text.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Note {
    pub key: Vec<u8>,
    pub text: Vec<u8>,
}

/// The file's content.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Notes {
    /// The conversation's summary note (empty: none).
    pub summary: Vec<u8>,
    /// The notes, oldest first.
    pub notes: Vec<Note>,
}

/// Why a file is not a notes file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Corrupt {
    /// It does not start with the head line (another program's file, or
    /// another version's).
    NotOurs,
    /// A line of another shape, or a bad escape.
    BadLine,
    /// No end line: the file was cut.
    Cut,
    /// The check value differs: the bytes changed after they were written.
    BadCheck,
    /// No memory to read it.
    NoMemory,
}

impl Corrupt {
    /// The reason, for a log line.
    pub fn text(self) -> &'static str {
        match self {
            Corrupt::NotOurs => "not the agent's (its first line differs)",
            Corrupt::BadLine => "a line is damaged",
            Corrupt::Cut => "the file is cut short",
            Corrupt::BadCheck => "its check value differs (changed or damaged)",
            Corrupt::NoMemory => "no memory to read it",
        }
    }
}

/// Why a note was not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// An empty key, or one longer than [`KEY_MAX`].
    Key,
    /// The note alone would not fit in the file's bound.
    TooLong,
    /// No memory.
    NoMemory,
}

impl From<OutOfMemory> for Refused {
    fn from(_: OutOfMemory) -> Self {
        Refused::NoMemory
    }
}

/// FNV-1a, 32 bits.
fn check_value(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

fn hex8(v: u32) -> [u8; 8] {
    let digits = b"0123456789abcdef";
    let mut out = [0u8; 8];
    for (i, slot) in out.iter_mut().enumerate() {
        let shift = 28 - 4 * i as u32;
        *slot = digits
            .get(((v >> shift) & 0xf) as usize)
            .copied()
            .unwrap_or(b'0');
    }
    out
}

/// `field` escaped.
fn escaped_len(field: &[u8]) -> usize {
    field.len()
        + field
            .iter()
            .filter(|b| matches!(b, b'\\' | b'\n' | b'\t' | b'\r'))
            .count()
}

fn put_escaped(out: &mut Vec<u8>, field: &[u8]) -> Result<(), OutOfMemory> {
    for &b in field {
        let pair: &[u8] = match b {
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\t' => b"\\t",
            b'\r' => b"\\r",
            _ => {
                push(out, b)?;
                continue;
            }
        };
        extend(out, pair)?;
    }
    Ok(())
}

fn unescape(field: &[u8]) -> Result<Vec<u8>, Corrupt> {
    let mut out = Vec::new();
    out.try_reserve(field.len())
        .map_err(|_| Corrupt::NoMemory)?;
    let mut bytes = field.iter();
    while let Some(&b) = bytes.next() {
        let b = if b == b'\\' {
            match bytes.next() {
                Some(b'\\') => b'\\',
                Some(b'n') => b'\n',
                Some(b't') => b'\t',
                Some(b'r') => b'\r',
                _ => return Err(Corrupt::BadLine),
            }
        } else {
            b
        };
        push(&mut out, b).map_err(|_| Corrupt::NoMemory)?;
    }
    Ok(out)
}

/// The bytes [`write`] makes for `notes`.
pub fn encoded_len(notes: &Notes) -> usize {
    encoded_len_with(HEAD, notes)
}

fn encoded_len_with(head: &[u8], notes: &Notes) -> usize {
    let summary = if notes.summary.is_empty() {
        0
    } else {
        3 + escaped_len(&notes.summary)
    };
    let lines: usize = notes
        .notes
        .iter()
        .map(|n| 4 + escaped_len(&n.key) + escaped_len(&n.text))
        .sum();
    head.len() + summary + lines + 13
}

/// `notes` as the file's bytes, appended to `out`.
pub fn write(notes: &Notes, out: &mut Vec<u8>) -> Result<(), OutOfMemory> {
    write_with(HEAD, notes, out)
}

/// [`write`] with another head line (another file of the same form).
pub fn write_with(head: &[u8], notes: &Notes, out: &mut Vec<u8>) -> Result<(), OutOfMemory> {
    let start = out.len();
    out.try_reserve(encoded_len_with(head, notes))
        .map_err(|_| OutOfMemory)?;
    extend(out, head)?;
    if !notes.summary.is_empty() {
        extend(out, b"s\t")?;
        put_escaped(out, &notes.summary)?;
        push(out, b'\n')?;
    }
    for note in &notes.notes {
        extend(out, b"n\t")?;
        put_escaped(out, &note.key)?;
        push(out, b'\t')?;
        put_escaped(out, &note.text)?;
        push(out, b'\n')?;
    }
    let check = check_value(out.get(start..).unwrap_or_default());
    extend(out, b"end\t")?;
    extend(out, &hex8(check))?;
    push(out, b'\n')
}

/// The notes in `bytes` (no bytes: a new, empty file).
pub fn parse(bytes: &[u8]) -> Result<Notes, Corrupt> {
    parse_with(HEAD, bytes)
}

/// [`parse`] for a file of the same form with another head line.
pub fn parse_with(head: &[u8], bytes: &[u8]) -> Result<Notes, Corrupt> {
    let mut notes = Notes::default();
    if bytes.is_empty() {
        return Ok(notes);
    }
    if strip_prefix(bytes, head).is_none() {
        return Err(Corrupt::NotOurs);
    }
    let mut at = head.len();
    // Line by line (core's line splitting keeps panic paths).
    while let Some(rest) = bytes.get(at..).filter(|r| !r.is_empty()) {
        let Some(len) = rest.iter().position(|&b| b == b'\n') else {
            return Err(Corrupt::Cut);
        };
        let line = rest.get(..len).unwrap_or_default();
        let next = at + len + 1;
        if let Some(check) = strip_prefix(line, b"end\t") {
            let want = hex8(check_value(bytes.get(..at).unwrap_or_default()));
            return if check != want {
                Err(Corrupt::BadCheck)
            } else if next != bytes.len() {
                Err(Corrupt::BadLine)
            } else {
                Ok(notes)
            };
        }
        if let Some(summary) = strip_prefix(line, b"s\t") {
            notes.summary = unescape(summary)?;
        } else if let Some(note) = strip_prefix(line, b"n\t") {
            let Some(tab) = note.iter().position(|&b| b == b'\t') else {
                return Err(Corrupt::BadLine);
            };
            let note = Note {
                key: unescape(note.get(..tab).unwrap_or_default())?,
                text: unescape(note.get(tab + 1..).unwrap_or_default())?,
            };
            push(&mut notes.notes, note).map_err(|_| Corrupt::NoMemory)?;
        } else {
            return Err(Corrupt::BadLine);
        }
        at = next;
    }
    Err(Corrupt::Cut)
}

/// Keep `text` under `key` as the newest note (replacing a note of the same
/// key), then remove the oldest notes until the file fits in `max_bytes`.
/// How many notes were removed for room.
pub fn remember(
    notes: &mut Notes,
    key: &[u8],
    text: &[u8],
    max_bytes: usize,
) -> Result<usize, Refused> {
    if key.is_empty() || key.len() > KEY_MAX {
        return Err(Refused::Key);
    }
    let alone = Notes {
        summary: Vec::new(),
        notes: Vec::new(),
    };
    let one = encoded_len(&alone) + 4 + escaped_len(key) + escaped_len(text);
    if one > max_bytes {
        return Err(Refused::TooLong);
    }
    let note = Note {
        key: crate::base::fallible::copy_of(key)?,
        text: crate::base::fallible::copy_of(text)?,
    };
    notes.notes.try_reserve(1).map_err(|_| Refused::NoMemory)?;
    notes.notes.retain(|n| n.key != key);
    push(&mut notes.notes, note)?;
    let mut removed = 0;
    while encoded_len(notes) > max_bytes && notes.notes.len() > 1 {
        drop_oldest(&mut notes.notes);
        removed += 1;
    }
    // The summary gives way last.
    if encoded_len(notes) > max_bytes {
        notes.summary.clear();
    }
    Ok(removed)
}

/// Remove the oldest note (`Vec::remove` would link a panic path).
fn drop_oldest(notes: &mut Vec<Note>) {
    let mut first = true;
    notes.retain(|_| !core::mem::take(&mut first));
}

/// Remove the note `key`; whether there was one.
pub fn forget(notes: &mut Notes, key: &[u8]) -> bool {
    let before = notes.notes.len();
    notes.notes.retain(|n| n.key != key);
    notes.notes.len() != before
}

/// Whether `hay` contains `needle`, ignoring ASCII case (empty: yes).
fn contains(hay: &[u8], needle: &[u8]) -> bool {
    (0..=hay.len().saturating_sub(needle.len())).any(|at| {
        hay.get(at..at + needle.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(needle))
    })
}

/// The notes whose key or text contains `query` (ignoring ASCII case; an
/// empty query: every note), newest first.
pub fn recall<'a>(notes: &'a Notes, query: &'a [u8]) -> impl Iterator<Item = &'a Note> + 'a {
    notes
        .notes
        .iter()
        .rev()
        .filter(move |n| contains(&n.key, query) || contains(&n.text, query))
}

/// Set the summary note, then remove the oldest notes until the file fits
/// (the summary is cut to fit when no note is left).
pub fn set_summary(notes: &mut Notes, summary: &[u8], max_bytes: usize) -> Result<(), OutOfMemory> {
    notes.summary.clear();
    extend(&mut notes.summary, summary)?;
    while encoded_len(notes) > max_bytes && !notes.notes.is_empty() {
        drop_oldest(&mut notes.notes);
    }
    while encoded_len(notes) > max_bytes && !notes.summary.is_empty() {
        notes.summary.pop();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn note(k: &str, t: &str) -> Note {
        Note {
            key: k.as_bytes().to_vec(),
            text: t.as_bytes().to_vec(),
        }
    }

    fn bytes(notes: &Notes) -> Vec<u8> {
        let mut out = Vec::new();
        write(notes, &mut out).unwrap();
        assert_eq!(out.len(), encoded_len(notes));
        out
    }

    #[test]
    fn a_file_reads_back_as_written_escapes_included() {
        let notes = Notes {
            summary: b"user likes tea\nand\\cats".to_vec(),
            notes: vec![note("wifi", "ssid lab\tch 6"), note("led", "pin 13\r\n")],
        };
        let file = bytes(&notes);
        assert!(file.starts_with(
            b"rtt-agent notes 1\ns\tuser likes tea\\nand\\\\cats\nn\twifi\tssid lab\\tch 6\n"
        ));
        assert_eq!(parse(&file), Ok(notes));
        // Empty: a new file. Only the head and end lines: no notes.
        assert_eq!(parse(b""), Ok(Notes::default()));
        assert_eq!(parse(&bytes(&Notes::default())), Ok(Notes::default()));
    }

    #[test]
    fn damaged_and_foreign_files_are_told_apart() {
        let good = bytes(&Notes {
            summary: Vec::new(),
            notes: vec![note("a", "one"), note("b", "two")],
        });
        let table: &[(&[u8], Corrupt)] = &[
            (b"hello world\n", Corrupt::NotOurs),
            (b"rtt-agent notes 2\nend\t00000000\n", Corrupt::NotOurs),
            (b"\x00\x01\x02", Corrupt::NotOurs),
            (&good[..good.len() - 1], Corrupt::Cut),
            (&good[..good.len() - 14], Corrupt::Cut),
            (
                b"rtt-agent notes 1\nx\tstrange\nend\t00000000\n",
                Corrupt::BadLine,
            ),
            (
                b"rtt-agent notes 1\nn\tno-text\nend\t00000000\n",
                Corrupt::BadLine,
            ),
            (
                b"rtt-agent notes 1\nn\tk\tbad \\q escape\nend\t00000000\n",
                Corrupt::BadLine,
            ),
        ];
        for (input, want) in table {
            assert_eq!(
                parse(input),
                Err(*want),
                "{:?}",
                core::str::from_utf8(input)
            );
        }
        // One changed byte: the check value differs.
        let mut flipped = good.clone();
        let at = flipped.windows(3).position(|w| w == b"one").unwrap();
        flipped[at] = b'0';
        assert_eq!(parse(&flipped), Err(Corrupt::BadCheck));
        // Bytes after the end line.
        let mut tail = good.clone();
        tail.extend_from_slice(b"more\n");
        assert_eq!(parse(&tail), Err(Corrupt::BadLine));
    }

    #[test]
    fn the_oldest_notes_give_way_and_the_file_stays_bounded() {
        let mut notes = Notes::default();
        let max = 120;
        for (i, k) in ["a", "b", "c", "d", "e", "f"].iter().enumerate() {
            let removed = remember(&mut notes, k.as_bytes(), b"twenty bytes of text", max).unwrap();
            assert!(encoded_len(&notes) <= max, "after {k}");
            if i < 3 {
                assert_eq!(removed, 0);
            }
        }
        let keys: Vec<&[u8]> = notes.notes.iter().map(|n| &n.key[..]).collect();
        assert_eq!(keys.last(), Some(&&b"f"[..]));
        assert!(!keys.contains(&&b"a"[..]));
        // The same key replaces the note and makes it the newest.
        let first = notes.notes[0].key.clone();
        remember(&mut notes, &first, b"new", max).unwrap();
        assert_eq!(
            notes.notes.last().unwrap(),
            &Note {
                key: first.clone(),
                text: b"new".to_vec()
            }
        );
        assert_eq!(notes.notes.iter().filter(|n| n.key == first).count(), 1);
        // Too long alone, or a bad key: refused, nothing changed.
        let before = notes.clone();
        assert_eq!(
            remember(&mut notes, b"k", &[b'x'; 200], max),
            Err(Refused::TooLong)
        );
        assert_eq!(remember(&mut notes, b"", b"x", max), Err(Refused::Key));
        assert_eq!(
            remember(&mut notes, &[b'k'; 65], b"x", max),
            Err(Refused::Key)
        );
        assert_eq!(notes, before);
    }

    #[test]
    fn recall_finds_by_key_or_text_newest_first_and_forget_removes() {
        let mut notes = Notes::default();
        for (k, t) in [
            ("wifi", "SSID lab"),
            ("led", "pin 13"),
            ("Lab door", "code 42"),
        ] {
            remember(&mut notes, k.as_bytes(), t.as_bytes(), 1000).unwrap();
        }
        let found: Vec<&[u8]> = recall(&notes, b"lab").map(|n| &n.key[..]).collect();
        assert_eq!(found, [&b"Lab door"[..], b"wifi"]);
        assert_eq!(recall(&notes, b"").count(), 3);
        assert_eq!(recall(&notes, b"nothing").count(), 0);
        assert!(forget(&mut notes, b"led"));
        assert!(!forget(&mut notes, b"led"));
        assert_eq!(notes.notes.len(), 2);
    }

    #[test]
    fn the_summary_persists_and_gives_way_last() {
        let mut notes = Notes::default();
        remember(&mut notes, b"a", b"one", 200).unwrap();
        set_summary(&mut notes, b"we talked about the LED", 200).unwrap();
        assert_eq!(
            parse(&bytes(&notes)).unwrap().summary,
            b"we talked about the LED"
        );
        // A long summary pushes the notes out, then is cut to fit.
        set_summary(&mut notes, &[b's'; 300], 200).unwrap();
        assert!(notes.notes.is_empty());
        assert!(encoded_len(&notes) <= 200);
        assert!(!notes.summary.is_empty());
    }
}
