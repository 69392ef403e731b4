//! The meaning of a chat-completions chunk: which JSON values are the
//! answer, the reasoning, the finish reason, tool-call fragments or an error.
//!
//! The paths read are fixed (`choices[0].delta.content`, ...), so instead of
//! a stack the position is one [`Frame`] (the parent of each frame is
//! known); values off those paths are declined and the tokenizer skips them.
//! Only `choices[0]` (by position: the request never asks for more than one
//! choice) is read.

use super::tokenizer::{Handler, Scalar};
use super::tool_call::{Calls, Fragment};
use super::{append, Caps, Stop, StreamError, StreamSink};
use alloc::string::String;
use alloc::vec::Vec;

/// The keys the chat layer reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Other,
    Choices,
    Delta,
    Content,
    Reasoning,
    ReasoningContent,
    ToolCalls,
    Index,
    Id,
    Type,
    Function,
    Name,
    Arguments,
    FinishReason,
    Error,
    Message,
}

impl Key {
    /// The key as read inside `frame`: the few keys read there (a key that
    /// is not among them is not read). By frame first, so each frame
    /// compares only its own names, and with `==` against each literal, not
    /// slice patterns: a pattern compares byte by byte (about 6 bytes of
    /// Cortex-M code per character; the 15 names cost 950 bytes that way),
    /// `==` is a length check and one fixed-size compare (400 bytes less,
    /// and fewer instructions per key).
    fn of(frame: Frame, key: &[u8]) -> Key {
        macro_rules! pick {
            ($($name:literal => $k:expr),+ $(,)?) => {
                $(if key == $name { $k } else)+ { Key::Other }
            };
        }
        match frame {
            Frame::Root => pick!(b"choices" => Key::Choices, b"error" => Key::Error,
                                 b"message" => Key::Message),
            Frame::Choice => pick!(b"delta" => Key::Delta, b"finish_reason" => Key::FinishReason),
            Frame::Delta => pick!(b"content" => Key::Content, b"tool_calls" => Key::ToolCalls,
                                  b"reasoning_content" => Key::ReasoningContent,
                                  b"reasoning" => Key::Reasoning),
            Frame::Call => pick!(b"index" => Key::Index, b"function" => Key::Function,
                                 b"id" => Key::Id, b"type" => Key::Type),
            Frame::Function => pick!(b"arguments" => Key::Arguments, b"name" => Key::Name),
            Frame::Error => pick!(b"message" => Key::Message),
            Frame::Top | Frame::Choices | Frame::ToolCalls => Key::Other,
        }
    }
}

/// The container being read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    /// Outside any value.
    Top,
    /// The chunk object.
    Root,
    Choices,
    Choice,
    Delta,
    ToolCalls,
    Call,
    Function,
    /// The chunk's `error` object.
    Error,
}

/// What the value about to start means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Ignore,
    Top,
    Choices,
    Choice,
    Delta,
    Content,
    Reasoning(Key),
    ToolCalls,
    Call(u32),
    Function,
    Index,
    Id,
    Type,
    Name,
    Arguments,
    FinishReason,
    Error,
    ErrorMessage,
}

/// Where the open string's text goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dest {
    None,
    Content,
    Reasoning(Key),
    Args,
    Id,
    Type,
    Name,
    FinishReason,
    ErrorMessage,
    /// `"error": "text"`: the message, and the request fails at its end.
    ErrorText,
}

/// All that the stream has produced, and where the parser is in a chunk.
pub(crate) struct Chat {
    pub(crate) caps: Caps,
    frame: Frame,
    key: Key,
    choices_pos: u32,
    calls_pos: u32,
    dest: Dest,
    /// The reasoning key that carried text in this delta: a server that
    /// sends both `reasoning` and `reasoning_content` sends the same text.
    delta_reasoning: Option<Key>,
    pub(crate) content: String,
    pub(crate) content_truncated: bool,
    pub(crate) reasoning: String,
    pub(crate) reasoning_truncated: bool,
    /// The latest non-empty `finish_reason`.
    pub(crate) finish_reason: String,
    /// A `finish_reason` being read; it replaces the recorded one only when
    /// non-empty (some servers send `""` where they mean null).
    pub(crate) finish_new: String,
    pub(crate) error_message: String,
    pub(crate) error_cut: bool,
    frag: Fragment,
    pub(crate) calls: Calls,
    // The SSE event being read.
    /// A data line was seen.
    ev_data: bool,
    /// `event: error`: its data is an error payload.
    pub(crate) ev_error: bool,
    /// An error event's data did not parse as JSON; it is taken as text.
    ev_json_failed: bool,
    /// An error event's raw data, up to the token cap.
    ev_raw: Vec<u8>,
    ev_raw_cut: bool,
}

