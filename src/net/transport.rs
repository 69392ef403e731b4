//! One chat request over the webclient API, under a deadline, with bounded
//! retries.
//!
//! The same code runs on the device (the board's webclient package) and on
//! the host (the host port's webclient over real TCP). The body is streamed
//! from the caller's trees (see [`crate::wire::chat::request`]); the response body is
//! handed, read by read, to a [`ResponseSink`] (the SSE parser).
//!
//! Other requests go the same way: any [`RequestBody`] (the MCP client's
//! JSON-RPC requests, with header lines of their own) and any
//! [`ResponseSink`] (which may take other success statuses and read the
//! response's head). One copy of the code serves them all: [`send`] is a
//! small shim per type over `send_dyn`.
//!
//! # The deadline
//! One request in all (connect, every attempt, every wait between attempts,
//! every byte) is bounded by `PKG_AGENT_REQUEST_TIMEOUT_MS`
//! ([`Settings::request_timeout_ms`]), counted in kernel ticks from the
//! call. webclient gives no way to interrupt one of its calls from outside,
//! so the deadline is kept by making each call short and checking the time
//! whenever one returns:
//! - every socket timeout is the smaller of its own limit and the time left
//!   (whole seconds, rounded up: webclient's unit);
//! - a body without chunked framing is read in polls of one second (a
//!   timeout there is resumable in webclient; silence is added up against
//!   `PKG_AGENT_HTTP_TIMEOUT_MS`) and in pieces of at most one byte per
//!   second left, since webclient keeps receiving until a read's buffer is
//!   full: a server that drips bytes cannot hold one read past the deadline;
//! - a chunked body is read one receive at a time (webclient's own rule);
//! - a retry is made only when its wait ends before the deadline.
//!
//! What the deadline cannot shorten: webclient's own connect timeout (6 s in
//! 2.x: the socket does not exist before `webclient_post`, so
//! `webclient_set_timeout` cannot reach it), and a server that drips the
//! framing itself (the status line and header lines, a chunk-size line, a
//! TLS record), which webclient reads one byte per receive inside one call.
//! Those are checked when the call returns.
//!
//! # Retries (docs/requests.md)
//! Retried, while nothing has reached a caller's callback and time is left:
//! connect and write failures (for `https://`, see below), a server that
//! closes without answering, a head or body read that timed out or was cut,
//! a stream the sink calls retryable (cut off, truncated or malformed, or
//! an error the server sent inside it), HTTP 408, 429 and 5xx
//! ([`crate::wire::retry::retryable_status`]). The wait is
//! the server's `retry-after-ms` or `Retry-After` if it sent one, else
//! `PKG_AGENT_RETRY_BASE_MS` doubled per retry.
//! Never retried: other statuses, anything after text reached a callback
//! (it would be delivered twice), the deadline, cancellation, no memory, and
//! a TLS connect failure: webclient reports a failed handshake or a refused
//! certificate as `-WEBCLIENT_CONNECT_FAILED` (its mbedTLS connect, and the
//! host port alike), which a certificate never recovers from. For an
//! `https://` URL that code is therefore final unless the connect waited out
//! webclient's connect timeout (a silent network, not a certificate).

use super::error::{describe, Failure, NetError, ServerMessage, TextOut};
use super::tls_watch::TlsFailure;
use crate::base::json_writer::{ByteCounter, ByteSink, WriteError};
use crate::rtt::log::{Level, LineWriter, Piece};
use crate::rtt::sleep_lock::SleepLockGuard;
use crate::rtt::webclient::*;
use crate::wire::chat::request::ChatRequest;
use crate::wire::deadline::Deadline;
use crate::wire::retry::{self, retryable_status, trim};
use crate::wire::stream::Format;
use alloc::vec::Vec;
use core::ffi::{c_char, c_int, c_void, CStr};

/// Header buffer of a session: our five header lines and webclient's own.
const HEADER_BUFSZ: usize = 1024;
/// How much of an error response body is kept to find its message.
const ERROR_BODY_MAX: usize = 2048;
/// Largest read buffer, whatever PKG_AGENT_RESP_BUFSZ says: the parser is
/// incremental, so a bigger buffer only costs heap.
const MAX_READ_BUF: usize = 4096;
/// Socket timeout of one poll of a body without chunked framing (webclient
/// keeps the socket after such a timeout, so reading simply goes on).
const BODY_POLL_MS: u32 = 1000;
/// webclient 2.x's `WEBCLIENT_DEFAULT_TIMEO`: the socket timeout of a new
/// connection, which bounds the connect and the TLS handshake.
const CONNECT_TIMEOUT_S: u32 = 6;

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

/// How many bytes one read of a body without chunked framing may ask for
/// with `left_ms` before the deadline: webclient receives until the buffer
/// is full, and a server may send one byte per poll of
/// [`BODY_POLL_MS`], so at most one byte per poll left (at least 1, at most
/// `buffer`).
pub fn unframed_read_size(left_ms: u32, buffer: usize) -> usize {
    ((left_ms / BODY_POLL_MS) as usize).clamp(1, buffer.max(1))
}

