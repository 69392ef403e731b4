//! A scripted OpenAI-compatible chat-completions server speaking HTTP/1.1 and
//! SSE over loopback TCP, std only.
//!
//! Its job is to reproduce, byte for byte and write by write, what real
//! providers do to a streaming client: bodies framed by `Content-Length`, by
//! chunked encoding or by closing the connection; network reads that end
//! anywhere (1-byte writes, random split points, splits inside chunk framing);
//! streams that stall or are cut off mid-body; error statuses with JSON bodies.
//!
//! Two ways to decide the answers:
//! - a queue of [`ScriptedResponse`]s, one per request, in arrival order
//!   ([`LlmServer::start`]);
//! - a "model" closure that sees each [`RecordedRequest`] and returns the
//!   answer ([`LlmServer::with_model`]); queued responses still go first.
//!
//! Nothing here panics on what a client sends: malformed requests get a 400
//! and a line in [`LlmServer::errors`]; network failures end that connection
//! and are noted the same way. The server is usable outside the test harness
//! (the host simulator reuses it).

use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// Requests whose header block is larger than this are refused: a client
/// that never ends its headers must not make the server grow without bound.
const MAX_HEAD: usize = 64 * 1024;
/// Same idea for request bodies.
const MAX_BODY: usize = 64 * 1024 * 1024;
const MAX_HEADERS: usize = 200;

