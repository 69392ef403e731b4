//! `context.h`: the conversation, one cJSON array of OpenAI chat messages
//! that stays the single source of truth (C code may read it).
//!
//! Fixes over the C package: the assistant message that carries
//! `tool_calls` exists (the loop appends it before the tool results), keeps
//! the `reasoning_content` it was streamed with, and trimming never leaves a
//! `tool` message without the assistant message that called it.
//!
//! Methods return `RT_EOK`, `-RT_ERROR` for bad arguments, or `-RT_ENOMEM`.

use super::chat::ChatResponse_t;
use super::prompt::get_system_prompt;
use super::utils::context_content;
use crate::abi::messages::Messages_t;
use crate::cjson::json;
use crate::cjson::sys::*;
use crate::ffi_fn;
use crate::rtt::*;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::mem::size_of;
use core::ptr;

pub use super::c_objects::{Context, ContextMethod, Context_t};

fn enomem() -> rt_err_t {
    -rt_enomem()
}

/// A new `{"role": role}` object, or NULL.
///
/// # Safety
/// None beyond Rust's: it only allocates; the caller owns the result.
unsafe fn new_message(role: &CStr) -> *mut cJSON {
    // SAFETY: a cJSON constructor without arguments; NULL-checked.
    let msg = unsafe { cJSON_CreateObject() };
    if !msg.is_null()
        // SAFETY: `msg` is the live object just created; `role` is a C string
        // cJSON copies; `add_to_object` takes over the new string (or NULL).
        && unsafe { json::add_to_object(msg, c"role", cJSON_CreateString(role.as_ptr())) }
            .is_err()
    {
        // SAFETY: `msg` is owned here and not used again.
        unsafe { cJSON_Delete(msg) };
        return ptr::null_mut();
    }
    msg
}

/// Append `msg` (owned) to the context, or free it.
///
/// # Safety
/// `ctx` is a live context whose `message` is a live array; `msg` is NULL or
/// a detached item.
unsafe fn push(ctx: Context_t, msg: *mut cJSON) -> rt_err_t {
    // SAFETY: `ctx` and its array are live and `msg` is NULL or detached
    // (this function's contract); `add_to_array` frees `msg` on failure.
    if unsafe { json::add_to_array((*ctx).message, msg) }.is_err() {
        return enomem();
    }
    rt_eok()
}

/// The role of a message in the array.
///
/// # Safety
/// `msg` is NULL or a live cJSON item that outlives `'a`.
unsafe fn role_of<'a>(msg: *const cJSON) -> &'a [u8] {
    // SAFETY: `msg` is NULL or live for `'a` (this function's contract).
    unsafe { json::get_str(msg, c"role") }.map_or(b"", |r| r.to_bytes())
}

/// Put (or refresh) the system prompt as the first message.
unsafe extern "C" fn build_system_prompt(ctx: Context_t) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        // SAFETY: a method's `ctx` is NULL or a live context from
        // `context_create`; only read after the NULL check.
        if ctx.is_null() || unsafe { (*ctx).message.is_null() } {
            return -rt_error();
        }
        // SAFETY: `ctx` is live and its `message` a non-NULL array it owns.
        let first = unsafe { (*(*ctx).message).child };
        // SAFETY: `first` is non-NULL here, so a live element of that array.
        if !first.is_null() && unsafe { role_of(first) } == b"system" {
            return rt_eok();
        }
        // SAFETY: `new_message` only allocates.
        let msg = unsafe { new_message(c"system") };
        if msg.is_null()
            // SAFETY: `msg` is the live object just made; the prompt is a
            // static C string cJSON copies; the new string is taken over.
            || unsafe {
                json::add_to_object(msg, c"content", cJSON_CreateString(get_system_prompt()))
            }
            .is_err()
        {
            if !msg.is_null() {
                // SAFETY: `msg` is detached, owned here, not used again.
                unsafe { cJSON_Delete(msg) };
            }
            return enomem();
        }
        // Insert at the front: link by hand, as cJSON 1.7.x has no portable
        // "insert at 0" that returns a status.
        // SAFETY: `ctx` is live (checked above).
        let array = unsafe { (*ctx).message };
        // SAFETY: `array` is the context's non-NULL, live array.
        let old_first = unsafe { (*array).child };
        if old_first.is_null() {
            // SAFETY: `ctx` and its array are live; `msg` is detached.
            return unsafe { push(ctx, msg) };
        }
        // SAFETY: `msg` is a detached live item and `old_first` the array's
        // live first element; this relinks them as cJSON's list expects.
        unsafe {
            (*msg).next = old_first;
            (*msg).prev = (*old_first).prev; // the last element, by cJSON's convention
            (*old_first).prev = msg;
            (*array).child = msg;
        }
        rt_eok()
    })
}

