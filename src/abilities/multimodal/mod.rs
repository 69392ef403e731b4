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
//!   ([`crate::wire::chat::inline_file`]); no file server.
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
//!
//! Here: the settings, `to_content`'s parts and the reason a content
//! failed; `upload.rs`: the upload and the server's file id; `file_op.rs`:
//! utils.h's C API (the thread, its queues, `agent_up_load`, `down_load`).

pub mod file_op;
pub mod upload;

pub use file_op::*;
pub use upload::{parse_file_id, upload, FileId, IdError};

use crate::abi::messages::{
    get_agent_content_type, messages_get_content_idx, messages_get_type_idx, MessageType,
    Messages_t, TYPE_AUDIO, TYPE_IMAGE, TYPE_TEXT, TYPE_VIDEO,
};
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::net::error::ErrorText;
use crate::rtt::atomic::{AtomicBool, Ordering};
use crate::rtt::file;
use crate::rtt::sleep_cell::SleepCell;
use crate::rtt::*;
use crate::wire::chat::inline_file::{media_type, INLINE_FILE};
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, CStr};
use core::ptr;
use upload::download_url;

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
#[cfg(feature = "host-port")]
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub mode: Option<Mode>,
    pub upload_url: Option<alloc::ffi::CString>,
    pub download_url: Option<alloc::ffi::CString>,
    pub max_bytes: Option<usize>,
}

#[cfg(feature = "host-port")]
static OVERRIDES: std::sync::Mutex<Option<Overrides>> = std::sync::Mutex::new(None);

/// Host only: replace (or with `Overrides::default()`, restore) the
/// settings for what follows.
#[cfg(feature = "host-port")]
pub fn set_overrides(o: Overrides) {
    *OVERRIDES.lock().unwrap_or_else(|e| e.into_inner()) = Some(o);
}

/// Host only, for the C tests (`rt_host.h`): [`set_overrides`] from C.
/// `mode` 0 off, 1 upload, 2 inline; NULL URLs and `max_bytes <= 0` keep
/// the build's value; `mode < 0` restores every setting. Copies the strings.
#[cfg(feature = "host-port")]
pub unsafe fn rt_host_multimodal_set(
    mode: c_int,
    upload_url: *const c_char,
    download_url: *const c_char,
    max_bytes: core::ffi::c_long,
) {
    if mode < 0 {
        set_overrides(Overrides::default());
        return;
    }
    // SAFETY: NULL or NUL-terminated (this function's contract); copied.
    let copy =
        |p: *const c_char| unsafe { crate::base::text::cstr_arg(p) }.map(alloc::ffi::CString::from);
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
}

/// Read the host's overrides in place (no copy: the library's paths must
/// not allocate for them, or an allocation walk would see host-only
/// allocations).
#[cfg(feature = "host-port")]
fn with_overrides<R>(f: impl FnOnce(&Overrides) -> R) -> R {
    let held = OVERRIDES.lock().unwrap_or_else(|e| e.into_inner());
    match held.as_ref() {
        Some(o) => f(o),
        None => f(&Overrides::default()),
    }
}

