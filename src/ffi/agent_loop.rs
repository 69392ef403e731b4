//! `AgentLoop.h`: start and stop the agent. The exports; the code is [`crate::runtime::agent_loop`].

use crate::ffi_fn;
use core::ffi::c_int;

/// C export of [`crate::runtime::agent_loop::init_agent`], with its contract.
#[no_mangle]
pub extern "C" fn init_agent() {
    ffi_fn!(failure = (), { crate::runtime::agent_loop::init_agent() })
}

/// C export of [`crate::runtime::agent_loop::cleanup_agent`], with its contract.
#[no_mangle]
pub extern "C" fn cleanup_agent() {
    ffi_fn!(failure = (), {
        crate::runtime::agent_loop::cleanup_agent()
    })
}

/// C export of [`crate::runtime::agent_loop::main_loop_entry`], with its contract.
#[no_mangle]
pub extern "C" fn main_loop_entry() -> c_int {
    ffi_fn!(failure = -1, {
        crate::runtime::agent_loop::main_loop_entry()
    })
}

/// C export of [`crate::runtime::agent_loop::cleanup_agent_entry`], with its contract.
#[no_mangle]
pub extern "C" fn cleanup_agent_entry() -> c_int {
    ffi_fn!(failure = -1, {
        crate::runtime::agent_loop::cleanup_agent_entry()
    })
}
