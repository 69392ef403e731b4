//! A slow server against the request deadline
//! (`PKG_AGENT_REQUEST_TIMEOUT_MS`): one that drips a byte a second (each
//! framing: Content-Length, chunked, close-delimited), and the agent loop's
//! reply when that happens. Each must end by the
//! deadline (webclient's timeouts have whole seconds, so within a second
//! after it) with an error that says the request timed out, heap bounded
//! and back at its baseline. (`chat_endless.rs`: silence, stalls and
//! endless streams; `chat_deadline.rs`: too much at once, and retries.)
//!
//! On the code before, the timeout was per read: the drip never timed out
//! (a 10 s read timeout, a byte every second: it ends when the answer does,
//! minutes later).
//!
//! One test function in a process of its own: the heap figures are exact,
//! and the test harness allocates while other tests run.

use rtt_agent::ffi::chat::{set_overrides, Overrides};
use rtt_agent::ffi::config::agent_config_set;
use rtt_agent::host::heap;
use rtt_agent_testkit::agent::Agent;
use rtt_agent_testkit::chat_call::{chat_json, Answer};
use rtt_agent_testkit::llm_server::*;
use std::ffi::CString;
use std::io::Write;
use std::time::{Duration, Instant};

const HI: &str = r#"[{"role":"user","content":"hi"}]"#;
/// The deadline of every request here.
const DEADLINE: Duration = Duration::from_millis(1500);
/// How late after the deadline a request may end: webclient's socket
/// timeouts have whole seconds, and one read may be under way.
const GRACE: Duration = Duration::from_millis(1200);
/// Heap a request may take above its baseline here: the session and its
/// 1 KB header buffer, the 4 KB read buffer (or the 2 KB error body), the
/// stream's state, the answer and one tool call's arguments up to their
/// caps (4 KB each, see `overrides`), with room to spare (measured: 1.6 to
/// 11.7 KB). Nothing grows with how long or how much a server sends.
const HEAP_BOUND: usize = 24 * 1024;

fn overrides(retries: usize) -> Overrides {
    Overrides {
        // Longer than the deadline: only the deadline can end these.
        timeout_ms: Some(10_000),
        retries: Some(retries),
        retry_base_ms: Some(10),
        request_timeout_ms: Some(DEADLINE.as_millis() as usize),
        max_content: Some(4096),
        max_reasoning: Some(4096),
        max_tool_args: Some(4096),
        max_token: Some(1024),
    }
}

fn point_at(server: &LlmServer) {
    let url = CString::new(server.url()).unwrap();
    // SAFETY: NUL-terminated strings that outlive the call, which copies them.
    unsafe { agent_config_set(c"sk-hostile".as_ptr(), c"m".as_ptr(), url.as_ptr()) };
}

/// One `chat()` against `server`, its outcome and duration handed to
/// `check`; fails if the heap went more than [`HEAP_BOUND`] above its
/// baseline meanwhile, or is not back at it once `check` is done.
fn run(
    what: &str,
    server: &LlmServer,
    retries: usize,
    check: impl FnOnce(Result<Answer, String>, Duration),
) {
    point_at(server);
    set_overrides(overrides(retries));
    let baseline = heap::used();
    heap::rt_host_heap_reset_max_used();
    let t0 = Instant::now();
    let outcome = chat_json(HI, None);
    let took = t0.elapsed();
    let peak = heap::max_used() - baseline;
    // Straight to stderr: the harness's capture of `eprintln!` grows a
    // buffer on this thread's heap, inside the figures.
    let mut err = std::io::stderr();
    let _ = match &outcome {
        Ok(a) => writeln!(
            err,
            "{what}: {took:?}, heap peak +{peak} B, answered ({} bytes)",
            a.content.len()
        ),
        Err(e) => writeln!(err, "{what}: {took:?}, heap peak +{peak} B, error: {e}"),
    };
    assert!(peak < HEAP_BOUND, "{what}: heap peak +{peak} B");
    check(outcome, took);
    assert_eq!(heap::used(), baseline, "{what}: heap back at its baseline");
}

/// A request that had to end by the deadline, saying so.
fn timed_out(what: &str, outcome: Result<Answer, String>, took: Duration) {
    let err = match outcome {
        Ok(a) => panic!("{what}: answered {:?}", a.content),
        Err(e) => e,
    };
    assert!(
        err.contains("the request timed out") && err.contains("1500 ms"),
        "{what}: {err}"
    );
    assert!(
        took >= DEADLINE - Duration::from_millis(100),
        "{what}: {took:?}"
    );
    assert!(took < DEADLINE + GRACE, "{what}: took {took:?}");
}

#[test]
fn a_hostile_server_meets_the_deadline() {
    let _serial = rtt_agent_testkit::agent::lock();
    // Warm up: anything allocated once per process is allocated now.
    let warm = LlmServer::start(vec![ScriptedResponse::text(&["warm"])]).unwrap();
    point_at(&warm);
    set_overrides(overrides(0));
    assert_eq!(
        chat_json(HI, None).map(|a| a.content).as_deref(),
        Ok("warm")
    );
    drop(warm);

    let answer = || ScriptedResponse::text(&["Hello, ", "this is a long and slow answer."]);
    let cases: Vec<(&str, ScriptedResponse)> = vec![
        // A byte a second: each read gets something well within its 10 s.
        (
            "1 byte/s, Content-Length",
            answer()
                .transfer(Transfer::ContentLength)
                .drip(Duration::from_secs(1)),
        ),
        ("1 byte/s, chunked", answer().drip(Duration::from_secs(1))),
        (
            "1 byte/s, close-delimited",
            answer()
                .transfer(Transfer::Close)
                .drip(Duration::from_secs(1)),
        ),
    ];
    for (what, script) in cases {
        // Retries allowed: the deadline bounds them too.
        let server = LlmServer::start(vec![script.clone(), script.clone(), script]).unwrap();
        run(what, &server, 3, |outcome, took| {
            timed_out(what, outcome, took)
        });
        assert_eq!(server.requests().len(), 1, "{what}: no time left to retry");
    }

    // The agent loop's reply says so too. One agent first, outside the
    // figures: its first start makes lazily created runtime state.
    let server = LlmServer::start(vec![
        ScriptedResponse::text(&["warm"]),
        answer().drip(Duration::from_secs(1)),
    ])
    .unwrap();
    assert_eq!(Agent::start(&server, overrides(0)).ask("hi"), "warm");
    assert!(
        rtt_agent::host::thread::settle(Duration::from_secs(10)),
        "threads still running"
    );
    let baseline = heap::used();
    let agent = Agent::start(&server, overrides(3));
    let t0 = Instant::now();
    let reply = agent.ask("hi");
    let took = t0.elapsed();
    let _ = writeln!(std::io::stderr(), "agent loop, 1 byte/s: {took:?}: {reply}");
    assert!(
        reply.contains("error: the request to the model failed: the request timed out"),
        "{reply}"
    );
    assert!(took < DEADLINE + GRACE, "{took:?}");
    drop(reply);
    drop(agent);
    assert!(
        rtt_agent::host::thread::settle(Duration::from_secs(10)),
        "threads still running"
    );
    assert_eq!(heap::used(), baseline, "agent: heap back at its baseline");
    set_overrides(Overrides::default());
}
