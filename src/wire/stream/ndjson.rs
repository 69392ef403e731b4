//! The meaning of an Ollama native chat stream (`/api/chat`,
//! `"stream": true`): newline-delimited JSON, one object per line.
//!
//! Lines need no framing of their own: a line end is JSON whitespace, and the
//! tokenizer reads several top-level values one after another, so the body
//! goes to it as it arrives and nothing holds a line. Per object:
//! - `message.content`: the answer; `message.thinking`: the reasoning;
//! - `message.tool_calls[]`: whole calls (`id` when the server sends one,
//!   `function.name`, `function.index`, `function.arguments`). The
//!   arguments are a JSON object: its text, exactly as it arrived, becomes
//!   the call's arguments string (captured raw by the tokenizer, checked as
//!   UTF-8, held to the arguments cap); a string is taken as it is. Every
//!   call is a call of its own, even when two share an index;
//! - `done: true` ends the response ([`Stop::Done`]); `done_reason` is the
//!   finish reason (`stop` when a finished response has none, and
//!   `tool_calls` for a `stop` that comes with calls, as the OpenAI format
//!   says it);
//! - `error` (a string, or an object with `message`): the server's error.

use super::chunk::{push_token, Chat};
use super::tokenizer::{Handler, Scalar};
use super::tool_call::Fragment;
use super::{Stop, StreamError, StreamSink};
use alloc::vec::Vec;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    Other,
    Message,
    Content,
    Thinking,
    ToolCalls,
    Id,
    Function,
    Index,
    Name,
    Arguments,
    Done,
    DoneReason,
    Error,
}

impl Key {
    fn of(key: Option<&[u8]>) -> Key {
        // The keys of every line first (see `lookup`).
        const KEYS: &[(&[u8], Key)] = &[
            (b"message", Key::Message),
            (b"content", Key::Content),
            (b"done", Key::Done),
            (b"thinking", Key::Thinking),
            (b"tool_calls", Key::ToolCalls),
            (b"function", Key::Function),
            (b"name", Key::Name),
            (b"arguments", Key::Arguments),
            (b"id", Key::Id),
            (b"index", Key::Index),
            (b"done_reason", Key::DoneReason),
            (b"error", Key::Error),
        ];
        super::tokenizer::lookup(key, KEYS).unwrap_or(Key::Other)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Frame {
    Top,
    Root,
    Message,
    ToolCalls,
    Call,
    Function,
    Error,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Dest {
    None,
    Content,
    Reasoning,
    Id,
    Name,
    Args,
    DoneReason,
    ErrorMessage,
    /// `"error": "text"`: the request fails at its end.
    ErrorText,
}

/// What the Ollama reader keeps beside the shared [`Chat`] results.
pub(crate) struct State {
    frame: Frame,
    key: Key,
    dest: Dest,
    calls_pos: u32,
    frag: Fragment,
    /// The object said `done: true`.
    done: bool,
    /// Raw arguments being captured (checked as UTF-8 at their end).
    raw: Vec<u8>,
    raw_over: bool,
}

impl State {
    pub(crate) fn new() -> Self {
        State {
            frame: Frame::Top,
            key: Key::Other,
            dest: Dest::None,
            calls_pos: 0,
            frag: Fragment::default(),
            done: false,
            raw: Vec::new(),
            raw_over: false,
        }
    }
}

/// The reader during one call.
pub(crate) struct Sem<'a, S: ?Sized> {
    pub(crate) chat: &'a mut Chat,
    pub(crate) st: &'a mut State,
    pub(crate) sink: &'a mut S,
}

impl<S: StreamSink + ?Sized> Sem<'_, S> {
    /// One line's object ended.
    fn object_done(&mut self) -> Result<(), Stop> {
        if !self.st.done {
            return Ok(());
        }
        let c = &mut *self.chat;
        let reason = if c.finish_reason.is_empty() || c.finish_reason == "stop" {
            if c.calls.list().is_empty() {
                "stop"
            } else {
                "tool_calls"
            }
        } else {
            ""
        };
        if !reason.is_empty() {
            c.finish_reason.clear();
            super::append(&mut c.finish_reason, reason)?;
        }
        Err(Stop::Done)
    }
}

impl<S: StreamSink + ?Sized> Handler for Sem<'_, S> {
    fn begin(&mut self, object: bool) -> Result<bool, Stop> {
        let st = &mut *self.st;
        let next = match (st.frame, st.key, object) {
            (Frame::Top, _, true) => Frame::Root,
            (Frame::Top, _, false) => return Err(Stop::Fail(StreamError::Unexpected)),
            (Frame::Root, Key::Message, true) => Frame::Message,
            (Frame::Root, Key::Error, true) => {
                self.chat.error_message.clear();
                self.chat.error_cut = false;
                Frame::Error
            }
            (Frame::Message, Key::ToolCalls, false) => {
                st.calls_pos = 0;
                Frame::ToolCalls
            }
            (Frame::ToolCalls, _, true) => {
                let pos = st.calls_pos;
                st.calls_pos = pos.saturating_add(1);
                st.frag.reset(pos);
                Frame::Call
            }
            (Frame::Call, Key::Function, true) => Frame::Function,
            (Frame::Function, Key::Arguments, true) => {
                // Declined, and captured raw instead (see `capture`).
                st.raw.clear();
                st.raw_over = false;
                return Ok(false);
            }
            (Frame::Function, Key::Arguments, false) => {
                return Err(Stop::Fail(StreamError::Unexpected))
            }
            _ => return Ok(false),
        };
        st.frame = next;
        st.key = Key::Other;
        Ok(true)
    }

