//! Why a request failed, as a value: what went wrong and the facts the
//! user needs (the deadline, the HTTP status, the TLS reason and code),
//! small enough to copy. The server's own words for an error status are
//! data, kept in the caller's [`ServerMessage`]. The transport returns the
//! value; the text is written only where a reply, a log line or
//! `agent_chat_last_error()` is made ([`NetError::describe`] into any
//! [`TextOut`]: an [`ErrorText`], or a log line as it is written).

use super::tls_watch::TlsFailure;
use crate::base::json_writer::WriteError;
use alloc::vec::Vec;
use core::ffi::c_int;

/// Why one request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// `https://` with a webclient built without TLS.
    NoTls,
    /// Our header lines do not fit the session's header buffer.
    HeadersFull,
    /// The request head does not fit webclient's header buffer.
    HeadTooLong,
    /// The TLS connect failed without the glue's reason: the handshake or
    /// the certificate check, or an unreachable host (not retried).
    TlsRefused,
    /// The TCP connect failed.
    Unreachable,
    /// The board's TLS glue said why the connection failed, with mbedTLS's
    /// code.
    Tls { why: TlsFailure, code: i32 },
    /// Writing the request to the connection failed.
    SendFailed,
    /// The body could not be written (a file changed, no memory, nesting).
    NotWritten(WriteError),
    /// No memory for the HTTP session.
    NoSession,
    /// No memory for the read buffer.
    NoReadBuffer,
    /// No response head within the read timeout (whole seconds).
    NoHead { seconds: u32 },
    /// The server stopped sending the body (read timeout).
    Silence,
    /// Reading the response head failed.
    HeadFailed,
    /// The server closed the connection without a status line.
    Closed,
    /// The connection was cut while the body was read.
    Cut,
    /// The whole request ran out of time (`PKG_AGENT_REQUEST_TIMEOUT_MS`,
    /// `ms`); `handshake`: during the TLS handshake.
    Deadline { ms: u32, handshake: bool },
    /// The server answered with an error status (what it said is in the
    /// request's [`ServerMessage`]).
    Status(c_int),
    /// Cleanup cancelled the request.
    Cancelled,
    /// The response stream failed: the sink's error is the
    /// [`NetError`]'s `stream`.
    Stream,
}

/// A failed request: why; the response sink's own error (`E`, the stream
/// parser's) when the stream failed; and whether a retry was given up
/// because its wait would have passed the request's deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetError<E> {
    pub failure: Failure,
    pub stream: Option<E>,
    pub retry_past_deadline: bool,
}

impl<E> From<Failure> for NetError<E> {
    fn from(failure: Failure) -> Self {
        NetError {
            failure,
            stream: None,
            retry_past_deadline: false,
        }
    }
}

impl<E: Copy> NetError<E> {
    /// Write the text for the user to `out`: `said` is what the server
    /// said with an error status; the sink's own errors through `stream`.
    pub fn describe(
        &self,
        said: &ServerMessage,
        out: &mut dyn TextOut,
        stream: &dyn Fn(E, &mut dyn TextOut),
    ) {
        match (self.failure, self.stream) {
            (Failure::Stream, Some(e)) => stream(e, out),
            (failure, _) => describe(failure, said, out),
        }
        if self.retry_past_deadline {
            out.put(b" (no retry: the wait would pass the request deadline)");
        }
    }
}

/// Where a failure's text goes.
pub trait TextOut {
    fn put(&mut self, bytes: &[u8]);
}

impl TextOut for ErrorText {
    fn put(&mut self, bytes: &[u8]) {
        self.append(&[bytes]);
    }
}

impl TextOut for crate::rtt::log::LineWriter {
    fn put(&mut self, bytes: &[u8]) {
        self.write_bytes(bytes);
    }
}

fn put_all(out: &mut dyn TextOut, parts: &[&[u8]]) {
    for p in parts {
        out.put(p);
    }
}

