//! `utils.h`, multimodal half (feature `multimodal`,
//! `PKG_AGENT_MULTIMODAL_ENABLE`): audio, image and video items of a
//! `Messages_t` (each a file path on the board) sent to the model as
//! `image_url`/`video_url`/`audio_url` content parts next to the text.
//!
//! Two ways, chosen in menuconfig (`board().multimodal_mode()`):
//! - **upload** (`PKG_AGENT_MULTIMODAL_UPLOAD`, the C package's): the file
//!   goes to the file server in a `multipart/form-data` `POST
//!   {PKG_AGENT_UPLOAD_URL}` (field `file`), streamed from the file; the
//!   server answers JSON with a `file_id` (in `data`, or at the top level),
//!   and the part's URL is `{PKG_AGENT_DOWNLOAD_URL}/{file_id}` (the C
//!   package's join: `PKG_AGENT_DOWNLOAD_URL` is e.g.
//!   `http://host:8000/download`);
//! - **inline** (`PKG_AGENT_MULTIMODAL_INLINE`): the URL is a `data:` URL
//!   written into each request from the file itself
//!   ([`crate::chat::inline_file`]); no file server.
//!
//! Either way a file that is missing, not a regular file, larger than
//! `PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE`, of an unknown type (inline), or whose
//! upload fails makes the whole message fail (the C package dropped the part
//! and sent the text alone): the agent loop answers with the reason
//! ([`take_content_error`]).
//!
//! The file-operation thread of `utils.h` (`agent_file_op_init`, its two
//! message queues, `down_load`) serves C code that posts `file_op_req`s, as
//! the C package's did. `agent_up_load` and `to_content` upload on the
//! calling thread and need no thread.

use super::messages::{
    get_agent_content_type, messages_get_content_idx, messages_get_type_idx, MessageType,
    Messages_t, TYPE_AUDIO, TYPE_IMAGE, TYPE_TEXT, TYPE_VIDEO,
};
use crate::chat::inline_file::{media_type, INLINE_FILE};
use crate::chat::transport::{socket_timeout_seconds, webclient_timeout_arg, ErrorText};
use crate::cjson_sys::*;
use crate::ffi_fn;
use crate::json;
use crate::rtt::file::{self, File};
use crate::rtt::sleep_lock::SleepLock;
use crate::rtt::webclient::*;
use crate::rtt::*;
use alloc::vec::Vec;
use core::cell::UnsafeCell;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::ptr;

/// How message files are sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Multimodal off: `to_content` is the first item's text.
    Off,
    /// Uploaded to the file server, sent as its download URL.
    Upload,
    /// Sent inside the request as a `data:` URL.
    Inline,
}

/// Host only: run-time replacements for the board's multimodal settings,
/// so that tests switch modes, servers and the cap without a new build.
#[cfg(feature = "host")]
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub mode: Option<Mode>,
    pub upload_url: Option<alloc::ffi::CString>,
    pub download_url: Option<alloc::ffi::CString>,
    pub max_bytes: Option<usize>,
}

#[cfg(feature = "host")]
static OVERRIDES: std::sync::Mutex<Option<Overrides>> = std::sync::Mutex::new(None);

/// Host only: replace (or with `Overrides::default()`, restore) the
/// settings for what follows.
#[cfg(feature = "host")]
pub fn set_overrides(o: Overrides) {
    *OVERRIDES.lock().unwrap_or_else(|e| e.into_inner()) = Some(o);
}

/// Host only, for the C tests (`rt_host.h`): [`set_overrides`] from C.
/// `mode` 0 off, 1 upload, 2 inline; NULL URLs and `max_bytes <= 0` keep
/// the build's value; `mode < 0` restores every setting. Copies the strings.
#[cfg(feature = "host")]
#[no_mangle]
pub unsafe extern "C" fn rt_host_multimodal_set(
    mode: c_int,
    upload_url: *const c_char,
    download_url: *const c_char,
    max_bytes: core::ffi::c_long,
) {
    ffi_fn!(failure = (), {
        if mode < 0 {
            set_overrides(Overrides::default());
            return;
        }
        // SAFETY: NULL or NUL-terminated (this function's contract); copied.
        let copy = |p: *const c_char| unsafe { super::cstr_arg(p) }.map(alloc::ffi::CString::from);
        set_overrides(Overrides {
            mode: Some(match mode {
                1 => Mode::Upload,
                2 => Mode::Inline,
                _ => Mode::Off,
            }),
            upload_url: copy(upload_url),
            download_url: copy(download_url),
            max_bytes: (max_bytes > 0).then_some(max_bytes as usize),
        });
    })
}

/// Read the host's overrides in place (no copy: the library's paths must
/// not allocate for them, or an allocation walk would see host-only
/// allocations).
#[cfg(feature = "host")]
fn with_overrides<R>(f: impl FnOnce(&Overrides) -> R) -> R {
    let held = OVERRIDES.lock().unwrap_or_else(|e| e.into_inner());
    match held.as_ref() {
        Some(o) => f(o),
        None => f(&Overrides::default()),
    }
}