/// Where the response body goes.
pub trait ResponseSink {
    type Error: Copy;
    /// Bytes of the body, as a read returned them.
    fn body(&mut self, bytes: &[u8]) -> Result<Flow, Self::Error>;
    /// The server closed the body.
    fn end(&mut self) -> Result<(), Self::Error>;
    /// Has text reached the caller yet (a callback received some), so that
    /// a retry would deliver it twice?
    fn delivered(&self) -> bool;
    /// Forget what an attempt fed in, before the next attempt starts.
    fn restart(&mut self);
    /// Could the same request succeed if sent again after this error (a
    /// stream cut off or garbled on the way), as opposed to an answer that
    /// would fail the same way again?
    fn retryable(&self, error: Self::Error) -> bool;
    /// A short text for `error` (written where the failure is shown).
    fn describe(&self, error: Self::Error, out: &mut dyn TextOut);
    /// Does a response with `status` carry the answer? Every other status
    /// is an HTTP error (its message read, retried by
    /// [`retryable_status`]). A chat answer is 200 alone; the MCP client
    /// also takes 202 (a notification accepted, no body).
    fn success(&self, status: c_int) -> bool {
        status == 200
    }
    /// The head of a successful response, before its body (the MCP client
    /// reads `Content-Type` and `Mcp-Session-Id` here).
    fn head(&mut self, _head: &ResponseHead) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// A request body [`send`] streams (written twice per attempt: once
/// counted for `Content-Length`, once sent), and the header lines it needs
/// besides `Content-Type: application/json`, `Content-Length` and the key.
pub trait RequestBody {
    /// Write the body.
    ///
    /// # Safety
    /// Whatever the body borrows (cJSON trees) is alive for the whole
    /// [`send`], and unmodified while [`RequestBody::freeze`]'s guard is held
    /// (or for the whole [`send`] when it has none).
    unsafe fn write(&self, format: Format, out: &mut dyn ByteSink) -> Result<(), WriteError>;
    /// The lock that keeps what the body borrows from changing, held from
    /// the count of the body to the end of its write; `None` (the default)
    /// when nothing else changes it.
    fn freeze(&self) -> Option<SleepLockGuard<'static>> {
        None
    }
    /// The `Accept` header line, `\r\n` included.
    fn accept(&self, format: Format) -> &'static CStr {
        accept(format)
    }
    /// Add this body's own header fields through `add(name, value)`, which
    /// returns false when the session's header buffer is full; false then.
    fn extra_headers(&self, _add: &mut dyn FnMut(&CStr, &CStr) -> bool) -> bool {
        true
    }
}

impl RequestBody for ChatRequest<'_> {
    unsafe fn write(&self, format: Format, out: &mut dyn ByteSink) -> Result<(), WriteError> {
        // SAFETY: our caller's guarantee on the trees this request borrows.
        unsafe { crate::wire::chat::provider::write_body(format, self, out) }
    }
}

/// The length [`RequestBody::write`] produces.
///
/// # Safety
/// As [`RequestBody::write`].
unsafe fn body_length(format: Format, body: &dyn RequestBody) -> Result<usize, WriteError> {
    let mut counter = ByteCounter::default();
    // SAFETY: our caller's guarantee, passed on.
    unsafe { body.write(format, &mut counter)? };
    Ok(counter.0)
}

/// The status and header fields of a response, while its session is live.
pub struct ResponseHead {
    session: *mut webclient_session,
    pub status: c_int,
}

impl ResponseHead {
    /// The value of the first header line starting with `name` in any
    /// case (end `name` with its `:`; see [`header`]).
    pub fn header(&self, name: &CStr) -> Option<&[u8]> {
        // SAFETY: a ResponseHead exists only inside `attempt_once`, while its
        // session is live and its head read; the value is borrowed for no
        // longer than `self`, and nothing changes the session meanwhile.
        unsafe { header(self.session, name) }
    }
}

/// Whether to keep reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    More,
    /// The stream is complete (`[DONE]`): stop reading.
    Done,
}

pub struct Settings<'a> {
    pub url: &'a CStr,
    pub api_key: &'a CStr,
    /// Longest silence of the server (`PKG_AGENT_HTTP_TIMEOUT_MS`).
    pub timeout_ms: u32,
    pub retries: u32,
    pub retry_base_ms: u32,
    pub read_buffer: usize,
    /// The whole request's deadline (`PKG_AGENT_REQUEST_TIMEOUT_MS`).
    pub request_timeout_ms: u32,
    /// The wire format of the request (see [`crate::wire::chat::provider`]).
    pub format: Format,
}

/// The kernel's tick now.
fn now() -> u32 {
    // SAFETY: rt_tick_get only reads the tick counter.
    unsafe { crate::rtt::rt_tick_get() }
}

/// The board's tick rate, within bounds that fit rt_base_t on every board
/// (u32::MAX as isize is -1 on a 32-bit one, and clamp(1, -1) panics); no
/// kernel ticks faster.
fn tick_rate() -> u32 {
    crate::rtt::board().tick_per_second.clamp(1, 1_000_000) as u32
}

/// Buffers body bytes and writes them to the session in pieces.
struct SessionWriter<'a> {
    session: *mut webclient_session,
    buf: [u8; 512],
    len: usize,
    deadline: &'a Deadline,
    /// A write was refused because the deadline had passed.
    late: bool,
}