// ---------------------------------------------------------------------------
// Scripted responses
// ---------------------------------------------------------------------------

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
    fn wire_body_and_pieces(&self) -> (Vec<u8>, Vec<usize>) {
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
        if self.transfer == Transfer::Chunked {
            out.extend_from_slice(b"0\r\n\r\n");
            ends.push(out.len());
        }
        (out, ends)
    }

    /// The status line and headers; `close` adds `Connection: close`.
    fn head(&self, body_len: usize, close: bool) -> Vec<u8> {
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
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
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
fn write_ends(split: &Split, len: usize, pieces: &[usize]) -> Vec<usize> {
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

// ---------------------------------------------------------------------------
// Body builders
// ---------------------------------------------------------------------------

/// `s` as a JSON string literal, quotes included.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// One SSE event carrying `data`; a multi-line `data` becomes several
/// `data:` lines, which the SSE rules join back with `\n`.
pub fn sse_event(data: &str) -> Vec<u8> {
    let mut out = String::new();
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out.into_bytes()
}

pub fn sse_done() -> Vec<u8> {
    b"data: [DONE]\n\n".to_vec()
}

/// A `chat.completion.chunk` object with one choice whose `delta` is the
/// given JSON object text.
pub fn chunk_json(delta_json: &str, finish_reason: Option<&str>) -> String {
    let finish = finish_reason.map_or_else(|| "null".to_string(), json_string);
    format!(
        concat!(
            r#"{{"id":"chatcmpl-scripted","object":"chat.completion.chunk","created":0,"#,
            r#""model":"scripted","choices":[{{"index":0,"delta":{},"finish_reason":{}}}]}}"#
        ),
        delta_json, finish
    )
}

/// One event per content chunk; the first also carries `"role":"assistant"`
/// as OpenAI's first chunk does.
pub fn sse_content_events(chunks: &[&str]) -> Vec<Vec<u8>> {
    chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let role = if i == 0 { r#""role":"assistant","# } else { "" };
            let delta = format!(r#"{{{role}"content":{}}}"#, json_string(c));
            sse_event(&chunk_json(&delta, None))
        })
        .collect()
}

/// Tool-call fragments in OpenAI's shape: a call's first fragment carries
/// `index`, `id`, `type`, `function.name` and the first arguments fragment;
/// later fragments carry only `index` and `function.arguments`.
pub fn sse_tool_call_events(calls: &[(&str, &str, &[&str])]) -> Vec<Vec<u8>> {
    let mut events = Vec::new();
    for (index, (id, name, fragments)) in calls.iter().enumerate() {
        let first_args = fragments.first().copied().unwrap_or("");
        let first = format!(
            r#"{{"tool_calls":[{{"index":{index},"id":{},"type":"function","function":{{"name":{},"arguments":{}}}}}]}}"#,
            json_string(id),
            json_string(name),
            json_string(first_args)
        );
        events.push(sse_event(&chunk_json(&first, None)));
        for frag in fragments.iter().skip(1) {
            let delta = format!(
                r#"{{"tool_calls":[{{"index":{index},"function":{{"arguments":{}}}}}]}}"#,
                json_string(frag)
            );
            events.push(sse_event(&chunk_json(&delta, None)));
        }
    }
    events
}

/// The closing chunk: empty delta and the finish reason.
pub fn sse_finish(finish_reason: &str) -> Vec<u8> {
    sse_event(&chunk_json("{}", Some(finish_reason)))
}

/// A whole text stream: content events, a finish chunk (left out when
/// `finish_reason` is `None`, to script a stream that never finishes), then
/// `data: [DONE]`.
pub fn sse_text(chunks: &[&str], finish_reason: Option<&str>) -> Vec<Vec<u8>> {
    let mut events = sse_content_events(chunks);
    if let Some(f) = finish_reason {
        events.push(sse_finish(f));
    }
    events.push(sse_done());
    events
}

/// A whole tool-call stream: `calls` are `(id, name, argument fragments)`,
/// each call's fragments in order, then the finish chunk (if any) and
/// `data: [DONE]`.
pub fn sse_tool_calls(
    calls: &[(&str, &str, &[&str])],
    finish_reason: Option<&str>,
) -> Vec<Vec<u8>> {
    let mut events = sse_tool_call_events(calls);
    if let Some(f) = finish_reason {
        events.push(sse_finish(f));
    }
    events.push(sse_done());
    events
}

/// `{"error":{"message":...,"type":...,"code":...}}` (`code` null if `None`).
pub fn error_body(message: &str, error_type: &str, code: Option<&str>) -> String {
    format!(
        r#"{{"error":{{"message":{},"type":{},"code":{}}}}}"#,
        json_string(message),
        json_string(error_type),
        code.map_or_else(|| "null".to_string(), json_string)
    )
}

// ---------------------------------------------------------------------------
// Records
// ---------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedRequest {
    /// Which connection it came on (0, 1, ... in accept order); equal values
    /// mean the client reused a kept-alive connection.
    pub conn: usize,
    pub method: String,
    pub path: String,
    pub version: String,
    /// In arrival order, names as sent.
    pub headers: Vec<(String, String)>,
    /// The body after removing any chunked framing.
    pub body: Vec<u8>,
    /// The body came with `Transfer-Encoding: chunked`.
    pub chunked: bool,
}

impl RecordedRequest {
    /// First value of a header, name compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The body as text (invalid UTF-8 replaced).
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    fn wants_close(&self) -> bool {
        let tokens = self.header_all("Connection").join(",").to_ascii_lowercase();
        let has = |t: &str| tokens.split(',').any(|x| x.trim() == t);
        if self.version == "HTTP/1.0" {
            !has("keep-alive")
        } else {
            has("close")
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Everything written.
    Complete,
    /// Closed on purpose after `cut` bytes.
    Cut,
    /// Stalled and then closed (hold elapsed or server dropped).
    Stalled,
    /// A write failed (usually the client went away).
    Failed(String),
}

/// What the server did for one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentResponse {
    /// Index into [`LlmServer::requests`]; `None` for the 400 sent to a
    /// request that could not be parsed.
    pub request: Option<usize>,
    pub status: u16,
    /// Sizes of the writes of the status line and headers.
    pub head_writes: Vec<usize>,
    /// Sizes of the body writes that succeeded.
    pub body_writes: Vec<usize>,
    pub outcome: Outcome,
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

type Model = dyn Fn(&RecordedRequest) -> ScriptedResponse + Send + Sync;

struct State {
    queue: VecDeque<ScriptedResponse>,
    model: Option<Arc<Model>>,
    requests: Vec<RecordedRequest>,
    sent: Vec<SentResponse>,
    errors: Vec<String>,
    /// Clones of open connections, so dropping the server can unblock
    /// workers stuck in a read or write.
    streams: HashMap<usize, TcpStream>,
    workers: Vec<JoinHandle<()>>,
    next_conn: usize,
    shutting_down: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled on every new record and on shutdown; waiters re-check.
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panicking model closure must not take the whole server down.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn shutting_down(&self) -> bool {
        self.lock().shutting_down
    }

    fn note_error(&self, msg: String) {
        let mut st = self.lock();
        if !st.shutting_down {
            st.errors.push(msg);
        }
        drop(st);
        self.changed.notify_all();
    }

    /// Sleeps for `d` (forever if `None`) unless the server shuts down
    /// first; returns whether it did.
    fn sleep(&self, d: Option<Duration>) -> bool {
        let st = self.lock();
        match d {
            Some(d) => {
                let (st, _) = self
                    .changed
                    .wait_timeout_while(st, d, |s| !s.shutting_down)
                    .unwrap_or_else(|e| e.into_inner());
                st.shutting_down
            }
            None => {
                let st = self
                    .changed
                    .wait_while(st, |s| !s.shutting_down)
                    .unwrap_or_else(|e| e.into_inner());
                st.shutting_down
            }
        }
    }
}

/// The server. Stops (closing every connection and joining every thread)
/// when dropped.
pub struct LlmServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl LlmServer {
    /// Serves `responses` in order, one per request.
    pub fn start(responses: Vec<ScriptedResponse>) -> io::Result<Self> {
        Self::launch(responses.into(), None)
    }

    /// Lets `model` answer every request that finds the queue empty.
    pub fn with_model<F>(model: F) -> io::Result<Self>
    where
        F: Fn(&RecordedRequest) -> ScriptedResponse + Send + Sync + 'static,
    {
        Self::launch(VecDeque::new(), Some(Arc::new(model)))
    }

    fn launch(queue: VecDeque<ScriptedResponse>, model: Option<Arc<Model>>) -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue,
                model,
                requests: Vec::new(),
                sent: Vec::new(),
                errors: Vec::new(),
                streams: HashMap::new(),
                workers: Vec::new(),
                next_conn: 0,
                shutting_down: false,
            }),
            changed: Condvar::new(),
        });
        let sh = Arc::clone(&shared);
        let acceptor = thread::Builder::new()
            .name("llm-server-accept".into())
            .spawn(move || accept_loop(listener, sh))?;
        Ok(LlmServer {
            addr,
            shared,
            acceptor: Some(acceptor),
        })
    }

    /// `http://127.0.0.1:PORT/v1/chat/completions`
    pub fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url())
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Adds a response to the end of the queue.
    pub fn push(&self, response: ScriptedResponse) {
        self.shared.lock().queue.push_back(response);
    }

    /// Queued responses not yet used.
    pub fn remaining(&self) -> usize {
        self.shared.lock().queue.len()
    }

    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().requests.clone()
    }

    /// Waits until at least `n` requests were recorded; false on timeout.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        self.wait_until(timeout, |s| s.requests.len() >= n)
    }

    /// What was sent so far, in order of completion.
    pub fn sent(&self) -> Vec<SentResponse> {
        self.shared.lock().sent.clone()
    }

    /// Waits until at least `n` responses were finished (completed, cut,
    /// stalled and closed, or failed); false on timeout.
    pub fn wait_for_sent(&self, n: usize, timeout: Duration) -> bool {
        self.wait_until(timeout, |s| s.sent.len() >= n)
    }

    /// Bad requests and network failures seen so far.
    pub fn errors(&self) -> Vec<String> {
        self.shared.lock().errors.clone()
    }

    fn wait_until(&self, timeout: Duration, done: impl Fn(&State) -> bool) -> bool {
        let st = self.shared.lock();
        let (st, _) = self
            .shared
            .changed
            .wait_timeout_while(st, timeout, |s| !done(s))
            .unwrap_or_else(|e| e.into_inner());
        done(&st)
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        self.shared.lock().shutting_down = true;
        self.shared.changed.notify_all();
        // The acceptor blocks in accept(); a connection of our own wakes it
        // to see the flag. If the connect fails the listener is already gone.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(a) = self.acceptor.take() {
            let _ = a.join();
        }
        // The acceptor has stopped, so no new connection can be registered
        // after this: shut every socket down to unblock its worker.
        let (streams, workers) = {
            let mut st = self.shared.lock();
            let streams: Vec<TcpStream> = st.streams.drain().map(|(_, s)| s).collect();
            (streams, std::mem::take(&mut st.workers))
        };
        for s in &streams {
            let _ = s.shutdown(Shutdown::Both);
        }
        for w in workers {
            let _ = w.join();
        }
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    rtt_agent::host::heap::exclude_this_thread(true);
    for incoming in listener.incoming() {
        if shared.shutting_down() {
            return;
        }
        let stream = match incoming {
            Ok(s) => s,
            Err(e) => {
                shared.note_error(format!("accept: {e}"));
                // Avoid spinning when accept keeps failing (e.g. no fds left).
                thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let registered = stream.try_clone();
        let mut st = shared.lock();
        let conn = st.next_conn;
        st.next_conn += 1;
        match registered {
            Ok(clone) => {
                st.streams.insert(conn, clone);
            }
            Err(e) => {
                st.errors.push(format!("conn {conn}: clone: {e}"));
                continue;
            }
        }
        st.workers.retain(|w| !w.is_finished());
        let sh = Arc::clone(&shared);
        // No thread name: std would allocate it on the new thread before
        // serve_connection can exclude itself from the host heap's count,
        // and free it only when the connection ends.
        let spawned = thread::Builder::new().spawn(move || serve_connection(stream, conn, sh));
        match spawned {
            Ok(h) => st.workers.push(h),
            Err(e) => {
                st.streams.remove(&conn);
                st.errors.push(format!("conn {conn}: spawn: {e}"));
            }
        }
    }
}

fn serve_connection(stream: TcpStream, conn: usize, shared: Arc<Shared>) {
    // The server shares the process with the code under test: keep its
    // memory out of the host heap's `used`, which tests compare exactly.
    rtt_agent::host::heap::exclude_this_thread(true);
    // Each write must leave as its own segment, or the splits are undone by
    // Nagle's algorithm before the client sees them.
    let _ = stream.set_nodelay(true);
    let mut reader = match stream.try_clone() {
        Ok(s) => ConnReader::new(s),
        Err(e) => {
            shared.note_error(format!("conn {conn}: clone: {e}"));
            shared.lock().streams.remove(&conn);
            return;
        }
    };
    let mut out = stream;
    loop {
        let req = match read_request(&mut reader, &mut out, conn) {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(ReqError::Io(e)) => {
                shared.note_error(format!("conn {conn}: reading request: {e}"));
                break;
            }
            Err(ReqError::Bad(why)) => {
                shared.note_error(format!("conn {conn}: bad request: {why}"));
                let resp = ScriptedResponse::error(400, &why, "invalid_request_error", None);
                let sent = send_response(&shared, &mut out, &resp, true, None);
                record_sent(&shared, sent);
                break;
            }
        };
        let close_requested = req.wants_close();

        // Record before answering: a test waiting for the request sees it
        // even while the answer stalls, and the model sees the same record.
        let (index, scripted, model) = {
            let mut st = shared.lock();
            st.requests.push(req.clone());
            let index = st.requests.len() - 1;
            (index, st.queue.pop_front(), st.model.clone())
        };
        shared.changed.notify_all();
        let resp = match (scripted, model) {
            (Some(r), _) => r,
            (None, Some(model)) => match catch_unwind(AssertUnwindSafe(|| model(&req))) {
                Ok(r) => r,
                Err(_) => {
                    shared.note_error(format!("conn {conn}: the model panicked"));
                    ScriptedResponse::error(500, "scripted model panicked", "server_error", None)
                }
            },
            (None, None) => ScriptedResponse::no_script_left(),
        };

        let close = close_requested || resp.close || resp.transfer == Transfer::Close;
        let sent = send_response(&shared, &mut out, &resp, close, Some(index));
        let keep = sent.outcome == Outcome::Complete && !close;
        if let Outcome::Failed(e) = &sent.outcome {
            shared.note_error(format!("conn {conn}: writing response: {e}"));
        }
        record_sent(&shared, sent);
        if !keep || shared.shutting_down() {
            break;
        }
    }
    if !shared.shutting_down() {
        linger_close(&mut out);
    }
    let _ = out.shutdown(Shutdown::Both);
    shared.lock().streams.remove(&conn);
}

/// Closes gracefully: closing a socket with unread input makes the kernel
/// send a reset, and a reset can destroy response bytes the client has not
/// read yet (the 400 for a bad request, the tail of a close-delimited body).
/// So send our FIN, then swallow what the client still sends for a moment.
fn linger_close(out: &mut TcpStream) {
    let _ = out.shutdown(Shutdown::Write);
    let _ = out.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf = [0u8; 4096];
    for _ in 0..64 {
        match out.read(&mut buf) {
            Ok(n) if n > 0 => continue,
            _ => break,
        }
    }
}

fn record_sent(shared: &Shared, sent: SentResponse) {
    shared.lock().sent.push(sent);
    shared.changed.notify_all();
}

/// Writes one response under its split, delay, stall and cut rules.
fn send_response(
    shared: &Shared,
    out: &mut TcpStream,
    resp: &ScriptedResponse,
    close: bool,
    request: Option<usize>,
) -> SentResponse {
    let (body, pieces) = resp.wire_body_and_pieces();
    let head = resp.head(body.len(), close);
    let mut sent = SentResponse {
        request,
        status: resp.status,
        head_writes: Vec::new(),
        body_writes: Vec::new(),
        outcome: Outcome::Complete,
    };
    let mut first_write = true;
    // Paces writes; false when the server is shutting down.
    let pace = |first: &mut bool| -> bool {
        let wait = if *first {
            resp.first_byte_delay
        } else {
            resp.delay
        };
        if !wait.is_zero() && shared.sleep(Some(wait)) {
            return false;
        }
        *first = false;
        true
    };

    let mut pos = 0;
    for end in write_ends(&resp.head_split, head.len(), &[head.len()]) {
        if !pace(&mut first_write) {
            sent.outcome = Outcome::Failed("server shutting down".into());
            return sent;
        }
        if let Err(e) = write_flush(out, &head[pos..end]) {
            sent.outcome = Outcome::Failed(e.to_string());
            return sent;
        }
        sent.head_writes.push(end - pos);
        pos = end;
    }

    let len = body.len();
    let stall_at = resp.stall.map(|s| s.after.min(len));
    let cut_at = resp.cut.map(|c| c.min(len));
    let mut ends = write_ends(&resp.split, len, &pieces);
    // Stop points become write boundaries so that exactly N bytes go out.
    ends.extend(stall_at.iter().chain(cut_at.iter()).filter(|&&p| p > 0));
    ends.sort_unstable();
    ends.dedup();

    let mut stalled = false;
    let mut pos = 0;
    let mut next = ends.into_iter();
    loop {
        if let (Some(at), Some(stall)) = (stall_at, resp.stall) {
            if !stalled && pos == at {
                stalled = true;
                let shutdown = shared.sleep(stall.hold);
                if shutdown || !stall.resume {
                    let _ = out.shutdown(Shutdown::Both);
                    sent.outcome = Outcome::Stalled;
                    return sent;
                }
            }
        }
        if cut_at == Some(pos) {
            let _ = out.shutdown(Shutdown::Both);
            sent.outcome = Outcome::Cut;
            return sent;
        }
        let Some(end) = next.next() else { break };
        if !pace(&mut first_write) {
            sent.outcome = Outcome::Failed("server shutting down".into());
            return sent;
        }
        if let Err(e) = write_flush(out, &body[pos..end]) {
            sent.outcome = Outcome::Failed(e.to_string());
            return sent;
        }
        sent.body_writes.push(end - pos);
        pos = end;
    }
    sent
}

fn write_flush(out: &mut TcpStream, bytes: &[u8]) -> io::Result<()> {
    out.write_all(bytes)?;
    out.flush()
}

// ---------------------------------------------------------------------------
// Request parsing
// ---------------------------------------------------------------------------

enum ReqError {
    /// The connection failed; nothing can be answered.
    Io(io::Error),
    /// The client sent something that is not HTTP; answer 400.
    Bad(String),
}

impl From<io::Error> for ReqError {
    fn from(e: io::Error) -> Self {
        ReqError::Io(e)
    }
}

/// Buffered reader that keeps bytes past one request for the next one on a
/// kept-alive connection.
struct ConnReader {
    stream: TcpStream,
    buf: Vec<u8>,
    start: usize,
}

impl ConnReader {
    fn new(stream: TcpStream) -> Self {
        ConnReader {
            stream,
            buf: Vec::new(),
            start: 0,
        }
    }

    fn available(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Reads more; false at end of stream.
    fn fill(&mut self) -> io::Result<bool> {
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let mut tmp = [0u8; 16 * 1024];
        loop {
            match self.stream.read(&mut tmp) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.buf.extend_from_slice(&tmp[..n]);
                    return Ok(true);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// One line without its `\n` or `\r\n`. `Ok(None)` at a clean end of
    /// stream (no bytes of a new line read).
    fn line(&mut self, max: usize) -> Result<Option<Vec<u8>>, ReqError> {
        loop {
            if let Some(i) = self.available().iter().position(|&b| b == b'\n') {
                let mut line = self.available()[..i].to_vec();
                self.start += i + 1;
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(Some(line));
            }
            if self.available().len() > max {
                return Err(ReqError::Bad("line too long".into()));
            }
            if !self.fill()? {
                return if self.available().is_empty() {
                    Ok(None)
                } else {
                    Err(ReqError::Io(io::ErrorKind::UnexpectedEof.into()))
                };
            }
        }
    }

    fn exact(&mut self, n: usize, into: &mut Vec<u8>) -> Result<(), ReqError> {
        while self.available().len() < n {
            if !self.fill()? {
                return Err(ReqError::Io(io::ErrorKind::UnexpectedEof.into()));
            }
        }
        into.extend_from_slice(&self.available()[..n]);
        self.start += n;
        Ok(())
    }
}

fn read_request(
    r: &mut ConnReader,
    out: &mut TcpStream,
    conn: usize,
) -> Result<Option<RecordedRequest>, ReqError> {
    let bad = |s: &str| ReqError::Bad(s.to_string());
    let text = |v: Vec<u8>| String::from_utf8(v).map_err(|_| bad("header is not UTF-8"));

    // RFC 9112 lets a server skip empty lines before the request line.
    let mut head_size = 0;
    let request_line = loop {
        match r.line(MAX_HEAD)? {
            None => return Ok(None),
            Some(l) if l.is_empty() => {
                head_size += 2;
                if head_size > MAX_HEAD {
                    return Err(bad("request head too large"));
                }
            }
            Some(l) => break text(l)?,
        }
    };
    head_size += request_line.len();
    let mut parts = request_line.split_whitespace();
    let (Some(method), Some(path), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad("malformed request line"));
    };
    if !version.starts_with("HTTP/1.") {
        return Err(bad("unsupported HTTP version"));
    }

    let mut headers = Vec::new();
    loop {
        let Some(line) = r.line(MAX_HEAD)? else {
            return Err(ReqError::Io(io::ErrorKind::UnexpectedEof.into()));
        };
        head_size += line.len() + 2;
        if head_size > MAX_HEAD || headers.len() > MAX_HEADERS {
            return Err(bad("request head too large"));
        }
        if line.is_empty() {
            break;
        }
        let line = text(line)?;
        let Some((name, value)) = line.split_once(':') else {
            return Err(bad("header line without a colon"));
        };
        if name.is_empty() || name.trim() != name {
            return Err(bad("malformed header name"));
        }
        headers.push((name.to_string(), value.trim().to_string()));
    }

    let mut req = RecordedRequest {
        conn,
        method: method.to_string(),
        path: path.to_string(),
        version: version.to_string(),
        headers,
        body: Vec::new(),
        chunked: false,
    };

    let te = req.header_all("Transfer-Encoding").join(",");
    let chunked = te
        .rsplit(',')
        .next()
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("chunked"));
    if !te.is_empty() && !chunked {
        return Err(bad("unsupported transfer-encoding"));
    }
    let length = if chunked {
        None
    } else {
        let lengths = req.header_all("Content-Length");
        match lengths.first() {
            None => Some(0),
            Some(first) => {
                if lengths.iter().any(|l| l != first) {
                    return Err(bad("conflicting Content-Length headers"));
                }
                let n: usize = first.parse().map_err(|_| bad("bad Content-Length"))?;
                if n > MAX_BODY {
                    return Err(bad("request body too large"));
                }
                Some(n)
            }
        }
    };

    let expects_body = chunked || length.unwrap_or(0) > 0;
    if expects_body
        && req
            .header("Expect")
            .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        write_flush(out, b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }

    match length {
        Some(n) => r.exact(n, &mut req.body)?,
        None => {
            req.chunked = true;
            read_chunked(r, &mut req.body)?;
        }
    }
    Ok(Some(req))
}

fn read_chunked(r: &mut ConnReader, body: &mut Vec<u8>) -> Result<(), ReqError> {
    let bad = |s: &str| ReqError::Bad(s.to_string());
    let eof = || ReqError::Io(io::ErrorKind::UnexpectedEof.into());
    loop {
        let line = r.line(1024)?.ok_or_else(eof)?;
        let line = String::from_utf8(line).map_err(|_| bad("bad chunk size line"))?;
        let size = line.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size, 16).map_err(|_| bad("bad chunk size"))?;
        if size > MAX_BODY - body.len() {
            return Err(bad("request body too large"));
        }
        if size == 0 {
            // Trailer fields, if any, up to the empty line; they are dropped.
            loop {
                let t = r.line(MAX_HEAD)?.ok_or_else(eof)?;
                if t.is_empty() {
                    return Ok(());
                }
            }
        }
        r.exact(size, body)?;
        let end = r.line(2)?.ok_or_else(eof)?;
        if !end.is_empty() {
            return Err(bad("chunk data longer than its size"));
        }
    }
}
