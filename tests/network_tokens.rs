//! Secure by default on the network (issue 30), over real TCP: the MCP
//! server does not listen without a token (and says why), the web chat
//! needs the token when one is set and is locked without one, wrong tokens
//! are limited per peer address (the sixth gets 429 with `Retry-After`,
//! another address is unaffected; the table is shared by both servers),
//! and tokens set at run time (`agent_config`, `agent_token_set`) work at
//! once, are shown masked, refused when short, and survive a restart with
//! a state file.

use rtt_agent::abilities::mcp_server::server;
use rtt_agent::host::console;
use rtt_agent::net::token_limit;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent::runtime::config::tokens::{
    self, agent_token_is_set, agent_token_set, AGENT_TOKEN_MCP, AGENT_TOKEN_WEB,
};
use rtt_agent::runtime::settings::web::{set_open_chat, set_token};
use rtt_agent_testkit::shell::msh;
#[path = "support/http_exchange.rs"]
mod http_exchange;
use http_exchange::Resp;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::arith_model;
use rtt_agent_testkit::llm_server::*;
use rtt_agent_testkit::web::{self, WebAgent};
use std::ffi::CStr;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::os::fd::FromRawFd;

const MCP_TOKEN: &CStr = c"mcp-token-0123456789";
const WEB_TOKEN: &CStr = c"web-token-0123456789";

/// A TCP connection to `to` from the loopback address `from` (127.0.0.x:
/// Linux routes all of 127/8 to lo), so tests can be two peers.
fn connect_from(from: Ipv4Addr, to: SocketAddr) -> TcpStream {
    #[repr(C)]
    struct SockaddrIn {
        family: u16,
        port: u16,
        addr: [u8; 4],
        zero: [u8; 8],
    }
    extern "C" {
        fn socket(domain: i32, kind: i32, protocol: i32) -> i32;
        fn bind(fd: i32, addr: *const SockaddrIn, len: u32) -> i32;
        fn connect(fd: i32, addr: *const SockaddrIn, len: u32) -> i32;
    }
    let SocketAddr::V4(to) = to else {
        panic!("IPv4 only")
    };
    let sa = |ip: Ipv4Addr, port: u16| SockaddrIn {
        family: 2, // AF_INET
        port: port.to_be(),
        addr: ip.octets(),
        zero: [0; 8],
    };
    let len = std::mem::size_of::<SockaddrIn>() as u32;
    // SAFETY: plain socket calls with a local, correctly sized sockaddr_in;
    // the descriptor is handed to TcpStream, which owns it from then on.
    unsafe {
        let fd = socket(2, 1, 0); // AF_INET, SOCK_STREAM
        assert!(fd >= 0, "socket");
        let stream = TcpStream::from_raw_fd(fd);
        assert_eq!(bind(fd, &sa(from, 0), len), 0, "bind to {from}");
        assert_eq!(connect(fd, &sa(*to.ip(), to.port()), len), 0, "connect");
        stream
    }
}

fn exchange(from: Ipv4Addr, to: SocketAddr, request: &str) -> Resp {
    Resp::exchange(connect_from(from, to), request.as_bytes())
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

fn mcp_init(from: Ipv4Addr, port: u16, token: Option<&str>) -> Resp {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    exchange(
        from,
        SocketAddr::from(([127, 0, 0, 1], port)),
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: board\r\nContent-Type: application/json\r\n{auth}Content-Length: {}\r\n\r\n{INIT}",
            INIT.len()
        ),
    )
}

fn web_post(from: Ipv4Addr, to: SocketAddr, path: &str, json: &str) -> Resp {
    exchange(
        from,
        to,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: board\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{json}",
            json.len()
        ),
    )
}

const ONE: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);
const TWO: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// A fresh board for each test: no wrong tokens counted, no token set at
/// run time, no state file.
fn fresh() {
    token_limit::forget_all();
    tokens::reboot(None);
}

fn start_mcp(llm: &LlmServer, o: server::Overrides) -> Agent {
    server::set_overrides(server::Overrides {
        enabled: Some(true),
        port: Some(0),
        ..o
    });
    Agent::start(llm, Overrides::default())
}

