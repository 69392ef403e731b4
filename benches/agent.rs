//! Figures, not tests: heap peak of one `chat()` with a 20-message context
//! and 3 tools, and for a 10-round tool conversation the heap peak above the
//! pre-`init_agent` baseline and the AgentLoop thread's stack high-water mark
//! (painted stack, measured by the host thread implementation); for the MCP
//! server the heap peak of a `tools/list` and of a `tools/call` above the
//! running agent's, and the AgentMcp thread's stack high-water mark.
//!
//!     cargo bench --bench agent

use rtt_agent::cjson::sys::*;
use rtt_agent::host::{heap, thread};
use rtt_agent::runtime::chat::{chat, chat_response_free};
use rtt_agent::runtime::tools::get_agent_tools;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
#[cfg(feature = "mcp-server")]
use rtt_agent_testkit::mcp_server::{mcp_post, mcp_session};
use std::ffi::CString;
use std::time::Duration;

extern "C" {
    fn init_tools();
    fn agent_tools_cleanup();
}

fn settled_used() -> usize {
    thread::settle(Duration::from_secs(10));
    heap::used()
}

/// 20 messages of ordinary length, as a conversation would have them.
fn context_json() -> String {
    let mut msgs = vec![
        r#"{"role":"system","content":"You are an assistant running on an RT-Thread device."}"#
            .to_string(),
    ];
    for i in 0..10 {
        msgs.push(format!(r#"{{"role":"user","content":"Question number {i}: please tell me the state of sensor {i} and what it means for the pump."}}"#));
        msgs.push(format!(r#"{{"role":"assistant","content":"Sensor {i} reads a normal value; the pump can keep running at its current speed, no action is needed right now."}}"#));
    }
    format!("[{}]", msgs[..20].join(","))
}

fn chat_heap_peak() {
    let server = uncounted_server(|| {
        vec![ScriptedResponse::tool_calls(&[(
            "call_1",
            "add",
            &["{\"a\":", "2,\"b\":", "3}"],
        )])]
    });
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings (or NULL) that outlive the call,
    // which copies them.
    unsafe {
        rtt_agent::runtime::config::agent_config_set(
            c"sk-bench".as_ptr(),
            c"bench".as_ptr(),
            url.as_ptr(),
        )
    };
    // SAFETY: C functions of the package.
    unsafe { init_tools() };
    let ctx = CString::new(context_json()).unwrap();
    // SAFETY: cJSON calls on trees made and freed here.
    unsafe {
        let messages = cJSON_Parse(ctx.as_ptr());
        let base = settled_used();
        heap::rt_host_heap_reset_max_used();
        let resp = chat(messages, get_agent_tools(), 0, None, None, None);
        let peak = heap::max_used() - base;
        assert!(!resp.is_null());
        chat_response_free(resp);
        cJSON_Delete(messages);
        agent_tools_cleanup();
        println!("chat(): 20-message context, 3 tools, one streamed tool call");
        println!("  heap peak above the caller's trees: {peak} bytes (C package: 30.9 KB)");
    }
}

fn loop_figures() {
    // 10 plain exchanges (20 messages of context), then 9 tool rounds and an answer.
    let server = uncounted_server(|| {
        let mut script: Vec<ScriptedResponse> = (0..10)
            .map(|i| ScriptedResponse::text(&[&*format!("Answer {i}: everything is normal.")]))
            .collect();
        for r in 0..9 {
            script.push(ScriptedResponse::tool_calls(&[
                (&*format!("r{r}a"), "add", &["{\"a\":", "1,\"b\":2}"]),
                (&*format!("r{r}b"), "mul", &["{\"a\":3,", "\"b\":4}"]),
            ]));
        }
        script.push(ScriptedResponse::text(&["All ten rounds are done."]));
        script
    });
    thread::reset_stack_high_water();
    let base = settled_used();
    heap::rt_host_heap_reset_max_used();
    let agent = Agent::start(&server, rtt_agent::runtime::chat::Overrides::default());
    for i in 0..10 {
        agent.ask(&format!("Question {i}: how are the sensors?"));
    }
    let reply = agent.ask("Now do the ten-round calculation.");
    drop(agent);
    let peak = heap::max_used() - base;
    println!("agent loop: 10-round tool conversation on a 20-message context (reply: {reply:?})");
    // The bench's own strings live on the same heap: gone before the figure.
    drop(reply);
    let after = settled_used();
    println!(
        "  heap peak above the pre-init_agent baseline: {peak} bytes; after cleanup: {} bytes",
        after as isize - base as isize
    );
    match thread::stack_high_water("AgentLoop") {
        Some(s) => println!("  AgentLoop stack high-water mark: {s} bytes (host x86_64 build, host webclient included; the thread gets PKG_AGENT_LOOP_STACK_SIZE on a board: {} bytes here)", rtt_agent::rtt::board().loop_stack_size),
        None => println!("  AgentLoop stack high-water mark: not measured"),
    }
}

/// One chat() receiving 16 KB of tool-call arguments in 4-byte fragments
/// (OpenAI's shape), for instruction counting under callgrind:
///     valgrind --tool=callgrind --toggle-collect=chat target/release/deps/agent-* --chat-16k
fn chat_16k() {
    let args: String = {
        let mut a = String::from("{\"data\":\"");
        while a.len() < 16 * 1024 - 2 {
            a.push_str("0123456789abcdef");
        }
        a.truncate(16 * 1024 - 2);
        a.push_str("\"}");
        a
    };
    let fragments: Vec<&str> = args
        .as_bytes()
        .chunks(4)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    let server = uncounted_server(|| {
        vec![ScriptedResponse::tool_calls(&[(
            "call_1", "store", &fragments,
        )])]
    });
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings (or NULL) that outlive the call,
    // which copies them.
    unsafe {
        rtt_agent::runtime::config::agent_config_set(
            c"sk-bench".as_ptr(),
            c"bench".as_ptr(),
            url.as_ptr(),
        )
    };
    // SAFETY: cJSON calls on trees made and freed here.
    unsafe {
        let messages = cJSON_Parse(c"[{\"role\":\"user\",\"content\":\"store it\"}]".as_ptr());
        let resp = chat(messages, std::ptr::null_mut(), 0, None, None, None);
        assert!(!resp.is_null());
        let call = cJSON_GetArrayItem((*resp).tool_call, 0);
        let f = cJSON_GetObjectItemCaseSensitive(call, c"function".as_ptr());
        let got = std::ffi::CStr::from_ptr(
            (*cJSON_GetObjectItemCaseSensitive(f, c"arguments".as_ptr())).valuestring,
        );
        assert_eq!(got.to_bytes(), args.as_bytes());
        chat_response_free(resp);
        cJSON_Delete(messages);
    }
    println!(
        "chat(): 16 KB of arguments in {} fragments received whole",
        fragments.len()
    );
}

/// With the MCP server only (every part, as `cargo bench` builds).
#[cfg(feature = "mcp-server")]
fn mcp_figures() {
    use rtt_agent::abilities::mcp_server::server;
    let llm = uncounted_server(Vec::new);
    server::set_overrides(server::Overrides {
        enabled: Some(true),
        port: Some(0),
        allow_anonymous: Some(true),
        ..Default::default()
    });
    thread::reset_stack_high_water();
    let before = settled_used();
    let agent = Agent::start(&llm, rtt_agent::runtime::chat::Overrides::default());
    let port = server::port().expect("the MCP server runs");
    let sid = mcp_session(port);
    println!("MCP server: the agent's 3 built-in tools");
    for (what, body) in [
        (
            "tools/list",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        ),
        (
            "tools/call add",
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}"#,
        ),
    ] {
        let base = settled_used();
        heap::rt_host_heap_reset_max_used();
        let answer = mcp_post(port, &sid, body);
        let peak = heap::max_used() - base;
        println!(
            "  {what}: heap peak {peak} bytes above the running agent ({} bytes of answer)",
            answer.len()
        );
    }
    drop(sid);
    drop(agent);
    server::set_overrides(server::Overrides::default());
    let after = settled_used();
    println!(
        "  heap after cleanup: {} bytes from before the start",
        after as isize - before as isize
    );
    match thread::stack_high_water("AgentMcp") {
        Some(s) => println!("  AgentMcp stack high-water mark: {s} bytes (host x86_64 build; PKG_AGENT_MCP_THREAD_STACK on a board)"),
        None => println!("  AgentMcp stack high-water mark: not measured"),
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return; // cargo test --benches asks for the list of benchmarks
    }
    if std::env::args().any(|a| a == "--chat-16k") {
        chat_16k();
        return;
    }
    let _serial = lock();
    chat_heap_peak();
    loop_figures();
    #[cfg(feature = "mcp-server")]
    mcp_figures();
}
