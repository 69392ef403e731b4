//! Pure stream logic: the body of an OpenAI-compatible chat-completions
//! response (`"stream": true`), read incrementally. No FFI, `no_std` +
//! `alloc`, no panics on any input, and every allocation fallible.
//!
//! The other wire formats ([`Format`], chosen with
//! [`ChatStream::with_format`]) are read by the same machinery (framing,
//! tokenizer, caps, tool-call reassembly, the same results and errors):
//! Anthropic Messages in `anthropic.rs` (feature `provider-anthropic`),
//! Ollama's NDJSON in `ndjson.rs` (feature `provider-ollama`). What follows
//! describes the OpenAI format; those files say what differs.
//!
//! # Use
//!
//! ```
//! use rtt_agent::wire::stream::{Caps, ChatStream, Progress, StreamSink};
//!
//! struct Print;
//! impl StreamSink for Print {
//!     fn content(&mut self, text: &str) { /* show `text` as it arrives */ }
//! }
//!
//! let caps = Caps { max_content: 8192, max_reasoning: 8192, max_tool_args: 4096,
//!                   max_token: 512, max_tool_calls: 16 };
//! let mut stream = ChatStream::new(caps);
//! let body: &[&[u8]] = &[b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"},",
//!                        b"\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"];
//! for read in body {
//!     if stream.feed(read, &mut Print).unwrap() == Progress::Done { break; }
//! }
//! // At connection close: stream.finish(&mut Print) (a no-op after [DONE]).
//! assert_eq!(stream.finish(&mut Print), Ok(()));
//! assert_eq!(stream.content(), "Hi");
//! assert_eq!(stream.finish_reason(), Some("stop"));
//! ```
//!
//! Hand every network read to [`ChatStream::feed`] as it comes, split
//! anywhere (inside a line, a UTF-8 sequence, a JSON string, one byte at a
//! time). [`Progress::Done`] means `data: [DONE]` arrived: the response is
//! complete, stop reading. When the server closes the connection first, call
//! [`ChatStream::finish`]: it counts the last event even without its blank
//! line, and succeeds only if a `finish_reason` arrived (some servers never
//! send `[DONE]`); otherwise the stream was cut off and the result is
//! [`StreamError::Truncated`]. Any error is final: later calls return it again.
//!
//! # What is read
//!
//! - SSE framing: `\n`, `\r\n` or `\r` line ends; `data:` with or without one
//!   space; `:` comment lines; `event:`, `id:`, `retry:` and unknown fields
//!   ignored except `event: error`; several `data:` lines of one event joined
//!   with `\n`; an event ends at a blank line.
//! - Of each chunk, `choices[0]` only (by position; chunks with
//!   `"choices": []` or without `delta` add nothing): `delta.content` (the
//!   answer), `delta.reasoning` and `delta.reasoning_content` (reasoning; when
//!   one delta carries both, the first with text counts, as servers that send
//!   both send the same text), `finish_reason` (the latest non-null, non-empty
//!   one), and `delta.tool_calls[]` fragments (see [`ToolCall`]).
//! - A chunk's `error` (an object with `message`, or a string) and any
//!   `event: error` fail the request with [`StreamError::ServerError`];
//!   [`ChatStream::error_message`] then has the server's message, the error
//!   event's data as text, or a fallback.
//!
//! # Memory
//!
//! Nothing holds a whole line or chunk: string values stream straight into
//! their destination as bytes arrive, with escapes (`\uXXXX`, surrogate pairs)
//! decoded across any split. (A lone surrogate escape becomes U+FFFD; so does
//! each half of a pair that a server splits across two deltas, which no
//! server is known to do.) [`Caps`] are limits, not buffers: memory grows
//! with what arrives. Past a cap nothing is ever cut silently:
//! - content and reasoning stop growing and raise their `*_truncated` flag
//!   (the caller adds a visible note); the text kept is the longest prefix
//!   that fits in the cap without splitting a character, so it may be up to
//!   3 bytes shorter than the cap; the sink sees exactly the text kept;
//! - a tool call's arguments are dropped and the call marked
//!   [`ToolCall::too_long`] (it stays, so the loop can answer it with an
//!   error);
//! - any other buffered value (id, name, type, finish_reason) fails the
//!   request with [`StreamError::TokenTooLong`]; an error message is cut and
//!   marked with `…` instead, so the server's error still gets through;
//! - more than [`Caps::max_tool_calls`] calls fail with
//!   [`StreamError::TooManyToolCalls`].
//!
//! The parser itself keeps a few hundred bytes of state and never recurses.
//!
//! # Tool calls
//!
//! Fragments are reassembled per `index`: `id`, `type` and `function.name`
//! come from the first fragment that carries them (an empty `""` counts as
//! absent); `arguments` is the exact concatenation of every fragment's
//! `arguments`, in arrival order, in linear time. A fragment goes to the call
//! whose `id` matches its non-empty `id`; otherwise to the latest call at its
//! `index` (or, without `index`, at its position in the `tool_calls` array),
//! unless that call has a different id: then it starts a new call (Ollama
//! sends two whole calls both at index 0). Calls are complete only when the stream has
//! ended successfully: [`ChatStream::tool_calls`] is empty until then, and
//! stays empty after an error, so partial calls are never executed. Complete
//! calls are in index order (arrival order for equal indexes); one without
//! an id gets a unique `call_<n>` ([`ToolCall::id_generated`]).

