//! Running the agent in a test: the debug channel, the scripted server,
//! and reading back what the server received. Without the debug channel
//! (a library of fewer parts), [`Agent`] runs on a channel of the kit's
//! own that only hands the tests the hub, and [`ask`] sends straight to it
//! ([`ask_items`]).

use crate::llm_server::*;
use rtt_agent::abi::messages::TYPE_TEXT;
#[cfg(agent_part = "channel-debug")]
use rtt_agent::channels::debug::{agent_debug_ops, send_message};
use rtt_agent::cjson::sys::*;
use rtt_agent::runtime::agent_loop::{self, cleanup_agent_entry, main_loop_entry};
use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent::runtime::config::agent_config_set;
use std::ffi::{CStr, CString};
use std::sync::{Mutex, MutexGuard};

/// One agent per process, and exact heap figures: tests take this lock
/// first thing and hold it to their end.
static SERIAL: Mutex<()> = Mutex::new(());

pub fn lock() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The heap's `used` once every thread the host port started has ended
/// and been reaped (what a test compares before and after).
pub fn settled_used() -> usize {
    assert!(
        rtt_agent::host::thread::settle(std::time::Duration::from_secs(10)),
        "threads still running"
    );
    rtt_agent::host::heap::used()
}

/// A running agent on the debug channel, talking to `server`; stopped (and
/// everything freed) when dropped.
pub struct Agent;

/// The channel [`Agent`] runs on without the debug channel: nothing to
/// start or stop; the tests put messages on the hub themselves.
#[cfg(not(agent_part = "channel-debug"))]
pub static HUB_ONLY_OPS: rtt_agent::runtime::agent_loop::AgentChannelOps =
    rtt_agent::runtime::agent_loop::AgentChannelOps {
        init: Some(hub_only_init),
        reset: None,
    };

#[cfg(not(agent_part = "channel-debug"))]
unsafe extern "C" fn hub_only_init(
    _hub: rtt_agent::runtime::hub::MessageHub_t,
    _ctx: rtt_agent::runtime::context::Context_t,
) -> std::ffi::c_int {
    0
}

/// The channel [`Agent`] runs on: the debug channel, or without it
/// [`HUB_ONLY_OPS`].
pub fn test_channel() -> *const rtt_agent::runtime::agent_loop::AgentChannelOps {
    #[cfg(agent_part = "channel-debug")]
    return std::ptr::addr_of!(agent_debug_ops);
    #[cfg(not(agent_part = "channel-debug"))]
    return &HUB_ONLY_OPS;
}

/// Point the agent at `server` with `key` and `model`, and the tests' short
/// retry wait and timeout unless `overrides` chose others.
pub fn configure(server: &LlmServer, key: &CStr, model: &CStr, overrides: Overrides) {
    configure_at(&server.url(), key, model, overrides)
}

/// [`configure`] with the endpoint `url`.
pub fn configure_at(url: &str, key: &CStr, model: &CStr, overrides: Overrides) {
    let url = CString::new(url).unwrap();
    // SAFETY: three NUL-terminated strings that outlive the call (it copies).
    unsafe { agent_config_set(key.as_ptr(), model.as_ptr(), url.as_ptr()) };
    set_overrides(Overrides {
        retry_base_ms: overrides.retry_base_ms.or(Some(10)),
        timeout_ms: overrides.timeout_ms.or(Some(3000)),
        ..overrides
    });
}

impl Agent {
    pub fn start(server: &LlmServer, overrides: Overrides) -> Agent {
        Self::start_at(&server.url(), overrides)
    }

    /// [`Agent::start`] with the endpoint `url` (another path of the
    /// scripted server: `…/v1/messages`, `…/api/chat`).
    pub fn start_at(url: &str, overrides: Overrides) -> Agent {
        configure_at(url, c"sk-loop-secret-456", c"loop-model", overrides);
        agent_loop::set_channel(test_channel());
        assert_eq!(main_loop_entry(), 0);
        Agent
    }

    pub fn ask(&self, text: &str) -> String {
        ask(text)
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        cleanup_agent_entry();
        set_overrides(Overrides::default());
    }
}

/// Send through the debug channel (without it, straight to the hub:
/// [`ask_items`], one asker at a time); the reply's text.
pub fn ask(text: &str) -> String {
    #[cfg(not(agent_part = "channel-debug"))]
    return ask_items(&[(TYPE_TEXT, text)]);
    #[cfg(agent_part = "channel-debug")]
    ask_debug(text)
}

