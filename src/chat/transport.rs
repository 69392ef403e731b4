//! One chat request over the webclient API, with bounded retries.
//!
//! The same code runs on the device (the board's webclient package) and on
//! the host (the host port's webclient over real TCP). The body is streamed
//! from the caller's trees (see [`super::request`]); the response body is
//! handed, read by read, to a [`ResponseSink`] (the SSE parser).
//!
//! Retried: connect and write failures, read failures and timeouts before
//! any event was delivered, HTTP 429 and 5xx (honouring `Retry-After`).
//! Never retried: other 4xx, and anything after the answer started to
//! arrive (its fragments already reached the caller's callbacks).

use super::request::{body_length, write_body, ByteSink, ChatRequest, WriteError};
use crate::rtt::webclient::*;
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

/// Header buffer of a session: our five header lines and webclient's own.
const HEADER_BUFSZ: usize = 1024;
/// How much of an error response body is kept to find its message.
const ERROR_BODY_MAX: usize = 2048;
/// Longest single wait between attempts.
const MAX_BACKOFF_MS: u32 = 60_000;
/// Largest read buffer, whatever PKG_AGENT_RESP_BUFSZ says: the parser is
/// incremental, so a bigger buffer only costs heap.
const MAX_READ_BUF: usize = 4096;

/// Longest socket timeout the transport sets, in seconds (keeps the
/// conversion below in 32-bit arithmetic).
const MAX_TIMEOUT_S: u32 = 3600;

/// Whole seconds the socket waits for `timeout_ms`: rounded up, at least 1
/// (lwIP reads a zero timeval as "no timeout").
pub fn socket_timeout_seconds(timeout_ms: u32) -> u32 {
    timeout_ms.div_ceil(1000).clamp(1, MAX_TIMEOUT_S)
}

/// The argument for `webclient_set_timeout` that gives the socket
/// `seconds`. Every webclient 2.x (2.0.1 to 2.3.0, `src/webclient.c`)
/// computes `rt_tick_from_millisecond(ms) / 1000` and calls that seconds, so
/// on a 100 Hz tick it turns 30000 into 3: the value is scaled by
/// `1000 / RT_TICK_PER_SECOND` here so that the kernel's conversion lands on
/// `seconds` exactly.
pub fn webclient_timeout_arg(seconds: u32, tick_per_second: u32) -> c_int {
    let hz = tick_per_second.max(1);
    let seconds = seconds.min(MAX_TIMEOUT_S);
    // ms such that ms * hz / 1000 == seconds * 1000 ticks, rounded up:
    // seconds * 10^6 / hz, split so nothing overflows 32 bits.
    let whole = seconds.saturating_mul(1_000_000 / hz);
    let part = (seconds * (1_000_000 % hz)).div_ceil(hz);
    whole.saturating_add(part).min(i32::MAX as u32) as c_int
}

/// Cancellation of the agent loop's own request: set by the agent's cleanup,
/// seen only on the thread registered with [`cancel_on_thread`] (the loop
/// thread), so a C caller's own `chat()` on another thread is never
/// cancelled by it.
static CANCEL: AtomicBool = AtomicBool::new(false);
static CANCEL_THREAD: AtomicPtr<crate::rtt::rt_thread> = AtomicPtr::new(core::ptr::null_mut());

/// Requests made on `thread` (NULL: none) are the ones cleanup cancels.
pub fn cancel_on_thread(thread: crate::rtt::rt_thread_t) {
    CANCEL_THREAD.store(thread, Ordering::SeqCst);
}
pub fn request_cancel() {
    CANCEL.store(true, Ordering::SeqCst);
}
pub fn clear_cancel() {
    CANCEL.store(false, Ordering::SeqCst);
}
/// Should the request running on this thread stop?
pub fn cancelled() -> bool {
    if !CANCEL.load(Ordering::SeqCst) {
        return false;
    }
    let owner = CANCEL_THREAD.load(Ordering::SeqCst);
    // SAFETY: rt_thread_self only reads the scheduler's current thread; it has
    // no preconditions.
    !owner.is_null() && owner == unsafe { crate::rtt::rt_thread_self() }
}

