//! Tool options (`PKG_AGENT_TOOL_OPTIONS`, AgentExt.h): direct output, a C
//! tool's deadline, a remote MCP tool's timeout and retries. The agent runs
//! its real loop against the scripted model over TCP; the remote tools are
//! served by a scripted JSON-RPC server over TCP (the MCP client's wire).
#![cfg(feature = "tool-options")]

use rtt_agent::abilities::mcp_client::servers;
use rtt_agent::abilities::tool_options::AgentToolOptions;
use rtt_agent::cjson::sys::*;
use rtt_agent::ffi::messages::{messages_append, messages_create, messages_destroy};
use rtt_agent::ffi::tools::{agent_tool_deadline_ms, agent_tool_set_options, append_tool_ex};
use rtt_agent::host::console;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent::runtime::tools::AgentToolList;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A definition with no parameters.
fn definition(name: &str) -> *mut cJSON {
    let def = CString::new(format!(
        r#"{{"type":"function","function":{{"name":"{name}","description":"test tool","parameters":{{"type":"object","properties":{{}}}}}}}}"#
    ))
    .unwrap();
    // SAFETY: a NUL-terminated string; the tree is handed to the caller.
    let tree = unsafe { cJSON_Parse(def.as_ptr()) };
    assert!(!tree.is_null());
    tree
}

/// Set `node`'s result as a C tool does: one text, `ok` or not.
unsafe fn answer(node: *mut AgentToolList, text: &str, ok: bool) {
    let text = CString::new(text).unwrap();
    // SAFETY: the node handed to the tool; its old result is its own.
    unsafe {
        messages_destroy((*node).ret.messages);
        let m = messages_create(1);
        messages_append(m, 0, text.as_ptr());
        (*node).ret.messages = m;
        (*node).ret.ret = if ok { 0 } else { 1 };
    }
}

/// Direct output: answers the board's state.
unsafe extern "C" fn board_state(_args: *mut cJSON, node: *mut AgentToolList) {
    // SAFETY: the node handed to the tool.
    unsafe { answer(node, "LED on, 23.5 C", true) };
}

/// Direct output, but it fails: its error goes to the model.
unsafe extern "C" fn broken_state(_args: *mut cJSON, node: *mut AgentToolList) {
    // SAFETY: the node handed to the tool.
    unsafe { answer(node, "error: sensor not found", false) };
}

/// What `agent_tool_deadline_ms()` said inside the tools below.
static SEEN_LEFT: AtomicI32 = AtomicI32::new(-2);
static SEEN_LEFT_PLAIN: AtomicI32 = AtomicI32::new(-2);