/// Append a `user` message whose content is `to_content(messages)` (a plain
/// string for a single text item, see `context_content`).
/// Borrows `messages`.
unsafe extern "C" fn append_user_message(ctx: Context_t, messages: Messages_t) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        // SAFETY: a method's `ctx` is NULL or a live context from
        // `context_create`; only read after the NULL check.
        if ctx.is_null() || unsafe { (*ctx).message.is_null() } {
            return -rt_error();
        }
        // SAFETY: `messages` is NULL or a live `Messages_t` the caller lends.
        let content = unsafe { context_content(messages) };
        if content.is_null() {
            return -rt_error();
        }
        // SAFETY: `new_message` only allocates.
        let msg = unsafe { new_message(c"user") };
        if msg.is_null() {
            // SAFETY: `content` is a new detached tree owned here.
            unsafe { cJSON_Delete(content) };
            return enomem();
        }
        // SAFETY: `msg` is live; `content` is detached and is taken over.
        if unsafe { json::add_to_object(msg, c"content", content) }.is_err() {
            // SAFETY: `msg` is detached, owned here, not used again.
            unsafe { cJSON_Delete(msg) };
            return enomem();
        }
        // SAFETY: `ctx` and its array are live; `msg` is detached.
        unsafe { push(ctx, msg) }
    })
}

/// A copy of one tool call with only the fields a request may carry.
///
/// # Safety
/// `call` is NULL or a live cJSON item, unchanged during the call.
unsafe fn request_tool_call(call: *const cJSON) -> *mut cJSON {
    // SAFETY: `call` is NULL or live (this function's contract).
    let function = unsafe { json::get(call, c"function") };
    // SAFETY: `call` is NULL or live; the string borrowed from it lives until
    // the copies below are made.
    let id = unsafe { json::get_str(call, c"id") };
    // SAFETY: `function` is NULL or a live child of `call`.
    let name = unsafe { json::get_str(function, c"name") };
    let (Some(id), Some(name)) = (id, name) else {
        return ptr::null_mut();
    };
    // SAFETY: `function` is NULL or a live child of `call`.
    let arguments = unsafe { json::get_str(function, c"arguments") }.unwrap_or(c"");
    // SAFETY: cJSON constructors without arguments; both NULL-checked.
    let (out, f) = unsafe { (cJSON_CreateObject(), cJSON_CreateObject()) };
    if out.is_null() || f.is_null() {
        for t in [out, f] {
            if !t.is_null() {
                // SAFETY: `t` is a non-NULL tree created above, owned here.
                unsafe { cJSON_Delete(t) };
            }
        }
        return ptr::null_mut();
    }
    // SAFETY: `out` and `f` are live objects; the strings are NUL-terminated
    // and copied by cJSON; each new item (or NULL) is taken over.
    let ok = unsafe {
        json::add_to_object(out, c"id", cJSON_CreateString(id.as_ptr())).is_ok()
            && json::add_to_object(out, c"type", cJSON_CreateString(c"function".as_ptr())).is_ok()
            && json::add_to_object(f, c"name", cJSON_CreateString(name.as_ptr())).is_ok()
            && json::add_to_object(f, c"arguments", cJSON_CreateString(arguments.as_ptr())).is_ok()
    };
    if !ok {
        // SAFETY: `out` and `f` are separate detached trees owned here.
        unsafe {
            cJSON_Delete(out);
            cJSON_Delete(f);
        }
        return ptr::null_mut();
    }
    // SAFETY: `out` is live; `f` is a detached object taken over.
    if unsafe { json::add_to_object(out, c"function", f) }.is_err() {
        // SAFETY: `out` is owned here, not used again.
        unsafe { cJSON_Delete(out) };
        return ptr::null_mut();
    }
    out
}

