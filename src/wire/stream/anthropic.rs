//! The meaning of an Anthropic Messages stream (`"stream": true` on
//! `/v1/messages`): SSE events whose data is one JSON object each.
//!
//! What is read, by path (the event's `event:` line is not needed: every
//! data object names its type, and the paths below do not overlap):
//! - `content_block.text` and `delta.text` (`text_delta`): the answer;
//! - `content_block.thinking` and `delta.thinking` (`thinking_delta`): the
//!   reasoning; `delta.signature` (`signature_delta`): the thinking block's
//!   signature, kept for the assistant message (see [`State::signature`]);
//! - `content_block` with `type: "tool_use"`: a tool call (`id`, `name`) at
//!   the event's `index`; `delta.partial_json` (`input_json_delta`): a piece
//!   of the arguments of the call at the event's `index`, joined in order
//!   (pieces for another block, a server tool's, are dropped);
//! - `delta.stop_reason` (`message_delta`): the finish reason, mapped to the
//!   OpenAI names the loop and C callers know (`end_turn` and
//!   `stop_sequence` → `stop`, `tool_use` → `tool_calls`, `max_tokens` →
//!   `length`; others as they are);
//! - `type: "message_stop"`: the end of the response ([`Stop::Done`]);
//! - `error` (an object with `message`), or any `event: error`: the server's
//!   error ([`StreamError::ServerError`]).
//!
//! Everything else (`message_start`, `usage`, `ping`, `content_block_stop`,
//! a tool block's empty `input`) is skipped by the tokenizer. A block is
//! taken as a tool call only when its `type` says `tool_use` (server tools
//! and others are not the client's to run), whatever order the keys come in:
//! the block's members are gathered in a [`Fragment`] and applied when the
//! event's object ends, as the OpenAI reader does with its fragments.

use super::chunk::{push_token, Chat};
use super::sse::Events;
use super::tokenizer::{Handler, Scalar};
use super::tool_call::Fragment;
use super::{Stop, StreamError, StreamSink};
use alloc::string::String;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Other,
    Type,
    Index,
    ContentBlock,
    Delta,
    Text,
    Thinking,
    Signature,
    PartialJson,
    StopReason,
    Id,
    Name,
    Error,
    Message,
}

impl Key {
    fn of(key: Option<&[u8]>) -> Key {
        // The keys of every event first (see `lookup`).
        const KEYS: &[(&[u8], Key)] = &[
            (b"type", Key::Type),
            (b"index", Key::Index),
            (b"delta", Key::Delta),
            (b"text", Key::Text),
            (b"partial_json", Key::PartialJson),
            (b"thinking", Key::Thinking),
            (b"content_block", Key::ContentBlock),
            (b"signature", Key::Signature),
            (b"stop_reason", Key::StopReason),
            (b"id", Key::Id),
            (b"name", Key::Name),
            (b"error", Key::Error),
            (b"message", Key::Message),
        ];
        super::tokenizer::lookup(key, KEYS).unwrap_or(Key::Other)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    Top,
    Root,
    Block,
    Delta,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dest {
    None,
    Content,
    Reasoning,
    Signature,
    Args,
    Id,
    Name,
    /// `content_block.type`.
    BlockType,
    /// The event object's own `type`.
    EventType,
    StopReason,
    ErrorMessage,
}

/// The event type that ends the response.
const MESSAGE_STOP: &[u8] = b"message_stop";
/// The longest event type kept (`content_block_delta` is 19 bytes).
const TYPE_MAX: usize = 24;

/// What the Anthropic reader keeps beside the shared [`Chat`] results.
pub(crate) struct State {
    frame: Frame,
    key: Key,
    dest: Dest,
    /// The event's `index` (the content block it is about).
    index: Option<u32>,
    /// The event carried a `content_block` / `delta.partial_json`.
    block: bool,
    partial: bool,
    frag: Fragment,
    event_type: [u8; TYPE_MAX],
    event_type_len: u8,
    /// The thinking block's signature.
    pub(crate) signature: String,
}

impl State {
    pub(crate) fn new() -> Self {
        State {
            frame: Frame::Top,
            key: Key::Other,
            dest: Dest::None,
            index: None,
            block: false,
            partial: false,
            frag: Fragment::default(),
            event_type: [0; TYPE_MAX],
            event_type_len: 0,
            signature: String::new(),
        }
    }

    fn start_event(&mut self) {
        self.index = None;
        self.block = false;
        self.partial = false;
        self.frag.reset(0);
        self.event_type_len = 0;
    }

    fn event_type(&self) -> &[u8] {
        self.event_type
            .get(..usize::from(self.event_type_len))
            .unwrap_or_default()
    }

    pub(crate) fn end_event(&mut self) {
        self.frame = Frame::Top;
        self.key = Key::Other;
        self.dest = Dest::None;
    }
}

/// The OpenAI name of an Anthropic `stop_reason`.
pub(crate) fn finish_reason(stop_reason: &str) -> &str {
    match stop_reason {
        "end_turn" | "stop_sequence" => "stop",
        "tool_use" => "tool_calls",
        "max_tokens" => "length",
        other => other,
    }
}

/// The reader during one call: shared results, own state, the sink.
pub(crate) struct Sem<'a, S: ?Sized> {
    pub(crate) chat: &'a mut Chat,
    pub(crate) st: &'a mut State,
    pub(crate) sink: &'a mut S,
}

impl<S: StreamSink + ?Sized> Sem<'_, S> {
    /// The event object ended: apply what it said about its block.
    fn event_done(&mut self) -> Result<(), Stop> {
        if self.event_type_is(MESSAGE_STOP) {
            return Err(Stop::Done);
        }
        let st = &mut *self.st;
        let caps = self.chat.caps;
        if st.block {
            if st.frag.kind.as_str() == "tool_use" {
                st.frag.kind.clear();
                st.frag.args.clear();
                st.frag.index = st.index;
                self.chat.calls.apply(&mut st.frag, &caps)?;
            }
        } else if st.partial {
            let index = st.index.ok_or(Stop::Fail(StreamError::Unexpected))?;
            // The input of a block that is not the client's tool call (a
            // server tool's, run by the server): not for the loop.
            if !self.chat.calls.has_index(index) {
                st.frag.args.clear();
                return Ok(());
            }
            st.frag.index = Some(index);
            st.frag.id.clear();
            st.frag.name.clear();
            st.frag.kind.clear();
            self.chat.calls.apply(&mut st.frag, &caps)?;
        }
        Ok(())
    }

