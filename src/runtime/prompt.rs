//! `context.h`/`prompt.h` helpers that need no context: role names and the
//! system prompt.

use core::ffi::c_char;

/// `enum RoleType` (a C enum: see [`crate::abi::messages::c_enum`]).
pub type RoleType = crate::abi::messages::c_enum;
pub const ROLE_SYSTEM: RoleType = 0;
pub const ROLE_USER: RoleType = 1;
pub const ROLE_ASSISTANT: RoleType = 2;
pub const ROLE_TOOL: RoleType = 3;

/// The OpenAI role name: `"system"`, `"user"`, `"assistant"`, `"tool"`;
/// `"unknown"` for any other value. Static: never free or modify it.
pub fn get_role_string(role: RoleType) -> *mut c_char {
    let s: &'static [u8] = match role {
        ROLE_SYSTEM => b"system\0",
        ROLE_USER => b"user\0",
        ROLE_ASSISTANT => b"assistant\0",
        ROLE_TOOL => b"tool\0",
        _ => b"unknown\0",
    };
    s.as_ptr() as *mut c_char
}

static SYSTEM_PROMPT: &[u8] = b"You are an assistant running on an RT-Thread embedded device. \
Answer briefly and plainly. When a registered tool can do what is asked, call it \
instead of guessing, and base your answer on its result. If a tool returns an error, \
read the reason, correct the arguments or choose another tool, and tell the user \
what failed if you cannot recover.\0";

/// The system prompt. Static: never free or modify it.
pub fn get_system_prompt() -> *mut c_char {
    SYSTEM_PROMPT.as_ptr() as *mut c_char
}