/// The mode in use.
pub fn mode() -> Mode {
    #[cfg(feature = "host")]
    if let Some(m) = with_overrides(|o| o.mode) {
        return m;
    }
    match board().multimodal_mode() {
        1 => Mode::Upload,
        2 => Mode::Inline,
        _ => Mode::Off,
    }
}

/// The largest file sent (`PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE`).
pub fn max_bytes() -> usize {
    #[cfg(feature = "host")]
    if let Some(n) = with_overrides(|o| o.max_bytes) {
        return n;
    }
    board().multimodal_max_bytes()
}

/// Run `f` with the upload and download URLs in use.
fn with_urls<R>(f: impl FnOnce(&CStr, &CStr) -> R) -> R {
    // SAFETY: the board's strings are NUL-terminated constants of the glue
    // (or "" when absent).
    let (up, down) = unsafe {
        (
            CStr::from_ptr(board().upload_url()),
            CStr::from_ptr(board().download_url()),
        )
    };
    #[cfg(feature = "host")]
    {
        // Copied out under the lock onto the stack (no allocation), so that
        // `f` (an upload) runs without the lock.
        let (mut up_buf, mut down_buf) = ([0u8; 256], [0u8; 256]);
        let copy = |from: Option<&CStr>, to: &mut [u8; 256]| -> bool {
            match from {
                Some(c) if c.to_bytes().len() < to.len() => {
                    to[..c.to_bytes().len()].copy_from_slice(c.to_bytes());
                    true
                }
                _ => false,
            }
        };
        let (has_up, has_down) = with_overrides(|o| {
            (
                copy(o.upload_url.as_deref(), &mut up_buf),
                copy(o.download_url.as_deref(), &mut down_buf),
            )
        });
        let pick = |has: bool, buf: &[u8; 256], board: &CStr| -> *const c_char {
            if has {
                buf.as_ptr() as *const c_char
            } else {
                board.as_ptr()
            }
        };
        let (u, d) = (pick(has_up, &up_buf, up), pick(has_down, &down_buf, down));
        // SAFETY: each points at a NUL-terminated string: a zeroed buffer
        // holding a shorter copy, or the board's constant.
        return unsafe { f(CStr::from_ptr(u), CStr::from_ptr(d)) };
    }
    #[allow(unreachable_code)]
    f(up, down)
}

// ---- the reason a message's content could not be made -----------------

struct ContentError {
    thread: rt_thread_t,
    text: ErrorText,
}

struct ContentErrorCell(UnsafeCell<ContentError>);
// SAFETY: read and written only under CONTENT_ERROR_LOCK.
unsafe impl Sync for ContentErrorCell {}

static CONTENT_ERROR: ContentErrorCell = ContentErrorCell(UnsafeCell::new(ContentError {
    thread: ptr::null_mut(),
    text: ErrorText::new(),
}));
static CONTENT_ERROR_LOCK: SleepLock = SleepLock::new();

fn set_content_error(text: &ErrorText) {
    let _held = CONTENT_ERROR_LOCK.lock();
    // SAFETY: the lock is held: nobody else touches the cell.
    let e = unsafe { &mut *CONTENT_ERROR.0.get() };
    e.thread = crate::rtt::thread::current();
    e.text.set(&[text.as_str().as_bytes()]);
}

/// Why the last `to_content` of the calling thread failed (then forgotten):
/// the agent loop puts it in its reply.
pub fn take_content_error(out: &mut ErrorText) -> bool {
    let _held = CONTENT_ERROR_LOCK.lock();
    // SAFETY: the lock is held: nobody else touches the cell.
    let e = unsafe { &mut *CONTENT_ERROR.0.get() };
    if e.thread.is_null() || e.thread != crate::rtt::thread::current() {
        return false;
    }
    out.set(&[e.text.as_str().as_bytes()]);
    e.thread = ptr::null_mut();
    true
}

// ---- to_content ---------------------------------------------------------

/// `"image"`, `"audio"` or `"video"`, for messages.
fn kind_name(t: MessageType) -> &'static str {
    match t {
        TYPE_AUDIO => "audio",
        TYPE_VIDEO => "video",
        _ => "image",
    }
}

/// The size of the file at `path`, refused (with the reason in `error`) when
/// it is missing, not a file, empty or over the cap.
fn checked_size(path: &CStr, what: &str, error: &mut ErrorText) -> Option<u32> {
    let size = match file::size(path) {
        Ok(n) => n,
        Err(e) => {
            error.set(&[
                b"cannot send the ",
                what.as_bytes(),
                b" ",
                path.to_bytes(),
                b": ",
                e.text().as_bytes(),
            ]);
            return None;
        }
    };
    let cap = max_bytes();
    if size == 0 || size as usize > cap {
        let (mut a, mut b) = ([0u8; 20], [0u8; 20]);
        error.set(&[
            b"cannot send the ",
            what.as_bytes(),
            b" ",
            path.to_bytes(),
            b": it is ",
            crate::text::decimal(u64::from(size), &mut a),
            b" bytes",
        ]);
        if size == 0 {
            error.append(&[b" (empty)"]);
        } else {
            error.append(&[
                b", more than the ",
                crate::text::decimal(cap as u64, &mut b),
                b" of PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE",
            ]);
        }
        return None;
    }
    Some(size)
}