/// Where the response body goes.
pub trait ResponseSink {
    type Error: Copy;
    /// Bytes of the body, as a read returned them.
    fn body(&mut self, bytes: &[u8]) -> Result<Flow, Self::Error>;
    /// The server closed the body.
    fn end(&mut self) -> Result<(), Self::Error>;
    /// Has anything reached the caller yet (so a retry would repeat it)?
    fn delivered(&self) -> bool;
    /// Forget what an attempt fed in, before the next attempt starts.
    fn restart(&mut self);
}

/// Whether to keep reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    More,
    /// The stream is complete (`[DONE]`): stop reading.
    Done,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure<E> {
    /// Could not connect or send the request.
    Connect,
    /// A read timed out.
    Timeout,
    /// A read failed (connection reset, ...).
    Read,
    /// The server answered with this status; its message is in the
    /// transport's error text.
    Status(c_int),
    /// No memory for the session or a buffer.
    NoMemory,
    /// The request could not be written (see [`WriteError`]).
    Request(WriteError),
    /// The agent is shutting down.
    Cancelled,
    /// The response stream failed (parser error).
    Stream(E),
}

pub struct Settings<'a> {
    pub url: &'a CStr,
    pub api_key: &'a CStr,
    pub timeout_ms: u32,
    pub retries: u32,
    pub retry_base_ms: u32,
    pub read_buffer: usize,
}

/// A short description of the last failure (status line, server message),
/// never containing the API key.
pub struct ErrorText {
    pub buf: [u8; 200],
    pub len: usize,
}

impl ErrorText {
    pub const fn new() -> Self {
        ErrorText {
            buf: [0; 200],
            len: 0,
        }
    }
    pub fn clear(&mut self) {
        self.len = 0;
    }
    pub fn as_str(&self) -> &str {
        match core::str::from_utf8(&self.buf[..self.len]) {
            Ok(s) => s,
            Err(e) => core::str::from_utf8(&self.buf[..e.valid_up_to()]).unwrap_or(""),
        }
    }
    pub fn set(&mut self, parts: &[&[u8]]) {
        self.len = 0;
        for p in parts {
            for &b in p.iter() {
                if self.len == self.buf.len() {
                    return;
                }
                // Keep it one printable line.
                self.buf[self.len] = if b < 0x20 { b' ' } else { b };
                self.len += 1;
            }
        }
    }
}

impl Default for ErrorText {
    fn default() -> Self {
        Self::new()
    }
}

/// Buffers body bytes and writes them to the session in pieces.
struct SessionWriter {
    session: *mut webclient_session,
    buf: [u8; 512],
    len: usize,
}

impl SessionWriter {
    fn flush(&mut self) -> Result<(), WriteError> {
        let mut off = 0;
        while off < self.len {
            if cancelled() {
                return Err(WriteError::Sink);
            }
            // SAFETY: a live session; the pointer and length are within `buf`.
            let n = unsafe {
                webclient_write(
                    self.session,
                    self.buf[off..].as_ptr() as *const c_void,
                    self.len - off,
                )
            };
            if n <= 0 {
                return Err(WriteError::Sink);
            }
            off += n as usize;
        }
        self.len = 0;
        Ok(())
    }
}

impl ByteSink for SessionWriter {
    fn put(&mut self, mut bytes: &[u8]) -> Result<(), WriteError> {
        while !bytes.is_empty() {
            let room = self.buf.len() - self.len;
            let n = room.min(bytes.len());
            self.buf[self.len..self.len + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
            if self.len == self.buf.len() {
                self.flush()?;
            }
        }
        Ok(())
    }
}

/// Closes the session when dropped, on every path.
struct Session(*mut webclient_session);

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: created by webclient_session_create; closed exactly once.
        unsafe {
            webclient_close(self.0);
        }
    }
}

