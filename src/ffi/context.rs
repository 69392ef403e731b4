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
use super::messages::Messages_t;
use super::prompt::get_system_prompt;
use super::utils::to_content;
use crate::cjson_sys::*;
use crate::ffi_fn;
use crate::json;
use crate::rtt::*;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::mem::size_of;
use core::ptr;

pub type ContextMethod = unsafe extern "C" fn(self_: Context_t) -> rt_err_t;

#[repr(C)]
pub struct Context {
    pub message: *mut cJSON,
    pub build_system_prompt: Option<unsafe extern "C" fn(self_: *mut Context) -> rt_err_t>,
    pub append_user_message:
        Option<unsafe extern "C" fn(self_: *mut Context, messages: Messages_t) -> rt_err_t>,
    pub append_assistant_message:
        Option<unsafe extern "C" fn(self_: *mut Context, resp: ChatResponse_t) -> rt_err_t>,
    pub append_tool_message: Option<
        unsafe extern "C" fn(
            self_: *mut Context,
            tool_call_id: *const c_char,
            messages: Messages_t,
        ) -> rt_err_t,
    >,
    pub clear_message: Option<unsafe extern "C" fn(self_: *mut Context) -> rt_err_t>,
    pub trim_context:
        Option<unsafe extern "C" fn(self_: *mut Context, keep_rounds: c_int) -> rt_err_t>,
}
pub type Context_t = *mut Context;

fn enomem() -> rt_err_t {
    -rt_enomem()
}

/// A new `{"role": role}` object, or NULL.
unsafe fn new_message(role: &CStr) -> *mut cJSON {
    let msg = cJSON_CreateObject();
    if !msg.is_null()
        && json::add_to_object(msg, c"role", cJSON_CreateString(role.as_ptr())).is_err()
    {
        cJSON_Delete(msg);
        return ptr::null_mut();
    }
    msg
}

/// Append `msg` (owned) to the context, or free it.
unsafe fn push(ctx: Context_t, msg: *mut cJSON) -> rt_err_t {
    if json::add_to_array((*ctx).message, msg).is_err() {
        return enomem();
    }
    rt_eok()
}

/// The role of a message in the array.
unsafe fn role_of<'a>(msg: *const cJSON) -> &'a [u8] {
    json::get_str(msg, c"role").map_or(b"", |r| r.to_bytes())
}

/// Put (or refresh) the system prompt as the first message.
unsafe extern "C" fn build_system_prompt(ctx: Context_t) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        if ctx.is_null() || (*ctx).message.is_null() {
            return -rt_error();
        }
        let first = (*(*ctx).message).child;
        if !first.is_null() && role_of(first) == b"system" {
            return rt_eok();
        }
        let msg = new_message(c"system");
        if msg.is_null()
            || json::add_to_object(msg, c"content", cJSON_CreateString(get_system_prompt()))
                .is_err()
        {
            if !msg.is_null() {
                cJSON_Delete(msg);
            }
            return enomem();
        }
        // Insert at the front: link by hand, as cJSON 1.7.x has no portable
        // "insert at 0" that returns a status.
        let array = (*ctx).message;
        let old_first = (*array).child;
        if old_first.is_null() {
            return push(ctx, msg);
        }
        (*msg).next = old_first;
        (*msg).prev = (*old_first).prev; // the last element, by cJSON's convention
        (*old_first).prev = msg;
        (*array).child = msg;
        rt_eok()
    })
}

/// Append a `user` message whose content is `to_content(messages)`.
/// Borrows `messages`.
unsafe extern "C" fn append_user_message(ctx: Context_t, messages: Messages_t) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        if ctx.is_null() || (*ctx).message.is_null() {
            return -rt_error();
        }
        let content = to_content(messages);
        if content.is_null() {
            return -rt_error();
        }
        let msg = new_message(c"user");
        if msg.is_null() {
            cJSON_Delete(content);
            return enomem();
        }
        if json::add_to_object(msg, c"content", content).is_err() {
            cJSON_Delete(msg);
            return enomem();
        }
        push(ctx, msg)
    })
}

