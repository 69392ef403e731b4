//! Out of memory at every allocation: each walk runs its scenario once per
//! allocation point k, with the k-th allocation of the whole process (every
//! thread: the caller's, the agent loop's) failing, then with every
//! allocation from the k-th on failing, for k = 0 up to the number of
//! allocations the scenario makes. Each run must end (a bound per k), with
//! an answer or an error and no crash, and leave the heap's `used` exactly
//! where it was.
//!
//! - `walk_chat_with_tool_calls`: one `chat()` whose answer streams
//!   reasoning, text and two tool calls (chunked), with every callback;
//! - `walk_chat_anthropic`, `walk_chat_ollama`: the same `chat()` answered in
//!   Anthropic Messages (a signed thinking block, two `tool_use` blocks) and
//!   in Ollama's NDJSON (two whole calls with object arguments);
//! - `walk_loop_conversation`: one user message through the Debug channel,
//!   answered by the agent loop in three rounds (parallel tool calls, the
//!   C tools, then the text);
//! - `walk_direct_output`: `append_tool_ex` of a direct-output tool while
//!   the loop runs, and one message whose call it answers (its text the
//!   reply, or the model's after the direct path ran out of memory);
//! - `walk_notes`, `walk_sub_agent`, `walk_schedule`: the notes' start and a
//!   remember call; a sub-agent's run as a tool; the schedule's start with
//!   one entry and add/list/run/del (the run answered by the loop);
//! - `walk_init_and_cleanup`: `init_agent()` then `cleanup_agent()`;
//! - `walk_main_loop_entry_and_cleanup`: `main_loop_entry()` then
//!   `cleanup_agent_entry()` (the loop thread's start and stop);
//! - `walk_mcp_session`: an MCP client's `initialize`, `tools/call add`
//!   and `DELETE` (faults on the server's thread, the client's side left
//!   out).
//! - `walk_mcp_2026`: the newest revision's stateless `server/discover` and
//!   `tools/call add` (faults on the server's thread);
//! - `walk_mcp_client`: the agent's start with a remote MCP server (the
//!   Python SDK's: handshake, `tools/list`, registration), one message
//!   answered with a remote tool (`tools/call`), and the stop.
//!
//! Each walk runs in a child process of this test binary (see
//! `rtt_agent_testkit::alloc_walk`); its summary lines ("alloc walk: ...")
//! say how many allocations it counted and how many k it tried. A walk of
//! an optional part runs only with the part (the chat and the start and
//! stop walks run with any set of parts, on the Debug channel or without it
//! the board's).

// Fewer parts: the walks left out leave their helpers unused.
#![cfg_attr(not(feature = "all-parts"), allow(dead_code, unused_imports))]

use rtt_agent::abi::messages::TYPE_TEXT;
#[cfg(feature = "channel-debug")]
use rtt_agent::channels::debug::{send_message, set_reply_timeout_ms};
use rtt_agent::cjson::sys::*;
use rtt_agent::host::{console, heap};
use rtt_agent::runtime::agent_loop::{
    cleanup_agent, cleanup_agent_entry, init_agent, main_loop_entry, set_channel,
};
use rtt_agent::runtime::chat::{agent_chat_last_error, chat, chat_response_free, set_overrides};
use rtt_agent::runtime::chat::{ChatResponse, Overrides};
use rtt_agent::runtime::config::agent_config_set;
use rtt_agent::runtime::tools::get_agent_tools;
use rtt_agent_testkit::agent::{messages_of, Agent, Msg};
use rtt_agent_testkit::alloc_walk::{in_child_process, walk, FixedText, Mode};
use rtt_agent_testkit::arith_model;
use rtt_agent_testkit::llm_server::*;
use std::ffi::{c_char, CStr, CString};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Each walk's child process must be done within this.
const CHILD_LIMIT: Duration = Duration::from_secs(300);
const BOTH: &[Mode] = &[Mode::FailNth, Mode::FailFrom];

/// A server whose threads stay out of the heap figures and out of fault
/// injection (the test side of the process).
fn server_with(
    model: impl Fn(&RecordedRequest) -> ScriptedResponse + Send + Sync + 'static,
) -> LlmServer {
    heap::exclude_this_thread(true);
    let server = LlmServer::with_model(model).expect("start the scripted server");
    heap::exclude_this_thread(false);
    server
}

fn point_at(server: &LlmServer) {
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe {
        agent_config_set(
            c"sk-walk-secret".as_ptr(),
            c"walk-model".as_ptr(),
            url.as_ptr(),
        )
    };
}

/// A short, classifying text: the first `max` characters.
fn short(text: &str, max: usize) -> String {
    text.chars().take(max).collect()
}

// ---- (a) one chat() with tool calls ----------------------------------------

const MESSAGES: &str = r#"[{"role":"system","content":"You are terse."},{"role":"user","content":"add 2 and 3, multiply 6 by 7"},{"role":"assistant","content":"","tool_calls":[{"id":"c0","type":"function","function":{"name":"add","arguments":"{\"a\":1,\"b\":1}"}}]},{"role":"tool","tool_call_id":"c0","content":"1 + 1 = 2"}]"#;
const TOOLS: &str = r#"[{"type":"function","function":{"name":"add","description":"a + b","parameters":{"type":"object","properties":{"a":{"type":"double","description":"x"},"b":{"type":"double","description":"y"}},"required":["a","b"]}}},{"type":"function","function":{"name":"mul","description":"a * b","parameters":{"type":"object","properties":{"a":{"type":"double","description":"x"},"b":{"type":"double","description":"y"}},"required":["a","b"]}}}]"#;