/// What one attempt ended with.
enum Attempt<E> {
    Ok,
    /// Failed; retry after at least this many ms if allowed.
    Failed {
        failure: Failure<E>,
        retryable: bool,
        retry_after_ms: Option<u32>,
    },
}

/// Send the request and stream the answer into `sink`, retrying transient
/// failures. `error` receives a description of the final failure.
///
/// # Safety
/// The trees in `req` stay alive and unmodified during the call.
pub unsafe fn send<S: ResponseSink>(
    settings: &Settings<'_>,
    req: &ChatRequest<'_>,
    sink: &mut S,
    error: &mut ErrorText,
) -> Result<(), Failure<S::Error>> {
    error.clear();
    if crate::rtt::board().webclient_tls == 0 && is_https(settings.url) {
        error.set(&[
            b"https:// needs TLS, and this firmware's webclient has none ",
            b"(enable webclient's MbedTLS mode, or use an http:// endpoint)",
        ]);
        return Err(Failure::Connect);
    }
    // SAFETY: the trees in `req` stay alive and unmodified (our contract).
    let length = unsafe { body_length(req) }.map_err(Failure::Request)?;
    let mut attempt: u32 = 0;
    loop {
        if cancelled() {
            error.set(&[b"cancelled"]);
            return Err(Failure::Cancelled);
        }
        if attempt > 0 {
            sink.restart();
        }
        // SAFETY: the trees in `req` stay alive and unmodified (our contract).
        match unsafe { attempt_once(settings, req, length, sink, error) } {
            Attempt::Ok => return Ok(()),
            Attempt::Failed {
                failure,
                retryable,
                retry_after_ms,
            } => {
                if !retryable || attempt >= settings.retries || sink.delivered() {
                    return Err(failure);
                }
                let backoff = settings
                    .retry_base_ms
                    .saturating_mul(1u32 << attempt.min(16))
                    .min(MAX_BACKOFF_MS);
                let wait = retry_after_ms.map_or(backoff, |ra| ra.min(MAX_BACKOFF_MS));
                crate::log_w!(
                    "request failed ({}); retry {} of {} in {} ms",
                    error.as_str(),
                    attempt + 1,
                    settings.retries,
                    wait
                );
                if !sleep_unless_cancelled(wait) {
                    error.set(&[b"cancelled"]);
                    return Err(Failure::Cancelled);
                }
                attempt += 1;
            }
        }
    }
}

/// Sleep in short slices so a cleanup is not held up; false if cancelled.
fn sleep_unless_cancelled(ms: u32) -> bool {
    let mut left = ms;
    while left > 0 {
        if cancelled() {
            return false;
        }
        let slice = left.min(100);
        // SAFETY: rt_thread_mdelay has no memory preconditions; requests run on
        // a thread, never in an interrupt.
        unsafe { crate::rtt::rt_thread_mdelay(slice as i32) };
        left -= slice;
    }
    !cancelled()
}