/// A copy of one tool call with only the fields a request may carry.
unsafe fn request_tool_call(call: *const cJSON) -> *mut cJSON {
    let function = json::get(call, c"function");
    let (Some(id), Some(name)) = (json::get_str(call, c"id"), json::get_str(function, c"name"))
    else {
        return ptr::null_mut();
    };
    let arguments = json::get_str(function, c"arguments").unwrap_or(c"");
    let out = cJSON_CreateObject();
    let f = cJSON_CreateObject();
    if out.is_null() || f.is_null() {
        for t in [out, f] {
            if !t.is_null() {
                cJSON_Delete(t);
            }
        }
        return ptr::null_mut();
    }
    let ok = json::add_to_object(out, c"id", cJSON_CreateString(id.as_ptr())).is_ok()
        && json::add_to_object(out, c"type", cJSON_CreateString(c"function".as_ptr())).is_ok()
        && json::add_to_object(f, c"name", cJSON_CreateString(name.as_ptr())).is_ok()
        && json::add_to_object(f, c"arguments", cJSON_CreateString(arguments.as_ptr())).is_ok();
    if !ok {
        cJSON_Delete(out);
        cJSON_Delete(f);
        return ptr::null_mut();
    }
    if json::add_to_object(out, c"function", f).is_err() {
        cJSON_Delete(out);
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
        if ctx.is_null() || (*ctx).message.is_null() || resp.is_null() {
            return -rt_error();
        }
        let r = &*resp;
        let msg = new_message(c"assistant");
        if msg.is_null() {
            return enomem();
        }
        let fail = |msg: *mut cJSON| {
            cJSON_Delete(msg);
            enomem()
        };
        let content = if r.context.is_null() {
            c"".as_ptr()
        } else {
            r.context as *const c_char
        };
        if json::add_to_object(msg, c"content", cJSON_CreateString(content)).is_err() {
            return fail(msg);
        }
        let calls = r.tool_call;
        if json::is_array(calls) && !(*calls).child.is_null() {
            let copies = cJSON_CreateArray();
            if copies.is_null() {
                return fail(msg);
            }
            for call in json::children(calls) {
                let copy = request_tool_call(call);
                if copy.is_null() || json::add_to_array(copies, copy).is_err() {
                    cJSON_Delete(copies);
                    return fail(msg);
                }
            }
            if json::add_to_object(msg, c"tool_calls", copies).is_err() {
                return fail(msg);
            }
            let keep = board().keep_reasoning != 0;
            if keep
                && !r.reasoning.is_null()
                && *r.reasoning != 0
                && json::add_to_object(msg, c"reasoning_content", cJSON_CreateString(r.reasoning))
                    .is_err()
            {
                return fail(msg);
            }
        }
        push(ctx, msg)
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
        if ctx.is_null() || (*ctx).message.is_null() || tool_call_id.is_null() {
            return -rt_error();
        }
        let msg = new_message(c"tool");
        if msg.is_null() {
            return enomem();
        }
        let mut content = to_content(messages);
        if content.is_null() {
            content = cJSON_CreateString(c"".as_ptr());
        }
        if json::add_to_object(msg, c"tool_call_id", cJSON_CreateString(tool_call_id)).is_err()
            || json::add_to_object(msg, c"content", content).is_err()
        {
            cJSON_Delete(msg);
            return enomem();
        }
        push(ctx, msg)
    })
}

/// Empty the array (the caller rebuilds the system prompt).
unsafe extern "C" fn clear_message(ctx: Context_t) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        if ctx.is_null() || (*ctx).message.is_null() {
            return -rt_error();
        }
        let array = (*ctx).message;
        while !(*array).child.is_null() {
            cJSON_DeleteItemFromArray(array, 0);
        }
        rt_eok()
    })
}

/// Keep the system prompt and the last `keep` messages, moving the cut
/// forward past any `tool` message whose assistant message would be cut
/// away (a request starting its history with a tool result is rejected).
unsafe extern "C" fn trim_context(ctx: Context_t, keep: c_int) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        if ctx.is_null() || (*ctx).message.is_null() {
            return -rt_error();
        }
        let array = (*ctx).message;
        let total = cJSON_GetArraySize(array);
        let first = (*array).child;
        let history_start: c_int = if !first.is_null() && role_of(first) == b"system" {
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
            let next = cJSON_GetArrayItem(array, history_start + drop_count);
            if role_of(next) != b"tool" {
                break;
            }
            drop_count += 1;
        }
        for _ in 0..drop_count {
            cJSON_DeleteItemFromArray(array, history_start);
        }
        rt_eok()
    })
}

/// Create a context: an empty message array, the methods, and the system
/// prompt as its first message. Owned by the caller (free it with
/// `agent_context_destroy`); `RT_NULL` on no memory.
#[no_mangle]
pub extern "C" fn agent_context_create() -> Context_t {
    ffi_fn!(failure = ptr::null_mut(), {
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
    })
}

/// Free the message array and the context. NULL-safe.
#[no_mangle]
pub unsafe extern "C" fn agent_context_destroy(context: Context_t) {
    ffi_fn!(failure = (), nonnull(context), {
        // SAFETY: the caller gives up a context from agent_context_create.
        unsafe {
            if !(*context).message.is_null() {
                cJSON_Delete((*context).message);
            }
            rt_free(context as *mut c_void);
        }
    })
}
