//! The Anthropic Messages request (`POST …/v1/messages`), written from the
//! OpenAI-shaped context.
//!
//! `{"model","max_tokens","stream":true,"system":[…],"messages":[…],"tools":[…]}`:
//! - `system` messages (all of them, in order; empty ones left out) become
//!   `system` text blocks;
//! - `user` messages keep their `content` (a string; content parts become
//!   `text` blocks, other parts are left out);
//! - an `assistant` message becomes a list of blocks: a `thinking` block when
//!   it kept its reasoning (`reasoning_content`) and the thinking block's
//!   signature (`x_rtt_thinking_signature`, see below), a `text` block for
//!   non-empty content, and one `tool_use` block per tool call (`id`,
//!   `function.name`, and `input`: the arguments string's JSON object, `{}`
//!   when it holds none). An assistant message with none of these is left
//!   out (Anthropic rejects empty content);
//! - consecutive `tool` messages (the results of one round) become one
//!   `user` message of `tool_result` blocks (`tool_use_id`, `content`);
//! - `tools` entries `{type:"function",function:{name,description,parameters}}`
//!   become `{name,description,input_schema}` (with the package's schema
//!   types mapped as for OpenAI; an empty object schema when there is none).
//!
//! The signature: Anthropic signs each thinking block and requires it back,
//! unchanged, in the assistant turn that called tools. The stream reader
//! keeps it ([`crate::wire::stream::ChatStream::thinking_signature`]); `chat()`
//! puts it on the first tool call of the response as
//! `x_rtt_thinking_signature`, and the context's `append_assistant_message`
//! moves it onto the assistant message under the same name, next to
//! `reasoning_content`. The OpenAI writer leaves that member out
//! ([`super::request::PRIVATE_KEYS`]).

use super::common::*;
use super::request::ChatRequest;
use crate::base::json_writer::{write_integer, write_string, ByteSink, WriteError};
use crate::cjson::json;
use crate::cjson::sys::*;
use core::ffi::CStr;

/// The assistant message's member that carries the thinking signature.
pub const SIGNATURE_KEY: &CStr = c"x_rtt_thinking_signature";

/// `anthropic-version`, the API version the request and the stream follow.
pub const API_VERSION: &CStr = c"2023-06-01";

/// # Safety
/// `req`'s trees are NULL or live cJSON trees not modified during the call.
pub unsafe fn write_body(req: &ChatRequest<'_>, out: &mut dyn ByteSink) -> Result<(), WriteError> {
    out.put(b"{\"model\":")?;
    write_string(req.model.to_bytes(), out)?;
    out.put(b",\"max_tokens\":")?;
    write_integer(req.max_tokens, out)?;
    out.put(b",\"stream\":true")?;
    // SAFETY: `messages` is NULL or live (contract).
    let messages = unsafe { json::children(req.messages) };
    let mut system = false;
    // SAFETY: as above: the iterator's container is alive and unchanged.
    for msg in unsafe { json::children(req.messages) } {
        // SAFETY: `msg` is a live element of the array.
        if unsafe { str_of(msg, c"role") } != Some(b"system") {
            continue;
        }
        // An empty text block is refused by the API: an empty prompt is
        // no prompt.
        // SAFETY: `msg` is live.
        if unsafe { str_of(msg, c"content") } == Some(b"") {
            continue;
        }
        out.put(if system { b"," } else { b",\"system\":[" })?;
        system = true;
        out.put(b"{\"type\":\"text\",\"text\":")?;
        // SAFETY: `msg` is live; its content NULL or live.
        unsafe { write_text_of(json::get(msg, c"content"), out)? };
        out.put(b"}")?;
    }
    if system {
        out.put(b"]")?;
    }
    out.put(b",\"messages\":[")?;
    let mut first = true;
    // Inside a user message of tool results.
    let mut results_open = false;
    for msg in messages {
        // SAFETY: `msg` is a live element of the array.
        let role = unsafe { str_of(msg, c"role") }.unwrap_or(b"");
        if role == b"system" {
            continue;
        }
        if role == b"tool" {
            if !results_open {
                if !first {
                    out.put(b",")?;
                }
                first = false;
                out.put(b"{\"role\":\"user\",\"content\":[")?;
                results_open = true;
            } else {
                out.put(b",")?;
            }
            out.put(b"{\"type\":\"tool_result\",\"tool_use_id\":")?;
            // SAFETY: `msg` is live.
            let id = unsafe { str_of(msg, c"tool_call_id") }.unwrap_or(b"");
            write_string(id, out)?;
            out.put(b",\"content\":")?;
            // SAFETY: `msg` is live; its content NULL or live.
            unsafe { write_text_of(json::get(msg, c"content"), out)? };
            out.put(b"}")?;
            continue;
        }
        if results_open {
            out.put(b"]}")?;
            results_open = false;
        }
        if role == b"assistant" {
            // SAFETY: `msg` is live.
            if !unsafe { assistant_has_blocks(msg) } {
                continue;
            }
            if !first {
                out.put(b",")?;
            }
            first = false;
            // SAFETY: `msg` is live.
            unsafe { write_assistant(msg, out)? };
            continue;
        }
        if !first {
            out.put(b",")?;
        }
        first = false;
        out.put(b"{\"role\":\"user\",\"content\":")?;
        // SAFETY: `msg` is live; its content NULL or live.
        unsafe { write_user_content(json::get(msg, c"content"), out)? };
        out.put(b"}")?;
    }
    if results_open {
        out.put(b"]}")?;
    }
    out.put(b"]")?;
    // SAFETY: `tools` is NULL or live (contract).
    if unsafe { json::is_array(req.tools) && !(*req.tools).child.is_null() } {
        out.put(b",\"tools\":[")?;
        let mut first = true;
        // SAFETY: a live array (contract).
        for tool in unsafe { json::children(req.tools) } {
            // SAFETY: `tool` is live; a tool without `function` is taken
            // to be the function object itself.
            let function = unsafe {
                let f = json::get(tool, c"function");
                if f.is_null() {
                    tool
                } else {
                    f
                }
            };
            if !first {
                out.put(b",")?;
            }
            first = false;
            out.put(b"{\"name\":")?;
            // SAFETY: `function` is live.
            write_string(unsafe { str_of(function, c"name") }.unwrap_or(b""), out)?;
            // SAFETY: `function` is live.
            if let Some(d) = unsafe { str_of(function, c"description") } {
                out.put(b",\"description\":")?;
                write_string(d, out)?;
            }
            out.put(b",\"input_schema\":")?;
            // SAFETY: `function` is live; its parameters NULL or live.
            unsafe { write_schema(json::get(function, c"parameters"), out)? };
            out.put(b"}")?;
        }
        out.put(b"]")?;
    }
    out.put(b"}")
}