#[test]
fn mcp_without_a_token_does_not_listen_and_says_why() {
    let _serial = lock();
    fresh();
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    console::rt_host_console_capture(1);
    let agent = start_mcp(&llm, server::Overrides::default());
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert_eq!(server::port(), None, "no token: the server must not listen");
    let why: Vec<&str> = log.lines().filter(|l| l.contains("[mcp]")).collect();
    assert_eq!(why.len(), 1, "one line: {log}");
    assert!(
        why[0].contains("not started: no token")
            && why[0].contains("PKG_AGENT_MCP_TOKEN")
            && why[0].contains("agent_config mcp-token"),
        "{}",
        why[0]
    );
    drop(agent);
    // A build token shorter than 16 characters is no token.
    console::rt_host_console_capture(1);
    let agent = start_mcp(
        &llm,
        server::Overrides {
            token: Some(c"short-token"),
            ..Default::default()
        },
    );
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert_eq!(server::port(), None, "{log}");
    assert!(log.contains("PKG_AGENT_MCP_TOKEN is ignored"), "{log}");
    assert!(
        !log.contains("short-token"),
        "the token is never logged: {log}"
    );
    drop(agent);
    // The anonymous option: it listens, and says so.
    console::rt_host_console_capture(1);
    let agent = start_mcp(
        &llm,
        server::Overrides {
            allow_anonymous: Some(true),
            ..Default::default()
        },
    );
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    let port = server::port().expect("anonymous: it listens");
    assert!(log.contains("no token: anyone on the network"), "{log}");
    assert_eq!(mcp_init(ONE, port, None).status, 200);
    drop(agent);
    server::set_overrides(server::Overrides::default());
}

#[test]
fn mcp_six_wrong_tokens_get_429_and_another_peer_is_unaffected() {
    let _serial = lock();
    fresh();
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    let agent = start_mcp(
        &llm,
        server::Overrides {
            token: Some(MCP_TOKEN),
            ..Default::default()
        },
    );
    let port = server::port().expect("with a token it listens");
    let good = MCP_TOKEN.to_str().unwrap();
    assert_eq!(mcp_init(ONE, port, Some(good)).status, 200);
    console::rt_host_console_capture(1);
    for i in 0..5 {
        let r = mcp_init(ONE, port, Some(&format!("wrong-guess-{i:08}")));
        assert_eq!(r.status, 401, "try {i}: {}", r.body);
        assert!(r.header("WWW-Authenticate").is_some());
    }
    let r = mcp_init(ONE, port, Some(good));
    assert_eq!(r.status, 429, "the sixth: {}", r.body);
    let after: u32 = r.header("Retry-After").unwrap().parse().unwrap();
    assert!((55..=60).contains(&after), "{after}");
    assert!(r.body.contains("too many wrong tokens"), "{}", r.body);
    // Still blocked, and the block is logged once, without any token.
    assert_eq!(mcp_init(ONE, port, Some("wrong-guess-again")).status, 429);
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    let blocked: Vec<&str> = log.lines().filter(|l| l.contains("429")).collect();
    assert_eq!(blocked.len(), 1, "{log}");
    assert!(blocked[0].contains("127.0.0.1"), "{log}");
    assert!(!log.contains("wrong-guess") && !log.contains(good), "{log}");
    // Another address: unaffected.
    assert_eq!(mcp_init(TWO, port, Some("wrong-guess-two")).status, 401);
    assert_eq!(mcp_init(TWO, port, Some(good)).status, 200);
    drop(agent);
    server::set_overrides(server::Overrides::default());
    token_limit::forget_all();
}