    fn capture(&mut self) -> bool {
        self.st.frame == Frame::Function && self.st.key == Key::Arguments
    }

    fn raw(&mut self, bytes: &[u8]) -> Result<(), Stop> {
        let st = &mut *self.st;
        if st.raw_over {
            return Ok(());
        }
        if st.raw.len().saturating_add(bytes.len()) > self.chat.caps.max_tool_args {
            // Marks the call too long, as for a streamed string.
            st.raw_over = true;
            st.raw = Vec::new();
            st.frag.args_over = true;
            st.frag.args = alloc::string::String::new();
            return Ok(());
        }
        crate::base::fallible::extend(&mut st.raw, bytes).map_err(|_| StreamError::OutOfMemory)?;
        Ok(())
    }

    fn raw_end(&mut self) -> Result<(), Stop> {
        let st = &mut *self.st;
        if st.raw_over {
            return Ok(());
        }
        let text = crate::base::text::utf8(&st.raw).map_err(|_| StreamError::InvalidUtf8)?;
        st.frag.push_args(text, self.chat.caps.max_tool_args)?;
        st.raw.clear();
        Ok(())
    }

    fn end(&mut self) -> Result<(), Stop> {
        let st = &mut *self.st;
        st.frame = match st.frame {
            Frame::Top => return Err(Stop::Fail(StreamError::InvalidJson)),
            Frame::Root => {
                st.frame = Frame::Top;
                return self.object_done();
            }
            Frame::Message => Frame::Root,
            Frame::ToolCalls => Frame::Message,
            Frame::Call => {
                let caps = self.chat.caps;
                self.chat.calls.add_whole(&mut st.frag, &caps)?;
                Frame::ToolCalls
            }
            Frame::Function => Frame::Call,
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
                Key::Message | Key::Done | Key::DoneReason | Key::Error
            ),
            Frame::Message => matches!(st.key, Key::Content | Key::Thinking | Key::ToolCalls),
            Frame::Call => matches!(st.key, Key::Id | Key::Function),
            Frame::Function => matches!(st.key, Key::Index | Key::Name | Key::Arguments),
            Frame::Error => st.key == Key::Message,
            Frame::Top | Frame::ToolCalls => false,
        })
    }

    fn str_begin(&mut self) -> Result<bool, Stop> {
        let st = &mut *self.st;
        let dest = match (st.frame, st.key) {
            (Frame::Top, _) => return Err(Stop::Fail(StreamError::Unexpected)),
            (Frame::Message, Key::Content) => Dest::Content,
            (Frame::Message, Key::Thinking) => Dest::Reasoning,
            (Frame::Call, Key::Id) => {
                st.frag.id.clear();
                Dest::Id
            }
            (Frame::Function, Key::Name) => {
                st.frag.name.clear();
                Dest::Name
            }
            (Frame::Function, Key::Arguments) => Dest::Args,
            (Frame::Function, Key::Index) => return Err(Stop::Fail(StreamError::Unexpected)),
            (Frame::Root, Key::DoneReason) => {
                self.chat.finish_new.clear();
                Dest::DoneReason
            }
            (Frame::Root, Key::Error) => {
                self.chat.error_message.clear();
                self.chat.error_cut = false;
                Dest::ErrorText
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
            Dest::Id => push_token(&mut st.frag.id, text, max_token)?,
            Dest::Name => push_token(&mut st.frag.name, text, max_token)?,
            Dest::Args => st.frag.push_args(text, c.caps.max_tool_args)?,
            Dest::DoneReason => push_token(&mut c.finish_new, text, max_token)?,
            Dest::ErrorMessage | Dest::ErrorText => c.push_message(text)?,
        }
        Ok(())
    }

    fn str_end(&mut self) -> Result<(), Stop> {
        let c = &mut *self.chat;
        match core::mem::replace(&mut self.st.dest, Dest::None) {
            Dest::DoneReason if !c.finish_new.is_empty() => {
                core::mem::swap(&mut c.finish_reason, &mut c.finish_new);
                Ok(())
            }
            Dest::ErrorText => Err(Stop::Fail(StreamError::ServerError)),
            _ => Ok(()),
        }
    }

    fn scalar(&mut self, value: Scalar) -> Result<(), Stop> {
        let st = &mut *self.st;
        match (st.frame, st.key, value) {
            (Frame::Top, _, _) => Err(Stop::Fail(StreamError::Unexpected)),
            (Frame::Root, Key::Done, Scalar::Bool(b)) => {
                st.done = b;
                Ok(())
            }
            (Frame::Function, Key::Index, Scalar::Number(Some(n))) => {
                st.frag.index = Some(n);
                Ok(())
            }
            (Frame::Function, Key::Index | Key::Arguments, Scalar::Null) => Ok(()),
            (Frame::Function, Key::Index | Key::Arguments, _) => {
                Err(Stop::Fail(StreamError::Unexpected))
            }
            (Frame::Root, Key::Error, Scalar::Null | Scalar::Bool(false)) => Ok(()),
            (Frame::Root, Key::Error, _) => Err(Stop::Fail(StreamError::ServerError)),
            _ => Ok(()),
        }
    }
}
