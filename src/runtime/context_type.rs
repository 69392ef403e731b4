//! `context.h`'s object: the conversation's method table, as C lays it
//! out. On its own so that the abilities' hook table can name the type
//! without reaching the conversation's code (`context.rs`).

use super::chat::ChatResponse_t;
use crate::abi::messages::Messages_t;
use crate::cjson::sys::cJSON;
use crate::rtt::rt_err_t;
use core::ffi::{c_char, c_int};

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