#[cfg(feature = "provider-anthropic")]
mod anthropic;
mod chunk;
#[cfg(feature = "provider-ollama")]
mod ndjson;
pub(crate) mod sse;
mod tokenizer;
mod tool_call;

#[cfg(feature = "mcp-server")]
pub(crate) use tokenizer::is_well_formed;
pub use tool_call::ToolCall;

use alloc::string::String;
use chunk::{Chat, Sem};
use sse::{Events, Sse};
use tokenizer::Tokenizer;

/// The wire format of a response (and of its request: see
/// `crate::wire::chat::provider`). Without the `provider-*` features there is
/// only the OpenAI one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// OpenAI chat completions: SSE, `choices[0].delta`, `[DONE]`.
    OpenAi,
    /// Anthropic Messages: SSE events `message_start` ... `message_stop`
    /// (feature `provider-anthropic`).
    #[cfg(feature = "provider-anthropic")]
    Anthropic,
    /// Ollama's native `/api/chat`: NDJSON (feature `provider-ollama`).
    #[cfg(feature = "provider-ollama")]
    Ollama,
}

impl Format {
    /// The format a URL implies: a path ending in `/v1/messages` is
    /// Anthropic's, one ending in `/api/chat` Ollama's (each only when its
    /// feature is built in), anything else OpenAI's. A query or a trailing
    /// `/` does not count.
    pub fn from_url(url: &[u8]) -> Format {
        // Without an adapter nothing is looked at (not even the URL: the
        // OpenAI-only build stays the size it was).
        #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
        {
            let path = match url.iter().position(|&b| b == b'?' || b == b'#') {
                Some(q) => url.get(..q).unwrap_or(url),
                None => url,
            };
            let path = match path.split_last() {
                Some((b'/', before)) => before,
                _ => path,
            };
            #[cfg(feature = "provider-anthropic")]
            if path.ends_with(b"/v1/messages") {
                return Format::Anthropic;
            }
            #[cfg(feature = "provider-ollama")]
            if path.ends_with(b"/api/chat") {
                return Format::Ollama;
            }
        }
        let _ = url;
        Format::OpenAi
    }

    /// The format called `name` (`openai`, `anthropic`, `ollama`, any case),
    /// if it is built in.
    pub fn from_name(name: &[u8]) -> Option<Format> {
        if name.eq_ignore_ascii_case(b"openai") {
            return Some(Format::OpenAi);
        }
        #[cfg(feature = "provider-anthropic")]
        if name.eq_ignore_ascii_case(b"anthropic") {
            return Some(Format::Anthropic);
        }
        #[cfg(feature = "provider-ollama")]
        if name.eq_ignore_ascii_case(b"ollama") {
            return Some(Format::Ollama);
        }
        None
    }

    /// The name [`Format::from_name`] takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::OpenAi => "openai",
            #[cfg(feature = "provider-anthropic")]
            Format::Anthropic => "anthropic",
            #[cfg(feature = "provider-ollama")]
            Format::Ollama => "ollama",
        }
    }
}