impl SessionWriter<'_> {
    fn flush(&mut self) -> Result<(), WriteError> {
        let mut off = 0;
        while let Some(rest) = self.buf.get(off..self.len).filter(|r| !r.is_empty()) {
            if super::cancel::cancelled() {
                return Err(WriteError::Sink);
            }
            if self.deadline.expired(now()) {
                self.late = true;
                return Err(WriteError::Sink);
            }
            // SAFETY: a live session; the pointer and length are `rest`'s,
            // a part of `buf`.
            let n = unsafe {
                webclient_write(self.session, rest.as_ptr() as *const c_void, rest.len())
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

impl ByteSink for SessionWriter<'_> {
    fn put(&mut self, mut bytes: &[u8]) -> Result<(), WriteError> {
        while !bytes.is_empty() {
            let free = self.buf.get_mut(self.len..).unwrap_or_default();
            let n = crate::base::text::copy_prefix(free, bytes);
            self.len += n;
            bytes = bytes.get(n..).unwrap_or_default();
            if self.len >= self.buf.len() {
                self.flush()?;
            }
        }
        Ok(())
    }
    #[cfg(feature = "multimodal")]
    fn put_file_base64(&mut self, path: &CStr, size: usize) -> Result<(), WriteError> {
        super::file_base64::put(self, path, size)
    }
}

/// What one attempt ended with.
enum Attempt {
    Ok,
    /// Failed; retry after at least this many ms if allowed.
    Failed {
        failure: Failure,
        retryable: bool,
        retry_after_ms: Option<u32>,
    },
}

fn failed(failure: Failure, retryable: bool) -> Attempt {
    Attempt::Failed {
        failure,
        retryable,
        retry_after_ms: None,
    }
}

/// Send the request and stream the answer into `sink`, retrying what can be
/// recovered, within the request's deadline; the last attempt's failure
/// otherwise (its text is the caller's to write, [`NetError::describe`],
/// with the sink's own errors described by the sink). What the server said
/// with an error status goes into `said`.
///
/// # Safety
/// Whatever `req` borrows stays alive during the call, and unmodified while
/// its freeze is held (see [`RequestBody::write`]).
pub unsafe fn send<B: RequestBody, S: ResponseSink>(
    settings: &Settings<'_>,
    req: &B,
    sink: &mut S,
    said: &mut ServerMessage,
) -> Result<(), NetError<S::Error>> {
    // One copy of the transport for every body and sink (the chat client's
    // and the MCP client's): only this shim is made per type.
    let mut erased = Erased { sink, last: None };
    // SAFETY: our caller's guarantee on what `req` borrows, passed on.
    let result = unsafe { send_dyn(settings, req, &mut erased, said) };
    let last = erased.last;
    result.map_err(|e| {
        let stream = last.filter(|_| e.failure == Failure::Stream);
        NetError {
            // A stream failure always recorded its error first.
            failure: match (e.failure, stream) {
                (Failure::Stream, None) => Failure::Cut,
                (failure, _) => failure,
            },
            stream,
            retry_past_deadline: e.retry_past_deadline,
        }
    })
}

/// A [`ResponseSink`] as [`send_dyn`] drives it, its error type erased:
/// the last error is kept here and answered for.
trait DynSink {
    fn body(&mut self, bytes: &[u8]) -> Result<Flow, ()>;
    fn end(&mut self) -> Result<(), ()>;
    fn delivered(&self) -> bool;
    fn restart(&mut self);
    /// Of the last error.
    fn retryable(&self) -> bool;
    /// Of the last error.
    fn describe(&self, out: &mut dyn TextOut);
    fn success(&self, status: c_int) -> bool;
    fn head(&mut self, head: &ResponseHead) -> Result<(), ()>;
}

struct Erased<'s, S: ResponseSink> {
    sink: &'s mut S,
    last: Option<S::Error>,
}

impl<S: ResponseSink> Erased<'_, S> {
    fn keep<T>(&mut self, r: Result<T, S::Error>) -> Result<T, ()> {
        r.map_err(|e| self.last = Some(e))
    }
}

impl<S: ResponseSink> DynSink for Erased<'_, S> {
    fn body(&mut self, bytes: &[u8]) -> Result<Flow, ()> {
        let r = self.sink.body(bytes);
        self.keep(r)
    }
    fn end(&mut self) -> Result<(), ()> {
        let r = self.sink.end();
        self.keep(r)
    }
    fn delivered(&self) -> bool {
        self.sink.delivered()
    }
    fn restart(&mut self) {
        self.sink.restart()
    }
    fn retryable(&self) -> bool {
        self.last.is_some_and(|e| self.sink.retryable(e))
    }
    fn describe(&self, out: &mut dyn TextOut) {
        if let Some(e) = self.last {
            self.sink.describe(e, out)
        }
    }
    fn success(&self, status: c_int) -> bool {
        self.sink.success(status)
    }
    fn head(&mut self, head: &ResponseHead) -> Result<(), ()> {
        let r = self.sink.head(head);
        self.keep(r)
    }
}

