//! The request body, written straight from the caller's cJSON trees.
//!
//! The C package deep-copied the context and the tools, then printed the
//! copy into one string (tripling peak memory). Here the body is produced by
//! walking the trees twice: once into a [`ByteCounter`] for `Content-Length`,
//! once into the connection. Nothing is copied or duplicated, and the
//! caller's trees are never modified.
//!
//! While the `tools` array is written, schema `"type"` values that are not
//! JSON Schema types (the tool guide registers `"double"`, and suggests
//! `"true"`/`"false"` for booleans) are mapped, because strict servers reject
//! the whole request over them.

#![allow(non_upper_case_globals)]

use crate::base::json_writer::{
    whole_number, write_integer, write_string, ByteCounter, ByteSink, WriteError,
};
use crate::cjson::sys::*;
use core::ffi::CStr;

/// Deepest nesting written; chat messages and tool schemas need far less,
/// and the walk is recursive on a small thread stack.
pub const MAX_DEPTH: usize = 24;

/// What goes into one chat-completions request.
pub struct ChatRequest<'a> {
    pub model: &'a CStr,
    /// The context array (borrowed).
    pub messages: *const cJSON,
    /// The tools array, or NULL (borrowed). An empty array is left out.
    pub tools: *const cJSON,
    pub max_tokens: i64,
}

/// Write `{"model","messages","tools","max_tokens","stream":true}`.
///
/// # Safety
/// `messages` and `tools` are NULL or live cJSON trees not modified during
/// the call.
pub unsafe fn write_body(req: &ChatRequest<'_>, out: &mut dyn ByteSink) -> Result<(), WriteError> {
    out.put(b"{\"model\":")?;
    write_string(req.model.to_bytes(), out)?;
    out.put(b",\"messages\":")?;
    if req.messages.is_null() {
        out.put(b"[]")?;
    } else {
        // SAFETY: `messages` is non-NULL, and a live tree left unmodified during
        // the call (caller's contract).
        unsafe { write_value(req.messages, false, 0, out)? };
    }
    // SAFETY: `tools` is non-NULL here (short-circuit) and live (caller's contract).
    if !req.tools.is_null() && !unsafe { (*req.tools).child.is_null() } {
        out.put(b",\"tools\":")?;
        // SAFETY: `tools` is non-NULL, and a live tree left unmodified during the
        // call (caller's contract).
        unsafe { write_value(req.tools, true, 0, out)? };
    }
    out.put(b",\"max_tokens\":")?;
    write_integer(req.max_tokens, out)?;
    out.put(b",\"stream\":true}")
}

/// The exact length [`write_body`] will produce.
///
/// # Safety
/// As for [`write_body`].
pub unsafe fn body_length(req: &ChatRequest<'_>) -> Result<usize, WriteError> {
    let mut counter = ByteCounter::default();
    // SAFETY: our caller gives the same guarantees on `req`'s trees that
    // `write_body` needs.
    unsafe { write_body(req, &mut counter)? };
    Ok(counter.0)
}

/// The JSON Schema type for a tool parameter type, when it needs mapping.
pub fn schema_type(declared: &[u8]) -> Option<&'static [u8]> {
    let eq = |s: &[u8]| declared.eq_ignore_ascii_case(s);
    if eq(b"double") || eq(b"float") {
        Some(b"number")
    } else if eq(b"int") {
        Some(b"integer")
    } else if eq(b"bool") || eq(b"true") || eq(b"false") {
        Some(b"boolean")
    } else {
        None
    }
}

/// Members of the context's messages that are the library's own notes and
/// never go to an OpenAI server as they are (the Anthropic thinking block's
/// signature: see `crate::wire::chat::anthropic`).
#[cfg(feature = "provider-anthropic")]
pub const PRIVATE_KEYS: &[&[u8]] = &[b"x_rtt_thinking_signature"];