/// The per-format reader state beside the shared results.
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
enum Proto {
    OpenAi,
    #[cfg(feature = "provider-anthropic")]
    Anthropic(anthropic::State),
    #[cfg(feature = "provider-ollama")]
    Ollama(ndjson::State),
}

/// Limits on what one response may hold, in bytes (counts for
/// `max_tool_calls`). Nothing is allocated up front.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// The answer (`PKG_AGENT_MAX_CONTENT_LEN`).
    pub max_content: usize,
    /// The reasoning (`PKG_AGENT_MAX_REASONING_LEN`).
    pub max_reasoning: usize,
    /// One tool call's arguments (`PKG_AGENT_MAX_TOOL_ARG_LEN`).
    pub max_tool_args: usize,
    /// Any short value that is buffered: tool-call id, name and type,
    /// `finish_reason`, an error message (`PKG_AGENT_STREAM_LINE_BUFSZ`).
    pub max_token: usize,
    /// Tool calls in one response.
    pub max_tool_calls: usize,
}

/// How far the stream has come after a successful [`ChatStream::feed`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Progress {
    /// More data is needed (not an error).
    More,
    /// `data: [DONE]` arrived: the response is complete; further input is
    /// ignored.
    Done,
}

/// Why a response failed. Small and `Copy`; [`ChatStream::error_message`]
/// has the server's own text for [`StreamError::ServerError`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamError {
    /// The connection closed before the response finished (no
    /// `finish_reason`, or inside an event).
    Truncated,
    /// The server sent an error object or an `event: error`.
    ServerError,
    /// A buffered value (id, name, type, finish_reason) exceeds
    /// [`Caps::max_token`].
    TokenTooLong,
    /// More tool calls than [`Caps::max_tool_calls`].
    TooManyToolCalls,
    /// An allocation failed.
    OutOfMemory,
    /// An event's data is not JSON (or `[DONE]`).
    InvalidJson,
    /// A JSON string is not valid UTF-8.
    InvalidUtf8,
    /// JSON nested deeper than the parser follows (64 levels).
    TooDeep,
    /// Valid JSON of a shape no chat chunk has: a data payload that is not
    /// an object, a non-integer tool-call `index`, `arguments` that are not
    /// a string.
    Unexpected,
}

impl StreamError {
    /// A short text for the user.
    pub fn message(&self) -> &'static str {
        match self {
            StreamError::Truncated => "the response stream was cut off before it finished",
            StreamError::ServerError => "the server reported an error",
            StreamError::TokenTooLong => {
                "a field of the response is longer than PKG_AGENT_STREAM_LINE_BUFSZ"
            }
            StreamError::TooManyToolCalls => "the response asks for too many tool calls",
            StreamError::OutOfMemory => "out of memory while reading the response",
            StreamError::InvalidJson => "the server sent malformed JSON",
            StreamError::InvalidUtf8 => "the server sent text that is not valid UTF-8",
            StreamError::TooDeep => "the server sent JSON nested too deeply",
            StreamError::Unexpected => "the server sent a chunk of an unexpected shape",
        }
    }
}

impl core::fmt::Display for StreamError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.message())
    }
}

/// Receives text as it streams in. Each call gets a non-empty piece of valid
/// UTF-8 that never splits a character (a character cut by a network read is
/// held back until its last byte arrives), and only text that is also kept
/// (see the caps above). Both methods default to doing nothing.
pub trait StreamSink {
    /// A piece of the answer (`delta.content`).
    fn content(&mut self, text: &str) {
        let _ = text;
    }
    /// A piece of reasoning (`delta.reasoning` / `delta.reasoning_content`).
    fn reasoning(&mut self, text: &str) {
        let _ = text;
    }
}

/// The sink that ignores everything.
impl StreamSink for () {}

/// How the internal layers stop a feed: the end marker, or a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stop {
    Done,
    Fail(StreamError),
}

impl From<StreamError> for Stop {
    fn from(e: StreamError) -> Self {
        Stop::Fail(e)
    }
}

/// Append without the abort that `push_str` would risk on allocation failure.
pub(crate) fn append(buf: &mut String, text: &str) -> Result<(), StreamError> {
    crate::base::fallible::push_str(buf, text).map_err(|_| StreamError::OutOfMemory)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Streaming,
    Done,
    Failed(StreamError),
}

/// One response being read. See the [module documentation](self).
pub struct ChatStream {
    sse: Sse,
    json: Tokenizer,
    chat: Chat,
    status: Status,
    #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
    proto: Proto,
}

