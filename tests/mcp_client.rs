//! The MCP client against a scripted remote server written with the
//! official MCP Python SDK (`tests/mcp/scripted_server.py`, Streamable
//! HTTP, both SSE and JSON answers): the agent lists the remote tools at
//! start and offers them to the model prefixed (`m1_sub`), the scripted
//! model calls one, the answer uses its result; `isError` reaches the model
//! as an error text; a server that forgot the session (404) gets a new
//! handshake and the call goes through; a server that is down, or answers
//! garbage, an unknown content type, an oversized message or a cut stream,
//! leaves its tools out with a logged reason while the local tools go on
//! working; scripted JSON-RPC servers show `nextCursor` paging, the name
//! rules, the version negotiation and the headers of every request. A
//! server that speaks only 2026-07-28 (the SDK behind
//! `scripted_server.py --modern-only`, and a scripted one) is found by
//! `server/discover` after its refusal of `initialize` and spoken to
//! statelessly, its SSE and JSON answers both. The
//! heap is back at its baseline after every agent run.
//!
//! One test function in a process of its own, as `agent_lifecycle.rs`: the
//! heap checks need nothing else running beside them.

use rtt_agent::abilities::mcp_client::{self as client, servers};
use rtt_agent::host::{console, heap};
use rtt_agent::runtime::chat::Overrides;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::arith_model;
use rtt_agent_testkit::llm_server::*;
use rtt_agent_testkit::mcp_server::{python, remote_model, McpServer};
use rtt_agent_testkit::shell::msh;
use std::path::PathBuf;

/// The `tools` of a recorded chat request: (name, parameters as JSON text).
fn offered_tools(req: &RecordedRequest) -> Vec<(String, String)> {
    rtt_agent_testkit::agent::offered_tools(&req.body)
}

/// Start the agent with the servers configured now, have `(2+3)*4`
/// answered with the local tools, stop it and check the heap is back where
/// it was (`what` names the case); the log of it all.
fn local_answer_with_log(llm: &LlmServer, what: &str) -> String {
    let baseline = settled_used();
    console::rt_host_console_capture(1);
    let agent = Agent::start_at(&llm.url(), Overrides::default());
    assert_eq!(agent.ask("(2+3)*4"), "The result is 20.");
    drop(agent);
    assert_eq!(settled_used(), baseline, "{what}");
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    log
}