/// Write `item` as JSON; with `map_types`, schema `"type"` values are
/// mapped (see [`schema_type`]).
///
/// # Safety
/// `item` is non-NULL and a live cJSON tree not modified during the call.
pub unsafe fn write_value(
    item: *const cJSON,
    map_types: bool,
    depth: usize,
    out: &mut dyn ByteSink,
) -> Result<(), WriteError> {
    if depth > MAX_DEPTH {
        return Err(WriteError::TooDeep);
    }
    // SAFETY: `item` is non-NULL, live and not modified while `it` is used
    // (this function's contract).
    let it = unsafe { &*item };
    match it.type_ & 0xFF {
        cJSON_False => out.put(b"false"),
        cJSON_True => out.put(b"true"),
        cJSON_NULL => out.put(b"null"),
        // SAFETY: `item` is a live number item.
        cJSON_Number => unsafe { write_number(item, out) },
        // SAFETY: a live string item marking a file sent inline (the
        // multimodal inline mode); nothing modifies it during the call.
        #[cfg(feature = "multimodal")]
        cJSON_String if it.type_ & super::inline_file::INLINE_FILE != 0 => unsafe {
            super::inline_file::write(it, out)
        },
        // SAFETY: a live string item's `valuestring` is NULL or NUL-terminated,
        // owned by the item, which outlives this call.
        cJSON_String => unsafe { write_cstr(it.valuestring, out) },
        // SAFETY: as for strings, a raw item's `valuestring` is NULL or a
        // NUL-terminated buffer owned by the live item.
        cJSON_Raw => match unsafe { cstr_bytes(it.valuestring) } {
            Some(raw) => out.put(raw),
            None => out.put(b"null"),
        },
        cJSON_Array | cJSON_Object => {
            // One loop for both: an object's members have keys, and its
            // `"type"` values may be mapped.
            let object = it.type_ & 0xFF == cJSON_Object;
            out.put(if object { b"{" } else { b"[" })?;
            let mut child = it.child;
            let mut first = true;
            while !child.is_null() {
                // SAFETY: `child` is a non-NULL live member of the tree and its
                // `string` (the key) NULL or a NUL-terminated buffer it owns.
                let (key, child_type, next) = unsafe {
                    (
                        cstr_bytes((*child).string).unwrap_or(b""),
                        (*child).type_,
                        (*child).next,
                    )
                };
                #[cfg(feature = "provider-anthropic")]
                if object && PRIVATE_KEYS.contains(&key) {
                    child = next;
                    continue;
                }
                if !first {
                    out.put(b",")?;
                }
                first = false;
                let mut mapped = None;
                if object {
                    write_string(key, out)?;
                    out.put(b":")?;
                    if map_types && key == b"type" && child_type & 0xFF == cJSON_String {
                        // SAFETY: `child` is a live string item; its
                        // `valuestring` is NULL or a NUL-terminated buffer it
                        // owns.
                        mapped = unsafe { cstr_bytes((*child).valuestring) }.and_then(schema_type);
                    }
                }
                match mapped {
                    Some(t) => write_string(t, out)?,
                    // SAFETY: `child` is non-NULL and a member of the live tree,
                    // which nothing modifies during the call.
                    None => unsafe { write_value(child, map_types, depth + 1, out)? },
                }
                child = next;
            }
            out.put(if object { b"}" } else { b"]" })
        }
        // An invalid item: cJSON itself prints nothing and fails; send null
        // rather than produce a body that is not JSON.
        _ => out.put(b"null"),
    }
}

/// # Safety
/// `p` is NULL or NUL-terminated and stays valid and unmodified for `'a`.
pub unsafe fn cstr_bytes<'a>(p: *const core::ffi::c_char) -> Option<&'a [u8]> {
    if p.is_null() {
        None
    } else {
        // SAFETY: `p` is non-NULL, NUL-terminated and valid for `'a` (contract).
        Some(unsafe { CStr::from_ptr(p) }.to_bytes())
    }
}

/// # Safety
/// `p` is NULL or NUL-terminated and valid during the call.
unsafe fn write_cstr(
    p: *const core::ffi::c_char,
    out: &mut dyn ByteSink,
) -> Result<(), WriteError> {
    // SAFETY: `p` is NULL or NUL-terminated and valid during the call (contract).
    write_string(unsafe { cstr_bytes(p) }.unwrap_or(b""), out)
}

/// Whole numbers as integers; anything else printed by cJSON itself, so the
/// library carries no float formatting code.
///
/// # Safety
/// `item` is non-NULL and a live cJSON number item.
unsafe fn write_number(item: *const cJSON, out: &mut dyn ByteSink) -> Result<(), WriteError> {
    // SAFETY: `item` is non-NULL and live (contract).
    let v = unsafe { (*item).valuedouble };
    if let Some(n) = whole_number(v) {
        return write_integer(n, out);
    }
    // SAFETY: `item` is a live cJSON item (contract).
    let printed = unsafe { cJSON_PrintUnformatted(item) };
    if printed.is_null() {
        return Err(WriteError::NoMemory);
    }
    // SAFETY: cJSON returned a non-NULL NUL-terminated string that we own until
    // the `cJSON_free` below.
    let r = out.put(unsafe { CStr::from_ptr(printed) }.to_bytes());
    // SAFETY: `printed` came from cJSON's allocator and is freed once, here.
    unsafe { cJSON_free(printed as *mut core::ffi::c_void) };
    r
}
