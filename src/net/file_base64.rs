//! A file sent inline, read from the board's file system while the request
//! is written (`PKG_AGENT_MULTIMODAL_INLINE`): a few hundred bytes at a
//! time, encoded with [`crate::wire::chat::inline_file`]'s base64, so the
//! file is never held in RAM.

use crate::base::json_writer::{ByteSink, WriteError};
use crate::rtt::file::File;
use crate::wire::chat::inline_file::{encode, READ_CHUNK};
use core::ffi::CStr;

/// Write `size` bytes of the file at `path` to `out` as base64. Fails when
/// the file cannot be read or is now shorter than `size`: the length the
/// counting pass already gave would be wrong.
pub fn put(out: &mut dyn ByteSink, path: &CStr, size: usize) -> Result<(), WriteError> {
    let mut file = File::open(path).map_err(|_| WriteError::File)?;
    let mut buf = [0u8; READ_CHUNK];
    let mut left = size;
    while left > 0 {
        let want = left.min(READ_CHUNK);
        let part = buf.get_mut(..want).unwrap_or_default();
        let got = file.read_full(part).map_err(|_| WriteError::File)?;
        if got < want {
            return Err(WriteError::File);
        }
        // 48 bytes at a time into 64 of base64 (`split_at_checked`, not
        // `chunks`: no panic path).
        let mut piece = [0u8; 64];
        let mut rest: &[u8] = part;
        while !rest.is_empty() {
            let (group, after) = rest.split_at_checked(48).unwrap_or((rest, &[]));
            let n = encode(group, &mut piece);
            out.put(piece.get(..n).unwrap_or_default())?;
            rest = after;
        }
        left -= want;
    }
    Ok(())
}