/// Reads its deadline, then takes 300 ms (its timeout is 200 ms).
unsafe extern "C" fn slow_sensor(_args: *mut cJSON, node: *mut AgentToolList) {
    SEEN_LEFT.store(agent_tool_deadline_ms(), Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: the node handed to the tool.
    unsafe { answer(node, "sensor read", true) };
}

/// Reads its deadline; it has no options.
unsafe extern "C" fn plain_sensor(_args: *mut cJSON, node: *mut AgentToolList) {
    SEEN_LEFT_PLAIN.store(agent_tool_deadline_ms(), Ordering::SeqCst);
    // SAFETY: the node handed to the tool.
    unsafe { answer(node, "plain read", true) };
}

/// The model: a user message naming a tool calls it; after a tool result it
/// answers `Result: <the result>`.
fn model(req: &RecordedRequest) -> ScriptedResponse {
    let msgs = messages_of(req);
    let last = msgs.last().cloned().unwrap();
    if last.role == "tool" {
        return ScriptedResponse::text(&["Result: ", &last.content]);
    }
    let tool = last
        .content
        .split_whitespace()
        .next()
        .unwrap_or("none")
        .to_string();
    ScriptedResponse::tool_calls(&[("call_1", &tool, &["{}"])])
}

fn options(timeout_ms: u32, retries: u8, direct: bool) -> AgentToolOptions {
    AgentToolOptions {
        timeout_ms,
        retries,
        direct: direct as u8,
        reserved: [0; 2],
    }
}

fn register(
    name: &str,
    f: unsafe extern "C" fn(*mut cJSON, *mut AgentToolList),
    o: Option<AgentToolOptions>,
) {
    let p = o.as_ref().map_or(std::ptr::null(), |o| o as *const _);
    // SAFETY: a fresh definition handed over; `p` NULL or a live value.
    assert_eq!(unsafe { append_tool_ex(definition(name), Some(f), p) }, 0);
}

#[test]
fn tool_options() {
    let _serial = lock();
    direct_output_and_deadlines();
    remote_timeout_and_retries();
}

fn direct_output_and_deadlines() {
    servers::reset();
    let llm = LlmServer::with_model(model).unwrap();
    let baseline = settled_used();
    console::rt_host_console_capture(1);
    let agent = Agent::start(&llm, Overrides::default());
    // Appended from this thread while the loop runs: they join from the
    // next message on.
    register("board_state", board_state, Some(options(0, 0, true)));
    register("broken_state", broken_state, Some(options(0, 0, true)));
    register("slow_sensor", slow_sensor, Some(options(200, 0, false)));
    register("plain_sensor", plain_sensor, None);
    assert_eq!(agent.ask("hello"), "Result: error: there is no tool named \"hello\"; the tools are: add, mul, compare, board_state, broken_state, slow_sensor, plain_sensor");

    // Direct output: the tool's text is the reply, and the model is asked once.
    let before = llm.requests().len();
    assert_eq!(agent.ask("board_state please"), "LED on, 23.5 C");
    assert_eq!(
        llm.requests().len(),
        before + 1,
        "the model was asked again"
    );
    // The next request carries it as the assistant's answer.
    let before = llm.requests().len();
    assert_eq!(agent.ask("plain_sensor"), "Result: plain read");
    let msgs = messages_of(&llm.requests()[before]);
    let n = msgs.len();
    assert_eq!(
        (
            msgs[n - 3].role.as_str(),
            msgs[n - 2].role.as_str(),
            msgs[n - 2].content.as_str()
        ),
        ("tool", "assistant", "LED on, 23.5 C"),
        "{msgs:?}"
    );
    assert_eq!(msgs[n - 1].content, "plain_sensor");
    // The test's own allocations count in the heap figures too.
    drop(msgs);
    // No options: no deadline.
    assert_eq!(SEEN_LEFT_PLAIN.load(Ordering::SeqCst), -1);

    // A direct tool that fails goes to the model as any failure.
    let before = llm.requests().len();
    assert_eq!(agent.ask("broken_state"), "Result: error: sensor not found");
    assert_eq!(llm.requests().len(), before + 2);

    // A C tool reads its deadline; running past it is logged, its result kept.
    assert_eq!(agent.ask("slow_sensor"), "Result: sensor read");
    let left = SEEN_LEFT.load(Ordering::SeqCst);
    assert!((150..=200).contains(&left), "deadline left: {left}");
    // Outside a tool there is none.
    assert_eq!(agent_tool_deadline_ms(), -1);

    drop(agent);
    assert_eq!(
        settled_used(),
        baseline,
        "heap not back after the tools with options"
    );
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert!(log.contains("the tool slow_sensor ran 3"), "{log}");
    assert!(log.contains("ms, past its timeout of 200 ms"), "{log}");
}

/// Calls of `tools/call` the scripted remote server got.
static REMOTE_CALLS: AtomicUsize = AtomicUsize::new(0);

/// A remote MCP server: one tool, `slow`, whose call answers after 3 s, and
/// `flaky`, whose first call in each pair fails with 500.
fn remote_server(req: &RecordedRequest) -> ScriptedResponse {
    let body = req.body_text();
    let id = body
        .split(r#""id":"#)
        .nth(1)
        .and_then(|rest| rest.split([',', '}']).next())
        .unwrap_or("0")
        .to_string();
    let result = |r: &str| {
        ScriptedResponse::json(
            200,
            &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{r}}}"#),
        )
    };
    if body.contains(r#""method":"initialize""#) {
        return result(
            r#"{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"scripted","version":"1"}}"#,
        );
    }
    if body.contains(r#""method":"notifications/"#) {
        return ScriptedResponse::raw(202, "application/json", "");
    }
    if body.contains(r#""method":"tools/list""#) {
        return result(
            r#"{"tools":[{"name":"slow","description":"takes 3 s","inputSchema":{"type":"object","properties":{}}},{"name":"flaky","description":"fails once","inputSchema":{"type":"object","properties":{}}}]}"#,
        );
    }
    let n = REMOTE_CALLS.fetch_add(1, Ordering::SeqCst);
    if body.contains(r#""name":"slow""#) {
        return result(r#"{"content":[{"type":"text","text":"slow done"}]}"#)
            .delay(Duration::from_secs(3));
    }
    if n % 2 == 0 {
        return ScriptedResponse::error(500, "try again", "server_error", None);
    }
    result(r#"{"content":[{"type":"text","text":"flaky done"}]}"#)
}

fn remote_timeout_and_retries() {
    let remote = LlmServer::with_model(remote_server).unwrap();
    servers::reset();
    servers::add(format!("{}/mcp", remote.base_url()).as_bytes()).unwrap();
    // Set by name before the agent starts: the remote tools' names.
    let set = |name: &CStr, o: Option<AgentToolOptions>| {
        let p = o.as_ref().map_or(std::ptr::null(), |o| o as *const _);
        // SAFETY: a NUL-terminated name; `p` NULL or a live value.
        unsafe { agent_tool_set_options(name.as_ptr(), p) }
    };
    // Cleared, options set by name give their memory back.
    let before_options = settled_used();
    assert_eq!(set(c"m1_slow", Some(options(500, 0, false))), 0);
    assert_eq!(set(c"m1_flaky", Some(options(1, 1, false))), 0);
    assert!(settled_used() > before_options);
    assert_eq!(set(c"m1_flaky", None), 0);
    assert_eq!(set(c"m1_slow", None), 0);
    assert_eq!(settled_used(), before_options);
    assert_ne!(set(c"", None), 0);
    assert_eq!(set(c"m1_slow", Some(options(500, 0, false))), 0);
    let llm = LlmServer::with_model(model).unwrap();
    let agent = Agent::start(&llm, Overrides::default());

    // The slow call ends at its 500 ms timeout; the model reads why and the
    // turn goes on to its answer.
    let started = Instant::now();
    let reply = agent.ask("m1_slow");
    let took = started.elapsed();
    assert!(
        reply.starts_with("Result: error: the remote tool \"m1_slow\" could not be called (")
            && reply.contains("no answer within the tool's timeout of 500 ms"),
        "{reply}"
    );
    assert!(took < Duration::from_millis(2500), "took {took:?}");

    // Without retries a failed call is sent once (it may have run)...
    REMOTE_CALLS.store(0, Ordering::SeqCst);
    let reply = agent.ask("m1_flaky");
    assert!(
        reply.contains("could not be called") && reply.contains("500"),
        "{reply}"
    );
    assert_eq!(REMOTE_CALLS.load(Ordering::SeqCst), 1);
    drop(agent);

    // ...with retries it is sent again, after a back-off.
    assert_eq!(set(c"m1_flaky", Some(options(5000, 2, false))), 0);
    let agent = Agent::start(&llm, Overrides::default());
    REMOTE_CALLS.store(0, Ordering::SeqCst);
    assert_eq!(agent.ask("m1_flaky"), "Result: flaky done");
    assert_eq!(REMOTE_CALLS.load(Ordering::SeqCst), 2);
    drop(agent);

    // Set by name, they stayed across the restart above; cleared for the
    // next test.
    assert_eq!(set(c"m1_slow", None), 0);
    assert_eq!(set(c"m1_flaky", None), 0);
    servers::reset();
}