#[test]
fn web_chat_needs_the_token_and_is_locked_without_one() {
    let _serial = lock();
    let llm = LlmServer::start(vec![ScriptedResponse::text(&["hello"])]).unwrap();
    let agent = WebAgent::start(&llm, Overrides::default());
    fresh();
    let a = agent.addr;
    // No token and PKG_AGENT_WEB_OPEN_CHAT off (the default): locked.
    set_open_chat(None);
    set_token(None);
    for (path, body) in [
        ("/cgi-bin/chat", r#"{"message":"hi"}"#),
        ("/cgi-bin/chat", r#"{"reset":true}"#),
        ("/cgi-bin/cleanup", "{}"),
    ] {
        let r = web_post(ONE, a, path, body);
        assert_eq!(r.status, 403, "{path}: {}", r.body);
        assert!(r.body.contains("PKG_AGENT_WEB_OPEN_CHAT"), "{}", r.body);
    }
    // A token set: chat without it or with a wrong one gets 403.
    set_token(Some(WEB_TOKEN));
    let r = web_post(ONE, a, "/cgi-bin/chat", r#"{"message":"hi"}"#);
    assert_eq!(r.status, 403, "{}", r.body);
    assert!(r.body.contains("a valid token is required"), "{}", r.body);
    let r = web_post(ONE, a, "/cgi-bin/cleanup", "{}");
    assert_eq!(r.status, 403, "{}", r.body);
    // Open chat does not open a chat that has a token.
    set_open_chat(Some(true));
    let r = web_post(
        ONE,
        a,
        "/cgi-bin/chat",
        r#"{"message":"hi","token":"web-token-wrong-00"}"#,
    );
    assert_eq!(r.status, 403, "{}", r.body);
    set_open_chat(None);
    token_limit::forget_all();
    let r = web_post(
        ONE,
        a,
        "/cgi-bin/chat",
        r#"{"message":"hi","token":"web-token-0123456789"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body, r#"{"success":true,"response":"hello"}"#);
    let r = web_post(
        ONE,
        a,
        "/cgi-bin/cleanup",
        r#"{"token":"web-token-0123456789"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    drop(agent);
    set_token(None);
}

#[test]
fn web_six_wrong_tokens_get_429_and_the_table_is_shared_with_mcp() {
    let _serial = lock();
    let llm = LlmServer::with_model(arith_model::respond).unwrap();
    server::set_overrides(server::Overrides {
        enabled: Some(true),
        port: Some(0),
        token: Some(MCP_TOKEN),
        ..Default::default()
    });
    let agent = WebAgent::start(&llm, Overrides::default());
    fresh();
    set_open_chat(None);
    set_token(Some(WEB_TOKEN));
    let a = agent.addr;
    let mcp = server::port().expect("the MCP server runs beside the channel");
    console::rt_host_console_capture(1);
    for i in 0..5 {
        let body = format!(r#"{{"message":"hi","token":"guess-{i:012}"}}"#);
        let r = web_post(ONE, a, "/cgi-bin/chat", &body);
        assert_eq!(r.status, 403, "try {i}: {}", r.body);
    }
    let r = web_post(
        ONE,
        a,
        "/cgi-bin/chat",
        r#"{"message":"hi","token":"web-token-0123456789"}"#,
    );
    assert_eq!(r.status, 429, "the sixth: {}", r.body);
    let after: u32 = r.header("Retry-After").unwrap().parse().unwrap();
    assert!((55..=60).contains(&after), "{after}");
    assert!(r.body.starts_with("{\"success\":false"), "{}", r.body);
    assert!(
        !r.body.contains("<html"),
        "no WebNet error page: {}",
        r.body
    );
    // The settings too, and the MCP server: one table for the board.
    let r = web_post(
        ONE,
        a,
        "/cgi-bin/get_config",
        r#"{"token":"web-token-0123456789"}"#,
    );
    assert_eq!(r.status, 429, "{}", r.body);
    let r = mcp_init(ONE, mcp, Some(MCP_TOKEN.to_str().unwrap()));
    assert_eq!(r.status, 429, "{}", r.body);
    let log = console::take_captured();
    console::rt_host_console_capture(0);
    assert_eq!(
        log.lines().filter(|l| l.contains("429")).count(),
        1,
        "logged once: {log}"
    );
    assert!(
        !log.contains("guess-") && !log.contains("web-token-0123"),
        "{log}"
    );
    // Another address: unaffected.
    let r = web_post(
        TWO,
        a,
        "/cgi-bin/chat",
        r#"{"message":"what is 2+3","token":"web-token-0123456789"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        mcp_init(TWO, mcp, Some(MCP_TOKEN.to_str().unwrap())).status,
        200
    );
    drop(agent);
    set_token(None);
    server::set_overrides(server::Overrides::default());
    token_limit::forget_all();
}

#[test]
fn tokens_set_at_run_time_work_at_once_and_survive_a_restart() {
    let _serial = lock();
    let state = std::env::temp_dir().join(format!("rtt-agent-state-{}", std::process::id()));
    let _ = std::fs::remove_file(&state);
    let state_c: &'static CStr = Box::leak(
        std::ffi::CString::new(state.to_str().unwrap())
            .unwrap()
            .into_boxed_c_str(),
    );
    let llm = LlmServer::start(vec![
        ScriptedResponse::text(&["one"]),
        ScriptedResponse::text(&["two"]),
    ])
    .unwrap();
    tokens::reboot(Some(state_c));
    let agent = WebAgent::start(&llm, Overrides::default());
    set_open_chat(None);
    set_token(None);
    let a = agent.addr;

    // Refused: too short, blank, and "none" without the open option.
    let (rc, out) = msh("agent_config web-token short");
    assert_eq!(rc, -1);
    assert!(
        out.contains("at least 16 characters (this one has 5)"),
        "{out}"
    );
    assert!(
        !out.contains("short\n") && !out.contains(": short"),
        "{out}"
    );
    let (rc, out) = msh("agent_config web-token none");
    assert_eq!(rc, -1);
    assert!(out.contains("PKG_AGENT_WEB_OPEN_CHAT"), "{out}");
    let (rc, out) = msh("agent_config mcp-token \"\"");
    assert_eq!(rc, -1);
    assert!(out.contains("PKG_AGENT_MCP_ALLOW_ANONYMOUS"), "{out}");
    assert!(!state.exists(), "nothing refused was written");

    // Set: works at once, shown masked, written to the state file.
    let (rc, out) = msh("agent_config web-token run-time-web-token-42");
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("kept in the state file"), "{out}");
    assert!(!out.contains("run-time-web"), "never echoed: {out}");
    let (_, shown) = msh("agent_config");
    assert!(
        shown.contains("web token: ******** (21 characters)"),
        "{shown}"
    );
    assert!(shown.contains("mcp token: (none)"), "{shown}");
    assert!(!shown.contains("run-time"), "{shown}");
    let r = web_post(
        ONE,
        a,
        "/cgi-bin/chat",
        r#"{"message":"hi","token":"run-time-web-token-42"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let r = web_post(ONE, a, "/cgi-bin/chat", r#"{"message":"hi"}"#);
    assert_eq!(r.status, 403, "{}", r.body);
    // The C API: the MCP token.
    // SAFETY: NUL-terminated literals.
    unsafe {
        assert_eq!(agent_token_set(AGENT_TOKEN_MCP, c"tiny".as_ptr()), -1);
        assert_eq!(agent_token_set(AGENT_TOKEN_MCP, c"".as_ptr()), -2);
        assert_eq!(agent_token_set(9, c"mcp-run-time-token-01".as_ptr()), -3);
        assert_eq!(
            agent_token_set(AGENT_TOKEN_MCP, c"mcp-run-time-token-01".as_ptr()),
            0
        );
    }
    assert_eq!(agent_token_is_set(AGENT_TOKEN_MCP), 1);
    assert_eq!(agent_token_is_set(AGENT_TOKEN_WEB), 1);
    let saved = std::fs::read_to_string(&state).unwrap();
    assert!(saved.contains("web-token=run-time-web-token-42"), "{saved}");
    assert!(saved.contains("mcp-token=mcp-run-time-token-01"), "{saved}");
    assert!(!state.with_extension("tmp").exists());
    drop(agent);

    // A restart: memory forgotten, the state file read again.
    tokens::reboot(Some(state_c));
    server::set_overrides(server::Overrides {
        enabled: Some(true),
        port: Some(0),
        ..Default::default()
    });
    let agent = WebAgent::start(&llm, Overrides::default());
    set_open_chat(None);
    let port = server::port().expect("the MCP token from the state file");
    assert_eq!(
        mcp_init(ONE, port, Some("mcp-run-time-token-01")).status,
        200
    );
    let r = web_post(
        ONE,
        agent.addr,
        "/cgi-bin/chat",
        r#"{"message":"hi","token":"run-time-web-token-42"}"#,
    );
    assert_eq!(r.status, 200, "{}", r.body);
    // Without a state file, a restart forgets them.
    tokens::reboot(None);
    assert_eq!(agent_token_is_set(AGENT_TOKEN_WEB), 0);
    // NULL: back to the build's value.
    tokens::reboot(Some(state_c));
    // SAFETY: NULL is allowed (the build's value).
    let rc = unsafe { agent_token_set(AGENT_TOKEN_WEB, std::ptr::null()) };
    assert_eq!(rc, 0);
    assert_eq!(agent_token_is_set(AGENT_TOKEN_WEB), 0);
    assert!(!std::fs::read_to_string(&state)
        .unwrap()
        .contains("web-token"));
    drop(agent);
    server::set_overrides(server::Overrides::default());
    tokens::reboot(None);
    let _ = std::fs::remove_file(&state);
    token_limit::forget_all();
    let _ = web::web_addr();
}
