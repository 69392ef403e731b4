//! The list of remote MCP servers: `PKG_AGENT_MCP_SERVERS` until the first
//! `agent_config mcp add|del`, which copies it here and changes the copy.
//! Read at each agent start.
//!
//! No static storage for the URLs: until a change the list is the board's
//! constant string, read in place; the first `add` or `del` copies it to
//! the heap as one line of blank-separated URLs (a few dozen bytes for a
//! server or two), and `reset` frees it. The static is that copy's
//! `Option<Vec>` (12 bytes of `.data` on Cortex-M4F: `None` is a non-zero
//! capacity, so it is not `.bss`), where four fixed 128-byte slots took 536
//! of `.bss` on every board that builds the client, configured or not. The
//! lock is held only to read or change the copy (and to free it).

use crate::rtt::sleep_cell::SleepCell;
use alloc::vec::Vec;
use core::ffi::CStr;

/// Most servers in the list.
pub const MAX_SERVERS: usize = 4;
/// Longest URL, as `agent_config`'s other values.
pub const URL_MAX: usize = 127;

use crate::rtt::glue::agent_glue_mcp_servers;

/// One URL, NUL-terminated within its slot.
#[derive(Clone, Copy)]
pub struct Url {
    bytes: [u8; URL_MAX + 1],
    len: usize,
}

impl Url {
    const EMPTY: Url = Url {
        bytes: [0; URL_MAX + 1],
        len: 0,
    };

    fn new(text: &[u8]) -> Option<Url> {
        if !valid(text) {
            return None;
        }
        let mut url = Url::EMPTY;
        crate::base::text::copy_prefix(&mut url.bytes, text);
        url.len = text.len();
        Some(url)
    }

    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }

    pub fn as_cstr(&self) -> &CStr {
        // The slot past `len` is always 0 (a new Url starts zeroed).
        CStr::from_bytes_until_nul(&self.bytes).unwrap_or(c"")
    }
}

/// 1 to [`URL_MAX`] bytes, none of them blank or a control byte.
fn valid(text: &[u8]) -> bool {
    !text.is_empty() && text.len() <= URL_MAX && text.iter().all(|&b| b > b' ')
}

struct List {
    /// `None` until the first add/del; from then on the list: valid URLs,
    /// at most [`MAX_SERVERS`], each after one blank but the first.
    text: Option<Vec<u8>>,
}

static LIST: SleepCell<List> = SleepCell::new(List { text: None });

fn with<R>(f: impl FnOnce(&mut List) -> R) -> R {
    LIST.with(f)
}

/// `PKG_AGENT_MCP_SERVERS` as the glue gives it.
fn configured() -> &'static [u8] {
    // SAFETY: the glue returns a static, NUL-terminated string (or NULL).
    unsafe { crate::base::text::cstr_arg(agent_glue_mcp_servers()) }
        .map_or(&b""[..], CStr::to_bytes)
}

/// The `i`-th URL of `text`: of its blank-separated words the valid ones,
/// at most [`MAX_SERVERS`]. `warn`: read on to the end and say which words
/// of the board's list are left out. One plain loop that every operation
/// shares (an iterator chain per caller was 600 bytes more flash).
#[inline(never)]
fn url_at(text: &[u8], i: usize, warn: bool) -> Option<&[u8]> {
    let mut found = None;
    let mut kept = 0usize;
    for word in text.split(|&b| b == b' ').filter(|w| !w.is_empty()) {
        if !valid(word) {
            if warn {
                crate::log_w!(
                    "mcp: a URL of PKG_AGENT_MCP_SERVERS is longer than ",
                    URL_MAX,
                    " bytes; left out"
                );
            }
            continue;
        }
        if kept == MAX_SERVERS {
            if warn {
                crate::log_w!(
                    "mcp: PKG_AGENT_MCP_SERVERS lists more than ",
                    MAX_SERVERS,
                    " servers; the rest are left out"
                );
            }
            break;
        }
        if kept == i {
            found = Some(word);
            if !warn {
                break;
            }
        }
        kept += 1;
    }
    found
}

/// The `i`-th server of the list, copied out. The board's list is checked
/// as it is read: what it has that cannot be used is logged once per walk
/// of the list (at `i == 0`, where every walk starts).
pub fn get(i: usize) -> Option<Url> {
    with(|list| list.get(configured(), i))
}

/// How [`add`] or [`del`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// Empty, longer than [`URL_MAX`], or with a blank or control byte.
    BadUrl,
    Full,
    Duplicate,
    NotFound,
    /// No heap for the copy of the list.
    OutOfMemory,
}

/// Add `url` at the end of the list (for the next agent start).
pub fn add(url: &[u8]) -> Result<(), Refused> {
    with(|list| list.add(configured(), url))
}

/// Remove `url` from the list (for the next agent start).
pub fn del(url: &[u8]) -> Result<(), Refused> {
    with(|list| list.del(configured(), url))
}

/// Back to `PKG_AGENT_MCP_SERVERS` (tests, and `agent_config mcp reset`);
/// the copy's heap is freed.
pub fn reset() {
    with(|list| list.text = None)
}

fn push(text: &mut Vec<u8>, bytes: &[u8]) -> Result<(), Refused> {
    crate::base::fallible::extend(text, bytes).map_err(|_| Refused::OutOfMemory)
}

/// `url` as it stands among the first URLs of `text` (a subslice of it,
/// so `del` knows where it is).
fn find<'t>(text: &'t [u8], url: &[u8]) -> Option<&'t [u8]> {
    (0..MAX_SERVERS)
        .map_while(|i| url_at(text, i, false))
        .find(|&u| u == url)
}

