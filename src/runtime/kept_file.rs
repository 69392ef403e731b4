//! A small file the agent keeps on the board's file system (the notes,
//! the schedule), in `crate::wire::notes`'s form: read whole into one
//! buffer, written whole to a temporary file that is renamed over it (the
//! glue's state-file functions: elm FAT's remove-first included). A file
//! that is not of its kind, or was damaged, is set aside as `<file>.bad`
//! with a log line, and a fresh one is started.

use crate::wire::notes::{self, Corrupt, Notes};
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, CStr};

use crate::rtt::glue::{agent_glue_file_set_aside, agent_glue_state_read, agent_glue_state_write};

/// Why a file is set aside.
#[derive(Clone, Copy)]
enum Why {
    Corrupt(Corrupt),
    /// It exists, but a read failed (a card's I/O error): it is set aside,
    /// not taken for an empty file and overwritten.
    Unreadable,
}
use Why::Unreadable;

impl Why {
    fn text(self) -> &'static str {
        match self {
            Why::Corrupt(c) => c.text(),
            Why::Unreadable => "it cannot be read (an I/O error)",
        }
    }
}

/// Why a kept file could not be read or written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failed {
    NoMemory,
    NotWritten,
}

/// The path the glue names; `None` when NULL or empty.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string that lives, unchanged, as long
/// as the program.
pub unsafe fn path(p: *const c_char) -> Option<&'static CStr> {
    if p.is_null() {
        return None;
    }
    // SAFETY: non-NULL, NUL-terminated and static (the caller's glue).
    let p = unsafe { CStr::from_ptr(p) };
    (!p.is_empty()).then_some(p)
}

/// The entries of the file at `path` whose head line is `head`, at most
/// `max` bytes (`option` names that bound in the log, whose lines start
/// with `what`): none when it does not exist yet; a damaged or foreign file
/// is set aside (logged) and none are returned.
pub fn load(
    path: &CStr,
    head: &[u8],
    max: usize,
    option: &str,
    what: &str,
) -> Result<Notes, Failed> {
    let mut buf: Vec<u8> = Vec::new();
    // One byte more than the bound: a longer file is not ours to cut.
    buf.try_reserve_exact(max + 1)
        .map_err(|_| Failed::NoMemory)?;
    // SAFETY: `buf` has room for `max + 1` bytes; the glue writes at most
    // that many and returns the count (or -1: no such file).
    let n = unsafe {
        agent_glue_state_read(
            path.as_ptr(),
            buf.as_mut_ptr() as *mut c_char,
            (max + 1).min(c_int::MAX as usize) as c_int,
        )
    };
    if n == -1 {
        return Ok(Notes::default());
    }
    // SAFETY: the glue wrote `n` (at most `max + 1`) initialised bytes.
    unsafe { buf.set_len((n.max(0) as usize).min(max + 1)) };
    let parsed = if n < 0 {
        Err(Some(Unreadable))
    } else if buf.len() > max {
        Err(None)
    } else {
        notes::parse_with(head, &buf).map_err(|c| Some(Why::Corrupt(c)))
    };
    drop(buf);
    match parsed {
        Ok(entries) => Ok(entries),
        Err(Some(Why::Corrupt(Corrupt::NoMemory))) => Err(Failed::NoMemory),
        Err(why) => {
            // SAFETY: `path` is NUL-terminated.
            let aside = unsafe { agent_glue_file_set_aside(path.as_ptr()) } == 0;
            crate::log_w!(
                what,
                path.to_bytes(),
                ": ",
                why.map_or("longer than ", Why::text),
                if why.is_none() { option } else { "" },
                if aside {
                    "; set aside as .bad, a new file is started"
                } else {
                    "; it could not be set aside: a new file replaces it"
                }
            );
            Ok(Notes::default())
        }
    }
}

/// Write `entries` as the whole file (temporary file, then rename); a
/// failure is logged with `what` first.
pub fn store(path: &CStr, head: &[u8], entries: &Notes, what: &str) -> Result<(), Failed> {
    let mut bytes = Vec::new();
    notes::write_with(head, entries, &mut bytes).map_err(|_| Failed::NoMemory)?;
    // SAFETY: `bytes` holds `len` initialised bytes, read by the glue only
    // during the call.
    let rc = unsafe {
        agent_glue_state_write(
            path.as_ptr(),
            bytes.as_ptr() as *const c_char,
            bytes.len().min(c_int::MAX as usize) as c_int,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        crate::log_w!(what, path.to_bytes(), ": could not be written");
        Err(Failed::NotWritten)
    }
}
