//! Pure stream logic: the body of an OpenAI-compatible chat-completions
//! response (`"stream": true`), read incrementally. No FFI, `no_std` +
//! `alloc`, no panics on any input, and every allocation fallible.
//!
//! # Use
//!
//! ```
//! use rtt_agent::stream::{Caps, ChatStream, Progress, StreamSink};
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

mod chunk;
mod json;
mod sse;
mod tool_call;

pub use tool_call::ToolCall;

use alloc::string::String;
use chunk::{Chat, Sem};
use json::Tokenizer;
use sse::{Events, Sse};

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
    crate::fallible::push_str(buf, text).map_err(|_| StreamError::OutOfMemory)
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
        let mut pipe = Pipe {
            json: &mut self.json,
            chat: &mut self.chat,
            sink,
        };
        let result = Self::close(&mut self.sse, &mut pipe);
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
