//! Scripted responses: what the server answers to one request, and how it
//! is framed and written (splits, delays, stalls, cuts).

use super::sse::{error_body, sse_text, sse_tool_calls};
use std::sync::Arc;
use std::time::Duration;

/// How the end of the response body is made known to the client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    /// `Content-Length: N`.
    ContentLength,
    /// `Transfer-Encoding: chunked`; each body piece becomes one chunk.
    Chunked,
    /// No length at all: the body ends when the server closes the connection
    /// (HTTP/1.0 style; some providers still do this).
    Close,
}

/// The response body before transfer framing.
#[derive(Clone, Debug)]
pub enum Body {
    /// Separate pieces (typically one SSE event each). They are written one
    /// per write under [`Split::Pieces`] and become one chunk each under
    /// [`Transfer::Chunked`] (empty pieces are skipped there, since an empty
    /// chunk would end the body).
    Pieces(Vec<Vec<u8>>),
    /// One block of bytes.
    Raw(Vec<u8>),
}

impl Body {
    /// The body bytes before framing.
    pub fn bytes(&self) -> Vec<u8> {
        match self {
            Body::Pieces(p) => p.concat(),
            Body::Raw(b) => b.clone(),
        }
    }
}

/// Where writes are split. Positions count bytes of the body as it goes on
/// the wire, i.e. after chunk framing was added, so splits can fall inside
/// chunk-size lines and CRLFs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Split {
    /// One write per body piece (per chunk, framing included, when chunked).
    Pieces,
    /// Everything in one write.
    Whole,
    /// Split at these offsets (out-of-range ones are ignored).
    At(Vec<usize>),
    /// Writes of this many bytes (0 is treated as 1).
    Every(usize),
    /// Writes of pseudo-random length in `1..=max_piece`, from `seed`; the
    /// same seed always gives the same writes.
    Random { seed: u64, max_piece: usize },
}

/// Stop sending after `after` body bytes (wire bytes) and keep the
/// connection open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stall {
    pub after: usize,
    /// How long to hold; `None` holds until the server is dropped.
    pub hold: Option<Duration>,
    /// After `hold`: send the rest (`true`) or close without it (`false`).
    pub resume: bool,
}

/// The piece `i` of a body made while it is sent (`None`: the body ends).
pub type PieceFn = dyn Fn(u64) -> Option<Vec<u8>> + Send + Sync;

/// More body after [`ScriptedResponse::body`], produced piece by piece as it
/// is sent: endless streams, and bodies too large to build up front (see
/// `hostile.rs` for the ready-made ones). Each piece is one write (one chunk
/// when chunked; empty pieces are skipped); the chunked terminator follows
/// the last piece. Stalls and cuts apply to the fixed body only, and a
/// `Content-Length` must be set by hand (the length is not known).
#[derive(Clone)]
pub struct Generated {
    pub next: Arc<PieceFn>,
    /// Pause before each piece.
    pub interval: Duration,
}

impl std::fmt::Debug for Generated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Generated")
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

/// One scripted answer. Build it with the constructors and the chained
/// setters; all fields are public for anything the setters do not cover.
#[derive(Clone, Debug)]
pub struct ScriptedResponse {
    pub status: u16,
    /// Sent in order after the status line. Framing headers
    /// (`Content-Length`, `Transfer-Encoding`, `Connection`) are added by the
    /// server only when no header of that name is listed here, so a test can
    /// send wrong or duplicate framing on purpose.
    pub headers: Vec<(String, String)>,
    pub body: Body,
    pub transfer: Transfer,
    /// Splitting of the body writes.
    pub split: Split,
    /// Splitting of the status line and headers (offsets from their start).
    pub head_split: Split,
    /// Pause between consecutive writes (head and body alike).
    pub delay: Duration,
    /// Pause before the first byte of the response (a model that thinks
    /// before it answers).
    pub first_byte_delay: Duration,
    pub stall: Option<Stall>,
    /// Close the connection after this many body bytes (wire bytes), even
    /// inside chunk framing.
    pub cut: Option<usize>,
    /// Close the connection after this response even when the client would
    /// keep it alive.
    pub close: bool,
    /// Body produced after `body`, while sending.
    pub generated: Option<Generated>,
}