#[cfg(agent_part = "channel-debug")]
fn ask_debug(text: &str) -> String {
    let mut content = text.as_bytes().to_vec();
    content.push(0);
    let mut reply = String::new();
    send_message(TYPE_TEXT, &content, &mut |r| {
        reply = String::from_utf8_lossy(r).into_owned()
    })
    .expect("a reply");
    reply
}

/// A sender beside the test (on a thread of its own, while the test stops
/// the agent): sends `text` through the debug channel and waits, the reply
/// (`Ok(Some)`) or why none came. Without the debug channel it only puts
/// the message on the hub (`Ok(None)`): nothing waits on a hub that the
/// cleanup frees.
pub fn send_beside(text: &str) -> Result<Option<String>, &'static str> {
    let mut content = text.as_bytes().to_vec();
    content.push(0);
    #[cfg(agent_part = "channel-debug")]
    {
        let mut reply = None;
        send_message(TYPE_TEXT, &content, &mut |r| {
            reply = Some(String::from_utf8_lossy(r).into_owned())
        })?;
        Ok(reply)
    }
    #[cfg(not(agent_part = "channel-debug"))]
    {
        use rtt_agent::abi::messages::{messages_append, messages_create, messages_destroy};
        use rtt_agent::runtime::hub::message_hub_put;
        let hub = rtt_agent::ffi::runtime::agent_get_message_hub();
        if hub.is_null() {
            return Err("the agent is not running");
        }
        let msg = messages_create(1);
        if msg.is_null() {
            return Err("out of memory");
        }
        // SAFETY: `msg` is live and owned here until handed over; `content`
        // is NUL-terminated and copied; `hub` is the running agent's, alive
        // until the test stops the agent after this returns.
        unsafe {
            if messages_append(msg, TYPE_TEXT, content.as_ptr().cast()) != 0
                || message_hub_put(hub, msg, (*hub).input_mailbox) != 0
            {
                messages_destroy(msg);
                return Err("not sent");
            }
        }
        Ok(None)
    }
}

/// `messages` of a recorded request as (role, content, tool_call_id, tool
/// call ids, has reasoning_content).
#[derive(Debug, Clone, PartialEq)]
pub struct Msg {
    pub role: String,
    pub content: String,
    pub tool_call_id: String,
    pub calls: Vec<String>,
    pub reasoning: Option<String>,
}

pub fn messages_of(req: &RecordedRequest) -> Vec<Msg> {
    let body = CString::new(req.body.clone()).unwrap();
    let mut out = Vec::new();
    // SAFETY: `body` is NUL-terminated; `root` is checked, owned here and
    // deleted once at the end; every item read is NULL-checked by cJSON's
    // getters (which accept NULL) or here, and belongs to the live `root`.
    unsafe {
        let root = cJSON_Parse(body.as_ptr());
        assert!(!root.is_null(), "request body is not JSON");
        let msgs = cJSON_GetObjectItemCaseSensitive(root, c"messages".as_ptr());
        for i in 0..cJSON_GetArraySize(msgs) {
            let m = cJSON_GetArrayItem(msgs, i);
            let s = |o: *mut cJSON, k: &CStr| {
                let it = cJSON_GetObjectItemCaseSensitive(o, k.as_ptr());
                (!it.is_null() && !(*it).valuestring.is_null()).then(|| {
                    CStr::from_ptr((*it).valuestring)
                        .to_string_lossy()
                        .into_owned()
                })
            };
            let calls_arr = cJSON_GetObjectItemCaseSensitive(m, c"tool_calls".as_ptr());
            let calls = (0..cJSON_GetArraySize(calls_arr))
                .map(|j| s(cJSON_GetArrayItem(calls_arr, j), c"id").unwrap_or_default())
                .collect();
            out.push(Msg {
                role: s(m, c"role").unwrap_or_default(),
                content: s(m, c"content").unwrap_or_default(),
                tool_call_id: s(m, c"tool_call_id").unwrap_or_default(),
                calls,
                reasoning: s(m, c"reasoning_content"),
            });
        }
        cJSON_Delete(root);
    }
    out
}

/// The last user message of a recorded chat request (what it asked).
pub fn last_user_message(req: &RecordedRequest) -> Option<String> {
    messages_of(req)
        .iter()
        .rev()
        .find(|m| m.role == "user")
        .map(|m| m.content.clone())
}

pub fn roles(msgs: &[Msg]) -> Vec<&str> {
    msgs.iter().map(|m| m.role.as_str()).collect()
}