/// Append the `assistant` message of a response: its `content`, and when it
/// called tools, `tool_calls` (copies) plus the `reasoning_content` it was
/// streamed with (thinking models reject the next request without it; the
/// option `PKG_AGENT_DROP_REASONING` leaves it out). Borrows `resp`.
unsafe extern "C" fn append_assistant_message(ctx: Context_t, resp: ChatResponse_t) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        // SAFETY: a method's `ctx` is NULL or a live context from
        // `context_create`; only read after the NULL check.
        if ctx.is_null() || unsafe { (*ctx).message.is_null() } || resp.is_null() {
            return -rt_error();
        }
        // SAFETY: `resp` is non-NULL, so a live response from `chat()` the
        // caller lends for this call.
        let r = unsafe { &*resp };
        // SAFETY: `new_message` only allocates.
        let msg = unsafe { new_message(c"assistant") };
        if msg.is_null() {
            return enomem();
        }
        let fail = |msg: *mut cJSON| {
            // SAFETY: every caller passes `msg`, the detached message owned
            // here, and returns right after.
            unsafe { cJSON_Delete(msg) };
            enomem()
        };
        let content = if r.context.is_null() {
            c"".as_ptr()
        } else {
            r.context as *const c_char
        };
        // SAFETY: `msg` is live; `content` is NUL-terminated (the response's
        // string or ""), copied by cJSON; the new string is taken over.
        if unsafe { json::add_to_object(msg, c"content", cJSON_CreateString(content)) }.is_err() {
            return fail(msg);
        }
        let calls = r.tool_call;
        // SAFETY: `calls` is NULL or the response's live array; `child` is
        // read only once it is known to be an array.
        if unsafe { json::is_array(calls) && !(*calls).child.is_null() } {
            // SAFETY: a cJSON constructor without arguments; NULL-checked.
            let copies = unsafe { cJSON_CreateArray() };
            if copies.is_null() {
                return fail(msg);
            }
            // SAFETY: `calls` is live and nobody modifies it meanwhile.
            for call in unsafe { json::children(calls) } {
                // SAFETY: `call` is a live element of `calls`.
                let copy = unsafe { request_tool_call(call) };
                // SAFETY: `copies` is live; `copy` is non-NULL and detached,
                // taken over (freed on failure).
                if copy.is_null() || unsafe { json::add_to_array(copies, copy) }.is_err() {
                    // SAFETY: `copies` is detached, owned here.
                    unsafe { cJSON_Delete(copies) };
                    return fail(msg);
                }
            }
            // SAFETY: `msg` is live; `copies` is detached and taken over.
            if unsafe { json::add_to_object(msg, c"tool_calls", copies) }.is_err() {
                return fail(msg);
            }
            let keep = board().keep_reasoning != 0;
            if keep
                && !r.reasoning.is_null()
                // SAFETY: `reasoning` is non-NULL, a NUL-terminated string
                // the response owns, so its first byte is readable.
                && unsafe { *r.reasoning } != 0
                // SAFETY: `msg` is live; `reasoning` is NUL-terminated and
                // copied; the new string is taken over.
                && unsafe {
                    json::add_to_object(msg, c"reasoning_content", cJSON_CreateString(r.reasoning))
                }
                .is_err()
            {
                return fail(msg);
            }
            // The Anthropic thinking block's signature goes with the
            // reasoning it signs (see `crate::wire::chat::anthropic`).
            #[cfg(feature = "provider-anthropic")]
            if keep {
                let key = crate::wire::chat::anthropic::SIGNATURE_KEY;
                // SAFETY: `calls` is a live array with a first element, which
                // outlives `sig`'s use here.
                let sig = unsafe { json::get_str((*calls).child, key) };
                if let Some(sig) = sig {
                    // SAFETY: `msg` is live; `sig` is NUL-terminated and
                    // copied; the new string is NULL or detached, taken over.
                    let added =
                        unsafe { json::add_to_object(msg, key, cJSON_CreateString(sig.as_ptr())) };
                    if added.is_err() {
                        return fail(msg);
                    }
                }
            }
        }
        // SAFETY: `ctx` and its array are live; `msg` is detached.
        unsafe { push(ctx, msg) }
    })
}

/// Append the `tool` message answering `tool_call_id`, with content
/// `to_content(messages)` (an empty string when there is none). Borrows both.
unsafe extern "C" fn append_tool_message(
    ctx: Context_t,
    tool_call_id: *const c_char,
    messages: Messages_t,
) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        // SAFETY: a method's `ctx` is NULL or a live context from
        // `context_create`; only read after the NULL check.
        if ctx.is_null() || unsafe { (*ctx).message.is_null() } || tool_call_id.is_null() {
            return -rt_error();
        }
        // SAFETY: `new_message` only allocates.
        let msg = unsafe { new_message(c"tool") };
        if msg.is_null() {
            return enomem();
        }
        // SAFETY: `messages` is NULL or a live `Messages_t` the caller lends.
        let mut content = unsafe { context_content(messages) };
        if content.is_null() {
            // SAFETY: "" is a static C string, copied by cJSON.
            content = unsafe { cJSON_CreateString(c"".as_ptr()) };
        }
        // Both adds run whatever the first one did: `content` already
        // exists, and only `add_to_object` takes it over (or frees it), so
        // short-circuiting past the second would leak it.
        // SAFETY: `msg` is live; `tool_call_id` is non-NULL and, per the
        // method's contract, NUL-terminated (copied); the new string is NULL
        // or detached and is taken over.
        let id_added =
            unsafe { json::add_to_object(msg, c"tool_call_id", cJSON_CreateString(tool_call_id)) }
                .is_ok();
        // SAFETY: `msg` is live; `content` is NULL or a detached tree made
        // above, taken over (freed on failure).
        let content_added = unsafe { json::add_to_object(msg, c"content", content) }.is_ok();
        if !id_added || !content_added {
            // SAFETY: `msg` is detached, owned here, not used again.
            unsafe { cJSON_Delete(msg) };
            return enomem();
        }
        // SAFETY: `ctx` and its array are live; `msg` is detached.
        unsafe { push(ctx, msg) }
    })
}