/// The `url` value of an inline part: the marker string (see
/// [`crate::chat::inline_file`]), or NULL with the reason in `error`.
fn inline_url(path: &CStr, what: &str, error: &mut ErrorText) -> *mut cJSON {
    let Some(size) = checked_size(path, what, error) else {
        return ptr::null_mut();
    };
    if media_type(path.to_bytes()).is_none() {
        error.set(&[
            b"cannot send the ",
            what.as_bytes(),
            b" ",
            path.to_bytes(),
            b" inline: unknown file type (known by the name's extension: ",
            b"png jpg jpeg gif webp bmp mp4 mov webm avi mp3 wav ogg m4a aac flac amr)",
        ]);
        return ptr::null_mut();
    }
    // SAFETY: `path` is NUL-terminated (copied by cJSON); the new item is
    // NULL-checked before its type and size are set.
    unsafe {
        let item = cJSON_CreateString(path.as_ptr());
        if item.is_null() {
            error.set(&[b"out of memory while adding the ", what.as_bytes()]);
            return ptr::null_mut();
        }
        (*item).type_ |= INLINE_FILE;
        (*item).valueint = size as c_int;
        item
    }
}

/// A file server's id: at most 127 bytes of `[A-Za-z0-9._-]`.
pub struct FileId {
    bytes: [u8; 128],
    len: usize,
}

impl FileId {
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..self.len).unwrap_or_default()
    }
}

/// `{download}/{id}` (one `/` between them) with a NUL, on the heap.
fn download_url(download: &CStr, id: &FileId) -> Option<Vec<u8>> {
    let base = download.to_bytes();
    let base = base.strip_suffix(b"/").unwrap_or(base);
    let mut url = Vec::new();
    url.try_reserve_exact(base.len() + 2 + id.len).ok()?;
    for part in [base, b"/", id.as_bytes(), b"\0"] {
        crate::fallible::extend(&mut url, part).ok()?;
    }
    Some(url)
}

/// The `url` value of an uploaded part: `{DOWNLOAD_URL}/{file_id}`, or NULL
/// with the reason in `error`.
fn uploaded_url(path: &CStr, what: &str, error: &mut ErrorText) -> *mut cJSON {
    let Some(id) = upload(path, what, error) else {
        return ptr::null_mut();
    };
    let Some(url) = with_urls(|_, down| download_url(down, &id)) else {
        error.set(&[b"out of memory while adding the ", what.as_bytes()]);
        return ptr::null_mut();
    };
    // SAFETY: `url` ends with its NUL (made above); cJSON copies it.
    let item = unsafe { cJSON_CreateString(url.as_ptr() as *const c_char) };
    if item.is_null() {
        error.set(&[b"out of memory while adding the ", what.as_bytes()]);
    }
    item
}

/// `{"type": kind, kind: {"url": url}}`; takes `url` over. NULL without
/// memory (nothing leaks).
///
/// # Safety
/// `url` is a detached item owned by the caller, handed over.
unsafe fn media_part(kind: &CStr, url: *mut cJSON) -> *mut cJSON {
    // SAFETY: constructors; every item is NULL-checked or handed to
    // `add_to_object`, which takes it over (freeing it on failure).
    unsafe {
        let part = cJSON_CreateObject();
        let inner = cJSON_CreateObject();
        if part.is_null() || inner.is_null() {
            for t in [part, inner, url] {
                if !t.is_null() {
                    cJSON_Delete(t);
                }
            }
            return ptr::null_mut();
        }
        if json::add_to_object(inner, c"url", url).is_err()
            || json::add_to_object(part, c"type", cJSON_CreateString(kind.as_ptr())).is_err()
        {
            cJSON_Delete(part);
            cJSON_Delete(inner);
            return ptr::null_mut();
        }
        if json::add_to_object(part, kind, inner).is_err() {
            cJSON_Delete(part);
            return ptr::null_mut();
        }
        part
    }
}

