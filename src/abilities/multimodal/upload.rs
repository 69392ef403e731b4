//! The upload to the file server (the C package's protocol; see the
//! module above) and the file id in its answer.

use super::{checked_size, with_urls};
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::net::error::ErrorText;
use crate::net::transport::{socket_timeout_seconds, webclient_timeout_arg};
use crate::rtt::file::File;
use crate::rtt::webclient::*;
use crate::rtt::*;
use crate::wire::chat::inline_file::media_type;
use alloc::vec::Vec;
use core::ffi::{c_char, c_void, CStr};
use core::ptr;

/// A file server's id: at most 127 bytes of `[A-Za-z0-9._-]`.
pub struct FileId {
    bytes: [u8; 128],
    len: usize,
}

impl FileId {
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }

    /// An id as given (C code's, for `down_load`): its first 127 bytes.
    pub(super) fn from_bytes(id: &[u8]) -> FileId {
        let mut bytes = [0u8; 128];
        crate::base::text::copy_prefix(&mut bytes, id.get(..127).unwrap_or(id));
        FileId {
            bytes,
            len: id.len().min(127),
        }
    }
}

/// `{download}/{id}` (one `/` between them) with a NUL, on the heap.
pub(super) fn download_url(download: &CStr, id: &FileId) -> Option<Vec<u8>> {
    let base = download.to_bytes();
    let base = crate::base::text::strip_last(base, b'/');
    let mut url = Vec::new();
    url.try_reserve_exact(base.len() + 2 + id.len).ok()?;
    for part in [base, b"/", id.as_bytes(), b"\0"] {
        crate::base::fallible::extend(&mut url, part).ok()?;
    }
    Some(url)
}

/// The file's name for the form: after the last `/`, without quotes,
/// backslashes or control characters.
fn form_file_name(path: &[u8]) -> impl Iterator<Item = u8> + '_ {
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    name.iter()
        .copied()
        .filter(|&b| b >= 0x20 && b != b'"' && b != b'\\' && b != 0x7f)
}

/// Send all of `bytes`; false when the connection fails.
fn send_all(session: *mut webclient_session, mut bytes: &[u8]) -> bool {
    while !bytes.is_empty() {
        // SAFETY: a live, connected session; the pointer and length are
        // within `bytes`.
        let n = unsafe { webclient_write(session, bytes.as_ptr() as *const c_void, bytes.len()) };
        if n <= 0 {
            return false;
        }
        bytes = bytes.get(n as usize..).unwrap_or_default();
    }
    true
}

/// Upload the file at `path` to `PKG_AGENT_UPLOAD_URL`: the server's file
/// id, or `None` with the reason in `error`. `what` names the file in
/// messages ("image", ...).
pub fn upload(path: &CStr, what: &str, error: &mut ErrorText) -> Option<FileId> {
    let size = checked_size(path, what, error)?;
    with_urls(|up, _| upload_to(up, path, size, what, error))
}

/// Header buffer of the upload's session.
const UPLOAD_HEADER_BUFSZ: usize = 1024;
/// Piece of the file sent at a time, and room for the server's answer.
const UPLOAD_IO_BUF: usize = 512;

fn upload_to(
    url: &CStr,
    path: &CStr,
    size: u32,
    what: &str,
    error: &mut ErrorText,
) -> Option<FileId> {
    let why = match send_file(url, path, size) {
        Ok(id) => return Some(id),
        Err(why) => why,
    };
    let mut digits = [0u8; 20];
    let status: &[u8] = match why.status {
        Some(status) => crate::base::text::decimal(u64::from(status), &mut digits),
        None => b"",
    };
    error.set(&[
        b"the upload of the ",
        what.as_bytes(),
        b" ",
        path.to_bytes(),
        b" failed: ",
        why.text,
        status,
    ]);
    None
}

/// Why an upload failed: the reason, and the HTTP status that follows it
/// when the file server answered with an error.
struct Failed {
    text: &'static [u8],
    status: Option<u32>,
}

/// An upload failure without a status.
fn failed(text: &'static [u8]) -> Failed {
    Failed { text, status: None }
}