/// A tool-call response with `reasoning_content` streamed first.
pub fn calls_with_reasoning(reasoning: &str, calls: &[(&str, &str, &[&str])]) -> ScriptedResponse {
    let mut events = vec![sse_event(&chunk_json(
        &format!(
            r#"{{"role":"assistant","reasoning_content":{}}}"#,
            json_string(reasoning)
        ),
        None,
    ))];
    events.extend(sse_tool_call_events(calls));
    events.push(sse_finish("tool_calls"));
    events.push(sse_done());
    ScriptedResponse::sse(events)
}

/// Start a scripted server whose script is not counted in the host heap's
/// `used`: the server frees it, so counting it would skew exact checks.
pub fn uncounted_server(script: impl FnOnce() -> Vec<ScriptedResponse>) -> LlmServer {
    rtt_agent::host::heap::exclude_this_thread(true);
    let server = LlmServer::start(script());
    rtt_agent::host::heap::exclude_this_thread(false);
    server.expect("start the scripted server")
}

/// [`uncounted_server`] with a model answering each request.
pub fn uncounted_server_with(
    model: impl Fn(&RecordedRequest) -> ScriptedResponse + Send + Sync + 'static,
) -> LlmServer {
    rtt_agent::host::heap::exclude_this_thread(true);
    let server = LlmServer::with_model(model);
    rtt_agent::host::heap::exclude_this_thread(false);
    server.expect("start the scripted server")
}

/// Send one message of several items (type, content) straight to the
/// running agent's hub, as a channel does (the debug channel sends one
/// item), and wait for the reply: its text. Do not mix with [`ask`] in one
/// agent run (the debug channel numbers the replies it waits for).
pub fn ask_items(items: &[(rtt_agent::abi::messages::MessageType, &str)]) -> String {
    use rtt_agent::abi::messages::{
        messages_append, messages_create, messages_destroy, messages_get_content_idx,
    };
    use rtt_agent::runtime::hub::{message_hub_get_timeout, message_hub_put};
    let hub = rtt_agent::ffi::runtime::agent_get_message_hub();
    assert!(!hub.is_null(), "the agent is not running");
    let msg = messages_create(items.len() as i32);
    assert!(!msg.is_null());
    for (kind, content) in items {
        let c = CString::new(*content).unwrap();
        // SAFETY: `msg` is live; `c` is NUL-terminated and copied.
        assert_eq!(unsafe { messages_append(msg, *kind, c.as_ptr()) }, 0);
    }
    // SAFETY: `hub` is the running agent's (it stays alive while the test's
    // Agent does); `msg` is handed over on success.
    unsafe {
        assert_eq!(message_hub_put(hub, msg, (*hub).input_mailbox), 0, "put");
        let reply = message_hub_get_timeout(hub, (*hub).output_mailbox, 30_000);
        assert!(!reply.is_null(), "no reply in 30 s");
        let text = messages_get_content_idx(reply, 0);
        let out = if text.is_null() {
            String::new()
        } else {
            CStr::from_ptr(text).to_string_lossy().into_owned()
        };
        messages_destroy(reply);
        out
    }
}

/// The `tools` a chat request offered the model: (name, its parameters as
/// JSON text, "null" when it has none); empty when the body is not JSON.
pub fn offered_tools(body: &[u8]) -> Vec<(String, String)> {
    let Ok(text) = CString::new(body.to_vec()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // SAFETY: `text` is NUL-terminated; `root` is NULL-checked, owned here
    // and deleted once; cJSON's getters accept NULL, every string read is
    // NULL-checked and belongs to the live `root`, and the printed text is
    // freed with cJSON's allocator.
    unsafe {
        let root = cJSON_Parse(text.as_ptr());
        if root.is_null() {
            return out;
        }
        let tools = cJSON_GetObjectItemCaseSensitive(root, c"tools".as_ptr());
        for i in 0..cJSON_GetArraySize(tools) {
            let f = cJSON_GetObjectItemCaseSensitive(
                cJSON_GetArrayItem(tools, i),
                c"function".as_ptr(),
            );
            let name = cJSON_GetObjectItemCaseSensitive(f, c"name".as_ptr());
            if name.is_null() || (*name).valuestring.is_null() {
                continue;
            }
            let printed =
                cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(f, c"parameters".as_ptr()));
            let params = if printed.is_null() {
                "null".to_string()
            } else {
                let p = CStr::from_ptr(printed).to_string_lossy().into_owned();
                cJSON_free(printed.cast());
                p
            };
            out.push((
                CStr::from_ptr((*name).valuestring)
                    .to_string_lossy()
                    .into_owned(),
                params,
            ));
        }
        cJSON_Delete(root);
    }
    out
}
