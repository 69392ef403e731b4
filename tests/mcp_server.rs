//! The MCP server against bad input, over real TCP: every malformed or
//! refused request gets a clear status and JSON-RPC error, a flood of
//! sessions is refused without growing the heap, paging works, the agent
//! loop keeps answering meanwhile, a tool never runs for MCP and the loop
//! at once, and the heap returns to its baseline after the agent stops.
//! (The happy path with the official SDK: sim/tests/mcp_sdk.rs.)

use rtt_agent::abi::messages::{messages_append, messages_create, messages_destroy, TYPE_TEXT};
use rtt_agent::cjson::sys::*;
use rtt_agent::host::heap;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent::runtime::mcp::server;
use rtt_agent::runtime::tools::{append_tool, AgentToolList};
use rtt_agent_testkit::agent::*;
#[path = "support/http_exchange.rs"]
mod http_exchange;
use http_exchange::Resp;
use rtt_agent_testkit::arith_model;
use rtt_agent_testkit::llm_server::*;
use std::ffi::CString;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

fn raw(addr: SocketAddr, request: &[u8]) -> Resp {
    Resp::exchange(TcpStream::connect(addr).unwrap(), request)
}

fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> Resp {
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: board\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    raw(addr, req.as_bytes())
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn initialize(addr: SocketAddr) -> String {
    let r = post(addr, &[], INIT);
    assert_eq!(r.status, 200, "{}", r.body);
    assert!(
        r.body.contains("\"protocolVersion\":\"2025-06-18\""),
        "{}",
        r.body
    );
    r.header("Mcp-Session-Id").expect("a session id")
}

/// The agent with its MCP server on a free port of 127.0.0.1.
struct McpAgent {
    _agent: Agent,
    addr: SocketAddr,
}

impl McpAgent {
    fn start(server: &LlmServer, o: server::Overrides) -> McpAgent {
        // Without a token of their own, the tests here run the server
        // anonymously (PKG_AGENT_MCP_ALLOW_ANONYMOUS).
        server::set_overrides(server::Overrides {
            enabled: Some(true),
            port: Some(0),
            allow_anonymous: o.allow_anonymous.or(Some(o.token.is_none())),
            ..o
        });
        let agent = Agent::start(server, Overrides::default());
        let port = server::port().expect("the MCP server runs");
        McpAgent {
            _agent: agent,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        }
    }
}

impl Drop for McpAgent {
    fn drop(&mut self) {
        server::set_overrides(server::Overrides::default());
    }
}

#[test]
fn bad_requests_get_clear_errors() {
    let _serial = lock();
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    let mcp = McpAgent::start(
        &llm,
        server::Overrides {
            max_body: Some(1024),
            origins: Some(c"http://ok.example"),
            ..Default::default()
        },
    );
    let a = mcp.addr;
    let sid = initialize(a);
    let s: &[(&str, &str)] = &[("Mcp-Session-Id", &sid)];
    let cases: Vec<(&str, Resp, u16, Option<i64>)> = vec![
        ("not JSON", post(a, s, "{nope"), 400, Some(-32700)),
        (
            "a batch",
            post(a, s, r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#),
            400,
            Some(-32600),
        ),
        (
            "jsonrpc 1.0",
            post(a, s, r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#),
            400,
            Some(-32600),
        ),
        (
            "an object id",
            post(a, s, r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#),
            400,
            Some(-32600),
        ),
        ("a string", post(a, s, r#""ping""#), 400, Some(-32600)),
        (
            "a number method",
            post(a, s, r#"{"jsonrpc":"2.0","id":1,"method":7}"#),
            400,
            Some(-32600),
        ),
        (
            "no session",
            post(a, &[], r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#),
            400,
            Some(-32600),
        ),
        (
            "an unknown session",
            post(
                a,
                &[("Mcp-Session-Id", "0123")],
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            ),
            404,
            Some(-32600),
        ),
        (
            "an unknown method",
            post(
                a,
                s,
                r#"{"jsonrpc":"2.0","id":"x","method":"resources/list"}"#,
            ),
            200,
            Some(-32601),
        ),
        (
            "tools/call without a name",
            post(
                a,
                s,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}"#,
            ),
            200,
            Some(-32602),
        ),
        (
            "arguments not an object",
            post(
                a,
                s,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":[1]}}"#,
            ),
            200,
            Some(-32602),
        ),
        (
            "params not an object",
            post(
                a,
                s,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":3}"#,
            ),
            200,
            Some(-32602),
        ),
        (
            "initialize without a version",
            post(
                a,
                &[],
                r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            ),
            200,
            Some(-32602),
        ),
        (
            "an unknown protocol version header",
            post(
                a,
                &[
                    ("Mcp-Session-Id", &sid),
                    ("MCP-Protocol-Version", "1999-01-01"),
                ],
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            ),
            400,
            Some(-32600),
        ),
        (
            "a foreign Origin",
            post(
                a,
                &[("Mcp-Session-Id", &sid), ("Origin", "http://evil.example")],
                r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            ),
            403,
            Some(-32600),
        ),
        (
            "a body over the cap",
            post(
                a,
                s,
                &format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"ping","x":"{}"}}"#,
                    "a".repeat(2000)
                ),
            ),
            413,
            Some(-32600),
        ),
        (
            "GET",
            raw(a, b"GET /mcp HTTP/1.1\r\nAccept: text/event-stream\r\n\r\n"),
            405,
            Some(-32600),
        ),
        (
            "PUT",
            raw(a, b"PUT /mcp HTTP/1.1\r\nContent-Length: 0\r\n\r\n"),
            405,
            Some(-32600),
        ),
        (
            "another path",
            raw(a, b"POST /other HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"),
            404,
            Some(-32600),
        ),
        (
            "no Content-Length",
            raw(a, b"POST /mcp HTTP/1.1\r\n\r\n{}"),
            411,
            Some(-32600),
        ),
        (
            "chunked",
            raw(
                a,
                b"POST /mcp HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
            ),
            411,
            Some(-32600),
        ),
        (
            "a bad Content-Length",
            raw(a, b"POST /mcp HTTP/1.1\r\nContent-Length: ten\r\n\r\n"),
            400,
            Some(-32600),
        ),
        ("not HTTP", raw(a, b"HELLO\r\n\r\n"), 400, Some(-32600)),
        (
            "a head over 2 KB",
            raw(
                a,
                format!("POST /mcp HTTP/1.1\r\nX: {}\r\n\r\n", "y".repeat(3000)).as_bytes(),
            ),
            431,
            Some(-32600),
        ),
        (
            "a notification",
            post(
                a,
                s,
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            ),
            202,
            None,
        ),
        (
            "a response of the client's",
            post(a, s, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#),
            202,
            None,
        ),
    ];
    for (what, r, status, code) in &cases {
        assert_eq!(r.status, *status, "{what}: {} {}", r.head, r.body);
        assert_eq!(r.code(), *code, "{what}: {}", r.body);
        if code.is_some() {
            assert_eq!(
                r.header("Content-Type").as_deref(),
                Some("application/json"),
                "{what}"
            );
        }
    }
    let get = &cases.iter().find(|c| c.0 == "GET").unwrap().1;
    assert_eq!(get.header("Allow").as_deref(), Some("POST, DELETE"));
    // An allowed Origin passes; NUL bytes inside a body do not cut it.
    let r = post(
        a,
        &[("Mcp-Session-Id", &sid), ("Origin", "http://ok.example")],
        "{\"jsonrpc\":\"2.0\",\"id\":9,\u{0}\"method\":\"ping\"}",
    );
    assert_eq!(
        (r.status, r.body.as_str()),
        (200, r#"{"jsonrpc":"2.0","id":9,"result":{}}"#)
    );
    // A session id with more after it is not that session.
    let longer = format!("{sid}0");
    let r = post(
        a,
        &[("Mcp-Session-Id", &longer)],
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_eq!(r.status, 404, "{}", r.body);
    // A NUL inside the head leaves the body where it is.
    let r = post(
        a,
        &[("Mcp-Session-Id", &sid), ("X-Odd", "a\u{0}b")],
        r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#,
    );
    assert_eq!(
        (r.status, r.body.as_str()),
        (200, r#"{"jsonrpc":"2.0","id":8,"result":{}}"#)
    );
    // A session ends with DELETE; afterwards it is unknown.
    let del = |id: &str| {
        raw(
            a,
            format!("DELETE /mcp HTTP/1.1\r\nMcp-Session-Id: {id}\r\n\r\n").as_bytes(),
        )
    };
    assert_eq!(del(&sid).status, 200);
    assert_eq!(del(&sid).status, 404);
    assert_eq!(raw(a, b"DELETE /mcp HTTP/1.1\r\n\r\n").status, 400);
    assert_eq!(
        post(a, s, r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).status,
        404
    );
    // A client that connects and says nothing holds the server for the
    // read deadline at most; the next request is answered.
    let silent = TcpStream::connect(a).unwrap();
    let sid = initialize(a);
    assert_eq!(
        post(
            a,
            &[("Mcp-Session-Id", &sid)],
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#
        )
        .status,
        200
    );
    drop(silent);
}

#[test]
fn a_flood_of_sessions_is_refused_the_loop_answers_and_the_heap_returns() {
    let _serial = lock();
    let llm = uncounted_server_with(arith_model::respond);
    // The first start's one-time allocations stay out of the baseline.
    drop(McpAgent::start(&llm, server::Overrides::default()));
    assert!(
        rtt_agent::host::thread::settle(Duration::from_secs(10)),
        "threads still running"
    );
    let before = heap::used();
    let mcp = McpAgent::start(
        &llm,
        server::Overrides {
            max_sessions: Some(4),
            ..Default::default()
        },
    );
    let a = mcp.addr;
    let flood = std::thread::spawn(move || {
        heap::exclude_this_thread(true);
        let mut made = Vec::new();
        let mut refused = 0;
        for _ in 0..40 {
            let r = post(a, &[], INIT);
            match r.status {
                200 => made.push(r.header("Mcp-Session-Id").unwrap()),
                503 => {
                    assert_eq!(r.code(), Some(-32000), "{}", r.body);
                    assert!(r.body.contains("too many MCP sessions"), "{}", r.body);
                    refused += 1;
                }
                other => panic!("initialize: {other} {}", r.body),
            }
            // Garbage between them.
            assert_eq!(post(a, &[], "]]]").status, 400);
        }
        (made, refused)
    });
    // The agent loop answers while the server is flooded.
    assert_eq!(mcp._agent.ask("(2+3)*(4+5)"), "The result is 45.");
    let (made, refused) = flood.join().unwrap();
    assert_eq!((made.len(), refused), (4, 36));
    // Ending one session makes room for one more.
    let r = raw(
        a,
        format!(
            "DELETE /mcp HTTP/1.1\r\nMcp-Session-Id: {}\r\n\r\n",
            made[0]
        )
        .as_bytes(),
    );
    assert_eq!(r.status, 200);
    drop(r);
    assert_eq!(post(a, &[], INIT).status, 200);
    assert_eq!(post(a, &[], INIT).status, 503);
    drop(made);
    drop(mcp);
    // The server's thread is freed by the kernel once it has ended.
    assert!(
        rtt_agent::host::thread::settle(Duration::from_secs(10)),
        "threads still running"
    );
    assert_eq!(heap::used(), before, "heap after the agent stopped");
}

#[test]
fn tools_list_pages() {
    let _serial = lock();
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    let mcp = McpAgent::start(
        &llm,
        server::Overrides {
            page_size: Some(2),
            ..Default::default()
        },
    );
    let sid = initialize(mcp.addr);
    let s: &[(&str, &str)] = &[("Mcp-Session-Id", &sid)];
    let first = post(
        mcp.addr,
        s,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    assert!(first.body.contains(r#""name":"add""#) && first.body.contains(r#""name":"mul""#));
    assert!(
        first.body.ends_with(r#"],"nextCursor":"2"}}"#),
        "{}",
        first.body
    );
    let second = post(
        mcp.addr,
        s,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":"2"}}"#,
    );
    assert!(
        second.body.contains(r#""name":"compare""#),
        "{}",
        second.body
    );
    assert!(!second.body.contains("nextCursor"), "{}", second.body);
    let bad = post(
        mcp.addr,
        s,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x"}}"#,
    );
    assert_eq!(bad.code(), Some(-32602), "{}", bad.body);
}

static RUNNING: AtomicUsize = AtomicUsize::new(0);
static OVERLAP: AtomicBool = AtomicBool::new(false);
static RUNS: AtomicUsize = AtomicUsize::new(0);

/// A tool that takes a while and notes whether another run overlapped it.
unsafe extern "C" fn slow_tool(_args: *mut cJSON, node: *mut AgentToolList) {
    if RUNNING.fetch_add(1, Ordering::SeqCst) != 0 {
        OVERLAP.store(true, Ordering::SeqCst);
    }
    std::thread::sleep(Duration::from_millis(20));
    RUNS.fetch_add(1, Ordering::SeqCst);
    // SAFETY: the node passed to the tool, its result set replaced as the
    // tool guide does it.
    unsafe {
        messages_destroy((*node).ret.messages);
        let m = messages_create(1);
        messages_append(m, TYPE_TEXT, c"slept".as_ptr());
        (*node).ret.messages = m;
        (*node).ret.ret = 0;
    }
    RUNNING.fetch_sub(1, Ordering::SeqCst);
}

#[test]
fn a_tool_never_runs_for_mcp_and_the_loop_at_once() {
    let _serial = lock();
    let mut script = vec![ScriptedResponse::text(&["registered"])];
    for i in 0..6 {
        let id = format!("s{i}");
        script.push(ScriptedResponse::tool_calls(&[(&id, "slow", &["{}"])]));
        script.push(ScriptedResponse::text(&["done"]));
    }
    let llm = LlmServer::start(script).unwrap();
    let mcp = McpAgent::start(&llm, server::Overrides::default());
    let def = CString::new(
        r#"{"type":"function","function":{"name":"slow","description":"sleeps","parameters":{"type":"object","properties":{}}}}"#,
    )
    .unwrap();
    // SAFETY: a fresh definition handed over, and the tool above.
    std::thread::spawn(move || unsafe { append_tool(cJSON_Parse(def.as_ptr()), Some(slow_tool)) })
        .join()
        .unwrap();
    // The loop registers it before its next message.
    assert_eq!(mcp._agent.ask("register"), "registered");
    let a = mcp.addr;
    let caller = std::thread::spawn(move || {
        heap::exclude_this_thread(true);
        let sid = initialize(a);
        for i in 0..15 {
            let r = post(
                a,
                &[("Mcp-Session-Id", &sid)],
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"slow"}}}}"#
                ),
            );
            assert!(r.body.contains(r#""text":"slept""#), "{}", r.body);
        }
    });
    for _ in 0..6 {
        assert_eq!(mcp._agent.ask("sleep"), "done");
    }
    caller.join().unwrap();
    assert_eq!(RUNS.load(Ordering::SeqCst), 21);
    assert!(
        !OVERLAP.load(Ordering::SeqCst),
        "two runs of the tool overlapped"
    );
}

#[test]
fn expect_100_continue_gets_the_go_ahead() {
    let _serial = lock();
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    let mcp = McpAgent::start(&llm, server::Overrides::default());
    let body = INIT.as_bytes();
    let mut s = TcpStream::connect(mcp.addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(
        s,
        "POST /mcp HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    // The go-ahead comes before any body byte was sent.
    let mut interim = [0u8; 25];
    s.read_exact(&mut interim).unwrap();
    assert_eq!(&interim, b"HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(body).unwrap();
    let mut rest = String::new();
    s.read_to_string(&mut rest).unwrap();
    assert!(rest.starts_with("HTTP/1.1 200 OK\r\n"), "{rest}");
    assert!(rest.contains("Mcp-Session-Id: "), "{rest}");
}