/// Empty the array (the caller rebuilds the system prompt).
unsafe extern "C" fn clear_message(ctx: Context_t) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        // SAFETY: a method's `ctx` is NULL or a live context from
        // `context_create`; only read after the NULL check.
        if ctx.is_null() || unsafe { (*ctx).message.is_null() } {
            return -rt_error();
        }
        // SAFETY: `ctx` is live (checked above).
        let array = unsafe { (*ctx).message };
        // SAFETY: `array` is the context's live array; each deletion removes
        // its first element, so the loop ends when it is empty.
        while unsafe { !(*array).child.is_null() } {
            // SAFETY: `array` is live and has at least one element.
            unsafe { cJSON_DeleteItemFromArray(array, 0) };
        }
        rt_eok()
    })
}

/// Keep the system prompt and the last `keep` messages, moving the cut
/// forward past any `tool` message whose assistant message would be cut
/// away (a request starting its history with a tool result is rejected).
unsafe extern "C" fn trim_context(ctx: Context_t, keep: c_int) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        // SAFETY: a method's `ctx` is NULL or a live context from
        // `context_create`; only read after the NULL check.
        if ctx.is_null() || unsafe { (*ctx).message.is_null() } {
            return -rt_error();
        }
        // SAFETY: `ctx` is live (checked above).
        let array = unsafe { (*ctx).message };
        // SAFETY: `array` is the context's live array.
        let total = unsafe { cJSON_GetArraySize(array) };
        // SAFETY: `array` is live.
        let first = unsafe { (*array).child };
        // SAFETY: `first` is non-NULL here, so a live element of `array`.
        let history_start: c_int = if !first.is_null() && unsafe { role_of(first) } == b"system" {
            1
        } else {
            0
        };
        let history = total - history_start;
        let keep = keep.max(0);
        if history <= keep {
            return rt_eok();
        }
        let mut drop_count = history - keep;
        // Never start with orphaned tool results.
        while drop_count < history {
            // SAFETY: `array` is live; the index is below `total`.
            let next = unsafe { cJSON_GetArrayItem(array, history_start + drop_count) };
            // SAFETY: `next` is NULL or a live element of `array`.
            if unsafe { role_of(next) } != b"tool" {
                break;
            }
            drop_count += 1;
        }
        for _ in 0..drop_count {
            // SAFETY: `array` is live, and since `drop_count <= history` an
            // element exists at `history_start` on every pass.
            unsafe { cJSON_DeleteItemFromArray(array, history_start) };
        }
        rt_eok()
    })
}

/// Create a context: an empty message array, the methods, and the system
/// prompt as its first message. Owned by the caller (free it with
/// `agent_context_destroy`); `RT_NULL` on no memory.
pub fn agent_context_create() -> Context_t {
    // SAFETY: fresh allocations, NULL-checked, released on failure.
    unsafe {
        let ctx = rt_malloc(size_of::<Context>()) as Context_t;
        if ctx.is_null() {
            return ptr::null_mut();
        }
        let array = cJSON_CreateArray();
        if array.is_null() {
            rt_free(ctx as *mut c_void);
            return ptr::null_mut();
        }
        ctx.write(Context {
            message: array,
            build_system_prompt: Some(build_system_prompt),
            append_user_message: Some(append_user_message),
            append_assistant_message: Some(append_assistant_message),
            append_tool_message: Some(append_tool_message),
            clear_message: Some(clear_message),
            trim_context: Some(trim_context),
        });
        if build_system_prompt(ctx) != rt_eok() {
            agent_context_destroy(ctx);
            return ptr::null_mut();
        }
        ctx
    }
}

/// Free the message array and the context. NULL-safe.
pub unsafe fn agent_context_destroy(context: Context_t) {
    if context.is_null() {
        return;
    }
    // SAFETY: the caller gives up a context from agent_context_create.
    unsafe {
        if !(*context).message.is_null() {
            cJSON_Delete((*context).message);
        }
        rt_free(context as *mut c_void);
    }
}
