//! `chat.h`: one streamed chat-completions request.

use crate::cjson_sys::{cJSON, cJSON_Delete};
use crate::ffi_boundary;
use crate::rtt::rt_free;
use core::ffi::{c_char, c_void};

#[repr(C)]
pub struct ChatResponse {
    pub reasoning: *mut c_char,
    pub context: *mut c_char,
    pub tool_call: *mut cJSON,
}
pub type ChatResponse_t = *mut ChatResponse;

/// Free a response from `chat()`: its strings, its tool-call array and the
/// struct. NULL-safe.
#[no_mangle]
pub extern "C" fn chat_response_free(resp: ChatResponse_t) {
    ffi_boundary!((), {
        if resp.is_null() {
            return;
        }
        // SAFETY: `resp` and its members come from chat() (RT-Thread heap and
        // cJSON); the caller gives them up.
        unsafe {
            rt_free((*resp).reasoning as *mut c_void);
            rt_free((*resp).context as *mut c_void);
            if !(*resp).tool_call.is_null() {
                cJSON_Delete((*resp).tool_call);
            }
            rt_free(resp as *mut c_void);
        }
    })
}