/// The SSE layer's view of the JSON and chat layers during one call.
struct Pipe<'a, S: ?Sized> {
    json: &'a mut Tokenizer,
    chat: &'a mut Chat,
    sink: &'a mut S,
}

impl<S: StreamSink + ?Sized> Events for Pipe<'_, S> {
    fn data_line(&mut self) -> Result<(), Stop> {
        if self.chat.data_line() {
            self.data(b"\n")
        } else {
            Ok(())
        }
    }

    fn data(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        let mut sem = Sem {
            chat: &mut *self.chat,
            sink: &mut *self.sink,
        };
        if !sem.chat.ev_error {
            return self.json.feed(bytes, &mut sem);
        }
        // An error event's data may be JSON or plain text: keep both views,
        // and let nothing but memory stop the event early.
        sem.chat.capture_raw(bytes)?;
        if sem.chat.error_event_json_ok() {
            match self.json.feed(bytes, &mut sem) {
                Ok(()) => {}
                Err(Stop::Fail(StreamError::OutOfMemory)) => {
                    return Err(Stop::Fail(StreamError::OutOfMemory))
                }
                Err(_) => sem.chat.error_event_json_failed(),
            }
        }
        Ok(())
    }

    fn error_event(&mut self) {
        self.chat.ev_error = true;
    }

    fn dispatch(&mut self) -> Result<(), Stop> {
        let error_event = self.chat.ev_error;
        let mut sem = Sem {
            chat: &mut *self.chat,
            sink: &mut *self.sink,
        };
        let ended = self.json.end_event(&mut sem);
        if error_event {
            self.chat.error_event_message()?;
            self.chat.end_event();
            return Err(Stop::Fail(StreamError::ServerError));
        }
        self.chat.end_event();
        ended
    }
}

impl ChatStream {
    /// A parser for one response.
    pub fn new(caps: Caps) -> Self {
        ChatStream {
            sse: Sse::new(),
            json: Tokenizer::new(),
            chat: Chat::new(caps),
            status: Status::Streaming,
            #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
            proto: Proto::OpenAi,
        }
    }

    /// A parser for one response in `format`.
    #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
    pub fn with_format(caps: Caps, format: Format) -> Self {
        let mut stream = ChatStream::new(caps);
        stream.proto = match format {
            Format::OpenAi => Proto::OpenAi,
            #[cfg(feature = "provider-anthropic")]
            Format::Anthropic => Proto::Anthropic(anthropic::State::new()),
            #[cfg(feature = "provider-ollama")]
            Format::Ollama => Proto::Ollama(ndjson::State::new()),
        };
        stream
    }

    /// A parser for one response in `format` (only OpenAI's is built in).
    #[cfg(not(any(feature = "provider-anthropic", feature = "provider-ollama")))]
    #[inline(always)]
    pub fn with_format(caps: Caps, format: Format) -> Self {
        let Format::OpenAi = format;
        ChatStream::new(caps)
    }

    /// The format this stream reads.
    pub fn format(&self) -> Format {
        #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
        match self.proto {
            Proto::OpenAi => Format::OpenAi,
            #[cfg(feature = "provider-anthropic")]
            Proto::Anthropic(_) => Format::Anthropic,
            #[cfg(feature = "provider-ollama")]
            Proto::Ollama(_) => Format::Ollama,
        }
        #[cfg(not(any(feature = "provider-anthropic", feature = "provider-ollama")))]
        Format::OpenAi
    }

    /// The signature of the response's thinking block (Anthropic), empty
    /// when there was none. The next request must send it back with the
    /// thinking text when the answer called tools.
    #[cfg(feature = "provider-anthropic")]
    pub fn thinking_signature(&self) -> &str {
        match &self.proto {
            Proto::Anthropic(st) => &st.signature,
            _ => "",
        }
    }

    /// The caps this stream was made with.
    pub fn caps(&self) -> &Caps {
        &self.chat.caps
    }