/// Is the registry's tool `name` a remote one (`client::is_remote`, which
/// the MCP server uses to leave these out of its own list)? False when
/// there is no such tool. Read between two messages: the loop waits in its
/// mailbox and changes nothing.
fn remote(name: &str) -> bool {
    use rtt_agent::runtime::tools::search_agent_tool_node;
    let call = std::ffi::CString::new(format!(r#"{{"function":{{"name":"{name}"}}}}"#)).unwrap();
    // SAFETY: a NUL-terminated text; the tree is deleted once, after the
    // lookup that borrows it.
    unsafe {
        let tree = rtt_agent::cjson::sys::cJSON_Parse(call.as_ptr());
        let node = search_agent_tool_node(tree);
        rtt_agent::cjson::sys::cJSON_Delete(tree);
        client::is_remote(node)
    }
}

#[test]
fn mcp_client() {
    let _serial = lock();
    // A failure, not a skip: the test command installs what the venv needs.
    let python = python().expect("a python3 venv with the MCP SDK (tests/mcp/venv.sh failed)");
    remote_tools_over_sse_and_json(&python);
    forgotten_session_gets_a_new_handshake(&python);
    server_down_at_start_leaves_local_tools();
    garbage_servers_leave_their_tools_out();
    paging_versions_and_errors();
    a_stateless_server_gets_the_envelope_and_headers();
    a_failed_call_is_not_sent_again(false);
    a_failed_call_is_not_sent_again(true);
    servers_past_the_tool_cap_are_not_asked();
    agent_config_mcp_manages_the_list();
    the_boards_server_passes_no_remote_tool_on(&python);
    servers::reset();
    client::set_max_response(None);
}

/// A board that is both client and server lists its own tools only: a
/// remote tool is not offered on (two boards pointed at each other would
/// call each other in a loop), and cannot be called through it.
fn the_boards_server_passes_no_remote_tool_on(python: &PathBuf) {
    use rtt_agent::abilities::mcp_server::server;
    use rtt_agent_testkit::mcp_server::{mcp_post, mcp_session};
    let mcp = McpServer::start(python, &[]);
    servers::reset();
    servers::add(mcp.url.as_bytes()).unwrap();
    server::set_overrides(server::Overrides {
        enabled: Some(true),
        port: Some(0),
        allow_anonymous: Some(true),
        ..Default::default()
    });
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    let agent = Agent::start_at(&llm.url(), Overrides::default());
    assert!(remote("m1_sub"), "the remote tools are registered");
    let port = server::port().expect("the board's MCP server runs");
    let post = |session: &str, body: &str| mcp_post(port, session, body);
    let sid = mcp_session(port);
    let list = post(&sid, r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    for own in ["\"add\"", "\"mul\"", "\"compare\""] {
        assert!(list.contains(own), "{list}");
    }
    assert!(!list.contains("m1_"), "{list}");
    let call = post(
        &sid,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"m1_sub","arguments":{"a":1,"b":2}}}"#,
    );
    assert!(call.contains("Unknown tool: m1_sub"), "{call}");
    drop(agent);
    server::set_overrides(server::Overrides::default());
}

/// Each of the SDK's answer kinds: SSE streams (its default), then one
/// JSON body per POST; in the handshake era and, with a server that speaks
/// only 2026-07-28 (`--modern-only`), in the stateless one, where the
/// SDK answers quick requests with JSON even in SSE mode, so `--sse-soon`
/// makes it stream a slow tool's answer behind keep-alive comments.
fn remote_tools_over_sse_and_json(python: &PathBuf) {
    for args in [
        &[][..],
        &["--json"][..],
        &["--modern-only"][..],
        &["--modern-only", "--json"][..],
        &["--modern-only", "--sse-soon"][..],
    ] {
        let modern = args.contains(&"--modern-only");
        let mcp = McpServer::start(python, args);
        servers::reset();
        servers::add(mcp.url.as_bytes()).unwrap();
        let llm_model = LlmServer::with_model(remote_model).unwrap();
        let baseline = settled_used();
        console::rt_host_console_capture(1);
        let agent = Agent::start_at(&llm_model.url(), Overrides::default());
        assert!(remote("m1_sub") && remote("m1_fail"));
        assert!(!remote("add") && !remote("m9_none"));
        assert!(!client::is_remote(std::ptr::null_mut()));
        assert_eq!(agent.ask("sub please"), "Result: 10 - 4 = 6", "{args:?}");
        assert_eq!(agent.ask("echo please"), "Result: echo: hi there");
        let failed = agent.ask("fail please");
        assert_eq!(
            failed,
            "Result: error: the remote tool reported a failure: Error executing tool fail: refused: asked to"
        );
        let wrong = agent.ask("wrong please");
        assert!(
            wrong.contains("do not fit its parameters") && wrong.contains("the tool was not run"),
            "{wrong}"
        );
        if args.contains(&"--sse-soon") {
            assert_eq!(agent.ask("slow please"), "Result: slowly: tortoise");
        }
        // The replies are on the heap too.
        drop((failed, wrong));
        drop(agent);
        assert_eq!(
            settled_used(),
            baseline,
            "heap not back after the remote calls ({args:?})"
        );
        let log = console::take_captured();
        console::rt_host_console_capture(0);
        let tools = if args.contains(&"--sse-soon") { 4 } else { 3 };
        assert!(
            log.contains(&format!("mcp: {}: {tools} remote tool(s)", mcp.url)),
            "{log}"
        );
        // The stateless revision was spoken exactly when the server
        // speaks nothing else (the SDK's dual-era server keeps the
        // handshake the client starts with).
        assert_eq!(
            log.contains(&format!("mcp: {} speaks 2026-07-28", mcp.url)),
            modern,
            "{args:?}: {log}"
        );

        let reqs = llm_model.requests();
        let tools = offered_tools(&reqs[0]);
        let names: Vec<&str> = tools.iter().map(|(n, _)| n.as_str()).collect();
        for want in ["add", "mul", "compare", "m1_sub", "m1_echo", "m1_fail"] {
            assert!(names.contains(&want), "{names:?}");
        }
        let sub = &tools.iter().find(|(n, _)| n == "m1_sub").unwrap().1;
        assert!(
            sub.contains(r#""a":{"title":"A","type":"number"}"#)
                && sub.contains(r#""required":["a","b"]"#),
            "{sub}"
        );
        // The tool result went back to the model as the tool message.
        let msgs = messages_of(&reqs[1]);
        assert_eq!(msgs.last().unwrap().content, "10 - 4 = 6");
    }
}

/// The server restarts between the handshake and the call (same port): the
/// call is refused with 404 for the unknown session, the client runs the
/// handshake again and repeats the call once.
fn forgotten_session_gets_a_new_handshake(python: &PathBuf) {
    let first = McpServer::start(python, &[]);
    let port = first.port();
    servers::reset();
    servers::add(first.url.as_bytes()).unwrap();
    let llm = LlmServer::with_model(remote_model).unwrap();
    let baseline = settled_used();
    console::rt_host_console_capture(1);
    let agent = Agent::start_at(&llm.url(), Overrides::default());
    drop(first);
    let _second = McpServer::start(python, &["--port", &port]);
    assert_eq!(agent.ask("sub please"), "Result: 10 - 4 = 6");
    drop(agent);
    assert_eq!(
        settled_used(),
        baseline,
        "heap not back after the new handshake"
    );
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert!(
        log.contains("forgot the session (404); a new handshake"),
        "{log}"
    );
}

/// A scripted server that speaks only 2026-07-28: `initialize` refused
/// with 400 -32022, `server/discover` naming the revision (or, with
/// `versions`, others only), `tools/list`, and `tools/call` answered with
/// a result, or refused with 400 -32602 for the tool `gone`.
fn fake_modern(versions: &'static str) -> impl Fn(&RecordedRequest) -> ScriptedResponse {
    move |req| {
        let body = req.body_text();
        let id = id_of(req).unwrap_or(0);
        let answer = |status: u16, rest: String| {
            ScriptedResponse::json(status, &format!(r#"{{"jsonrpc":"2.0","id":{id},{rest}}}"#))
        };
        let result = |r: &str| answer(200, format!(r#""result":{{{r},"resultType":"complete"}}"#));
        if req.header("MCP-Protocol-Version") != Some("2026-07-28") {
            return answer(
                400,
                r#""error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28"],"requested":""}}"#.into(),
            );
        }
        if body.contains(r#""method":"server/discover""#) {
            return result(&format!(
                r#""supportedVersions":{versions},"capabilities":{{"tools":{{}}}},"ttlMs":0,"cacheScope":"private""#
            ));
        }
        if body.contains(r#""method":"tools/list""#) {
            return result(
                r#""tools":[{"name":"näme one","inputSchema":{"type":"object"}},{"name":"gone","inputSchema":{"type":"object"}}],"ttlMs":0,"cacheScope":"private""#,
            );
        }
        if body.contains(r#""name":"gone""#) {
            return answer(
                400,
                r#""error":{"code":-32602,"message":"Unknown tool: gone"}"#.into(),
            );
        }
        result(r#""content":[{"type":"text","text":"ran"}],"isError":false"#)
    }
}

/// Our client against a scripted stateless server: `initialize`, then
/// `server/discover`, then every request with the envelope in
/// `params._meta`, `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (in
/// base64 for a name that is not plain ASCII) and no session; a JSON-RPC
/// error in a 400 answer reaches the model as the server's refusal. A
/// server that refuses `initialize` and does not list 2026-07-28 is left
/// out with the reason.
fn a_stateless_server_gets_the_envelope_and_headers() {
    let remote = LlmServer::with_model(fake_modern(r#"["2026-07-28"]"#)).unwrap();
    let other = LlmServer::with_model(fake_modern(r#"["2099-01-01"]"#)).unwrap();
    servers::reset();
    servers::add(format!("{}/mcp", remote.base_url()).as_bytes()).unwrap();
    servers::add(format!("{}/mcp", other.base_url()).as_bytes()).unwrap();
    let llm = LlmServer::with_model(|req| {
        let msgs = messages_of(req);
        let last = msgs.last().unwrap();
        if last.role == "tool" {
            return ScriptedResponse::text(&["Result: ", &last.content]);
        }
        let tool = if last.content.contains("gone") {
            "m1_gone"
        } else {
            "m1_n__me_one"
        };
        ScriptedResponse::tool_calls(&[("c1", tool, &["{}"])])
    })
    .unwrap();
    let baseline = settled_used();
    console::rt_host_console_capture(1);
    let agent = Agent::start_at(&llm.url(), Overrides::default());
    assert_eq!(agent.ask("run it"), "Result: ran");
    assert_eq!(
        agent.ask("gone"),
        "Result: error: the remote tool \"m1_gone\" could not be called (JSON-RPC error -32602: Unknown tool: gone)"
    );
    drop(agent);
    assert_eq!(
        settled_used(),
        baseline,
        "heap not back after the stateless server"
    );
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert!(
        log.contains(&format!("mcp: {}/mcp speaks 2026-07-28", remote.base_url())),
        "{log}"
    );
    let refused = format!(
        "mcp: {}/mcp: its tools are left out (initialize failed: the server refuses initialize and does not list 2026-07-28 in server/discover)",
        other.base_url()
    );
    assert!(log.contains(&refused), "{refused}\n---\n{log}");

    let reqs = remote.requests();
    let methods: Vec<String> = reqs
        .iter()
        .map(|r| {
            r.body_text()
                .split(r#""method":""#)
                .nth(1)
                .unwrap_or("")
                .split('"')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "server/discover",
            "tools/list",
            "tools/call",
            "tools/call"
        ],
        "no notifications/initialized, no retry of the refused call"
    );
    let meta = concat!(
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"rtt-agent","version":""#,
        env!("CARGO_PKG_VERSION"),
        r#""}}"#
    );
    for (r, method) in reqs.iter().zip(&methods).skip(1) {
        let body = r.body_text();
        assert_eq!(
            r.header("MCP-Protocol-Version"),
            Some("2026-07-28"),
            "{body}"
        );
        assert_eq!(r.header("Mcp-Method"), Some(method.as_str()), "{body}");
        assert_eq!(r.header("Mcp-Session-Id"), None, "{body}");
        assert!(body.contains(meta), "{body}");
    }
    assert_eq!(
        reqs[1].body_text(),
        format!(r#"{{"jsonrpc":"2.0","id":2,"method":"server/discover","params":{{{meta}}}}}"#)
    );
    // "näme one" is not a plain header value: base64 of its UTF-8.
    assert_eq!(reqs[3].header("Mcp-Name"), Some("=?base64?bsOkbWUgb25l?="));
    assert!(
        reqs[3].body_text().contains(&format!(
            r#""params":{{"name":"näme one","arguments":{{}},{meta}}}"#
        )),
        "{}",
        reqs[3].body_text()
    );
    assert_eq!(reqs[4].header("Mcp-Name"), Some("gone"));
    assert_eq!(reqs[2].header("Mcp-Name"), None);
}

/// A port nobody listens on.
fn unused_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn server_down_at_start_leaves_local_tools() {
    let url = format!("http://127.0.0.1:{}/mcp", unused_port());
    servers::reset();
    servers::add(url.as_bytes()).unwrap();
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    let log = local_answer_with_log(&llm, "heap not back after a server that was down");
    assert!(
        log.contains(&format!(
            "mcp: {url}: its tools are left out (initialize failed: cannot connect to the server"
        )),
        "{log}"
    );
    for r in llm.requests() {
        assert!(offered_tools(&r).iter().all(|(n, _)| !n.starts_with("m1_")));
    }
}

/// Four servers that answer the handshake with garbage: not JSON, a body
/// over the cap, a content type that is neither, an event stream cut
/// before its answer (retried, then given up). Each is left out with its
/// reason; the agent answers with the local tools.
fn garbage_servers_leave_their_tools_out() {
    let big = format!(
        r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-11-25","pad":"{}"}}}}"#,
        "x".repeat(8192)
    );
    let kinds: Vec<(ScriptedResponse, &str)> = vec![
        (
            ScriptedResponse::raw(200, "application/json", "<html>surprise</html>"),
            "the answer is not a JSON-RPC response (or no memory to parse it)",
        ),
        (
            ScriptedResponse::json(200, &big),
            "the answer is longer than PKG_AGENT_MCP_MAX_RESPONSE",
        ),
        (
            ScriptedResponse::raw(200, "text/html", "<html></html>"),
            "the answer is neither application/json nor text/event-stream",
        ),
        (
            ScriptedResponse::sse(vec![
                b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n".to_vec(),
                b"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"res".to_vec(),
            ]),
            "the event stream ended before the answer",
        ),
    ];
    let mut garbage = Vec::new();
    servers::reset();
    for (response, _) in &kinds {
        let response = response.clone();
        let server = LlmServer::with_model(move |_| response.clone()).unwrap();
        servers::add(format!("{}/mcp", server.base_url()).as_bytes()).unwrap();
        garbage.push(server);
    }
    client::set_max_response(Some(4096));
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    let log = local_answer_with_log(&llm, "heap not back after the garbage servers");
    for ((_, why), server) in kinds.iter().zip(&garbage) {
        let line = format!(
            "mcp: {}/mcp: its tools are left out (initialize failed: {why}",
            server.base_url()
        );
        assert!(log.contains(&line), "{line}\n---\n{log}");
    }
    // The cut stream was retried (PKG_AGENT_HTTP_RETRIES), the others not.
    assert_eq!(garbage[0].requests().len(), 1);
    assert_eq!(garbage[3].requests().len(), 4);
    let init = &garbage[0].requests()[0];
    assert_eq!(init.method, "POST");
    assert_eq!(
        init.header("Accept"),
        Some("application/json, text/event-stream")
    );
    assert!(init.body_text().contains(r#""method":"initialize""#));
    assert!(init
        .body_text()
        .contains(r#""protocolVersion":"2025-11-25""#));
}

/// `agent_config mcp list|add|del|reset`: bounded (4 URLs of at most 127
/// bytes), no duplicates, clear refusals (no memory for the changed list
/// among them); the list is what the next agent start reads.
fn agent_config_mcp_manages_the_list() {
    servers::reset();
    // The list is on the heap once changed: no memory for it is a refusal
    // that leaves the list as it was.
    heap::inject(heap::Fault::FailFrom(0));
    let refused = servers::add(b"http://10.0.0.9/mcp");
    heap::inject(heap::Fault::Off);
    assert_eq!(refused, Err(servers::Refused::OutOfMemory));
    assert!(servers::get(0).is_none());
    // With a URL in the list: a second one that needs more room is refused
    // whole (no blank left behind), and the list reads as before.
    servers::add(b"http://10.0.0.9/mcp").unwrap();
    let before = msh("agent_config mcp");
    let long = format!("http://10.0.0.10/{}", "p".repeat(100));
    heap::inject(heap::Fault::FailFrom(0));
    let refused = servers::add(long.as_bytes());
    heap::inject(heap::Fault::Off);
    assert_eq!(refused, Err(servers::Refused::OutOfMemory));
    assert_eq!(msh("agent_config mcp"), before);
    assert_eq!(before, (0, "mcp 1: http://10.0.0.9/mcp\n".into()));
    assert_eq!(servers::del(b"http://10.0.0.9/mcp"), Ok(()));
    assert!(servers::get(0).is_none());
    assert_eq!(
        msh("agent_config mcp"),
        (0, "mcp: no remote MCP servers\n".into())
    );
    let (rc, out) = msh("agent_config mcp add http://10.0.0.1:8000/mcp");
    assert_eq!(rc, 0);
    assert_eq!(
        out,
        "mcp 1: http://10.0.0.1:8000/mcp\n(from the next agent start)\n"
    );
    let (rc, out) = msh("agent_config mcp add http://10.0.0.1:8000/mcp");
    assert_eq!(
        (rc, out.as_str()),
        (-1, "agent_config mcp: already in the list\n")
    );
    for i in 2..=4 {
        assert_eq!(
            msh(&format!("agent_config mcp add http://10.0.0.{i}/mcp")).0,
            0
        );
    }
    let (rc, out) = msh("agent_config mcp add http://10.0.0.5/mcp");
    assert_eq!(
        (rc, out.as_str()),
        (-1, "agent_config mcp: the list is full (4 servers)\n")
    );
    let long = format!("agent_config mcp add http://{}/mcp", "h".repeat(130));
    let (rc, out) = msh(&long);
    assert_eq!(rc, -1);
    assert!(
        out.contains("a URL is 1 to 127 bytes without blanks"),
        "{out}"
    );
    let (rc, out) = msh("agent_config mcp del http://10.0.0.2/mcp");
    assert_eq!(rc, 0);
    assert_eq!(
        out,
        "mcp 1: http://10.0.0.1:8000/mcp\nmcp 2: http://10.0.0.3/mcp\nmcp 3: http://10.0.0.4/mcp\n(from the next agent start)\n"
    );
    let (rc, out) = msh("agent_config mcp del http://10.0.0.2/mcp");
    assert_eq!(
        (rc, out.as_str()),
        (-1, "agent_config mcp: not in the list\n")
    );
    let (rc, out) = msh("agent_config mcp add");
    assert_eq!(rc, -1);
    assert!(out.starts_with("usage: agent_config mcp"), "{out}");
    assert_eq!(
        msh("agent_config mcp reset").1,
        "mcp: no remote MCP servers\n(from the next agent start)\n"
    );
}

/// The JSON-RPC id of a recorded request (`"id":N`), if any.
fn id_of(req: &RecordedRequest) -> Option<u64> {
    let body = req.body_text();
    let at = body.find("\"id\":")? + 5;
    body[at..]
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

/// A scripted MCP server (JSON answers) speaking `version`, whose
/// `tools/list` has two pages (`endless`: a next page for ever), or whose
/// `initialize` fails with a JSON-RPC error (`version` empty).
fn fake_mcp(version: &'static str, endless: bool) -> impl Fn(&RecordedRequest) -> ScriptedResponse {
    move |req| {
        let body = req.body_text();
        let id = id_of(req).unwrap_or(0);
        let tool = |name: &str| {
            format!(
                r#"{{"name":{},"description":"d","inputSchema":{{"type":"object","properties":{{"n":{{"type":"integer"}}}}}}}}"#,
                json_string(name)
            )
        };
        let answer = |result: String| {
            ScriptedResponse::json(
                200,
                &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#),
            )
        };
        if body.contains(r#""method":"initialize""#) {
            if version.is_empty() {
                return ScriptedResponse::json(
                    200,
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"unsupported client"}}}}"#
                    ),
                );
            }
            return answer(format!(
                r#"{{"protocolVersion":"{version}","capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"fake","version":"1"}}}}"#
            ))
            .header("Mcp-Session-Id", "sess-42");
        }
        if body.contains(r#""method":"notifications/initialized""#) {
            return ScriptedResponse::raw(202, "application/json", "");
        }
        if endless {
            return answer(format!(
                r#"{{"tools":[{}],"nextCursor":"more"}}"#,
                tool("again")
            ));
        }
        if body.contains(r#""cursor":"p2""#) {
            answer(format!(r#"{{"tools":[{}]}}"#, tool("b1")))
        } else {
            let long = "x".repeat(100);
            answer(format!(
                r#"{{"tools":[{},{}],"nextCursor":"p2"}}"#,
                tool("add.v2/beta"),
                tool(&long)
            ))
        }
    }
}

/// `nextCursor` paging, the name rules, an older protocol version taken,
/// a version refused, a JSON-RPC error to `initialize`, the page cap; the
/// session id and protocol version on every request after the handshake.
/// A `tools/call` whose answer fails (here HTTP 503, which a handshake
/// request would retry) is sent once: the server may have run the tool.
/// With `refused` the server answers a JSON-RPC error instead, and the
/// model is told what the server said, without the doubt.
fn a_failed_call_is_not_sent_again(refused: bool) {
    let fake = fake_mcp("2025-11-25", false);
    let remote = LlmServer::with_model(move |req| {
        if req.body_text().contains(r#""method":"tools/call""#) {
            if refused {
                let id = id_of(req).unwrap_or(0);
                ScriptedResponse::json(
                    200,
                    &format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32602,"message":"Unknown tool: b1"}}}}"#
                    ),
                )
            } else {
                ScriptedResponse::json(503, r#"{"error":"busy"}"#)
            }
        } else {
            fake(req)
        }
    })
    .unwrap();
    servers::reset();
    servers::add(format!("{}/mcp", remote.base_url()).as_bytes()).unwrap();
    let llm = LlmServer::start(vec![
        ScriptedResponse::tool_calls(&[("c1", "m1_b1", &[r#"{"n":1}"#])]),
        ScriptedResponse::text(&["told"]),
    ])
    .unwrap();
    let agent = Agent::start_at(&llm.url(), Overrides::default());
    assert_eq!(agent.ask("call b1"), "told");
    drop(agent);
    let calls = remote
        .requests()
        .iter()
        .filter(|r| r.body_text().contains(r#""method":"tools/call""#))
        .count();
    assert_eq!(calls, 1, "a failed tools/call was sent again");
    let msgs = messages_of(&llm.requests()[1]);
    let result = &msgs.last().unwrap().content;
    if refused {
        assert!(
            result.contains("(JSON-RPC error -32602: Unknown tool: b1)")
                && !result.contains("may or may not"),
            "{result}"
        );
    } else {
        assert!(
            result.contains("could not be called") && result.contains("may or may not have run"),
            "{result}"
        );
    }
}

/// Once PKG_AGENT_MCP_MAX_TOOLS (16 here) remote tools are registered, the
/// servers after are not handshaken at all, and the log says why.
fn servers_past_the_tool_cap_are_not_asked() {
    let fake = fake_mcp("2025-11-25", false);
    let many = LlmServer::with_model(move |req| {
        if req.body_text().contains(r#""method":"tools/list""#) {
            let id = id_of(req).unwrap_or(0);
            let tools: Vec<String> = (0..20)
                .map(|i| format!(r#"{{"name":"t{i}","inputSchema":{{"type":"object"}}}}"#))
                .collect();
            ScriptedResponse::json(
                200,
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]}}}}"#,
                    tools.join(",")
                ),
            )
        } else {
            fake(req)
        }
    })
    .unwrap();
    let later = LlmServer::with_model(fake_mcp("2025-11-25", false)).unwrap();
    servers::reset();
    servers::add(format!("{}/mcp", many.base_url()).as_bytes()).unwrap();
    servers::add(format!("{}/mcp", later.base_url()).as_bytes()).unwrap();
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    let log = local_answer_with_log(&llm, "heap not back after the tool cap");
    assert!(
        log.contains(&format!(
            "mcp: {}/mcp: its tools are left out (PKG_AGENT_MCP_MAX_TOOLS reached)",
            later.base_url()
        )),
        "{log}"
    );
    assert!(
        later.requests().is_empty(),
        "the server past the cap was asked"
    );
    let names: Vec<String> = offered_tools(&llm.requests()[0])
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| n.starts_with("m1_"))
        .collect();
    assert_eq!(names.len(), 16, "{names:?}");
}

fn paging_versions_and_errors() {
    let paged = LlmServer::with_model(fake_mcp("2025-03-26", false)).unwrap();
    let endless = LlmServer::with_model(fake_mcp("2025-06-18", true)).unwrap();
    let old = LlmServer::with_model(fake_mcp("1999-01-01", false)).unwrap();
    let refusing = LlmServer::with_model(fake_mcp("", false)).unwrap();
    servers::reset();
    for s in [&paged, &endless, &old, &refusing] {
        servers::add(format!("{}/mcp", s.base_url()).as_bytes()).unwrap();
    }
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    let log = local_answer_with_log(&llm, "heap not back after the scripted servers");

    let names: Vec<String> = offered_tools(&llm.requests()[0])
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let long = format!("m1_{}", "x".repeat(61));
    assert_eq!(long.len(), 64);
    for want in ["m1_add_v2_beta", long.as_str(), "m1_b1", "m2_again", "add"] {
        assert!(names.iter().any(|n| n == want), "{want} not in {names:?}");
    }
    // The endless server's 8 pages all list "again": one registered, the
    // rest refused as duplicates; then the cap.
    assert!(log.contains("more than 8 tools/list pages"), "{log}");
    assert_eq!(endless.requests().len(), 2 + 8);
    assert!(log.contains(&format!(
        "mcp: {}/mcp: its tools are left out (initialize failed: the server speaks protocol version 1999-01-01",
        old.base_url()
    )), "{log}");
    assert!(log.contains(&format!(
        "mcp: {}/mcp: its tools are left out (initialize failed: JSON-RPC error -32602: unsupported client)",
        refusing.base_url()
    )), "{log}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("m3_") || n.starts_with("m4_")),
        "{names:?}"
    );

    let reqs = paged.requests();
    let methods: Vec<String> = reqs
        .iter()
        .map(|r| {
            let b = r.body_text();
            let at = b.find(r#""method":""#).unwrap() + 10;
            b[at..].split('"').next().unwrap().to_string()
        })
        .collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/list"
        ]
    );
    assert_eq!(reqs[0].header("Mcp-Session-Id"), None);
    assert_eq!(reqs[0].header("MCP-Protocol-Version"), None);
    assert_eq!(id_of(&reqs[1]), None, "a notification has no id");
    for r in &reqs[1..] {
        assert_eq!(r.header("Mcp-Session-Id"), Some("sess-42"));
        assert_eq!(r.header("MCP-Protocol-Version"), Some("2025-03-26"));
        let port = paged.addr().port();
        // Ours, with the port, and webclient's own left out.
        assert_eq!(r.header_all("Host"), [format!("127.0.0.1:{port}").as_str()]);
    }
    assert!(!reqs[2].body_text().contains("cursor"));
    assert!(reqs[3].body_text().contains(r#""params":{"cursor":"p2"}"#));
}
