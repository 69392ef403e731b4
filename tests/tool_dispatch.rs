//! One tool dispatch, one lock: the same C tool run by the agent loop (the
//! model's tool calls, several rounds of parallel calls) and by the MCP
//! server (`tools/call` over HTTP, with a token) at the same time. Both go
//! through the registry under the tool lock (`ToolSet` in
//! src/runtime/tool_run.rs), so the tool never runs twice at once, every run
//! is one the test asked for, and every caller gets its own run's text.
//!
//! The probe is a C-ABI tool written here: it counts the runs inside it,
//! keeps the highest count seen, notes who asked (a `caller` argument) and
//! on which thread it ran, sleeps 100 ms and answers a text naming the
//! call. A negative control runs the same function straight from two
//! threads, with no lock, and shows that the probe does see an overlap
//! when there is one.

use rtt_agent::cjson::sys::*;
// The C exports (messages.h, tool_base.h), as a board's C code calls them.
use rtt_agent::abilities::mcp_server::server;
use rtt_agent::ffi::messages::{
    messages_append, messages_create, messages_destroy, messages_get_content_idx,
};
use rtt_agent::ffi::tools::append_tool;
use rtt_agent::net::token_limit;
use rtt_agent::runtime::chat::Overrides;
use rtt_agent::runtime::tools::{AgentToolList, AgentToolRet};
#[path = "support/http_exchange.rs"]
mod http_exchange;
use http_exchange::Resp;
use rtt_agent_testkit::agent::*;
use rtt_agent_testkit::llm_server::*;
use std::ffi::{CStr, CString};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

const TOOL: &str = "slow_probe";
const MCP_TOKEN: &CStr = c"probe-token-0123456789";
/// How long one run of the probe takes.
const RUN: Duration = Duration::from_millis(100);
/// The loop's side: rounds of parallel calls in one turn.
const ROUNDS: usize = 3;
const PER_ROUND: usize = 3;
/// The MCP side: calls one after the other.
const MCP_CALLS: usize = 8;

// ---------------------------------------------------------------------------
// The probe
// ---------------------------------------------------------------------------

/// Runs inside the probe now, and the most there ever were at once.
static INSIDE: AtomicUsize = AtomicUsize::new(0);
static MAX_INSIDE: AtomicUsize = AtomicUsize::new(0);

/// One run of the probe, in the order the runs began.
#[derive(Clone, Debug)]
struct Run {
    caller: String,
    n: i64,
    thread: ThreadId,
}

static RUNS: Mutex<Vec<Run>> = Mutex::new(Vec::new());