/// [`send`] for any body and sink.
///
/// # Safety
/// As [`send`].
unsafe fn send_dyn(
    settings: &Settings<'_>,
    req: &dyn RequestBody,
    sink: &mut dyn DynSink,
    said: &mut ServerMessage,
) -> Result<(), NetError<()>> {
    let deadline = Deadline::new(now(), settings.request_timeout_ms.max(1), tick_rate());
    let fail = |failure| Err(NetError::from(failure));
    if crate::rtt::board().webclient_tls == 0 && is_https(settings.url) {
        return fail(Failure::NoTls);
    }
    // The board's TLS glue asks this for the time left while it connects
    // and shakes hands, and tells back why a connection failed.
    let _watch = super::tls_watch::watch(&deadline, settings.timeout_ms);
    let mut attempt: u32 = 0;
    loop {
        if super::cancel::cancelled() {
            return fail(Failure::Cancelled);
        }
        if deadline.expired(now()) {
            return fail(deadline_passed(&deadline));
        }
        if attempt > 0 {
            sink.restart();
        }
        // SAFETY: the trees in `req` stay alive, and unmodified under its
        // freeze (our contract).
        match unsafe { attempt_once(settings, req, sink, &deadline, said) } {
            Attempt::Ok => return Ok(()),
            Attempt::Failed {
                failure,
                retryable,
                retry_after_ms,
            } => {
                if let Failure::Status(_) = failure {
                    // The status and what the server said, logged here and
                    // not where the answer was read: the line's buffer is
                    // then not on the stack on top of the attempt's frame.
                    log_failure(Level::Error, b"", failure, said, None, &[]);
                }
                let failed = retry::Failed {
                    retryable,
                    attempt,
                    delivered: sink.delivered(),
                    retry_after_ms,
                };
                let wait = match retry::next(
                    failed,
                    settings.retries,
                    settings.retry_base_ms,
                    deadline.remaining_ms(now()),
                ) {
                    retry::Next::GiveUp => return fail(failure),
                    retry::Next::PastDeadline(wait) => {
                        warn_retry(failure, said, &*sink, None, wait);
                        return Err(NetError {
                            failure,
                            stream: None,
                            retry_past_deadline: true,
                        });
                    }
                    retry::Next::RetryIn(wait) => wait,
                };
                let next = (attempt + 1, settings.retries);
                warn_retry(failure, said, &*sink, Some(next), wait);
                if !sleep_unless_cancelled(wait) {
                    return fail(Failure::Cancelled);
                }
                attempt += 1;
            }
        }
    }
}

/// Log a failed attempt and what comes next: retry `n` of `m` (`next`) in
/// `wait` ms, or, without `next`, no retry since waiting would pass the
/// request's deadline.
///
/// Not inlined: the line's pieces are on the stack only while it is
/// logged, not in the retry loop's frame, under which every attempt runs.
#[inline(never)]
fn warn_retry(
    failure: Failure,
    said: &ServerMessage,
    sink: &dyn DynSink,
    next: Option<(u32, u32)>,
    wait: u32,
) {
    let before = b"request failed (";
    let sink = Some(sink);
    match next {
        None => log_failure(
            Level::Warning,
            before,
            failure,
            said,
            sink,
            &[
                Piece::from("); no retry: waiting "),
                Piece::from(wait),
                Piece::from(" ms would pass the request's deadline"),
            ],
        ),
        Some((n, m)) => log_failure(
            Level::Warning,
            before,
            failure,
            said,
            sink,
            &[
                Piece::from("); retry "),
                Piece::from(n),
                Piece::from(" of "),
                Piece::from(m),
                Piece::from(" in "),
                Piece::from(wait),
                Piece::from(" ms"),
            ],
        ),
    }
}

/// Log a failure: `before`, its text (written straight into the line; a
/// stream failure's by `sink`), and `then`. Not inlined: the line's buffer
/// is on the stack only while it is written.
#[inline(never)]
fn log_failure(
    level: Level,
    before: &[u8],
    failure: Failure,
    said: &ServerMessage,
    sink: Option<&dyn DynSink>,
    then: &[Piece<'_>],
) {
    let mut line = LineWriter::new(level);
    line.put(before);
    match sink {
        Some(sink) if failure == Failure::Stream => sink.describe(&mut line),
        _ => describe(failure, said, &mut line),
    }
    for piece in then {
        piece.write_to(&mut line);
    }
    line.end();
}

/// The failure of a request whose deadline passed.
fn deadline_passed(deadline: &Deadline) -> Failure {
    Failure::Deadline {
        ms: deadline.ms(),
        handshake: false,
    }
}

/// Sleep in short slices so a cleanup is not held up; false if cancelled.
fn sleep_unless_cancelled(ms: u32) -> bool {
    let mut left = ms;
    while left > 0 {
        if super::cancel::cancelled() {
            return false;
        }
        let slice = left.min(100);
        // SAFETY: rt_thread_mdelay has no memory preconditions; requests run on
        // a thread, never in an interrupt.
        unsafe { crate::rtt::rt_thread_mdelay(slice as i32) };
        left -= slice;
    }
    !super::cancel::cancelled()
}

/// Why reading stopped short of the body's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    Cancelled,
    /// The request's deadline passed.
    Deadline,
    /// The server was silent for `PKG_AGENT_HTTP_TIMEOUT_MS`.
    Timeout,
    /// The connection failed or was cut.
    Cut,
}

/// What one [`Io::read`] gave.
enum ReadEnd {
    Data(usize),
    /// The body ended (webclient's 0).
    End,
    Stop(Stop),
}