/// `to_content` with multimodal on: an array with one part per item, or
/// NULL (nothing leaks) with the reason in `error`.
///
/// # Safety
/// `messages` is NULL or a live `Messages_t`, borrowed.
pub unsafe fn content_parts(messages: Messages_t, mode: Mode, error: &mut ErrorText) -> *mut cJSON {
    if messages.is_null() {
        error.set(&[b"no message"]);
        return ptr::null_mut();
    }
    // SAFETY: a live set (contract); only its count is read.
    let count = unsafe { (*messages).current_size };
    // SAFETY: a constructor; NULL-checked.
    let arr = unsafe { cJSON_CreateArray() };
    if arr.is_null() {
        error.set(&[b"out of memory while building the message"]);
        return ptr::null_mut();
    }
    let mut parts = 0;
    for i in 0..count.max(0) {
        // SAFETY: `messages` is live; the getters check the index.
        let (t, content) = unsafe {
            (
                messages_get_type_idx(messages, i),
                messages_get_content_idx(messages, i),
            )
        };
        if content.is_null() {
            continue;
        }
        // SAFETY: a live item's content is NUL-terminated and outlives this.
        let text = unsafe { CStr::from_ptr(content) };
        let part = match t {
            // SAFETY: `format_text` copies the NUL-terminated text.
            TYPE_TEXT => unsafe { super::utils::format_text(content) },
            TYPE_IMAGE | TYPE_AUDIO | TYPE_VIDEO => {
                let what = kind_name(t);
                let url = match mode {
                    Mode::Inline => inline_url(text, what, error),
                    _ => uploaded_url(text, what, error),
                };
                if url.is_null() {
                    // SAFETY: `arr` is the detached array made above.
                    unsafe { cJSON_Delete(arr) };
                    return ptr::null_mut();
                }
                // SAFETY: the static NUL-terminated name of the part type.
                let kind = unsafe { CStr::from_ptr(get_agent_content_type(t)) };
                // SAFETY: `url` is detached and handed over.
                unsafe { media_part(kind, url) }
            }
            _ => {
                crate::log_w!(
                    "to_content: item ",
                    i,
                    " has an unknown message type; left out"
                );
                continue;
            }
        };
        // SAFETY: `arr` is live; `part` is NULL or detached, taken over.
        if part.is_null() || unsafe { json::add_to_array(arr, part) }.is_err() {
            // SAFETY: `arr` is the detached array made above.
            unsafe { cJSON_Delete(arr) };
            error.set(&[b"out of memory while building the message"]);
            return ptr::null_mut();
        }
        parts += 1;
    }
    if parts == 0 {
        // SAFETY: `arr` is the detached array made above.
        unsafe { cJSON_Delete(arr) };
        error.set(&[b"the message is empty"]);
        return ptr::null_mut();
    }
    arr
}

/// Does `messages` need content parts: a file item, or more than one item?
///
/// # Safety
/// `messages` is NULL or a live `Messages_t`, borrowed.
pub unsafe fn needs_parts(messages: Messages_t) -> bool {
    if messages.is_null() {
        return false;
    }
    // SAFETY: a live set (contract); only its count is read.
    let count = unsafe { (*messages).current_size };
    // SAFETY: `messages` is live; the getter checks the index.
    count > 1 || (count == 1 && unsafe { messages_get_type_idx(messages, 0) } != TYPE_TEXT)
}

/// `to_content` with multimodal on (see [`content_parts`]); a failure is
/// logged and kept for [`take_content_error`].
///
/// # Safety
/// As for [`content_parts`].
pub unsafe fn to_content(messages: Messages_t, mode: Mode) -> *mut cJSON {
    let mut error = ErrorText::new();
    // SAFETY: our contract is content_parts'.
    let content = unsafe { content_parts(messages, mode, &mut error) };
    if content.is_null() {
        crate::log_e!("to_content: ", error.as_str());
        set_content_error(&error);
    }
    content
}

// ---- the upload ---------------------------------------------------------

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