/// The upload itself: the file id, or why there is none.
fn send_file(url: &CStr, path: &CStr, size: u32) -> Result<FileId, Failed> {
    if url.is_empty() {
        return Err(failed(b"PKG_AGENT_UPLOAD_URL is not set"));
    }
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) => return Err(failed(e.text().as_bytes())),
    };
    let mut buf: Vec<u8> = Vec::new();
    if crate::base::fallible::resize(&mut buf, UPLOAD_IO_BUF, 0).is_err() {
        return Err(failed(b"out of memory"));
    }
    // The boundary: fixed text and the tick in hex, never in the head;
    // with a NUL for the header's `%s`.
    let mut boundary_nul = *b"----rtt-agent-form-00000000\0";
    // SAFETY: reads the tick counter.
    let tick = unsafe { rt_tick_get() };
    let hex = b"0123456789abcdef";
    for (k, slot) in boundary_nul.iter_mut().skip(19).take(8).enumerate() {
        *slot = hex[(tick >> (28 - 4 * k as u32)) as usize & 15];
    }
    let boundary = boundary_nul.get(..27).unwrap_or_default();
    let mime = media_type(path.to_bytes()).unwrap_or("application/octet-stream");
    let name_len = form_file_name(path.to_bytes()).count();
    let head: [&[u8]; 7] = [
        b"--",
        boundary,
        b"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"",
        b"", // the name, sent on its own
        b"\"\r\nContent-Type: ",
        mime.as_bytes(),
        b"\r\n\r\n",
    ];
    let tail: [&[u8]; 3] = [b"\r\n--", boundary, b"--\r\n"];
    let total = head
        .iter()
        .chain(tail.iter())
        .map(|p| p.len())
        .sum::<usize>()
        + name_len
        + size as usize;

    let Some(session) = Session::create(UPLOAD_HEADER_BUFSZ) else {
        return Err(failed(b"no memory for the HTTP session"));
    };
    let mut len_buf = [0u8; 21];
    let len_text = crate::base::text::decimal_cstr(total as u64, &mut len_buf);
    // SAFETY: a live session; each format is a NUL-terminated literal whose
    // one `%s` gets a NUL-terminated string.
    let ok = unsafe {
        webclient_header_fields_add(
            session.raw(),
            c"Content-Type: multipart/form-data; boundary=%s\r\n".as_ptr(),
            boundary_nul.as_ptr(),
        ) >= 0
            && webclient_header_fields_add(
                session.raw(),
                c"Content-Length: %s\r\n".as_ptr(),
                len_text.as_ptr(),
            ) >= 0
    };
    if !ok {
        return Err(failed(b"the HTTP headers do not fit"));
    }
    // SAFETY: a live session and a NUL-terminated URL; NULL data of length
    // 0 sends the head only.
    let rc = unsafe { webclient_post(session.raw(), url.as_ptr(), ptr::null(), 0) };
    if rc == -WEBCLIENT_NOMEM {
        return Err(failed(b"out of memory for the connection"));
    }
    if rc < 0 {
        return Err(failed(
            b"cannot connect to the file server (check PKG_AGENT_UPLOAD_URL and the network)",
        ));
    }
    let seconds = socket_timeout_seconds(board().http_timeout_ms.clamp(1000, 600_000) as u32);
    // SAFETY: a live, connected session.
    unsafe {
        webclient_set_timeout(
            session.raw(),
            webclient_timeout_arg(seconds, board().tick_per_second.max(1) as u32),
        )
    };
    let mut name = [0u8; 64];
    let mut sent = true;
    for (k, piece) in head.iter().enumerate() {
        if k == 3 {
            // The name, in pieces of 64.
            let mut n = 0;
            for b in form_file_name(path.to_bytes()) {
                if let Some(slot) = name.get_mut(n) {
                    *slot = b;
                }
                n += 1;
                if n == name.len() {
                    sent &= send_all(session.raw(), &name);
                    n = 0;
                }
            }
            sent &= send_all(session.raw(), name.get(..n).unwrap_or_default());
        } else {
            sent &= send_all(session.raw(), piece);
        }
    }
    let mut left = size as usize;
    while sent && left > 0 {
        if crate::net::cancel::cancelled() {
            return Err(failed(b"cancelled (the agent is stopping)"));
        }
        let want = left.min(buf.len());
        let piece = buf.get_mut(..want).unwrap_or_default();
        match f.read_full(piece) {
            Ok(got) if got == want => sent = send_all(session.raw(), piece),
            _ => {
                return Err(failed(b"the file could not be read to its end"));
            }
        }
        left -= want;
    }
    drop(f);
    for piece in tail {
        sent = sent && send_all(session.raw(), piece);
    }
    if !sent {
        return Err(failed(
            b"the connection to the file server failed while sending",
        ));
    }
    // SAFETY: a live session whose request has been sent.
    let status = unsafe { webclient_handle_response(session.raw()) };
    if status == -WEBCLIENT_NOMEM {
        return Err(failed(b"out of memory while reading the answer"));
    }
    if status <= 0 {
        return Err(failed(b"no answer from the file server"));
    }
    if !(200..300).contains(&status) {
        return Err(Failed {
            text: b"the file server answered HTTP ",
            status: Some(status as u32),
        });
    }
    // The answer (its first 511 bytes: a file id fits many times over).
    let mut got = 0;
    let room_end = buf.len() - 1;
    while let Some(room) = buf.get_mut(got..room_end).filter(|r| !r.is_empty()) {
        // SAFETY: a live session; the room is within `buf`.
        let n =
            unsafe { webclient_read(session.raw(), room.as_mut_ptr() as *mut c_void, room.len()) };
        if n <= 0 {
            break;
        }
        got += (n as usize).min(room.len());
    }
    drop(session);
    let answer = buf.get_mut(..got + 1).unwrap_or_default();
    if let Some(nul) = answer.last_mut() {
        *nul = 0;
    }
    match parse_file_id(answer) {
        Ok(id) => Ok(id),
        Err(IdError::NoMemory) => Err(failed(b"out of memory while reading the answer")),
        Err(IdError::Missing) => Err(failed(b"the file server's answer has no usable file_id")),
    }
}

