//! Arbitrary bytes as one request to the MCP server, through the real
//! path: the agent runs (Debug channel, the built-in tools) with its MCP
//! server on a loopback port; each input is written to a new connection,
//! whose sending side is then shut, and the answer read to its end.
//!
//! Must hold for every input: no panic, no hang; the answer is empty (the
//! server gave up on a request that never completed) or one well-formed
//! HTTP/1.1 response with a status the server sends and a body of exactly
//! its `Content-Length`; the heap's `used` is back at its value from before
//! the request.
//!
//! Input layout: the request, byte for byte, except that `SID` is replaced
//! by a live session's id (made at start) and `TOK` by the server's bearer
//! token, so the fuzzer reaches the methods behind the token and session
//! checks. The server runs with a token (without one it does not start);
//! the `Authorization` header's parsing, the constant-time comparison and
//! the per-address limit of wrong tokens (429 with `Retry-After`) are on
//! the path of every input. The limit's table is forgotten every
//! [`FORGET_EVERY`] inputs, so inputs are refused with 429 some of the
//! time, not for good after the first five wrong tokens.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rtt_agent::channels::debug::agent_debug_ops;
use rtt_agent::host::heap;
use rtt_agent::runtime::agent_loop;
use rtt_agent::abilities::mcp_server::server;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

const STATUSES: &[u16] = &[
    200, 202, 400, 401, 403, 404, 405, 406, 408, 411, 413, 415, 429, 431, 500, 503,
];
const TOKEN: &str = "fuzz-token-0123456789";
const FORGET_EVERY: usize = 8;

struct Running {
    addr: SocketAddr,
    session: Vec<u8>,
}

fn exchange(addr: SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut s = TcpStream::connect(addr).expect("connect to the MCP server");
    s.set_read_timeout(Some(Duration::from_secs(15))).unwrap();
    let _ = s.write_all(request);
    let _ = s.shutdown(Shutdown::Write);
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

fn running() -> &'static Running {
    static AGENT: OnceLock<Running> = OnceLock::new();
    AGENT.get_or_init(|| {
        heap::exclude_this_thread(true);
        server::set_overrides(server::Overrides {
            enabled: Some(true),
            port: Some(0),
            max_sessions: Some(16),
            session_idle_s: Some(1),
            page_size: Some(2),
            token: Some(c"fuzz-token-0123456789"),
            ..Default::default()
        });
        agent_loop::set_channel(std::ptr::addr_of!(agent_debug_ops));
        assert_eq!(agent_loop::main_loop_entry(), 0);
        let port = server::port().expect("the MCP server runs");
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nAuthorization: Bearer {TOKEN}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        req.extend_from_slice(body);
        let answer = String::from_utf8(exchange(addr, &req)).expect("a text answer");
        let session = answer
            .lines()
            .find_map(|l| l.strip_prefix("Mcp-Session-Id: "))
            .expect("a session id")
            .trim()
            .as_bytes()
            .to_vec();
        Running { addr, session }
    })
}

/// A tool keeps its last result in its node (the C tools' own state, as in
/// the C package) until its next call: cleared around each input, so that
/// the heap figure compares what the server itself holds on to.
fn clear_tool_results() {
    use rtt_agent::cjson::sys::{cJSON_Delete, cJSON_Parse};
    use rtt_agent::ffi::messages::messages_destroy;
    use rtt_agent::runtime::tools::search_agent_tool_node;
    for name in [
        c"{\"function\":{\"name\":\"add\"}}",
        c"{\"function\":{\"name\":\"mul\"}}",
        c"{\"function\":{\"name\":\"compare\"}}",
    ] {
        // SAFETY: a NUL-terminated constant; the tree is deleted once after
        // the lookup that borrows it; the node's result set is its own,
        // freed once and cleared (no request runs between two inputs).
        unsafe {
            let tree = cJSON_Parse(name.as_ptr());
            let node = search_agent_tool_node(tree);
            cJSON_Delete(tree);
            if !node.is_null() {
                messages_destroy((*node).ret.messages);
                (*node).ret.messages = std::ptr::null_mut();
            }
        }
    }
}

fn check(answer: &[u8]) {
    if answer.is_empty() {
        return;
    }
    let text = String::from_utf8_lossy(answer);
    let (head, body) = text.split_once("\r\n\r\n").expect("a whole head");
    let status: u16 = head
        .strip_prefix("HTTP/1.1 ")
        .and_then(|s| s.get(..3))
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    assert!(STATUSES.contains(&status), "status {status}");
    if status == 429 {
        let after: u32 = head
            .lines()
            .find_map(|l| l.strip_prefix("Retry-After: "))
            .and_then(|v| v.trim().parse().ok())
            .expect("429 with a Retry-After");
        assert!((1..=60).contains(&after), "Retry-After {after}");
    }
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .and_then(|v| v.trim().parse().ok())
        .expect("a Content-Length");
    assert_eq!(
        answer.len() - head.len() - 4,
        length,
        "body length: {body:?}"
    );
}

fuzz_target!(|data: &[u8]| {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let r = running();
    heap::exclude_this_thread(true);
    if COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % FORGET_EVERY == 0 {
        rtt_agent::net::token_limit::forget_all();
    }
    let mut request = Vec::with_capacity(data.len() + 64);
    let mut rest = data;
    while let Some(at) = rest.windows(3).position(|w| w == b"SID" || w == b"TOK") {
        request.extend_from_slice(&rest[..at]);
        if &rest[at..at + 3] == b"SID" {
            request.extend_from_slice(&r.session);
        } else {
            request.extend_from_slice(TOKEN.as_bytes());
        }
        rest = &rest[at + 3..];
    }
    request.extend_from_slice(rest);
    clear_tool_results();
    let before = heap::used();
    let answer = exchange(r.addr, &request);
    clear_tool_results();
    assert_eq!(heap::used(), before, "heap after the request");
    check(&answer);
});
