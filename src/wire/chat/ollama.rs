//! Ollama's native chat request (`POST …/api/chat`), written from the
//! OpenAI-shaped context.
//!
//! `{"model","messages":[…],"tools":[…],"stream":true,"options":{"num_predict"}}`:
//! - `system` and `user` messages: `role` and `content` (a string; content
//!   parts as their `text` parts joined by `\n`);
//! - `assistant` messages: `content`, `thinking` (the kept
//!   `reasoning_content`) and `tool_calls` as
//!   `[{"function":{"name","arguments":{…}}}]`: the arguments string's JSON
//!   object (`{}` when it holds none), not a string;
//! - `tool` messages: `content` and `tool_name`, the name of the call it
//!   answers (looked up by `tool_call_id` in the latest assistant message);
//! - `tools` in the OpenAI shape Ollama takes, the package's schema types
//!   mapped as for OpenAI;
//! - `max_tokens` as `options.num_predict`.

use super::common::*;
use super::request::{write_value, ChatRequest};
use crate::base::json_writer::{write_integer, write_string, ByteSink, WriteError};
use crate::cjson::json;
use crate::cjson::sys::*;
use core::ptr;

/// # Safety
/// `req`'s trees are NULL or live cJSON trees not modified during the call.
pub unsafe fn write_body(req: &ChatRequest<'_>, out: &mut dyn ByteSink) -> Result<(), WriteError> {
    out.put(b"{\"model\":")?;
    write_string(req.model.to_bytes(), out)?;
    out.put(b",\"messages\":[")?;
    let mut first = true;
    let mut last_assistant: *const cJSON = ptr::null();
    // SAFETY: `messages` is NULL or live, unchanged during the call (contract).
    for msg in unsafe { json::children(req.messages) } {
        if !first {
            out.put(b",")?;
        }
        first = false;
        // SAFETY: `msg` is a live element of the array.
        let role = unsafe { str_of(msg, c"role") }.unwrap_or(b"user");
        out.put(b"{\"role\":")?;
        write_string(role, out)?;
        out.put(b",\"content\":")?;
        // SAFETY: `msg` is live; its content NULL or live.
        unsafe { write_text_of(json::get(msg, c"content"), out)? };
        match role {
            b"assistant" => {
                last_assistant = msg;
                // SAFETY: `msg` is live.
                unsafe { write_assistant_extras(msg, out)? };
            }
            b"tool" => {
                // SAFETY: `msg` and `last_assistant` (NULL or an earlier
                // element) are live.
                if let Some(name) = unsafe { tool_name(last_assistant, msg) } {
                    out.put(b",\"tool_name\":")?;
                    write_string(name, out)?;
                }
            }
            _ => {}
        }
        out.put(b"}")?;
    }
    out.put(b"]")?;
    // SAFETY: `tools` is NULL or live (contract).
    if unsafe { json::is_array(req.tools) && !(*req.tools).child.is_null() } {
        out.put(b",\"tools\":")?;
        // SAFETY: a non-NULL live array.
        unsafe { write_value(req.tools, true, 0, out)? };
    }
    out.put(b",\"stream\":true,\"options\":{\"num_predict\":")?;
    write_integer(req.max_tokens, out)?;
    out.put(b"}}")
}

/// `thinking` and `tool_calls` of an assistant message.
///
/// # Safety
/// `msg` is live and unchanged during the call.
unsafe fn write_assistant_extras(
    msg: *const cJSON,
    out: &mut dyn ByteSink,
) -> Result<(), WriteError> {
    // SAFETY: `msg` is live (contract).
    if let Some(r) = unsafe { str_of(msg, c"reasoning_content") }.filter(|r| !r.is_empty()) {
        out.put(b",\"thinking\":")?;
        write_string(r, out)?;
    }
    // SAFETY: `msg` is live; `tool_calls` NULL or live.
    let calls = unsafe { json::get(msg, c"tool_calls") };
    // SAFETY: as above.
    if unsafe { json::children(calls) }.next().is_none() {
        return Ok(());
    }
    out.put(b",\"tool_calls\":[")?;
    let mut first = true;
    // SAFETY: a live array.
    for call in unsafe { json::children(calls) } {
        if !first {
            out.put(b",")?;
        }
        first = false;
        // SAFETY: `call` is live; `function` NULL or live.
        let (name, args) = unsafe {
            let function = json::get(call, c"function");
            (
                str_of(function, c"name").unwrap_or(b""),
                str_of(function, c"arguments").unwrap_or(b""),
            )
        };
        out.put(b"{\"function\":{\"name\":")?;
        write_string(name, out)?;
        out.put(b",\"arguments\":")?;
        write_arguments(args, out)?;
        out.put(b"}}")?;
    }
    out.put(b"]")
}

/// The name of the call a tool message answers.
///
/// # Safety
/// `assistant` is NULL or live; `tool` is live; both outlive `'a`.
unsafe fn tool_name<'a>(assistant: *const cJSON, tool: *const cJSON) -> Option<&'a [u8]> {
    // SAFETY: `tool` is live (contract).
    let id = unsafe { str_of(tool, c"tool_call_id") }?;
    // SAFETY: `assistant` is NULL or live; its calls NULL or live.
    for call in unsafe { json::children(json::get(assistant, c"tool_calls")) } {
        // SAFETY: `call` is live.
        if unsafe { str_of(call, c"id") } == Some(id) {
            // SAFETY: `call` is live; `function` NULL or live.
            return unsafe { str_of(json::get(call, c"function"), c"name") };
        }
    }
    None
}
