//! Streams that never end, and servers silent before their head or once it
//! is out, against the request deadline (`PKG_AGENT_REQUEST_TIMEOUT_MS`): SSE
//! comments for ever (a keep-alive stream), answer text for ever, one tool
//! call's arguments for ever, each as fast as the client reads. Each must
//! end by the deadline with an error that says the request timed out,
//! having read megabytes without its heap growing past the caps, and with
//! the heap back at its baseline.
//!
//! On the code before, the timeout was per read: an endless stream never
//! ended, and silence was waited for the whole read timeout (10 s here, not
//! the 1 s deadline).
//!
//! One test function in a process of its own: the heap figures are exact,
//! and the test harness allocates while other tests run.

use rtt_agent::runtime::chat::{set_overrides, Overrides};
use rtt_agent_testkit::deadline_run::DeadlineRun;
use rtt_agent_testkit::llm_server::*;
use std::io::Write;
use std::time::Duration;

/// The deadline of every request here.
const DEADLINE: Duration = Duration::from_millis(1000);
static RUN: DeadlineRun = DeadlineRun {
    deadline: DEADLINE,
    key: c"sk-endless",
};

#[test]
fn endless_streams_and_stalls_meet_the_deadline() {
    let _serial = rtt_agent_testkit::agent::lock();
    RUN.warm_up();

    let answer = || ScriptedResponse::text(&["Hello ", "world"]);
    let cases: Vec<(&str, ScriptedResponse, usize)> = vec![
        (
            "silent before the head",
            answer().first_byte_after(Duration::from_secs(30)),
            0,
        ),
        (
            "stall after the head, chunked",
            answer().stall_after_headers(),
            0,
        ),
        (
            "stall after the head, Content-Length",
            answer()
                .transfer(Transfer::ContentLength)
                .stall_after_headers(),
            0,
        ),
        (
            "endless SSE comments",
            ScriptedResponse::endless_comments(Duration::ZERO),
            1,
        ),
        (
            "endless content",
            ScriptedResponse::endless_content(Duration::ZERO),
            1,
        ),
        (
            "endless tool arguments",
            ScriptedResponse::endless_tool_arguments(Duration::ZERO),
            1,
        ),
    ];
    for (what, script, min_bytes_mb) in cases {
        let piece = script
            .generated
            .as_ref()
            .and_then(|g| (g.next)(0))
            .map_or(0, |p| p.len());
        // Retries allowed: the deadline bounds them too.
        let server = LlmServer::start(vec![script.clone(), script.clone(), script]).unwrap();
        RUN.run(what, &server, 3, |outcome, took| {
            RUN.timed_out(what, outcome, took)
        });
        assert_eq!(server.requests().len(), 1, "{what}: no time left to retry");
        if piece == 0 {
            continue; // silence: recorded only when the server is dropped
        }
        assert!(server.wait_for_sent(1, Duration::from_secs(5)), "{what}");
        let sent = server.sent()[0].generated as usize * piece;
        let _ = writeln!(
            std::io::stderr(),
            "{what}: the server sent {sent} bytes of endless body"
        );
        assert!(sent >= min_bytes_mb << 20, "{what}: only {sent} bytes sent");
    }
    set_overrides(Overrides::default());
}
