//! `chat.h`: the streamed chat client. The exports; the code is [`crate::runtime::chat`].

use crate::cjson::sys::cJSON;
use crate::ffi_fn;
use crate::runtime::chat::ChatResponse_t;
use core::ffi::c_char;
use core::ptr;

/// C export of [`crate::runtime::chat::chat_response_free`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn chat_response_free(resp: ChatResponse_t) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::chat::chat_response_free(resp) }
    })
}

/// C export of [`crate::runtime::chat::agent_chat_last_error`], with its contract.
#[no_mangle]
pub extern "C" fn agent_chat_last_error() -> *const c_char {
    ffi_fn!(failure = ptr::null(), {
        crate::runtime::chat::agent_chat_last_error()
    })
}

/// C export of [`crate::runtime::chat::chat`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn chat(
    messages: *mut cJSON,
    tools: *mut cJSON,
    max_tokens: core::ffi::c_int,
    on_reasoning: Option<unsafe extern "C" fn(text: *const c_char)>,
    on_tool_call: Option<unsafe extern "C" fn(text: *const c_char)>,
    on_context: Option<unsafe extern "C" fn(text: *const c_char)>,
) -> ChatResponse_t {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe {
            crate::runtime::chat::chat(
                messages,
                tools,
                max_tokens,
                on_reasoning,
                on_tool_call,
                on_context,
            )
        }
    })
}