/// The list's operations; `board` is `PKG_AGENT_MCP_SERVERS`.
impl List {
    fn get(&self, board: &[u8], i: usize) -> Option<Url> {
        let found = match &self.text {
            Some(text) => url_at(text, i, false),
            None => url_at(board, i, i == 0),
        };
        found.and_then(Url::new)
    }

    /// The list to change: on the first change, what of the board's list
    /// is used is copied to the heap.
    fn own(&mut self, board: &[u8]) -> Result<&mut Vec<u8>, Refused> {
        if self.text.is_none() {
            // What of the board's list is left out is said once, here, as
            // on any walk of it.
            let _ = url_at(board, 0, true);
            let mut text = Vec::new();
            for i in 0..MAX_SERVERS {
                let Some(url) = url_at(board, i, false) else {
                    break;
                };
                if i > 0 {
                    push(&mut text, b" ")?;
                }
                push(&mut text, url)?;
            }
            self.text = Some(text);
        }
        self.text.as_mut().ok_or(Refused::OutOfMemory)
    }

    fn add(&mut self, board: &[u8], url: &[u8]) -> Result<(), Refused> {
        if !valid(url) {
            return Err(Refused::BadUrl);
        }
        let text = self.own(board)?;
        if find(text, url).is_some() {
            return Err(Refused::Duplicate);
        }
        if url_at(text, MAX_SERVERS - 1, false).is_some() {
            return Err(Refused::Full);
        }
        let len = text.len();
        let added = if len > 0 { push(text, b" ") } else { Ok(()) }.and_then(|()| push(text, url));
        if added.is_err() {
            // Not even the blank stays: the list is as it was.
            text.truncate(len);
        }
        added
    }

    fn del(&mut self, board: &[u8], url: &[u8]) -> Result<(), Refused> {
        let text = self.own(board)?;
        let word = find(text, url).ok_or(Refused::NotFound)?;
        // Where the word is in `text` (it is a subslice of it), and the
        // blank that joins it to the next URL, or else to the one before.
        let from = (word.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
        let to = from.saturating_add(word.len());
        let (from, to) = if to < text.len() {
            (from, to.saturating_add(1))
        } else {
            (from.saturating_sub(1), to)
        };
        crate::base::text::remove_range(text, from, to);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list() -> List {
        List { text: None }
    }

    fn text(l: &List) -> &[u8] {
        l.text.as_deref().unwrap_or(b"(the board's)")
    }

    fn all(l: &List, board: &[u8]) -> Vec<Vec<u8>> {
        (0..MAX_SERVERS + 1)
            .map_while(|i| l.get(board, i))
            .map(|u| u.as_bytes().to_vec())
            .collect()
    }

    fn v(urls: &[&str]) -> Vec<Vec<u8>> {
        urls.iter().map(|u| u.as_bytes().to_vec()).collect()
    }

    /// The board's list read in place: blanks collapse, a word too long or
    /// with a control byte is left out, at most four are used.
    #[test]
    fn the_boards_list_is_read_in_place() {
        let long = format!("http://{}", "h".repeat(URL_MAX));
        let board = format!("  a:1 {long} b:2\tx c:3  d:4 e:5 f:6");
        let l = list();
        assert_eq!(all(&l, board.as_bytes()), v(&["a:1", "c:3", "d:4", "e:5"]));
        assert!(l.text.is_none(), "nothing copied to read it");
        assert_eq!(all(&l, b""), v(&[]));
        let exact = "u".repeat(URL_MAX);
        assert_eq!(all(&l, exact.as_bytes()), v(&[exact.as_str()]));
    }

    /// The first change copies what is used of the board's list; later
    /// reads see the copy, whatever the board says.
    #[test]
    fn a_change_copies_the_boards_list() {
        let mut l = list();
        let board = b"a:1 b:2 c:3";
        assert_eq!(l.add(board, b"d:4"), Ok(()));
        assert_eq!(text(&l), b"a:1 b:2 c:3 d:4");
        assert_eq!(all(&l, b"x:9"), v(&["a:1", "b:2", "c:3", "d:4"]));
        assert_eq!(l.add(board, b"e:5"), Err(Refused::Full));
        assert_eq!(l.add(board, b"b:2"), Err(Refused::Duplicate));
        assert_eq!(l.add(board, b"has blank"), Err(Refused::BadUrl));
        assert_eq!(l.add(board, b""), Err(Refused::BadUrl));
        let mut fresh = list();
        assert_eq!(fresh.del(b"a:1 b:2", b"c:3"), Err(Refused::NotFound));
        assert!(
            fresh.text.is_some(),
            "a del, even refused, makes the copy the list"
        );
        assert_eq!(all(&fresh, b"z:0"), v(&["a:1", "b:2"]));
    }

    /// Removing the first, a middle and the last URL keeps one blank
    /// between the others; the emptied list stays a (changed) empty list.
    #[test]
    fn del_keeps_the_text_one_line() {
        let mut l = list();
        let board = b"a:1 b:2 c:3 d:4";
        assert_eq!(l.del(board, b"b:2"), Ok(()));
        assert_eq!(text(&l), b"a:1 c:3 d:4");
        assert_eq!(l.del(board, b"a:1"), Ok(()));
        assert_eq!(text(&l), b"c:3 d:4");
        assert_eq!(l.del(board, b"d:4"), Ok(()));
        assert_eq!(text(&l), b"c:3");
        assert_eq!(l.del(board, b"c:3"), Ok(()));
        assert_eq!(text(&l), b"");
        assert_eq!(all(&l, board), v(&[]));
        assert_eq!(l.add(board, b"e:5"), Ok(()));
        assert_eq!(text(&l), b"e:5");
    }
}