    fn event_type_is(&self, name: &[u8]) -> bool {
        self.st.event_type() == name
    }
}

impl<S: StreamSink + ?Sized> Handler for Sem<'_, S> {
    fn begin(&mut self, object: bool) -> Result<bool, Stop> {
        let st = &mut *self.st;
        let next = match (st.frame, st.key, object) {
            (Frame::Top, _, true) => {
                st.start_event();
                Frame::Root
            }
            (Frame::Top, _, false) => return Err(Stop::Fail(StreamError::Unexpected)),
            (Frame::Root, Key::ContentBlock, true) => {
                st.block = true;
                Frame::Block
            }
            (Frame::Root, Key::Delta, true) => Frame::Delta,
            (Frame::Root, Key::Error, true) => {
                self.chat.error_message.clear();
                self.chat.error_cut = false;
                Frame::Error
            }
            _ => return Ok(false),
        };
        st.frame = next;
        st.key = Key::Other;
        Ok(true)
    }

    fn end(&mut self) -> Result<(), Stop> {
        self.st.frame = match self.st.frame {
            Frame::Top => return Err(Stop::Fail(StreamError::InvalidJson)),
            Frame::Root => {
                self.st.frame = Frame::Top;
                return self.event_done();
            }
            Frame::Block | Frame::Delta => Frame::Root,
            Frame::Error => return Err(Stop::Fail(StreamError::ServerError)),
        };
        Ok(())
    }

    fn key(&mut self, key: Option<&[u8]>) -> Result<bool, Stop> {
        let st = &mut *self.st;
        st.key = Key::of(key);
        Ok(match st.frame {
            Frame::Root => matches!(
                st.key,
                Key::Type | Key::Index | Key::ContentBlock | Key::Delta | Key::Error
            ),
            Frame::Block => matches!(
                st.key,
                Key::Type | Key::Text | Key::Thinking | Key::Id | Key::Name
            ),
            Frame::Delta => matches!(
                st.key,
                Key::Text | Key::Thinking | Key::Signature | Key::PartialJson | Key::StopReason
            ),
            Frame::Error => st.key == Key::Message,
            Frame::Top => false,
        })
    }

    fn str_begin(&mut self) -> Result<bool, Stop> {
        let st = &mut *self.st;
        let dest = match (st.frame, st.key) {
            (Frame::Top, _) => return Err(Stop::Fail(StreamError::Unexpected)),
            (Frame::Root, Key::Type) => {
                st.event_type_len = 0;
                Dest::EventType
            }
            (Frame::Root, Key::Index) => return Err(Stop::Fail(StreamError::Unexpected)),
            (Frame::Block | Frame::Delta, Key::Text) => Dest::Content,
            (Frame::Block | Frame::Delta, Key::Thinking) => Dest::Reasoning,
            (Frame::Block, Key::Type) => {
                st.frag.kind.clear();
                Dest::BlockType
            }
            (Frame::Block, Key::Id) => {
                st.frag.id.clear();
                Dest::Id
            }
            (Frame::Block, Key::Name) => {
                st.frag.name.clear();
                Dest::Name
            }
            (Frame::Delta, Key::Signature) => Dest::Signature,
            (Frame::Delta, Key::PartialJson) => {
                st.partial = true;
                Dest::Args
            }
            (Frame::Delta, Key::StopReason) => {
                self.chat.finish_new.clear();
                Dest::StopReason
            }
            (Frame::Error, Key::Message) => {
                self.chat.error_message.clear();
                self.chat.error_cut = false;
                Dest::ErrorMessage
            }
            _ => Dest::None,
        };
        st.dest = dest;
        Ok(dest != Dest::None)
    }

    fn str_chunk(&mut self, text: &str) -> Result<(), Stop> {
        let c = &mut *self.chat;
        let st = &mut *self.st;
        let max_token = c.caps.max_token;
        match st.dest {
            Dest::None => {}
            Dest::Content => c.push_content(text, &mut *self.sink)?,
            Dest::Reasoning => {
                c.push_reasoning(text, &mut *self.sink)?;
            }
            // A signature is opaque: cut, it is worthless, so it is held
            // to the reasoning cap and fails the request beyond it.
            Dest::Signature => push_token(&mut st.signature, text, c.caps.max_reasoning)?,
            Dest::Args => st.frag.push_args(text, c.caps.max_tool_args)?,
            Dest::Id => push_token(&mut st.frag.id, text, max_token)?,
            Dest::Name => push_token(&mut st.frag.name, text, max_token)?,
            Dest::BlockType => push_token(&mut st.frag.kind, text, max_token)?,
            Dest::EventType => {
                let start = usize::from(st.event_type_len);
                let end = start.saturating_add(text.len());
                match st.event_type.get_mut(start..end) {
                    Some(dst) => {
                        crate::base::text::copy_prefix(dst, text.as_bytes());
                        st.event_type_len = u8::try_from(end).unwrap_or(u8::MAX);
                    }
                    // No type this long is read: keep it unrecognisable.
                    None => st.event_type_len = 0,
                }
            }
            Dest::StopReason => push_token(&mut c.finish_new, text, max_token)?,
            Dest::ErrorMessage => c.push_message(text)?,
        }
        Ok(())
    }

    fn str_end(&mut self) -> Result<(), Stop> {
        let c = &mut *self.chat;
        if core::mem::replace(&mut self.st.dest, Dest::None) == Dest::StopReason
            && !c.finish_new.is_empty()
        {
            let mapped = finish_reason(&c.finish_new);
            if mapped.len() != c.finish_new.len() {
                c.finish_reason.clear();
                super::append(&mut c.finish_reason, mapped)?;
            } else {
                core::mem::swap(&mut c.finish_reason, &mut c.finish_new);
            }
        }
        Ok(())
    }

    fn scalar(&mut self, value: Scalar) -> Result<(), Stop> {
        let st = &mut *self.st;
        match (st.frame, st.key, value) {
            (Frame::Top, _, _) => Err(Stop::Fail(StreamError::Unexpected)),
            (Frame::Root, Key::Index, Scalar::Number(Some(n))) => {
                st.index = Some(n);
                Ok(())
            }
            (Frame::Root, Key::Index, Scalar::Null) => Ok(()),
            (Frame::Root, Key::Index, _) => Err(Stop::Fail(StreamError::Unexpected)),
            (Frame::Root, Key::Error, Scalar::Null | Scalar::Bool(false)) => Ok(()),
            (Frame::Root, Key::Error, _) => Err(Stop::Fail(StreamError::ServerError)),
            _ => Ok(()),
        }
    }
}