/// Closes the session on every path.
struct Session(*mut webclient_session);
impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: made by webclient_session_create, closed once, here.
        unsafe { webclient_close(self.0) };
    }
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
    let fail = |error: &mut ErrorText, why: &[&[u8]]| {
        error.set(&[
            b"the upload of the ",
            what.as_bytes(),
            b" ",
            path.to_bytes(),
            b" failed: ",
        ]);
        error.append(why);
        None
    };
    if url.is_empty() {
        return fail(error, &[b"PKG_AGENT_UPLOAD_URL is not set"]);
    }
    let mut f = match File::open(path) {
        Ok(f) => f,
        Err(e) => return fail(error, &[e.text().as_bytes()]),
    };
    let mut buf: Vec<u8> = Vec::new();
    if crate::fallible::resize(&mut buf, UPLOAD_IO_BUF, 0).is_err() {
        return fail(error, &[b"out of memory"]);
    }
    // The boundary: fixed text and the tick in hex, never in the head.
    let mut boundary = *b"----rtt-agent-form-00000000";
    // SAFETY: reads the tick counter.
    let tick = unsafe { rt_tick_get() };
    let hex = b"0123456789abcdef";
    let at = boundary.len() - 8;
    for (k, slot) in boundary[at..].iter_mut().enumerate() {
        *slot = hex[(tick >> (28 - 4 * k as u32)) as usize & 15];
    }
    let mime = media_type(path.to_bytes()).unwrap_or("application/octet-stream");
    let name_len = form_file_name(path.to_bytes()).count();
    let head: [&[u8]; 7] = [
        b"--",
        &boundary,
        b"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"",
        b"", // the name, sent on its own
        b"\"\r\nContent-Type: ",
        mime.as_bytes(),
        b"\r\n\r\n",
    ];
    let tail: [&[u8]; 3] = [b"\r\n--", &boundary, b"--\r\n"];
    let total = head
        .iter()
        .chain(tail.iter())
        .map(|p| p.len())
        .sum::<usize>()
        + name_len
        + size as usize;

    // SAFETY: takes a size only; NULL-checked.
    let raw = unsafe { webclient_session_create(UPLOAD_HEADER_BUFSZ) };
    if raw.is_null() {
        return fail(error, &[b"no memory for the HTTP session"]);
    }
    let session = Session(raw);
    let mut len_buf = [0u8; 21];
    let len_text = crate::text::decimal_cstr(total as u64, &mut len_buf);
    let mut type_line = [0u8; 80];
    let prefix = b"Content-Type: multipart/form-data; boundary=";
    type_line[..prefix.len()].copy_from_slice(prefix);
    type_line[prefix.len()..prefix.len() + boundary.len()].copy_from_slice(&boundary);
    let end = prefix.len() + boundary.len();
    type_line[end..end + 2].copy_from_slice(b"\r\n");
    // SAFETY: a live session; each format is a NUL-terminated literal whose
    // one `%s` gets a NUL-terminated string (`type_line` is zero past its
    // text).
    let ok = unsafe {
        webclient_header_fields_add(session.0, c"%s".as_ptr(), type_line.as_ptr()) >= 0
            && webclient_header_fields_add(
                session.0,
                c"Content-Length: %s\r\n".as_ptr(),
                len_text.as_ptr(),
            ) >= 0
    };
    if !ok {
        return fail(error, &[b"the HTTP headers do not fit"]);
    }
    // SAFETY: a live session and a NUL-terminated URL; NULL data of length
    // 0 sends the head only.
    let rc = unsafe { webclient_post(session.0, url.as_ptr(), ptr::null(), 0) };
    if rc == -WEBCLIENT_NOMEM {
        return fail(error, &[b"out of memory for the connection"]);
    }
    if rc < 0 {
        return fail(
            error,
            &[b"cannot connect to the file server (check PKG_AGENT_UPLOAD_URL and the network)"],
        );
    }
    let seconds = socket_timeout_seconds(board().http_timeout_ms.clamp(1000, 600_000) as u32);
    // SAFETY: a live, connected session.
    unsafe {
        webclient_set_timeout(
            session.0,
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
                name[n] = b;
                n += 1;
                if n == name.len() {
                    sent &= send_all(session.0, &name);
                    n = 0;
                }
            }
            sent &= send_all(session.0, &name[..n]);
        } else {
            sent &= send_all(session.0, piece);
        }
    }
    let mut left = size as usize;
    while sent && left > 0 {
        if crate::chat::transport::cancelled() {
            return fail(error, &[b"cancelled (the agent is stopping)"]);
        }
        let want = left.min(buf.len());
        match f.read_full(&mut buf[..want]) {
            Ok(got) if got == want => sent = send_all(session.0, &buf[..want]),
            _ => {
                return fail(error, &[b"the file could not be read to its end"]);
            }
        }
        left -= want;
    }
    drop(f);
    for piece in tail {
        sent = sent && send_all(session.0, piece);
    }
    if !sent {
        return fail(
            error,
            &[b"the connection to the file server failed while sending"],
        );
    }
    // SAFETY: a live session whose request has been sent.
    let status = unsafe { webclient_handle_response(session.0) };
    if status == -WEBCLIENT_NOMEM {
        return fail(error, &[b"out of memory while reading the answer"]);
    }
    if status <= 0 {
        return fail(error, &[b"no answer from the file server"]);
    }
    if !(200..300).contains(&status) {
        let mut digits = [0u8; 20];
        return fail(
            error,
            &[
                b"the file server answered HTTP ",
                crate::text::decimal(status as u64, &mut digits),
            ],
        );
    }
    // The answer (its first 511 bytes: a file id fits many times over).
    let mut got = 0;
    while got < buf.len() - 1 {
        // SAFETY: a live session; the room is within `buf`.
        let n = unsafe {
            webclient_read(
                session.0,
                buf[got..].as_mut_ptr() as *mut c_void,
                buf.len() - 1 - got,
            )
        };
        if n <= 0 {
            break;
        }
        got += n as usize;
    }
    drop(session);
    buf[got] = 0;
    match parse_file_id(&buf[..=got]) {
        Ok(id) => Some(id),
        Err(IdError::NoMemory) => fail(error, &[b"out of memory while reading the answer"]),
        Err(IdError::Missing) => fail(error, &[b"the file server's answer has no usable file_id"]),
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
                bytes[..b.len()].copy_from_slice(b);
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

// ---- the C API of utils.h -------------------------------------------------

/// `file_op_type_t`.
pub type file_op_type_t = super::messages::c_enum;
pub const CMD_AGENT_FILE_UPLOAD: file_op_type_t = 0;
pub const CMD_AGENT_FILE_DOWNLOAD: file_op_type_t = 1;
pub const CMD_AGENT_FILE_EXIT: file_op_type_t = 2;
pub const CMD_AGENT_FILE_EXIT_COMPLETE: file_op_type_t = 3;
pub const CMD_AGENT_FILE_URL: file_op_type_t = 4;

/// `file_op_req`: a request to the file-operation thread, or its answer.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct file_op_req {
    pub op: file_op_type_t,
    pub path: [c_char; 128],
    pub file_id: [c_char; 128],
}

