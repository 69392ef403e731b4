//! Files sent inline (`PKG_AGENT_MULTIMODAL_INLINE`): a content part's URL
//! written as `"data:<type>;base64,<the file>"`, the base64 made from the
//! file while the body is written, a few hundred bytes at a time. The file
//! is never held in RAM; the `Content-Length` pass counts its length from
//! the size recorded when the message was added, without touching the file.
//!
//! The marker is a cJSON string item (so C code that prints the context sees
//! the path) with [`INLINE_FILE`] set in its `type` (a bit cJSON does not
//! use: every cJSON function looks at `type & 0xFF` or at its own two flag
//! bits) and the file's size in `valueint`.

use crate::base::json_writer::{write_string, ByteSink, WriteError};
use core::ffi::{c_int, CStr};

/// The `type` bit of a string item that stands for a file sent inline.
pub const INLINE_FILE: c_int = 1 << 12;

/// Bytes read from the file at a time (a multiple of 3, so only the last
/// piece has base64 padding).
pub const READ_CHUNK: usize = 384;

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// The base64 length of `n` bytes (with padding); `None` past `usize`.
pub fn encoded_len(n: usize) -> Option<usize> {
    (n / 3 + usize::from(n % 3 != 0)).checked_mul(4)
}

/// Encode `src` (a multiple of 3 long unless it is the last piece) into
/// `out`, which has room for `encoded_len(src.len())` bytes; the count.
pub fn encode(src: &[u8], out: &mut [u8]) -> usize {
    // Groups of 3 through `get`s and quads through `chunks_exact_mut` (no
    // index or range that could fail: no panic path); a quad that does not
    // fit in `out` ends the encoding.
    let mut o = 0;
    let mut rest = src;
    for quad in out.chunks_exact_mut(4) {
        let Some(&b0) = rest.first() else { break };
        let (b1, b2) = (rest.get(1).copied(), rest.get(2).copied());
        let v =
            (u32::from(b0) << 16) | (u32::from(b1.unwrap_or(0)) << 8) | u32::from(b2.unwrap_or(0));
        let sextet = |shift: u32| ALPHABET[(v >> shift) as usize & 63];
        quad.copy_from_slice(&[
            sextet(18),
            sextet(12),
            if b1.is_some() { sextet(6) } else { b'=' },
            if b2.is_some() { sextet(0) } else { b'=' },
        ]);
        rest = rest.get(3..).unwrap_or_default();
        o += 4;
    }
    o
}

/// The media type for a file name's extension (any case), `None` for one
/// the table does not know. Images, then video, then audio.
pub fn media_type(path: &[u8]) -> Option<&'static str> {
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    let dot = name.iter().rposition(|&b| b == b'.')?;
    let ext = name.get(dot + 1..).unwrap_or_default();
    const TABLE: &[(&str, &str)] = &[
        ("png", "image/png"),
        ("jpg", "image/jpeg"),
        ("jpeg", "image/jpeg"),
        ("gif", "image/gif"),
        ("webp", "image/webp"),
        ("bmp", "image/bmp"),
        ("mp4", "video/mp4"),
        ("mov", "video/quicktime"),
        ("webm", "video/webm"),
        ("avi", "video/x-msvideo"),
        ("mp3", "audio/mpeg"),
        ("wav", "audio/wav"),
        ("ogg", "audio/ogg"),
        ("m4a", "audio/mp4"),
        ("aac", "audio/aac"),
        ("flac", "audio/flac"),
        ("amr", "audio/amr"),
    ];
    TABLE
        .iter()
        .find(|(e, _)| ext.eq_ignore_ascii_case(e.as_bytes()))
        .map(|&(_, t)| t)
}

/// Write the marker item `it` as its `data:` URL string.
///
/// # Safety
/// `it` is a live string item with [`INLINE_FILE`] set (its `valuestring`
/// NULL or NUL-terminated), not modified during the call.
pub unsafe fn write(
    it: &crate::cjson::sys::cJSON,
    out: &mut dyn ByteSink,
) -> Result<(), WriteError> {
    if it.valuestring.is_null() || it.valueint < 0 {
        return write_string(b"", out);
    }
    // SAFETY: non-NULL and NUL-terminated, owned by the live item (contract).
    let path = unsafe { CStr::from_ptr(it.valuestring) };
    let size = it.valueint as usize;
    let kind = media_type(path.to_bytes()).unwrap_or("application/octet-stream");
    out.put(b"\"data:")?;
    out.put(kind.as_bytes())?;
    out.put(b";base64,")?;
    let total = encoded_len(size).ok_or(WriteError::File)?;
    if !out.skip(total) {
        out.put_file_base64(path, size)?;
    }
    out.put(b"\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(src: &[u8]) -> String {
        let mut out = vec![0u8; encoded_len(src.len()).unwrap()];
        let n = encode(src, &mut out);
        String::from_utf8(out[..n].to_vec()).unwrap()
    }

    #[test]
    fn base64_as_rfc_4648_says() {
        // RFC 4648 section 10.
        for (plain, coded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(b64(plain.as_bytes()), coded);
        }
        assert_eq!(b64(&[0xff, 0xfe, 0xfd]), "//79");
    }

    #[test]
    fn media_types_from_the_extension() {
        assert_eq!(media_type(b"/sd/cat.PNG"), Some("image/png"));
        assert_eq!(media_type(b"a.jpeg"), Some("image/jpeg"));
        assert_eq!(media_type(b"/x.y/clip.mp4"), Some("video/mp4"));
        assert_eq!(media_type(b"/x.y/noext"), None);
        assert_eq!(media_type(b"/sd/file.xyz"), None);
    }
}
