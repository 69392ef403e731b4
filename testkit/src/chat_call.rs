//! Calling `chat()` from a test with JSON text, and copying its response
//! out (the response is freed before returning).

use rtt_agent::cjson::sys::*;
use rtt_agent::runtime::chat::{
    agent_chat_last_error, chat_marking_long_calls, chat_response_free,
};
use std::ffi::{c_char, CStr, CString};

/// One tool call of a response.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Call {
    pub id: String,
    pub name: String,
    pub arguments: String,
    /// Marked too long (its arguments exceeded the cap).
    pub too_long: bool,
}

/// What a successful `chat()` returned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answer {
    pub reasoning: String,
    pub content: String,
    pub calls: Vec<Call>,
}

fn parse(json: &str) -> *mut cJSON {
    let c = CString::new(json).unwrap();
    // SAFETY: a NUL-terminated string.
    unsafe { cJSON_Parse(c.as_ptr()) }
}

/// `chat(messages, tools)` with the current configuration (the calls too
/// long to run marked); the reason from `agent_chat_last_error()` when it
/// returns NULL.
pub fn chat_json(messages: &str, tools: Option<&str>) -> Result<Answer, String> {
    let m = parse(messages);
    let t = tools.map_or(std::ptr::null_mut(), parse);
    // SAFETY: `m` and `t` are trees parsed above (or NULL), borrowed for the
    // call; no callbacks.
    let (resp, long_calls) = unsafe { chat_marking_long_calls(m, t, 0, None, None, None) };
    // SAFETY: trees parsed above; a response from chat(), freed once.
    unsafe {
        cJSON_Delete(m);
        if !t.is_null() {
            cJSON_Delete(t);
        }
        if resp.is_null() {
            return Err(CStr::from_ptr(agent_chat_last_error())
                .to_string_lossy()
                .into_owned());
        }
        let r = &*resp;
        let s = |p: *const c_char| CStr::from_ptr(p).to_string_lossy().into_owned();
        let mut calls = Vec::new();
        for i in 0..cJSON_GetArraySize(r.tool_call) {
            let call = cJSON_GetArrayItem(r.tool_call, i);
            let f = cJSON_GetObjectItemCaseSensitive(call, c"function".as_ptr());
            let get =
                |o, k: &CStr| s((*cJSON_GetObjectItemCaseSensitive(o, k.as_ptr())).valuestring);
            calls.push(Call {
                id: get(call, c"id"),
                name: get(f, c"name"),
                arguments: get(f, c"arguments"),
                too_long: long_calls.contains(i as usize),
            });
        }
        let answer = Answer {
            reasoning: s(r.reasoning),
            content: s(r.context),
            calls,
        };
        chat_response_free(resp);
        Ok(answer)
    }
}