/// The mode in use.
pub fn mode() -> Mode {
    #[cfg(feature = "host-port")]
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
    #[cfg(feature = "host-port")]
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
    #[cfg(feature = "host-port")]
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

/// The reason and the thread it is for. On the heap, only from a failure
/// until the loop takes it (or the agent is torn down): a 200-byte buffer
/// here was `.bss` on every board with multimodal on.
struct ContentError {
    thread: rt_thread_t,
    text: Vec<u8>,
}

// SAFETY: the thread handle is only compared, never used to reach the
// thread.
unsafe impl Send for ContentError {}

static CONTENT_ERROR: SleepCell<ContentError> = SleepCell::new(ContentError {
    thread: ptr::null_mut(),
    text: Vec::new(),
});

fn with_content_error<R>(f: impl FnOnce(&mut ContentError) -> R) -> R {
    CONTENT_ERROR.with(f)
}

/// Whether reasons are kept: while the agent runs ([`keep_content_errors`]).
static KEEP_CONTENT_ERRORS: AtomicBool = AtomicBool::new(false);

/// The agent loop keeps the reasons of failed `to_content` calls from when
/// it runs (`true`) until its tear-down (`false`, then forgets them).
pub fn keep_content_errors(on: bool) {
    with_content_error(|e| {
        KEEP_CONTENT_ERRORS.store(on, Ordering::SeqCst);
        if !on {
            forget(e);
        }
    })
}

/// Keep `text` for the calling thread, while the agent runs: its loop is
/// the one reader ([`take_content_error`]), and its tear-down forgets what
/// the loop did not take. With no agent running (utils.h's `to_content`
/// called on its own) nothing is kept, nobody could ask for it, and the
/// heap stays at its baseline. Checked under the lock, which the tear-down's
/// [`forget_content_error`] takes after the agent has left `Running`: a
/// reason is either refused here or freed there. Without memory for it
/// nothing is kept, and the loop's reply gives the general reason instead.
fn set_content_error(text: &ErrorText) {
    with_content_error(|e| {
        forget(e);
        if !KEEP_CONTENT_ERRORS.load(Ordering::SeqCst) {
            return;
        }
        e.text = crate::base::fallible::copy_of(text.as_str().as_bytes()).unwrap_or_default();
        e.thread = if e.text.is_empty() {
            ptr::null_mut()
        } else {
            crate::rtt::thread::current()
        };
    })
}

/// Why the last `to_content` of the calling thread failed (then forgotten):
/// the agent loop puts it in its reply.
pub fn take_content_error(out: &mut ErrorText) -> bool {
    with_content_error(|e| {
        if e.thread.is_null() || e.thread != crate::rtt::thread::current() {
            return false;
        }
        out.set(&[e.text.as_slice()]);
        forget(e);
        true
    })
}

/// Forget a kept reason, whoever it was for (the agent's tear-down: its
/// heap goes back with the agent's).
pub fn forget_content_error() {
    with_content_error(forget)
}

fn forget(e: &mut ContentError) {
    e.thread = ptr::null_mut();
    e.text = Vec::new();
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

/// `cannot send the <what> <path>` and `why` as the reason in `error`.
fn cannot_send(error: &mut ErrorText, what: &str, path: &CStr, why: &[&[u8]]) {
    error.set(&[b"cannot send the ", what.as_bytes(), b" ", path.to_bytes()]);
    error.append(why);
}

/// The size of the file at `path`, refused (with the reason in `error`) when
/// it is missing, not a file, empty or over the cap.
fn checked_size(path: &CStr, what: &str, error: &mut ErrorText) -> Option<u32> {
    let size = match file::size(path) {
        Ok(n) => n,
        Err(e) => {
            cannot_send(error, what, path, &[b": ", e.text().as_bytes()]);
            return None;
        }
    };
    let cap = max_bytes();
    if size == 0 || size as usize > cap {
        let (mut a, mut b) = ([0u8; 20], [0u8; 20]);
        cannot_send(
            error,
            what,
            path,
            &[
                b": it is ",
                crate::base::text::decimal(u64::from(size), &mut a),
                b" bytes",
            ],
        );
        if size == 0 {
            error.append(&[b" (empty)"]);
        } else {
            error.append(&[
                b", more than the ",
                crate::base::text::decimal(cap as u64, &mut b),
                b" of PKG_AGENT_MULTIMODAL_MAX_FILE_SIZE",
            ]);
        }
        return None;
    }
    Some(size)
}

/// The `url` value of an inline part: the marker string (see
/// [`crate::wire::chat::inline_file`]), or NULL with the reason in `error`.
fn inline_url(path: &CStr, what: &str, error: &mut ErrorText) -> *mut cJSON {
    let Some(size) = checked_size(path, what, error) else {
        return ptr::null_mut();
    };
    // The size is kept in the item's `valueint` (a C int): a cap set above
    // 2 GB does not make a larger file fit there.
    if size > c_int::MAX as u32 {
        cannot_send(error, what, path, &[b" inline: 2 GB or more"]);
        return ptr::null_mut();
    }
    if media_type(path.to_bytes()).is_none() {
        cannot_send(
            error,
            what,
            path,
            &[concat!(
                " inline: unknown file type (known by the name's extension: ",
                "png jpg jpeg gif webp bmp mp4 mov webm avi mp3 wav ogg m4a aac flac amr)"
            )
            .as_bytes()],
        );
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

/// The `url` value of an uploaded part: `{DOWNLOAD_URL}/{file_id}`, or NULL
/// with the reason in `error`.
fn uploaded_url(path: &CStr, what: &str, error: &mut ErrorText) -> *mut cJSON {
    let Some(id) = upload(path, what, error) else {
        return ptr::null_mut();
    };
    let item = match with_urls(|_, down| download_url(down, &id)) {
        // SAFETY: `url` ends with its NUL (made by `download_url`); cJSON
        // copies it.
        Some(url) => unsafe { cJSON_CreateString(url.as_ptr() as *const c_char) },
        None => ptr::null_mut(),
    };
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
            // SAFETY: `text_part` copies the NUL-terminated text.
            TYPE_TEXT => unsafe { crate::wire::chat::content::text_part(content) },
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

/// Multimodal messages: a message's files become content parts, the
/// file-operation thread runs with the agent, and the reason a file could
/// not be sent becomes the reply.
pub const ABILITY: crate::runtime::ability::Ability = crate::runtime::ability::Ability {
    open: Some(open),
    closed: Some(closed),
    running: Some(keep_content_errors),
    why_refused: Some(take_content_error),
    content: Some(content),
    ..crate::runtime::ability::Ability::NONE
};

fn open() {
    if mode() != Mode::Off && agent_file_op_init().is_null() {
        crate::log_w!("init_agent: the file-operation thread did not start (no memory)");
    }
}

fn closed() {
    agent_file_op_deinit();
    // A reason no loop took (a to_content of another thread's).
    forget_content_error();
}

/// # Safety
/// `messages` is NULL or live, borrowed.
unsafe fn content(messages: Messages_t, for_context: bool) -> Option<*mut cJSON> {
    let mode = mode();
    // SAFETY: `messages` is NULL or live (contract), only read.
    if mode == Mode::Off || (for_context && !unsafe { needs_parts(messages) }) {
        return None;
    }
    // SAFETY: as above; the result is the caller's.
    Some(unsafe { to_content(messages, mode) })
}