/// The text of `failure` (see [`NetError::describe`]; a stream failure is
/// the sink's to describe: without it, a general text).
pub fn describe(failure: Failure, said: &ServerMessage, out: &mut dyn TextOut) {
    use crate::base::text::decimal;
    let mut digits = [0u8; 20];
    match failure {
        Failure::NoTls => put_all(
            out,
            &[
                b"https:// needs TLS, and this firmware's webclient has none ",
                b"(enable webclient's MbedTLS mode, or use an http:// endpoint)",
            ],
        ),
        Failure::HeadersFull => out.put(b"HTTP headers do not fit the session's header buffer"),
        Failure::HeadTooLong => out.put(b"the request head does not fit webclient's header buffer"),
        Failure::TlsRefused => put_all(
            out,
            &[
                b"cannot connect over TLS: the handshake or the server's ",
                b"certificate check failed, or the host is unreachable ",
                b"(not retried; check the URL, the CA and the clock)",
            ],
        ),
        Failure::Unreachable => {
            out.put(b"cannot connect to the server (check the URL and the network)")
        }
        Failure::Tls { why, code } => tls_text(out, why, code),
        Failure::SendFailed => out.put(b"sending the request failed"),
        Failure::NotWritten(WriteError::File) => put_all(
            out,
            &[
                b"a file of the message could not be read while sending ",
                b"(removed or changed since the message was added)",
            ],
        ),
        Failure::NotWritten(_) => {
            out.put(b"the request could not be written (no memory, or nested too deeply)")
        }
        Failure::NoSession => out.put(b"no memory for the HTTP session"),
        Failure::NoReadBuffer => out.put(b"no memory for the read buffer"),
        Failure::NoHead { seconds } => put_all(
            out,
            &[
                b"no answer from the server within ",
                decimal(u64::from(seconds), &mut digits),
                b" s (timeout)",
            ],
        ),
        Failure::Silence => out.put(b"the server stopped sending (read timeout)"),
        Failure::HeadFailed => out.put(b"reading the response head failed"),
        Failure::Closed => out.put(b"the server closed the connection without answering"),
        Failure::Cut => out.put(b"the connection was cut off while reading the answer"),
        Failure::Deadline { ms, handshake } => {
            put_all(
                out,
                &[
                    b"the request timed out: no complete answer within ",
                    decimal(u64::from(ms), &mut digits),
                    b" ms (PKG_AGENT_REQUEST_TIMEOUT_MS)",
                ],
            );
            if handshake {
                out.put(b": the TLS handshake did not finish");
            }
        }
        Failure::Status(status) => {
            let status = decimal(status.max(0) as u64, &mut digits);
            if said.is_empty() {
                put_all(out, &[b"HTTP ", status, b" (no message from the server)"]);
            } else {
                put_all(out, &[b"HTTP ", status, b": ", said.as_bytes()]);
            }
        }
        Failure::Cancelled => out.put(b"cancelled"),
        Failure::Stream => out.put(b"the answer could not be read"),
    }
}

/// The text of a failure the board's TLS glue reported: its reason, and
/// mbedTLS's code where the reason alone says little.
#[cfg(feature = "tls")]
fn tls_text(out: &mut dyn TextOut, why: TlsFailure, code: i32) {
    out.put(why.text());
    if why == TlsFailure::Handshake && code < 0 {
        let mut hex = [0u8; 8];
        put_all(
            out,
            &[
                b" (mbedTLS -0x",
                crate::base::text::hex(code.unsigned_abs(), &mut hex),
                b")",
            ],
        );
    }
    if !why.retryable() {
        out.put(b" (not retried)");
    }
}

/// Without the TLS glue (`PKG_AGENT_TLS_MBEDTLS`) nothing reports a TLS
/// failure, and its reasons' texts stay out of the image.
#[cfg(not(feature = "tls"))]
fn tls_text(out: &mut dyn TextOut, _why: TlsFailure, _code: i32) {
    out.put(b"the TLS connection failed");
}

/// Bytes of an [`ErrorText`] (and of `agent_chat_last_error`'s copy, its
/// NUL included).
pub const ERROR_TEXT_MAX: usize = 200;

/// Bytes kept of a server's error message (what fits an [`ErrorText`]
/// after "HTTP nnn: ").
pub const SERVER_MESSAGE_MAX: usize = ERROR_TEXT_MAX - 12;

/// What a server said in an error answer (its JSON `error.message`, or the
/// body's text), cut to [`SERVER_MESSAGE_MAX`] bytes: the caller of a
/// request keeps it, the transport fills it in.
///
/// The text is on the heap, taken only when an error status arrives: the
/// value itself is a few words on the stack of every request, under which
/// the whole answer is parsed. Without memory for it nothing is kept, as
/// when the error body could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerMessage {
    text: Vec<u8>,
}

impl ServerMessage {
    pub const fn new() -> Self {
        ServerMessage { text: Vec::new() }
    }
    /// Keep `said` (cut to fit).
    pub fn set(&mut self, said: &[u8]) {
        let said = said.get(..SERVER_MESSAGE_MAX).unwrap_or(said);
        // The earlier text goes first: one copy at a time.
        self.text = Vec::new();
        self.text = crate::base::fallible::copy_of(said).unwrap_or_default();
    }
    pub fn as_bytes(&self) -> &[u8] {
        &self.text
    }
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}