/// # Safety
/// The trees in `req` stay alive and unmodified during the call, and `length`
/// is [`body_length`] of `req`.
unsafe fn attempt_once<S: ResponseSink>(
    settings: &Settings<'_>,
    req: &ChatRequest<'_>,
    length: usize,
    sink: &mut S,
    error: &mut ErrorText,
) -> Attempt<S::Error> {
    let failed = |failure, retryable| Attempt::Failed {
        failure,
        retryable,
        retry_after_ms: None,
    };
    // SAFETY: webclient_session_create takes only a size; NULL is handled below.
    let raw = unsafe { webclient_session_create(HEADER_BUFSZ) };
    if raw.is_null() {
        error.set(&[b"no memory for the HTTP session"]);
        return failed(Failure::NoMemory, false);
    }
    let session = Session(raw);

    let mut len_buf = [0u8; 21];
    let len_text = crate::text::decimal_cstr(length as u64, &mut len_buf);
    // SAFETY: `session.0` is a live session; each format is a NUL-terminated
    // literal whose one `%s` (if any) gets a NUL-terminated string.
    let mut ok = unsafe {
        webclient_header_fields_add(session.0, c"Content-Type: application/json\r\n".as_ptr()) >= 0
            && webclient_header_fields_add(session.0, c"Accept: text/event-stream\r\n".as_ptr())
                >= 0
            && webclient_header_fields_add(
                session.0,
                c"Content-Length: %s\r\n".as_ptr(),
                len_text.as_ptr(),
            ) >= 0
    };
    if ok && !settings.api_key.is_empty() {
        // SAFETY: a live session, a literal format with one `%s`, and the key
        // is a `&CStr`, so NUL-terminated.
        ok = unsafe {
            webclient_header_fields_add(
                session.0,
                c"Authorization: Bearer %s\r\n".as_ptr(),
                settings.api_key.as_ptr(),
            )
        } >= 0;
    }
    if !ok {
        error.set(&[b"HTTP headers do not fit the session's header buffer"]);
        return failed(Failure::NoMemory, false);
    }

    // SAFETY: a live session and a NUL-terminated URL; NULL data of length 0
    // makes webclient_post send the head only.
    if unsafe { webclient_post(session.0, settings.url.as_ptr(), core::ptr::null(), 0) } < 0 {
        // Not the URL: some providers take the key as a query parameter.
        error.set(&[b"cannot connect to the server (check the URL and the network)"]);
        return failed(Failure::Connect, true);
    }
    // Only now: webclient_set_timeout sets the options of the session's
    // socket, which exists once webclient_post has connected; called before,
    // it changes nothing and webclient's 6 s default stays.
    let seconds = socket_timeout_seconds(settings.timeout_ms);
    // Bounds that fit rt_base_t on every board (u32::MAX as isize is -1 on
    // a 32-bit one, and clamp(1, -1) panics); no kernel ticks faster.
    let hz = crate::rtt::board().tick_per_second.clamp(1, 1_000_000) as u32;
    // SAFETY: `session.0` is a live, connected session.
    unsafe { webclient_set_timeout(session.0, webclient_timeout_arg(seconds, hz)) };
    let mut writer = SessionWriter {
        session: session.0,
        buf: [0; 512],
        len: 0,
    };
    // SAFETY: the trees in `req` stay alive and unmodified (our contract).
    if let Err(e) = unsafe { write_body(req, &mut writer) }.and_then(|_| writer.flush()) {
        if cancelled() {
            error.set(&[b"cancelled"]);
            return failed(Failure::Cancelled, false);
        }
        return match e {
            WriteError::Sink => {
                error.set(&[b"sending the request failed"]);
                failed(Failure::Connect, true)
            }
            other => {
                error.set(&[b"the request could not be written"]);
                failed(Failure::Request(other), false)
            }
        };
    }
    // SAFETY: rt_tick_get only reads the tick counter.
    let asked_at = unsafe { crate::rtt::rt_tick_get() };
    // SAFETY: `session.0` is a live session whose request has been sent.
    let status = unsafe { webclient_handle_response(session.0) };
    if status < 0 {
        // webclient_handle_response passes recv()'s -1 through on a socket
        // timeout (only webclient_read maps it to -WEBCLIENT_TIMEOUT), so a
        // failure after waiting out the timeout is reported as one.
        if status == -WEBCLIENT_TIMEOUT || waited_out(asked_at, seconds, hz) {
            let mut digits = [0u8; 20];
            error.set(&[
                b"no answer from the server within ",
                crate::text::decimal(seconds as u64, &mut digits),
                b" s (timeout)",
            ]);
            return failed(Failure::Timeout, true);
        }
        error.set(&[b"reading the response head failed"]);
        return failed(Failure::Read, true);
    }
    if status == 0 {
        // webclient_handle_response returns the status parsed so far: 0 when
        // the server closed the connection before sending a status line.
        error.set(&[b"the server closed the connection without answering"]);
        return failed(Failure::Read, true);
    }
    if status != 200 {
        // SAFETY: `session.0` is a live session with a response head read.
        return unsafe { http_error(session.0, status, error) };
    }

    let want = settings.read_buffer.clamp(64, MAX_READ_BUF);
    let mut buf: Vec<u8> = Vec::new();
    if buf.try_reserve_exact(want).is_err() {
        error.set(&[b"no memory for the read buffer"]);
        return failed(Failure::NoMemory, false);
    }
    buf.resize(want, 0);
    // Did the last read wait out the timeout? At the end of a chunk
    // webclient reads the next size line inside the same call; a timeout
    // there closes the socket, the data still comes back, and only the next
    // read fails, at once, with a disconnect.
    let mut last_read_waited_out = false;
    loop {
        if cancelled() {
            error.set(&[b"cancelled"]);
            return failed(Failure::Cancelled, false);
        }
        // SAFETY: rt_tick_get only reads the tick counter.
        let asked_at = unsafe { crate::rtt::rt_tick_get() };
        // SAFETY: a live session; `buf` is writable for `buf.len()` bytes.
        let n = unsafe { webclient_read(session.0, buf.as_mut_ptr() as *mut c_void, buf.len()) };
        if n > 0 {
            last_read_waited_out = waited_out(asked_at, seconds, hz);
            match sink.body(&buf[..n as usize]) {
                Ok(Flow::More) => continue,
                Ok(Flow::Done) => return Attempt::Ok,
                Err(e) => return failed(Failure::Stream(e), false),
            }
        } else if n == 0 {
            return match sink.end() {
                Ok(()) => Attempt::Ok,
                Err(e) => failed(Failure::Stream(e), false),
            };
        } else if n == -WEBCLIENT_TIMEOUT
            || waited_out(asked_at, seconds, hz)
            || (n == -WEBCLIENT_DISCONNECT && last_read_waited_out)
        {
            error.set(&[b"the server stopped sending (read timeout)"]);
            return failed(Failure::Timeout, true);
        } else {
            error.set(&[b"the connection was cut off while reading the answer"]);
            return failed(Failure::Read, true);
        }
    }
}