/// Append `text` to `buf` while it fits in `cap` bytes; what does not fit is
/// dropped (cut at a character boundary) and `truncated` set, after which
/// nothing more is appended. Returns the part kept.
pub(crate) fn push_capped<'t>(
    buf: &mut String,
    text: &'t str,
    cap: usize,
    truncated: &mut bool,
) -> Result<&'t str, StreamError> {
    if *truncated {
        return Ok("");
    }
    let room = cap.saturating_sub(buf.len());
    let kept = if text.len() <= room {
        text
    } else {
        *truncated = true;
        let mut end = room;
        while end > 0 && !text.is_char_boundary(end) {
            end -= 1;
        }
        text.get(..end).unwrap_or_default()
    };
    append(buf, kept)?;
    Ok(kept)
}

/// Append a short value that the caps say may not exceed `cap` bytes.
pub(crate) fn push_token(buf: &mut String, text: &str, cap: usize) -> Result<(), StreamError> {
    if buf.len().saturating_add(text.len()) > cap {
        return Err(StreamError::TokenTooLong);
    }
    append(buf, text)
}

impl Chat {
    /// Answer text as it streams: kept up to the content cap, and what is
    /// kept shown to `sink` (every wire format reads it the same way).
    pub(crate) fn push_content<S: StreamSink + ?Sized>(
        &mut self,
        text: &str,
        sink: &mut S,
    ) -> Result<(), StreamError> {
        let kept = push_capped(
            &mut self.content,
            text,
            self.caps.max_content,
            &mut self.content_truncated,
        )?;
        if !kept.is_empty() {
            sink.content(kept);
        }
        Ok(())
    }

    /// Reasoning text as it streams, as [`Chat::push_content`].
    pub(crate) fn push_reasoning<S: StreamSink + ?Sized>(
        &mut self,
        text: &str,
        sink: &mut S,
    ) -> Result<(), StreamError> {
        let kept = push_capped(
            &mut self.reasoning,
            text,
            self.caps.max_reasoning,
            &mut self.reasoning_truncated,
        )?;
        if !kept.is_empty() {
            sink.reasoning(kept);
        }
        Ok(())
    }

    pub(crate) fn new(caps: Caps) -> Self {
        Chat {
            caps,
            frame: Frame::Top,
            key: Key::Other,
            choices_pos: 0,
            calls_pos: 0,
            dest: Dest::None,
            delta_reasoning: None,
            content: String::new(),
            content_truncated: false,
            reasoning: String::new(),
            reasoning_truncated: false,
            finish_reason: String::new(),
            finish_new: String::new(),
            error_message: String::new(),
            error_cut: false,
            frag: Fragment::default(),
            calls: Calls::default(),
            ev_data: false,
            ev_error: false,
            ev_json_failed: false,
            ev_raw: Vec::new(),
            ev_raw_cut: false,
        }
    }

    /// An error message is for people: past the token cap it is cut (at a
    /// character boundary) and visibly marked, rather than failing the
    /// request with a different error than the server's.
    pub(crate) fn push_message(&mut self, text: &str) -> Result<(), StreamError> {
        let cap = self.caps.max_token;
        let mut cut = false;
        push_capped(&mut self.error_message, text, cap, &mut cut)?;
        if cut && !self.error_cut {
            self.error_cut = true;
            append(&mut self.error_message, "\u{2026}")?;
        }
        Ok(())
    }

    /// The meaning of the value that starts now; in an array this also
    /// counts the element.
    fn slot(&mut self) -> Slot {
        match self.frame {
            Frame::Top => Slot::Top,
            Frame::Root => match self.key {
                Key::Choices if !self.ev_error => Slot::Choices,
                Key::Error => Slot::Error,
                Key::Message if self.ev_error => Slot::ErrorMessage,
                _ => Slot::Ignore,
            },
            Frame::Choices => {
                let pos = self.choices_pos;
                self.choices_pos = pos.saturating_add(1);
                if pos == 0 {
                    Slot::Choice
                } else {
                    Slot::Ignore
                }
            }
            Frame::Choice => match self.key {
                Key::Delta => Slot::Delta,
                Key::FinishReason => Slot::FinishReason,
                _ => Slot::Ignore,
            },
            Frame::Delta => match self.key {
                Key::Content => Slot::Content,
                Key::Reasoning | Key::ReasoningContent => Slot::Reasoning(self.key),
                Key::ToolCalls => Slot::ToolCalls,
                _ => Slot::Ignore,
            },
            Frame::ToolCalls => {
                let pos = self.calls_pos;
                self.calls_pos = pos.saturating_add(1);
                Slot::Call(pos)
            }
            Frame::Call => match self.key {
                Key::Index => Slot::Index,
                Key::Id => Slot::Id,
                Key::Type => Slot::Type,
                Key::Function => Slot::Function,
                _ => Slot::Ignore,
            },
            Frame::Function => match self.key {
                Key::Name => Slot::Name,
                Key::Arguments => Slot::Arguments,
                _ => Slot::Ignore,
            },
            Frame::Error => match self.key {
                Key::Message => Slot::ErrorMessage,
                _ => Slot::Ignore,
            },
        }
    }