impl file_op_req {
    const fn empty(op: file_op_type_t) -> Self {
        file_op_req {
            op,
            path: [0; 128],
            file_id: [0; 128],
        }
    }
}

/// Copy `src` into `dst` with a NUL; false (nothing written) if it does not
/// fit.
fn put_text(dst: &mut [c_char], src: &[u8]) -> bool {
    if src.len() >= dst.len() {
        return false;
    }
    for (d, &s) in dst.iter_mut().zip(src.iter().chain(core::iter::once(&0))) {
        *d = s as c_char;
    }
    true
}

/// The text of a fixed field up to its first NUL (all of it without one).
fn field_text(field: &[c_char]) -> &[u8] {
    // SAFETY: `c_char` and `u8` have the same size and alignment.
    let bytes = unsafe { core::slice::from_raw_parts(field.as_ptr() as *const u8, field.len()) };
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    &bytes[..end]
}

/// The file-operation thread's kernel objects.
struct FileOp {
    input: rt_mq_t,
    output: rt_mq_t,
    thread: rt_thread_t,
    /// Released by the thread as it ends.
    done: rt_sem_t,
}

struct FileOpCell(UnsafeCell<FileOp>);
// SAFETY: changed only under FILE_OP_LOCK; the thread reads its handles
// once at its start, and they stay valid until it has said it ended.
unsafe impl Sync for FileOpCell {}

static FILE_OP: FileOpCell = FileOpCell(UnsafeCell::new(FileOp {
    input: ptr::null_mut(),
    output: ptr::null_mut(),
    thread: ptr::null_mut(),
    done: ptr::null_mut(),
}));
static FILE_OP_LOCK: SleepLock = SleepLock::new();

const FILE_OP_THREAD: &CStr = c"fileop_wk";
/// As the C package: four requests in each queue, priority 9, tick 20.
const FILE_OP_QUEUE: rt_size_t = 4;
const FILE_OP_PRIORITY: u8 = 9;

fn file_op<R>(f: impl FnOnce(&mut FileOp) -> R) -> R {
    let _held = FILE_OP_LOCK.lock();
    // SAFETY: the lock is held: nobody else touches the cell.
    f(unsafe { &mut *FILE_OP.0.get() })
}

/// The URL in the static buffer `agent_up_load` returns.
struct UrlBuf(UnsafeCell<[c_char; 128]>);
// SAFETY: written only under URL_LOCK (what a caller does with the pointer
// afterwards is the ABI's: "copy it at once").
unsafe impl Sync for UrlBuf {}
static UP_LOAD_URL: UrlBuf = UrlBuf(UnsafeCell::new([0; 128]));
static URL_LOCK: SleepLock = SleepLock::new();

/// The worker: uploads and downloads for the requests on the input queue.
unsafe extern "C" fn file_op_worker(_parameter: *mut c_void) {
    ffi_fn!(failure = (), {
        let (input, output, done) = file_op(|s| (s.input, s.output, s.done));
        loop {
            let mut req = file_op_req::empty(CMD_AGENT_FILE_EXIT);
            // SAFETY: `input` is live until this thread says it ended;
            // `req` has room for one message.
            let n = unsafe {
                rt_mq_recv(
                    input,
                    &mut req as *mut file_op_req as *mut c_void,
                    core::mem::size_of::<file_op_req>(),
                    RT_WAITING_FOREVER,
                )
            };
            if n < 0 || req.op == CMD_AGENT_FILE_EXIT {
                break;
            }
            match req.op {
                CMD_AGENT_FILE_UPLOAD => {
                    let mut answer = file_op_req::empty(CMD_AGENT_FILE_URL);
                    let path = field_text(&req.path);
                    let mut cpath = [0u8; 129];
                    cpath[..path.len()].copy_from_slice(path);
                    let cpath = CStr::from_bytes_until_nul(&cpath).unwrap_or(c"");
                    let mut error = ErrorText::new();
                    match upload(cpath, "file", &mut error) {
                        Some(id) => {
                            let url = with_urls(|_, down| download_url(down, &id));
                            let url = url.as_deref().unwrap_or_default();
                            let url = url.strip_suffix(b"\0").unwrap_or(url);
                            if !put_text(&mut answer.path, url)
                                || !put_text(&mut answer.file_id, id.as_bytes())
                            {
                                answer = file_op_req::empty(CMD_AGENT_FILE_URL);
                                crate::log_e!("[fileop] the URL does not fit 127 bytes");
                            }
                        }
                        None => crate::log_e!("[fileop] ", error.as_str()),
                    }
                    // SAFETY: `output` is live while this thread runs.
                    let sent = unsafe {
                        rt_mq_send(
                            output,
                            &answer as *const file_op_req as *const c_void,
                            core::mem::size_of::<file_op_req>(),
                        )
                    };
                    if sent != rt_eok() {
                        crate::log_w!("[fileop] the upload's answer was dropped (queue full)");
                    }
                }
                CMD_AGENT_FILE_DOWNLOAD => {
                    let id = field_text(&req.file_id);
                    let path = field_text(&req.path);
                    let mut cpath = [0u8; 129];
                    cpath[..path.len()].copy_from_slice(path);
                    let url = with_urls(|_, down| {
                        let mut fid = FileId {
                            bytes: [0; 128],
                            len: id.len().min(127),
                        };
                        fid.bytes[..fid.len].copy_from_slice(&id[..fid.len]);
                        download_url(down, &fid)
                    });
                    let rc = match url {
                        // SAFETY: both are NUL-terminated (made above).
                        Some(url) => unsafe {
                            webclient_get_file(
                                url.as_ptr() as *const c_char,
                                cpath.as_ptr() as *const c_char,
                            )
                        },
                        None => -WEBCLIENT_NOMEM,
                    };
                    if rc == WEBCLIENT_OK {
                        crate::log_i!("[fileop] downloaded ", id, " to ", path);
                    } else {
                        crate::log_e!("[fileop] download of ", id, " failed: ", rc);
                    }
                }
                _ => crate::log_w!("[fileop] unknown request ", req.op as isize),
            }
        }
        // SAFETY: `done` is live until deinit has taken it (after this).
        unsafe { rt_sem_release(done) };
    })
}