/// A session's reads and socket timeouts under the deadline.
struct Io<'a> {
    session: *mut webclient_session,
    deadline: &'a Deadline,
    /// `PKG_AGENT_HTTP_TIMEOUT_MS`.
    per_read_ms: u32,
    hz: u32,
    /// The body has chunked framing (webclient decodes it; a timeout inside
    /// its framing closes the socket, so no short polls there).
    chunked: bool,
    /// The seconds last given to the socket (0: none yet).
    socket_s: u32,
    /// That timeout was cut short to the time left before the deadline.
    capped: bool,
    /// Ticks of silence so far, over the polls of an unframed body.
    idle: u32,
    /// The last read that returned data waited out its timeout (and
    /// whether that one was capped): at the end of a chunk webclient reads
    /// the next size line inside the same call, and a timeout there closes
    /// the socket; the data still comes back, and only the next read fails,
    /// at once, with a disconnect.
    last_read_waited_out: bool,
    last_read_capped: bool,
}

impl Io<'_> {
    /// Give the socket the smaller of `limit_ms` and the time left; the
    /// seconds set. Called before every webclient call that waits.
    fn set_timeout(&mut self, limit_ms: u32) -> u32 {
        self.set_timeout_at(limit_ms, now())
    }

    /// [`Io::set_timeout`] with the clock already read at tick `now`.
    fn set_timeout_at(&mut self, limit_ms: u32, now: u32) -> u32 {
        let left = self.deadline.remaining_ms(now);
        self.capped = left < limit_ms;
        let seconds = socket_timeout_seconds(limit_ms.min(left));
        if seconds != self.socket_s {
            // SAFETY: `session` is a live, connected session (its socket
            // exists once webclient_post has connected; before, this call
            // changes nothing).
            unsafe { webclient_set_timeout(self.session, webclient_timeout_arg(seconds, self.hz)) };
            self.socket_s = seconds;
        }
        seconds
    }

    /// Did a call that started at `since` wait out the socket timeout?
    fn waited_out(&self, since: u32) -> bool {
        waited_out(since, self.socket_s, self.hz)
    }

    /// One read of the body into `buf`, within the deadline.
    fn read(&mut self, buf: &mut [u8]) -> ReadEnd {
        loop {
            if super::cancel::cancelled() {
                return ReadEnd::Stop(Stop::Cancelled);
            }
            // One clock reading for the deadline check, the socket timeout
            // and the start of the wait: a chunked stream makes one read
            // per event, and on the host port each reading costs more than
            // the rest of this function.
            let asked_at = now();
            let left = self.deadline.remaining_ms(asked_at);
            if left == 0 {
                return ReadEnd::Stop(Stop::Deadline);
            }
            let (limit, len) = if self.chunked {
                (self.per_read_ms, buf.len())
            } else {
                (
                    self.per_read_ms.min(BODY_POLL_MS),
                    unframed_read_size(left, buf.len()),
                )
            };
            self.set_timeout_at(limit, asked_at);
            // SAFETY: a live session; `buf` is writable for `len` <=
            // `buf.len()` bytes.
            let n = unsafe { webclient_read(self.session, buf.as_mut_ptr() as *mut c_void, len) };
            let waited_out = self.waited_out(asked_at);
            if n > 0 {
                self.idle = 0;
                self.last_read_waited_out = waited_out;
                self.last_read_capped = self.capped;
                // Never more than was asked for, whatever a webclient says.
                return ReadEnd::Data((n as usize).min(len));
            }
            if n == 0 {
                return ReadEnd::End;
            }
            let timeout = n == -WEBCLIENT_TIMEOUT || waited_out;
            let late = n == -WEBCLIENT_DISCONNECT && self.last_read_waited_out;
            if !timeout && !late {
                return ReadEnd::Stop(Stop::Cut);
            }
            let capped = if timeout {
                self.capped
            } else {
                self.last_read_capped
            };
            if capped || self.deadline.expired(now()) {
                return ReadEnd::Stop(Stop::Deadline);
            }
            if self.chunked || n != -WEBCLIENT_TIMEOUT {
                return ReadEnd::Stop(Stop::Timeout);
            }
            // A poll of an unframed body: webclient kept the socket, go on
            // until the silence adds up to the read timeout (less a tenth
            // of a second for the ticks each poll may come short by).
            self.idle = self.idle.saturating_add(now().wrapping_sub(asked_at));
            let limit = crate::wire::deadline::ms_to_ticks(self.per_read_ms, self.hz);
            if self.idle >= limit.saturating_sub(self.hz / 10) {
                return ReadEnd::Stop(Stop::Timeout);
            }
        }
    }

    /// The attempt's failure for `stop`.
    fn fail(&self, stop: Stop) -> Attempt {
        match stop {
            Stop::Cancelled => failed(Failure::Cancelled, false),
            Stop::Deadline => failed(deadline_passed(self.deadline), false),
            Stop::Timeout => failed(Failure::Silence, true),
            Stop::Cut => {
                // A record too large for the board's TLS input buffer would
                // fail the same way again.
                if let Some((why, code)) = super::tls_watch::take() {
                    return failed(Failure::Tls { why, code }, why.retryable());
                }
                failed(Failure::Cut, true)
            }
        }
    }
}

