//! The MCP server against bad input, over real TCP: every malformed or
//! refused request gets a clear status and JSON-RPC error, a flood of
//! sessions is refused without growing the heap, paging works, the agent
//! loop keeps answering meanwhile, a tool never runs for MCP and the loop
//! at once, and the heap returns to its baseline after the agent stops.
//! (The happy path with the official SDK: sim/tests/mcp_sdk.rs.)

use rtt_agent::abi::messages::{messages_append, messages_create, messages_destroy, TYPE_TEXT};
use rtt_agent::abilities::mcp_server::server;
use rtt_agent::cjson::sys::*;
use rtt_agent::host::heap;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent::runtime::tools::{append_tool, AgentToolList};
use rtt_agent_testkit::agent::*;
#[path = "support/http_exchange.rs"]
mod http_exchange;
use http_exchange::{split_request, Pace, Resp, Tally};
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
            Some(-32022),
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
    // An unknown revision is told every revision spoken, so a client of
    // either era can pick one.
    let unknown = &cases
        .iter()
        .find(|c| c.0.contains("unknown protocol"))
        .unwrap()
        .1;
    assert!(
        unknown.body.contains(
            r#""data":{"supported":["2026-07-28","2025-11-25","2025-06-18"],"requested":"1999-01-01"}"#
        ),
        "{}",
        unknown.body
    );
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

const MODERN: &str = "2026-07-28";
/// The envelope every 2026-07-28 request carries in `params._meta`.
const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}"#;
const TOKEN: &str = "Bearer tok-2026-0123456789";

/// A 2026-07-28 request with the token, the version and `Mcp-Method`
/// headers, `extra` headers after them.
fn stateless(addr: SocketAddr, method: &str, extra: &[(&str, &str)], body: &str) -> Resp {
    let mut h = vec![
        ("Authorization", TOKEN),
        ("MCP-Protocol-Version", MODERN),
        ("Mcp-Method", method),
    ];
    h.extend_from_slice(extra);
    post(addr, &h, body)
}

/// `{"jsonrpc":"2.0","id":id,"method":method,"params":{<params>,_meta}}`.
fn with_meta(id: u32, method: &str, params: &str) -> String {
    let sep = if params.is_empty() { "" } else { "," };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{{params}{sep}{META}}}}}"#)
}