    /// Read the next piece of the body. Text reaches `sink` as it arrives.
    pub fn feed<S: StreamSink + ?Sized>(
        &mut self,
        bytes: &[u8],
        sink: &mut S,
    ) -> Result<Progress, StreamError> {
        match self.status {
            Status::Done => return Ok(Progress::Done),
            Status::Failed(e) => return Err(e),
            Status::Streaming => {}
        }
        #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
        if let Some(result) = self.feed_other(bytes, sink) {
            return self.settle(result).map(|()| match self.status {
                Status::Done => Progress::Done,
                _ => Progress::More,
            });
        }
        let mut pipe = Pipe {
            json: &mut self.json,
            chat: &mut self.chat,
            sink,
        };
        let result = self.sse.feed(bytes, &mut pipe);
        self.settle(result).map(|()| match self.status {
            Status::Done => Progress::Done,
            _ => Progress::More,
        })
    }

    /// The connection closed. `Ok` when the response is complete: `[DONE]`
    /// arrived, or the last event ended cleanly and a `finish_reason` came.
    pub fn finish<S: StreamSink + ?Sized>(&mut self, sink: &mut S) -> Result<(), StreamError> {
        match self.status {
            Status::Done => return Ok(()),
            Status::Failed(e) => return Err(e),
            Status::Streaming => {}
        }
        #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
        let other = self.close_other(sink);
        #[cfg(not(any(feature = "provider-anthropic", feature = "provider-ollama")))]
        let other = None;
        let result = match other {
            Some(result) => result,
            None => {
                let mut pipe = Pipe {
                    json: &mut self.json,
                    chat: &mut self.chat,
                    sink,
                };
                Self::close(&mut self.sse, &mut pipe)
            }
        };
        self.settle(result)?;
        if self.status == Status::Streaming {
            if self.chat.finish_reason.is_empty() {
                self.status = Status::Failed(StreamError::Truncated);
                return Err(StreamError::Truncated);
            }
            self.settle(Err(Stop::Done))?;
        }
        Ok(())
    }

    fn close<S: StreamSink + ?Sized>(sse: &mut Sse, pipe: &mut Pipe<'_, S>) -> Result<(), Stop> {
        sse.end_of_stream(pipe)?;
        // Cut inside a value: whatever it held is lost, even when a
        // finish_reason came before it. (An error event is reported as the
        // server's error, whole or not.)
        if !pipe.chat.ev_error && !pipe.json.is_idle() {
            return Err(Stop::Fail(StreamError::Truncated));
        }
        pipe.dispatch()
    }

    /// A feed in a format other than OpenAI's; `None` for OpenAI's.
    #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
    fn feed_other<S: StreamSink + ?Sized>(
        &mut self,
        bytes: &[u8],
        sink: &mut S,
    ) -> Option<Result<(), Stop>> {
        match &mut self.proto {
            Proto::OpenAi => None,
            #[cfg(feature = "provider-anthropic")]
            Proto::Anthropic(st) => {
                let mut pipe = anthropic::Pipe {
                    json: &mut self.json,
                    chat: &mut self.chat,
                    st,
                    sink,
                };
                Some(self.sse.feed(bytes, &mut pipe))
            }
            #[cfg(feature = "provider-ollama")]
            Proto::Ollama(st) => {
                let mut sem = ndjson::Sem {
                    chat: &mut self.chat,
                    st,
                    sink,
                };
                Some(self.json.feed(bytes, &mut sem))
            }
        }
    }

    /// The connection closed, in a format other than OpenAI's.
    #[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
    fn close_other<S: StreamSink + ?Sized>(&mut self, sink: &mut S) -> Option<Result<(), Stop>> {
        match &mut self.proto {
            Proto::OpenAi => None,
            #[cfg(feature = "provider-anthropic")]
            Proto::Anthropic(st) => {
                let mut pipe = anthropic::Pipe {
                    json: &mut self.json,
                    chat: &mut self.chat,
                    st,
                    sink,
                };
                let result = self.sse.end_of_stream(&mut pipe).and_then(|()| {
                    if !pipe.chat.ev_error && !pipe.json.is_idle() {
                        return Err(Stop::Fail(StreamError::Truncated));
                    }
                    Events::dispatch(&mut pipe)
                });
                Some(result)
            }
            #[cfg(feature = "provider-ollama")]
            Proto::Ollama(st) => {
                if !self.json.is_idle() {
                    return Some(Err(Stop::Fail(StreamError::Truncated)));
                }
                let mut sem = ndjson::Sem {
                    chat: &mut self.chat,
                    st,
                    sink,
                };
                Some(self.json.end_event(&mut sem))
            }
        }
    }