    /// An event's data line starts; several join with `\n`.
    pub(crate) fn data_line(&mut self) -> bool {
        core::mem::replace(&mut self.ev_data, true)
    }

    /// Keep an error event's raw data (up to the token cap) in case it is
    /// not JSON.
    pub(crate) fn capture_raw(&mut self, bytes: &[u8]) -> Result<(), StreamError> {
        let room = self.caps.max_token.saturating_sub(self.ev_raw.len());
        let take = bytes.get(..room).unwrap_or(bytes);
        if take.len() < bytes.len() {
            self.ev_raw_cut = true;
        }
        crate::base::fallible::extend(&mut self.ev_raw, take).map_err(|_| StreamError::OutOfMemory)
    }

    pub(crate) fn error_event_json_failed(&mut self) {
        self.ev_json_failed = true;
    }

    pub(crate) fn error_event_json_ok(&self) -> bool {
        !self.ev_json_failed
    }

    /// The event is over: forget where in it the parser was.
    pub(crate) fn end_event(&mut self) {
        self.frame = Frame::Top;
        self.dest = Dest::None;
        self.key = Key::Other;
        self.ev_data = false;
        self.ev_error = false;
        self.ev_json_failed = false;
        self.ev_raw.clear();
        self.ev_raw_cut = false;
    }

    /// An error event ends: when its data held no message in the JSON
    /// shapes read, the data itself is the message.
    pub(crate) fn error_event_message(&mut self) -> Result<(), StreamError> {
        if !self.error_message.is_empty() {
            return Ok(());
        }
        let raw = core::mem::take(&mut self.ev_raw);
        // Cut by the cap inside a character, or not text at all: the valid
        // part. ASCII blanks trimmed (str::trim would link Unicode's table).
        let text = crate::base::text::utf8_prefix(&raw);
        let result = self.push_message(text.trim_ascii());
        if result.is_ok() && self.ev_raw_cut && !self.error_cut && !self.error_message.is_empty() {
            self.error_cut = true;
            append(&mut self.error_message, "\u{2026}")?;
        }
        self.ev_raw = raw;
        result
    }
}

/// The chat state seen as a JSON handler during one `feed`.
pub(crate) struct Sem<'a, S: ?Sized> {
    pub(crate) chat: &'a mut Chat,
    pub(crate) sink: &'a mut S,
}