#[test]
fn the_stateless_revision_checks_envelope_and_headers() {
    let _serial = lock();
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    let mcp = McpAgent::start(
        &llm,
        server::Overrides {
            token: Some(c"tok-2026-0123456789"),
            max_sessions: Some(1),
            page_size: Some(2),
            ..Default::default()
        },
    );
    let a = mcp.addr;
    let add = |args: &str| {
        with_meta(
            7,
            "tools/call",
            &format!(r#""name":"add","arguments":{args}"#),
        )
    };
    let name = |n: &'static str| [("Mcp-Name", n)];
    let end = concat!(
        r#""resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"rtt-agent","version":""#,
        env!("CARGO_PKG_VERSION"),
        r#""}}}}"#
    );

    // What works: discover, both pages of the list, a call (also with the
    // name in base64), a call whose arguments do not fit.
    let discover = stateless(
        a,
        "server/discover",
        &[],
        &with_meta(1, "server/discover", ""),
    );
    assert_eq!(discover.status, 200, "{}", discover.body);
    assert!(
        discover.body.starts_with(r#"{"jsonrpc":"2.0","id":1,"result":{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":"#),
        "{}",
        discover.body
    );
    assert!(
        discover
            .body
            .ends_with(&format!(r#","ttlMs":0,"cacheScope":"private",{end}"#)),
        "{}",
        discover.body
    );
    let first = stateless(a, "tools/list", &[], &with_meta(2, "tools/list", ""));
    assert!(first.body.contains(r#""name":"add""#), "{}", first.body);
    assert!(
        first.body.ends_with(&format!(
            r#"],"nextCursor":"2","ttlMs":0,"cacheScope":"private",{end}"#
        )),
        "{}",
        first.body
    );
    let second = stateless(
        a,
        "tools/list",
        &[],
        &with_meta(3, "tools/list", r#""cursor":"2""#),
    );
    assert!(
        second.body.contains(r#""name":"compare""#),
        "{}",
        second.body
    );
    assert!(!second.body.contains("nextCursor"), "{}", second.body);
    let call = stateless(a, "tools/call", &name("add"), &add(r#"{"a":2,"b":3}"#));
    assert_eq!(
        (call.status, call.body.as_str()),
        (
            200,
            format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"content":[{{"type":"text","text":"2 + 3 = 5"}}],"isError":false,{end}"#).as_str()
        )
    );
    let call = stateless(
        a,
        "tools/call",
        &name("=?base64?YWRk?="),
        &add(r#"{"a":1,"b":1}"#),
    );
    assert!(call.body.contains(r#""text":"1 + 1 = 2""#), "{}", call.body);
    let unfit = stateless(a, "tools/call", &name("add"), &add(r#"{"a":1}"#));
    assert_eq!(unfit.status, 200, "{}", unfit.body);
    assert!(
        unfit
            .body
            .contains(r#""isError":true,"resultType":"complete""#),
        "{}",
        unfit.body
    );
    // A session id is ignored, none is made: a full session table does
    // not matter either.
    let sid = initialize_with_token(a);
    let with_session = stateless(
        a,
        "tools/call",
        &[("Mcp-Name", "add"), ("Mcp-Session-Id", "ffff")],
        &add(r#"{"a":2,"b":2}"#),
    );
    assert!(
        with_session.body.contains(r#""text":"2 + 2 = 4""#),
        "{}",
        with_session.body
    );
    for r in [&discover, &first, &second, &call, &unfit, &with_session] {
        assert_eq!(r.header("Mcp-Session-Id"), None, "{}", r.head);
    }
    let full = post(a, &[("Authorization", TOKEN)], INIT);
    assert_eq!(
        full.status, 503,
        "the one session slot is still {sid}'s: {}",
        full.body
    );

    let list = with_meta(4, "tools/list", "");
    let cases: Vec<(&str, Resp, u16, Option<i64>)> = vec![
        (
            "no token",
            post(a, &[("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/list")], &list),
            401,
            Some(-32600),
        ),
        ("not JSON", stateless(a, "tools/list", &[], "{nope"), 400, Some(-32700)),
        (
            "a batch",
            stateless(a, "tools/list", &[], &format!("[{list}]")),
            400,
            Some(-32600),
        ),
        (
            "a response of the client's",
            stateless(a, "tools/list", &[], r#"{"jsonrpc":"2.0","id":5,"result":{}}"#),
            400,
            Some(-32600),
        ),
        (
            "no _meta",
            stateless(a, "tools/list", &[], r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#),
            400,
            Some(-32602),
        ),
        (
            "_meta without the capabilities",
            stateless(
                a,
                "tools/list",
                &[],
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
            ),
            400,
            Some(-32602),
        ),
        (
            "params not an object",
            stateless(a, "tools/list", &[], r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":3}"#),
            400,
            Some(-32602),
        ),
        (
            "no Mcp-Method",
            post(a, &[("Authorization", TOKEN), ("MCP-Protocol-Version", MODERN)], &list),
            400,
            Some(-32020),
        ),
        (
            "another Mcp-Method",
            stateless(a, "tools/call", &[], &list),
            400,
            Some(-32020),
        ),
        (
            "Mcp-Method twice",
            stateless(a, "tools/list", &[("Mcp-Method", "tools/list")], &list),
            400,
            Some(-32020),
        ),
        (
            "another version in _meta",
            stateless(
                a,
                "tools/list",
                &[],
                &list.replace(r#"protocolVersion":"2026-07-28""#, r#"protocolVersion":"2025-11-25""#),
            ),
            400,
            Some(-32020),
        ),
        (
            "no Mcp-Name",
            stateless(a, "tools/call", &[], &add(r#"{"a":1,"b":1}"#)),
            400,
            Some(-32020),
        ),
        (
            "another Mcp-Name",
            stateless(a, "tools/call", &name("mul"), &add(r#"{"a":1,"b":1}"#)),
            400,
            Some(-32020),
        ),
        (
            "Mcp-Name in base64 of another name",
            stateless(a, "tools/call", &name("=?base64?YWQ=?="), &add(r#"{"a":1,"b":1}"#)),
            400,
            Some(-32020),
        ),
        (
            "an unknown tool",
            stateless(
                a,
                "tools/call",
                &name("nope"),
                &with_meta(8, "tools/call", r#""name":"nope""#),
            ),
            400,
            Some(-32602),
        ),
        (
            "tools/call without a name",
            stateless(a, "tools/call", &[], &with_meta(8, "tools/call", "")),
            400,
            Some(-32602),
        ),
        (
            "initialize",
            stateless(a, "initialize", &[], &with_meta(9, "initialize", r#""protocolVersion":"2026-07-28""#)),
            404,
            Some(-32601),
        ),
        ("ping", stateless(a, "ping", &[], &with_meta(9, "ping", "")), 404, Some(-32601)),
        (
            "an unknown method",
            stateless(a, "resources/list", &[], &with_meta(9, "resources/list", "")),
            404,
            Some(-32601),
        ),
        (
            "an unknown version",
            post(
                a,
                &[("Authorization", TOKEN), ("MCP-Protocol-Version", "2099-01-01"), ("Mcp-Method", "tools/list")],
                &list.replace("2026-07-28", "2099-01-01"),
            ),
            400,
            Some(-32022),
        ),
        (
            "a notification",
            stateless(a, "notifications/cancelled", &[], r#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#),
            202,
            None,
        ),
        (
            "GET",
            raw(a, format!("GET /mcp HTTP/1.1\r\nAuthorization: {TOKEN}\r\nMCP-Protocol-Version: {MODERN}\r\n\r\n").as_bytes()),
            405,
            Some(-32600),
        ),
        (
            "DELETE",
            raw(a, format!("DELETE /mcp HTTP/1.1\r\nAuthorization: {TOKEN}\r\nMCP-Protocol-Version: {MODERN}\r\nMcp-Session-Id: {sid}\r\n\r\n").as_bytes()),
            405,
            Some(-32600),
        ),
    ];
    for (what, r, status, code) in &cases {
        assert_eq!(r.status, *status, "{what}: {} {}", r.head, r.body);
        assert_eq!(r.code(), *code, "{what}: {}", r.body);
        assert_eq!(r.header("Mcp-Session-Id"), None, "{what}");
        if code.is_some() {
            assert_eq!(
                r.header("Content-Type").as_deref(),
                Some("application/json"),
                "{what}"
            );
        }
    }
    let get = &cases.iter().find(|c| c.0 == "GET").unwrap().1;
    assert_eq!(get.header("Allow").as_deref(), Some("POST"));
    let bad_name = &cases.iter().find(|c| c.0 == "another Mcp-Name").unwrap().1;
    assert!(
        bad_name
            .body
            .starts_with(r#"{"jsonrpc":"2.0","id":7,"error""#),
        "{}",
        bad_name.body
    );
    // The session made above was not ended by the 2026-07-28 DELETE.
    let ping = post(
        a,
        &[("Authorization", TOKEN), ("Mcp-Session-Id", &sid)],
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    );
    assert_eq!(ping.status, 200, "{}", ping.body);
}

/// [`initialize`] with the token of the stateless test.
fn initialize_with_token(addr: SocketAddr) -> String {
    let r = post(addr, &[("Authorization", TOKEN)], INIT);
    assert_eq!(r.status, 200, "{}", r.body);
    r.header("Mcp-Session-Id").expect("a session id")
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

/// A tool that answers at once.
unsafe extern "C" fn late_tool(_args: *mut cJSON, node: *mut AgentToolList) {
    // SAFETY: the node passed to the tool, its result set replaced as the
    // tool guide does it.
    unsafe {
        messages_destroy((*node).ret.messages);
        let m = messages_create(1);
        messages_append(m, TYPE_TEXT, c"late but here".as_ptr());
        (*node).ret.messages = m;
        (*node).ret.ret = 0;
    }
}

/// `append_tool` of a tool `name` from a thread of its own (not the loop's,
/// which owns the registry while it runs, nor the MCP server's).
fn register_elsewhere(name: &str) {
    let def = CString::new(format!(
        r#"{{"type":"function","function":{{"name":"{name}","description":"registered late","parameters":{{"type":"object","properties":{{}}}}}}}}"#
    ))
    .unwrap();
    // SAFETY: a fresh definition handed over, and the tool above.
    let rc = std::thread::spawn(move || unsafe {
        append_tool(cJSON_Parse(def.as_ptr()), Some(late_tool))
    })
    .join()
    .unwrap();
    assert_eq!(rc, 0, "append_tool {name}");
}

/// Does `tools/list` name `name` now?
fn listed(addr: SocketAddr, sid: &str, name: &str) -> bool {
    let r = post(
        addr,
        &[("Mcp-Session-Id", sid)],
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/list"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    r.body.contains(&format!(r#""name":"{name}""#))
}

/// Does `tools/list` name `name` within `wait` (asked every 20 ms)?
fn listed_within(addr: SocketAddr, sid: &str, name: &str, wait: Duration) -> bool {
    let until = std::time::Instant::now() + wait;
    loop {
        if listed(addr, sid, name) {
            return true;
        }
        if std::time::Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `tools/call` of `name` answers with the tool's text.
fn calls(addr: SocketAddr, sid: &str, name: &str) {
    let r = post(
        addr,
        &[("Mcp-Session-Id", sid)],
        &format!(
            r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{"name":"{name}"}}}}"#
        ),
    );
    assert!(
        r.body.contains(r#""text":"late but here""#) && !r.body.contains("Unknown tool"),
        "tools/call {name}: {}",
        r.body
    );
}

/// A tool registered from another thread while the loop runs reaches MCP
/// clients without anyone chatting: at once while the loop waits for a
/// message, and right after the turn when one runs (never during it: the
/// loop's request offers the tools it started with).
#[test]
fn a_tool_registered_while_the_loop_runs_reaches_mcp_clients_without_a_message() {
    let _serial = lock();
    let llm =
        LlmServer::start(vec![ScriptedResponse::text(&["the turn is over"])
            .first_byte_after(Duration::from_millis(1500))])
        .unwrap();
    let mcp = McpAgent::start(&llm, server::Overrides::default());
    let a = mcp.addr;
    let sid = initialize(a);

    register_elsewhere("late_idle");
    assert!(
        listed_within(a, &sid, "late_idle", Duration::from_secs(1)),
        "a tool registered while the loop waits is not listed within 1 s"
    );
    calls(a, &sid, "late_idle");

    let asker = std::thread::spawn(|| {
        heap::exclude_this_thread(true);
        ask("take your time")
    });
    assert!(llm.wait_for_requests(1, Duration::from_secs(10)));
    register_elsewhere("late_busy");
    assert!(
        !listed(a, &sid, "late_busy"),
        "the registry changed during a turn"
    );
    assert_eq!(asker.join().unwrap(), "the turn is over");
    assert!(
        listed_within(a, &sid, "late_busy", Duration::from_secs(1)),
        "a tool registered during a turn is not listed within 1 s of its end"
    );
    calls(a, &sid, "late_busy");
    assert_eq!(llm.requests().len(), 1, "no other message was sent");
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

/// A refusal decided on the head (401, 429, 403, 404, 413) reaches a
/// client that sends the body apart from the head, whether the body comes
/// before the server answers, while it answers or after: the server does
/// not close on unread request bytes (a reset, which can cost the client
/// the answer, or fail its write of the body before it reads the answer).
#[test]
fn refusals_arrive_whole_when_the_body_comes_apart_from_the_head() {
    use rtt_agent::net::token_limit;
    let _serial = lock();
    token_limit::forget_all();
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    let mcp = McpAgent::start(
        &llm,
        server::Overrides {
            token: Some(c"tok-2026-0123456789"),
            ..Default::default()
        },
    );
    let head = |path: &str, extra: &str, length: usize| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: board\r\nContent-Type: application/json\r\n{extra}Content-Length: {length}\r\n\r\n"
        )
    };
    // Pauses of 0 to 2 ms, the body in one write or in pieces.
    let pace = |i: usize| {
        let pause = Duration::from_micros((i / 2 % 5) as u64 * 500);
        if i % 2 == 0 {
            Pace::Once(pause)
        } else {
            Pace::Pieces(pause / 5)
        }
    };
    let started = std::time::Instant::now();
    let mut tally = Tally::default();
    let body = INIT.as_bytes();
    // 401: no token and a wrong one (the table is forgotten before the
    // limit trips).
    const EACH: usize = 1500;
    for i in 0..EACH {
        if i % 4 == 0 {
            token_limit::forget_all();
        }
        let auth = if i % 4 < 2 {
            String::new()
        } else {
            format!("Authorization: Bearer wrong-guess-{i:08}\r\n")
        };
        let got = split_request(
            mcp.addr,
            head("/mcp", &auth, body.len()).as_bytes(),
            body,
            pace(i),
        );
        tally.count("401", got, 401, "WWW-Authenticate");
    }
    // Refusals before the token is looked at, and a body over
    // PKG_AGENT_MCP_MAX_BODY (4096).
    token_limit::forget_all();
    let auth = format!("Authorization: {TOKEN}\r\n");
    let big = vec![b' '; 5000];
    for i in 0..300 {
        let (what, got, status) = match i % 3 {
            0 => (
                "404",
                split_request(
                    mcp.addr,
                    head("/other", "", body.len()).as_bytes(),
                    body,
                    pace(i),
                ),
                404,
            ),
            1 => (
                "403",
                split_request(
                    mcp.addr,
                    head("/mcp", "Origin: http://evil.example\r\n", body.len()).as_bytes(),
                    body,
                    pace(i),
                ),
                403,
            ),
            _ => (
                "413",
                split_request(
                    mcp.addr,
                    head("/mcp", &auth, big.len()).as_bytes(),
                    &big,
                    pace(i),
                ),
                413,
            ),
        };
        tally.count(what, got, status, "Content-Type");
    }
    // 429: five wrong tokens trip the limit (for 60 s: longer than the
    // rest of the test), then even the right token is refused.
    for i in 0..5 {
        let auth = format!("Bearer wrong-guess-{i:08}");
        assert_eq!(
            post(mcp.addr, &[("Authorization", &auth)], INIT).status,
            401
        );
    }
    for i in 0..EACH {
        let got = split_request(
            mcp.addr,
            head("/mcp", &auth, body.len()).as_bytes(),
            body,
            pace(i),
        );
        tally.count("429", got, 429, "Retry-After");
    }
    token_limit::forget_all();
    let total = 2 * EACH + 300;
    assert_eq!(
        (
            tally.whole,
            tally.write_failed,
            tally.read_failed,
            tally.cut
        ),
        (total, 0, 0, 0),
        "of {total} requests in {:?} (whole answers, body writes failed, reads reset, \
         answers cut short): wrong answers {:?}",
        started.elapsed(),
        tally.wrong
    );
}

/// The receive buffer is the server's, made once at its start: a request
/// does not allocate one of its own. A buffer per connection put its
/// `HEAD_MAX` bytes on top of whatever the loop held at that moment, and
/// the board's load run saw `max_used` creep up long after its warm-up.
#[test]
fn a_request_allocates_no_receive_buffer_of_its_own() {
    let _serial = lock();
    let llm = uncounted_server_with(arith_model::respond);
    let mcp = McpAgent::start(&llm, server::Overrides::default());
    let a = mcp.addr;
    let peak = std::thread::spawn(move || {
        heap::exclude_this_thread(true);
        let sid = initialize(a);
        let s: &[(&str, &str)] = &[("Mcp-Session-Id", &sid)];
        let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
        // The least of a few tries: the agent's other threads may allocate
        // during one of them.
        let peak = || {
            (0..5)
                .map(|_| {
                    let before = heap::used();
                    heap::rt_host_heap_reset_max_used();
                    let r = post(a, s, ping);
                    assert_eq!(r.status, 200, "{}", r.body);
                    heap::max_used() - before
                })
                .min()
                .unwrap()
        };
        let first = peak();
        let at_rest = heap::used();
        // A body larger than the buffer grows it for that request alone.
        let padded = format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{"pad":"{}"}}}}"#,
            "x".repeat(3000)
        );
        assert_eq!(post(a, s, &padded).status, 200);
        // The server frees after it answered: wait for it.
        let end = std::time::Instant::now() + Duration::from_secs(5);
        while heap::used() != at_rest && std::time::Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(heap::used(), at_rest, "the buffer is back to its own size");
        first.max(peak())
    })
    .join()
    .unwrap();
    assert!(
        peak < server::HEAD_MAX,
        "a ping's heap peak is {peak} bytes, a receive buffer's worth ({})",
        server::HEAD_MAX
    );
}