impl ScriptedResponse {
    /// A 200 `text/event-stream` response, chunked, one write per event.
    pub fn sse(events: Vec<Vec<u8>>) -> Self {
        ScriptedResponse {
            status: 200,
            headers: vec![
                ("Content-Type".into(), "text/event-stream".into()),
                ("Cache-Control".into(), "no-cache".into()),
            ],
            body: Body::Pieces(events),
            transfer: Transfer::Chunked,
            split: Split::Pieces,
            head_split: Split::Whole,
            delay: Duration::ZERO,
            first_byte_delay: Duration::ZERO,
            stall: None,
            cut: None,
            close: false,
            generated: None,
        }
    }

    /// A streamed text answer: [`sse_text`] with `finish_reason: "stop"`.
    pub fn text(chunks: &[&str]) -> Self {
        Self::sse(sse_text(chunks, Some("stop")))
    }

    /// A streamed tool-call answer: [`sse_tool_calls`] with
    /// `finish_reason: "tool_calls"`.
    pub fn tool_calls(calls: &[(&str, &str, &[&str])]) -> Self {
        Self::sse(sse_tool_calls(calls, Some("tool_calls")))
    }

    /// Any status, content type and body, with `Content-Length`.
    pub fn raw(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Self {
        let mut r = Self::sse(Vec::new());
        r.status = status;
        r.headers = vec![("Content-Type".into(), content_type.into())];
        r.body = Body::Raw(body.into());
        r.transfer = Transfer::ContentLength;
        r
    }

    /// A JSON body with `Content-Length`.
    pub fn json(status: u16, json: &str) -> Self {
        Self::raw(status, "application/json", json.as_bytes().to_vec())
    }

    /// An OpenAI-style error: `{"error":{"message","type","code"}}`.
    pub fn error(status: u16, message: &str, error_type: &str, code: Option<&str>) -> Self {
        Self::json(status, &error_body(message, error_type, code))
    }

    /// The answer given when nothing is scripted for a request.
    pub fn no_script_left() -> Self {
        Self::json(500, r#"{"error":{"message":"no scripted response left"}}"#)
    }

    pub fn status(mut self, status: u16) -> Self {
        self.status = status;
        self
    }

    /// Sets a header, replacing any of the same name (case-insensitive).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Appends a header even if one of that name exists.
    pub fn add_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn retry_after(self, seconds: u64) -> Self {
        self.header("Retry-After", &seconds.to_string())
    }

    pub fn transfer(mut self, transfer: Transfer) -> Self {
        self.transfer = transfer;
        self
    }

    pub fn split(mut self, split: Split) -> Self {
        self.split = split;
        self
    }

    pub fn split_at(self, offsets: &[usize]) -> Self {
        self.split(Split::At(offsets.to_vec()))
    }

    pub fn pieces_of(self, size: usize) -> Self {
        self.split(Split::Every(size))
    }

    /// Random writes of 1 to 16 bytes.
    pub fn random_splits(self, seed: u64) -> Self {
        self.split(Split::Random {
            seed,
            max_piece: 16,
        })
    }

    pub fn head_split(mut self, split: Split) -> Self {
        self.head_split = split;
        self
    }

    pub fn delay(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }

    /// Send nothing for `delay` before the status line.
    pub fn first_byte_after(mut self, delay: Duration) -> Self {
        self.first_byte_delay = delay;
        self
    }

    /// Stall after `after` body bytes until the server is dropped.
    pub fn stall_after(mut self, after: usize) -> Self {
        self.stall = Some(Stall {
            after,
            hold: None,
            resume: false,
        });
        self
    }

    /// Stall after `after` body bytes for `hold`, then close.
    pub fn stall_for(mut self, after: usize, hold: Duration) -> Self {
        self.stall = Some(Stall {
            after,
            hold: Some(hold),
            resume: false,
        });
        self
    }

    /// Stall after `after` body bytes for `hold`, then send the rest.
    pub fn pause_at(mut self, after: usize, hold: Duration) -> Self {
        self.stall = Some(Stall {
            after,
            hold: Some(hold),
            resume: true,
        });
        self
    }

    pub fn cut_after(mut self, after: usize) -> Self {
        self.cut = Some(after);
        self
    }

    pub fn close(mut self) -> Self {
        self.close = true;
        self
    }

    /// The body as it will be on the wire (chunk framing included).
    pub fn wire_body(&self) -> Vec<u8> {
        self.wire_body_and_pieces().0
    }

    /// The wire body and the end offset of each piece in it.
    pub(super) fn wire_body_and_pieces(&self) -> (Vec<u8>, Vec<usize>) {
        let pieces: Vec<&[u8]> = match &self.body {
            Body::Pieces(p) => p.iter().map(|v| v.as_slice()).collect(),
            Body::Raw(b) => vec![b.as_slice()],
        };
        let mut out = Vec::new();
        let mut ends = Vec::new();
        for piece in pieces {
            if self.transfer == Transfer::Chunked {
                if piece.is_empty() {
                    continue;
                }
                out.extend_from_slice(format!("{:x}\r\n", piece.len()).as_bytes());
                out.extend_from_slice(piece);
                out.extend_from_slice(b"\r\n");
            } else {
                out.extend_from_slice(piece);
            }
            ends.push(out.len());
        }
        // A generated body follows: its sender writes the terminator.
        if self.transfer == Transfer::Chunked && self.generated.is_none() {
            out.extend_from_slice(b"0\r\n\r\n");
            ends.push(out.len());
        }
        (out, ends)
    }

    /// The status line and headers; `close` adds `Connection: close`.
    pub(super) fn head(&self, body_len: usize, close: bool) -> Vec<u8> {
        let has = |name: &str| {
            self.headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case(name))
        };
        let mut h = format!(
            "HTTP/1.1 {} {}\r\n",
            self.status,
            reason_phrase(self.status)
        );
        for (n, v) in &self.headers {
            h.push_str(&format!("{n}: {v}\r\n"));
        }
        match self.transfer {
            Transfer::ContentLength if !has("Content-Length") => {
                h.push_str(&format!("Content-Length: {body_len}\r\n"))
            }
            Transfer::Chunked if !has("Transfer-Encoding") => {
                h.push_str("Transfer-Encoding: chunked\r\n")
            }
            _ => {}
        }
        if close && !has("Connection") {
            h.push_str("Connection: close\r\n");
        }
        h.push_str("\r\n");
        h.into_bytes()
    }
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Site Overloaded",
        _ => "Status",
    }
}

/// splitmix64: tiny, good enough to scatter split points, and reproducible
/// from a seed printed in a failing test.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// End offsets of the writes for `len` bytes (sorted, unique, last == len).
pub(super) fn write_ends(split: &Split, len: usize, pieces: &[usize]) -> Vec<usize> {
    let mut ends: Vec<usize> = match split {
        Split::Pieces => pieces.to_vec(),
        Split::Whole => Vec::new(),
        Split::At(at) => at.clone(),
        Split::Every(n) => (1..)
            .map(|i| i * (*n).max(1))
            .take_while(|&e| e < len)
            .collect(),
        Split::Random { seed, max_piece } => {
            let mut rng = SplitMix64(*seed);
            let max = (*max_piece).max(1) as u64;
            let mut ends = Vec::new();
            let mut pos = 0usize;
            while pos < len {
                pos += 1 + (rng.next() % max) as usize;
                ends.push(pos);
            }
            ends
        }
    };
    ends.retain(|&e| e > 0 && e < len);
    if len > 0 {
        ends.push(len);
    }
    ends.sort_unstable();
    ends.dedup();
    ends
}