/// Why [`parse_file_id`] found no id.
#[derive(Debug, PartialEq, Eq)]
pub enum IdError {
    /// Not JSON, or no `file_id` string of the allowed characters.
    Missing,
    /// cJSON had no memory for the tree.
    NoMemory,
}

/// Is `text` (NUL-terminated) plausibly JSON, so that a failed parse was
/// the heap's fault? A cheap check: its first non-blank byte opens an
/// object.
fn looks_like_json(text: &[u8]) -> bool {
    text.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// The `file_id` of a file server's JSON answer (`{"data": {"file_id":
/// ...}}`, as the C package reads it, or `{"file_id": ...}`); `None`
/// unless it is 1 to 127 bytes of `[A-Za-z0-9._-]`. `text` ends with a NUL.
/// An object cJSON could not parse counts as no memory: the file server's
/// answers are small and well formed (a truncated one reads as missing, as
/// its `file_id` would be).
pub fn parse_file_id(text: &[u8]) -> Result<FileId, IdError> {
    if text.last() != Some(&0) {
        return Err(IdError::Missing);
    }
    // SAFETY: `text` ends with a NUL (checked); the tree is deleted below
    // and nothing borrowed from it outlives that.
    unsafe {
        let root = cJSON_Parse(text.as_ptr() as *const c_char);
        if root.is_null() {
            return Err(if looks_like_json(text) && json_complete(text) {
                IdError::NoMemory
            } else {
                IdError::Missing
            });
        }
        let data = json::get(root, c"data");
        let found = json::get_str(data, c"file_id").or_else(|| json::get_str(root, c"file_id"));
        let id = found.and_then(|s| {
            let b = s.to_bytes();
            let ok = !b.is_empty()
                && b.len() < 128
                && b.iter()
                    .all(|&c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_' || c == b'.');
            ok.then(|| {
                let mut bytes = [0u8; 128];
                crate::base::text::copy_prefix(&mut bytes, b);
                FileId {
                    bytes,
                    len: b.len(),
                }
            })
        });
        cJSON_Delete(root);
        id.ok_or(IdError::Missing)
    }
}

/// Do the braces and brackets of `text` (outside strings) balance? With
/// [`looks_like_json`], a parse failure of such text is taken for no memory.
fn json_complete(text: &[u8]) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
    for &b in text.iter().take_while(|&&b| b != 0) {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0 && !in_string
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_ids_from_the_servers_answer() {
        let id = |s: &str| {
            let mut t = s.as_bytes().to_vec();
            t.push(0);
            parse_file_id(&t)
                .ok()
                .map(|f| String::from_utf8(f.as_bytes().to_vec()).unwrap())
        };
        let uuid = "0f8fad5b-d9cb-469f-a165-70867728950e";
        assert_eq!(
            id(&format!(r#"{{"code":0,"data":{{"file_id":"{uuid}"}}}}"#)).as_deref(),
            Some(uuid)
        );
        assert_eq!(
            id(&format!(r#"{{"file_id":"{uuid}"}}"#)).as_deref(),
            Some(uuid)
        );
        assert_eq!(id(r#"{"data":{"file_id":"../etc"}}"#), None);
        assert_eq!(id(r#"{"data":{"file_id":""}}"#), None);
        assert_eq!(id(r#"{"data":{"file_id":7}}"#), None);
        assert_eq!(id("not json"), None);
        assert_eq!(id(r#"{"data":{"file_id":"abc"#), None);
        assert!(json_complete(b"{\"a\":\"}\\\"\"}\0"));
        assert!(!json_complete(b"{\"a\":{}\0"));
    }

    #[test]
    fn form_names_lose_quotes_and_folders() {
        let n: Vec<u8> = form_file_name(b"/sd/a\"b\\c\n.png").collect();
        assert_eq!(n, b"abc.png");
    }
}