/// A user message's content: a string as it is; content parts as blocks
/// (`text` parts only).
///
/// # Safety
/// `content` is NULL or live.
unsafe fn write_user_content(
    content: *const cJSON,
    out: &mut dyn ByteSink,
) -> Result<(), WriteError> {
    // SAFETY: NULL or live (contract).
    if unsafe { type_of(content) } != cJSON_Array {
        // SAFETY: as above.
        return unsafe { write_text_of(content, out) };
    }
    out.put(b"[")?;
    let mut first = true;
    // SAFETY: a live array (contract).
    for part in unsafe { json::children(content) } {
        // SAFETY: `part` is live.
        let Some(text) = (unsafe { str_of(part, c"text") }) else {
            continue;
        };
        if !first {
            out.put(b",")?;
        }
        first = false;
        out.put(b"{\"type\":\"text\",\"text\":")?;
        write_string(text, out)?;
        out.put(b"}")?;
    }
    out.put(b"]")
}

/// The signature and the reasoning it signs, when the message kept both.
///
/// # Safety
/// `msg` is live and outlives `'a`.
unsafe fn thinking<'a>(msg: *const cJSON) -> Option<(&'a [u8], &'a [u8])> {
    // SAFETY: `msg` is live (contract).
    let signature = unsafe { str_of(msg, SIGNATURE_KEY) }.filter(|s| !s.is_empty())?;
    // SAFETY: as above.
    let text = unsafe { str_of(msg, c"reasoning_content") }.filter(|s| !s.is_empty())?;
    Some((text, signature))
}

/// # Safety
/// `msg` is live.
unsafe fn content_text<'a>(msg: *const cJSON) -> &'a [u8] {
    // SAFETY: `msg` is live (contract).
    unsafe { str_of(msg, c"content") }.unwrap_or(b"")
}

/// # Safety
/// `msg` is live.
unsafe fn assistant_has_blocks(msg: *const cJSON) -> bool {
    // SAFETY: `msg` is live (contract); its `tool_calls` NULL or live.
    unsafe {
        !content_text(msg).is_empty()
            || thinking(msg).is_some()
            || json::children(json::get(msg, c"tool_calls"))
                .next()
                .is_some()
    }
}

/// # Safety
/// `msg` is live and unchanged during the call.
unsafe fn write_assistant(msg: *const cJSON, out: &mut dyn ByteSink) -> Result<(), WriteError> {
    out.put(b"{\"role\":\"assistant\",\"content\":[")?;
    let mut first = true;
    let mut sep = |out: &mut dyn ByteSink| {
        let s: &[u8] = if first { b"" } else { b"," };
        first = false;
        out.put(s)
    };
    // SAFETY: `msg` is live (contract).
    if let Some((text, signature)) = unsafe { thinking(msg) } {
        sep(out)?;
        out.put(b"{\"type\":\"thinking\",\"thinking\":")?;
        write_string(text, out)?;
        out.put(b",\"signature\":")?;
        write_string(signature, out)?;
        out.put(b"}")?;
    }
    // SAFETY: `msg` is live.
    let text = unsafe { content_text(msg) };
    if !text.is_empty() {
        sep(out)?;
        out.put(b"{\"type\":\"text\",\"text\":")?;
        write_string(text, out)?;
        out.put(b"}")?;
    }
    // SAFETY: `msg` is live; `tool_calls` NULL or live and unchanged.
    for call in unsafe { json::children(json::get(msg, c"tool_calls")) } {
        // SAFETY: `call` is live; `function` NULL or live.
        let (id, name, args) = unsafe {
            let function = json::get(call, c"function");
            (
                str_of(call, c"id").unwrap_or(b""),
                str_of(function, c"name").unwrap_or(b""),
                str_of(function, c"arguments").unwrap_or(b""),
            )
        };
        sep(out)?;
        out.put(b"{\"type\":\"tool_use\",\"id\":")?;
        write_string(id, out)?;
        out.put(b",\"name\":")?;
        write_string(name, out)?;
        out.put(b",\"input\":")?;
        write_arguments(args, out)?;
        out.put(b"}")?;
    }
    out.put(b"]}")
}
