//! `AgentExt.h`'s sub-agent profiles. The exports; the code is
//! [`crate::abilities::sub_agents`].

use crate::abilities::sub_agents::{self, AddError};
use crate::ffi_fn;
use crate::rtt::*;
use crate::wire::profiles::ProfileText;
use core::ffi::{c_char, CStr};

/// AgentExt.h's `agent_profile_t`: every field NULL or a NUL-terminated
/// string, copied by `agent_profile_add`.
#[repr(C)]
pub struct AgentProfile {
    pub name: *const c_char,
    pub description: *const c_char,
    pub system_prompt: *const c_char,
    pub api_url: *const c_char,
    pub api_key: *const c_char,
    pub model: *const c_char,
    pub tools: *const c_char,
}

/// Add (or replace) a sub-agent profile; its tool is offered from the
/// agent's next start. RT_EOK, -RT_EINVAL (NULL, a name that is not 1-64
/// of A-Z a-z 0-9 _ -, or no system prompt), -RT_ENOMEM.
#[no_mangle]
pub unsafe extern "C" fn agent_profile_add(profile: *const AgentProfile) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), nonnull(profile), {
        // SAFETY: non-NULL, so a valid profile whose fields are NULL or
        // NUL-terminated (the caller's promise).
        let p = unsafe { &*profile };
        let text = |s: *const c_char| {
            // SAFETY: as above; each is only read during the call.
            unsafe { crate::base::text::cstr_arg(s) }.map_or(&b""[..], CStr::to_bytes)
        };
        let given = ProfileText {
            name: text(p.name),
            description: text(p.description),
            system: text(p.system_prompt),
            url: text(p.api_url),
            key: text(p.api_key),
            model: text(p.model),
            tools: text(p.tools),
        };
        match sub_agents::add(&given) {
            Ok(()) => rt_eok(),
            Err(AddError::NoMemory) => -rt_enomem(),
            Err(_) => -rt_einval(),
        }
    })
}

/// Remove the profile `name` (its tool goes at the agent's next start):
/// RT_EOK, or -RT_EINVAL when there is none.
#[no_mangle]
pub unsafe extern "C" fn agent_profile_del(name: *const c_char) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), nonnull(name), {
        // SAFETY: non-NULL, so NUL-terminated (the caller's promise).
        let name = unsafe { CStr::from_ptr(name) }.to_bytes();
        if sub_agents::del(name) {
            rt_eok()
        } else {
            -rt_einval()
        }
    })
}
