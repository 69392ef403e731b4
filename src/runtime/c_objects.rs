//! The C headers' objects as C lays them out: `context.h`'s method table,
//! `chat.h`'s response and `tools.h`'s registry node. On their own so that
//! the abilities' hook table can name them without reaching the code that
//! works on them (`context.rs`, `chat.rs`, `tools.rs`).

use crate::abi::messages::Messages_t;
use crate::cjson::sys::cJSON;
use crate::rtt::rt_err_t;
use core::ffi::{c_char, c_int};

#[repr(C)]
pub struct ChatResponse {
    pub reasoning: *mut c_char,
    pub context: *mut c_char,
    pub tool_call: *mut cJSON,
}
pub type ChatResponse_t = *mut ChatResponse;

#[repr(C)]
pub struct AgentToolRet {
    pub ret: rt_err_t,
    pub messages: Messages_t,
}
pub type AgentToolRet_t = *mut AgentToolRet;

/// A tool's execute function: `void tool_xxx(cJSON *args, AgentToolNode_t node)`.
pub type ExecuteFn = unsafe extern "C" fn(param: *mut cJSON, node: *mut AgentToolList);

#[repr(C)]
pub struct AgentToolList {
    pub tool_obj: *mut cJSON,
    pub ret: AgentToolRet,
    pub execute_func: Option<ExecuteFn>,
    pub next: *mut AgentToolList,
}
pub type AgentToolNode = AgentToolList;
pub type AgentToolNode_t = *mut AgentToolList;

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