/// # Safety
/// Whatever `req` borrows stays alive during the call, and unmodified while
/// its freeze is held (see [`RequestBody::write`]).
///
/// Not inlined: what it keeps on the stack must not stay there under the
/// retry loop's log line.
#[inline(never)]
unsafe fn attempt_once(
    settings: &Settings<'_>,
    req: &dyn RequestBody,
    sink: &mut dyn DynSink,
    deadline: &Deadline,
    said: &mut ServerMessage,
) -> Attempt {
    // SAFETY: our caller's guarantee on what `req` borrows, passed on.
    let (session, mut io) = match unsafe { send_request(settings, req, deadline) } {
        Ok(sent) => sent,
        Err(failed) => return failed,
    };
    // The head: the first byte may take the read timeout, or what is left.
    let seconds = io.set_timeout(settings.timeout_ms);
    let asked_at = now();
    // SAFETY: `session.raw()` is a live session whose request has been sent.
    let status = unsafe { webclient_handle_response(session.raw()) };
    if status < 0 {
        // webclient_handle_response passes recv()'s -1 through on a socket
        // timeout (only webclient_read maps it to -WEBCLIENT_TIMEOUT), so a
        // failure after waiting out the timeout is reported as one.
        if status == -WEBCLIENT_TIMEOUT || io.waited_out(asked_at) {
            if io.capped || deadline.expired(now()) {
                return failed(deadline_passed(deadline), false);
            }
            return failed(Failure::NoHead { seconds }, true);
        }
        if let Some((why, code)) = super::tls_watch::take() {
            return failed(Failure::Tls { why, code }, why.retryable());
        }
        return failed(Failure::HeadFailed, true);
    }
    if deadline.expired(now()) {
        return failed(deadline_passed(deadline), false);
    }
    if status == 0 {
        // webclient_handle_response returns the status parsed so far: 0 when
        // the server closed the connection before sending a status line.
        return failed(Failure::Closed, true);
    }
    // SAFETY: `session.raw()` is a live session with a response head read.
    io.chunked = unsafe { is_chunked(session.raw()) };
    if !sink.success(status) {
        // SAFETY: `session.raw()` is a live session with a response head read.
        return unsafe { http_error(session.raw(), status, &mut io, said) };
    }
    let head = ResponseHead {
        session: session.raw(),
        status,
    };
    if sink.head(&head).is_err() {
        return failed(Failure::Stream, sink.retryable());
    }
    // A success other than 200 with an empty body (202 Accepted) ends here:
    // webclient reads a zero Content-Length as "unknown" and would wait for
    // the socket timeout. (A chat answer is 200, read as always.)
    // SAFETY: `session.raw()` is a live session with a response head read.
    if status != 200 && unsafe { webclient_content_length_get(session.raw()) } == 0 {
        return match sink.end() {
            Ok(()) => Attempt::Ok,
            Err(()) => failed(Failure::Stream, sink.retryable()),
        };
    }

    let want = settings.read_buffer.clamp(64, MAX_READ_BUF);
    let mut buf: Vec<u8> = Vec::new();
    if crate::base::fallible::resize(&mut buf, want, 0).is_err() {
        return failed(Failure::NoReadBuffer, false);
    }
    loop {
        // On `Err` the sink's error is kept by the sink (see `Erased`).
        match io.read(&mut buf) {
            ReadEnd::Data(n) => match sink.body(buf.get(..n).unwrap_or_default()) {
                Ok(Flow::More) => continue,
                Ok(Flow::Done) => return Attempt::Ok,
                Err(()) => {}
            },
            ReadEnd::End => {
                if sink.end().is_ok() {
                    return Attempt::Ok;
                }
            }
            ReadEnd::Stop(stop) => return io.fail(stop),
        }
        return failed(Failure::Stream, sink.retryable());
    }
}