    /// Record how a feed ended; on the end marker, complete the tool calls.
    fn settle(&mut self, result: Result<(), Stop>) -> Result<(), StreamError> {
        let failure = match result {
            Ok(()) => return Ok(()),
            Err(Stop::Done) => match self.chat.calls.complete() {
                Ok(()) => {
                    self.status = Status::Done;
                    return Ok(());
                }
                Err(e) => e,
            },
            Err(Stop::Fail(e)) => e,
        };
        self.status = Status::Failed(failure);
        Err(failure)
    }

    /// The response is complete (`[DONE]`, or a clean close).
    pub fn is_done(&self) -> bool {
        self.status == Status::Done
    }

    /// The error the stream failed with, if it did.
    pub fn error(&self) -> Option<StreamError> {
        match self.status {
            Status::Failed(e) => Some(e),
            _ => None,
        }
    }

    /// The answer so far.
    pub fn content(&self) -> &str {
        &self.chat.content
    }

    /// The reasoning so far.
    pub fn reasoning(&self) -> &str {
        &self.chat.reasoning
    }

    /// Content arrived beyond [`Caps::max_content`] and was dropped.
    pub fn content_truncated(&self) -> bool {
        self.chat.content_truncated
    }

    /// Reasoning arrived beyond [`Caps::max_reasoning`] and was dropped.
    pub fn reasoning_truncated(&self) -> bool {
        self.chat.reasoning_truncated
    }

    /// The latest `finish_reason` that arrived.
    pub fn finish_reason(&self) -> Option<&str> {
        let reason = self.chat.finish_reason.as_str();
        (!reason.is_empty()).then_some(reason)
    }

    /// The tool calls, once the response is complete (empty before, and
    /// after a failure: partial calls must never run).
    pub fn tool_calls(&self) -> &[ToolCall] {
        match self.status {
            Status::Done => self.chat.calls.list(),
            _ => &[],
        }
    }

    /// For a failed stream, what to tell the user: the server's message for
    /// [`StreamError::ServerError`] (or a fallback when it sent none), the
    /// error's own [`message`](StreamError::message) otherwise.
    pub fn error_message(&self) -> Option<&str> {
        match self.status {
            Status::Failed(StreamError::ServerError) if !self.chat.error_message.is_empty() => {
                Some(&self.chat.error_message)
            }
            Status::Failed(e) => Some(e.message()),
            _ => None,
        }
    }
}

/// Is `text` exactly one JSON object (whitespace around it allowed)? Checked
/// by the stream's tokenizer, which keeps no more than its own state: the
/// structure, numbers and literals are checked; string text only for its
/// end.
#[cfg(any(feature = "provider-anthropic", feature = "provider-ollama"))]
pub fn is_json_object(text: &[u8]) -> bool {
    use tokenizer::{Handler, Scalar};
    /// Counts the top-level values; declines every one, so nothing inside
    /// is reported.
    struct Count {
        objects: u32,
        others: u32,
    }
    impl Handler for Count {
        fn begin(&mut self, object: bool) -> Result<bool, Stop> {
            if object {
                self.objects = self.objects.saturating_add(1);
            } else {
                self.others = self.others.saturating_add(1);
            }
            Ok(false)
        }
        fn end(&mut self) -> Result<(), Stop> {
            Ok(())
        }
        fn key(&mut self, _: Option<&[u8]>) -> Result<bool, Stop> {
            Ok(false)
        }
        fn str_begin(&mut self) -> Result<bool, Stop> {
            self.others = self.others.saturating_add(1);
            Ok(false)
        }
        fn str_chunk(&mut self, _: &str) -> Result<(), Stop> {
            Ok(())
        }
        fn str_end(&mut self) -> Result<(), Stop> {
            Ok(())
        }
        fn scalar(&mut self, _: Scalar) -> Result<(), Stop> {
            self.others = self.others.saturating_add(1);
            Ok(())
        }
    }
    let mut count = Count {
        objects: 0,
        others: 0,
    };
    let mut tokenizer = Tokenizer::new();
    tokenizer.feed(text, &mut count).is_ok()
        && tokenizer.end_event(&mut count).is_ok()
        && count.objects == 1
        && count.others == 0
}