fn is_https(url: &CStr) -> bool {
    let u = url.to_bytes();
    u.len() >= 8 && u[..8].eq_ignore_ascii_case(b"https://")
}

/// Did a call that started at `since` wait out the socket timeout (90 % of
/// it, for tick granularity)? webclient does not always say "timeout".
fn waited_out(since: crate::rtt::rt_tick_t, seconds: u32, hz: u32) -> bool {
    // SAFETY: rt_tick_get only reads the tick counter.
    let waited = unsafe { crate::rtt::rt_tick_get() }.wrapping_sub(since);
    let timeout_ticks = seconds.saturating_mul(hz);
    waited >= timeout_ticks - timeout_ticks / 10
}

/// Read the error body, keep its message, decide about retrying.
///
/// # Safety
/// `session` is a live session whose response head has been read.
unsafe fn http_error<E>(
    session: *mut webclient_session,
    status: c_int,
    error: &mut ErrorText,
) -> Attempt<E> {
    // On the heap: 2 KB is a fifth of the loop thread's stack on a board.
    // Without memory the status alone is reported.
    let mut body: Vec<u8> = Vec::new();
    if body.try_reserve_exact(ERROR_BODY_MAX + 1).is_ok() {
        body.resize(ERROR_BODY_MAX + 1, 0);
    }
    // An empty body (Content-Length: 0) is not read: webclient takes a zero
    // length for "unknown" and would wait for the socket timeout.
    // SAFETY: `session` is a live session (contract).
    let cap = if unsafe { webclient_content_length_get(session) } == 0 {
        0
    } else {
        body.len().saturating_sub(1)
    };
    let mut len = 0;
    while len < cap {
        // SAFETY: a live session; `body[len..]` is writable for at least
        // `cap - len` bytes (`cap` < `body.len()`).
        let n =
            unsafe { webclient_read(session, body[len..].as_mut_ptr() as *mut c_void, cap - len) };
        if n <= 0 {
            break;
        }
        len += n as usize;
    }
    let nul = [0u8];
    let body: &[u8] = if body.is_empty() { &nul } else { &body[..=len] };
    let mut status_buf = [0u8; 20];
    let status_text = crate::text::decimal(status.max(0) as u64, &mut status_buf);
    // SAFETY: `body` ends with a NUL: `nul`, or `body[len]`, which the reads
    // never reached (they stop at `cap`) and `resize` zeroed.
    let message = unsafe { error_message(body) };
    match message {
        Some(parsed) => {
            // SAFETY: `parsed.tree` is alive until the delete below.
            error.set(&[b"HTTP ", status_text, b": ", unsafe { parsed.to_bytes() }]);
            // SAFETY: `parsed.tree` came from cJSON_Parse and is deleted once;
            // nothing borrowed from it is used after this.
            unsafe { crate::cjson_sys::cJSON_Delete(parsed.tree) };
        }
        None => {
            let text = trim(&body[..body.len() - 1]);
            if text.is_empty() {
                error.set(&[b"HTTP ", status_text, b" (no message from the server)"]);
            } else {
                error.set(&[b"HTTP ", status_text, b": ", text]);
            }
        }
    }
    crate::log_e!("{}", error.as_str());
    // SAFETY: `session` is a live session with a response head (contract).
    let retry_after_ms = unsafe { retry_after(session) };
    let retryable = status == 429 || (500..600).contains(&status);
    Attempt::Failed {
        failure: Failure::Status(status),
        retryable,
        retry_after_ms,
    }
}