/// The first half of an attempt: connect, send the head, write the body;
/// the session and its reads' state, or the attempt's failure.
///
/// # Safety
/// As [`attempt_once`].
///
/// Not inlined: the body writer's 512-byte buffer and the length's digits
/// are on the stack only while the request goes out, not while the answer
/// is read, when the sink's parser and the caller's callbacks run on top.
#[inline(never)]
unsafe fn send_request<'d>(
    settings: &Settings<'_>,
    req: &dyn RequestBody,
    deadline: &'d Deadline,
) -> Result<(Session, Io<'d>), Attempt> {
    let fail = |failure, retryable| Err(failed(failure, retryable));
    // Counted and written under one hold, so the Content-Length sent is the
    // length written (issue 27: a tool appended between the two made torn
    // requests); counted again for a retry, as the tools may have changed.
    let frozen = req.freeze();
    // SAFETY: what `req` borrows is alive, and unmodified while `frozen` is
    // held (our contract).
    let length = match unsafe { body_length(settings.format, req) } {
        Ok(n) => n,
        Err(e) => return fail(Failure::NotWritten(e), false),
    };
    let hz = tick_rate();
    let Some(session) = Session::create(HEADER_BUFSZ) else {
        return fail(Failure::NoSession, false);
    };

    let mut len_buf = [0u8; 21];
    let len_text = crate::base::text::decimal_cstr(length as u64, &mut len_buf);
    // SAFETY: `session.raw()` is a live session; each format is a NUL-terminated
    // literal whose one `%s` (if any) gets a NUL-terminated string.
    let mut ok = unsafe {
        webclient_header_fields_add(
            session.raw(),
            c"Content-Type: application/json\r\n".as_ptr(),
        ) >= 0
            && webclient_header_fields_add(session.raw(), req.accept(settings.format).as_ptr()) >= 0
            && webclient_header_fields_add(
                session.raw(),
                c"Content-Length: %s\r\n".as_ptr(),
                len_text.as_ptr(),
            ) >= 0
    };
    #[cfg(feature = "provider-anthropic")]
    if settings.format == Format::Anthropic {
        // SAFETY: a live session, literal formats with one `%s` each, and
        // NUL-terminated arguments (`&CStr`s).
        ok = ok
            && unsafe {
                webclient_header_fields_add(
                    session.raw(),
                    c"anthropic-version: %s\r\n".as_ptr(),
                    crate::wire::chat::anthropic::API_VERSION.as_ptr(),
                ) >= 0
                    && (settings.api_key.is_empty()
                        || webclient_header_fields_add(
                            session.raw(),
                            c"x-api-key: %s\r\n".as_ptr(),
                            settings.api_key.as_ptr(),
                        ) >= 0)
            };
    }
    if ok && !settings.api_key.is_empty() && uses_bearer(settings.format) {
        // SAFETY: a live session, a literal format with one `%s`, and the key
        // is a `&CStr`, so NUL-terminated.
        ok = unsafe {
            webclient_header_fields_add(
                session.raw(),
                c"Authorization: Bearer %s\r\n".as_ptr(),
                settings.api_key.as_ptr(),
            )
        } >= 0;
    }
    ok = ok
        && req.extra_headers(&mut |name: &CStr, value: &CStr| {
            // SAFETY: a live session, a literal format with two `%s`, and two
            // `&CStr`s, so NUL-terminated.
            unsafe {
                webclient_header_fields_add(
                    session.raw(),
                    c"%s: %s\r\n".as_ptr(),
                    name.as_ptr(),
                    value.as_ptr(),
                ) >= 0
            }
        });
    if !ok {
        return fail(Failure::HeadersFull, false);
    }

    let connect_at = now();
    // SAFETY: a live session and a NUL-terminated URL; NULL data of length 0
    // makes webclient_post send the head only.
    let rc = unsafe { webclient_post(session.raw(), settings.url.as_ptr(), core::ptr::null(), 0) };
    if rc < 0 {
        let tls = super::tls_watch::take();
        if super::cancel::cancelled() || matches!(tls, Some((TlsFailure::Cancelled, _))) {
            return fail(Failure::Cancelled, false);
        }
        if matches!(tls, Some((TlsFailure::Deadline, _))) || deadline.expired(now()) {
            let failure = Failure::Deadline {
                ms: deadline.ms(),
                handshake: tls.is_some(),
            };
            return fail(failure, false);
        }
        if let Some((why, code)) = tls {
            return fail(Failure::Tls { why, code }, why.retryable());
        }
        if rc == -WEBCLIENT_NOBUFFER {
            return fail(Failure::HeadTooLong, false);
        }
        if is_https(settings.url)
            && rc == -WEBCLIENT_CONNECT_FAILED
            && !waited_out(connect_at, CONNECT_TIMEOUT_S, hz)
        {
            // Not the URL: some providers take the key as a query parameter.
            return fail(Failure::TlsRefused, false);
        }
        return fail(Failure::Unreachable, true);
    }
    if deadline.expired(now()) {
        return fail(deadline_passed(deadline), false);
    }
    let mut io = Io {
        session: session.raw(),
        deadline,
        per_read_ms: settings.timeout_ms,
        hz,
        chunked: false,
        socket_s: 0,
        capped: false,
        idle: 0,
        last_read_waited_out: false,
        last_read_capped: false,
    };
    // Only now: webclient_set_timeout sets the options of the session's
    // socket, which exists once webclient_post has connected; called before,
    // it changes nothing and webclient's 6 s default stays.
    io.set_timeout(settings.timeout_ms);
    let mut writer = SessionWriter {
        session: session.raw(),
        buf: [0; 512],
        len: 0,
        deadline,
        late: false,
    };
    let format = settings.format;
    // SAFETY: the trees in `req` stay alive, and unmodified while `frozen`
    // is held (our contract).
    if let Err(e) = unsafe { req.write(format, &mut writer) }.and_then(|_| writer.flush()) {
        if super::cancel::cancelled() {
            return fail(Failure::Cancelled, false);
        }
        if writer.late || deadline.expired(now()) {
            return fail(deadline_passed(deadline), false);
        }
        return match e {
            WriteError::Sink => fail(Failure::SendFailed, true),
            other => fail(Failure::NotWritten(other), false),
        };
    }
    // Sent: the tools may change now.
    drop(frozen);
    Ok((session, io))
}

/// The `Accept` header line for `format`'s stream.
fn accept(format: Format) -> &'static CStr {
    match format {
        #[cfg(feature = "provider-ollama")]
        Format::Ollama => c"Accept: application/x-ndjson\r\n",
        _ => c"Accept: text/event-stream\r\n",
    }
}

/// Whether `format` sends the key as `Authorization: Bearer` (Anthropic
/// takes it as `x-api-key` instead).
fn uses_bearer(format: Format) -> bool {
    match format {
        #[cfg(feature = "provider-anthropic")]
        Format::Anthropic => false,
        _ => true,
    }
}

fn is_https(url: &CStr) -> bool {
    let u = url.to_bytes();
    u.get(..8)
        .is_some_and(|scheme| scheme.eq_ignore_ascii_case(b"https://"))
}

/// Did a call that started at `since` wait out a socket timeout of
/// `seconds` (90 % of it, for tick granularity)? webclient does not always
/// say "timeout".
fn waited_out(since: u32, seconds: u32, hz: u32) -> bool {
    let waited = now().wrapping_sub(since);
    let timeout_ticks = seconds.saturating_mul(hz);
    waited >= timeout_ticks - timeout_ticks / 10
}

