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

use rtt_agent::ffi::chat::{set_overrides, Overrides};
use rtt_agent::ffi::config::agent_config_set;
use rtt_agent::host::heap;
use rtt_agent_testkit::chat_call::{chat_json, Answer};
use rtt_agent_testkit::llm_server::*;
use std::ffi::CString;
use std::io::Write;
use std::time::{Duration, Instant};

const HI: &str = r#"[{"role":"user","content":"hi"}]"#;
/// The deadline of every request here.
const DEADLINE: Duration = Duration::from_millis(1000);
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
    unsafe { agent_config_set(c"sk-endless".as_ptr(), c"m".as_ptr(), url.as_ptr()) };
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
        err.contains("the request timed out") && err.contains("1000 ms"),
        "{what}: {err}"
    );
    assert!(
        took >= DEADLINE - Duration::from_millis(100),
        "{what}: {took:?}"
    );
    assert!(took < DEADLINE + GRACE, "{what}: took {took:?}");
}

#[test]
fn endless_streams_and_stalls_meet_the_deadline() {
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
        run(what, &server, 3, |outcome, took| {
            timed_out(what, outcome, took)
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
