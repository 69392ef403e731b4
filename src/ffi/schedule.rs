//! `AgentExt.h`'s scheduled prompts and the `agent_schedule` MSH command.
//! The exports; the code is [`crate::abilities::schedule`].

use crate::abilities::schedule::{self, AddError};
use crate::ffi_fn;
use crate::rtt::*;
use core::ffi::{c_char, c_int, CStr};

/// C export of [`crate::abilities::schedule::command`], with its contract.
#[no_mangle]
pub unsafe extern "C" fn agent_schedule(argc: c_int, argv: *mut *mut c_char) -> c_int {
    ffi_fn!(failure = -1, nonnull(argv), {
        // SAFETY: finsh's arguments (the caller's promise).
        unsafe { schedule::command(argc, argv) }
    })
}

/// Add a scheduled prompt: `when` ("every 30s", "0 9 * * 1-5") and
/// `prompt`, both copied. The entry's number (from 1), or a negative
/// error: -RT_EINVAL (`when` or `prompt` not valid, NULL, or cron without
/// a set clock), -RT_EFULL (8 entries), -RT_ENOMEM, -RT_ERROR (no schedule
/// file, or it could not be written). The reason is logged.
#[no_mangle]
pub unsafe extern "C" fn agent_schedule_add(when: *const c_char, prompt: *const c_char) -> c_int {
    ffi_fn!(failure = -(rt_error() as c_int), nonnull(when, prompt), {
        // SAFETY: non-NULL, so NUL-terminated (the caller's promise).
        let (when, prompt) = unsafe { (CStr::from_ptr(when), CStr::from_ptr(prompt)) };
        let mut words: alloc::vec::Vec<&[u8]> = alloc::vec::Vec::new();
        for w in when
            .to_bytes()
            .split(|&b| b == b' ')
            .filter(|w| !w.is_empty())
        {
            if crate::base::fallible::push(&mut words, w).is_err() {
                return -(rt_enomem() as c_int);
            }
        }
        if crate::base::fallible::push(&mut words, prompt.to_bytes()).is_err() {
            return -(rt_enomem() as c_int);
        }
        match schedule::add(&words) {
            Ok(id) => id.min(c_int::MAX as u32) as c_int,
            Err(e) => {
                crate::log_w!("agent_schedule_add: ", e.text());
                -(match e {
                    AddError::Full => rt_efull(),
                    AddError::NoMemory => rt_enomem(),
                    AddError::NoFile | AddError::NotWritten => rt_error(),
                    _ => rt_einval(),
                } as c_int)
            }
        }
    })
}

/// Remove scheduled prompt `id`: RT_EOK, -RT_EINVAL (no such entry) or
/// -RT_ERROR (the file could not be written).
#[no_mangle]
pub extern "C" fn agent_schedule_del(id: c_int) -> rt_err_t {
    ffi_fn!(failure = -rt_error(), {
        match schedule::del(id.max(0) as u32) {
            Ok(true) => rt_eok(),
            Ok(false) => -rt_einval(),
            Err(_) => -rt_error(),
        }
    })
}

/// Hand each scheduled prompt's reply to `sink(id, reply)` too (on the
/// agent loop's thread; `reply` is borrowed for the call); NULL: none.
#[no_mangle]
pub extern "C" fn agent_schedule_set_sink(
    sink: Option<unsafe extern "C" fn(id: c_int, reply: *const c_char)>,
) {
    ffi_fn!(failure = (), { schedule::set_sink(sink) })
}