const REASONING: &str = "Two operations: run both.";
const CONTENT: &str = "Computing both.";
const CALLS: [(&str, &str, &str); 2] = [
    ("call_a", "add", r#"{"a":2,"b":3}"#),
    ("call_m", "mul", r#"{"a":6,"b":7}"#),
];

fn chat_answer() -> ScriptedResponse {
    let mut events = vec![sse_event(&chunk_json(
        &format!(
            r#"{{"role":"assistant","reasoning_content":{}}}"#,
            json_string(REASONING)
        ),
        None,
    ))];
    events.extend(sse_content_events(&["Computing ", "both."]));
    events.extend(sse_tool_call_events(&[
        (CALLS[0].0, CALLS[0].1, &[r#"{"a":2,"#, r#""b":3}"#]),
        (CALLS[1].0, CALLS[1].1, &[r#"{"a":6,"b":7}"#]),
    ]));
    events.push(sse_finish("tool_calls"));
    events.push(sse_done());
    ScriptedResponse::sse(events)
}

static REASONING_CALLS: AtomicUsize = AtomicUsize::new(0);
static CONTENT_CALLS: AtomicUsize = AtomicUsize::new(0);
static TOOL_CALL_CALLS: AtomicUsize = AtomicUsize::new(0);

// The callbacks run while the fault is armed: they only count.
unsafe extern "C" fn on_reasoning(_text: *const c_char) {
    REASONING_CALLS.fetch_add(1, Ordering::SeqCst);
}
unsafe extern "C" fn on_content(_text: *const c_char) {
    CONTENT_CALLS.fetch_add(1, Ordering::SeqCst);
}
unsafe extern "C" fn on_tool_call(_text: *const c_char) {
    TOOL_CALL_CALLS.fetch_add(1, Ordering::SeqCst);
}

fn parse(json: &str) -> *mut cJSON {
    let c = CString::new(json).unwrap();
    // SAFETY: a NUL-terminated string.
    let tree = unsafe { cJSON_Parse(c.as_ptr()) };
    assert!(!tree.is_null(), "test JSON does not parse");
    tree
}

/// (reasoning, content, [(id, name, arguments)]) of a response.
///
/// # Safety
/// `resp` is a live response from `chat()`.
unsafe fn read_response(resp: *const ChatResponse) -> (String, String, Vec<[String; 3]>) {
    // SAFETY: the caller's contract: a live response; its strings are
    // NUL-terminated and its tool_call array live.
    unsafe {
        let r = &*resp;
        let s = |p: *const c_char| {
            if p.is_null() {
                "<NULL>".to_string()
            } else {
                CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        let get = |o: *const cJSON, k: &CStr| {
            let item = cJSON_GetObjectItemCaseSensitive(o, k.as_ptr());
            if item.is_null() {
                "<missing>".to_string()
            } else {
                s((*item).valuestring)
            }
        };
        let mut calls = Vec::new();
        for i in 0..cJSON_GetArraySize(r.tool_call) {
            let call = cJSON_GetArrayItem(r.tool_call, i);
            let f = cJSON_GetObjectItemCaseSensitive(call, c"function".as_ptr());
            calls.push([get(call, c"id"), get(f, c"name"), get(f, c"arguments")]);
        }
        (s(r.reasoning), s(r.context), calls)
    }
}

#[test]
fn walk_chat_with_tool_calls() {
    in_child_process("walk_chat_with_tool_calls", CHILD_LIMIT, || {
        let server = server_with(|_| chat_answer());
        point_at(&server);
        set_overrides(Overrides {
            retry_base_ms: Some(1),
            timeout_ms: Some(3000),
            ..Overrides::default()
        });
        let summary = walk(
            "(a) chat() with tool calls",
            2,
            BOTH,
            Duration::from_secs(30),
            |armed| {
                let messages = parse(MESSAGES);
                let tools = parse(TOOLS);
                for c in [&REASONING_CALLS, &CONTENT_CALLS, &TOOL_CALL_CALLS] {
                    c.store(0, Ordering::SeqCst);
                }
                let resp = armed.run(|| {
                    // SAFETY: trees parsed above, borrowed for the call; the
                    // callbacks take NUL-terminated strings and only count.
                    unsafe {
                        chat(
                            messages,
                            tools,
                            0,
                            Some(on_reasoning),
                            Some(on_tool_call),
                            Some(on_content),
                        )
                    }
                });
                // SAFETY: the trees parsed above, deleted once.
                unsafe {
                    cJSON_Delete(messages);
                    cJSON_Delete(tools);
                }
                if resp.is_null() {
                    // SAFETY: a static, NUL-terminated text.
                    let why = unsafe { CStr::from_ptr(agent_chat_last_error()) }
                        .to_string_lossy()
                        .into_owned();
                    if why.is_empty() {
                        return Err("chat() returned NULL and no error text".into());
                    }
                    return Ok(format!("error: {}", short(&why, 70)));
                }
                // SAFETY: a live response from chat(), freed once right after.
                let (reasoning, content, calls) = unsafe { read_response(resp) };
                // SAFETY: as above.
                unsafe { chat_response_free(resp) };
                let want: Vec<[String; 3]> = CALLS
                    .iter()
                    .map(|(i, n, a)| [i.to_string(), n.to_string(), a.to_string()])
                    .collect();
                if (reasoning.as_str(), content.as_str(), &calls) != (REASONING, CONTENT, &want) {
                    return Err(format!(
                        "chat() answered, but not what the server sent: reasoning {reasoning:?}, \
                         content {content:?}, calls {calls:?}"
                    ));
                }
                if REASONING_CALLS.load(Ordering::SeqCst) == 0
                    || CONTENT_CALLS.load(Ordering::SeqCst) == 0
                {
                    return Err(
                        "chat() answered without streaming the text to its callbacks".into(),
                    );
                }
                Ok(match TOOL_CALL_CALLS.load(Ordering::SeqCst) {
                    2 => "answered".to_string(),
                    n => format!(
                        "answered; on_tool_call saw {n} of 2 calls (no memory to print the others)"
                    ),
                })
            },
        );
        drop(server);
        set_overrides(Overrides::default());
        assert!(summary.allocations > 50, "{summary:?}");
        for (mode, tried, outcomes) in &summary.modes {
            // One run per allocation point, each with an outcome.
            assert_eq!(*tried, summary.allocations, "{mode:?}: {summary:?}");
            assert_eq!(*tried, outcomes.values().sum::<usize>() as u64);
            assert!(
                outcomes.keys().any(|o| o.starts_with("error:")),
                "{mode:?}: no run failed at all: {summary:?}"
            );
        }
    });
}

// ---- (a') the same chat() in the other wire formats ------------------------

/// One `chat()` answered in `path`'s format with reasoning (Anthropic: a
/// signed thinking block) and the two calls, walked as (a) is.
fn walk_chat_in(path: &'static str, label: &str) {
    let server = server_with(move |_| {
        let add: &[&str] = &[r#"{"a":2,"#, r#""b":3}"#];
        let mul: &[&str] = &[r#"{"a":6,"b":7}"#];
        if path == "/v1/messages" {
            ScriptedResponse::sse(anthropic_tool_use(
                REASONING,
                "walk-signature",
                &[(CALLS[0].0, CALLS[0].1, add), (CALLS[1].0, CALLS[1].1, mul)],
            ))
        } else {
            ScriptedResponse::ndjson(ollama_tool_calls(
                REASONING,
                &[(CALLS[0].1, CALLS[0].2), (CALLS[1].1, CALLS[1].2)],
            ))
        }
    });
    let url = CString::new(format!("http://{}{path}", server.addr())).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe {
        agent_config_set(
            c"sk-walk-secret".as_ptr(),
            c"walk-model".as_ptr(),
            url.as_ptr(),
        )
    };
    set_overrides(Overrides {
        retry_base_ms: Some(1),
        timeout_ms: Some(3000),
        ..Overrides::default()
    });
    let summary = walk(label, 2, BOTH, Duration::from_secs(30), move |armed| {
        let messages = parse(MESSAGES);
        let tools = parse(TOOLS);
        let resp = armed.run(|| {
            // SAFETY: trees parsed above, borrowed for the call; no callbacks.
            unsafe { chat(messages, tools, 0, None, None, None) }
        });
        // SAFETY: the trees parsed above, deleted once.
        unsafe {
            cJSON_Delete(messages);
            cJSON_Delete(tools);
        }
        if resp.is_null() {
            // SAFETY: a static, NUL-terminated text.
            let why = unsafe { CStr::from_ptr(agent_chat_last_error()) }
                .to_string_lossy()
                .into_owned();
            if why.is_empty() {
                return Err("chat() returned NULL and no error text".into());
            }
            return Ok(format!("error: {}", short(&why, 70)));
        }
        // SAFETY: a live response from chat(), freed once right after.
        let (reasoning, _, mut calls) = unsafe { read_response(resp) };
        // SAFETY: a live response; its first call is read before the free.
        let signature = unsafe {
            let first = cJSON_GetArrayItem((*resp).tool_call, 0);
            let s = cJSON_GetObjectItemCaseSensitive(first, c"x_rtt_thinking_signature".as_ptr());
            (!s.is_null()).then(|| {
                CStr::from_ptr((*s).valuestring)
                    .to_string_lossy()
                    .into_owned()
            })
        };
        // SAFETY: as above.
        unsafe { chat_response_free(resp) };
        if path != "/v1/messages" {
            // Ollama sends no ids: generated ones stand in.
            for c in &mut calls {
                if !c[0].starts_with("call_") {
                    return Err(format!("a generated id {:?}", c[0]));
                }
                c[0].clear();
            }
        }
        let want: Vec<[String; 3]> = CALLS
            .iter()
            .map(|(i, n, a)| {
                let id = if path == "/v1/messages" {
                    i.to_string()
                } else {
                    String::new()
                };
                [id, n.to_string(), a.to_string()]
            })
            .collect();
        if reasoning != REASONING || calls != want {
            return Err(format!("not what the server sent: {reasoning:?} {calls:?}"));
        }
        let want_sig = (path == "/v1/messages").then(|| "walk-signature".to_string());
        if signature != want_sig {
            return Err(format!("signature {signature:?}"));
        }
        Ok("answered".to_string())
    });
    drop(server);
    set_overrides(Overrides::default());
    assert!(summary.allocations > 50, "{summary:?}");
    for (mode, tried, outcomes) in &summary.modes {
        assert_eq!(*tried, summary.allocations, "{mode:?}: {summary:?}");
        assert_eq!(*tried, outcomes.values().sum::<usize>() as u64);
        assert!(
            outcomes.keys().any(|o| o.starts_with("error:")),
            "{mode:?}: no run failed at all: {summary:?}"
        );
    }
}

#[cfg(feature = "provider-anthropic")]
#[test]
fn walk_chat_anthropic() {
    in_child_process("walk_chat_anthropic", CHILD_LIMIT, || {
        walk_chat_in(
            "/v1/messages",
            "(a') chat() in Anthropic Messages, thinking signed",
        )
    });
}

#[cfg(feature = "provider-ollama")]
#[test]
fn walk_chat_ollama() {
    in_child_process("walk_chat_ollama", CHILD_LIMIT, || {
        walk_chat_in("/api/chat", "(a') chat() in Ollama's native chat")
    });
}

// ---- (b) a three-round conversation through the Debug channel -------------

const QUESTION: &[u8] = b"(2+3)*(4+1)\0";
const ANSWER: &str = "The result is 25.";

/// Every assistant message with tool calls is followed by exactly one tool
/// message per call, in any order, before anything else; no tool message
/// answers a call that was not made.
fn well_formed(msgs: &[Msg]) -> Result<(), String> {
    let mut open: Vec<&str> = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        match m.role.as_str() {
            "tool" => match open.iter().position(|id| *id == m.tool_call_id) {
                Some(at) => {
                    open.remove(at);
                }
                None => return Err(format!("message {i}: a tool message for no open call")),
            },
            _ if !open.is_empty() => {
                return Err(format!("message {i}: calls {open:?} got no tool message"));
            }
            "assistant" => open = m.calls.iter().map(String::as_str).collect(),
            _ => {}
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(format!("the last calls {open:?} got no tool message"))
    }
}

#[cfg(feature = "channel-debug")]
#[test]
fn walk_loop_conversation() {
    in_child_process("walk_loop_conversation", CHILD_LIMIT, || {
        let server = Arc::new(server_with(arith_model::respond));
        set_reply_timeout_ms(Some(15_000));
        let srv = server.clone();
        let summary = walk(
            "(b) three-round agent-loop conversation (Debug channel)",
            2,
            BOTH,
            Duration::from_secs(45),
            move |armed| {
                let seen = srv.requests().len();
                let agent = Agent::start(
                    &srv,
                    Overrides {
                        retry_base_ms: Some(1),
                        ..Overrides::default()
                    },
                );
                let mut reply = FixedText::default();
                let sent = armed.run(|| send_message(TYPE_TEXT, QUESTION, &mut |r| reply.set(r)));
                drop(agent);
                for (i, req) in srv.requests().iter().enumerate().skip(seen) {
                    well_formed(&messages_of(req))
                        .map_err(|e| format!("request {} was malformed: {e}", i - seen))?;
                }
                let text = reply.text();
                match sent {
                    Ok(()) if reply.calls != 1 => Err(format!("{} replies", reply.calls)),
                    Ok(()) if text == ANSWER => Ok("answered".into()),
                    Ok(()) if text.starts_with("error:") => {
                        Ok(format!("error reply: {}", short(&text, 90)))
                    }
                    // The loop told the model a tool failed (a tool without
                    // memory for its result), and the model said so.
                    Ok(()) if text.starts_with("A tool failed, so I stop here:") => {
                        Ok(format!("model reply: {}", short(&text, 90)))
                    }
                    Ok(()) => Err(format!("an unexpected reply: {text:?}")),
                    // No memory for the message itself: the sender is told.
                    Err(why @ "out of memory") => Ok(format!("error return: {why}")),
                    Err(why) => Err(format!("no reply: {why}")),
                }
            },
        );
        set_reply_timeout_ms(None);
        assert!(summary.allocations > 100, "{summary:?}");
    });
}

/// The chosen channel of [`walk_extra_debug_channel`]: nothing to start
/// or stop (the Debug channel is the extra one).
#[cfg(feature = "channel-debug")]
static NO_CHANNEL_OPS: rtt_agent::runtime::agent_loop::AgentChannelOps =
    rtt_agent::runtime::agent_loop::AgentChannelOps {
        init: None,
        reset: None,
    };

/// The Debug channel as an extra channel next to the chosen one: its
/// start (its own reply mailbox, a route), a message marked with the route
/// and the reply put there, then the stop, with every allocation failing in
/// turn.
#[cfg(feature = "channel-debug")]
#[test]
fn walk_extra_debug_channel() {
    use rtt_agent::channels::debug::agent_debug_extra_ops;
    use rtt_agent::runtime::agent_loop;
    in_child_process("walk_extra_debug_channel", CHILD_LIMIT, || {
        let server = Arc::new(server_with(arith_model::respond));
        set_reply_timeout_ms(Some(15_000));
        rtt_agent_testkit::agent::configure(
            &server,
            c"sk-walk-extra",
            c"walk-model",
            Overrides {
                retry_base_ms: Some(1),
                ..Overrides::default()
            },
        );
        set_channel(&NO_CHANNEL_OPS);
        agent_loop::set_extra_channels(Some(&[&agent_debug_extra_ops]));
        let summary = walk(
            "(b') a conversation through the Debug channel as an extra channel",
            2,
            BOTH,
            Duration::from_secs(45),
            move |armed| {
                let mut reply = FixedText::default();
                let (start, sent) = armed.run(|| {
                    let start = main_loop_entry();
                    let sent = send_message(TYPE_TEXT, QUESTION, &mut |r| reply.set(r));
                    cleanup_agent_entry();
                    (start, sent)
                });
                let text = reply.text();
                match (start, sent) {
                    (-1, _) => Ok("error return: main_loop_entry -1".into()),
                    (0, Ok(())) if reply.calls != 1 => Err(format!("{} replies", reply.calls)),
                    (0, Ok(())) if text == ANSWER => Ok("answered".into()),
                    (0, Ok(())) if text.starts_with("error:") => {
                        Ok(format!("error reply: {}", short(&text, 90)))
                    }
                    (0, Ok(())) if text.starts_with("A tool failed, so I stop here:") => {
                        Ok(format!("model reply: {}", short(&text, 90)))
                    }
                    (0, Ok(())) => Err(format!("an unexpected reply: {text:?}")),
                    // The extra channel could not open (no memory for its
                    // mailbox or its lock), or no memory for the message or
                    // its route's mark: the sender is told.
                    (0, Err(why @ ("out of memory"
                    | "the debug channel is not running (start the agent with main_loop_entry)"))) => {
                        Ok(format!("error return: {why}"))
                    }
                    (rc, Err(why)) => Err(format!("start {rc}, no reply: {why}")),
                    (rc, Ok(())) => Err(format!("main_loop_entry returned {rc}")),
                }
            },
        );
        agent_loop::set_extra_channels(None);
        set_channel(std::ptr::null());
        set_reply_timeout_ms(None);
        assert!(summary.allocations > 100, "{summary:?}");
    });
}

/// A direct-output tool (`append_tool_ex`): its answer is the reply.
#[cfg(feature = "tool-options")]
unsafe extern "C" fn direct_state(
    _args: *mut cJSON,
    node: *mut rtt_agent::runtime::tools::AgentToolList,
) {
    use rtt_agent::abi::messages::{messages_append, messages_create, messages_destroy};
    // SAFETY: the node handed to the tool, its result replaced as the tool
    // guide does it (a set that could not be made is left NULL).
    unsafe {
        messages_destroy((*node).ret.messages);
        let m = messages_create(1);
        let ok = !m.is_null() && messages_append(m, TYPE_TEXT, c"LED on".as_ptr()) == 0;
        (*node).ret.messages = m;
        (*node).ret.ret = if ok { 0 } else { 1 };
    }
}

/// The model for the direct-output walk: `direct_state` is called; after a
/// tool result (the direct path failed for want of memory) it says what
/// it read.
#[cfg(feature = "tool-options")]
fn direct_model(req: &RecordedRequest) -> ScriptedResponse {
    let msgs = messages_of(req);
    match msgs.last() {
        Some(m) if m.role == "tool" => ScriptedResponse::text(&["model read: ", &m.content]),
        _ => ScriptedResponse::tool_calls(&[("d1", "direct_state", &["{}"])]),
    }
}

/// `append_tool_ex` of a direct-output tool while the loop runs, then one
/// message whose tool call it answers: the tool's text is the reply, or
/// the model's, or an error.
#[cfg(all(feature = "channel-debug", feature = "tool-options"))]
#[test]
fn walk_direct_output() {
    use rtt_agent::abilities::tool_options::AgentToolOptions;
    use rtt_agent::ffi::tools::append_tool_ex;
    in_child_process("walk_direct_output", CHILD_LIMIT, || {
        let server = Arc::new(server_with(direct_model));
        set_reply_timeout_ms(Some(15_000));
        let srv = server.clone();
        let summary = walk(
            "(b) a direct-output tool registered with append_tool_ex and called",
            2,
            BOTH,
            Duration::from_secs(45),
            move |armed| {
                let agent = Agent::start(
                    &srv,
                    Overrides {
                        retry_base_ms: Some(1),
                        ..Overrides::default()
                    },
                );
                let options = AgentToolOptions {
                    timeout_ms: 1000,
                    retries: 0,
                    direct: 1,
                    reserved: [0; 2],
                };
                let def = c"{\"type\":\"function\",\"function\":{\"name\":\"direct_state\",\"description\":\"state\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}}";
                let mut reply = FixedText::default();
                let (registered, sent) = armed.run(|| {
                    // SAFETY: a NUL-terminated text; the tree (or NULL) is
                    // handed over to append_tool_ex.
                    let tree = unsafe { cJSON_Parse(def.as_ptr()) };
                    // SAFETY: `tree` NULL or a detached tree, handed over;
                    // `options` lives across the call, which copies it.
                    let rc = unsafe { append_tool_ex(tree, Some(direct_state), &options) };
                    (
                        rc,
                        send_message(TYPE_TEXT, b"state?\0", &mut |r| reply.set(r)),
                    )
                });
                drop(agent);
                let text = reply.text();
                match sent {
                    Ok(()) if reply.calls != 1 => Err(format!("{} replies", reply.calls)),
                    Ok(()) if text == "LED on" && registered == 0 => Ok("answered".into()),
                    Ok(()) if text.starts_with("model read: ") => {
                        Ok(format!("model reply: {}", short(&text, 90)))
                    }
                    Ok(()) if text.starts_with("error:") => {
                        Ok(format!("error reply: {}", short(&text, 90)))
                    }
                    Ok(()) => Err(format!(
                        "an unexpected reply: {text:?} (append_tool_ex: {registered})"
                    )),
                    Err(why @ "out of memory") => Ok(format!("error return: {why}")),
                    Err(why) => Err(format!("no reply: {why}")),
                }
            },
        );
        set_reply_timeout_ms(None);
        assert!(summary.allocations > 50, "{summary:?}");
    });
}

/// The model for the notes and sub-agent walks: "remember" calls
/// remember(k, v); "calc" calls the sub-agent `calc`; the sub-agent (its
/// system prompt first) answers "sub: 5"; after a tool result: `model
/// read: <it>`.
#[cfg(any(feature = "notes", feature = "sub-agents"))]
fn abilities_model(req: &RecordedRequest) -> ScriptedResponse {
    let msgs = messages_of(req);
    if msgs.first().is_some_and(|m| m.content == "You are calc.") {
        return ScriptedResponse::text(&["sub: 5"]);
    }
    match msgs.last() {
        Some(m) if m.role == "tool" => ScriptedResponse::text(&["model read: ", &m.content]),
        Some(m) if m.content == "calc" => {
            ScriptedResponse::tool_calls(&[("s1", "calc", &[r#"{"task":"2+3"}"#])])
        }
        _ => ScriptedResponse::tool_calls(&[("n1", "remember", &[r#"{"key":"k","text":"v"}"#])]),
    }
}

/// One question through the Debug channel under `armed`, judged: the
/// expected reply is "answered"; a model's reply after a failed tool, an
/// error reply or an out-of-memory return are the other allowed ends.
#[cfg(all(
    feature = "channel-debug",
    any(feature = "notes", feature = "sub-agents")
))]
fn ask_walked(
    armed: &mut rtt_agent_testkit::alloc_walk::Armed,
    question: &[u8],
    answer: &str,
    before: impl FnOnce(),
) -> Result<String, String> {
    let mut reply = FixedText::default();
    let sent = armed.run(|| {
        before();
        send_message(TYPE_TEXT, question, &mut |r| reply.set(r))
    });
    let text = reply.text();
    match sent {
        Ok(()) if reply.calls != 1 => Err(format!("{} replies", reply.calls)),
        Ok(()) if text == answer => Ok("answered".into()),
        Ok(()) if text.starts_with("model read: ") => {
            Ok(format!("model reply: {}", short(&text, 90)))
        }
        Ok(()) if text.starts_with("error:") => Ok(format!("error reply: {}", short(&text, 90))),
        Ok(()) => Err(format!("an unexpected reply: {text:?}")),
        Err(why @ "out of memory") => Ok(format!("error return: {why}")),
        Err(why) => Err(format!("no reply: {why}")),
    }
}

/// The notes: the agent's start reads the file and registers the tools;
/// one message whose remember call writes it.
#[cfg(all(feature = "channel-debug", feature = "notes"))]
#[test]
fn walk_notes() {
    in_child_process("walk_notes", CHILD_LIMIT, || {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("walk-notes");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("notes.txt");
        // SAFETY: set before any agent thread runs, in this child alone.
        unsafe { std::env::set_var("RTT_AGENT_NOTES_FILE", &file) };
        let server = Arc::new(server_with(abilities_model));
        set_reply_timeout_ms(Some(15_000));
        let srv = server.clone();
        let summary = walk(
            "(g) notes: the start reads the file, a remember call writes it",
            2,
            BOTH,
            Duration::from_secs(45),
            move |armed| {
                let _ = std::fs::remove_file(&file);
                let agent = Agent::start(
                    &srv,
                    Overrides {
                        retry_base_ms: Some(1),
                        ..Overrides::default()
                    },
                );
                let got = ask_walked(armed, b"remember\0", "model read: remembered \"k\"", || {});
                drop(agent);
                got
            },
        );
        set_reply_timeout_ms(None);
        assert!(summary.allocations > 50, "{summary:?}");
    });
}

/// A sub-agent: its profile declared under the walk, then one message whose
/// call runs it (its own context, its request, its answer).
#[cfg(all(feature = "channel-debug", feature = "sub-agents"))]
#[test]
fn walk_sub_agent() {
    use rtt_agent::ffi::subagent::{agent_profile_add, agent_profile_del, AgentProfile};
    in_child_process("walk_sub_agent", CHILD_LIMIT, || {
        let server = Arc::new(server_with(abilities_model));
        set_reply_timeout_ms(Some(15_000));
        let srv = server.clone();
        let profile = AgentProfile {
            name: c"calc".as_ptr(),
            description: c"adds".as_ptr(),
            system_prompt: c"You are calc.".as_ptr(),
            api_url: std::ptr::null(),
            api_key: std::ptr::null(),
            model: std::ptr::null(),
            tools: c"add".as_ptr(),
        };
        // SAFETY: a valid profile of static strings (copied).
        assert_eq!(unsafe { agent_profile_add(&profile) }, 0);
        let summary = walk(
            "(g) a sub-agent run as a tool (its context, request and answer)",
            2,
            BOTH,
            Duration::from_secs(45),
            move |armed| {
                let agent = Agent::start(
                    &srv,
                    Overrides {
                        retry_base_ms: Some(1),
                        ..Overrides::default()
                    },
                );
                let got = ask_walked(armed, b"calc\0", "model read: sub: 5", || {});
                drop(agent);
                got
            },
        );
        // SAFETY: a NUL-terminated name.
        unsafe { agent_profile_del(c"calc".as_ptr()) };
        set_reply_timeout_ms(None);
        assert!(summary.allocations > 50, "{summary:?}");
    });
}

/// The schedule: the start reads a file of one entry and starts its thread;
/// agent_schedule add, list and del (the file written each time).
#[cfg(feature = "schedule")]
#[test]
fn walk_schedule() {
    use rtt_agent::ffi::schedule::{agent_schedule_add, agent_schedule_del};
    in_child_process("walk_schedule", CHILD_LIMIT, || {
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("walk-schedule");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("sched.txt");
        // SAFETY: set before any agent thread runs, in this child alone.
        unsafe { std::env::set_var("RTT_AGENT_SCHEDULE_FILE", &file) };
        let server = Arc::new(server_with(arith_model::respond));
        point_at(&server);
        set_overrides(Overrides {
            retry_base_ms: Some(1),
            ..Overrides::default()
        });
        let summary = walk(
            "(g) schedule: start with one entry, add, list, run (its answer), del",
            2,
            BOTH,
            Duration::from_secs(30),
            move |armed| {
                let entries = rtt_agent::wire::notes::Notes {
                    summary: b"2".to_vec(),
                    notes: vec![rtt_agent::wire::notes::Note {
                        key: b"1 every 24h".to_vec(),
                        text: b"later".to_vec(),
                    }],
                };
                let mut bytes = Vec::new();
                rtt_agent::wire::notes::write_with(
                    rtt_agent::wire::notes::SCHEDULE_HEAD,
                    &entries,
                    &mut bytes,
                )
                .unwrap();
                std::fs::write(&file, bytes).unwrap();
                set_channel(start_channel());
                let (started, added, deleted, ran) = armed.run(|| {
                    let started = main_loop_entry();
                    // SAFETY: NUL-terminated strings, copied.
                    let added = unsafe {
                        agent_schedule_add(c"every 24h".as_ptr(), c"much later".as_ptr())
                    };
                    let mut out = rtt_agent::base::text_buf::TextBuf::new();
                    rtt_agent::abilities::schedule::list(&mut out);
                    drop(out);
                    // The run path: put, the loop's answer, the reply logged.
                    let ran = if added > 0 {
                        rtt_agent::abilities::schedule::run_now(added as u32)
                    } else {
                        Ok(())
                    };
                    let until = std::time::Instant::now() + Duration::from_secs(3);
                    while rtt_agent::runtime::agent_loop::is_busy()
                        && std::time::Instant::now() < until
                    {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    let deleted = if added > 0 {
                        agent_schedule_del(added)
                    } else {
                        0
                    };
                    cleanup_agent_entry();
                    (started, added, deleted, ran)
                });
                match (started, added, deleted) {
                    (0, 2, 0) if ran.is_ok() => Ok("answered".into()),
                    (0, 2, 0) => Ok(format!("run refused: {ran:?}")),
                    (0, a, _) if a < 0 => Ok(format!("add refused: {a}")),
                    (0, _, d) => Ok(format!("del refused: {d}")),
                    (s, _, _) => Ok(format!("main_loop_entry {s}")),
                }
            },
        );
        assert!(summary.allocations > 30, "{summary:?}");
    });
}

// ---- (c) init_agent/cleanup_agent and main_loop_entry/cleanup_agent_entry --

/// A start that did not happen, as the log tells it.
fn refused(log: &str) -> String {
    if log.contains("out of memory") {
        "refused: out of memory (logged)".into()
    } else {
        "refused (nothing logged)".into()
    }
}

/// The channel the start and stop walks start: the Debug channel, or
/// without it the board's (the CLI channel of the old feature set).
fn start_channel() -> *const rtt_agent::runtime::agent_loop::AgentChannelOps {
    #[cfg(feature = "channel-debug")]
    return std::ptr::addr_of!(rtt_agent::channels::debug::agent_debug_ops);
    #[cfg(not(feature = "channel-debug"))]
    return std::ptr::null();
}

#[test]
fn walk_init_and_cleanup() {
    in_child_process("walk_init_and_cleanup", CHILD_LIMIT, || {
        set_channel(start_channel());
        let summary = walk(
            "(c) init_agent() then cleanup_agent()",
            2,
            BOTH,
            Duration::from_secs(30),
            |armed| {
                console::rt_host_console_capture(1);
                let outcome = armed.run(|| {
                    init_agent();
                    // Checked under the fault too: reading allocates nothing.
                    // SAFETY: the registry's array (NULL or live), only read.
                    let tools = unsafe { cJSON_GetArraySize(get_agent_tools()) };
                    cleanup_agent();
                    tools
                });
                let log = console::take_captured();
                console::rt_host_console_capture(0);
                let started = log.contains("[mem] agent started");
                if !log.contains("[mem] cleanup done") {
                    return Err(format!("cleanup_agent logged no end: {log}"));
                }
                if !get_agent_tools().is_null() {
                    return Err("tools still registered after cleanup_agent".into());
                }
                Ok(match (started, outcome) {
                    (true, 3) => "answered".to_string(),
                    (true, n) => format!("started with {n} of 3 tools (a registration failed)"),
                    (false, _) => refused(&log),
                })
            },
        );
        set_channel(std::ptr::null());
        assert!(summary.allocations > 20, "{summary:?}");
    });
}

#[test]
fn walk_main_loop_entry_and_cleanup() {
    in_child_process("walk_main_loop_entry_and_cleanup", CHILD_LIMIT, || {
        set_channel(start_channel());
        let summary = walk(
            "(c) main_loop_entry() then cleanup_agent_entry()",
            2,
            BOTH,
            Duration::from_secs(30),
            |armed| {
                console::rt_host_console_capture(1);
                let (start, tools, stop) = armed.run(|| {
                    let start = main_loop_entry();
                    // SAFETY: the registry's array (NULL or live), only read.
                    let tools = unsafe { cJSON_GetArraySize(get_agent_tools()) };
                    (start, tools, cleanup_agent_entry())
                });
                let log = console::take_captured();
                console::rt_host_console_capture(0);
                if stop != 0 {
                    return Err(format!("cleanup_agent_entry returned {stop}"));
                }
                match (start, log.contains("[mem] agent started")) {
                    (0, true) if tools == 3 => Ok("answered".into()),
                    (0, true) => Ok(format!(
                        "started with {tools} of 3 tools (a registration failed)"
                    )),
                    // The thread ran, init_agent found no memory.
                    (0, false) => Ok(refused(&log)),
                    (-1, _) => Ok("error return: main_loop_entry -1".into()),
                    (rc, _) => Err(format!("main_loop_entry returned {rc}")),
                }
            },
        );
        set_channel(std::ptr::null());
        assert!(summary.allocations > 20, "{summary:?}");
    });
}

// ---- (e) a multimodal message: the image uploaded, then the turn ----------

#[cfg(all(feature = "multimodal", feature = "channel-debug"))]
#[test]
fn walk_multimodal_upload() {
    use rtt_agent::abi::messages::TYPE_IMAGE;
    use rtt_agent::abilities::multimodal::{self, Mode as SendMode};
    use rtt_agent_testkit::file_server::FileServer;
    in_child_process("walk_multimodal_upload", CHILD_LIMIT, || {
        let server = Arc::new(server_with(|_| ScriptedResponse::text(&["A cat."])));
        let files = FileServer::start(vec![]).expect("start the file server");
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/alloc-walk");
        std::fs::create_dir_all(&dir).unwrap();
        let image = dir.join("cat.png");
        std::fs::write(
            &image,
            (0..1200u32).map(|i| (i * 31) as u8).collect::<Vec<u8>>(),
        )
        .unwrap();
        let mut path = image.to_string_lossy().into_owned().into_bytes();
        path.push(0);
        multimodal::set_overrides(multimodal::Overrides {
            mode: Some(SendMode::Upload),
            upload_url: Some(CString::new(files.upload_url()).unwrap()),
            download_url: Some(CString::new(files.download_url()).unwrap()),
            max_bytes: None,
        });
        set_reply_timeout_ms(Some(15_000));
        let srv = server.clone();
        let summary = walk(
            "(e) an image uploaded to the file server, then the turn (Debug channel)",
            2,
            BOTH,
            Duration::from_secs(45),
            move |armed| {
                let agent = Agent::start(
                    &srv,
                    Overrides {
                        retry_base_ms: Some(1),
                        ..Overrides::default()
                    },
                );
                let mut reply = FixedText::default();
                let sent = armed.run(|| send_message(TYPE_IMAGE, &path, &mut |r| reply.set(r)));
                drop(agent);
                let text = reply.text();
                match sent {
                    Ok(()) if reply.calls != 1 => Err(format!("{} replies", reply.calls)),
                    Ok(()) if text == "A cat." => Ok("answered".into()),
                    Ok(()) if text.starts_with("error:") => {
                        Ok(format!("error reply: {}", short(&text, 90)))
                    }
                    Ok(()) => Err(format!("an unexpected reply: {text:?}")),
                    Err(why @ "out of memory") => Ok(format!("error return: {why}")),
                    Err(why) => Err(format!("no reply: {why}")),
                }
            },
        );
        set_reply_timeout_ms(None);
        multimodal::set_overrides(multimodal::Overrides::default());
        assert!(summary.allocations > 20, "{summary:?}");
        for (mode, tried, outcomes) in &summary.modes {
            assert_eq!(*tried, summary.allocations, "{mode:?}: {summary:?}");
            if *mode == Mode::FailNth {
                // Single failures reach the upload's own allocations.
                assert!(
                    outcomes
                        .keys()
                        .any(|o| o.contains("the upload of the image")),
                    "{mode:?}: no run failed in the upload: {summary:?}"
                );
            }
        }
        assert!(!files.uploads().is_empty());
    });
}

// ---- (f) an MCP client's session: initialize, tools/call, DELETE ---------

/// One answer of the MCP server: status (0 when it closed without one),
/// its session id header if any, its body.
struct McpAnswer {
    status: u16,
    session: Option<String>,
    body: String,
}

fn mcp_request(port: u16, head: &str, body: &str) -> McpAnswer {
    use std::io::{Read, Write};
    let mut answer = McpAnswer {
        status: 0,
        session: None,
        body: String::new(),
    };
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return answer;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
    let _ = write!(s, "{head}Content-Length: {}\r\n\r\n{body}", body.len());
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    answer.status = head.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    answer.session = head
        .lines()
        .find_map(|l| l.strip_prefix("Mcp-Session-Id: "))
        .map(str::to_string);
    answer.body = body.to_string();
    answer
}

/// What an answer says, for the walk: `Ok(None)` the expected result,
/// `Ok(Some(why))` a clear refusal for lack of memory, `Err` anything else.
fn mcp_outcome(what: &str, a: &McpAnswer, expected: &str) -> Result<Option<String>, String> {
    match a.status {
        200 if a.body.contains(expected) => Ok(None),
        200 | 503 if a.body.contains("out of memory") => {
            Ok(Some(format!("{what}: out of memory ({})", a.status)))
        }
        // A tool without memory for its result reports a failure.
        200 if a.body.contains("\"isError\":true") && a.body.contains("failed") => {
            Ok(Some(format!("{what}: the tool failed")))
        }
        0 => Ok(Some(format!("{what}: closed without an answer"))),
        s => Err(format!("{what}: {s} {}", short(&a.body, 120))),
    }
}

#[cfg(feature = "mcp-server")]
#[test]
fn walk_mcp_session() {
    use rtt_agent::abilities::mcp_server::server;
    in_child_process("walk_mcp_session", CHILD_LIMIT, || {
        let llm = Arc::new(server_with(arith_model::respond));
        let srv = llm.clone();
        server::set_overrides(server::Overrides {
            enabled: Some(true),
            port: Some(0),
            allow_anonymous: Some(true),
            ..Default::default()
        });
        let summary = walk(
            "(f) an MCP session: initialize, tools/call add, DELETE (the server's thread)",
            2,
            BOTH,
            Duration::from_secs(30),
            move |armed| {
                let agent = Agent::start(&srv, Overrides::default());
                let Some(port) = server::port() else {
                    drop(agent);
                    return Ok("the server did not start".into());
                };
                // This thread plays the client: its own allocations are
                // neither counted nor failed; the server's thread's are.
                heap::exclude_this_thread(true);
                let answers = armed.run(|| {
                    let init = mcp_request(
                        port,
                        "POST /mcp HTTP/1.1\r\n",
                        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
                    );
                    let Some(sid) = init.session.clone() else {
                        return vec![init];
                    };
                    let call = mcp_request(
                        port,
                        &format!("POST /mcp HTTP/1.1\r\nMcp-Session-Id: {sid}\r\n"),
                        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
                    );
                    let end = mcp_request(
                        port,
                        &format!("DELETE /mcp HTTP/1.1\r\nMcp-Session-Id: {sid}\r\n"),
                        "",
                    );
                    vec![init, call, end]
                });
                heap::exclude_this_thread(false);
                drop(agent);
                let expected = [
                    ("initialize", "\"protocolVersion\":\"2025-11-25\""),
                    (
                        "tools/call",
                        r#"{"type":"text","text":"2 + 3 = 5"}],"isError":false"#,
                    ),
                    ("DELETE", ""),
                ];
                let mut notes = Vec::new();
                for (a, (what, want)) in answers.iter().zip(expected) {
                    if let Some(n) = mcp_outcome(what, a, want)? {
                        notes.push(n);
                    }
                }
                Ok(if notes.is_empty() {
                    "answered".into()
                } else {
                    notes.join("; ")
                })
            },
        );
        server::set_overrides(server::Overrides::default());
        assert!(summary.allocations > 10, "{summary:?}");
    });
}

/// The 2026-07-28 envelope of a request's `params`.
#[cfg(feature = "mcp-server")]
const MCP_2026_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// The newest revision's stateless requests: `server/discover`, then
/// `tools/call add` (no initialize, no session).
#[cfg(feature = "mcp-server")]
#[test]
fn walk_mcp_2026() {
    use rtt_agent::abilities::mcp_server::server;
    in_child_process("walk_mcp_2026", CHILD_LIMIT, || {
        let llm = Arc::new(server_with(arith_model::respond));
        let srv = llm.clone();
        server::set_overrides(server::Overrides {
            enabled: Some(true),
            port: Some(0),
            allow_anonymous: Some(true),
            ..Default::default()
        });
        let summary = walk(
            "(f) MCP 2026-07-28: server/discover and tools/call add, stateless (the server's thread)",
            2,
            BOTH,
            Duration::from_secs(30),
            move |armed| {
                let agent = Agent::start(&srv, Overrides::default());
                let Some(port) = server::port() else {
                    drop(agent);
                    return Ok("the server did not start".into());
                };
                heap::exclude_this_thread(true);
                let answers = armed.run(|| {
                    let discover = mcp_request(
                        port,
                        "POST /mcp HTTP/1.1\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: server/discover\r\n",
                        &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{{MCP_2026_META}}}}}"#),
                    );
                    let call = mcp_request(
                        port,
                        "POST /mcp HTTP/1.1\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: add\r\n",
                        &format!(r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"add","arguments":{{"a":2,"b":3}},{MCP_2026_META}}}}}"#),
                    );
                    vec![discover, call]
                });
                heap::exclude_this_thread(false);
                drop(agent);
                let expected = [
                    ("server/discover", r#""supportedVersions":["2026-07-28"]"#),
                    ("tools/call", r#"{"type":"text","text":"2 + 3 = 5"}],"isError":false"#),
                ];
                let mut notes = Vec::new();
                for (a, (what, want)) in answers.iter().zip(expected) {
                    if let Some(n) = mcp_outcome(what, a, want)? {
                        notes.push(n);
                    }
                }
                Ok(if notes.is_empty() {
                    "answered".into()
                } else {
                    notes.join("; ")
                })
            },
        );
        server::set_overrides(server::Overrides::default());
        assert!(summary.allocations > 10, "{summary:?}");
    });
}

// ---- (g) the MCP client: start with a remote server, a remote call, stop --

#[cfg(all(feature = "mcp-client", feature = "channel-debug"))]
#[test]
fn walk_mcp_client() {
    use rtt_agent::abilities::mcp_client::servers;
    use rtt_agent_testkit::agent::configure_at;
    use rtt_agent_testkit::mcp_server::{python, remote_model, McpServer};
    // A failure, not a skip: the test command installs what the venv needs.
    let python = python().expect("a python3 venv with the MCP SDK (tests/mcp/venv.sh failed)");
    in_child_process("walk_mcp_client", CHILD_LIMIT, move || {
        // The test side: out of the figures and of injection.
        heap::exclude_this_thread(true);
        let mcp = McpServer::start(&python, &["--json"]);
        heap::exclude_this_thread(false);
        servers::reset();
        servers::add(mcp.url.as_bytes()).unwrap();
        let server = Arc::new(server_with(remote_model));
        set_reply_timeout_ms(Some(15_000));
        let srv = server.clone();
        let summary = walk(
            "(f) main_loop_entry() with a remote MCP server, a remote tool call, cleanup_agent_entry()",
            2,
            BOTH,
            Duration::from_secs(45),
            move |armed| {
                configure_at(
                    &srv.url(),
                    c"sk-walk",
                    c"walk-model",
                    Overrides {
                        retry_base_ms: Some(1),
                        ..Overrides::default()
                    },
                );
                set_channel(start_channel());
                console::rt_host_console_capture(1);
                let mut reply = FixedText::default();
                let (start, sent, stop) = armed.run(|| {
                    let start = main_loop_entry();
                    let sent = if start == 0 {
                        Some(send_message(TYPE_TEXT, b"sub please\0", &mut |r| reply.set(r)))
                    } else {
                        None
                    };
                    (start, sent, cleanup_agent_entry())
                });
                let log = console::take_captured();
                console::rt_host_console_capture(0);
                set_channel(std::ptr::null());
                set_overrides(Overrides::default());
                if stop != 0 {
                    return Err(format!("cleanup_agent_entry returned {stop}"));
                }
                let text = reply.text();
                match (start, sent) {
                    (-1, _) => Ok("error return: main_loop_entry -1".into()),
                    (_, None) => Err("main_loop_entry failed without -1".into()),
                    (_, Some(Err(why @ "out of memory"))) => Ok(format!("error return: {why}")),
                    // The agent came up without its channel (no memory for
                    // it: logged), so nothing could be sent.
                    (_, Some(Err(why)))
                        if why.starts_with("the debug channel is not running")
                            && log.contains("the channel did not start") =>
                    {
                        Ok("channel did not start (logged)".into())
                    }
                    (_, Some(Err(why))) => Err(format!("no reply: {why}")),
                    (_, Some(Ok(()))) if text == "Result: 10 - 4 = 6" => Ok("answered".into()),
                    // The remote tool was left out (no memory at start): the
                    // model's call is answered with the tools there are.
                    (_, Some(Ok(())))
                        if text.starts_with("Result: error: there is no tool named \"m1_sub\"")
                            && (log.contains("W/agent: mcp: ") || log.contains("E/agent: mcp: ")) =>
                    {
                        Ok("remote tool left out (logged)".into())
                    }
                    (_, Some(Ok(())))
                        if text.starts_with("Result: error:") || text.starts_with("error:") =>
                    {
                        Ok(format!("error reply: {}", short(&text, 90)))
                    }
                    // No memory for the tool message's content: the context
                    // records it empty (src/ffi/context.rs, as for a C tool:
                    // walk (b)'s "A tool failed, so I stop here: "), and the
                    // model answers with nothing after its colon.
                    (_, Some(Ok(()))) if text == "Result: " => {
                        Ok("model reply: an empty tool result (no memory for its content)".into())
                    }
                    (_, Some(Ok(()))) => Err(format!("an unexpected reply: {text:?}")),
                }
            },
        );
        set_reply_timeout_ms(None);
        servers::reset();
        drop(mcp);
        assert!(summary.allocations > 50, "{summary:?}");
    });
}
