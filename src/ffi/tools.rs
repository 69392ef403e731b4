//! `tools.h`: the tool registry. The exports; the code is [`crate::runtime::tools`].

use crate::cjson::sys::cJSON;
use crate::ffi_fn;
use crate::rtt::*;
use crate::runtime::tools::AgentToolList;
use crate::runtime::tools::AgentToolNode_t;
use core::ptr;

/// C export of [`crate::runtime::tools::agent_tool_list_create`], with its contract.
#[no_mangle]
pub extern "C" fn agent_tool_list_create() -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        crate::runtime::tools::agent_tool_list_create()
    })
}

/// C export of [`crate::runtime::tools::append_tool`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn append_tool(
    tool_obj: *mut cJSON,
    execute_func: Option<unsafe extern "C" fn(param: *mut cJSON, node: *mut AgentToolList)>,
) -> rt_err_t {
    ffi_fn!(failure = rt_error(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::tools::append_tool(tool_obj, execute_func) }
    })
}

/// C export of [`crate::runtime::tools::build_tools_json`], with its contract.
#[no_mangle]
pub extern "C" fn build_tools_json() -> *mut cJSON {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::runtime::tools::build_tools_json()
    })
}

/// C export of [`crate::runtime::tools::get_agent_tools`], with its contract.
#[no_mangle]
pub extern "C" fn get_agent_tools() -> *mut cJSON {
    ffi_fn!(failure = ptr::null_mut(), {
        crate::runtime::tools::get_agent_tools()
    })
}

/// C export of [`crate::runtime::tools::search_agent_tool_node`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn search_agent_tool_node(tool_obj: *mut cJSON) -> AgentToolNode_t {
    ffi_fn!(failure = ptr::null_mut(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::tools::search_agent_tool_node(tool_obj) }
    })
}

/// C export of [`crate::runtime::tools::free_agent_tool_node`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn free_agent_tool_node(node: AgentToolNode_t) {
    ffi_fn!(failure = (), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::runtime::tools::free_agent_tool_node(node) }
    })
}

/// C export of [`crate::runtime::tools::agent_tool_list_destroy`], with its contract.
#[no_mangle]
pub extern "C" fn agent_tool_list_destroy() {
    ffi_fn!(failure = (), {
        crate::runtime::tools::agent_tool_list_destroy()
    })
}

/// C export of [`crate::abilities::tool_options::append_tool_ex`], with its contract.
#[cfg(feature = "tool-options")]
#[no_mangle]
pub unsafe extern "C" fn append_tool_ex(
    tool_obj: *mut cJSON,
    execute_func: Option<unsafe extern "C" fn(param: *mut cJSON, node: *mut AgentToolList)>,
    options: *const crate::abilities::tool_options::AgentToolOptions,
) -> rt_err_t {
    ffi_fn!(failure = rt_error(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::abilities::tool_options::append_tool_ex(tool_obj, execute_func, options) }
    })
}

/// C export of [`crate::abilities::tool_options::agent_tool_deadline_ms`], with its contract.
#[cfg(feature = "tool-options")]
#[no_mangle]
pub extern "C" fn agent_tool_deadline_ms() -> rt_int32_t {
    ffi_fn!(failure = -1, {
        crate::abilities::tool_options::agent_tool_deadline_ms()
    })
}

/// C export of [`crate::abilities::tool_options::agent_tool_set_options`], with its contract.
#[cfg(feature = "tool-options")]
#[no_mangle]
pub unsafe extern "C" fn agent_tool_set_options(
    name: *const core::ffi::c_char,
    options: *const crate::abilities::tool_options::AgentToolOptions,
) -> rt_err_t {
    ffi_fn!(failure = rt_error(), {
        // SAFETY: the caller's promise (the pointers are NULL or valid, as the
        // header documents) is the one the core function needs.
        unsafe { crate::abilities::tool_options::agent_tool_set_options(name, options) }
    })
}