impl Default for ServerMessage {
    fn default() -> Self {
        Self::new()
    }
}

/// A failure's text for the user: one printable line, never containing the
/// API key.
pub struct ErrorText {
    pub buf: [u8; ERROR_TEXT_MAX],
    pub len: usize,
}

impl ErrorText {
    pub const fn new() -> Self {
        ErrorText {
            buf: [0; ERROR_TEXT_MAX],
            len: 0,
        }
    }
    pub fn clear(&mut self) {
        self.len = 0;
    }
    pub fn as_str(&self) -> &str {
        crate::base::text::utf8_prefix(self.buf.get(..self.len).unwrap_or_default())
    }
    pub fn set(&mut self, parts: &[&[u8]]) {
        self.len = 0;
        self.append(parts);
    }
    /// Add to the text (cut where the buffer ends).
    pub fn append(&mut self, parts: &[&[u8]]) {
        for p in parts {
            for &b in p.iter() {
                let Some(slot) = self.buf.get_mut(self.len) else {
                    return;
                };
                // Keep it one printable line.
                *slot = if b < 0x20 { b' ' } else { b };
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

#[cfg(test)]
mod tests {
    use super::*;

    fn said(text: &[u8]) -> ServerMessage {
        let mut m = ServerMessage::new();
        m.set(text);
        m
    }

    fn text_of(e: &NetError<u8>, server: &ServerMessage) -> alloc::string::String {
        let mut text = ErrorText::new();
        e.describe(server, &mut text, &|code, out| {
            out.put(b"stream error ");
            out.put(&[b'0' + code]);
        });
        text.as_str().into()
    }

    #[test]
    fn each_failure_reads_as_the_user_sees_it() {
        let table: &[(Failure, &[u8], &str)] = &[
            (
                Failure::Deadline { ms: 1500, handshake: false },
                b"",
                "the request timed out: no complete answer within 1500 ms (PKG_AGENT_REQUEST_TIMEOUT_MS)",
            ),
            (
                Failure::Deadline { ms: 20, handshake: true },
                b"",
                "the request timed out: no complete answer within 20 ms (PKG_AGENT_REQUEST_TIMEOUT_MS): the TLS handshake did not finish",
            ),
            (Failure::Status(401), b"bad key", "HTTP 401: bad key"),
            (Failure::Status(500), b"", "HTTP 500 (no message from the server)"),
            (Failure::NoHead { seconds: 3 }, b"", "no answer from the server within 3 s (timeout)"),
            (Failure::Cancelled, b"ignored", "cancelled"),
        ];
        for (failure, server, want) in table {
            assert_eq!(&text_of(&NetError::from(*failure), &said(server)), want);
        }
    }

    #[cfg(feature = "tls")]
    #[test]
    fn a_tls_failure_gives_the_glue_s_reason_and_mbedtls_s_code() {
        let failure = Failure::Tls {
            why: TlsFailure::Handshake,
            code: -0x7780,
        };
        let reason = core::str::from_utf8(TlsFailure::Handshake.text()).unwrap();
        assert_eq!(
            text_of(&NetError::from(failure), &ServerMessage::new()),
            alloc::format!("{reason} (mbedTLS -0x7780) (not retried)")
        );
    }

    #[test]
    fn a_stream_failure_is_described_by_its_sink() {
        let e = NetError {
            failure: Failure::Stream,
            stream: Some(7),
            retry_past_deadline: false,
        };
        assert_eq!(text_of(&e, &ServerMessage::new()), "stream error 7");
    }

    #[test]
    fn a_retry_given_up_for_the_deadline_says_so() {
        let e = NetError {
            failure: Failure::Silence,
            stream: None,
            retry_past_deadline: true,
        };
        assert_eq!(
            text_of(&e, &ServerMessage::new()),
            "the server stopped sending (read timeout) (no retry: the wait would pass the request deadline)"
        );
    }

    #[test]
    fn a_long_server_message_is_cut_and_the_text_stays_one_line() {
        let long = said(&[b'x'; 400]);
        assert_eq!(long.as_bytes().len(), SERVER_MESSAGE_MAX);
        let e = NetError::from(Failure::Status(429));
        assert_eq!(text_of(&e, &said(b"slow\r\ndown")), "HTTP 429: slow  down");
        let got = text_of(&NetError::from(Failure::Status(503)), &long);
        assert!(got.len() <= ERROR_TEXT_MAX && got.starts_with("HTTP 503: xxx"));
    }
}