/// Delete whichever of the objects exist.
///
/// # Safety
/// Each is NULL or a live object nobody uses any more.
unsafe fn delete_objects(input: rt_mq_t, output: rt_mq_t, done: rt_sem_t) {
    // SAFETY: each is NULL or live and unused (contract).
    unsafe {
        if !input.is_null() {
            rt_mq_delete(input);
        }
        if !output.is_null() {
            rt_mq_delete(output);
        }
        if !done.is_null() {
            rt_sem_delete(done);
        }
    }
}

/// Start the file-operation thread (`fileop_wk`, stack
/// `PKG_AGENT_FILE_OP_THREAD_SIZE`) and its queues. Returns the thread
/// (owned by the kernel; the running one if already started), or `RT_NULL`
/// when an object cannot be created (nothing is left behind).
#[no_mangle]
pub extern "C" fn agent_file_op_init() -> rt_thread_t {
    ffi_fn!(failure = ptr::null_mut(), {
        file_op(|s| {
            if !s.thread.is_null() {
                return s.thread;
            }
            let size = core::mem::size_of::<file_op_req>();
            // SAFETY: names are NUL-terminated; every result is NULL-checked
            // and deleted again on a later failure.
            unsafe {
                let input = rt_mq_create(c"fileop_mq_in".as_ptr(), size, FILE_OP_QUEUE, 0);
                let output = rt_mq_create(c"fileop_mq_out".as_ptr(), size, FILE_OP_QUEUE, 0);
                let done = rt_sem_create(c"fileop_done".as_ptr(), 0, 0);
                if input.is_null() || output.is_null() || done.is_null() {
                    delete_objects(input, output, done);
                    return ptr::null_mut();
                }
                s.input = input;
                s.output = output;
                s.done = done;
            }
            let spec = crate::rtt::thread::Spec {
                name: FILE_OP_THREAD,
                stack_size: board().file_op_thread_size().min(u32::MAX as usize) as u32,
                priority: FILE_OP_PRIORITY,
                tick: 20,
            };
            // The thread reads the handles under the lock held here, so it
            // waits until they are all set.
            match crate::rtt::thread::Thread::spawn(&spec, file_op_worker) {
                Some(t) => {
                    s.thread = t;
                    t
                }
                None => {
                    // SAFETY: the objects made above; no thread uses them.
                    unsafe { delete_objects(s.input, s.output, s.done) };
                    *s = FileOp {
                        input: ptr::null_mut(),
                        output: ptr::null_mut(),
                        thread: ptr::null_mut(),
                        done: ptr::null_mut(),
                    };
                    ptr::null_mut()
                }
            }
        })
    })
}

