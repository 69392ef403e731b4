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

use rtt_agent::host::heap;
use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent_testkit::agent::Agent;
use rtt_agent_testkit::deadline_run::{DeadlineRun, GRACE};
use rtt_agent_testkit::llm_server::*;
use std::io::Write;
use std::time::{Duration, Instant};

/// The deadline of every request here.
const DEADLINE: Duration = Duration::from_millis(1500);
static RUN: DeadlineRun = DeadlineRun {
    deadline: DEADLINE,
    key: c"sk-hostile",
};

#[test]
fn a_hostile_server_meets_the_deadline() {
    let _serial = rtt_agent_testkit::agent::lock();
    RUN.warm_up();

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
        RUN.run(what, &server, 3, |outcome, took| {
            RUN.timed_out(what, outcome, took)
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
    assert_eq!(Agent::start(&server, RUN.overrides(0)).ask("hi"), "warm");
    assert!(
        rtt_agent::host::thread::settle(Duration::from_secs(10)),
        "threads still running"
    );
    let baseline = heap::used();
    let agent = Agent::start(&server, RUN.overrides(3));
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