/// The SSE layer's view of the Anthropic reader during one call.
pub(crate) struct Pipe<'a, S: ?Sized> {
    pub(crate) json: &'a mut super::tokenizer::Tokenizer,
    pub(crate) chat: &'a mut Chat,
    pub(crate) st: &'a mut State,
    pub(crate) sink: &'a mut S,
}

impl<S: StreamSink + ?Sized> Pipe<'_, S> {
    fn sem(&mut self) -> (&mut super::tokenizer::Tokenizer, Sem<'_, S>) {
        (
            &mut *self.json,
            Sem {
                chat: &mut *self.chat,
                st: &mut *self.st,
                sink: &mut *self.sink,
            },
        )
    }
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
        if !self.chat.ev_error {
            let (json, mut sem) = self.sem();
            return json.feed(bytes, &mut sem);
        }
        // An error event's data: JSON, or taken as text (as for OpenAI).
        self.chat.capture_raw(bytes)?;
        if self.chat.error_event_json_ok() {
            let (json, mut sem) = self.sem();
            match json.feed(bytes, &mut sem) {
                Ok(()) => {}
                Err(Stop::Fail(StreamError::OutOfMemory)) => {
                    return Err(Stop::Fail(StreamError::OutOfMemory))
                }
                Err(_) => self.chat.error_event_json_failed(),
            }
        }
        Ok(())
    }

    fn error_event(&mut self) {
        self.chat.ev_error = true;
    }

    fn dispatch(&mut self) -> Result<(), Stop> {
        let error_event = self.chat.ev_error;
        let (json, mut sem) = self.sem();
        let ended = json.end_event(&mut sem);
        self.st.end_event();
        if error_event {
            self.chat.error_event_message()?;
            self.chat.end_event();
            return Err(Stop::Fail(StreamError::ServerError));
        }
        self.chat.end_event();
        ended
    }
}