fn reset_probe() {
    INSIDE.store(0, Ordering::SeqCst);
    MAX_INSIDE.store(0, Ordering::SeqCst);
    RUNS.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

fn runs() -> Vec<Run> {
    RUNS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

fn count(caller: &str) -> usize {
    runs().iter().filter(|r| r.caller == caller).count()
}

/// The text the probe answers for a call.
fn answer(caller: &str, n: i64) -> String {
    format!("{TOOL} {caller}#{n} ok")
}

/// The probe's definition: `caller` (string) and `n` (integer), both
/// required.
fn probe_definition() -> *mut cJSON {
    let def = CString::new(format!(
        r#"{{"type":"function","function":{{"name":"{TOOL}","description":"Takes 100 ms and says who called it.","parameters":{{"type":"object","properties":{{"caller":{{"type":"string"}},"n":{{"type":"integer"}}}},"required":["caller","n"]}}}}}}"#
    ))
    .unwrap();
    // SAFETY: a NUL-terminated string; the tree is handed to the caller.
    let tree = unsafe { cJSON_Parse(def.as_ptr()) };
    assert!(!tree.is_null());
    tree
}

/// The probe tool, as a C tool is written: reads its arguments, sets its
/// node's `ret` (a fresh one-text result set, the old one freed).
unsafe extern "C" fn slow_probe(args: *mut cJSON, node: *mut AgentToolList) {
    let now = INSIDE.fetch_add(1, Ordering::SeqCst) + 1;
    MAX_INSIDE.fetch_max(now, Ordering::SeqCst);
    // SAFETY: `args` is the live arguments object the caller lends; its
    // items are read while it lives and copied.
    let (caller, n) = unsafe {
        let c = cJSON_GetObjectItemCaseSensitive(args, c"caller".as_ptr());
        let caller = if c.is_null() || (*c).valuestring.is_null() {
            "?".to_string()
        } else {
            CStr::from_ptr((*c).valuestring)
                .to_string_lossy()
                .into_owned()
        };
        let n = cJSON_GetObjectItemCaseSensitive(args, c"n".as_ptr());
        let n = if n.is_null() {
            -1
        } else {
            (*n).valuedouble as i64
        };
        (caller, n)
    };
    RUNS.lock().unwrap_or_else(|e| e.into_inner()).push(Run {
        caller: caller.clone(),
        n,
        thread: std::thread::current().id(),
    });
    std::thread::sleep(RUN);
    let text = CString::new(answer(&caller, n)).unwrap();
    // SAFETY: the node handed to the tool; its result set is replaced as
    // the tool guide does it (the old one destroyed, a new one made).
    unsafe {
        messages_destroy((*node).ret.messages);
        let m = messages_create(1);
        // 0: messages.h's TYPE_TEXT.
        messages_append(m, 0, text.as_ptr());
        (*node).ret.messages = m;
        (*node).ret.ret = 0;
    }
    INSIDE.fetch_sub(1, Ordering::SeqCst);
}

// ---------------------------------------------------------------------------
// The model and the MCP client
// ---------------------------------------------------------------------------

/// The scripted model: "register" gets a text; "probe" gets `ROUNDS`
/// rounds of `PER_ROUND` parallel calls of the probe (`caller` "loop", `n`
/// numbering them from 1), then "done". Before the second round it waits
/// (up to 5 s) until the probe has run for MCP, so the two sides are sure
/// to take turns.
fn model(req: &RecordedRequest) -> ScriptedResponse {
    let msgs = messages_of(req);
    let user = msgs.iter().rposition(|m| m.role == "user").unwrap();
    if msgs[user].content != "probe" {
        return ScriptedResponse::text(&["registered"]);
    }
    let rounds_done = msgs[user..]
        .iter()
        .filter(|m| m.role == "assistant" && !m.calls.is_empty())
        .count();
    if rounds_done == ROUNDS {
        return ScriptedResponse::text(&["done"]);
    }
    if rounds_done == 1 {
        let until = Instant::now() + Duration::from_secs(5);
        while count("mcp") == 0 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let calls: Vec<(String, String)> = (0..PER_ROUND)
        .map(|i| {
            let n = rounds_done * PER_ROUND + i + 1;
            (
                format!("loop_{n}"),
                format!(r#"{{"caller":"loop","n":{n}}}"#),
            )
        })
        .collect();
    let args: Vec<[&str; 1]> = calls.iter().map(|(_, a)| [a.as_str()]).collect();
    let calls: Vec<(&str, &str, &[&str])> = calls
        .iter()
        .zip(&args)
        .map(|((id, _), a)| (id.as_str(), TOOL, &a[..]))
        .collect();
    ScriptedResponse::tool_calls(&calls)
}

/// One POST to the MCP server, with the token unless `token` is false.
fn post(addr: SocketAddr, token: bool, session: Option<&str>, body: &str) -> Resp {
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: board\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
        body.len()
    );
    if token {
        req.push_str(&format!(
            "Authorization: Bearer {}\r\n",
            MCP_TOKEN.to_str().unwrap()
        ));
    }
    if let Some(sid) = session {
        req.push_str(&format!("Mcp-Session-Id: {sid}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    Resp::exchange(TcpStream::connect(addr).unwrap(), req.as_bytes())
}

fn call_body(id: usize, n: usize) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{TOOL}","arguments":{{"caller":"mcp","n":{n}}}}}}}"#
    )
}

// ---------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------

#[test]
fn the_loop_and_the_mcp_server_run_one_tool_under_one_lock() {
    let _serial = lock();
    reset_probe();
    token_limit::forget_all();
    let llm = LlmServer::with_model(model).unwrap();
    server::set_overrides(server::Overrides {
        enabled: Some(true),
        port: Some(0),
        token: Some(MCP_TOKEN),
        allow_anonymous: Some(false),
        ..Default::default()
    });
    let agent = Agent::start(&llm, Overrides::default());
    let port = server::port().expect("with a token the MCP server listens");
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    // Registered from another thread while the loop runs, as a board's
    // own code would: queued, and added by the loop before its next
    // message.
    std::thread::spawn(|| {
        // SAFETY: a fresh definition handed over, and the probe above.
        let rc = unsafe { append_tool(probe_definition(), Some(slow_probe)) };
        assert_eq!(rc, 0)
    })
    .join()
    .unwrap();
    assert_eq!(agent.ask("register"), "registered");
    assert!(runs().is_empty());

    // The MCP session; a call without the token is refused and runs nothing.
    let init = post(
        addr,
        true,
        None,
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    );
    assert_eq!(init.status, 200, "{}", init.body);
    let sid = init.header("Mcp-Session-Id").expect("a session id");
    let refused = post(addr, false, Some(&sid), &call_body(2, 0));
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert!(runs().is_empty(), "a call without the token ran the tool");
    let listed = post(
        addr,
        true,
        Some(&sid),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#,
    );
    assert!(
        listed.body.contains(&format!(r#""name":"{TOOL}""#)),
        "{}",
        listed.body
    );

    // The MCP client: starts once the loop's first run has begun (so its
    // first call waits for the lock the loop holds), then calls the probe
    // MCP_CALLS times, one after the other.
    let started = Instant::now();
    let mcp = std::thread::spawn(move || {
        let until = Instant::now() + Duration::from_secs(10);
        while count("loop") == 0 {
            assert!(Instant::now() < until, "the loop never ran the probe");
            std::thread::sleep(Duration::from_millis(2));
        }
        (1..=MCP_CALLS)
            .map(|n| {
                let r = post(addr, true, Some(&sid), &call_body(10 + n, n));
                (n, r.status, r.body)
            })
            .collect::<Vec<_>>()
    });
    // The loop: one user message, ROUNDS rounds of PER_ROUND parallel calls.
    assert_eq!(agent.ask("probe"), "done");
    let answers = mcp.join().unwrap();
    let took = started.elapsed();
    drop(agent);
    server::set_overrides(server::Overrides::default());
    token_limit::forget_all();

    let runs = runs();
    let order: Vec<String> = runs
        .iter()
        .map(|r| format!("{}#{}", r.caller, r.n))
        .collect();
    // Every run is one that was asked for, once: the loop's and MCP's.
    let mut loop_ns: Vec<i64> = runs
        .iter()
        .filter(|r| r.caller == "loop")
        .map(|r| r.n)
        .collect();
    let mut mcp_ns: Vec<i64> = runs
        .iter()
        .filter(|r| r.caller == "mcp")
        .map(|r| r.n)
        .collect();
    loop_ns.sort();
    mcp_ns.sort();
    assert_eq!(
        loop_ns,
        (1..=(ROUNDS * PER_ROUND) as i64).collect::<Vec<_>>(),
        "{order:?}"
    );
    assert_eq!(
        mcp_ns,
        (1..=MCP_CALLS as i64).collect::<Vec<_>>(),
        "{order:?}"
    );
    assert_eq!(runs.len(), ROUNDS * PER_ROUND + MCP_CALLS, "{order:?}");
    // The two sides took turns: an MCP run between two of the loop's.
    let first_loop = order.iter().position(|o| o.starts_with("loop")).unwrap();
    let last_loop = order.iter().rposition(|o| o.starts_with("loop")).unwrap();
    assert!(
        order[first_loop..last_loop]
            .iter()
            .any(|o| o.starts_with("mcp")),
        "the sides did not interleave: {order:?}"
    );
    // Two threads ran it: the loop's and the server's.
    let loop_threads: Vec<ThreadId> = runs
        .iter()
        .filter(|r| r.caller == "loop")
        .map(|r| r.thread)
        .collect();
    assert!(
        runs.iter()
            .filter(|r| r.caller == "mcp")
            .all(|r| !loop_threads.contains(&r.thread)),
        "MCP's runs were on the loop's thread"
    );
    // One lock: never two runs at once.
    assert_eq!(
        MAX_INSIDE.load(Ordering::SeqCst),
        1,
        "two runs of the tool overlapped: {order:?}"
    );
    assert_eq!(INSIDE.load(Ordering::SeqCst), 0);

    // Every MCP call got its own run's text.
    for (n, status, body) in &answers {
        assert_eq!(*status, 200, "mcp#{n}: {body}");
        let text = format!(r#""text":"{}""#, answer("mcp", *n as i64));
        assert!(body.contains(&text), "mcp#{n}: {body}");
        assert!(body.contains(r#""isError":false"#), "mcp#{n}: {body}");
    }
    // The model saw every loop call's own text, under that call's id, in
    // the request after its round.
    let last = llm
        .requests()
        .into_iter()
        .rev()
        .find(|r| {
            let tools = messages_of(r).iter().filter(|m| m.role == "tool").count();
            tools == ROUNDS * PER_ROUND
        })
        .expect("a request with every tool result");
    let tool_msgs: Vec<(String, String)> = messages_of(&last)
        .into_iter()
        .filter(|m| m.role == "tool")
        .map(|m| (m.tool_call_id, m.content))
        .collect();
    for n in 1..=ROUNDS * PER_ROUND {
        let id = format!("loop_{n}");
        let want = answer("loop", n as i64);
        assert!(
            tool_msgs.iter().any(|(i, c)| *i == id && *c == want),
            "{id}: want {want:?}; the model saw {tool_msgs:?}"
        );
    }
    // Serialised: at least every run's 100 ms, one after the other.
    let all = (ROUNDS * PER_ROUND + MCP_CALLS) as u32;
    assert!(took >= RUN * (all - 1), "{took:?}");
    eprintln!(
        "{} loop runs and {} MCP runs in {took:?}, at most {} at once; order {order:?}",
        ROUNDS * PER_ROUND,
        MCP_CALLS,
        MAX_INSIDE.load(Ordering::SeqCst)
    );
}

/// The negative control: the probe run straight from two threads, with no
/// tool lock between them, sees the overlap (its nodes are the threads'
/// own, so nothing else is shared).
#[test]
fn without_the_lock_the_probe_sees_an_overlap() {
    let _serial = lock();
    reset_probe();
    let barrier = Arc::new(Barrier::new(2));
    let threads: Vec<_> = (1..=2)
        .map(|n| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let args = CString::new(format!(r#"{{"caller":"direct","n":{n}}}"#)).unwrap();
                let mut node = AgentToolList {
                    tool_obj: std::ptr::null_mut(),
                    ret: AgentToolRet {
                        ret: -1,
                        messages: std::ptr::null_mut(),
                    },
                    execute_func: Some(slow_probe),
                    next: std::ptr::null_mut(),
                };
                barrier.wait();
                // SAFETY: a parsed object deleted below, and a node of this
                // thread's own whose result set is destroyed below.
                unsafe {
                    let args = cJSON_Parse(args.as_ptr());
                    assert!(!args.is_null());
                    slow_probe(args, &mut node);
                    cJSON_Delete(args);
                    let text = messages_get_content_idx(node.ret.messages, 0);
                    assert!(!text.is_null());
                    let text = CStr::from_ptr(text).to_string_lossy().into_owned();
                    messages_destroy(node.ret.messages);
                    (node.ret.ret, text)
                }
            })
        })
        .collect();
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    assert_eq!(
        results,
        vec![(0, answer("direct", 1)), (0, answer("direct", 2))]
    );
    assert_eq!(count("direct"), 2);
    assert_eq!(
        MAX_INSIDE.load(Ordering::SeqCst),
        2,
        "the probe did not see two runs at once"
    );
    assert_eq!(INSIDE.load(Ordering::SeqCst), 0);
}