impl<S: StreamSink + ?Sized> Handler for Sem<'_, S> {
    fn begin(&mut self, object: bool) -> Result<bool, Stop> {
        let c = &mut *self.chat;
        let next = match (c.slot(), object) {
            (Slot::Top, true) => Frame::Root,
            (Slot::Top, false) => return Err(Stop::Fail(StreamError::Unexpected)),
            (Slot::Choices, false) => {
                c.choices_pos = 0;
                Frame::Choices
            }
            (Slot::Choice, true) => Frame::Choice,
            (Slot::Delta, true) => {
                c.delta_reasoning = None;
                Frame::Delta
            }
            (Slot::ToolCalls, false) => {
                c.calls_pos = 0;
                Frame::ToolCalls
            }
            (Slot::Call(pos), true) => {
                c.frag.reset(pos);
                Frame::Call
            }
            (Slot::Function, true) => Frame::Function,
            // Arguments as a JSON object are not the OpenAI shape; taking
            // them for "no arguments" would run the tool with the wrong ones.
            (Slot::Arguments, _) => return Err(Stop::Fail(StreamError::Unexpected)),
            (Slot::Error, true) => {
                c.error_message.clear();
                c.error_cut = false;
                Frame::Error
            }
            _ => return Ok(false),
        };
        c.frame = next;
        c.key = Key::Other;
        Ok(true)
    }

    fn end(&mut self) -> Result<(), Stop> {
        let c = &mut *self.chat;
        c.frame = match c.frame {
            Frame::Top => return Err(Stop::Fail(StreamError::InvalidJson)),
            Frame::Root => Frame::Top,
            Frame::Choices => Frame::Root,
            Frame::Choice => Frame::Choices,
            Frame::Delta => Frame::Choice,
            Frame::ToolCalls => Frame::Delta,
            Frame::Call => {
                c.calls.apply(&mut c.frag, &c.caps)?;
                Frame::ToolCalls
            }
            Frame::Function => Frame::Call,
            Frame::Error => return Err(Stop::Fail(StreamError::ServerError)),
        };
        Ok(())
    }

    fn key(&mut self, key: Option<&[u8]>) -> Result<bool, Stop> {
        let c = &mut *self.chat;
        c.key = key.map_or(Key::Other, |k| Key::of(c.frame, k));
        // Whether the member is read at all: everything else is skipped by
        // the tokenizer without calling back.
        Ok(match c.key {
            Key::Other => false,
            // An error event's message at the top, else the chunk's choices.
            Key::Choices => !c.ev_error,
            Key::Message if c.frame == Frame::Root => c.ev_error,
            _ => true,
        })
    }

    fn str_begin(&mut self) -> Result<bool, Stop> {
        let c = &mut *self.chat;
        let dest = match c.slot() {
            Slot::Top | Slot::Index => return Err(Stop::Fail(StreamError::Unexpected)),
            Slot::Content => Dest::Content,
            Slot::Reasoning(k) => match c.delta_reasoning {
                Some(seen) if seen != k => Dest::None,
                _ => Dest::Reasoning(k),
            },
            Slot::Id => {
                c.frag.id.clear();
                Dest::Id
            }
            Slot::Type => {
                c.frag.kind.clear();
                Dest::Type
            }
            Slot::Name => {
                c.frag.name.clear();
                Dest::Name
            }
            Slot::Arguments => Dest::Args,
            Slot::FinishReason => {
                c.finish_new.clear();
                Dest::FinishReason
            }
            Slot::Error => {
                c.error_message.clear();
                c.error_cut = false;
                Dest::ErrorText
            }
            Slot::ErrorMessage => {
                c.error_message.clear();
                c.error_cut = false;
                Dest::ErrorMessage
            }
            _ => Dest::None,
        };
        c.dest = dest;
        Ok(dest != Dest::None)
    }

    fn str_chunk(&mut self, text: &str) -> Result<(), Stop> {
        let c = &mut *self.chat;
        let max_token = c.caps.max_token;
        match c.dest {
            Dest::None => {}
            Dest::Content => c.push_content(text, &mut *self.sink)?,
            Dest::Reasoning(k) => {
                c.delta_reasoning = Some(k);
                c.push_reasoning(text, &mut *self.sink)?;
            }
            Dest::Args => c.frag.push_args(text, c.caps.max_tool_args)?,
            Dest::Id => push_token(&mut c.frag.id, text, max_token)?,
            Dest::Type => push_token(&mut c.frag.kind, text, max_token)?,
            Dest::Name => push_token(&mut c.frag.name, text, max_token)?,
            Dest::FinishReason => push_token(&mut c.finish_new, text, max_token)?,
            Dest::ErrorMessage | Dest::ErrorText => c.push_message(text)?,
        }
        Ok(())
    }

    fn str_end(&mut self) -> Result<(), Stop> {
        let c = &mut *self.chat;
        let dest = core::mem::replace(&mut c.dest, Dest::None);
        match dest {
            Dest::FinishReason if !c.finish_new.is_empty() => {
                core::mem::swap(&mut c.finish_reason, &mut c.finish_new);
                Ok(())
            }
            Dest::ErrorText => Err(Stop::Fail(StreamError::ServerError)),
            _ => Ok(()),
        }
    }

    fn scalar(&mut self, value: Scalar) -> Result<(), Stop> {
        let c = &mut *self.chat;
        match (c.slot(), value) {
            (Slot::Top, _) => Err(Stop::Fail(StreamError::Unexpected)),
            (Slot::Index, Scalar::Number(Some(n))) => {
                c.frag.index = Some(n);
                Ok(())
            }
            (Slot::Index | Slot::Arguments, Scalar::Null) => Ok(()),
            (Slot::Index | Slot::Arguments, _) => Err(Stop::Fail(StreamError::Unexpected)),
            (Slot::Error, Scalar::Null | Scalar::Bool(false)) => Ok(()),
            (Slot::Error, _) => Err(Stop::Fail(StreamError::ServerError)),
            _ => Ok(()),
        }
    }
}