/// Stop the file-operation thread: it finishes the request in hand, ends,
/// and its queues are deleted. Safe to call when it never started.
#[no_mangle]
pub extern "C" fn agent_file_op_deinit() {
    ffi_fn!(failure = (), {
        let (input, output, done) = file_op(|s| (s.input, s.output, s.done));
        if input.is_null() {
            return;
        }
        let exit = file_op_req::empty(CMD_AGENT_FILE_EXIT);
        // A request in hand may take the file server's timeout, twice over
        // (the send and the answer), before the thread sees the exit.
        let patience = board().http_timeout_ms.clamp(1000, 600_000) as u32 * 3;
        let mut waited = 0;
        // SAFETY: the queue is live (the thread has not ended); `exit` is
        // one message.
        while unsafe {
            rt_mq_send(
                input,
                &exit as *const file_op_req as *const c_void,
                core::mem::size_of::<file_op_req>(),
            )
        } != rt_eok()
        {
            if waited >= patience {
                crate::log_e!("[fileop] the thread does not take its exit; left running");
                return;
            }
            crate::rtt::thread::sleep_ms(50);
            waited += 50;
        }
        // SAFETY: `done` is live until deleted below.
        if unsafe { rt_sem_take(done, crate::rtt::ipc::ticks_from_ms(patience)) } != rt_eok() {
            crate::log_e!("[fileop] the thread did not end in time; its queues are left");
            return;
        }
        file_op(|s| {
            // SAFETY: the thread has ended; nobody else uses the objects.
            unsafe { delete_objects(s.input, s.output, s.done) };
            *s = FileOp {
                input: ptr::null_mut(),
                output: ptr::null_mut(),
                thread: ptr::null_mut(),
                done: ptr::null_mut(),
            };
        });
        let _ = output;
        // The kernel frees an ended thread a little later (the idle thread).
        for _ in 0..200 {
            if !crate::rtt::thread::exists(FILE_OP_THREAD) {
                break;
            }
            crate::rtt::thread::sleep_ms(5);
        }
    })
}

/// The file-operation thread's input queue (`file_op_req` messages), or
/// `RT_NULL` while it is not running. Owned by the library.
#[no_mangle]
pub extern "C" fn get_agent_file_op_mq_input() -> rt_mq_t {
    ffi_fn!(failure = ptr::null_mut(), { file_op(|s| s.input) })
}

/// The file-operation thread's output queue (a `CMD_AGENT_FILE_URL` answer
/// per upload request: `path` the URL, `file_id` the id, both empty after a
/// failure), or `RT_NULL` while it is not running. Owned by the library.
#[no_mangle]
pub extern "C" fn get_agent_file_op_mq_output() -> rt_mq_t {
    ffi_fn!(failure = ptr::null_mut(), { file_op(|s| s.output) })
}

/// Upload the file at `path` now, on the calling thread, and return its
/// URL (`{PKG_AGENT_DOWNLOAD_URL}/{file_id}`) in a static buffer the
/// library owns: copy it before the next call. `""` when the upload fails
/// (the reason is logged), `RT_NULL` for a NULL path. Borrows `path`.
#[no_mangle]
pub unsafe extern "C" fn agent_up_load(path: *const c_char) -> *mut c_char {
    ffi_fn!(failure = ptr::null_mut(), nonnull(path), {
        // SAFETY: non-NULL and NUL-terminated (the caller's contract).
        let path = unsafe { CStr::from_ptr(path) };
        let mut error = ErrorText::new();
        let url = upload(path, "file", &mut error)
            .and_then(|id| with_urls(|_, down| download_url(down, &id)));
        if url.is_none() && error.len == 0 {
            error.set(&[b"out of memory"]);
        }
        let _held = URL_LOCK.lock();
        // SAFETY: the buffer is written only under URL_LOCK, held.
        let out = unsafe { &mut *UP_LOAD_URL.0.get() };
        out[0] = 0;
        if let Some(url) = url {
            let url = url.strip_suffix(b"\0").unwrap_or(&url);
            if !put_text(out, url) {
                crate::log_e!("agent_up_load: the URL is longer than 127 bytes");
            }
        } else {
            crate::log_e!("agent_up_load: ", error.as_str());
        }
        out.as_mut_ptr()
    })
}

/// Ask the file-operation thread to download `{PKG_AGENT_DOWNLOAD_URL}/
/// {file_id}` into the file `path` (created or replaced). Returns `RT_EOK`
/// once queued; `-RT_ERROR` when the thread is not running, an argument is
/// NULL or longer than 127 bytes, or the queue is full. Borrows both.
#[no_mangle]
pub unsafe extern "C" fn down_load(path: *const c_char, file_id: *const c_char) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), nonnull(path, file_id), {
        let mut req = file_op_req::empty(CMD_AGENT_FILE_DOWNLOAD);
        // SAFETY: both non-NULL and NUL-terminated (the caller's contract).
        let (p, id) = unsafe { (CStr::from_ptr(path), CStr::from_ptr(file_id)) };
        if !put_text(&mut req.path, p.to_bytes()) || !put_text(&mut req.file_id, id.to_bytes()) {
            crate::log_e!("down_load: the path or the file id is longer than 127 bytes");
            return -rt_error();
        }
        file_op(|s| {
            if s.input.is_null() {
                crate::log_e!("down_load: the file-operation thread is not running");
                return -rt_error();
            }
            // SAFETY: the queue is live while the lock is held; `req` is one
            // message.
            let sent = unsafe {
                rt_mq_send(
                    s.input,
                    &req as *const file_op_req as *const c_void,
                    core::mem::size_of::<file_op_req>(),
                )
            };
            if sent == rt_eok() {
                rt_eok()
            } else {
                -rt_error()
            }
        })
    })
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