/// A response header's value, as webclient finds it: the first head line
/// that starts with `name` in any case (so `name` ends with its `:` where
/// a longer field could share its prefix: `Retry-After` is a prefix of
/// `retry-after-ms`), after the first `:` and blanks.
///
/// # Safety
/// `session` is a live session whose response head has been read; the
/// value lives in its header buffer, and is used before the session changes.
unsafe fn header<'s>(session: *mut webclient_session, name: &CStr) -> Option<&'s [u8]> {
    // SAFETY: a live session (contract) and a NUL-terminated field name.
    let v = unsafe { webclient_header_fields_get(session, name.as_ptr()) };
    if v.is_null() {
        return None;
    }
    // SAFETY: a non-NULL header value is a NUL-terminated string in the
    // session's header buffer, alive while the session is (contract).
    Some(unsafe { CStr::from_ptr(v) }.to_bytes())
}

/// Does webclient decode this body as chunked? It asks for the field the
/// same way and compares with `strcmp`, so this is its own decision.
///
/// # Safety
/// `session` is a live session whose response head has been read.
unsafe fn is_chunked(session: *mut webclient_session) -> bool {
    // SAFETY: a live session with a head (contract); used at once.
    let value = unsafe { header(session, c"Transfer-Encoding") };
    value == Some(b"chunked".as_slice())
}

/// How long the server asks us to wait before a retry: `retry-after-ms`,
/// else `Retry-After` (seconds, or an HTTP-date measured against the
/// response's `Date`); `None` when it says nothing usable.
///
/// # Safety
/// `session` is a live session whose response head has been read.
unsafe fn server_wait_ms(session: *mut webclient_session) -> Option<u32> {
    // SAFETY: a live session with a head (contract); each value is used
    // before the next call.
    if let Some(ms) = unsafe { header(session, c"retry-after-ms:") }.and_then(retry::retry_after_ms)
    {
        return Some(ms);
    }
    // SAFETY: as above; `date` and `value` both point into the header
    // buffer, which nothing changes between the two calls.
    let date = unsafe { header(session, c"Date:") };
    // SAFETY: as above.
    let value = unsafe { header(session, c"Retry-After:") }?;
    retry::retry_after(value, date)
}

/// Read the error body, keep its message, decide about retrying.
///
/// # Safety
/// `session` is a live session whose response head has been read, and the
/// one `io` reads.
unsafe fn http_error(
    session: *mut webclient_session,
    status: c_int,
    io: &mut Io<'_>,
    said: &mut ServerMessage,
) -> Attempt {
    // On the heap: 2 KB is a fifth of the loop thread's stack on a board.
    // Without memory the status alone is reported.
    let mut body: Vec<u8> = Vec::new();
    if crate::base::fallible::resize(&mut body, ERROR_BODY_MAX + 1, 0).is_err() {
        body = Vec::new();
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
    // What arrived before the body ended, stalled or the deadline came is
    // enough for the message; the status decides the rest.
    while let Some(room) = body.get_mut(len..cap).filter(|r| !r.is_empty()) {
        match io.read(room) {
            ReadEnd::Data(n) => len += n,
            ReadEnd::End | ReadEnd::Stop(_) => break,
        }
    }
    let nul = [0u8];
    let body: &[u8] = body.get(..=len).unwrap_or(&nul);
    // SAFETY: `body` ends with a NUL: `nul`, or `body[len]`, which the reads
    // never reached (they stop at `cap`) and the resize zeroed.
    match unsafe { error_message(body) } {
        Some(parsed) => {
            // SAFETY: `parsed.tree` is alive until the delete below.
            said.set(unsafe { parsed.to_bytes() });
            // SAFETY: `parsed.tree` came from cJSON_Parse and is deleted once;
            // nothing borrowed from it is used after this.
            unsafe { crate::cjson::sys::cJSON_Delete(parsed.tree) };
        }
        None => said.set(trim(body.split_last().map_or(&[][..], |(_, text)| text))),
    }
    // SAFETY: `session` is a live session with a response head (contract).
    let retry_after_ms = unsafe { server_wait_ms(session) };
    Attempt::Failed {
        failure: Failure::Status(status),
        retryable: retryable_status(status),
        retry_after_ms,
    }
}

/// `error.message` of a JSON error body, parsed with the board's cJSON.
struct ParsedMessage {
    tree: *mut crate::cjson::sys::cJSON,
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
    let tree = unsafe { crate::cjson::sys::cJSON_Parse(body.as_ptr() as *const c_char) };
    if tree.is_null() {
        return None;
    }
    // SAFETY: `tree` is a live tree we own; `err` is NULL or one of its items,
    // and the strings found live as long as `tree`, which outlives `text`.
    let text = unsafe {
        let err = crate::cjson::json::get(tree, c"error");
        crate::cjson::json::get_str(err, c"message")
            .or_else(|| crate::cjson::json::string_value(err))
            .or_else(|| crate::cjson::json::get_str(tree, c"message"))
    };
    match text {
        Some(t) => Some(ParsedMessage {
            tree,
            text: t.as_ptr(),
        }),
        None => {
            // SAFETY: `tree` came from cJSON_Parse, nothing borrows from it, and
            // it is deleted once.
            unsafe { crate::cjson::sys::cJSON_Delete(tree) };
            None
        }
    }
}