fn trim(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    let end = b
        .iter()
        .rposition(|c| !c.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &b[start..end.max(start)]
}

/// `error.message` of a JSON error body, parsed with the board's cJSON.
struct ParsedMessage {
    tree: *mut crate::cjson_sys::cJSON,
    text: *const c_char,
}

impl ParsedMessage {
    /// # Safety
    /// `self.tree` has not been deleted.
    unsafe fn to_bytes(&self) -> &[u8] {
        // SAFETY: `text` is the NUL-terminated `valuestring` of an item in
        // `tree`, which is still alive (contract).
        unsafe { CStr::from_ptr(self.text) }.to_bytes()
    }
}

/// # Safety
/// `body` must end with a NUL.
unsafe fn error_message(body: &[u8]) -> Option<ParsedMessage> {
    // SAFETY: `body` is NUL-terminated (contract); cJSON only reads it.
    let tree = unsafe { crate::cjson_sys::cJSON_Parse(body.as_ptr() as *const c_char) };
    if tree.is_null() {
        return None;
    }
    // SAFETY: `tree` is a live tree we own; `err` is NULL or one of its items,
    // and the strings found live as long as `tree`, which outlives `text`.
    let text = unsafe {
        let err = crate::json::get(tree, c"error");
        crate::json::get_str(err, c"message")
            .or_else(|| crate::json::string_value(err))
            .or_else(|| crate::json::get_str(tree, c"message"))
    };
    match text {
        Some(t) => Some(ParsedMessage {
            tree,
            text: t.as_ptr(),
        }),
        None => {
            // SAFETY: `tree` came from cJSON_Parse, nothing borrows from it, and
            // it is deleted once.
            unsafe { crate::cjson_sys::cJSON_Delete(tree) };
            None
        }
    }
}

/// `Retry-After` in whole seconds (HTTP dates are not supported: ignored).
///
/// # Safety
/// `session` is a live session whose response head has been read.
unsafe fn retry_after(session: *mut webclient_session) -> Option<u32> {
    // SAFETY: a live session (contract) and a NUL-terminated field name.
    let v = unsafe { webclient_header_fields_get(session, c"Retry-After".as_ptr()) };
    if v.is_null() {
        return None;
    }
    // SAFETY: a non-NULL header value is a NUL-terminated string in the
    // session's header buffer, alive while `session` is.
    let s = trim(unsafe { CStr::from_ptr(v) }.to_bytes());
    if s.is_empty() || s.len() > 6 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let secs = s.iter().fold(0u32, |acc, d| acc * 10 + u32::from(d - b'0'));
    Some(secs.saturating_mul(1000))
}
